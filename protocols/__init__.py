"""A registry of evaluation protocols: does a variant beat its baseline?

Every protocol takes score arrays ``base`` and ``variant`` of shape ``(..., k, n)`` (k paired
seeds, n questions; leading axes are independent experiments) and returns a
:class:`ProtocolResult`. Modules in this package that do not start with an underscore are
imported on first use, so adding a protocol is one new module with an ``@register`` class.

>>> import protocols
>>> p = protocols.get("paired_t")
>>> p.evaluate([0.90, 0.91, 0.92], [0.91, 0.93, 0.93]).significant
array(False)
"""

from __future__ import annotations

import importlib
import pkgutil

from ._base import Protocol
from ._registry import get as _get
from ._registry import names as _names
from ._registry import parameters, protocol_class, register
from ._result import ProtocolResult

__all__ = ["Protocol", "ProtocolResult", "get", "names", "parameters", "protocol_class",
           "register"]

#: modules of this package that are tools, not protocols
_NOT_PROTOCOLS = {"evaluate", "csv_io", "__main__"}


def _discover():
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_") and info.name not in _NOT_PROTOCOLS:
            importlib.import_module(f"{__name__}.{info.name}")


_discover()


def names() -> list[str]:
    """Names of all registered protocols, sorted."""
    return _names()


def get(name: str, **params) -> Protocol:
    """Build protocol ``name`` with ``params``; see :func:`protocols._registry.get`."""
    return _get(name, **params)
