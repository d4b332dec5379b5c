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


def test_dz_deltas_equal_up_to_rounding_have_no_variance_estimate():
    """The audit's case: seeds 0.81/0.83/0.85 against 0.82/0.84/0.86 gave d_z = 1.56e14
    (deltas 0.01 each on paper, sd 6.4e-17 from rounding). Consistency with the rule of
    protocols._decisions: d_z is NaN exactly where paired_t reports no variance estimate
    (its ``degenerate``), with or without the scores' scale; a real spread of 1e-6 on the
    same scale is kept and equals mean / sd by hand."""
    import protocols

    base = np.array([[0.81, 0.83, 0.85], [0.81, 0.83, 0.85]])
    variant = base + np.array([[0.01, 0.01, 0.01], [0.01, 0.011, 0.012]])
    variant[0] = [0.82, 0.84, 0.86]
    deltas = variant - base
    assert np.std(deltas[0], ddof=1) > 0          # not exactly equal: rounding
    ref = protocols.get("paired_t").evaluate(base[..., None], variant[..., None])
    for scale in (None, np.abs(variant).max(-1)):
        r = E.cohens_dz(deltas, scale=scale)
        np.testing.assert_array_equal(np.isnan(r.estimate), ref.degenerate)
        assert np.isnan(r.ci_low[0]) and np.isnan(r.ci_high[0])
        assert E.NOTE_DZ_NO_VARIANCE in r.note
        assert r.estimate[1] == pytest.approx(deltas[1].mean() / deltas[1].std(ddof=1),
                                              rel=1e-12)
    tiny = np.array([0.01, 0.010001, 0.010002])
    r = E.cohens_dz(tiny, scale=0.86)
    assert r.estimate == pytest.approx(tiny.mean() / tiny.std(ddof=1), rel=1e-9)
    assert E.NOTE_DZ_NO_VARIANCE not in r.note


def test_dz_batch_equals_one_call_per_comparison():
    """Consistency: the inversion is vectorized over comparisons (one call for 90 pairs
    equals 90 calls to 1e-10), and each equals the scalar brentq inversion to 1e-6."""
    rng = np.random.default_rng(90)
    d = rng.normal(0.3, 1.0, size=(90, 5))
    got = E.cohens_dz(d)
    for i in range(0, 90, 9):
        one = E.cohens_dz(d[i])
        assert abs(one.ci_low - got.ci_low[i]) < 1e-10
        assert abs(one.ci_high - got.ci_high[i]) < 1e-10
        lo, hi = _brentq_dz_ci(d[i], 0.05)
        assert abs(got.ci_low[i] - lo) < 1e-6 and abs(got.ci_high[i] - hi) < 1e-6


def _clustered_deltas(rng, sims, clusters=8, size=15, effect=0.02):
    """Per-question deltas of ``clusters`` clusters of ``size`` questions: a cluster effect
    (sd 0.1) shared by a cluster's questions plus question noise (sd 0.2)."""
    codes = np.repeat(np.arange(clusters), size)
    shared = 0.1 * rng.standard_normal((sims, clusters))[..., codes]
    return effect + shared + 0.2 * rng.standard_normal((sims, clusters * size)), codes


def test_dz_from_mean_ci_agrees_with_the_cluster_robust_verdict():
    """Consistency with cluster_cr2 on 300 clustered experiments: the interval is
    cluster_cr2's CI over sd(d) (np.std by hand), it excludes 0 exactly where cluster_cr2's
    CI does, and the iid noncentral t interval of cohens_dz (which treats the 120
    questions as independent) disagrees with it in some experiments, as in the audit."""
    import protocols

    rng = np.random.default_rng(4)
    d, codes = _clustered_deltas(rng, 300)
    base = np.zeros_like(d)[:, None, :]
    cr2 = protocols.get("cluster_cr2").evaluate(base, d[:, None, :], 0.05, clusters=codes)
    r = E.cohens_dz_from_mean_ci(d, cr2.ci_low, cr2.ci_high, 0.05)
    sd = d.std(-1, ddof=1)
    np.testing.assert_allclose(r.estimate, d.mean(-1) / sd, rtol=1e-12)
    np.testing.assert_allclose(r.ci_low, cr2.ci_low / sd, rtol=1e-12)
    np.testing.assert_allclose(r.ci_high, cr2.ci_high / sd, rtol=1e-12)
    np.testing.assert_array_equal((r.ci_low > 0) | (r.ci_high < 0),
                                  (cr2.ci_low > 0) | (cr2.ci_high < 0))
    iid = E.cohens_dz(d)
    assert np.any(((iid.ci_low > 0) | (iid.ci_high < 0)) != ((r.ci_low > 0) | (r.ci_high < 0)))
    assert r.note.startswith(E.NOTE_DZ_CLUSTERED)


def test_dz_from_mean_ci_no_variance_or_no_verdict_is_nan():
    """Analytic: deltas equal up to rounding give NaN d_z and interval; a NaN CI (the
    cluster test had no verdict) gives a NaN interval."""
    d = np.array([[0.82 - 0.81, 0.84 - 0.83, 0.86 - 0.85, 0.01], [0.0, 0.1, 0.2, 0.3]])
    r = E.cohens_dz_from_mean_ci(d, np.array([0.0, np.nan]), np.array([0.02, np.nan]))
    assert np.isnan(r.estimate[0]) and np.isnan(r.ci_low[0]) and np.isnan(r.ci_high[0])
    assert np.isfinite(r.estimate[1]) and np.isnan(r.ci_low[1])
    assert E.NOTE_DZ_NO_VARIANCE in r.note


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
    with pytest.raises(ValueError, match=r"The 'mean_ci_low' parameter of "
                       r"cohens_dz_from_mean_ci must be an array of the deltas' batch "
                       r"shape \(2,\)\. Got shape \(3,\) instead"):
        E.cohens_dz_from_mean_ci(np.ones((2, 4)), np.zeros(3), np.ones(2))
    with pytest.raises(ValueError, match="The 'mean_ci_low' parameter of cohens_dz_from_mean_ci "
                                         "must be at most mean_ci_high. Got '0.3 above 0.1'"):
        E.cohens_dz_from_mean_ci(np.arange(4.0), 0.3, 0.1)
    with pytest.raises(ValueError, match="The 'scale' parameter of cohens_dz must be finite"):
        E.cohens_dz(np.arange(4.0), scale=np.inf)


def _nct_cdf_by_quadrature(t, df, nc):
    """Independent reference for huge t: P(T <= t) = E Phi(t W - nc), W = sqrt(V / df),
    V ~ chi-square(df), integrated by scipy.integrate.quad with the step of Phi near
    W = nc / t marked (scipy's nct.cdf returns NaN there); t < 0 through T -> -T."""
    from scipy import integrate

    if t < 0:
        return 1.0 - _nct_cdf_by_quadrature(-t, df, -nc)
    u = nc / t
    scale = stats.chi(df, scale=1 / np.sqrt(df))
    f = lambda w: stats.norm.cdf(t * w - nc) * scale.pdf(w)  # noqa: E731
    lo, hi = scale.ppf(1e-15), scale.ppf(1 - 1e-15)
    inner = [x for x in (u - 50 / t, u, u + 50 / t) if lo < x < hi]
    edges = [lo, *inner, hi]
    return sum(integrate.quad(f, a, b, epsabs=1e-13, limit=200)[0]
               for a, b in zip(edges[:-1], edges[1:])) + scale.sf(hi)


@pytest.mark.parametrize("k", [3, 10, 30])
@pytest.mark.parametrize("dz", [3e4, 1e6, -3e4])
def test_dz_ci_for_huge_effects(k, dz):
    """d_z above ~3e4 used to print a point interval (scipy's nct.cdf is NaN there). The
    interval is nondegenerate, ~ dz * sqrt(chi2 quantiles / (k - 1)) (the sd's own
    uncertainty), and its ends put the noncentral t cdf at 1 - alpha/2 and alpha/2: checked
    against an independent quadrature of the noncentral t law to 1e-8."""
    rng = np.random.default_rng(7)
    d = rng.normal(size=k)
    d = dz + (d - d.mean()) / d.std(ddof=1)  # sd exactly 1, mean dz
    r = E.cohens_dz(d)
    t = np.sqrt(k) * r.estimate
    assert r.ci_high - r.ci_low > 0.1 * abs(r.estimate)
    for bound, target in ((r.ci_low, 0.975), (r.ci_high, 0.025)):
        cdf = _nct_cdf_by_quadrature(t, k - 1, np.sqrt(k) * bound)
        assert abs(cdf - target) < 1e-8, (bound, cdf)


def test_dz_ci_switch_to_the_expansion_is_continuous():
    """Consistency with scipy's nct.cdf where it still works: on either side of the switch
    (t**2 = 1e4 (df + 1)) the bounds put nct.cdf at 0.975 / 0.025 to 1e-7."""
    k = 10
    for t in (0.9 * np.sqrt(1e4 * k), 1.1 * np.sqrt(1e4 * k)):
        d = np.linspace(-1.0, 1.0, k)
        d = t / np.sqrt(k) + d / d.std(ddof=1)
        r = E.cohens_dz(d)
        tt = np.sqrt(k) * r.estimate
        np.testing.assert_allclose(stats.nct.cdf(tt, k - 1, np.sqrt(k) * r.ci_low), 0.975,
                                   atol=1e-7)
        np.testing.assert_allclose(stats.nct.cdf(tt, k - 1, np.sqrt(k) * r.ci_high), 0.025,
                                   atol=1e-7)
