"""What the real-pool decision families share: reading a pool by name or path, saying when a
default pool is absent, and the pool-sampling facts a real cell states.

A real cell's rate is a Monte Carlo estimate over experiments drawn from one finite pool:
these models, these items, these attempts. Its Wilson interval describes the Monte Carlo
error only; another pool (other models, other items) would give another rate. So every real
cell names its pool, the models it draws from (by name, or how many and by which rule), and
its items and attempts, in its parameters: the grid prints them beside the interval.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from evalcal_core.pool_paths import find_pool, is_path, missing_line, resolve_pool
from evalcal_core.pools import ItemPool, read_pool
from evalcal_core.validate import fail


def load(spec: str, owner: str) -> ItemPool:
    """The pool ``spec`` (a name in the pools folder or a path), its ragged models dropped
    (:func:`evalcal_core.pools.read_pool` with ``complete_models``); refused in one line
    naming ``owner`` when absent or malformed. Cached per file version and process."""
    path = resolve_pool(spec, "pool", owner)
    return read_pool(path, complete_models=True, where=f"{owner}: pool {str(path)!r}")


def label(spec: str) -> str:
    """How a cell names its pool: the name for a pool found by name, the path for a path."""
    return str(spec) if is_path(spec) else Path(str(spec)).name


def missing(params: dict, family: str) -> str | None:
    """One line when the cell's pool is not found here (its cells are skipped), else None."""
    if find_pool(params["pool"]) is not None:
        return None
    return missing_line([params["pool"]], f"decision grid family {family}")


def binary_scores(pool: ItemPool, owner: str) -> np.ndarray:
    """The pool's 0/1 scores, bool ``(models, items, attempts)``; a pool with fractional
    scores is refused in one line (a correct answer turned wrong is defined on 0/1 only)."""
    if pool.scores.dtype != bool:
        raise fail("pool", "a pool of 0/1 scores (the shift turns right answers wrong; a "
                           "fraction has no right or wrong)", pool.source, owner)
    return np.asarray(pool.scores)


def draw_items(rng, sims: int, items: int, n: int) -> np.ndarray:
    """``n`` distinct items of ``items`` per experiment, int ``(sims, n)``: the first ``n`` of
    a random permutation (as :mod:`sim.generators.llm_items` draws them)."""
    return np.argsort(rng.random((sims, items)), axis=1)[:, :n]


def pick(keys: np.ndarray, allowed: np.ndarray, count: int) -> np.ndarray:
    """Per row, ``count`` distinct positions drawn uniformly among the ``allowed`` ones.

    Parameters
    ----------
    keys : ndarray of float, shape (rows, cells)
        Uniforms on [0, 1), one per cell (the randomness).
    allowed : ndarray of bool, shape (rows, cells)
        Cells that may be drawn; every row must allow at least ``count``.
    count : int
        Positions per row (>= 1).

    Returns
    -------
    ndarray of int, shape (rows, count)
    """
    # a disallowed cell gets a key above every uniform: the count smallest keys are then a
    # uniform draw without replacement among the allowed cells
    ranked = np.where(allowed, keys, 2.0)
    chosen = np.argpartition(ranked, count - 1, axis=1)[:, :count]
    if not np.take_along_axis(allowed, chosen, axis=1).all():
        raise ValueError(f"pick: a row allows fewer than {count} cells")
    return chosen
