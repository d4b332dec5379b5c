"""The fixed-model claim test (``evaluate --claim`` under ``--design models`` with repeats or
partial credit: :func:`protocols.claims.mean_score_claim`), compiled kernel against the
numpy bisection it replaced.

Usage::

    python benchmarks/bench_models_claim.py [--questions 300] [--batch 200] [--repeat 5]

Timed, best of ``--repeat``: one experiment (what the command computes for a user's file)
and a batch of ``--batch`` experiments (the decision grid's), each at 4 runs per model
(repeats' grid) and on partial credit (every question its own support point). The numpy
version is this file's copy of the statistic before the kernel; the two must agree to 1e-12
relative, or the benchmark stops.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from _timing import best_time

from protocols import claims


def numpy_bounded_score_z(values, weights, est, d0):
    """The statistic as numpy computed it before :mod:`protocols._claim_kernels`."""
    d0 = np.asarray(d0, dtype=float)
    u = values - d0[..., None]
    observed = weights > 0
    low, high = -1.0 / (1.0 - d0), 1.0 / (1.0 + d0)
    for _ in range(claims._TILT_STEPS):
        mid = 0.5 * (low + high)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(observed, weights * u / (1.0 + mid[..., None] * u), 0.0).sum(-1)
        up = g > 0
        low, high = np.where(up, mid, low), np.where(up, high, mid)
    t = 0.5 * (low + high)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(observed, weights / (1.0 + t[..., None] * u), 0.0)
    leftover = np.maximum(1.0 - p.sum(-1), 0.0)
    bound = np.where(t > 0, -1.0, 1.0) - d0
    var0 = (p * u**2).sum(-1) + leftover * bound**2
    num = est - d0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = num / np.sqrt(var0)
    return np.where(num == 0, 0.0, z)


def _data(kind: str, shape, rng):
    if kind == "repeats":
        base = rng.binomial(4, 0.8, shape) / 4
        return base, np.clip(base + rng.binomial(4, 0.1, shape) / 4
                             * rng.choice([-1.0, 1.0], shape), 0.0, 1.0)
    return rng.uniform(0.3, 1.0, shape), rng.uniform(0.3, 1.0, shape)


def _claim(base, variant):
    return claims.mean_score_claim(base, variant, "non_inferiority", 0.02)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    compiled = claims._bounded_score_z
    print(f"{'data':10s} {'experiments':>11s} {'numpy ms':>10s} {'kernel ms':>10s} "
          f"{'speed-up':>8s}")
    for kind in ("repeats", "partial"):
        for rows in (1, args.batch):
            shape = (args.questions,) if rows == 1 else (rows, args.questions)
            base, variant = _data(kind, shape, rng)
            claims._bounded_score_z = numpy_bounded_score_z
            t_numpy, ref = best_time(lambda b=base, v=variant: _claim(b, v), args.repeat)
            claims._bounded_score_z = compiled
            t_kernel, got = best_time(lambda b=base, v=variant: _claim(b, v), args.repeat,
                                            warmup=True)
            for name in ("p_value", "ci_low", "ci_high"):
                a, b = getattr(ref, name), getattr(got, name)
                if not np.allclose(a, b, rtol=1e-12, atol=1e-12):
                    raise SystemExit(f"{kind}, {rows}: {name} differs by "
                                     f"{np.max(np.abs(a - b)):.3g}")
            if not (ref.verdict == got.verdict).all():
                raise SystemExit(f"{kind}, {rows}: verdicts differ")
            print(f"{kind:10s} {rows:11d} {t_numpy * 1e3:10.1f} {t_kernel * 1e3:10.1f} "
                  f"{t_numpy / t_kernel:7.1f}x")
    print(f"({args.questions} questions per experiment; best of {args.repeat}; "
          f"load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
