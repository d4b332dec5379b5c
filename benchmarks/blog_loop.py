"""The blog's calibration written as a plain per-simulation numpy loop (the baseline).

Usage::

    python benchmarks/blog_loop.py [--sims 2000] [--effects 1 0] [--k 8] [--B 30]

Per simulation: draw one question_mixture benchmark (n = 4,000 questions: 42% easy, 28%
hard, the rest Uniform(0.2, 0.8); the variant promotes ``effect * n`` hard questions), k
runs per arm, then the five estimates and SEs (mcnemar on seed 0, the z-test on
per-question differences, the unpaired question bootstrap, the run bootstrap and the run
bootstrap with SE / sqrt(B), each bootstrap with B replicates), then the next simulation.
Prints the rejection count per method and the wall time. Nothing is vectorized over
simulations: this is the script a careful user writes without the workbench.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import special, stats

N_QUESTIONS, P_EASY, P_HARD, LOW, HIGH = 4000, 0.42, 0.28, 0.2, 0.8
METHODS = ("mcnemar", "paired_t_questions", "question_bootstrap", "run_bootstrap",
           "run_bootstrap_sqrt_b")


def draw(rng, k, delta, n=N_QUESTIONS):
    """One benchmark and k runs per arm, 0/1 scores of shape (k, n)."""
    u = rng.random(n)
    hard = u < P_HARD
    easy = (u >= P_HARD) & (u < P_HARD + P_EASY)
    p_base = np.where(easy, 1.0, LOW + (HIGH - LOW) * rng.random(n))
    p_base[hard] = 0.0
    p_variant = p_base.copy()
    m = int(round(delta * n))
    if m > 0:
        promote = rng.choice(np.flatnonzero(hard), size=m, replace=False)
        p_variant[promote] = 1.0
    base = (rng.random((k, n)) < p_base).astype(float)
    variant = (rng.random((k, n)) < p_variant).astype(float)
    return base, variant


def estimates(base, variant, rng, n_resamples):
    """(estimate, SE or p-value, significant) of each of the five methods."""
    k, n = base.shape
    z = special.ndtri(0.975)
    out = {}
    b = int(np.sum((base[0] == 1) & (variant[0] == 0)))
    c = int(np.sum((base[0] == 0) & (variant[0] == 1)))
    p = stats.chi2.sf((b - c) ** 2 / (b + c), 1) if b + c else 1.0
    out["mcnemar"] = ((c - b) / n, p, p < 0.05)
    dq = variant.mean(axis=0) - base.mean(axis=0)
    se = dq.std(ddof=1) / np.sqrt(n)
    out["paired_t_questions"] = (dq.mean(), se, abs(dq.mean()) > z * se)
    qb, qv = base.mean(axis=0), variant.mean(axis=0)
    reps = np.empty(n_resamples)
    for r in range(n_resamples):
        reps[r] = qv[rng.integers(0, n, n)].mean() - qb[rng.integers(0, n, n)].mean()
    est, se = qv.mean() - qb.mean(), reps.std(ddof=1)
    out["question_bootstrap"] = (est, se, abs(est) > z * se)
    cols = np.arange(n)
    for name, shrink in (("run_bootstrap", 1.0), ("run_bootstrap_sqrt_b", np.sqrt(n_resamples))):
        for r in range(n_resamples):
            reps[r] = (variant[rng.integers(0, k, n), cols].mean()
                       - base[rng.integers(0, k, n), cols].mean())
        est, se = reps.mean(), reps.std(ddof=1) / shrink
        out[name] = (est, se, abs(est) > z * se)
    return out


def run(sims, effects_pp, k, n_resamples, seed=0):
    """Rejections per (effect, method) after ``sims`` simulations per effect."""
    rng = np.random.default_rng(seed)
    counts = {}
    for effect in effects_pp:
        for _ in range(sims):
            base, variant = draw(rng, k, effect / 100.0)
            for name, (est, _, sig) in estimates(base, variant, rng, n_resamples).items():
                hit = sig and (effect == 0 or est > 0)
                counts[effect, name] = counts.get((effect, name), 0) + int(hit)
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000, help="simulations per effect")
    parser.add_argument("--effects", type=float, nargs="+", default=[1.0, 0.0])
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--B", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    counts = run(args.sims, args.effects, args.k, args.B, args.seed)
    wall = time.perf_counter() - t0
    for (effect, name), c in sorted(counts.items()):
        print(f"effect {effect:+.1f} pp  {name:<22} {c / args.sims:.3f}")
    print(f"plain loop: {args.sims} sims x {len(args.effects)} effects in {wall:.2f} s "
          f"({wall / (args.sims * len(args.effects)) * 1e3:.2f} ms per simulation)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
