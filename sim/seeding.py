"""Seeds of simulation cells, derived from the cells' names.

A cell's stream is a child of the root ``SeedSequence(seed)`` whose spawn key is derived from
the cell's names (generator and parameters, k, effect, and protocol for resampling streams)
rather than from its position in the grid. Results then depend only on ``--seed`` and the
cell, not on ``--jobs``, the backend, the order of the grid, or which other cells run.
"""

from __future__ import annotations

import hashlib

import numpy as np


def name_key(*parts) -> tuple[int, ...]:
    """A stable spawn key (four 32-bit words) from the ``repr`` of ``parts``."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))


def cell_seed(seed: int, *parts) -> np.random.SeedSequence:
    """Child of ``SeedSequence(seed)`` for the cell named by ``parts``.

    Parameters
    ----------
    seed : int
        The run's root seed (``--seed``).
    *parts
        Names identifying the cell, e.g. ``("data", "seed_gaussian;mu=0.9", 5, 0.01)``.
    """
    root = np.random.SeedSequence(seed)
    return np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + name_key(*parts))
