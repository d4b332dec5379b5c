"""Each protocol's numbers against an outside reference: scipy, statsmodels or an analytic
formula (named in every docstring).

Deterministic references are matched to rounding. Monte Carlo (MC) comparisons use bounds
derived from the MC error: ``Z_MC`` (5) standard errors, with the standard error either
analytic (SD of a mean of B draws; SD of a sample SD) or measured over independent copies.
"""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from _protocol_checks import R_COPIES, Z_MC, assert_mc_equivalent, copies, make_scores
from scipy import special, stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.weightstats import DescrStatsW
from welch_reference import welch_reference

import protocols
from protocols import _resample

Z975 = special.ndtri(0.975)


def _mean_statistic(x, axis):
    return np.mean(x, axis=axis)


def _se_from_ci(res, alpha=0.05):
    """The SE behind a Wald interval ``estimate +- z * SE``."""
    return (res.ci_high - res.ci_low) / (2.0 * special.ndtri(1.0 - alpha / 2.0))


def _sd_estimate_moments(n_replicates, excess_kurtosis):
    """Expected ratio and relative SD of a sample SD (ddof=1) of ``B`` replicates to the true SD.

    Delta method on the sample variance: Var(s**2) / sigma**4 = 2/(B-1) + excess/B, so
    SD(s)/sigma = sqrt(that / 4) and E[s]/sigma = 1 - that / 8.
    """
    rel_var = 2.0 / (n_replicates - 1) + excess_kurtosis / n_replicates
    return 1.0 - rel_var / 8.0, np.sqrt(rel_var / 4.0)


def _cumulants_of_mean(values, axis=-1):
    """Variance and 4th cumulant of the mean of ``n`` draws with replacement from ``values``."""
    n = values.shape[axis]
    centred = values - values.mean(axis=axis, keepdims=True)
    mu2 = (centred**2).mean(axis=axis)
    mu4 = (centred**4).mean(axis=axis)
    return mu2 / n, (mu4 - 3.0 * mu2**2) / n**3


def _pick_cumulants(scores):
    """Variance and 4th cumulant of the run-bootstrap mean of one arm, shape (..., k, n).

    Each question contributes one of its k runs uniformly: per-question central moments over
    the runs, summed over questions (independent), scaled by 1/n**2 and 1/n**4.
    """
    n = scores.shape[-1]
    centred = scores - scores.mean(axis=-2, keepdims=True)
    mu2 = (centred**2).mean(axis=-2)
    mu4 = (centred**4).mean(axis=-2)
    return mu2.sum(axis=-1) / n**2, (mu4 - 3.0 * mu2**2).sum(axis=-1) / n**4


# --------------------------------------------------------------------------------------------
# t- and z-tests


@pytest.mark.parametrize("k", [2, 3, 5, 10])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_welch_t_matches_scipy(k, alpha):
    """welch_t == ``scipy.stats.ttest_ind(variant, base, equal_var=False)`` on per-seed metrics
    (row means): p-value and ``confidence_interval(1 - alpha)``; with 2 seeds per arm on
    Hsu's df (``welch_reference``)."""
    rng = np.random.default_rng(k)
    base = rng.normal(0.80, 0.01, size=(200, k, 5))
    variant = rng.normal(0.805, 0.02, size=(200, k, 5))
    res = protocols.get("welch_t").evaluate(base, variant, alpha)
    p, low, high = welch_reference(variant.mean(-1), base.mean(-1), alpha)
    np.testing.assert_allclose(res.p_value, p, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(res.ci_low, low, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(res.ci_high, high, rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(res.significant, p < alpha)


@pytest.mark.parametrize("k", [2, 3, 5, 10])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_paired_t_matches_scipy(k, alpha):
    """paired_t == ``scipy.stats.ttest_rel(variant, base)`` on per-seed metrics: p and CI."""
    rng = np.random.default_rng(100 + k)
    base = rng.normal(0.80, 0.01, size=(200, k, 5))
    variant = base + rng.normal(0.003, 0.01, size=(200, k, 5))
    res = protocols.get("paired_t").evaluate(base, variant, alpha)
    ref = stats.ttest_rel(variant.mean(-1), base.mean(-1), axis=-1)
    ci = ref.confidence_interval(1.0 - alpha)
    np.testing.assert_allclose(res.estimate, (variant.mean(-1) - base.mean(-1)).mean(-1),
                               rtol=1e-12)
    np.testing.assert_allclose(res.p_value, ref.pvalue, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(res.ci_low, ci.low, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(res.ci_high, ci.high, rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(res.significant, ref.pvalue < alpha)


@pytest.mark.parametrize("kind", ["binary", "float"])
def test_paired_t_questions_matches_statsmodels_t_test(kind):
    """paired_t_questions == a t-test on d_q = mean_k variant - mean_k base, computed with
    ``statsmodels.stats.weightstats.DescrStatsW(d_q).ttest_mean()`` / ``tconfint_mean``
    (SD with ddof=1, Student t on n - 1 df)."""
    base, variant = make_scores(3, (30,), 4, 60, kind)
    alpha = 0.1
    res = protocols.get("paired_t_questions").evaluate(base, variant, alpha)
    dq = variant.mean(-2) - base.mean(-2)
    for i in range(dq.shape[0]):
        d = DescrStatsW(dq[i])
        _, p, _ = d.ttest_mean(0.0)
        low, high = d.tconfint_mean(alpha)
        np.testing.assert_allclose(res.p_value[i], p, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose([res.ci_low[i], res.ci_high[i]], [low, high], rtol=1e-10)
        np.testing.assert_allclose(res.estimate[i], dq[i].mean(), rtol=1e-12)


# --------------------------------------------------------------------------------------------
# McNemar


def _tables(base, variant):
    """2x2 tables of seed 0: rows = baseline right/wrong, columns = variant right/wrong."""
    b0, v0 = base[..., 0, :] == 1, variant[..., 0, :] == 1
    return np.stack([np.stack([(b0 & v0).sum(-1), (b0 & ~v0).sum(-1)], -1),
                     np.stack([(~b0 & v0).sum(-1), (~b0 & ~v0).sum(-1)], -1)], -2)


@pytest.mark.parametrize(("exact", "correction"), [(False, False), (True, False),
                                                   (False, True)])
def test_mcnemar_matches_statsmodels(exact, correction):
    """mcnemar == ``statsmodels...contingency_tables.mcnemar(table, exact, correction)``.

    Documented differences, excluded here and tested separately: b + c = 0 (statsmodels NaN
    for the chi-square form) and, with ``correction``, b == c (ours floors |b - c| - 1 at 0).
    """
    base, variant = make_scores(11, (300,), 2, 25)
    res = protocols.get("mcnemar", exact=exact, correction=correction).evaluate(base, variant)
    tables = _tables(base, variant)
    b, c = tables[:, 0, 1], tables[:, 1, 0]
    compared = 0
    for i, table in enumerate(tables):
        if (not exact and b[i] + c[i] == 0) or (correction and b[i] == c[i]):
            continue
        ref = sm_mcnemar(table, exact=exact, correction=correction)
        np.testing.assert_allclose(res.p_value[i], ref.pvalue, rtol=1e-10, atol=1e-14)
        compared += 1
    assert compared >= 200
    np.testing.assert_allclose(res.estimate, (c - b) / 25.0, rtol=1e-12)


@pytest.mark.parametrize("params", [{"exact": False}, {"exact": True}, {"correction": True},
                                    {}])
def test_mcnemar_documented_edge_cases(params):
    """b + c = 0 gives p = 1 (statsmodels: NaN); with correction b == c gives p = 1.
    Analytic: no discordant pair is no evidence; the floored statistic is 0, chi2.sf(0) = 1.
    The Wald CI (``ci='wald'``) is the documented ``estimate +- z * sqrt(b + c) / n``
    (consistency check only)."""
    n = 10
    same = np.zeros((1, n))
    same[0, :6] = 1
    params = {**params, "ci": "wald"}
    res = protocols.get("mcnemar", **params).evaluate(same, same)
    assert res.p_value == 1.0 and res.estimate == 0.0
    assert res.ci_low == 0.0 and res.ci_high == 0.0
    base = same.copy()
    variant = same.copy()
    variant[0, 0] = 0.0   # b = 1
    variant[0, 9] = 1.0   # c = 1
    res = protocols.get("mcnemar", **params).evaluate(base, variant)
    if params.get("correction"):
        assert res.p_value == 1.0
    half = Z975 * np.sqrt(2.0) / n
    np.testing.assert_allclose([res.ci_low, res.ci_high], [-half, half], rtol=1e-12)


# --------------------------------------------------------------------------------------------
# Sign flips and Wilcoxon


def _per_seed_deltas(seed, m, k, kind):
    base, variant = make_scores(seed, (m,), k, 10, kind)
    return base, variant, variant.mean(-1) - base.mean(-1)


@pytest.mark.parametrize("name", ["sign_flip", "paired_bca_perm"])
@pytest.mark.parametrize("k", [2, 3, 5, 8, 12])
@pytest.mark.parametrize("kind", ["float", "binary"])
def test_sign_flip_p_matches_scipy_permutation_test(name, k, kind):
    """p == ``scipy.stats.permutation_test((d,), mean, permutation_type='samples',
    n_resamples=np.inf)`` exactly (all 2**k sign patterns).

    Binary question data puts the deltas on a lattice of 1/n (n = 10), so ties with the
    observed statistic are exercised. scipy's tie tolerance is relative to the observed
    statistic and misses ties when it rounds to ~1e-17 instead of 0 (e.g. deltas
    [.1, .1, -.1, -.1, 0]: scipy 0.75, exact 1), so for that data scipy is given the exactly
    representable integers ``n * d``; the sign-flip p-value is invariant to scaling."""
    base, variant, d = _per_seed_deltas(50 + k, 60, k, kind)
    res = protocols.get(name, bootstrap="exact" if k <= 8 else "random",
                        n_resamples=200).evaluate(base, variant, rng=0)
    if kind == "binary":
        d = np.rint(d * base.shape[-1])
    ref = stats.permutation_test((d,), _mean_statistic, permutation_type="samples",
                                 n_resamples=np.inf, vectorized=True, axis=-1)
    np.testing.assert_array_equal(res.p_value, ref.pvalue)


@pytest.mark.parametrize("k", [2, 4, 6, 9, 12])
def test_wilcoxon_matches_scipy_exact(k):
    """wilcoxon == ``scipy.stats.wilcoxon(d, method='exact')`` on tie-free, zero-free
    continuous deltas."""
    base, variant, d = _per_seed_deltas(70 + k, 100, k, "float")
    res = protocols.get("wilcoxon").evaluate(base, variant)
    ref = stats.wilcoxon(d, method="exact", axis=-1)
    np.testing.assert_allclose(res.p_value, ref.pvalue, rtol=1e-12)


@pytest.mark.parametrize("k", [3, 5, 8])
def test_wilcoxon_with_ties_and_zeros_matches_scipy_permutation(k):
    """With ties and zero deltas wilcoxon stays exact: it equals ``scipy.stats.wilcoxon(d,
    method=PermutationMethod(n_resamples=np.inf))`` (zeros dropped, average ranks)."""
    rng = np.random.default_rng(k)
    d = rng.integers(-2, 3, size=(40, k)) / 4.0
    d = d[np.abs(d).sum(-1) > 0]  # scipy cannot rank an all-zero row
    res = protocols.get("wilcoxon").evaluate(np.zeros(d.shape + (1,)), d[..., None])
    for i in range(d.shape[0]):
        ref = stats.wilcoxon(d[i], method=stats.PermutationMethod(n_resamples=np.inf))
        np.testing.assert_allclose(res.p_value[i], ref.pvalue, rtol=1e-12, err_msg=str(d[i]))


# --------------------------------------------------------------------------------------------
# BCa


@pytest.mark.parametrize("k", [6, 10])
def test_bca_random_matches_scipy_bootstrap_within_mc_error(k):
    """bca with ``bootstrap='random'`` vs ``scipy.stats.bootstrap(method='BCa')`` with the same
    B: both are MC estimates of the same interval, so the means of their endpoints over
    R = 200 independent runs agree within 5 two-sample SEs (SDs measured over the runs; this
    is the MC error of the quantile estimates, z0 included)."""
    rng = np.random.default_rng(k)
    d = rng.standard_t(df=4, size=k) * 0.01 + 0.004
    n_resamples, n_runs = 2000, 200
    # Both draw one set of resamples per call for a whole batch: one call per run each.
    proto = protocols.get("bca", bootstrap="random", n_resamples=n_resamples)
    runs = [proto.evaluate(np.zeros(k), d, rng=seed) for seed in range(n_runs)]
    res = SimpleNamespace(ci_low=np.array([float(r.ci_low) for r in runs]),
                          ci_high=np.array([float(r.ci_high) for r in runs]))
    ref = np.array([stats.bootstrap((d,), np.mean, method="BCa", n_resamples=n_resamples,
                                    rng=seed).confidence_interval for seed in range(n_runs)])
    for x, y in zip([res.ci_low, res.ci_high], ref.T, strict=True):
        se = math.sqrt((x.var(ddof=1) + y.var(ddof=1)) / n_runs)
        assert abs(x.mean() - y.mean()) <= Z_MC * se, (x.mean(), y.mean(), se)
        # Same B, so the MC spreads should match too: the log-ratio of two SDs from 200 runs
        # each has SE ~ sqrt(2 / 199) (normal theory).
        assert abs(math.log(x.std() / y.std())) <= Z_MC * math.sqrt(2.0 / (n_runs - 1))


@pytest.mark.parametrize("k", [5, 8])
def test_bca_exact_matches_scipy_bootstrap_with_many_resamples(k):
    """bca with ``bootstrap='exact'`` (the ideal bootstrap) vs ``scipy.stats.bootstrap(BCa)``
    with 20 x 40,000 resamples. Tolerance: 5 SEs of scipy's mean endpoint (measured over the
    20 runs) plus the gap to the neighbouring atom of the ideal bootstrap distribution
    (scipy interpolates between resampled means; the ideal quantile is an atom)."""
    rng = np.random.default_rng(1000 + k)
    d = rng.normal(0.004, 0.01, size=k)
    res = protocols.get("bca", bootstrap="exact").evaluate(np.zeros(k), d)
    n_copies = 20
    # One call per run: scipy draws one set of resample indices for a whole batch.
    ref = np.array([stats.bootstrap((d,), np.mean, method="BCa", n_resamples=40_000,
                                    rng=seed).confidence_interval for seed in range(n_copies)])
    counts, _ = _resample.ideal_bootstrap_multisets(k)
    atoms = np.unique(counts @ d / k)
    for ours, theirs in zip((res.ci_low, res.ci_high), ref.T, strict=True):
        j = int(np.argmin(np.abs(atoms - ours)))
        assert abs(atoms[j] - ours) < 1e-15, "an ideal-bootstrap endpoint is an atom"
        gap = max(atoms[min(j + 1, atoms.size - 1)] - atoms[j], atoms[j] - atoms[max(j - 1, 0)])
        se = theirs.std(ddof=1) / math.sqrt(n_copies)
        assert abs(theirs.mean() - ours) <= Z_MC * se + gap, (ours, theirs.mean(), se, gap)


@pytest.mark.parametrize("k", [2, 3, 4, 6, 8])
def test_ideal_bootstrap_multisets(k):
    """There are C(2k-1, k) multisets (``math.comb``), each a distinct count vector summing to
    k, weighted by the multinomial pmf (``scipy.stats.multinomial``); weights sum to 1."""
    counts, weights = _resample.ideal_bootstrap_multisets(k)
    assert counts.shape == (math.comb(2 * k - 1, k), k)
    assert _resample.n_ideal_multisets(k) == math.comb(2 * k - 1, k)
    np.testing.assert_array_equal(counts.sum(axis=1), k)
    assert np.unique(counts, axis=0).shape[0] == counts.shape[0]
    np.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-12)
    ref = stats.multinomial.pmf(counts, k, np.full(k, 1.0 / k))
    np.testing.assert_allclose(weights, ref, rtol=1e-10)


@pytest.mark.parametrize("k", [2, 3, 5, 7, 9])
def test_ideal_bootstrap_distribution_moments(k):
    """Analytic: the exact bootstrap distribution of the mean has mean = sample mean and
    variance = plug-in variance (ddof=0) / k."""
    d = np.random.default_rng(k).normal(size=k)
    counts, weights = _resample.ideal_bootstrap_multisets(k)
    theta_b = counts @ d / k
    mean = weights @ theta_b
    np.testing.assert_allclose(mean, d.mean(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(weights @ (theta_b - mean) ** 2, d.var() / k, rtol=1e-10)


# --------------------------------------------------------------------------------------------
# Question and run bootstraps: SE against the analytic bootstrap SE


N_EXPERIMENTS = 200
B_SE = 4000


def _assert_se_ratio(se, se_true, excess, n_replicates):
    """Per experiment and on average, se / se_true is within MC error of its expectation.

    Reference: the analytic bootstrap SE; MC moments of a sample SD from ``_sd_estimate_moments``.
    Per experiment the bound is 5.5 SEs (Bonferroni over 200 experiments), on average 5.
    """
    expected, rel_sd = _sd_estimate_moments(n_replicates, excess)
    ratio = se / se_true
    assert np.all(np.abs(ratio - expected) <= 5.5 * rel_sd), np.max(np.abs(ratio - expected))
    bound = Z_MC * np.sqrt(np.mean(rel_sd**2) / ratio.size)
    assert abs(ratio.mean() - expected.mean()) <= bound, (ratio.mean(), bound)


@pytest.mark.parametrize("kind", ["binary", "float"])
def test_question_bootstrap_se_matches_analytic(kind):
    """question_bootstrap SE vs the analytic (ideal) bootstrap SE of a difference of two
    independently resampled means: sqrt(var0(q_b)/n + var0(q_v)/n), var0 = SD**2 with
    ddof=0 of the per-question k-run means; within MC error of an SD from B replicates."""
    base, variant = make_scores(21, (N_EXPERIMENTS,), 3, 40, kind)
    res = protocols.get("question_bootstrap", B=B_SE).evaluate(base, variant, rng=5)
    var_b, k4_b = _cumulants_of_mean(base.mean(-2))
    var_v, k4_v = _cumulants_of_mean(variant.mean(-2))
    se_true = np.sqrt(var_b + var_v)
    _assert_se_ratio(_se_from_ci(res), se_true, (k4_b + k4_v) / (var_b + var_v) ** 2, B_SE)
    np.testing.assert_allclose(res.estimate, variant.mean((-2, -1)) - base.mean((-2, -1)),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kind", ["binary", "float"])
def test_paired_question_bootstrap_se_matches_analytic(kind):
    """paired_question_bootstrap SE vs the analytic bootstrap SE sd0(d_q) / sqrt(n), d_q the
    per-question difference of k-run means; within MC error of an SD from B replicates."""
    base, variant = make_scores(22, (N_EXPERIMENTS,), 3, 40, kind)
    res = protocols.get("paired_question_bootstrap", B=B_SE).evaluate(base, variant, rng=6)
    var, k4 = _cumulants_of_mean(variant.mean(-2) - base.mean(-2))
    _assert_se_ratio(_se_from_ci(res), np.sqrt(var), k4 / var**2, B_SE)


@pytest.mark.parametrize("kind", ["binary", "float"])
def test_run_bootstrap_se_matches_analytic(kind):
    """run_bootstrap SE vs the analytic SE of picking one of k runs per question in each arm:
    sqrt(sum_q var0_q) / n per arm (binary: var0_q = p_q (1 - p_q)), arms added. Its estimate
    (the mean of the B replicates) is within MC error SE / sqrt(B) of the observed difference
    of k-run means."""
    base, variant = make_scores(23, (N_EXPERIMENTS,), 4, 40, kind)
    res = protocols.get("run_bootstrap", B=B_SE).evaluate(base, variant, rng=7)
    var_b, k4_b = _pick_cumulants(base)
    var_v, k4_v = _pick_cumulants(variant)
    se_true = np.sqrt(var_b + var_v)
    if kind == "binary":
        p_b = base.mean(-2)
        np.testing.assert_allclose(var_b, (p_b * (1 - p_b)).sum(-1) / 40**2, rtol=1e-12)
    _assert_se_ratio(_se_from_ci(res), se_true, (k4_b + k4_v) / (var_b + var_v) ** 2, B_SE)
    observed = variant.mean((-2, -1)) - base.mean((-2, -1))
    assert np.all(np.abs(res.estimate - observed) <= 5.5 * se_true / np.sqrt(B_SE))


def test_run_bootstrap_sqrt_b_divides_the_se_by_sqrt_b():
    """run_bootstrap_sqrt_b's SE == run_bootstrap's / sqrt(B) with the same rng (identical
    replicates), same estimate; the definition of the pitfall (analytic)."""
    base, variant = make_scores(24, (50,), 3, 30)
    for b in (10, 1000):
        plain = protocols.get("run_bootstrap", B=b).evaluate(base, variant, rng=8)
        pitfall = protocols.get("run_bootstrap_sqrt_b", B=b).evaluate(base, variant, rng=8)
        np.testing.assert_array_equal(plain.estimate, pitfall.estimate)
        np.testing.assert_allclose(_se_from_ci(pitfall), _se_from_ci(plain) / math.sqrt(b),
                                   rtol=1e-10)


# --------------------------------------------------------------------------------------------
# Binary fast paths vs the generic index-resampling kernels


def _assert_same_distribution(x, y, mean_true, var_true, excess):
    """Replicates ``x`` and ``y`` (..., B) have the analytic mean and SD and agree with each
    other: means within 5 SEs (SD / sqrt(B)), SDs within 5 relative SEs of a sample SD."""
    n_rep = x.shape[-1]
    sd_true = np.sqrt(var_true)
    expected, rel_sd = _sd_estimate_moments(n_rep, excess)
    for reps in (x, y):
        assert np.all(np.abs(reps.mean(-1) - mean_true) <= Z_MC * sd_true / np.sqrt(n_rep))
        assert np.all(np.abs(reps.std(-1, ddof=1) / sd_true - expected) <= Z_MC * rel_sd)
    assert np.all(np.abs(x.mean(-1) - y.mean(-1)) <= Z_MC * sd_true * np.sqrt(2.0 / n_rep))
    assert np.all(np.abs(x.std(-1, ddof=1) - y.std(-1, ddof=1))
                  <= Z_MC * np.sqrt(2.0) * rel_sd * sd_true)


def test_multinomial_fast_path_matches_index_resampling():
    """``resampled_sums_of_integers`` (multinomial over the levels 0..k of per-question correct
    counts) vs ``resampled_means`` (resampling question indices) on the same binary data, for a
    batch of experiments with different accuracies: both match the analytic bootstrap mean
    (the sample mean) and SD (sd0 / sqrt(n)) and each other, within MC error."""
    k, n, n_rep = 5, 30, 20_000
    base, _ = make_scores(31, (6,), k, n)
    counts = base.sum(-2).astype(np.int64)
    rng = np.random.default_rng(9)
    fast = _resample.resampled_sums_of_integers(counts, n_rep, rng) / (k * n)
    generic = _resample.resampled_means(counts / k, n_rep, rng)
    var, k4 = _cumulants_of_mean(counts / k)
    _assert_same_distribution(fast, generic, (counts / k).mean(-1), var, k4 / var**2)


def test_binomial_run_pick_fast_path_matches_index_resampling():
    """``resampled_run_picks`` on binary scores (Binomial per level of correct counts) vs its
    generic path (random run index per question), forced by scaling the scores by 1/2 (the
    binary check fails) and the replicates back by 2. Both match the analytic mean (observed
    accuracy) and SD (sqrt(sum_q p_q (1 - p_q)) / n) and each other within MC error."""
    k, n, n_rep = 4, 30, 20_000
    base, _ = make_scores(32, (6,), k, n)
    rng = np.random.default_rng(10)
    fast = _resample.resampled_run_picks(base, n_rep, rng)
    generic = 2.0 * _resample.resampled_run_picks(0.5 * base, n_rep, rng)
    var, k4 = _pick_cumulants(base)
    _assert_same_distribution(fast, generic, base.mean((-2, -1)), var, k4 / var**2)


@pytest.mark.parametrize("name", ["question_bootstrap", "paired_question_bootstrap",
                                  "run_bootstrap"])
def test_protocol_binary_path_matches_generic_path(name):
    """Protocol level: binary data (fast kernels) vs the same data scaled by 1/2 (generic
    kernels), with p-values compared within MC error over R copies. Scaling both arms by 1/2
    halves estimate and SE and leaves z, hence p and the decision, unchanged (analytic)."""
    base, variant = make_scores(33, (), 3, 40)
    proto = protocols.get(name, B=300)
    fast = proto.evaluate(copies(base), copies(variant), rng=11)
    generic = proto.evaluate(copies(0.5 * base), copies(0.5 * variant), rng=12)
    assert fast.shape == generic.shape == (R_COPIES,)
    assert_mc_equivalent(fast, generic, {"p_value": ("p_value", 1.0),
                                         "significant": ("significant", 1.0)})


# --------------------------------------------------------------------------------------------
# paired_two_level: seeds and questions as random effects


def test_two_level_variance_matches_statsmodels_mixedlm_reml():
    """Reference: statsmodels ``MixedLM`` (REML) with crossed random effects for seeds and
    questions (``vc_formula``, one group) on a balanced 4 x 6 table of deltas whose
    components are all clearly positive. In a balanced design REML's components equal the
    ANOVA method-of-moments ones (none truncated here), so the variance of the fitted
    intercept is ``sigma_a^2 / k + sigma_c^2 / n + sigma_e^2 / (k n)`` = our ``V``; the
    tolerance is REML's optimizer convergence."""
    import pandas as pd
    import statsmodels.formula.api as smf

    from protocols.methods.paired_two_level import two_level_variance

    rng = np.random.default_rng(3)
    k, n = 4, 6
    d = (1.0 * rng.standard_normal((k, 1)) + 0.8 * rng.standard_normal((1, n))
         + 0.5 * rng.standard_normal((k, n)))
    frame = pd.DataFrame({"d": d.ravel(), "seed": np.repeat(np.arange(k), n),
                          "q": np.tile(np.arange(n), k), "g": 1})
    model = smf.mixedlm("d ~ 1", frame, groups="g", re_formula="0",
                        vc_formula={"seed": "0 + C(seed)", "q": "0 + C(q)"})
    with warnings.catch_warnings():
        # MixedLM warns about convergence details of its optimizer on small tables.
        warnings.simplefilter("ignore")
        fit = model.fit(reml=True, method="lbfgs", gtol=1e-12)
    variance, df, seed_variance = two_level_variance(d)
    assert variance == pytest.approx(fit.cov_params().iloc[0, 0], rel=1e-3)
    np.testing.assert_allclose(sorted(fit.vcomp), sorted([
        (n * np.var(d.mean(axis=1), ddof=1) - fit.scale) / n,
        (k * np.var(d.mean(axis=0), ddof=1) - fit.scale) / k]), rtol=1e-3)
    assert seed_variance == pytest.approx(np.var(d.mean(axis=1), ddof=1) / k, rel=1e-12)
    assert 3.0 < df < (k - 1) * (n - 1)


def test_paired_two_level_without_question_effects_is_paired_t():
    """Analytic limit: deltas that vary by seed only (``D[s, q] = a_s``) have MS_question =
    MS_resid = 0, so V = var(d_s) / k on k - 1 df: p and CI equal
    ``scipy.stats.ttest_rel`` on the per-seed metrics."""
    rng = np.random.default_rng(11)
    base = rng.random((50, 5, 7))
    variant = base + rng.normal(0.0, 0.02, size=(50, 5, 1)) + 0.005
    res = protocols.get("paired_two_level").evaluate(base, variant, 0.1)
    ref = stats.ttest_rel(variant.mean(-1), base.mean(-1), axis=-1)
    np.testing.assert_allclose(res.p_value, ref.pvalue, rtol=1e-9)
    ci = ref.confidence_interval(0.9)
    np.testing.assert_allclose(res.ci_low, ci.low, rtol=1e-9)
    np.testing.assert_allclose(res.ci_high, ci.high, rtol=1e-9)


def test_paired_two_level_without_seed_effects_is_a_t_test_on_questions():
    """Analytic limit: deltas that vary by question only (``D[s, q] = c_q``): MS_seed =
    MS_resid = 0 (up to rounding), so V = var(per-question delta) / n on n - 1 df, the
    squared SE of ``scipy.stats.ttest_1samp`` on the per-question deltas. The per-seed
    deltas agree up to rounding, so paired_t has no variance estimate, and neither has the
    protocol, which needs paired_t to reject: degenerate, p NaN, not significant."""
    from protocols.methods.paired_two_level import two_level_variance

    rng = np.random.default_rng(12)
    base = rng.random((40, 3, 9))
    variant = base + rng.normal(0.01, 0.05, size=(40, 1, 9))
    variance, df, _ = two_level_variance(variant - base)
    ref = stats.ttest_1samp(variant.mean(-2) - base.mean(-2), 0.0, axis=-1)
    dq = variant.mean(-2) - base.mean(-2)
    np.testing.assert_allclose(variance, dq.var(-1, ddof=1) / 9, rtol=1e-7)
    np.testing.assert_allclose(df, 8.0, rtol=1e-7)
    assert ref.df[0] == 8
    res = protocols.get("paired_two_level").evaluate(base, variant)
    assert res.degenerate.all() and not res.significant.any()
    assert np.isnan(res.p_value).all() and np.isnan(res.ci_low).all()


def test_paired_two_level_rejects_only_where_paired_t_does_when_questions_add_nothing():
    """Consistency: the decision needs paired_t's, so with no question component in the
    deltas its rejections are a subset of paired_t's (checked on 2,000 experiments)."""
    rng = np.random.default_rng(13)
    base = 0.7 + 0.01 * rng.standard_normal((2000, 3, 8))
    variant = base + 0.01 * (3 * rng.standard_normal((2000, 3, 1))
                             + rng.standard_normal((2000, 3, 8)))
    two = protocols.get("paired_two_level").evaluate(base, variant).significant
    pt = protocols.get("paired_t").evaluate(base, variant).significant
    assert np.all(pt | ~two)


def test_mcnemar_ci_matches_agresti_prime_minister_example():
    """Published value: Agresti, *Categorical Data Analysis* (3rd ed., 2013, Sec. 11.1.1,
    Table 11.1): approval of the Prime Minister in two surveys of the same 1,600 people,
    cells 794 / 150 / 86 / 570. Difference of proportions 0.59 - 0.55 = 0.04, ASE 0.0095,
    95% CI (0.021, 0.059); McNemar z^2 = 64^2 / 236 = 17.36. At three decimals the null SE
    of 679e496 (0.0096) rounds to the same CI, so the unrestricted SE
    sqrt[(b + c) - (c - b)^2 / n] / n = 0.009549 is checked to rounding as well."""
    first = np.r_[np.ones(794), np.ones(150), np.zeros(86), np.zeros(570)]
    second = np.r_[np.ones(794), np.zeros(150), np.ones(86), np.zeros(570)]
    # The book's difference is first minus second: variant = first survey.
    res = protocols.get("mcnemar", ci="wald").evaluate(second[None], first[None])
    assert res.estimate == pytest.approx(0.04)
    assert round(float(res.ci_low), 3) == 0.021 and round(float(res.ci_high), 3) == 0.059
    se = np.sqrt(236 - 64**2 / 1600) / 1600
    assert round(se, 4) == 0.0095
    np.testing.assert_allclose([res.ci_low, res.ci_high], [0.04 - Z975 * se, 0.04 + Z975 * se],
                               rtol=1e-12)
    assert res.p_value == pytest.approx(stats.chi2.sf(64**2 / 236, 1), rel=1e-12)


def test_mcnemar_ci_is_not_the_null_se_away_from_the_null():
    """Analytic: b = 0, c = 10 of n = 20 (variant fixes half the questions, breaks none): the
    estimate 0.5 has variance [(b + c) - (c - b)^2 / n] / n^2 = 5 / 400, SE 0.1118, where
    the null SE sqrt(b + c) / n = 0.158 (679e496) is 41% too wide."""
    base = np.zeros((1, 20))
    variant = np.r_[np.ones(10), np.zeros(10)][None]
    res = protocols.get("mcnemar", ci="wald").evaluate(base, variant)
    assert _se_from_ci(res) == pytest.approx(np.sqrt(5.0) / 20.0, rel=1e-12)
