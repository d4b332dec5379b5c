"""The pool builders (``python -m sim.llm_pools.build SOURCE``), one registered class each.

Each module converts one public source's published result file(s) into a pool
``model, item, attempt, score, cluster`` (:mod:`evalcal_core.pools`): ``matharena``,
``livecodebench``, ``terminal_bench``, ``swebench``, ``alpacaeval``, ``mmlupro``. A builder's
docstring and class attributes name the repository, the pinned commit, the path, the sha256
of the shared pool it reproduces and the commands that fetch the source and build the pool.
The package imports every module here, so a new source is one new file.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._base import BUILDERS, OWNER, POOL_COLUMNS, PoolBuilder, get, names, register

__all__ = ["BUILDERS", "OWNER", "POOL_COLUMNS", "PoolBuilder", "get", "names", "register"]

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
