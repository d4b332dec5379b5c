"""Tests of protocols.multiplicity: adjustments, max-T step-down, joint nulls, simultaneous CIs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from multitest_reference import multipletests
from scipy import stats

from protocols import joint_null as jn
from protocols import multiplicity as M
from protocols._resample import sign_flip_pvalue

ADJUSTING = [m for m in M.METHODS if m != "none"]


def _statsmodels(p, method):
    """statsmodels' adjustment of one family, NaN counted as p = 1 (our documented rule)."""
    q = np.where(np.isnan(p), 1.0, p)
    out = multipletests(q, method=M.STATSMODELS_NAMES[method])[1]
    return np.where(np.isnan(p), np.nan, out)


@pytest.mark.parametrize("method", ADJUSTING)
def test_adjust_equals_statsmodels_batched(method):
    """Reference: statsmodels.stats.multitest.multipletests, row by row (to 1e-12)."""
    rng = np.random.default_rng(1)
    p = rng.uniform(size=(40, 9)) ** 3
    p[:5, :4] = 0.01           # ties
    p[5, :] = 0.2              # all tied
    p[6, 3] = np.nan           # NaN
    p[7, :] = 0.0
    got = M.adjust(p, method)
    ref = np.stack([_statsmodels(row, method) for row in p])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    assert np.isnan(got[6, 3]) and not np.isnan(np.delete(got[6], 3)).any()


@given(st.lists(st.sampled_from([0.0, 0.001, 0.01, 0.02, 0.04, 0.05, 0.3, 1.0]),
                min_size=1, max_size=12),
       st.sampled_from(ADJUSTING))
def test_adjust_ties_property(values, method):
    """Reference: statsmodels.multipletests on lattice p-values with many ties."""
    p = np.array(values)
    np.testing.assert_allclose(M.adjust(p, method), _statsmodels(p, method), atol=1e-12)


def test_adjust_none_and_order():
    """Consistency: none is the identity; bonferroni >= holm >= raw; bh <= holm."""
    p = np.random.default_rng(2).uniform(size=(100, 6)) ** 2
    np.testing.assert_array_equal(M.adjust(p, "none"), p)
    b, h, f = (M.adjust(p, m) for m in ("bonferroni", "holm", "bh"))
    assert np.all(b >= h - 1e-15) and np.all(h >= p - 1e-15) and np.all(f <= h + 1e-15)


@pytest.mark.parametrize("bad, match", [
    ("sidak", "The 'method' parameter of adjust must be one of none, bonferroni"),
])
def test_adjust_method_message(bad, match):
    with pytest.raises(ValueError, match=match):
        M.adjust([0.1, 0.2], bad)


def test_adjust_p_range_message():
    with pytest.raises(ValueError, match=r"The 'p' parameter of adjust must be p-values in "
                                         r"\[0, 1\] \(or NaN\). Got 1.5 instead."):
        M.adjust([0.1, 1.5], "holm")


def _brute_stepdown(obs, null, weights=None):
    """Westfall & Young (1993) algorithm 2.8 written one hypothesis at a time."""
    m = obs.size
    order = np.argsort(-np.abs(obs), kind="stable")
    p = np.empty(m)
    for pos, h in enumerate(order):
        rest = order[pos:]
        maxima = np.abs(null[:, rest]).max(axis=1)
        hit = maxima >= np.abs(obs[h]) * (1 - 1e-12)
        p[pos] = hit @ weights if weights is not None else (1 + hit.sum()) / (1 + len(hit))
    p = np.maximum.accumulate(p)
    out = np.empty(m)
    out[order] = np.minimum(p, 1)
    return out


@pytest.mark.parametrize("exact", [True, False])
def test_stepdown_equals_brute_force(exact):
    """Reference: the step-down algorithm written hypothesis by hypothesis."""
    rng = np.random.default_rng(3)
    d = rng.normal(0.4, 1.0, size=(6, 5, 8 if exact else 20))
    joint = jn.paired_signflip_null(d, 500, rng=rng)
    assert joint.exact is exact
    got = M.maxt_adjust(joint)
    for b in range(d.shape[0]):
        ref = _brute_stepdown(joint.observed[b], joint.null[b], joint.weights)
        np.testing.assert_allclose(got[b], ref, atol=1e-12)


def test_single_comparison_equals_exact_signflip():
    """Reference: protocols._resample.sign_flip_pvalue (exact, |sum d|), since the
    studentized t is monotone in |sum d| for one comparison."""
    rng = np.random.default_rng(4)
    d = np.round(rng.normal(0.3, 1.0, size=(50, 1, 10)), 1)   # lattice values: ties
    joint = jn.paired_signflip_null(d)
    got = M.maxt_adjust(joint)[:, 0]
    np.testing.assert_allclose(got, sign_flip_pvalue(d[:, 0], rng), atol=1e-12)


def test_stepdown_monotone_and_below_singlestep():
    """Consistency: step-down <= single-step, monotone in |t|, >= the raw sign-flip p."""
    rng = np.random.default_rng(5)
    d = rng.normal(0.3, 1.0, size=(30, 6, 9))
    joint = jn.paired_signflip_null(d)
    sd, ss = M.maxt_adjust(joint), M.maxt_adjust(joint, stepdown=False)
    assert np.all(sd <= ss + 1e-12)
    order = np.argsort(-np.abs(joint.observed), axis=-1)
    ranked = np.take_along_axis(sd, order, axis=-1)
    assert np.all(np.diff(ranked, axis=-1) >= -1e-12)
    raw = sign_flip_pvalue(d.reshape(-1, 9), rng).reshape(30, 6)
    assert np.all(sd >= raw - 1e-12)


def test_nan_statistic_never_rejects():
    """Consistency: an all-zero comparison (no variance estimate) gives NaN, others finite."""
    d = np.random.default_rng(6).normal(1.0, 1.0, size=(3, 8))
    d[1] = 0.0
    p = M.maxt_adjust(jn.paired_signflip_null(d))
    assert np.isnan(p[1]) and np.all(np.isfinite(p[[0, 2]]))


def test_batch_equals_one_by_one_and_same_rng():
    """Consistency: a batch gives what its families give alone; same rng, same result."""
    rng_data = np.random.default_rng(7)
    d = rng_data.normal(0.2, 1.0, size=(4, 3, 20))
    full = M.maxt_adjust(jn.paired_signflip_null(d, 300, rng=np.random.default_rng(0)))
    for b in range(4):
        one = M.maxt_adjust(jn.paired_signflip_null(d[b], 300, rng=np.random.default_rng(0)))
        np.testing.assert_allclose(full[b], one, atol=1e-15)


def test_dunnett_agrees_with_singlestep_bootstrap_fast():
    """Reference: scipy.stats.dunnett (multivariate t, pooled variance). The bootstrap of
    centred arms approximates that law with error O(1/k): tolerance 4 binomial SEs of the
    Monte Carlo p plus 0.01 for that approximation at k = 150."""
    rng = np.random.default_rng(8)
    k, n_boot = 150, 10_000
    x = rng.normal(0.0, 1.0, size=(4, k)) + np.array([0.0, 0.1, 0.25, 0.0])[:, None]
    joint = jn.unpaired_bootstrap_null(x, M.many_to_one(4), n_boot, rng=rng, statistic="pooled")
    got = M.maxt_adjust(joint, stepdown=False)
    ref = stats.dunnett(*x[1:], control=x[0], rng=np.random.default_rng(0)).pvalue
    tol = 4 * np.sqrt(ref * (1 - ref) / n_boot) + 0.01
    assert np.all(np.abs(got - ref) <= tol), (got, ref)
    # the observed statistic is Dunnett's t
    np.testing.assert_allclose(
        joint.observed,
        stats.dunnett(*x[1:], control=x[0], rng=np.random.default_rng(0)).statistic,
        rtol=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_dunnett_agrees_with_singlestep_bootstrap(seed):
    """Reference: scipy.stats.dunnett; k = 300 seeds per arm, P = 20,000 replicates:
    tolerance 4 binomial SEs of the Monte Carlo p plus 0.005 for the bootstrap's O(1/k)
    approximation of the multivariate t law (and dunnett's own integration error)."""
    rng = np.random.default_rng(100 + seed)
    k, n_boot = 300, 20_000
    x = rng.normal(0.0, 1.0, size=(5, k)) + np.array([0.0, 0.05, 0.15, 0.2, 0.0])[:, None]
    joint = jn.unpaired_bootstrap_null(x, M.many_to_one(5), n_boot, rng=rng, statistic="pooled")
    got = M.maxt_adjust(joint, stepdown=False)
    ref = stats.dunnett(*x[1:], control=x[0], rng=np.random.default_rng(0)).pvalue
    tol = 4 * np.sqrt(ref * (1 - ref) / n_boot) + 0.005
    assert np.all(np.abs(got - ref) <= tol), (got, ref)


def test_welch_observed_equals_scipy():
    """Reference: scipy.stats.ttest_ind(equal_var=False) for each comparison."""
    rng = np.random.default_rng(9)
    x = rng.normal(size=(3, 12)) * np.array([1.0, 2.0, 0.5])[:, None]
    comps = M.all_pairs(3)
    joint = jn.unpaired_bootstrap_null(x, comps, 50, rng=rng)
    ref = [stats.ttest_ind(x[i], x[j], equal_var=False).statistic for i, j in comps]
    np.testing.assert_allclose(joint.observed, ref, rtol=1e-12)


def test_gaussian_null_marginals_and_observed():
    """Reference: per-question z = mean(d) / (sd(d) / sqrt(n)); each null column is N(0, 1)
    (Kolmogorov-Smirnov at 1e-3 on 20,000 draws)."""
    rng = np.random.default_rng(10)
    x = (rng.uniform(size=(4, 500)) < 0.6).astype(float)
    comps = M.all_pairs(4)
    joint = jn.gaussian_null(x, comps, 20_000, rng=rng)
    d = M.pair_deltas(x, comps)
    z = d.mean(-1) / (d.std(-1, ddof=1) / np.sqrt(500))
    np.testing.assert_allclose(joint.observed, z, rtol=1e-10)
    for c in range(len(comps)):
        assert stats.kstest(joint.null[:, c], "norm").pvalue > 1e-3


def test_simultaneous_ci_maxt_between_single_and_bonferroni():
    """Consistency: t_{1-alpha/2} <= max-T critical, on average below Bonferroni's (the
    permutation law of one family may reach beyond it), and the interval excludes 0 iff
    the single-step p <= alpha."""
    rng = np.random.default_rng(11)
    scores = rng.normal(size=(20, 5, 10)) + rng.normal(size=(20, 1, 10))
    joint = jn.paired_signflip_null(M.pair_deltas(scores, M.many_to_one(5)))
    mt = M.simultaneous_ci(joint, 0.05)
    bf = M.simultaneous_ci(joint, 0.05, method="bonferroni")
    assert np.all(mt.critical >= stats.t.isf(0.025, 9) - 1e-9)
    assert mt.critical.mean() <= bf.critical[..., 0].mean()
    excl = (mt.low > 0) | (mt.high < 0)
    ss = M.maxt_adjust(joint, stepdown=False)
    np.testing.assert_array_equal(excl, ss <= 0.05)


def test_comparison_messages():
    with pytest.raises(ValueError, match="The 'comparisons' parameter must be a non-empty"):
        M.pair_deltas(np.zeros((3, 4)), [(0, 3)])
    with pytest.raises(ValueError, match="The 'n_arms' parameter must be an integer >= 2"):
        M.all_pairs(1)


def test_maxt_shape_messages():
    with pytest.raises(ValueError, match=r"The 'null_t' parameter must be an array of shape "
                                         r"\(\.\.\., P, m\) matching observed_t \(3,\)"):
        M.maxt_stepdown(np.zeros(3), np.zeros((10, 4)))
    with pytest.raises(ValueError, match="The 'weights' parameter must be non-negative "
                                         "probabilities of the 10 resamples"):
        M.maxt_stepdown(np.zeros(3), np.zeros((10, 3)), weights=np.ones(9))


@pytest.mark.slow
@pytest.mark.parametrize("statistic", ["welch", "pooled"])
def test_unpaired_bootstrap_maxt_fwer(statistic):
    """Reference: the FWER target 0.05 under the global null (5 normal arms, k = 10,
    many-to-one, 1,000 experiments x 1,000 replicates): <= alpha + 2 binomial SEs."""
    rng = np.random.default_rng(12)
    x = rng.normal(size=(1000, 5, 10))
    joint = jn.unpaired_bootstrap_null(x, M.many_to_one(5), 1000, rng=rng, statistic=statistic)
    fwer = (M.maxt_adjust(joint) <= 0.05).any(axis=-1).mean()
    assert fwer <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 1000)
