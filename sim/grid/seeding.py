"""Seeds of simulation cells, derived from the cells' names.

A cell's stream is a child of the root ``SeedSequence(seed)`` whose spawn key is derived from
the cell's names (generator and parameters, k, effect, and protocol for resampling streams)
rather than from its position in the grid. Results then depend only on ``--seed`` and the
cell, not on ``--jobs``, the backend, the order of the grid, or which other cells run.
"""

from __future__ import annotations

import numpy as np

from evalcal_core.params import seed_key


def cell_seed(seed: int, *parts) -> np.random.SeedSequence:
    """Child of ``SeedSequence(seed)`` for the cell named by ``parts``.

    Parameters
    ----------
    seed : int
        The run's root seed (``--seed``).
    *parts
        Names identifying the cell, e.g. ``("data", "seed_gaussian;mu=0.9", 5, 0.01)``;
        numpy scalars name the same stream as the equal Python number.
    """
    root = np.random.SeedSequence(seed)
    return np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + seed_key(*parts))
