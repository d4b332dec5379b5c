"""``python -m real_runs.build_pool``: train (or resume) the committed real-run pool.

Trains the ``cpu`` profile on CIFAR-10, CIFAR-10N and AG News: scenarios S0p, S1 and S2 for
every seed, S0 on the first few as a sanity check, baselines shared. Seeds are trained in
blocks across all datasets, so an interrupted build leaves every dataset with a similar
number of finished seeds; ``manifest.json`` is rewritten after every block.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from evalcal_core import scenarios
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import (
    add_options,
    check_options,
    config_from_args,
    jobs_option,
    option,
    out_option,
)
from evalcal_core.validate import Each, Interval, InvalidParameterError, Options
from real_runs.config import PROFILES
from real_runs.manifest import write_manifest
from real_runs.store import DEFAULT_POOL
from real_runs.sweep import parse_seeds, train_sweep

REPO = Path(__file__).resolve().parents[1]
#: how the command is run
PROG = "python -m real_runs.build_pool"
DEFAULT_DATA = REPO.parent / "shared" / "data"
DATASETS = tuple(sorted(scenarios.DATASETS))
#: scenarios trained on every seed, and the sanity check trained on the first few
POOL_SCENARIOS = scenarios.pool_scenarios()
SANITY_SCENARIOS = [n for n, s in scenarios.SCENARIOS.items() if s.identical]


@dataclass(frozen=True)
class BuildPoolOptions:
    """What ``python -m real_runs.build_pool`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`) whose own rule is checked when built."""

    data_root: str = option("--data-root", str(DEFAULT_DATA),
                            help="DATA_ROOT: a folder with cifar10-jpeg/, cifar10n/, "
                                 "ag_news-mini/ (default: ../shared/data beside the checkout)")
    out: Path = out_option(DEFAULT_POOL, help="pool folder (default: real_runs/pool in the "
                                                      "checkout)")
    datasets: tuple[str, ...] = option("--datasets", DATASETS, nargs="+", choices=DATASETS,
                                       constraint=Each(Options(DATASETS)),
                                       help="datasets to train (all)")
    seeds: str = option("--seeds", "0-29", help="seeds of S0p, S1 and S2 (0-29)")
    s0_seeds: str = option("--s0-seeds", "0-2", help="seeds of the S0 sanity check (0-2)")
    block: int = option("--block", 4, kind=int, constraint=Interval("int", 1, 10_000),
                        help="seeds per block (4)")
    profile: str = option("--profile", "cpu", choices=PROFILES, constraint=Options(PROFILES),
                          help="training profile (cpu)")
    jobs: int = jobs_option(2, constraint=Interval("int", 1, 1024),
                            help="parallel training processes (2)")
    cache_dir: str | None = option("--cache-dir", None, in_argv=False,
                                   help="decoded-image cache (<out>/.cache)")

    def __post_init__(self):
        check_options(self)


def build_parser() -> ArgumentParser:
    """The options of :class:`BuildPoolOptions`, as declared there."""
    return add_options(ArgumentParser(prog=PROG, description=__doc__), BuildPoolOptions)


def main(argv=None) -> int:
    """Train (or resume) the pool; ``InvalidParameterError`` for bad input."""
    args = config_from_args(BuildPoolOptions, build_parser().parse_args(argv))
    seeds = parse_seeds(args.seeds)
    s0_seeds = set(parse_seeds(args.s0_seeds, "--s0-seeds"))
    if not Path(args.data_root).is_dir():
        raise InvalidParameterError(f"--data-root {args.data_root} is not a folder; it must hold "
                                    f"cifar10-jpeg/, cifar10n/ and ag_news-mini/")
    from real_runs.train import require_torch

    require_torch()
    out = args.out
    for start in range(0, len(seeds), args.block):
        block = seeds[start:start + args.block]
        for dataset in args.datasets:
            for names, chosen in ((POOL_SCENARIOS, block),
                                  (SANITY_SCENARIOS, [s for s in block if s in s0_seeds])):
                if not chosen:
                    continue
                result = train_sweep(dataset, names, chosen, profile=args.profile,
                                     data_root=args.data_root, out=out, jobs=args.jobs,
                                     cache_dir=args.cache_dir)
                print(f"{dataset} {','.join(names)} seeds {chosen[0]}-{chosen[-1]}: "
                      f"trained {len(result.trained)}, kept {len(result.skipped)}",
                      flush=True)
        manifest = write_manifest(out, profile=args.profile, data_root=args.data_root,
                                  repo=REPO)
        print(f"manifest: {len(manifest['records'])} records", flush=True)
    return 0


def run() -> None:
    """Console entry point."""
    run_main(main, PROG)


if __name__ == "__main__":
    run()
    sys.exit(0)
