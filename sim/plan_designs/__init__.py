"""The planner's designs (``python -m sim.plan --design``), one registered object each.

What differs between the studies the planner plans -- whether seeds are trained and
searched, the units a simulated experiment draws, the test's degrees of freedom, the
variance of the mean delta, the cost formula, the words printed, the default costs and the
option rules -- is stated once per design by a :class:`~sim.plan_designs._base.PlanDesign`
registered in its own module: ``methods``, ``models``, ``models_clustered`` (the
``--design`` choices) and ``clusters`` (the form ``models_clustered`` is searched as). The
planner's modules ask ``get(config.design)`` and never compare a design's name; the package
imports every module here, so a new design is one new file.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._base import (
    ESTIMAND_TESTS,
    ESTIMANDS,
    POPULATION,
    QUESTIONS,
    PlanDesign,
    choices,
    designs_all,
    get,
    register,
    where_printed,
)

__all__ = ["DEFAULT", "DESIGNS", "ESTIMANDS", "ESTIMAND_TESTS", "POPULATION", "QUESTIONS",
           "PlanDesign", "choices", "designs_all", "get", "register", "where_printed"]

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

#: the ``--design`` choices, in order
DESIGNS = choices()
#: the default design (the first choice)
DEFAULT = DESIGNS[0]
