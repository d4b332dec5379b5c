"""``evalcal``: one front door for every command of the workbench.

``evalcal NAME [OPTIONS]`` runs the same ``main(argv)`` as ``python -m MODULE [OPTIONS]``
(the long forms stay: the README and scripts use them); ``evalcal --help`` lists the
subcommands. Each subcommand's module is imported only when it runs, so ``evalcal --help``
is fast and a subcommand never pays for another's imports (torch among them).

This package is the top layer: it may import every other package of the project, and none
imports it (``tests/test_architecture.py``).
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass

from evalcal_core.cli import call_main, invoked_as, run_main
from evalcal_core.validate import InvalidParameterError

PROG = "evalcal"


@dataclass(frozen=True)
class Subcommand:
    """A subcommand: the module whose ``main(argv) -> int`` it runs, and one line of help."""

    name: str
    module: str
    summary: str
    group: str


#: every subcommand, in the order ``evalcal --help`` lists them
SUBCOMMANDS = {s.name: s for s in (
    Subcommand("evaluate", "reports.evaluate.cli",
               "compare the arms of your own results or harness logs", "your results"),
    Subcommand("export", "reports.evaluate.export",
               "any input evaluate reads (your layout, harness logs) as its tidy CSV",
               "your results"),
    Subcommand("plan", "sim.plan",
               "the cheapest seeds x questions x repeats with the power you want",
               "your results"),
    Subcommand("plan-figure", "reports.plan_figure", "the planner's figure", "your results"),
    Subcommand("calibrate", "reports.calibrate",
               "false-positive rate and power of every protocol, and the seed budget",
               "calibration"),
    Subcommand("design-check", "sim.design_check",
               "which protocol holds its level for each study design", "calibration"),
    Subcommand("evidence", "sim.evidence",
               "the table behind evaluate's evidence line: each reported protocol's "
               "false positives and power", "calibration"),
    Subcommand("harness-defaults", "sim.harness_defaults",
               "which statistics the harnesses print can be trusted", "calibration"),
    Subcommand("decision-grid", "reports.decision_grid",
               "every decision evaluate prints, scored on its design's generator",
               "calibration"),
    Subcommand("multiarm", "sim.multiarm",
               "family-wise error and power of the corrections for many arms", "calibration"),
    Subcommand("seed-power-bound", "sim.seed_power_bound",
               "how little any valid test can gain over paired_t", "calibration"),
    Subcommand("sequential", "reports.sequential",
               "peeking: group-sequential designs and their error rates", "calibration"),
    Subcommand("pools", "sim.llm_pools.cli",
               "item pools of fixed LLMs: describe one, or make one from harness logs",
               "calibration"),
    Subcommand("build", "reports.build", "the front page: every report in one folder",
               "reports"),
    Subcommand("pitfalls", "reports.pitfalls", "the pitfalls report, with numbers",
               "reports"),
    Subcommand("paper-table", "reports.paper_table", "the paper's table from a run store",
               "reports"),
    Subcommand("paper-figures", "reports.paper_figures", "the paper's figures", "reports"),
    Subcommand("pool-profiles", "reports.pool_profiles",
               "the training profiles' pools side by side", "reports"),
    Subcommand("train", "real_runs.train", "train seed pairs (needs the torch extra)",
               "real runs"),
    Subcommand("build-pool", "real_runs.build_pool", "build a run pool from records",
               "real runs"),
    Subcommand("pack-data", "real_runs.pack_data", "pack a data set for the GPU machine",
               "real runs"),
    Subcommand("gpu-check", "real_runs.gpu_check", "time the GPU schedule", "real runs"),
    Subcommand("gpu-batch", "real_runs.gpu_batch", "train a batch of a plan on the GPU",
               "real runs"),
    Subcommand("merge-records", "real_runs.merge_records",
               "merge GPU records into the run store", "real runs"),
)}


def _help() -> str:
    lines = [f"usage: {PROG} COMMAND [OPTIONS]   ({PROG} COMMAND --help for its options)", ""]
    width = max(len(name) for name in SUBCOMMANDS)
    group = None
    for sub in SUBCOMMANDS.values():
        if sub.group != group:
            group = sub.group
            lines.append(f"{group}:")
        lines.append(f"  {sub.name:<{width}}  {sub.summary}")
    lines += ["", "Every command is also `python -m MODULE` (e.g. `python -m sim.calibrate`, "
              "`python -m protocols.evaluate`)."]
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run ``evalcal COMMAND OPTIONS``: the subcommand's ``main(OPTIONS)``'s exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_help())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        raise InvalidParameterError(f"{name!r} is not an evalcal command; the commands are "
                                    f"{', '.join(SUBCOMMANDS)} (evalcal --help)")
    module = importlib.import_module(SUBCOMMANDS[name].module)
    with invoked_as(f"{PROG} {name}"):
        # errors are printed here, while the subcommand's name is in force
        return call_main(module.main, f"{PROG} {name}", rest)


def run() -> None:
    """Console-script entry point (``evalcal``)."""
    run_main(main, PROG)
