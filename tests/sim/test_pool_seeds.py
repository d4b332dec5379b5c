"""Pool-sampling variance from the seeds each experiment drew (:mod:`sim.grid.pool_seeds`)."""

import itertools

import numpy as np
import pytest

from sim.grid.pool_seeds import (
    decode_counts,
    encode_counts,
    pool_interval,
    pool_variance,
    seed_tallies,
)


def test_tallies_count_experiments_and_rejections_per_seed():
    rng = np.random.default_rng(0)
    order = np.argsort(rng.random((50, 9)), axis=1)[:, :3]
    sig = rng.random(50) < 0.3
    n, r = seed_tallies(order, sig, 9)
    for j in range(9):
        has = (order == j).any(axis=1)
        assert n[j] == has.sum() and r[j] == (has & sig).sum()
    assert decode_counts(encode_counts(n, r))[1].tolist() == r.tolist()
    assert decode_counts("") is None


def test_jackknife_is_the_exact_u_statistic_jackknife():
    """Reference: the delete-one jackknife of the U-statistic computed by enumerating every
    k-subset of a pool of 9 (an analytic identity: theta_(-j) - theta = k / (N - k)
    (theta - h_1(j)))."""
    rng = np.random.default_rng(1)
    size, k = 9, 3
    x = rng.standard_normal(size)
    subsets = list(itertools.combinations(range(size), k))
    h = np.array([float(abs(x[list(s)].mean()) > 0.5) for s in subsets])
    loo = np.array([h[[j not in s for s in subsets]].mean() for j in range(size)])
    exact = (size - 1) / size * np.sum((loo - loo.mean()) ** 2)
    order = np.array(subsets)
    n, r = seed_tallies(order, h.astype(bool), size)
    got = pool_variance(int(h.sum()), len(h), k, n, r, monte_carlo=False)
    assert got == pytest.approx(max(exact, 0), rel=1e-9)


def test_floor_never_zero():
    """A rate of 0 everywhere still gets the Monte Carlo variance (Agresti-Coull)."""
    n, r = np.full(30, 333), np.zeros(30, int)
    var = pool_variance(0, 2000, 5, n, r)
    assert var == pytest.approx((2 / 2004) * (1 - 2 / 2004) / 2004)
    iv = pool_interval(0.0, 0.0, 0.0019, 0, 2000, 5, n, r)
    assert iv.high > 0.0019 and iv.low == 0.0
    with pytest.raises(ValueError, match="'method' parameter of pool_variance must be one of"):
        pool_variance(0, 10, 2, n, r, method="bootstrap")
