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
import os
import sys
from pathlib import Path

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.outdir import run_outputs
from protocols import REPLICATE_MODES
from sim import generators
from sim.budget import DEFAULT_K_MAX
from sim.calibration import (
    DEFAULT_OUT,
    CalibrationConfig,
    CalibrationResult,
    for_file,
    plan_calibration,
    run_calibration,
)
from sim.grid import DEFAULT_REPLICATES, DEFAULT_REPS
from sim.grid.parallel import BACKENDS
from sim.outputs import write_csv

from ._save import save_png
from .calibration_text import summary_table
from .figures import power_curves_figure

PROG = "python -m sim.calibrate"
#: files main() may write; those of an earlier run that this run does not write are removed
KNOWN_OUTPUTS = ("calibration.csv", "seed_budget.csv", "mde.csv", "pool_summary.csv",
                 "fit_check.csv", "command.json", "power_curves.png")


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="python -m sim.calibrate",
        description="Score evaluation protocols for false-positive rate and power by "
                    "simulation, and tell how many seeds to budget.")
    p.add_argument("--k", nargs="+", type=int, required=True, metavar="K",
                   help="seeds per arm: one integer, or MIN MAX for the range MIN..MAX")
    p.add_argument("--effects", nargs="+", type=float, default=None, metavar="EFFECT",
                   help="true effects in percentage points (default 0 0.5 1 2); a real pool "
                        "has its own, which --effects may only restate, and a CSV pool with "
                        "--metric-range states it in the metric's own units (20 on a [0, 100] "
                        "metric is +20 units, not +0.2)")
    p.add_argument("--generator", default="seed_gaussian",
                   help="one of " + ", ".join(generators.names()) + "; or "
                        + "; ".join(f"'{k}': {v}" for k, v in generators.SHORTHANDS.items()))
    p.add_argument("--param", nargs="+", default=[], metavar="KEY=VALUE",
                   help="generator parameters, e.g. sigma=0.004 rho=0.3 (fractions)")
    p.add_argument("--from-pilot", metavar="RESULTS",
                   help="fit the generator to your pilot runs: a protocols.evaluate CSV, or "
                        "two harness logs as BASELINE_LOG,VARIANT_LOG")
    p.add_argument("--sims", type=int, default=2000, help="experiments per cell (2000)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (0.05)")
    p.add_argument("--protocols", nargs="+", metavar="NAME",
                   help="protocols to score (default: all applicable)")
    p.add_argument("--protocol-param", nargs="+", default=[], metavar="KEY=VALUE",
                   help="set on every selected protocol with that parameter, e.g. B=30")
    p.add_argument("--seed", type=int, default=0, help="root seed (0)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="parallel workers (default: all cores; results do not depend on it)")
    p.add_argument("--backend", choices=BACKENDS, default="loky",
                   help="loky (local processes) or dask (a dask.distributed cluster)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="dask scheduler address; default: a local cluster on loopback")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder ({DEFAULT_OUT})")
    p.add_argument("--target-power", type=float, default=0.8, metavar="P",
                   help="power the seed budget and --mde answer for (0.8)")
    p.add_argument("--k-max", type=int, default=DEFAULT_K_MAX, metavar="K",
                   help=f"search the seed budget up to this k ({DEFAULT_K_MAX}); a real pool "
                        "caps it at a third of its seeds")
    p.add_argument("--fpr-tolerance", type=float, default=None, metavar="T",
                   help="a protocol is recommended only if its false-positive rate's upper "
                        "bound is <= alpha + T at every k (default alpha / 5)")
    p.add_argument("--mde", action="store_true",
                   help="also search the minimum detectable effect of every k (mde.csv); "
                        "generators with a continuous effect only")
    p.add_argument("--pool-method", choices=("jackknife", "projection", "halves"),
                   default="jackknife",
                   help="real pools: how pool_low/pool_high get the pool-sampling error: "
                        "'jackknife' (delete-one-seed jackknife over the seeds each experiment "
                        "drew; no extra cells), 'projection' (Hoeffding's first-order term), "
                        "'halves' (the older --pool-reps half-sample replicates, 6x the cost)")
    p.add_argument("--max-sims", type=int, default=None, metavar="N",
                   help="cap of the validity rule's sequential stop: a borderline null cell's "
                        "simulations are doubled up to N (default 16 x --sims)")
    p.add_argument("--assurance", type=float, default=0.8, metavar="P",
                   help="--from-pilot: the seed budget from the pilot's own deltas reaches "
                        "the target power with this probability over the pilot's luck (0.8)")
    p.add_argument("--metric-range", type=float, nargs=2, default=None,
                   metavar=("LOW", "HIGH"),
                   help="range of a CSV pool's metric (e.g. 0 1000 for RL returns); default "
                        "[0, 1], or [0, 100] with --percent. Its effects (--effects, the "
                        "effect column) and CI widths (median_ci_width) are then in the "
                        "metric's units, with unit = 'metric units' in the CSV files; "
                        "effect_pp and median_ci_width_pp are left blank")
    p.add_argument("--percent", action="store_true",
                   help="--from-pilot: the pilot's scores are percentages (91.3 = 91.3%%)")
    p.add_argument("--allow-large-k", action="store_true",
                   help="real pools: allow k above a third of the pool (experiments then "
                        "share most of their seeds)")
    p.add_argument("--pool-reps", type=int, default=DEFAULT_REPS, metavar="R",
                   help=f"real pools: half-sample replicates behind pool_low/pool_high, "
                        f"and with --check-fit the pools a fitted model redraws to judge "
                        f"its own fit ({DEFAULT_REPS}; 0 = off)")
    p.add_argument("--replicates", choices=REPLICATE_MODES, default=DEFAULT_REPLICATES,
                   help="z-bootstrap protocols: 'summary' draws the B replicates' mean and SD "
                        "from their exact-moment law (the same rates, far faster); 'drawn' "
                        f"resamples every replicate ({DEFAULT_REPLICATES})")
    p.add_argument("--check-fit", action="store_true",
                   help="real pools: also calibrate seed_question fitted to each pool and "
                        "write fit_check.csv, with where a correct model's difference "
                        "would fall (null_mean, se_null; a parametric bootstrap of "
                        "--pool-reps pools)")
    p.add_argument("--no-plot", action="store_true", help="skip power_curves.png")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no table")
    return p


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
