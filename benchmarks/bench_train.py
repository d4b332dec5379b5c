"""Training throughput and wall time per run of a profile on the real datasets.

Usage::

    python benchmarks/bench_train.py --data-root DATA_ROOT --cache-dir /tmp/evalcal-cache

For each dataset it loads the data (timing the one-off JPEG decode when the cache is cold),
then trains seed 0 of the baseline and of each requested scenario's variant and prints
training throughput (images or documents per second, optimisation steps only), wall time
per run (evaluation after every epoch included), CPU time and final test accuracy
(fraction). Nothing is written to a run store.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from real_runs.config import DATASETS, PROFILES, profile_config  # noqa: E402
from real_runs.scenarios import SCENARIOS, variant_config  # noqa: E402


def bench_dataset(dataset: str, profile: str, scenarios: list[str], data_root, cache_dir,
                  seed: int) -> list[dict]:
    """Train the baseline and each scenario's variant once; one result dict per run."""
    from real_runs.data import load_for_config
    from real_runs.engine import train_run

    base = profile_config(dataset, profile)
    t0 = time.perf_counter()
    data = load_for_config(base, data_root, cache_dir=cache_dir)
    load_s = time.perf_counter() - t0
    unit = "images" if data.kind == "image" else "documents"
    rows = []
    for arm in ["baseline", *scenarios]:
        config = base if arm == "baseline" else variant_config(base, arm)
        cpu0 = time.process_time()
        result = train_run(config, seed, data)
        rows.append({
            "dataset": dataset, "profile": profile, "arm": arm, "seed": seed,
            "model": config.model, "n_train": result.train_examples // config.epochs,
            "epochs": config.epochs, "threads": config.threads, "load_s": round(load_s, 2),
            "train_per_s": round(result.train_examples / result.train_time_s, 1),
            "unit": unit, "wall_s": round(result.wall_time_s, 1),
            "cpu_s": round(time.process_time() - cpu0, 1),
            "accuracy": round(result.final_accuracy, 4),
            "epoch_accuracy": [round(a, 4) for a in result.epoch_accuracy],
        })
        print(f"{dataset:9s} {arm:8s} {rows[-1]['train_per_s']:8.1f} {unit}/s  "
              f"wall {rows[-1]['wall_s']:6.1f} s  cpu {rows[-1]['cpu_s']:6.1f} s  "
              f"accuracy {rows[-1]['accuracy']:.4f}  (data load {load_s:.1f} s)", flush=True)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", required=True)
    parser.add_argument("--cache-dir", default=None,
                        help="decoded-image cache (default: none, decode every time)")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--profile", default="cpu", choices=PROFILES)
    parser.add_argument("--scenarios", nargs="*", default=["S2"], choices=SCENARIOS,
                        help="variants to time besides the baseline (default: S2, the "
                             "most expensive)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    try:
        rows = [row for ds in args.datasets for row in bench_dataset(
            ds, args.profile, args.scenarios, args.data_root, args.cache_dir, args.seed)]
    except (ValueError, FileNotFoundError) as exc:
        print(f"bench_train: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
