"""``python -m real_runs.build_pool``: train (or resume) the committed real-run pool.

Trains the ``cpu`` profile on CIFAR-10, CIFAR-10N and AG News: scenarios S0p, S1 and S2 for
every seed, S0 on the first few as a sanity check, baselines shared. Seeds are trained in
blocks across all datasets, so an interrupted build leaves every dataset with a similar
number of finished seeds; ``manifest.json`` is rewritten after every block.
"""

from __future__ import annotations

import sys
from pathlib import Path

from evalcal_core import scenarios
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.validate import InvalidParameterError, check_int
from real_runs.manifest import write_manifest
from real_runs.store import DEFAULT_POOL
from real_runs.sweep import parse_seeds, train_sweep

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
DATASETS = tuple(sorted(scenarios.DATASETS))
#: scenarios trained on every seed, and the sanity check trained on the first few
POOL_SCENARIOS = scenarios.pool_scenarios()
SANITY_SCENARIOS = [n for n, s in scenarios.SCENARIOS.items() if s.identical]


def build_parser() -> ArgumentParser:
    p = ArgumentParser(prog="python -m real_runs.build_pool", description=__doc__)
    p.add_argument("--data-root", default=str(DEFAULT_DATA),
                   help=f"folder with cifar10-jpeg/, cifar10n/, ag_news-mini/ ({DEFAULT_DATA})")
    p.add_argument("--out", default=str(DEFAULT_POOL), help=f"pool folder ({DEFAULT_POOL})")
    p.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    p.add_argument("--seeds", default="0-29", help="seeds of S0p, S1 and S2 (0-29)")
    p.add_argument("--s0-seeds", default="0-2", help="seeds of the S0 sanity check (0-2)")
    p.add_argument("--block", type=int, default=4, help="seeds per block (4)")
    p.add_argument("--profile", default="cpu")
    p.add_argument("--jobs", type=int, default=2, help="parallel training processes (2)")
    p.add_argument("--cache-dir", default=None, help="decoded-image cache (<out>/.cache)")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    check_int(args.block, "--block", low=1, high=10_000)
    check_int(args.jobs, "--jobs", low=1, high=1024)
    seeds = parse_seeds(args.seeds)
    s0_seeds = set(parse_seeds(args.s0_seeds, "--s0-seeds"))
    if not Path(args.data_root).is_dir():
        raise InvalidParameterError(f"--data-root {args.data_root} is not a folder; it must hold "
                                    f"cifar10-jpeg/, cifar10n/ and ag_news-mini/")
    from real_runs.train import require_torch

    require_torch()
    out = Path(args.out)
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
    run_main(main, "python -m real_runs.build_pool")


if __name__ == "__main__":
    run()
    sys.exit(0)
