"""The same tests as ``evaluate`` on a many-arm file, written plainly with pandas, scipy and
statsmodels: the reference ``bench_evaluate_arms.py`` times ``evaluate`` against.

Usage::

    python benchmarks/plain_evaluate_arms.py RESULTS.csv [--alpha 0.05]

``RESULTS.csv`` has columns ``seed,arm,question,score`` (training seeds paired by seed, as
``evaluate`` infers for such a file). For every pair of arms (all pairs, in ``evaluate``'s
order: arms as they first appear, variant after base), it computes what ``evaluate``
prints: the paired t-test on the per-seed means (``scipy.stats.ttest_rel``), Holm's
adjustment over the pairs (``statsmodels.stats.multitest.multipletests``), the
Bonferroni-simultaneous t interval, and d_z with its noncentral-t interval (one
``scipy.optimize.brentq`` per bound, as one would write it). It prints one JSON list, a
dict per comparison, in the units of the file (fractions).
"""

from __future__ import annotations

import argparse
import itertools
import json

import numpy as np
import pandas as pd
from scipy import optimize, stats
from statsmodels.stats.multitest import multipletests


def dz_interval(t: float, df: int, alpha: float) -> tuple[float, float]:
    """The noncentralities whose law puts ``t`` at its ``1 - alpha/2`` and ``alpha/2``
    quantiles, divided by ``sqrt(df + 1)`` (Steiger & Fouladi 1997)."""
    k = df + 1

    def f(nc, target):
        # nct.cdf is NaN where it underflows far in a tail: 0 there above t, 1 below
        return np.nan_to_num(stats.nct.cdf(t, df, nc), nan=0.0 if nc > t else 1.0) - target

    def solve(target):
        width = 10.0 + abs(t)
        return optimize.brentq(f, t - width, t + width, args=(target,), xtol=1e-12)

    return solve(1 - alpha / 2) / np.sqrt(k), solve(alpha / 2) / np.sqrt(k)


def plain_tests(path, alpha: float = 0.05) -> list[dict]:
    frame = pd.read_csv(path)
    per_seed = frame.groupby(["arm", "seed"], sort=False)["score"].mean().unstack("seed")
    arms = list(pd.unique(frame["arm"]))
    per_seed = per_seed.loc[arms]
    pairs = list(itertools.combinations(arms, 2))
    out, p_raw = [], []
    for base, variant in pairs:
        a, b = per_seed.loc[variant].to_numpy(), per_seed.loc[base].to_numpy()
        test = stats.ttest_rel(a, b)
        ci = test.confidence_interval(1 - alpha / len(pairs))
        d = a - b
        dz = d.mean() / d.std(ddof=1)
        lo, hi = dz_interval(float(test.statistic), d.size - 1, alpha)
        out.append({"base": base, "variant": variant, "estimate": float(d.mean()),
                    "simultaneous_ci": [float(ci.low), float(ci.high)],
                    "p_value": float(test.pvalue), "d_z": float(dz), "d_z_ci": [lo, hi]})
        p_raw.append(test.pvalue)
    holm = multipletests(p_raw, alpha=alpha, method="holm")[1]
    for row, p in zip(out, holm):
        row["p_adjusted"] = float(p)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("results")
    p.add_argument("--alpha", type=float, default=0.05)
    args = p.parse_args(argv)
    print(json.dumps(plain_tests(args.results, args.alpha)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
