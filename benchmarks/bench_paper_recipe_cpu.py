"""The ``paper`` CIFAR recipe (airbench94) on the CPU, at a width the CPU can afford.

Usage::

    python benchmarks/bench_paper_recipe_cpu.py --data-root DATA_ROOT --width 32 \\
        --label-smoothing 0 --epochs 10 --cache-dir /tmp/evalcal-cache

Trains one baseline run of the ``paper`` CIFAR-10 profile with the given width, label
smoothing and epochs, in float32 on the host data path with one thread (bf16 is ~13x slower
on a CPU without bf16 units; a full-width run takes ~90 min on 2 cores). Prints the test
accuracy (fraction) after each epoch (the last with the profile's test-time augmentation)
and one JSON line with the result. It says whether the recipe trains and what a change costs
at that width; the full-width accuracy is measured by the GPU batch. Nothing is stored.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from real_runs.config import profile_config  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data-root", required=True)
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--width", type=int, default=32,
                        help="first block's channels (the profile: 64)")
    parser.add_argument("--label-smoothing", type=float, default=0.0)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from real_runs.data import load_for_config
    from real_runs.engine import train_run

    config = dataclasses.replace(
        profile_config("cifar10", "paper"), width=args.width, epochs=args.epochs,
        label_smoothing=args.label_smoothing, precision="fp32", data_path="host", threads=1)
    data = load_for_config(config, args.data_root, cache_dir=args.cache_dir)
    start = time.perf_counter()

    def progress(epoch, epochs, accuracy):
        print(f"epoch {epoch}/{epochs}: accuracy {accuracy:.4f} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)

    result = train_run(config, args.seed, data, progress=progress)
    print(json.dumps({"width": args.width, "label_smoothing": args.label_smoothing,
                      "epochs": args.epochs, "seed": args.seed,
                      "final_accuracy": result.final_accuracy,
                      "epoch_accuracy": [round(a, 4) for a in result.epoch_accuracy],
                      "wall_time_s": round(result.wall_time_s, 1),
                      "train_time_s": round(result.train_time_s, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
