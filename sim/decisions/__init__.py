"""The decision grid's cell families: one module per design, found through :func:`families`.

Every decision ``evaluate`` prints (a verdict, an adjusted p, a simultaneous interval, a
claim or gate, an effect size's interval) is scored here on its design's generator, like
the p-values are in the calibration grid. A *family* is one module of this package that
defines:

``NAME`` : str
    The family's name (the module's name).
``DESIGN`` : str
    The study design it simulates (a :class:`evalcal_core.designs.Design` kind).
``CELLS`` : list of dict
    The cells of the full grid: JSON-serialisable parameters of :func:`simulate`.
``QUICK_CELLS`` : list of dict
    A few cells for ``--quick`` (tests).
``simulate(params, sims, rng) -> list[dict]``
    Draws ``sims`` experiments of one cell (vectorized over them) and scores every
    decision on the same data. Each dict is one outcome:

    * ``decision`` (str): what was decided, e.g. ``"maxt interval"``,
      ``"non_inferiority, tango"``;
    * ``measure``: ``"rejection"`` (a false rejection or false claim: its rate judged
      against ``alpha``), ``"coverage"`` (an interval holding the truth: its miss rate
      judged against ``alpha``; both by :func:`sim.decision_grid.judge`), ``"power"``
      (reported, not judged), ``"refused"`` (the share of experiments where the
      decision says "no verdict": reported) or ``"share"`` (how often something that is
      no error happens, e.g. a tied pair's possibly-best statuses differing: reported);
    * ``hits`` (int) and ``sims`` (int): the count and the experiments it is out of;
    * ``alpha`` (float): the nominal level of that decision.

    A decision whose name ends in ``(old)`` is a rule ``evaluate`` no longer uses, kept
    beside its replacement to show what it did: it is reported, never counted among the
    decisions that must hold their level (:func:`reportable`).
"""

from __future__ import annotations

import importlib
import pkgutil

#: modules of this package that are helpers, not families
_PRIVATE_PREFIX = "_"

#: the validity rule's tolerance for a false rejection rate: within level when its upper
#: bound (:meth:`sim.validity.ValidityRule.upper`) is <= alpha + this (fraction)
REJECTION_TOLERANCE = 0.01
#: the tolerance for a coverage's miss rate: within level when the coverage's lower bound is
#: >= 1 - alpha - this (fraction)
COVERAGE_TOLERANCE = 0.015

MEASURES = ("rejection", "coverage", "power", "refused", "share")


#: the suffix of a decision that is shown for contrast only
OLD_SUFFIX = "(old)"


def reportable(decision: str) -> bool:
    """Whether ``evaluate`` prints this decision (not a replaced rule kept for contrast)."""
    return not decision.rstrip().endswith(OLD_SUFFIX)


def families() -> dict:
    """Every family module of this package, by name, in name order."""
    out = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith(_PRIVATE_PREFIX):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        out[module.NAME] = module
    return out


def cells_of(module, *, quick: bool = False, pools=()) -> tuple[list, list]:
    """A family's cells to run here, and one line per cell skipped.

    A family on real pools may define ``pool_cells(spec, quick=False) -> list[dict]`` (its
    cells on one pool, a name or a path: ``--llm-pools`` replaces its default pools with
    these) and ``missing(params) -> str | None`` (why a cell cannot run here: its pool is
    absent). Other families run their :data:`CELLS` (or ``QUICK_CELLS``).

    Returns
    -------
    (list of dict, list of str)
        The cells, in order; the distinct lines of the cells skipped.
    """
    if pools and hasattr(module, "pool_cells"):
        cells = [c for spec in pools for c in module.pool_cells(spec, quick=quick)]
    else:
        cells = list(module.QUICK_CELLS if quick else module.CELLS)
    why = getattr(module, "missing", lambda params: None)
    kept, lines = [], []
    for params in cells:
        line = why(params)
        if line is None:
            kept.append(params)
        elif line not in lines:
            lines.append(line)
    return kept, lines
