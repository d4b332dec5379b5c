"""``python -m sim.calibrate``: false-positive rate and power of every protocol, by k.

The command lives here, in the reports layer, because it draws (``power_curves.png``) and
prints tables in words; :mod:`sim.calibrate` is its alias (``python -m sim.calibrate``).
The numbers are :func:`sim.calibration.run_calibration`'s: this module parses the
arguments into a :class:`sim.calibration.CalibrationConfig`, runs it and writes the files.

Example::

    python -m sim.calibrate --k 3 10
    python -m sim.calibrate --k 3 10 --mde --target-power 0.9
    python -m sim.calibrate --k 8 --generator question_mixture --effects 0 1 --sims 500

Besides the requested grid it searches, for every recommended protocol and effect, the
smallest k reaching the target power up to ``--k-max`` (``seed_budget.csv``; the rule for
"recommended" is in :mod:`sim.budget`), and with ``--mde`` the smallest effect each k
detects (``mde.csv``, :mod:`sim.mde`). Real-pool rates get a pool-sampling interval
(``pool_low``/``pool_high``, :mod:`sim.grid.pool`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import add_options
from evalcal_core.outdir import run_outputs
from sim.calibration import (
    CalibrationConfig,
    CalibrationResult,
    for_file,
    plan_calibration,
    run_calibration,
)
from sim.outputs import write_csv

from ._save import save_png
from .calibration_text import summary_table
from .figures import power_curves_figure

PROG = "python -m sim.calibrate"
#: files main() may write; those of an earlier run that this run does not write are removed
KNOWN_OUTPUTS = ("calibration.csv", "seed_budget.csv", "mde.csv", "pool_summary.csv",
                 "fit_check.csv", "command.json", "power_curves.png")


def build_parser() -> ArgumentParser:
    """The options of :class:`sim.calibration.CalibrationConfig`, as declared there."""
    return add_options(ArgumentParser(
        prog="python -m sim.calibrate",
        description="Score evaluation protocols for false-positive rate and power by "
                    "simulation, and tell how many seeds to budget."), CalibrationConfig)


def main(argv=None) -> int:
    """Parse, check everything (the output folder included), then lock ``--out``, run and
    write: a bad argument is reported as such even while another run holds the folder.

    The folder is marked incomplete (:func:`evalcal_core.outdir.run_outputs`) from the lock
    until every output is written; the cell cache under it is not an output, so a rerun
    after a kill resumes from it.
    """
    config = CalibrationConfig.from_args(build_parser().parse_args(argv))
    plan = plan_calibration(config)
    with run_outputs(config.out, PROG, known=KNOWN_OUTPUTS) as outputs:
        result = run_calibration(config, plan)
        outputs.wrote(*write_outputs(result, config,
                                 sys.argv[1:] if argv is None else list(argv)))
    if not config.quiet:
        print_summary(result, config.out, outputs.written, outputs.removed)
    return 0


def write_outputs(result: CalibrationResult, config: CalibrationConfig, argv) -> list[str]:
    """Write ``result`` into ``config.out`` (and the figure unless ``config.plot`` is off);
    return the names written. Pool warnings go to stderr."""
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    # a metric-range pool's effect_pp is only its cell key (100 x metric units): blank in
    # the files, whose pp columns hold pp only (effect, unit and median_ci_width say it)
    write_csv(for_file(result.calibration), out / "calibration.csv")
    write_csv(for_file(result.budget), out / "seed_budget.csv")
    written = ["calibration.csv", "seed_budget.csv"]
    if result.mde is not None:
        write_csv(result.mde, out / "mde.csv")
        written.append("mde.csv")
    if result.pools is not None:
        write_csv(result.pools, out / "pool_summary.csv")
        written.append("pool_summary.csv")
        for warning in result.pools["warning"]:
            if warning:
                print(f"warning: {warning}", file=sys.stderr)
    if result.fits is not None:
        write_csv(result.fits, out / "fit_check.csv")
        written.append("fit_check.csv")
    write_atomic(out / "command.json", json.dumps({"argv": list(argv)}) + "\n")
    written.append("command.json")
    if config.plot:
        save_png(power_curves_figure(result.grid, title=result.title, budget=result.budget),
                 out / "power_curves.png")
        written.append("power_curves.png")
    return written


def print_summary(result: CalibrationResult, out: Path, written, stale) -> None:
    """The tables in words, then which files were written and which stale ones removed."""
    print(summary_table(result.grid, result.budget, result.mde))
    if result.pools is not None:
        print("\nreal pools: true effect and pairing correlation of per-seed metrics")
        # a column that is NaN for every pool (the pp columns of a non-fraction metric,
        # the metric-unit ones of accuracies) is left out of the printout
        shown = result.pools.drop(columns="warning").dropna(axis=1, how="all")
        print(shown.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"\nwrote {out}/: {', '.join(written)}")
    if stale:
        print(f"removed {', '.join(stale)} of an earlier run with other settings")


def run() -> None:
    """Console entry point."""
    run_main(main, PROG)


if __name__ == "__main__":
    run()
