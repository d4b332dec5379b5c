"""What the analysis of arms does by study design: one module per kind of
:mod:`evalcal_core.designs`, each registering a :class:`DesignAnalysis` found by the kind's
name (:func:`get`) or from a user's design (:func:`of`).

:mod:`evalcal_core.designs` says what a design *is* (its units in words, its primary
protocol, the rule that recognises it) and may not import protocol code; the behaviour that
needs protocol code lives here: the paired units of effect sizes, the leaderboard and the
stream, the joint null and sign-flip units of max-T, how each protocol is called, the
effect size, the claim test, and the design's notes beside the two-arm table. Callers ask
the design's object (:mod:`protocols.analysis.compare`, ``board``, ``stream``,
``protocol_table``); none branches on a design's name. The package imports every module
here (``pkgutil``), so a new kind is one new file.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._base import N_FLIPS, DesignAnalysis, get, kinds, of, register

__all__ = ["N_FLIPS", "DesignAnalysis", "get", "kinds", "of", "register"]

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
