"""Parameter recovery of ``SeedQuestion.fit``: bias +- Monte Carlo SE per parameter.

Usage::

    python benchmarks/seed_question_recovery.py [--reps 100] [--configs 5:2000 10:5000 30:10000]

Uses the replicate machinery of ``tests/sim/test_seed_question_fit.py`` (same truth, same
seeds: ``seed = k``), so the table is the one the slow test asserts on.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("theta", "beta", "sd_question", "sd_noise", "sd_seed", "rho", "var_seed", "cov_seed")


def _test_module():
    sys.path.insert(0, str(ROOT))
    path = ROOT / "tests" / "sim" / "test_seed_question_fit.py"
    spec = importlib.util.spec_from_file_location("test_seed_question_fit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/seed_question_recovery.py",
                                description=__doc__.splitlines()[0], allow_abbrev=False)
    p.add_argument("--reps", type=int, default=100, help="replicates per (k, n) (100)")
    p.add_argument("--configs", nargs="+", default=["5:2000", "10:5000", "30:10000"],
                   metavar="K:N", help="seeds and questions per replicate")
    args = p.parse_args(argv)
    tests = _test_module()
    print(f"truth: {tests.TRUE}, delta = {tests.DELTA}; bias +- MC SE (replicate SD / "
          f"sqrt(reps)); z = bias / MC SE")
    for config in args.configs:
        k, n = (int(v) for v in config.split(":"))
        start = time.perf_counter()
        est, truth = tests.recovery(k, n, args.reps, seed=k)
        print(f"\nk = {k}, n = {n}, reps = {args.reps} ({time.perf_counter() - start:.0f} s)")
        for name in NAMES:
            x = est[name]
            mcse = x.std(ddof=1) / np.sqrt(x.size)
            bias = x.mean() - truth[name]
            print(f"  {name:12s} true {truth[name]:8.4f}  bias {bias:+.4f} +- {mcse:.4f}"
                  f"  (z {bias / mcse:+.1f}, replicate sd {x.std(ddof=1):.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
