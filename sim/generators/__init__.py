"""Synthetic generators of paired experiments, found through a registry.

``sim.generators.get(name, **params).draw(sims, k, delta, rng)`` returns ``(base, variant)``
of shape ``(sims, k, n)``. Modules here that do not start with an underscore are imported on
first use, so a new generator is one module with an ``@register`` class.

Layer: generators import :mod:`evalcal_core` (and the torch-free :mod:`real_runs.store`, lazily),
never :mod:`protocols`: ``import sim.generators`` stays light.

Besides the registered names, :func:`expand` knows one shorthand: ``real`` is every
(dataset, scenario) pool of the run store, as ``real_pool`` generators.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._base import (
    GENERATORS,
    Generator,
    PoolView,
    generator_class,
    get,
    names,
    parameters,
    pool_rows,
    register,
)

__all__ = ["GENERATORS", "Generator", "PoolView", "SHORTHANDS", "expand", "generator_class",
           "get", "names", "parameters", "pool_rows", "register"]

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

#: names :func:`expand` accepts besides the registered generators
SHORTHANDS = {"real": "every dataset and scenario of the real-run pool (real_pool generators; "
                      "--pool ROOT picks another store)"}


def expand(name: str, params: dict) -> list[Generator]:
    """The generators a ``--generator NAME`` means.

    A registered name is one generator built with ``params``; ``real`` is one ``real_pool``
    generator per (dataset, scenario) cell of the store (``params`` may name its ``root``
    and ``profile``), the identical-arms sanity scenario left out.
    """
    if name == "real":
        from real_runs.store import pool_cells

        return [get("real_pool", dataset=d, scenario=s, **params)
                for d, s in pool_cells(params.get("root"), params.get("profile"))]
    return [get(name, **params)]
