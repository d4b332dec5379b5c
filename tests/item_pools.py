"""Item pools for tests: small ones written into a folder, and the shared real ones.

Real pools are not the project's: tests read ``../shared/data/llm_pools`` when the library
finds it (:mod:`evalcal_core.pool_paths`, the folder the commands under test read) and skip
with the reason when it does not (:func:`shared_pool`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcal_core.pool_paths import find_pool, pools_dir


def shared_pool(name: str) -> Path:
    """The shared pool ``NAME`` as the library resolves it, or skip saying where it looked."""
    path = find_pool(name)
    if path is None:
        _, where = pools_dir()
        pytest.skip(f"real pool {name!r} is absent: {where}")
    return path


def pool_frame(models=("a", "b", "c"), items=15, attempts=4, clusters=None, seed=0):
    """A random 0/1 pool frame: each (model, item) with its own success rate.

    Parameters
    ----------
    clusters : sequence of int, optional
        Cluster sizes (summing to ``items``); none: no ``cluster`` column.
    """
    rng = np.random.default_rng(seed)
    labels = (None if clusters is None
              else np.repeat([f"c{c}" for c in range(len(clusters))], clusters))
    rows = []
    for m in models:
        for q in range(items):
            p = rng.random()
            for a in range(attempts):
                row = {"model": m, "item": f"q{q:03d}", "attempt": a,
                       "score": int(rng.random() < p)}
                if labels is not None:
                    row["cluster"] = labels[q]
                rows.append(row)
    return pd.DataFrame(rows)


def write_pool(folder, name="pool.csv", **kwargs) -> Path:
    """:func:`pool_frame` written as ``folder/name`` (gzip when it ends in ``.gz``)."""
    path = Path(folder) / name
    pool_frame(**kwargs).to_csv(path, index=False)
    return path
