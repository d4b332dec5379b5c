"""The validity rule's operating characteristics (:mod:`sim.validity`), measured.

Usage::

    python benchmarks/bench_validity.py [--grids 200] [--seeds 50] [--sims 2000] [--jobs 2]

Prints three tables:

1. the rule's error rates by exact binomial sums (:func:`sim.validity.error_rates`) at
   alpha = 0.05 for 500, 2,000 and 10,000 first-look simulations;
2. ``--grids`` simulated default grids (7 protocols x k = 3..10; rejection counts drawn as
   Binomial(n, rate) look by look, the rule run as in a calibration): how often four
   protocols exactly at alpha are shown valid at every k, called invalid at some k, or left
   undecided; a protocol at 1.5 alpha and one at 2 alpha beside two pitfalls at 3 alpha;
3. ``--seeds`` real calibrations of paired_t on ``seed_question sd_seed=0.3
   n_questions=500`` at k = 3 (``--k 3 --k-max 3 --effects 0 1``), one per root seed: how
   often it is recommended, undecided, invalid, and the simulations its null cell took.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
import pandas as pd

from sim.calibration import CalibrationConfig, run_calibration
from sim.validity import VALID, ValidityRule, error_rates, simulate_decisions

ALPHA = 0.05


def analytic_table() -> pd.DataFrame:
    rows = []
    for sims in (500, 2000, 10000):
        e = error_rates(ALPHA, sims, cells=56)
        rows.append({"first look": sims, "looks": e["looks"], "cap": e["schedule"][-1],
                     "P(exact-alpha cell invalid), <=": e["false_invalid"],
                     "P(valid | alpha + alpha/5), <=": e["valid_at_limit"],
                     "P(valid | 2 alpha), <=": e["valid_at_2alpha"],
                     "P(undecided | alpha), <=": e["undecided_at_alpha"],
                     "P(valid at first look | alpha)": e["first_look_valid_at_alpha"]})
    return pd.DataFrame(rows)


def simulated_table(grids: int, sims: int) -> pd.DataFrame:
    rule = ValidityRule.make(ALPHA, sims)
    null = pd.DataFrame([(p, k) for p in "ABCDEFG" for k in range(3, 11)],
                        columns=["protocol", "k"])
    truth = {"A": 1.0, "B": 1.0, "C": 1.0, "D": 1.0, "E": 1.5, "F": 2.0, "G": 3.0}
    rates = ALPHA * null.protocol.map(truth).to_numpy()
    counts = {p: {"valid": 0, "invalid": 0, "undecided": 0} for p in truth}
    mean_sims = {p: [] for p in truth}
    for g in range(grids):
        j = simulate_decisions(null, rates, rule, honest=lambda p: p != "G", rng=g)
        for p in truth:
            s = j[j.protocol == p]
            if (s.state == VALID).all():
                counts[p]["valid"] += 1
            elif (s.state == "invalid").any():
                counts[p]["invalid"] += 1
            else:
                counts[p]["undecided"] += 1
            mean_sims[p].append(s.fpr_n.mean())
    rows = []
    for p, times in truth.items():
        c = counts[p]
        rows.append({"protocol": p, "true rate / alpha": times,
                     "recommended (all k valid)": c["valid"] / grids,
                     "invalid": c["invalid"] / grids, "undecided": c["undecided"] / grids,
                     "mean sims per null cell": float(np.mean(mean_sims[p]))})
    return pd.DataFrame(rows)


def seed_question_table(seeds: int, sims: int, jobs: int) -> pd.DataFrame:
    rows = []
    for seed in range(seeds):
        with tempfile.TemporaryDirectory() as out:
            config = CalibrationConfig(
                k=(3,), k_max=3, generator="seed_question",
                params=("sd_seed=0.3", "n_questions=500"), effects=(0.0, 1.0),
                protocols=("paired_t",), sims=sims, seed=seed, jobs=jobs, out=out,
                plot=False, quiet=True)
            result = run_calibration(config)
        b = result.budget.iloc[0]
        null = result.calibration[result.calibration.effect_pp == 0].iloc[0]
        n = null["fpr_sims"] if "fpr_sims" in null and null["fpr_sims"] == null["fpr_sims"] \
            else null["sims"]
        x = null["fpr_rejections"] if n != null["sims"] else null["rejections"]
        rows.append({"seed": seed, "recommended": b.recommended,
                     "state": "recommended" if b.recommended == "yes" else b.why.split(":")[0],
                     "null sims": int(n), "rate": x / n})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--grids", type=int, default=200)
    p.add_argument("--seeds", type=int, default=50)
    p.add_argument("--sims", type=int, default=2000)
    p.add_argument("--jobs", type=int, default=1)
    args = p.parse_args(argv)
    pd.set_option("display.width", 200)
    print("1. error rates by exact binomial sums (alpha = 0.05, tolerance alpha/5, cap 16x, "
          "56 cells in the Holm family)")
    print(analytic_table().to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    t = time.perf_counter()
    print(f"\n2. {args.grids} simulated default grids, {args.sims} simulations first look")
    print(simulated_table(args.grids, args.sims).to_string(index=False,
                                                           float_format=lambda x: f"{x:.4g}"))
    print(f"   ({time.perf_counter() - t:.1f} s)")
    if args.seeds:
        t = time.perf_counter()
        table = seed_question_table(args.seeds, args.sims, args.jobs)
        print(f"\n3. paired_t on seed_question sd_seed=0.3 n_questions=500, k = 3, "
              f"{args.seeds} root seeds, {args.sims} simulations first look")
        summary = table.groupby("state").agg(runs=("seed", "size"),
                                             mean_null_sims=("null sims", "mean"),
                                             mean_rate=("rate", "mean"))
        print(summary.to_string(float_format=lambda x: f"{x:.4g}"))
        print(f"   ({time.perf_counter() - t:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
