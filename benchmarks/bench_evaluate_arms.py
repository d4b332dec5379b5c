"""End-to-end time of ``evaluate`` on a many-arm file, beside a plain pandas + scipy +
statsmodels script doing the same tests (``plain_evaluate_arms.py``).

Usage::

    python benchmarks/bench_evaluate_arms.py [--arms 10] [--seeds 10] [--questions 10000]
                                             [--repeat 5] [--seed 0]

Writes one tidy CSV (``seed,arm,question,score``, 0/1 scores: ``--arms`` training methods x
``--seeds`` paired seeds x ``--questions`` questions) to a temporary folder, then runs, as
fresh processes alternating so that both see the same load:

* ``evalcal evaluate CSV --json`` (``python -m evalcal_cli``: all pairs, paired t on the
  per-seed means, Holm, Bonferroni-simultaneous intervals, d_z with its noncentral-t
  interval, relative error reductions, letters);
* ``python benchmarks/plain_evaluate_arms.py CSV`` (the paired t-tests, Holm, the
  simultaneous intervals and d_z's interval in plain pandas, scipy and statsmodels).

Prints the load average, the best and median wall time of each (seconds, start of the
process to its exit: imports, reading, tests, output) and the largest differences between
the two outputs (Holm p relative, d_z interval absolute), which should be ~1e-8 or less.
Target (issue 37): ``evaluate`` <= 1.5 s on an idle 2-core machine at the default size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

HERE = Path(__file__).resolve().parent


def write_results(path, arms: int, seeds: int, questions: int, seed: int) -> None:
    """0/1 scores: shared question difficulty, arm effects of 0.03 logit steps, a seed
    effect per (arm, seed) of sd 0.05 logit (so some pairs are separable, some not)."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 1.0, questions)
    arm_effect = 0.03 * np.arange(arms)
    seed_effect = rng.normal(0.0, 0.05, (arms, seeds))
    logit = 0.5 + arm_effect[:, None, None] + seed_effect[..., None] + difficulty
    score = (rng.random((arms, seeds, questions)) < special.expit(logit)).astype(np.int8)
    a, s, q = np.meshgrid(np.arange(arms), np.arange(seeds), np.arange(questions),
                          indexing="ij")
    names = np.array([f"method_{i}" for i in range(arms)])
    pd.DataFrame({"seed": s.ravel(), "arm": names[a.ravel()], "question": q.ravel(),
                  "score": score.ravel()}).to_csv(path, index=False)


def timed(cmd) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, proc.stdout


def compare_outputs(evaluate_json: str, plain_json: str) -> dict:
    ours = json.loads(evaluate_json)["comparisons"]
    plain = json.loads(plain_json)
    if [(c["base"], c["variant"]) for c in ours] != [(c["base"], c["variant"]) for c in plain]:
        raise SystemExit("the two scripts compared different pairs")
    p_rel = max(abs(a["p_adjusted"] - b["p_adjusted"]) / max(b["p_adjusted"], 1e-300)
                for a, b in zip(ours, plain))
    dz_abs = max(abs(a["d_z_ci"][i] - b["d_z_ci"][i]) for a, b in zip(ours, plain)
                 for i in (0, 1))
    ci_abs = max(abs(a[f"simultaneous_ci_{side}"] - 100.0 * b["simultaneous_ci"][i])
                 for a, b in zip(ours, plain) for i, side in enumerate(("low", "high")))
    return {"holm_p_rel": p_rel, "dz_ci_abs": dz_abs, "simultaneous_ci_abs_pp": ci_abs,
            "pairs": len(ours)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--arms", type=int, default=10)
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--questions", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "results.csv"
        write_results(csv, args.arms, args.seeds, args.questions, args.seed)
        rows = args.arms * args.seeds * args.questions
        print(f"{args.arms} arms x {args.seeds} seeds x {args.questions:,} questions "
              f"({rows:,} rows, {csv.stat().st_size / 2**20:.1f} MiB)")
        commands = {"evaluate": [sys.executable, "-m", "evalcal_cli", "evaluate", str(csv),
                                 "--json"],
                    "plain": [sys.executable, str(HERE / "plain_evaluate_arms.py"), str(csv)]}
        times = {name: [] for name in commands}
        out = {}
        for _ in range(args.repeat):
            for name, cmd in commands.items():
                t, out[name] = timed(cmd)
                times[name].append(t)
        for name, ts in times.items():
            print(f"{name:>8}: best {min(ts):.2f} s, median {statistics.median(ts):.2f} s "
                  f"over {len(ts)} runs")
        ratio = min(times["evaluate"]) / min(times["plain"])
        print(f"evaluate / plain (best): {ratio:.2f}; target: evaluate <= 1.5 s idle")
        print("largest differences:", json.dumps(compare_outputs(out["evaluate"],
                                                                 out["plain"])))
    print(f"load average after {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
