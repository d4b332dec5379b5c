"""Command line: train paired baseline/variant runs and store their per-example records.

Example::

    python -m real_runs.train --dataset cifar10 --scenario S1 --seeds 0-19 --profile cpu \\
        --data-root DATA_ROOT --out runs/

DATA_ROOT is a folder laid out like ``../shared/data`` beside the checkout (see
:mod:`real_runs.data`).

Runs already in ``--out`` are verified and skipped, so an interrupted sweep resumes by
rerunning the same command and loses at most the runs that were in progress.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

from evalcal_core.cli import ArgumentParser, call_main, prog_name
from evalcal_core.options import (
    add_options,
    check_options,
    config_from_args,
    jobs_option,
    option,
    out_option,
)
from evalcal_core.validate import InvalidParameterError, Optional, Options
from real_runs.config import DATASETS, LABEL_SETS, PROFILES
from real_runs.runtime import CPU_ISAS, DEVICES, pin_cpu_isa
from real_runs.sweep import PairSummary, parse_scenarios, parse_seeds, train_sweep

#: how the command is run
PROG = "python -m real_runs.train"


@dataclass(frozen=True)
class TrainOptions:
    """What ``python -m real_runs.train`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`) whose own rule is checked when built."""

    dataset: str = option("--dataset", choices=DATASETS, constraint=Options(DATASETS),
                          help="dataset to train on")
    scenario: str = option("--scenario",
                           help="S0, S0p, S1 or S2; a comma list such as S0,S1; or 'all'")
    seeds: str = option("--seeds", help="e.g. 0-19 or 0,3,5-7")
    data_root: str = option("--data-root",
                            help="dataset folder, or a parent holding cifar10-jpeg/, cifar10n/, "
                                 "ag_news-mini/")
    out: Path = out_option(dataclasses.MISSING, help="run store root")
    profile: str = option("--profile", "cpu", choices=PROFILES, constraint=Options(PROFILES),
                          help="cpu: small models for a 2-core CPU (default); paper: airbench94 "
                               "(CIFAR) or a 300-d TextCNN (AG News) on the full training "
                               "set, for a GPU; smoke: tiny, for tests")
    jobs: int = jobs_option(1, help="seeds trained in parallel processes (the cpu profile pins "
                                    "one thread per process, so use --jobs 2 on 2 cores)")
    device: str = option("--device", "auto", choices=DEVICES, constraint=Options(DEVICES),
                         help="auto (CUDA when present), cpu or cuda")
    cpu_isa: str = option("--cpu-isa", "native", choices=CPU_ISAS, constraint=Options(CPU_ISAS),
                          help="CPU kernels: native (default, the committed pool's setting) or "
                               "avx2 (records that match across AVX2 and AVX-512 machines)")
    cache_dir: str | None = option("--cache-dir", None, in_argv=False,
                                   help="decoded-image cache (default: <out>/.cache)")
    label_set: str | None = option("--label-set", None, choices=LABEL_SETS,
                                   constraint=Optional(Options(LABEL_SETS)),
                                   help="CIFAR-10N labels to train on (default: aggre)")
    download: bool = option("--download", False, switch=True, in_argv=False,
                            help="download CIFAR-10 with torchvision if missing (needs "
                                 "internet)")
    progress: bool = option("--no-progress", True, switch=True, in_argv=False,
                            help="hide the progress bar")

    def __post_init__(self):
        check_options(self)


def build_parser() -> ArgumentParser:
    """The options of :class:`TrainOptions`, as declared there."""
    return add_options(ArgumentParser(
        prog=PROG,
        description="Train baseline and variant models under paired seeds on real data and "
                    "record which test examples each run got right."), TrainOptions)


def format_summary(pairs: list[PairSummary]) -> str:
    """One line per seed: baseline accuracy, then variant accuracy and delta per scenario."""
    scenarios = list(dict.fromkeys(p.scenario for p in pairs))
    by_seed: dict[int, dict] = {}
    for p in pairs:
        by_seed.setdefault(p.seed, {"baseline": p.baseline})[p.scenario] = p
    header = f"{'seed':>5} {'baseline':>9}" + "".join(
        f" {s + ' var':>9} {s + ' delta':>9}" for s in scenarios)
    lines = [header]
    for seed, row in sorted(by_seed.items()):
        cells = "".join(f" {row[s].variant:9.4f} {row[s].delta:+9.4f}" for s in scenarios)
        lines.append(f"{seed:5d} {row['baseline']:9.4f}{cells}")
    if pairs:
        means = "".join(
            f" {sum(p.variant for p in pairs if p.scenario == s) / len(by_seed):9.4f}"
            f" {sum(p.delta for p in pairs if p.scenario == s) / len(by_seed):+9.4f}"
            for s in scenarios)
        base = sum(row["baseline"] for row in by_seed.values()) / len(by_seed)
        lines.append(f"{'mean':>5} {base:9.4f}{means}")
    return "\n".join(lines)


def require_torch() -> None:
    """``ValueError`` saying how to install torch when it is missing."""
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as exc:
        raise InvalidParameterError(f"training needs torch and torchvision ({exc}); install them "
                                    "with pip install '.[real]'") from None


def main(argv=None) -> int:
    """Run the CLI; returns the exit code (2 for bad input or missing files)."""
    return call_main(_main, PROG, argv)


def _main(argv) -> int:
    # parsed inside call_main: a declared constraint (--jobs 0) is refused from parse_args
    # as an InvalidParameterError, which call_main prints as one line with exit code 2
    args = config_from_args(TrainOptions, build_parser().parse_args(argv))
    seeds = parse_seeds(args.seeds)
    scenarios = parse_scenarios(args.scenario)
    pin_cpu_isa(args.cpu_isa)  # before torch starts: it picks its kernels once
    require_torch()
    try:
        result = train_sweep(
            args.dataset, scenarios, seeds,
            profile=args.profile, data_root=args.data_root, out=args.out, jobs=args.jobs,
            device=args.device, cache_dir=args.cache_dir, label_set=args.label_set,
            download=args.download, progress=args.progress)
    except KeyboardInterrupt:
        print(f"{prog_name(PROG)}: interrupted; finished runs are stored, rerun to resume",
              file=sys.stderr)
        return 130
    print(f"trained {len(result.trained)} run(s), {len(result.skipped)} already stored; "
          "accuracy is a fraction of the test set")
    print(format_summary(list(result.pairs)))
    return 0


def run() -> None:
    """``python -m real_runs.train`` (``evalcal train``)."""
    raise SystemExit(main())


if __name__ == "__main__":
    run()
