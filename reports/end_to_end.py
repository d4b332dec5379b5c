"""End to end: the decision grid's experiments as users' files, through the API and the command.

The decision grid (:mod:`sim.decision_grid`) scores what ``evaluate`` prints on many
simulated experiments at once. This module checks, experiment by experiment, that a user who
had that experiment's data would be told the same thing: each sampled experiment is written
as a tidy results table and run through ``evalcal.compare`` (the DataFrame, in memory) and
through the command ``python -m protocols.evaluate FILE --json`` (a CSV, the exit status
included); the decisions read back from both outputs must equal the grid's.

A family takes part by defining ``sample`` (:mod:`sim.end_to_end`). :func:`check`
runs one :class:`~sim.end_to_end.Sample`; :func:`check_families` runs every family
that defines ``sample`` over its cells, at least ``per_family`` experiments each.
"""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core.cli import run_in_process
from evalcal_core.keywords import keywords_to_argv, option_flags
from sim import decisions
from sim.end_to_end import GATE, Sample
from sim.grid import cell_seed

from .evaluate.api import _NOT_KEYWORDS, compare
from .evaluate.cli import main
from .evaluate.options import EvaluateOptions


@dataclass
class Report:
    """What :func:`check` found: experiments run, and every disagreement in words."""

    experiments: int = 0
    by_family: dict = field(default_factory=dict)
    mismatches: list = field(default_factory=list)

    def add(self, other: Report, family: str) -> None:
        self.experiments += other.experiments
        self.by_family[family] = self.by_family.get(family, 0) + other.experiments
        self.mismatches += [f"{family}: {m}" for m in other.mismatches]

    @property
    def line(self) -> str:
        """One line for the grid's output."""
        families = len(self.by_family)
        if not self.experiments:
            return "end to end: no sampled experiment checked (--end-to-end 0)"
        verdict = ("every decision equal to the grid's" if not self.mismatches
                   else f"{len(self.mismatches)} disagreement(s), first: {self.mismatches[0]}")
        return (f"end to end: {self.experiments:,} sampled experiments of {families} families "
                "written as users' files through evalcal.compare and the command's --json "
                f"and exit status: {verdict}")


def _expected(sample: Sample, i: int) -> dict:
    return {name: np.asarray(values)[i].item() for name, values in sample.decisions.items()}


def _command(frame: pd.DataFrame, options: dict, folder: Path) -> tuple[dict, int]:
    """``python -m protocols.evaluate FILE --json [--gate]`` on ``frame`` written as a CSV,
    in this process (the command's own entry point): its JSON body and exit status."""
    path = folder / "results.csv"
    frame.to_csv(path, index=False)
    flags = {k: v for k, v in option_flags(EvaluateOptions).items() if k not in _NOT_KEYWORDS}
    argv = [str(path), "--json", *keywords_to_argv(options, flags, "evaluate")]
    if options.get("claim") is not None:
        argv.append("--gate")
    done = run_in_process(main, "evaluate", *argv)
    if done.returncode == 2:
        raise AssertionError(f"the command refused a sampled experiment: {done.stderr}")
    return json.loads(done.stdout), done.returncode


def check(sample: Sample, *, count: int | None = None) -> Report:
    """Run the first ``count`` experiments of ``sample`` through both routes.

    For each: ``evalcal.compare(frame, **options)``'s ``to_dict()`` and ``exit_status`` and
    the command's ``--json`` body and exit status must be equal, and the decisions read
    from the body must equal the grid's (``gate`` against the exit status too).
    """
    report = Report()
    total = len(sample.frames) if count is None else min(count, len(sample.frames))
    with tempfile.TemporaryDirectory(prefix="evalcal-e2e-") as folder:
        for i in range(total):
            frame = sample.frames[i]
            api = compare(frame, **sample.options)
            body, status = _command(frame, sample.options, Path(folder))
            expected = _expected(sample, i)
            got = sample.read(body)
            api_body = api.to_dict()
            # the command names its file where the API names the frame: the rest is equal
            api_body["source"] = body["source"]
            problems = []
            if api_body != body:
                problems.append("compare() and the command's JSON differ")
            if (api.exit_status or 0) != status:
                problems.append(f"exit status {status} but compare() says {api.exit_status}")
            if GATE in expected and expected[GATE] != status:
                problems.append(f"the grid's gate {expected[GATE]} but exit status {status}")
            for name, value in expected.items():
                if got.get(name) != value:
                    problems.append(f"{name}: grid {value!r}, evaluate {got.get(name)!r}")
            if problems:
                report.mismatches.append(f"experiment {i} with {sample.options}: "
                                         + "; ".join(problems))
            report.experiments += 1
    return report


def check_families(per_family: int = 200, *, seed: int = 0, families=None,
                   quick: bool = False, pools=()) -> Report:
    """At least ``per_family`` experiments of every family that defines ``sample``, spread
    over its cells (its :data:`QUICK_CELLS` with ``quick``; a real-pool family's cells on
    ``pools`` when given, those whose pool is absent left out: :func:`sim.decisions.cells_of`),
    each cell drawn from the grid's stream of that cell
    (``cell_seed(seed, "end_to_end", family, params)``)."""
    report = Report()
    if per_family <= 0:
        return report
    for name, module in decisions.families().items():
        if families is not None and name not in families:
            continue
        if not hasattr(module, "sample"):
            continue
        cells, _ = decisions.cells_of(module, quick=quick, pools=pools)
        cells = [c for c in cells if getattr(module, "in_end_to_end", lambda p: True)(c)]
        if not cells:                    # its pools are absent here (the grid says so)
            continue
        each = max(1, math.ceil(per_family / len(cells)))
        for params in cells:
            rng = np.random.default_rng(cell_seed(seed, "end_to_end", name, params))
            report.add(check(module.sample(params, each, rng)), name)
    return report


