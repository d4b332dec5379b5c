"""The decision grid: every decision ``evaluate`` prints, scored on its design's generator.

The calibration grid scores p-values at effect 0. This grid scores what users act on:
simultaneous intervals at non-zero effects, family-wise errors, claims and gates at their
margins, effect sizes' intervals, dominant clusters, the planner's power, one family of
cells per module of :mod:`sim.decisions`. Each outcome is judged by the project's one
validity rule (:mod:`sim.validity`), on the rate that must stay <= alpha: a false rejection
or false claim's rate (``rejection``), a coverage's miss rate (``coverage``: sims - hits):

* **within level** when the rule's one-sided upper bound of that rate
  (:meth:`sim.validity.ValidityRule.upper`: Clopper-Pearson at ``1 - 0.05 / looks``) is
  <= ``alpha + tolerance``; the tolerances are
  :data:`sim.decisions.REJECTION_TOLERANCE` (1 pp) and
  :data:`sim.decisions.COVERAGE_TOLERANCE` (1.5 pp: a coverage is within level when its
  lower bound is >= ``1 - alpha - 1.5 pp``);
* **above level** (a rejection) or **below level** (a coverage) when the exact one-sided
  binomial test of ``rate <= alpha`` is rejected by Holm's procedure at family-wise level
  0.001 over **every** judged outcome of the run (old rules included), each p-value the
  smallest over the looks taken and Bonferroni-corrected over the looks of the schedule;
  an outcome both within level and shown above alpha (a rate within the tolerance) is
  within level;
* otherwise **undecided**: the cell is drawn again by the rule's schedule (``sims``,
  ``2 sims``, ``4 sims``, ... up to ``--max-sims``, default ``16 sims``: 4,000 to 64,000),
  each added chunk from a stream of its own named by the look, and every outcome of the
  cell judged on its pooled count, until no reportable outcome of the cell is undecided or
  the cap is reached; still undecided there, it is reported so. ``power`` and ``refused``
  outcomes are reported, not judged.

Error rates with the default schedule (alpha 5%; 4,000 to 64,000 simulations, five looks;
exact binomial sums of :func:`sim.validity.error_rates`): a false rejection rate of 5.1%
or less (205 of 4,000) reads within level at the first look, which a true rate of exactly
5% passes with probability 0.66 (a coverage of exactly 95%: 0.95); a true rate at alpha +
tolerance or more is called within level with probability <= 0.048; a run calls some
outcome above or below level while every rate is within alpha with probability <= 0.001;
a rate exactly at alpha is still undecided at the cap with probability < 1e-15.

The table beside each verdict also shows the rate's two-sided Wilson 95% interval, a
description of the estimate; the verdict is read from the rule's bound (``bound``, in the
outcome's own scale: the upper bound of a rejection rate, the lower bound of a coverage)
and ``p`` (Holm's input), never from the Wilson interval.

Randomness: block ``b`` (of :data:`BLOCK` experiments) of cell ``c`` at look ``l`` (0 the
first; ``l`` the ``l``-th added chunk) is drawn from
``sim.grid.cell_seed(seed, "decisions", family, params, l, b)``: results depend only on
``--seed``, not on ``--jobs``.

Command line::

    python -m sim.decision_grid [--sims 4000] [--max-sims N] [--seed 0]
                                [--families maxt ...] [--quick] [--jobs N] [--out DIR]
                                [--llm-pools POOL ...]

prints the table and, with ``--out``, writes ``decision_grid.csv`` and
``decision_grid.md``. The real-pool families (those defining ``pool_cells``) run on
``--llm-pools`` (names or paths) instead of their default pools; a default pool absent here
is skipped with one line before the table (:func:`sim.decisions.cells_of`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from evalcal_core.cli import ArgumentParser
from evalcal_core.options import (
    MAX_SIMS,
    add_options,
    check_options,
    jobs_option,
    max_sims_option,
    option,
    out_option,
    seed_option,
    sims_option,
    workers,
)
from evalcal_core.validate import Interval, InvalidParameterError, Optional, fail

from .. import decisions
from ..grid import cell_seed, wilson
from ..validity import DEFAULT_INVALID_LEVEL, ValidityRule, default_max_sims, holm

#: simulations per cell at the first look (the issue's minimum for a reported cell)
DEFAULT_SIMS = 4_000
#: simulations per cell with --quick (tests)
QUICK_SIMS = 400
#: experiments simulated at once (a cell's memory is that of one block)
BLOCK = 1_000
#: sampled experiments per family run end to end (:mod:`reports.end_to_end`)
END_TO_END = 200
#: the same with --quick
QUICK_END_TO_END = 6

#: the judged measures and the tolerance of each (fraction above alpha of the judged rate)
JUDGED = {"rejection": decisions.REJECTION_TOLERANCE, "coverage": decisions.COVERAGE_TOLERANCE}
#: verdict of a judged outcome shown off level, by measure
OFF_LEVEL = {"rejection": "above level", "coverage": "below level"}
WITHIN, UNDECIDED, REPORTED = "within level", "undecided", "reported"
#: the prefix of a verdict on a rule ``evaluate`` no longer uses (:func:`decisions.reportable`)
OLD_RULE = "old rule, "


@dataclass(frozen=True)
class GridConfig:
    """What to run and where to write it; each field a command-line option declared with
    its flag, default, help and constraint (:mod:`evalcal_core.options`), checked once when
    built. ``families`` keeps the first of each name given twice (order kept), empty is every
    family. ``sims`` left ``None`` is :data:`QUICK_SIMS` with ``quick``, else
    :data:`DEFAULT_SIMS`; ``max_sims`` left ``None`` is ``sims`` with ``quick`` (one look),
    else the validity rule's cap (16 ``sims``)."""

    families: tuple = option("--families", (), nargs="+", metavar="NAME",
                             help=f"families to run (default all: "
                                  f"{', '.join(decisions.families())})")
    sims: int | None = sims_option(
        None, constraint=Optional(Interval("int", 50, MAX_SIMS)),
        help=f"simulations per cell at the first look (default {DEFAULT_SIMS}; "
             f"{QUICK_SIMS} with --quick)")
    max_sims: int | None = max_sims_option("16 x --sims; --sims with --quick")
    seed: int = seed_option()
    quick: bool = option("--quick", False, switch=True,
                         help="a few cells per family, one look (for tests)")
    jobs: int = jobs_option(help="cells run in parallel (default: all cores; results do not "
                                 "depend on it)")
    out: Path | None = out_option(None, help="folder for decision_grid.csv and .md (default: "
                                             "print only)")
    llm_pools: tuple = option(
        "--llm-pools", (), nargs="+", metavar="POOL",
        help="real pools (names in the pools folder or CSV paths) for the real-pool families "
             "(real_claims, real_leaderboard), replacing their default pools")
    end_to_end: int | None = option(
        "--end-to-end", None, kind=int, metavar="N",
        constraint=Optional(Interval("int", 0, 100_000)),
        help=f"sampled experiments per family also written as users' files and run through "
             f"evalcal.compare and the evaluate command, their decisions compared with the "
             f"grid's (default {END_TO_END}; {QUICK_END_TO_END} with --quick; 0: none)")

    def __post_init__(self):
        check_options(self)
        # a family named twice is run once (its cells would otherwise be counted twice and
        # enter Holm's family twice); the order given is kept
        object.__setattr__(self, "families", tuple(dict.fromkeys(self.families)))
        if self.sims is None:
            object.__setattr__(self, "sims", QUICK_SIMS if self.quick else DEFAULT_SIMS)
        if self.end_to_end is None:
            object.__setattr__(self, "end_to_end",
                               QUICK_END_TO_END if self.quick else END_TO_END)
        check_options(self, {"--max-sims": Optional(Interval("int", self.sims, MAX_SIMS))},
                      only_extra=True)
        if self.max_sims is None:
            object.__setattr__(self, "max_sims",
                               self.sims if self.quick else default_max_sims(self.sims))


def rule_of(measure: str, alpha: float, sims: int, max_sims: int) -> ValidityRule:
    """The validity rule of one judged outcome: its ``alpha``, its measure's tolerance
    (:data:`JUDGED`), the schedule from ``sims`` to ``max_sims`` cell experiments."""
    return ValidityRule.make(alpha, sims, tolerance=JUDGED[measure], max_sims=max_sims)


def _judged_count(frame: pd.DataFrame) -> np.ndarray:
    """The count whose rate must be <= alpha: hits of a rejection, misses of a coverage."""
    hits, sims = frame["hits"].to_numpy(float), frame["sims"].to_numpy(float)
    return np.where(frame["measure"].to_numpy() == "coverage", sims - hits, hits)


def _one_look_p(frame: pd.DataFrame, sims: int, max_sims: int) -> np.ndarray:
    """Each judged outcome's one-look p-value of ``rate <= alpha`` on its counts (NaN for
    outcomes not judged)."""
    p = np.full(len(frame), math.nan)
    x = _judged_count(frame)
    for (measure, alpha), at in frame.groupby(["measure", "alpha"]).indices.items():
        if measure in JUDGED:
            rule = rule_of(measure, float(alpha), sims, max_sims)
            p[at] = rule.p_above(x[at], frame["sims"].to_numpy(float)[at])
    return p


def judge(frame: pd.DataFrame, *, sims: int | None = None,
          max_sims: int | None = None) -> pd.DataFrame:
    """Every outcome's verdict by the validity rule; Holm over all judged rows of ``frame``.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per outcome: ``measure``, ``alpha``, ``hits``, ``sims`` (its counts over
        every look taken); optional ``decision`` (an old rule's verdict is prefixed
        :data:`OLD_RULE`), ``p_min`` (the smallest one-look p over the looks taken; default
        that of the counts) and ``drawn`` (the cell's experiments so far; default the cap).
    sims, max_sims : int, optional
        The schedule of looks (cell experiments): its first look and cap; both ``None``:
        one look.

    Returns
    -------
    pandas.DataFrame
        ``frame`` with ``rate`` (hits / sims) and its Wilson 95% interval ``low``/``high``,
        ``bound`` (the rule's one-sided bound: upper bound of a rejection rate, lower bound
        of a coverage; NaN where not judged), ``p`` (of ``rate <= alpha``, smallest over
        the looks, times the number of looks), ``verdict`` and ``more`` (an undecided
        reportable outcome whose cell has not reached ``max_sims``: another look is due).
        All fractions.
    """
    n = frame["sims"].to_numpy(float)
    if sims is None:
        sims = int(max(n.max(initial=1), 1))
    max_sims = sims if max_sims is None else max_sims
    x = _judged_count(frame)
    bound = np.full(len(frame), math.nan)
    upper = np.full(len(frame), math.nan)
    limit = np.full(len(frame), math.nan)
    looks = np.ones(len(frame))
    for (measure, alpha), at in frame.groupby(["measure", "alpha"]).indices.items():
        if measure not in JUDGED:
            continue
        rule = rule_of(measure, float(alpha), sims, max_sims)
        upper[at] = rule.upper(x[at], n[at])
        limit[at] = rule.limit
        looks[at] = rule.looks
        bound[at] = 1.0 - upper[at] if measure == "coverage" else upper[at]
    p = _one_look_p(frame, sims, max_sims)
    if "p_min" in frame:
        p = np.fmin(p, frame["p_min"].to_numpy(float))
    p = np.minimum(1.0, looks * p)
    judged = frame["measure"].isin(list(JUDGED)).to_numpy()
    off = np.zeros(len(frame), bool)
    off[judged] = holm(p[judged], DEFAULT_INVALID_LEVEL)
    within = judged & (upper <= limit + 1e-12)
    verdict = np.where(~judged, REPORTED, np.where(within, WITHIN, np.where(
        off, frame["measure"].map(OFF_LEVEL).to_numpy(object), UNDECIDED)))
    reportable = (frame["decision"].map(decisions.reportable).to_numpy(bool)
                  if "decision" in frame else np.ones(len(frame), bool))
    verdict = np.where(reportable | ~judged, verdict, np.char.add(OLD_RULE,
                                                                  verdict.astype(str)))
    drawn = frame["drawn"].to_numpy(float) if "drawn" in frame else np.full(len(n), max_sims)
    bounds = [wilson(int(h), int(t)) for h, t in zip(frame["hits"], frame["sims"])]
    return frame.assign(
        rate=frame["hits"] / frame["sims"], low=[b[0] for b in bounds],
        high=[b[1] for b in bounds], bound=bound, p=np.where(judged, p, math.nan),
        verdict=verdict, more=(verdict == UNDECIDED) & (drawn < max_sims))


def _cell_key(params: dict) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def _run_cell(family: str, params: dict, sims: int, seed: int, look: int) -> list[dict]:
    """The cell's outcomes over ``sims`` experiments, drawn in blocks of :data:`BLOCK`
    (block ``b`` from its own named stream) and pooled: memory stays that of one block."""
    module = decisions.families()[family]
    pooled: dict = {}
    for b, start in enumerate(range(0, sims, BLOCK)):
        ss = cell_seed(seed, "decisions", family, _cell_key(params), look, b)
        for o in module.simulate(params, min(BLOCK, sims - start), np.random.default_rng(ss)):
            key = (o["decision"], o["measure"])
            if key in pooled:
                pooled[key]["hits"] += o["hits"]
                pooled[key]["sims"] += o["sims"]
            else:
                pooled[key] = dict(o)
    return list(pooled.values())


def _rows(family, params, outcomes, drawn):
    out = []
    for o in outcomes:
        if o["measure"] not in decisions.MEASURES:
            raise InvalidParameterError(f"family {family!r} returned measure {o['measure']!r}; "
                                        f"allowed: {', '.join(decisions.MEASURES)}")
        out.append({"family": family, "cell": _cell_key(params), "decision": o["decision"],
                    "measure": o["measure"], "alpha": o["alpha"], "hits": o["hits"],
                    "sims": o["sims"], "drawn": drawn})
    return out


KEY = ["family", "cell", "decision", "measure"]


def _add_chunk(frame: pd.DataFrame, extra: pd.DataFrame, config: GridConfig) -> pd.DataFrame:
    """``frame`` with a look's chunk ``extra`` (the rows of :func:`_rows`, ``drawn`` the
    chunk's simulations) pooled in: counts added, each outcome's smallest one-look p over
    the looks kept in ``p_min``, its cell's ``drawn`` and ``looks`` advanced. An outcome
    first seen in the chunk (a conditional count that was empty) gets a row of its own."""
    def one_look(f):
        return _one_look_p(f, config.sims, config.max_sims)

    frame = frame.assign(p_min=np.fmin(frame["p_min"].to_numpy(float), one_look(frame)))
    fresh = ~pd.MultiIndex.from_frame(extra[KEY]).isin(pd.MultiIndex.from_frame(frame[KEY]))
    cell = frame.groupby(["family", "cell"])[["drawn", "looks"]].first()
    new = extra[fresh].drop(columns="drawn").join(cell, on=["family", "cell"])
    frame = pd.concat([frame, new.assign(hits=0, sims=0, p_min=math.nan)], ignore_index=True)
    add = frame[KEY].merge(extra[KEY + ["hits", "sims"]], on=KEY, how="left")
    grown = add["sims"].notna().to_numpy()
    frame["hits"] += add["hits"].fillna(0).astype(int).to_numpy()
    frame["sims"] += add["sims"].fillna(0).astype(int).to_numpy()
    frame["p_min"] = np.where(grown, np.fmin(frame["p_min"].to_numpy(float), one_look(frame)),
                              frame["p_min"])
    # every row of an extended cell advances, outcomes absent from the chunk included
    chunk = frame[["family", "cell"]].merge(
        extra.groupby(["family", "cell"], as_index=False)["drawn"].first(),
        on=["family", "cell"], how="left")["drawn"].to_numpy(float)
    hit = ~np.isnan(chunk)
    frame.loc[hit, "drawn"] = frame.loc[hit, "drawn"] + chunk[hit].astype(int)
    frame.loc[hit, "looks"] = [f"{old}+{int(c)}" for old, c in
                               zip(frame.loc[hit, "looks"], chunk[hit])]
    return frame


def grid_cells(config: GridConfig) -> tuple[list, list]:
    """``([(family, params), ...], lines)``: the cells the run draws, and one line per
    real pool absent here whose cells are skipped (:func:`sim.decisions.cells_of`;
    ``--llm-pools`` gives the real-pool families their pools)."""
    found = decisions.families()
    names = list(config.families) or list(found)
    for name in names:
        if name not in found:
            raise fail("--families", f"names among {', '.join(found)}", name)
    real = [n for n in found if hasattr(found[n], "pool_cells")]
    if config.llm_pools and not any(n in real for n in names):
        # otherwise the pools were never read: a missing or broken file ran the whole grid
        raise fail("--llm-pools", f"given with a real-pool family ({', '.join(real)}) in "
                   "--families; the families chosen read no pool", " ".join(config.llm_pools))
    cells, lines = [], []
    for name in names:
        kept, skipped = decisions.cells_of(found[name], quick=config.quick,
                                           pools=config.llm_pools)
        cells += [(name, params) for params in kept]
        lines += skipped
    return cells, lines


def run_grid(config: GridConfig) -> pd.DataFrame:
    """Run every cell of the chosen families and judge every outcome, with the sequential
    stop of the validity rule for the cells whose reportable outcomes are undecided.

    Returns
    -------
    pandas.DataFrame
        One row per (family, cell, decision, measure): ``hits``, ``sims`` (pooled over
        looks), ``looks`` (the simulations of each look, ``"4000+4000+8000"``), ``rate``,
        ``low``, ``high`` (Wilson 95%), ``bound``, ``p`` (the rule's, see :func:`judge`)
        and ``verdict``. Rates and bounds are fractions.
    """
    cells, _ = grid_cells(config)
    columns = ["family", "cell", "decision", "measure", "alpha", "hits", "sims", "looks",
               "rate", "low", "high", "bound", "p", "verdict"]
    if not cells:                        # every chosen cell's pool is absent here
        return pd.DataFrame(columns=columns)
    by_key = {(n, _cell_key(p)): p for n, p in cells}
    # no more worker processes than cells or cores (each holds numpy, scipy and pandas)
    first = Parallel(n_jobs=workers(config.jobs, len(cells)))(
        delayed(_run_cell)(n, p, config.sims, config.seed, 0) for n, p in cells)
    frame = pd.DataFrame([r for (n, p), res in zip(cells, first)
                          for r in _rows(n, p, res, config.sims)])
    frame = frame.assign(looks=str(config.sims), p_min=math.nan)
    schedule = ValidityRule.make(0.05, config.sims, max_sims=config.max_sims)
    look = 0
    while True:
        judged = judge(frame, sims=config.sims, max_sims=config.max_sims)
        again = sorted({(r.family, r.cell, int(r.drawn)) for r in judged.itertuples()
                        if r.more})
        if not again:
            break
        look += 1
        chunks = [schedule.next_sims(drawn) for _, _, drawn in again]
        more = Parallel(n_jobs=workers(config.jobs, len(again)))(
            delayed(_run_cell)(n, by_key[(n, c)], chunk, config.seed, look)
            for (n, c, _), chunk in zip(again, chunks))
        extra = pd.DataFrame([r for (n, c, _), chunk, res in zip(again, chunks, more)
                              for r in _rows(n, by_key[(n, c)], res, chunk)])
        frame = _add_chunk(frame, extra, config)
    return judged[columns].reset_index(drop=True)


def format_table(frame: pd.DataFrame, markdown: bool = False) -> str:
    """The grid as text (or a Markdown table): rates in % with Wilson 95% intervals, the
    validity rule's bound in % (upper bound of a rejection rate, lower of a coverage)."""
    head = ["family", "cell", "decision", "measure", "rate % [95% CI]", "rule bound %", "sims",
            "verdict"]
    lines = []
    if markdown:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
    for r in frame.itertuples():
        cell = ", ".join(f"{k}={v}" for k, v in json.loads(r.cell).items())
        rate = f"{100 * r.rate:.1f} [{100 * r.low:.1f}, {100 * r.high:.1f}]"
        sign = "<=" if r.measure == "rejection" else ">="
        bound = "" if math.isnan(r.bound) else f"{sign} {100 * r.bound:.1f}"
        values = [r.family, cell, r.decision, r.measure, rate, bound, f"{r.sims:,}", r.verdict]
        lines.append("| " + " | ".join(values) + " |" if markdown else "  ".join(values))
    return "\n".join(lines)


def legend(config: GridConfig) -> str:
    """One line saying where the verdicts come from (not the Wilson intervals)."""
    rule = ValidityRule.make(0.05, config.sims, max_sims=config.max_sims)
    return (f"Verdicts by the validity rule (sim.validity), not the Wilson intervals: within "
            f"level when the one-sided Clopper-Pearson bound at 1 - {rule.level:g}/{rule.looks} "
            f"of the rate that must be <= alpha (a rejection rate; a coverage's miss rate) is "
            f"<= alpha + {100 * decisions.REJECTION_TOLERANCE:g} pp (rejection) or "
            f"+ {100 * decisions.COVERAGE_TOLERANCE:g} pp (coverage); above / below level when "
            f"its exact binomial test is rejected by Holm at {rule.invalid_level:g} over every "
            f"judged outcome (Bonferroni over {rule.looks} looks: "
            f"{' -> '.join(f'{n:,}' for n in rule.schedule)} simulations per cell).")


def summary(frame: pd.DataFrame) -> str:
    """How many judged outcomes of reportable decisions are within, off or undecided."""
    judged = frame[frame.measure.isin(list(JUDGED))
                   & frame.decision.map(decisions.reportable)]
    counts = judged.verdict.value_counts()
    parts = [f"{counts.get(v, 0)} {v}" for v in
             (WITHIN, "above level", "below level", UNDECIDED)]
    return (f"{len(judged)} judged outcomes of the decisions evaluate prints: "
            + ", ".join(parts))


def build_parser() -> ArgumentParser:
    """The options of :class:`GridConfig`, as declared there."""
    return add_options(ArgumentParser(prog="python -m sim.decision_grid", description=__doc__),
                       GridConfig)
