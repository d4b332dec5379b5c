"""A registry of evaluation protocols: does a variant beat its baseline?

Every protocol takes score arrays ``base`` and ``variant`` of shape ``(..., k, n)`` (k paired
seeds, n questions; leading axes are independent experiments) and returns a
:class:`ProtocolResult`. The protocols are the modules of :mod:`protocols.methods`, imported
here; adding a protocol is one new module there with an ``@register`` class. The tools
beside them (``protocols.evaluate``, the command that applies every protocol to a user's
results) are not protocols and are not imported by ``import protocols``.

Layer: imports :mod:`evalcal_core` only, never :mod:`sim`, :mod:`real_runs` or :mod:`reports`.

>>> import protocols
>>> p = protocols.get("paired_t")
>>> p.evaluate([0.90, 0.91, 0.92], [0.91, 0.93, 0.93]).significant
array(False)
"""

from __future__ import annotations

import importlib
import pkgutil

from evalcal_core import designs

from . import methods as _methods
from ._base import PROTOCOLS, Protocol
from ._batch import PoolScores, ScoreBatch
from ._replicate_law import REPLICATE_MODES
from ._resample import kernel_threads, min_sign_flip_pvalue
from ._result import ProtocolResult

__all__ = ["PROTOCOLS", "REPLICATE_MODES", "PoolScores", "Protocol", "ProtocolResult",
           "ScoreBatch", "get", "kernel_threads", "min_sign_flip_pvalue", "names",
           "parameters", "protocol_class", "recommended_for", "register"]

for _info in pkgutil.iter_modules(_methods.__path__):
    importlib.import_module(f"{_methods.__name__}.{_info.name}")

register = PROTOCOLS.register
protocol_class = PROTOCOLS.cls
parameters = PROTOCOLS.parameters


def recommended_for(kind: str) -> str:
    """The primary protocol of design ``kind`` (:data:`evalcal_core.designs.KINDS`): the one
    ``evaluate`` reports and the calibration's reports draw first and advise in words
    (:attr:`evalcal_core.designs.StudyDesign.primary`)."""
    return designs.get(kind).primary


def names() -> list[str]:
    """Names of all registered protocols, sorted."""
    return PROTOCOLS.names()


def get(name: str, **params) -> Protocol:
    """Build protocol ``name`` with ``params`` (old parameter names accepted as aliases)."""
    return PROTOCOLS.get(name, **params)
