"""Sampled sign flips (k > 16 seeds): the compiled kernel on 64-bit draws against the float
signs drawn one at a time that it replaced.

Usage::

    python benchmarks/bench_sign_flip.py [--sims 2000] [--k 17 32 48 64] [--repeat 3]

Per k, ``--sims`` experiments of per-seed deltas ``N(0.002, 0.01)`` (power well inside
(0, 1)); timed, best of ``--repeat``: the protocols ``sign_flip``, ``wilcoxon`` and
``paired_bca_perm`` (10,000 patterns each), and this file's copy of the former sign-flip
p-value. The two p-values use different random patterns, so they are compared as estimates
of the same p: their mean absolute difference is printed beside the binomial SE of one
sampled p (``sqrt(p (1 - p) / N)`` at the median p), and the rejection rates at 5% beside
each other.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from _timing import best_time

import protocols
from protocols._resample import TIE_RTOL

N_PERMUTATIONS = 10_000


def float_sign_pvalue(flat, rng):
    """The sampled sign-flip p-value as computed before the kernel: each sign a float drawn
    with ``rng.choice``, the statistics by ``einsum`` (chunked to bound memory)."""
    m, k = flat.shape
    threshold = np.abs(flat.sum(-1)) - TIE_RTOL * np.abs(flat).sum(-1)
    p = np.empty(m)
    step = max(1, 2**22 // (N_PERMUTATIONS * k))
    for start in range(0, m, step):
        sl = slice(start, min(start + step, m))
        signs = rng.choice(np.array([-1.0, 1.0]), size=(sl.stop - sl.start, N_PERMUTATIONS, k))
        stats_ = np.abs(np.einsum("bpk,bk->bp", signs, flat[sl]))
        p[sl] = (1.0 + (stats_ >= threshold[sl, None]).sum(-1)) / (1.0 + N_PERMUTATIONS)
    return p


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000)
    parser.add_argument("--k", type=int, nargs="+", default=[17, 32, 48, 64])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    names = ("sign_flip", "wilcoxon", "paired_bca_perm")
    print(f"{'k':>3s} {'float signs s':>13s} " + " ".join(f"{n + ' s':>17s}" for n in names)
          + f" {'mean |dp|':>9s} {'SE of p':>8s} {'rej old':>7s} {'rej new':>7s}")
    for k in args.k:
        rng = np.random.default_rng(k)
        d = rng.normal(0.002, 0.01, size=(args.sims, k))
        old_s, old_p = best_time(lambda d=d: float_sign_pvalue(d, np.random.default_rng(1)),
                                 args.repeat)
        times, new_p = [], None
        for name in names:
            proto = protocols.get(name)
            t, result = best_time(
                lambda p=proto, d=d: p.evaluate(np.zeros(d.shape + (1,)), d[..., None], rng=1),
                args.repeat, warmup=True)
            times.append(t)
            if name == "sign_flip":
                new_p = result.p_value
        median = float(np.median(old_p))
        se = np.sqrt(median * (1 - median) / N_PERMUTATIONS)
        print(f"{k:3d} {old_s:13.2f} " + " ".join(f"{t:17.2f}" for t in times)
              + f" {np.mean(np.abs(new_p - old_p)):9.4f} {se:8.4f} "
              f"{np.mean(old_p < 0.05):7.3f} {np.mean(new_p < 0.05):7.3f}")
    print(f"({args.sims} experiments per k, {N_PERMUTATIONS} patterns each; best of "
          f"{args.repeat}; load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
