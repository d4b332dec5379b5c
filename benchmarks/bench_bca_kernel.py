"""Where the paper's protocol spends its time, per experiment, on one core.

Usage::

    python benchmarks/bench_bca_kernel.py [--sims 2000] [--k 8 10 12] [--repeat 5]

Per k, on ``--sims`` experiments of normal per-seed deltas and B = 10,000 resamples, best of
``--repeat`` (µs per experiment, compiled kernels loaded before timing):

* ``fill, one at a time``: the replicate means formed one experiment at a time
  (``_fill_offsets``, the ideal bootstrap's fill and the random bootstrap's before the
  grouped fill);
* ``fill, four at a time``: the grouped fill the random bootstrap uses (``_fill_group``);
* ``BCa kernel``: ``bca_offsets``, the whole interval, one thread;
* ``sign flip, enumerated``: all 2**k patterns as one matrix product (the plain method);
* ``sign flip, kernel``: ``sign_flip_pvalue``, meeting in the middle.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import best_time
from scipy import special

from protocols import _resample

B = 10_000


def _enumerated_sign_flip(d):
    k = d.shape[1]
    signs = 1.0 - 2.0 * ((np.arange(2**k)[:, None] >> np.arange(k)) & 1)
    threshold = np.abs(d.sum(-1)) - _resample.TIE_RTOL * np.abs(d).sum(-1)
    return (np.abs(d @ signs.T) >= threshold[:, None]).mean(-1)


def bench(k: int, sims: int, repeat: int) -> dict:
    """µs per experiment of each part at ``k`` seeds."""
    kernels = _resample._kernels()
    rng = np.random.default_rng(k)
    d = np.sort(rng.normal(0.0025, 0.005, (sims, k)), axis=-1)
    theta = d.mean(-1)
    counts = _resample._ordered_counts(rng.integers(0, k, size=(B, k)), k)
    buf = np.empty(B)
    group = np.empty((4, B))
    dd = np.empty((4, k))

    def one_at_a_time():
        for i in range(sims):
            kernels._fill_offsets(d[i], counts, theta[i], buf)

    def four_at_a_time():
        for i0 in range(0, sims, 4):
            kernels._fill_group(d, i0, counts, theta, dd, group)

    args = (d, counts, theta, _resample.TIE_RTOL * np.abs(d).max(-1),
            _resample._acceleration(d), _resample._z0_of_twice_share(B),
            float(special.ndtri(0.025)))
    parts = {
        "fill, one at a time": one_at_a_time,
        "fill, four at a time": four_at_a_time,
        "BCa kernel": lambda: kernels.bca_offsets(*args),
        "sign flip, enumerated": lambda: _enumerated_sign_flip(d),
        "sign flip, kernel": lambda: _resample.sign_flip_pvalue(d, None),
    }
    return {name: 1e6 * best_time(fn, repeat, warmup=True)[0] / sims for name, fn in parts.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000)
    parser.add_argument("--k", type=int, nargs="+", default=[8, 10, 12])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    rows = {k: bench(k, args.sims, args.repeat) for k in args.k}
    names = list(next(iter(rows.values())))
    print(f"µs per experiment, {args.sims} experiments, B = {B}, best of {args.repeat}")
    print(f"{'part':<24}" + "".join(f"{'k = ' + str(k):>10}" for k in rows))
    for name in names:
        print(f"{name:<24}" + "".join(f"{rows[k][name]:>10.2f}" for k in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
