"""Study designs: what a comparison's units are, which decides which test is honest.

A protocol is reportable or a pitfall *for a design*, never in general: a per-question paired
test is the honest test between two fixed checkpoints (the questions are the sample) and a
pitfall between two training methods (it ignores the seed-to-seed variance of each method).

Each kind of study is one module of this package registering a :class:`StudyDesign` (its
name, the words outputs print, its primary protocol, the generator that calibrates it, and
the rule that recognises a user's :class:`Design` as of that kind); the package imports
every module here (``pkgutil``), so a new kind is one new file. The protocols reportable for
a kind are those whose ``Protocol.valid_for`` names it; every other protocol carries a
one-line reason, ``Protocol.label(kind)``. The four kinds, in table order:
:data:`METHODS_PAIRED`, :data:`METHODS_INDEPENDENT`, :data:`MODELS`, :data:`MODELS_CLUSTERED`
(their modules say what the units are and which protocols are reportable).

Code outside this package names a kind through these constants, never as a string.
"""

from __future__ import annotations

import importlib
import pkgutil

from . import methods_independent, methods_paired, models, models_clustered
from ._base import (
    COMPARE_METHODS,
    COMPARE_MODELS,
    COMPARES,
    DESIGNS,
    Design,
    StudyDesign,
    designs,
    get,
    names,
    register,
)

__all__ = ["COMPARES", "COMPARE_METHODS", "COMPARE_MODELS", "DESIGNS", "KINDS", "KIND_WORDS",
           "METHODS_INDEPENDENT", "METHODS_PAIRED", "MODELS", "MODELS_CLUSTERED", "Design",
           "StudyDesign", "designs", "get", "names", "register"]

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

#: training procedures on the same seeds (seed i of both arms shares its randomness)
METHODS_PAIRED = methods_paired.DESIGN.name
#: training procedures on independent seeds
METHODS_INDEPENDENT = methods_independent.DESIGN.name
#: fixed models, independent questions
MODELS = models.DESIGN.name
#: fixed models, questions in correlated clusters
MODELS_CLUSTERED = models_clustered.DESIGN.name

#: every kind of study, in the order tables list them
KINDS = tuple(names())

#: what each kind is called in the first line of every output
KIND_WORDS = {d.name: d.words for d in designs()}
