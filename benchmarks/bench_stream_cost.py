"""What anytime validity costs: non-inferiority at a 2 pp margin shown by n items when the
true difference is 0, on a confidence sequence checked after every item against one
fixed-n test at n, and the betting sequence's width against the empirical-Bernstein one's.

Binary questions: a pair is discordant with probability ``--discordance`` and then either
model is right with probability 1/2 (true paired difference exactly 0). Vectorised over
the simulated streams (one array of ``(sims, n)`` deltas, in blocks of ``--block``).

``python benchmarks/bench_stream_cost.py`` prints a Markdown table (docs/evaluate.md quotes
it); ``--widths`` adds the final 95% widths of both sequences on a few settings.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocols.streaming import confidence_sequence, decide_claim  # noqa: E402

ALPHA, MARGIN = 0.05, 0.02


def binary_deltas(sims: int, n: int, discordance: float, effect: float, rng) -> np.ndarray:
    """``(sims, n)`` paired deltas in {-1, 0, 1} with mean ``effect`` (fractions)."""
    discordant = rng.random((sims, n)) < discordance
    right = rng.random((sims, n)) < 0.5 + effect / (2.0 * discordance)
    return np.where(discordant, np.where(right, 1.0, -1.0), 0.0)


def shown_rates(sims: int, n: int, discordance: float, rng, block: int) -> dict:
    """Share of streams where non-inferiority at 2 pp is shown by item ``n``: each
    sequence read after every item (``protocols.streaming.decide_claim`` on the 1 - 2
    alpha sequence, as ``evaluate --stream --claim`` decides it) and one fixed-n one-sided
    t test at level alpha on all ``n`` items (lower 1 - 2 alpha bound above -M)."""
    hits = {"betting": 0, "empirical-bernstein": 0, "fixed-n t test": 0}
    for start in range(0, sims, block):
        d = binary_deltas(min(block, sims - start), n, discordance, 0.0, rng)
        for method in ("betting", "empirical-bernstein"):
            cs = confidence_sequence(d, 2 * ALPHA, method)
            verdict = decide_claim(cs, "non-inferiority", MARGIN, locate=False).verdict
            hits[method] += int((verdict == "shown").sum())
        se = d.std(axis=1, ddof=1) / math.sqrt(n)
        low = d.mean(axis=1) - stats.t.ppf(1 - ALPHA, n - 1) * se
        hits["fixed-n t test"] += int((low > -MARGIN).sum())
    return {k: v / sims for k, v in hits.items()}


def widths(rng, sims: int = 200) -> list[tuple]:
    """Median final width (pp) of the 95% betting and empirical-Bernstein sequences on
    binary deltas (discordance, n), exact bounds (``interval_at``)."""
    rows = []
    for disc, n in ((0.2, 100), (0.2, 1000), (1.0, 100), (1.0, 1000), (1.0, 5000)):
        d = binary_deltas(sims, n, disc, 0.0, rng)
        w = {}
        for method in ("betting", "empirical-bernstein"):
            low, high = confidence_sequence(d, ALPHA, method).interval_at(n)
            w[method] = 100 * float(np.median(high - low))
        rows.append((disc, n, w["betting"], w["empirical-bernstein"]))
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--sims", type=int, default=2000)
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--discordance", type=float, default=0.2)
    p.add_argument("--block", type=int, default=250)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--widths", action="store_true")
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rates = shown_rates(args.sims, args.n, args.discordance, rng, args.block)
    print(f"non-inferiority at {100 * MARGIN:g} pp shown by n = {args.n:,}, true difference 0, "
          f"discordance {args.discordance:g}, {args.sims:,} streams, one-sided alpha {ALPHA}:")
    print("| reading | shown | 95% Wilson interval |\n|---|---|---|")
    for name, rate in rates.items():
        z = 1.959964
        k, m = rate * args.sims, args.sims
        centre = (k + z * z / 2) / (m + z * z)
        half = z * math.sqrt(k * (m - k) / m + z * z / 4) / (m + z * z)
        print(f"| {name} | {100 * rate:.1f}% | [{100 * (centre - half):.1f}, "
              f"{100 * (centre + half):.1f}] |")
    if args.widths:
        print("\n| discordance | n | betting width (pp) | empirical-Bernstein width (pp) |")
        print("|---|---|---|---|")
        for disc, n, wb, we in widths(rng):
            print(f"| {disc:g} | {n:,} | {wb:.2f} | {we:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
