"""``python -m reports.build``: every report into ``reports/output/`` with one index page.

Builds the calibration of the default grid (``sim.calibrate``), the pitfalls report, the
paper table and the paper figures, by calling each tool's own ``main`` with its default
output folder under ``--out``, then writes ``index.html``. ``--quick`` passes fewer
simulations to the simulation steps (for tests).

A step that needs the real-run pool is skipped, with a line on the page, when the default
pool (the committed one) is missing: the one documented missing input. An earlier build's
files in a skipped step's folder are kept but marked incomplete, naming the skip. The arguments are
checked before any step runs, each bad one a single line on stderr and exit status 2: a
``--pool`` that is not a store folder holding a pool, a ``--profile`` that store (or the
default pool, when present) does not hold, an ``--out`` that is a file. Any failure of a
step is an error: the other steps still run and the page is written, then the command names
the failed steps on stderr and exits with status 1.

``--out`` is marked incomplete (``OUT/INCOMPLETE``, :func:`evalcal_core.outdir.run_outputs`)
from the start of the build until ``index.html`` is written, and each step marks its own
folder the same way: a build killed half-way leaves the marker, never a page over a mix of
two builds. A step that returns but leaves its folder marked is a failed step.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from evalcal_core.cli import ArgumentParser, one_line, run_main
from evalcal_core.options import (
    add_options,
    alpha_option,
    check_options,
    config_from_args,
    jobs_option,
    option,
    out_option,
    pool_option,
)
from evalcal_core.outdir import (
    check_out,
    incomplete_reason,
    local_time,
    mark_incomplete,
    run_outputs,
)
from evalcal_core.validate import InvalidParameterError, fail
from real_runs.store import DEFAULT_POOL, check_store, pool_cells, pool_profiles

from . import _front_page

PROG = "python -m reports.build"
DEFAULT_OUT = Path("reports") / "output"


@dataclass(frozen=True)
class Step:
    """One tool run by the build.

    Attributes
    ----------
    name : str
        Its folder under ``--out``.
    title : str
    module : str
        The ``python -m`` module whose ``main(argv)`` is called.
    argv : list of str
    files : list of str
        What it writes into its folder (linked from the page).
    needs_pool : bool
        Skipped (not failed) when there is no real-run pool.
    """

    name: str
    title: str
    module: str
    argv: list
    files: list
    needs_pool: bool = False

    @property
    def command(self) -> str:
        """The shell line that rebuilds this part."""
        return " ".join(["python", "-m", self.module, *self.argv])


@dataclass(frozen=True)
class Outcome:
    """What became of a step: ``status`` is ``built``, ``skipped`` or ``failed``."""

    step: Step
    status: str
    message: str = ""


def steps(out: Path, quick: bool, pool: str | None, jobs: int, alpha: float,
          profile: str | None = None) -> list[Step]:
    """The build's steps, in order (``profile``: the training profile of the real pools)."""
    sims = ["--sims", "200"] if quick else []
    chosen = ["--profile", profile] if profile else []
    store = ["--pool", pool] if pool else []
    pool_args = store + chosen
    level = ["--alpha", f"{alpha:g}"] if alpha != 0.05 else []
    return [
        Step("calibrate", "Calibration of the default grid (seed_gaussian, k = 3..10)",
             "sim.calibrate", ["--k", "3", "10", "--out", str(out / "calibrate"), "--quiet",
                               "--jobs", str(jobs)] + sims + level,
             ["power_curves.png", "calibration.csv", "seed_budget.csv"]),
        Step("pitfalls", "The pitfalls report (teaching)", "reports.pitfalls",
             ["--out", str(out / "pitfalls"), "--jobs", str(jobs)]
             + (["--quick"] if quick else []) + pool_args + level,
             ["index.html", "README.md"]),
        Step("harness_defaults", "Which harness defaults can you trust (lm-eval, Inspect, "
             "OpenAI evals, rliable, deepsig, a Beta-binomial)", "sim.harness_defaults",
             ["--out", str(out / "harness_defaults"), "--quiet", "--jobs", str(jobs)]
             + (["--quick"] + sims if quick else []) + level,
             ["harness_defaults.md", "harness_defaults.csv"]),
        Step("paper_table", "The paper's Table 2 from the real-run pool", "reports.paper_table",
             ["--out", str(out / "paper_table")] + pool_args + level,
             ["paper_table.md", "paper_table.csv"], needs_pool=True),
        Step("paper_figures", "The paper's figures from the real-run pool",
             "reports.paper_figures", ["--out", str(out / "paper_figures")] + pool_args,
             ["delta_ci.png", "welch_vs_signflip.png", "learning_curves.png"],
             needs_pool=True),
        # every profile of the store side by side: --profile does not narrow it
        Step("pool_profiles", "The training profiles' real pools side by side",
             "reports.pool_profiles", ["--out", str(out / "pool_profiles"), "--jobs",
                                       str(jobs)] + store + sims + level,
             ["pool_profiles.md", "pool_profiles.csv"], needs_pool=True),
    ]


def missing_pool(pool: str | None, profile: str | None = None) -> str | None:
    """Why the real-run pool (of ``profile``) is missing, or ``None`` when there is one."""
    try:
        pool_cells(pool, profile, option="--pool STORE")
    except ValueError as exc:
        return str(exc)
    return None


def profile_words(pool: str | None, profile: str | None, pool_missing: str | None) -> str:
    """The real-pool profile the build read, in words for the page (never ``None``).

    ``--profile`` when given; else the profiles of the store that the pool steps read (all of
    them: without ``--profile`` no step filters); "no real pool" when there is none.
    """
    if pool_missing is not None:
        return f"{profile} (no real pool of it)" if profile else "no real pool"
    if profile:
        return profile
    found = pool_profiles(DEFAULT_POOL if pool is None else Path(pool))
    if not found:
        return "no real pool"
    if len(found) == 1:
        return f"{found[0]} (the store's only profile)"
    return f"{', '.join(found)} (every profile of the store)"


def run_step(step: Step, pool_missing: str | None) -> Outcome:
    """Run ``step``'s ``main``; its printout is kept off the build's own."""
    if step.needs_pool and pool_missing:
        mark_skipped(step_folder(step), pool_missing)
        return Outcome(step, "skipped", pool_missing)
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            code = importlib.import_module(step.module).main(step.argv)
    except Exception as exc:  # noqa: BLE001 - any failure of a step fails the build
        if not isinstance(exc, (ValueError, OSError)):
            traceback.print_exc()
        return Outcome(step, "failed", f"{type(exc).__name__}: {one_line(exc)}")
    if code:
        return Outcome(step, "failed", f"exit status {code}")
    # the page reads the step's folder: one still marked is not a result
    marked = incomplete_reason(step_folder(step))
    if marked is not None:
        return Outcome(step, "failed", f"its folder is marked incomplete ({marked})")
    return Outcome(step, "built")


def mark_skipped(folder: Path, reason: str) -> bool:
    """Mark the folder of a skipped step incomplete when an earlier build left files there.

    The page does not link a skipped step, but its folder would still look like a result
    of this build; the marker (:data:`evalcal_core.outdir.MARKER_NAME`) says whose files
    they are, and readers that call :func:`evalcal_core.outdir.check_complete` refuse them.
    Nothing is deleted: the files may be all the user has of a pool since removed.

    Returns
    -------
    bool
        Whether a marker was written (False: no folder, or an empty one).
    """
    if not folder.is_dir() or not any(p.name != ".lock" for p in folder.iterdir()):
        return False
    mark_incomplete(folder, f"{PROG} skipped this step at {local_time()} ({reason}); the "
                    "files here are from an earlier build")
    return True


def step_folder(step: Step) -> Path:
    """The folder ``step`` writes (its ``--out``)."""
    return Path(step.argv[step.argv.index("--out") + 1])


@dataclass(frozen=True)
class BuildOptions:
    """What ``python -m reports.build`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`) whose own rule is checked when built."""

    out: Path = out_option(DEFAULT_OUT)
    quick: bool = option("--quick", False, switch=True, help="fewer simulations (for tests)")
    pool: str | None = pool_option()
    profile: str | None = option("--profile", None,
                                 help="training profile of the real pools (cpu, paper); "
                                      "needed only when the store holds several")
    jobs: int = jobs_option()
    alpha: float = alpha_option(help="nominal two-sided level of every step (0.05)")

    def __post_init__(self):
        check_options(self)


def build_parser() -> argparse.ArgumentParser:
    """The options of :class:`BuildOptions`, as declared there."""
    # ``python -OO`` strips docstrings: the description must not need one.
    summary = (__doc__ or "").strip().splitlines()[:1]
    return add_options(ArgumentParser(prog=PROG, description=summary[0] if summary else None),
                       BuildOptions)


def _main_iv(args) -> str | None:
    """Check every argument before any step runs; create ``--out``.

    Returns
    -------
    str or None
        Why the real-pool steps are skipped: only when ``--pool`` is not given and the
        default pool is missing.

    Raises
    ------
    ValueError
        A ``--pool``, ``--profile`` or ``--out`` that does not fit (each option's own rule
        was checked when ``args`` was built).
    """
    if args.pool is not None:
        check_store(args.pool, "--pool")
    if args.profile is not None:
        store = DEFAULT_POOL if args.pool is None else Path(args.pool)
        profiles = pool_profiles(store)
        if profiles and args.profile not in profiles:
            raise fail("--profile", f"a profile of the store {store} ({', '.join(profiles)})",
                       args.profile)
    pool_missing = missing_pool(args.pool, args.profile)
    if pool_missing is not None and args.pool is not None:  # e.g. only S0 under a profile
        raise InvalidParameterError(pool_missing)
    check_out(args.out)
    return pool_missing


def main(argv=None) -> int:
    args = config_from_args(BuildOptions, build_parser().parse_args(argv))
    pool_missing = _main_iv(args)
    import matplotlib

    matplotlib.use("Agg")
    with run_outputs(args.out, PROG) as outputs:
        outcomes = []
        for step in steps(args.out, args.quick, args.pool, args.jobs, args.alpha,
                          args.profile):
            outcome = run_step(step, pool_missing)
            outcomes.append(outcome)
            shown = {"built": str(args.out / step.name),
                     "skipped": f"skipped ({outcome.message})",
                     "failed": f"FAILED ({outcome.message})"}[outcome.status]
            print(f"{step.name}: {shown}")
        settings = dict(vars(args), profile=profile_words(args.pool, args.profile,
                                                          pool_missing))
        page = _front_page.write(args.out, outcomes,
                                 argv=sys.argv[1:] if argv is None else argv,
                                 settings=settings)
        outputs.wrote(page.name)
    print(f"open {page}")
    failed = [o for o in outcomes if o.status == "failed"]
    for o in failed:
        print(f"{PROG}: error: step {o.step.name!r} ({o.step.command}) failed: {o.message}",
              file=sys.stderr)
    return 1 if failed else 0


def run() -> None:
    """Console entry point."""
    run_main(main, PROG)


if __name__ == "__main__":
    run()
