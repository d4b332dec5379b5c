"""The decision grid: every decision ``evaluate`` prints, scored on its design's generator.

The calibration grid scores p-values at effect 0. This grid scores what users act on:
simultaneous intervals at non-zero effects, family-wise errors, claims and gates at their
margins, effect sizes' intervals, dominant clusters, the planner's power, one family of
cells per module of :mod:`sim.decisions`. Each outcome is judged with its Wilson 95%
interval:

* a false rejection or false claim (``rejection``) is **within level** when the upper
  bound is <= ``alpha + 1 pp``, **above level** when the lower bound is above it;
* a coverage (``coverage``) is **within level** when the lower bound is >=
  ``1 - alpha - 1.5 pp``, **below level** when the upper bound is below it;
* anything else is **undecided**: the cell is drawn again with four times the simulations
  from a stream of its own (the second look), and judged on the pooled count; still
  undecided, it is reported so. ``power`` and ``refused`` outcomes are reported, not judged.

An exact test at alpha = 5% has an upper bound of about 5.7% at 4,000 simulations, so a
chance 5.4% would read "undecided" rather than "above level": the second look settles it.

Randomness: block ``b`` (of :data:`BLOCK` experiments) of cell ``c`` at look ``l`` is drawn
from ``sim.grid.cell_seed(seed, "decisions", family, params, l, b)``: results depend only on
``--seed``, not on ``--jobs``.

Command line::

    python -m sim.decision_grid [--sims 4000] [--seed 0] [--families maxt ...] [--quick]
                                [--jobs N] [--out DIR]

prints the table and, with ``--out``, writes ``decision_grid.csv`` and
``decision_grid.md``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import (
    MAX_SIMS,
    add_options,
    check_options,
    config_from_args,
    jobs_option,
    option,
    out_option,
    seed_option,
    sims_option,
)
from evalcal_core.outdir import run_outputs
from evalcal_core.validate import Interval, InvalidParameterError, Optional, fail

from . import decisions
from .grid import cell_seed, wilson
from .outputs import csv_text

#: simulations per cell at the first look (the issue's minimum for a reported cell)
DEFAULT_SIMS = 4_000
#: simulations per cell with --quick (tests)
QUICK_SIMS = 400
#: the second look draws this many times the first look's simulations
SECOND_LOOK = 4
#: experiments simulated at once (a cell's memory is that of one block)
BLOCK = 1_000

JUDGED = {"rejection": "upper", "coverage": "lower"}


@dataclass(frozen=True)
class GridConfig:
    """What to run and where to write it; each field a command-line option declared with
    its flag, default, help and constraint (:mod:`evalcal_core.options`), checked once when
    built. ``sims`` left ``None`` is :data:`QUICK_SIMS` with ``quick``, else
    :data:`DEFAULT_SIMS`; ``families`` empty is every family."""

    families: tuple = option("--families", (), nargs="+", metavar="NAME",
                             help=f"families to run (default all: "
                                  f"{', '.join(decisions.families())})")
    sims: int | None = sims_option(
        None, constraint=Optional(Interval("int", 50, MAX_SIMS)),
        help=f"simulations per cell at the first look (default {DEFAULT_SIMS}; "
             f"{QUICK_SIMS} with --quick)")
    seed: int = seed_option()
    quick: bool = option("--quick", False, switch=True,
                         help="a few cells per family, no second look (for tests)")
    jobs: int = jobs_option(help="cells run in parallel (default: all cores; results do not "
                                 "depend on it)")
    out: Path | None = out_option(None, help="folder for decision_grid.csv and .md (default: "
                                             "print only)")

    def __post_init__(self):
        check_options(self)
        if self.sims is None:
            object.__setattr__(self, "sims", QUICK_SIMS if self.quick else DEFAULT_SIMS)


def judge(measure: str, hits: int, sims: int, alpha: float) -> tuple[str, float, float]:
    """``(verdict, low, high)`` of one outcome: its Wilson 95% interval and the rule above."""
    low, high = wilson(hits, sims)
    if measure == "rejection":
        limit = alpha + decisions.REJECTION_TOLERANCE
        verdict = ("within level" if high <= limit else
                   "above level" if low > limit else "undecided")
    elif measure == "coverage":
        limit = 1.0 - alpha - decisions.COVERAGE_TOLERANCE
        verdict = ("within level" if low >= limit else
                   "below level" if high < limit else "undecided")
    else:
        verdict = "reported"
    return verdict, low, high


def _verdict(row) -> tuple[str, float, float]:
    verdict, low, high = judge(row.measure, row.hits, row.sims, row.alpha)
    if not decisions.reportable(row.decision) and verdict != "reported":
        verdict = f"old rule, {verdict}"
    return verdict, low, high


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


def _rows(family, params, outcomes, look_sims):
    out = []
    for o in outcomes:
        if o["measure"] not in decisions.MEASURES:
            raise InvalidParameterError(f"family {family!r} returned measure {o['measure']!r}; "
                                        f"allowed: {', '.join(decisions.MEASURES)}")
        out.append({"family": family, "cell": _cell_key(params), "decision": o["decision"],
                    "measure": o["measure"], "alpha": o["alpha"], "hits": o["hits"],
                    "sims": o["sims"], "looks": str(look_sims)})
    return out


def run_grid(config: GridConfig) -> pd.DataFrame:
    """Run every cell of the chosen families and judge every outcome.

    Returns
    -------
    pandas.DataFrame
        One row per (family, cell, decision, measure): ``hits``, ``sims`` (pooled over
        looks), ``rate``, ``low``, ``high`` (Wilson 95%, fractions), ``verdict``.
    """
    found = decisions.families()
    names = list(config.families) or list(found)
    for name in names:
        if name not in found:
            raise fail("--families", f"names among {', '.join(found)}", name)
    cells = [(n, p) for n in names
             for p in (found[n].QUICK_CELLS if config.quick else found[n].CELLS)]
    first = Parallel(n_jobs=config.jobs)(
        delayed(_run_cell)(n, p, config.sims, config.seed, 0) for n, p in cells)
    rows = [r for (n, p), res in zip(cells, first) for r in _rows(n, p, res, config.sims)]
    frame = pd.DataFrame(rows)
    verdicts = [_verdict(r)[0] for r in frame.itertuples()]
    again = sorted({(r.family, r.cell) for r, v in zip(frame.itertuples(), verdicts)
                    if v == "undecided"})
    if again and not config.quick:
        by_key = {(n, _cell_key(p)): p for n, p in cells}
        more = Parallel(n_jobs=config.jobs)(
            delayed(_run_cell)(n, by_key[(n, c)], SECOND_LOOK * config.sims, config.seed, 1)
            for n, c in again)
        extra = pd.DataFrame([r for (n, c), res in zip(again, more)
                              for r in _rows(n, by_key[(n, c)], res, SECOND_LOOK * config.sims)])
        keys = ["family", "cell", "decision", "measure"]
        extra = extra.set_index(keys)
        frame = frame.set_index(keys)
        both = frame.index.intersection(extra.index)
        frame.loc[both, "hits"] += extra.loc[both, "hits"]
        frame.loc[both, "sims"] += extra.loc[both, "sims"]
        frame.loc[both, "looks"] = f"{config.sims}+{SECOND_LOOK * config.sims}"
        frame = frame.reset_index()
    judged = [_verdict(r) for r in frame.itertuples()]
    frame["rate"] = frame.hits / frame.sims
    frame["low"] = [j[1] for j in judged]
    frame["high"] = [j[2] for j in judged]
    frame["verdict"] = [j[0] for j in judged]
    return frame


def format_table(frame: pd.DataFrame, markdown: bool = False) -> str:
    """The grid as text (or a Markdown table): rates in % with Wilson 95% intervals."""
    head = ["family", "cell", "decision", "measure", "rate % [95% CI]", "sims", "verdict"]
    lines = []
    if markdown:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
    for r in frame.itertuples():
        cell = ", ".join(f"{k}={v}" for k, v in json.loads(r.cell).items())
        rate = f"{100 * r.rate:.1f} [{100 * r.low:.1f}, {100 * r.high:.1f}]"
        values = [r.family, cell, r.decision, r.measure, rate, f"{r.sims:,}", r.verdict]
        lines.append("| " + " | ".join(values) + " |" if markdown else "  ".join(values))
    return "\n".join(lines)


def summary(frame: pd.DataFrame) -> str:
    """How many judged outcomes of reportable decisions are within, off or undecided."""
    judged = frame[frame.measure.isin(list(JUDGED))
                   & frame.decision.map(decisions.reportable)]
    counts = judged.verdict.value_counts()
    parts = [f"{counts.get(v, 0)} {v}" for v in
             ("within level", "above level", "below level", "undecided")]
    return (f"{len(judged)} judged outcomes of the decisions evaluate prints: "
            + ", ".join(parts))


def build_parser() -> ArgumentParser:
    """The options of :class:`GridConfig`, as declared there."""
    return add_options(ArgumentParser(prog="python -m sim.decision_grid", description=__doc__),
                       GridConfig)


def main(argv=None) -> int:
    """Command line: print the grid; write it with ``--out``. Exit 0 whatever the verdicts."""
    config = config_from_args(GridConfig, build_parser().parse_args(argv))
    known = ("decision_grid.csv", "decision_grid.md")
    if config.out is None:
        frame = run_grid(config)
    else:
        with run_outputs(config.out, "python -m sim.decision_grid", known=known) as outputs:
            frame = run_grid(config)
            write_atomic(outputs.path / "decision_grid.csv", csv_text(frame))
            outputs.wrote("decision_grid.csv")
            write_atomic(outputs.path / "decision_grid.md",
                         format_table(frame, markdown=True) + "\n\n" + summary(frame) + "\n")
            outputs.wrote("decision_grid.md")
    print(format_table(frame))
    print(summary(frame))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    run_main(main, "python -m sim.decision_grid")
