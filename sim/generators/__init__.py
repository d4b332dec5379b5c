"""Synthetic generators of paired experiments, found through a registry.

``sim.generators.get(name, **params).draw(sims, k, delta, rng)`` returns ``(base, variant)``
of shape ``(sims, k, n)``. Modules here that do not start with an underscore are imported on
first use, so a new generator is one module with an ``@register`` class.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._base import Generator, generator_class, get, names, parameters, register

__all__ = ["Generator", "generator_class", "get", "names", "parameters", "register"]

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
