"""Tests of protocols.effect_sizes: difference, relative error reduction, d_z with nct CI."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from protocols import effect_sizes as E


def _brentq_dz_ci(d, alpha):
    """Direct scalar inversion of the noncentral t CDF (scipy.optimize.brentq)."""
    k = d.size
    t = np.sqrt(k) * d.mean() / d.std(ddof=1)

    def cdf(nc):
        # nct.cdf is NaN where it underflows in the far tail: 0 above t
        return np.nan_to_num(stats.nct.cdf(t, k - 1, nc), nan=0.0 if nc > t else 1.0)

    lo = optimize.brentq(lambda nc: cdf(nc) - (1 - alpha / 2), t - 40, t + 40, xtol=1e-13)
    hi = optimize.brentq(lambda nc: cdf(nc) - alpha / 2, t - 40, t + 40, xtol=1e-13)
    return lo / np.sqrt(k), hi / np.sqrt(k)


@pytest.mark.parametrize("k", [3, 5, 12, 30])
def test_dz_ci_equals_direct_nct_inversion(k):
    """Reference: scalar brentq inversion of scipy.stats.nct.cdf, to 1e-8."""
    rng = np.random.default_rng(k)
    d = rng.normal(0.4, 1.0, size=(6, k))
    got = E.cohens_dz(d, 0.05)
    for b in range(6):
        lo, hi = _brentq_dz_ci(d[b], 0.05)
        assert abs(got.ci_low[b] - lo) < 1e-8 and abs(got.ci_high[b] - hi) < 1e-8
    np.testing.assert_allclose(got.estimate, d.mean(-1) / d.std(-1, ddof=1), rtol=1e-14)
    assert got.note == (E.NOTE_DZ_SMALL_K if k < 10 else "")


@pytest.mark.parametrize("k, delta", [(5, 0.0), (8, 0.8)])
def test_dz_ci_coverage(k, delta):
    """Reference: nominal 95% coverage (exact for normal deltas); 4,000 simulated
    experiments, tolerance 3 binomial SEs (0.010)."""
    rng = np.random.default_rng(10 + k)
    sims = 4000
    d = rng.normal(delta, 2.0, size=(sims, k))
    r = E.cohens_dz(d)
    truth = delta / 2.0
    cover = ((r.ci_low <= truth) & (truth <= r.ci_high)).mean()
    assert abs(cover - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / sims)


def test_dz_constant_deltas_nan():
    r = E.cohens_dz(np.array([[0.1, 0.1, 0.1], [0.1, 0.2, 0.3]]))
    assert np.isnan(r.estimate[0]) and np.isnan(r.ci_low[0]) and np.isfinite(r.ci_low[1])


def test_mean_difference_equals_ttest_rel_ci():
    """Reference: scipy.stats.ttest_rel(...).confidence_interval()."""
    rng = np.random.default_rng(1)
    v, b = rng.normal(0.71, 0.01, 9), rng.normal(0.70, 0.01, 9)
    r = E.mean_difference(v - b, 0.05)
    ci = stats.ttest_rel(v, b).confidence_interval(0.95)
    np.testing.assert_allclose([r.ci_low, r.ci_high], [ci.low, ci.high], rtol=1e-12)


def test_relative_error_reduction_value_and_delta_method():
    """Reference: the ratio of mean errors by hand; the delta-method SE against the
    statsmodels-free formula for a ratio of paired means (Var(D - R E) / (k Ebar^2))."""
    base = np.array([0.80, 0.82, 0.79, 0.81, 0.80])
    var = np.array([0.85, 0.86, 0.83, 0.85, 0.86])
    r = E.relative_error_reduction(base, var)
    eb, ev = (1 - base).mean(), (1 - var).mean()
    assert r.estimate == pytest.approx((eb - ev) / eb, rel=1e-12)
    d, e = var - base, 1 - base
    se = np.sqrt(np.var(d - r.estimate * e, ddof=1) / 5) / eb
    half = stats.t.isf(0.025, 4) * se
    assert r.ci_high - r.estimate == pytest.approx(half, rel=1e-12)
    assert r.note == ""


def test_relative_error_reduction_near_zero_note():
    r = E.relative_error_reduction(np.array([0.995, 0.996, 1.0]), np.array([0.997, 1.0, 1.0]))
    assert r.note == E.NOTE_ERROR_NEAR_ZERO
    r = E.relative_error_reduction(np.ones(3), np.ones(3))
    assert np.isnan(r.estimate)


@pytest.mark.slow
def test_relative_error_reduction_coverage():
    """Reference: nominal 95% coverage of the delta-method CI, k = 20 normal seeds, 4,000
    experiments; tolerance 4 binomial SEs (the delta method is approximate)."""
    rng = np.random.default_rng(3)
    sims, k = 4000, 20
    seed = rng.normal(0, 0.01, size=(sims, k))
    base = 0.80 + seed + rng.normal(0, 0.01, size=(sims, k))
    var = 0.84 + seed + rng.normal(0, 0.01, size=(sims, k))
    r = E.relative_error_reduction(base, var)
    truth = 0.04 / 0.20
    cover = ((r.ci_low <= truth) & (truth <= r.ci_high)).mean()
    assert abs(cover - 0.95) <= 4 * np.sqrt(0.95 * 0.05 / sims)


def test_messages():
    with pytest.raises(ValueError, match="The 'deltas' parameter of cohens_dz must be an array "
                                         "with at least 2 seeds"):
        E.cohens_dz(np.ones(1))
    with pytest.raises(ValueError, match="The 'alpha' parameter must be a number in"):
        E.cohens_dz(np.ones(3), alpha=1.5)
    with pytest.raises(ValueError, match="The 'variant' parameter of relative_error_reduction"):
        E.relative_error_reduction(np.ones(3), np.ones(4))
