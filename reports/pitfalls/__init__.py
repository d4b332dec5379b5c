"""``python -m reports.pitfalls``: nine evaluation pitfalls, measured by simulation.

Writes ``index.html`` (self-contained: figures embedded as base64 PNG) and ``README.md``
with one section per pitfall, each with a figure, the measured numbers with their 95% Monte
Carlo (Wilson) intervals, an explanation and the command that reproduces them. Every number
in the text is formatted from a CSV written beside the report (``section1.csv``, ...).
Sections 1-6 compute their numbers in-process with :func:`sim.grid.calibrate` and
exactly the settings of the ``python -m sim.calibrate`` command they print, so the numbers
are those that command prints. Section 7 has no calibrate command and is simulated here;
section 8 runs :func:`sim.sequential.sequential_table`, as ``python -m sim.sequential`` does.

One module per section (``s1_single_run`` ... ``s9_questions_noise``), each a function
``section_*(ctx, scan) -> Section`` registered with ``@section(number, lesson)``
(:mod:`._registry`): a new section is one new file. :mod:`._context` holds what they share
and :mod:`.figures` their figures. The nominal level comes from ``--alpha`` through
:attr:`Settings.alpha` into every section and figure.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import (
    add_options,
    alpha_option,
    check_options,
    config_from_args,
    jobs_option,
    option,
    out_option,
    pool_option,
    seed_option,
)
from evalcal_core.outdir import run_outputs
from real_runs.manifest import pool_caveat
from real_runs.store import check_store, pool_cells

from .._report_page import Section, page_html, page_markdown, quick_banner, write_pngs
from ._context import (
    DEFAULT_ALPHA,
    DEFAULT_OUT,
    FULL,
    PROG,
    QUICK,
    Context,
    PoolScan,
    Settings,
    scan_pools,
)
from ._registry import REGISTRY, SectionEntry, section, sections

# Importing each section module registers its section (one file per section).
for _module in pkgutil.iter_modules(__path__):
    if re.fullmatch(r"s\d+_\w+", _module.name):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["FULL", "LESSONS", "QUICK", "REGISTRY", "Context", "PitfallsOptions", "PoolScan",
           "SectionEntry", "Settings", "build_report", "lessons", "main", "run", "scan_pools",
           "section", "sections"]


def lessons() -> dict[int, str]:
    """One-line lessons by section number (shown on the reports' front page)."""
    return {entry.number: entry.lesson for entry in sections()}


#: the lessons of the sections registered at import (see :func:`lessons`)
LESSONS = lessons()

#: one-line lessons, by section number (shown on the reports' front page)


def build_report(settings: Settings, out: Path) -> list[Section]:
    """Compute every section, write the CSVs, PNGs, ``index.html`` and ``README.md``.

    Parameters
    ----------
    settings : Settings
    out : pathlib.Path
        Output folder (created).

    Returns
    -------
    list of Section
    """
    out.mkdir(parents=True, exist_ok=True)
    scan = scan_pools(settings.pool, settings.profile)
    with tempfile.TemporaryDirectory(prefix="pitfalls-cells-") as cache:
        ctx = Context(settings, out, Path(cache))
        built = [entry.make(ctx, scan) for entry in sections()]
    title = "Evaluation pitfalls, measured"
    mode = "quick (reduced simulations, for tests)" if settings.quick else "full"
    intro = [
        "Each section measures one way an ML evaluation protocol goes wrong, by simulating "
        "experiments whose truth is known. Rates are given with 95% Wilson intervals for "
        "their Monte Carlo error; the command under each section reproduces its numbers "
        f"exactly. This build: {mode}, root seed {settings.seed}, nominal alpha "
        f"{settings.alpha:g}, real-run pool {settings.pool or 'real_runs/pool (committed)'}"
        f"{f' (profile {settings.profile})' if settings.profile else ''}. "
        f"Real pools: {pool_caveat(settings.pool, settings.profile)} Data caveats: the "
        "paper table's notes and "
        "real_runs/README.md."]
    banner = ""
    if settings.quick:
        counts = sorted({settings.sims, settings.sims_questions, settings.sims_family})
        banner = quick_banner(f"{counts[0]:,}" if len(counts) == 1
                              else f"{counts[0]:,} to {counts[-1]:,}")
    write_atomic(out / "index.html", page_html(title, intro, built, banner))
    write_atomic(out / "README.md", page_markdown(title, intro, built, banner))
    write_pngs(out, built)
    return built


@dataclass(frozen=True)
class PitfallsOptions:
    """What ``python -m reports.pitfalls`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`) whose own rule is checked when built."""

    out: Path = out_option(DEFAULT_OUT)
    quick: bool = option("--quick", False, switch=True, help="fewer simulations (for tests)")
    seed: int = seed_option(help="root seed of every command (0)")
    alpha: float = alpha_option(DEFAULT_ALPHA, help=f"nominal two-sided level of every test "
                                                    f"({DEFAULT_ALPHA:g})")
    jobs: int = jobs_option()
    pool: str | None = pool_option()
    profile: str | None = option("--profile", None,
                                 help="training profile of the real pools (cpu, paper); "
                                      "needed only when the store holds several")

    def __post_init__(self):
        check_options(self)


def build_parser() -> argparse.ArgumentParser:
    """The options of :class:`PitfallsOptions`, as declared there."""
    # ``python -OO`` strips docstrings: the description must not need one.
    summary = (__doc__ or "").strip().splitlines()[:1]
    return add_options(ArgumentParser(prog=PROG, description=summary[0] if summary else None),
                       PitfallsOptions)


def _settings(args: PitfallsOptions) -> Settings:
    if args.pool is not None:
        # Only the committed pool may be absent (its parts are then skipped, saying so): a
        # store the user names must exist and hold a pool, as in reports.build.
        check_store(args.pool, "--pool")
        pool_cells(args.pool, args.profile, option="--pool STORE")  # a profile it holds
    sizes = QUICK if args.quick else FULL
    return Settings(**sizes, seed=args.seed, jobs=args.jobs, pool=args.pool,
                    profile=args.profile, quick=args.quick, alpha=args.alpha)


def main(argv=None) -> int:
    args = config_from_args(PitfallsOptions, build_parser().parse_args(argv))
    settings = _settings(args)
    # Only the command draws off-screen; importing the package leaves the backend alone.
    import matplotlib

    matplotlib.use("Agg")
    start = time.perf_counter()
    # locked and marked incomplete until index.html, README.md and every figure are written
    with run_outputs(args.out, PROG) as outputs:
        sections = build_report(settings, outputs.path)
    print(f"wrote {args.out}/index.html and README.md ({len(sections)} sections) in "
          f"{time.perf_counter() - start:.1f} s")
    return 0


def run() -> None:
    """Console entry point."""
    run_main(main, PROG)
