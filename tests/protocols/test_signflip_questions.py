"""``signflip_questions`` against outside references.

Exact p-values against ``scipy.stats.permutation_test`` (exhaustive, a t statistic); Monte
Carlo p-values against the exact binomial law of a sum of random signs and against scipy's
own Monte Carlo permutation test, within ``Z_MC`` (5) standard errors of B draws; the
level on fixed-model null data within 3 binomial SEs of alpha.
"""

from __future__ import annotations

import numpy as np
import pytest
from _protocol_checks import Z_MC
from scipy import stats

import protocols
from evalcal_core.designs import METHODS_INDEPENDENT, METHODS_PAIRED, MODELS, MODELS_CLUSTERED
from protocols.methods.signflip_questions import (
    MAX_EXACT_NONZERO,
    MAX_SAMPLED_NONZERO,
    signflip_t_pvalue,
)

NAME = "signflip_questions"


def _t_statistic(x, y, axis):
    d = x - y
    n = d.shape[axis]
    return d.mean(axis=axis) / (d.std(axis=axis, ddof=1) / np.sqrt(n))


def _scipy_p(base_q, variant_q, n_resamples, rng=None):
    """scipy's two-sided paired permutation test of the t of ``variant_q - base_q``."""
    return stats.permutation_test((variant_q, base_q), _t_statistic, vectorized=True,
                                  permutation_type="samples", n_resamples=n_resamples,
                                  axis=-1, rng=rng).pvalue


def _binary_pair(seed, m, k, n, p_base=0.5, p_variant=0.5):
    rng = np.random.default_rng(seed)
    return rng.random((m, k, n)) < p_base, rng.random((m, k, n)) < p_variant


@pytest.mark.parametrize("n", [5, 9, 14])
def test_exact_p_equals_scipy_exhaustive_permutation_test_on_continuous_scores(n):
    """n <= 16 distinct non-zero deltas: p == ``scipy.stats.permutation_test`` with a t
    statistic, ``permutation_type='samples'``, ``n_resamples=np.inf`` (all 2**n patterns)."""
    rng = np.random.default_rng(n)
    base = rng.random((6, 3, n))
    variant = base + 0.1 * rng.standard_normal((6, 3, n)) + 0.05 * rng.standard_normal((6, 1, 1))
    res = protocols.get(NAME).evaluate(base, variant, rng=0)
    ref = _scipy_p(base.mean(-2), variant.mean(-2), np.inf)
    np.testing.assert_allclose(res.p_value, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.estimate, (variant - base).mean(axis=(-2, -1)), atol=1e-15)
    assert np.all(np.isnan(res.ci_low)) and np.all(np.isnan(res.ci_high))
    np.testing.assert_array_equal(res.significant, res.p_value < 0.05)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_exact_p_with_ties_and_zero_deltas_equals_scipy(k):
    """Binary items with k repeats (deltas on a lattice of 1/k, many exactly 0, many tied):
    p == scipy's exhaustive t permutation test on the same 13 questions. scipy is given the
    correct-run counts (exact integers), as its tie tolerance is relative to t."""
    base, variant = _binary_pair(10 + k, 40, k, 13, 0.6, 0.7)
    res = protocols.get(NAME).evaluate(base, variant, rng=0)
    cb, cv = base.sum(-2).astype(float), variant.sum(-2).astype(float)
    d = np.abs(cv - cb)
    zero = (d == 0).all(-1)   # scipy's t is 0/0 on an all-zero row
    # scipy's t is inf under some flip where all |d| are equal and none is 0: left out
    keep = ~zero & ~((d == d[:, :1]).all(-1) & (d > 0).all(-1))
    assert keep.sum() >= 30
    ref = _scipy_p(cb[keep], cv[keep], np.inf)
    np.testing.assert_allclose(res.p_value[keep], ref, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(res.p_value[zero], 1.0)


def test_zero_deltas_do_not_change_the_exact_law():
    """The enumeration over the non-zero deltas only is the full enumeration: on 14
    questions with 4 zero deltas scipy's exhaustive test gives the same p with and without
    the zeros, and the protocol gives it on 48 questions of which 10 differ (2**48 patterns
    could not be enumerated)."""
    rng = np.random.default_rng(3)
    d = rng.integers(-2, 3, size=(30, 10)).astype(float)
    d[np.abs(d).sum(-1) == 0, 0] = 1.0
    zeros = np.zeros((30, 4))
    with_zeros = _scipy_p(np.zeros((30, 14)), np.concatenate([d, zeros], axis=-1), np.inf)
    without = _scipy_p(np.zeros((30, 10)), d, np.inf)
    ok = np.isfinite(without)
    np.testing.assert_allclose(with_zeros[ok], without[ok], rtol=0, atol=1e-12)
    # the 10 non-zero deltas scattered among 38 zeros, one run per arm
    wide = np.zeros((30, 48))
    cols = np.argsort(rng.random((30, 48)), axis=-1)[:, :10]
    np.put_along_axis(wide, cols, d, axis=-1)
    res = protocols.get(NAME).evaluate(np.zeros((30, 1, 48)), wide[:, None, :] / 4.0, rng=0)
    np.testing.assert_allclose(res.p_value[ok], without[ok], rtol=0, atol=1e-12)


def test_all_zero_deltas_give_p_one():
    """Identical arms: every flip reaches the observed 0, p = 1, not significant."""
    base, _ = _binary_pair(4, 3, 2, 25)
    res = protocols.get(NAME).evaluate(base, base.copy(), rng=0)
    np.testing.assert_array_equal(res.p_value, 1.0)
    assert not res.significant.any() and not res.degenerate.any()


def _rademacher_sum_p(m, s):
    """Exact two-sided p of an observed |sum| = s of m random signs: P(|2X - m| >= s),
    X ~ Binomial(m, 1/2)."""
    x = np.arange(m + 1)
    pmf = stats.binom.pmf(x, m, 0.5)
    return min(1.0, float(pmf[np.abs(2 * x - m) >= s - 1e-9].sum()))


@pytest.mark.parametrize("n_permutations", [999, 9999])
def test_monte_carlo_p_within_mc_error_of_the_binomial_law(n_permutations):
    """Beyond 16 non-zero deltas the p is (1 + count) / (1 + B): with one run per arm the
    deltas are +-1 or 0, so the flipped sum is a sum of m random signs whose exact law is
    binomial. Each p lies within Z_MC * sqrt(p (1 - p) / B) + 1 / (B + 1) of it."""
    base, variant = _binary_pair(5, 40, 1, 60, 0.5, 0.6)
    res = protocols.get(NAME, B=n_permutations).evaluate(base, variant, rng=1)
    d = variant[:, 0].astype(int) - base[:, 0].astype(int)
    m = np.abs(d).sum(-1)
    assert np.all(m > MAX_EXACT_NONZERO)
    exact = np.array([_rademacher_sum_p(mi, abs(si)) for mi, si in zip(m, d.sum(-1))])
    bound = Z_MC * np.sqrt(exact * (1 - exact) / n_permutations) + 1.0 / (n_permutations + 1)
    assert np.all(np.abs(res.p_value - exact) <= bound)
    # p is a (1 + count) / (1 + B) fraction
    np.testing.assert_allclose(np.rint(res.p_value * (n_permutations + 1)),
                               res.p_value * (n_permutations + 1), atol=1e-6)


def test_monte_carlo_p_within_mc_error_of_scipy_permutation_test():
    """Continuous scores on 40 questions: p within Z_MC standard errors of scipy's Monte
    Carlo t permutation test (9,999 resamples each). scipy's two-sided p is twice the
    smaller tail, variance 2 p (1 - p/2) / B; ours p (1 - p) / B."""
    rng = np.random.default_rng(8)
    base = rng.random((12, 2, 40))
    variant = base + 0.2 * rng.standard_normal((12, 2, 40)) + 0.04 * rng.standard_normal(
        (12, 1, 1))
    b = 9999
    res = protocols.get(NAME, n_permutations=b).evaluate(base, variant, rng=2)
    ref = _scipy_p(base.mean(-2), variant.mean(-2), b, rng=np.random.default_rng(3))
    p = np.clip(ref, 1e-4, 1.0)
    se = np.sqrt((p * (1 - p) + 2 * p * (1 - p / 2)) / b)
    assert np.all(np.abs(res.p_value - ref) <= Z_MC * se + 2.0 / (b + 1))


def test_a_batch_gives_each_experiment_what_it_gets_alone():
    """One stream of sign patterns, drawn in fixed blocks, serves the whole batch: mixing
    exact (<= 16 non-zero deltas) and sampled experiments in one call equals evaluating
    each alone with the same rng, bit for bit (consistency check)."""
    few, _ = _binary_pair(6, 3, 1, 60, 0.02, 0.02)
    many_b, many_v = _binary_pair(7, 3, 1, 60)
    base = np.concatenate([few, many_b])
    variant = np.concatenate([few.copy(), many_v])
    variant[:3, 0, :5] = ~variant[:3, 0, :5]
    proto = protocols.get(NAME, B=2500)
    together = proto.evaluate(base, variant, rng=11).p_value
    alone = [proto.evaluate(base[i], variant[i], rng=11).p_value for i in range(6)]
    np.testing.assert_array_equal(together, np.array(alone))


def _aa_split(rng, sims, n, k):
    """A/A pairs as in the real MathArena pool: each question's solve rate is mostly 0 or
    1 (Beta(0.2, 0.2)), one model's 2k attempts split at random into two arms of k."""
    p = rng.beta(0.2, 0.2, (sims, 1, n))
    attempts = rng.random((sims, 2 * k, n)) < p
    return attempts[:, :k], attempts[:, k:]


@pytest.mark.parametrize(("n", "k"), [(15, 2), (30, 1), (60, 4)])
def test_level_on_aa_splits_at_small_n(n, k):
    """4,000 A/A experiments (symmetric deltas: the test is exact): the rejection rate is at
    most alpha + 3 binomial SEs, sqrt(0.05 * 0.95 / 4000) = 0.0034 (bound 0.0603)."""
    base, variant = _aa_split(np.random.default_rng([n, k]), 4000, n, k)
    rate = protocols.get(NAME).evaluate(base, variant, 0.05, rng=0).significant.mean()
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 4000)


def test_power_matches_the_t_test_on_continuous_scores():
    """At a real effect on continuous scores (mean delta 0.25 sd, 100 questions, 2 runs) the
    randomization test and the t agree in power within 3 SEs of the paired difference of
    two rates, sqrt(discordant / 2000): the two are asymptotically equivalent (Hoeffding
    1952, Ann. Math. Stat. 23:169). On binary items they are not at finite n: the flipped
    sums sit on a lattice and the atom at the observed sum counts in full, which makes the
    randomization test the more conservative (docs/protocols.md gives the measured gap)."""
    rng = np.random.default_rng(9)
    base = 0.6 + 0.1 * rng.standard_normal((2000, 1, 100)) + 0.05 * rng.standard_normal(
        (2000, 2, 100))
    variant = base + 0.1 * (0.25 + rng.standard_normal((2000, 1, 100)))
    flip = protocols.get(NAME).evaluate(base, variant, rng=0).significant
    t = protocols.get("paired_t_questions").evaluate(base, variant).significant
    assert 0.5 < t.mean() < 0.9
    discordant = (flip != t).mean()
    assert abs(flip.mean() - t.mean()) <= 3 * np.sqrt(discordant / 2000) + 1e-12


def test_labels_per_design():
    """Reportable for fixed models on independent questions; a pitfall with clusters and
    across training seeds (consistency check of the declared labels)."""
    cls = protocols.protocol_class(NAME)
    assert cls.label(MODELS) == ""
    for kind in (MODELS_CLUSTERED, METHODS_PAIRED, METHODS_INDEPENDENT):
        assert cls.label(kind)
    assert "cluster" in cls.label(MODELS_CLUSTERED)


@pytest.mark.parametrize(("params", "match"), [
    ({"B": 0}, r"'n_permutations' parameter of signflip_questions must be an integer >= 1\. "
               r"Got 0 instead"),
    ({"n_permutations": 10**8}, r"'n_permutations' parameter of signflip_questions must be "
                                r"an integer <= 10,000,000"),
    ({"B": 9.5}, r"'n_permutations' parameter of signflip_questions must be an integer"),
])
def test_invalid_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        protocols.get(NAME, **params)


def test_needs_per_question_scores():
    with pytest.raises(ValueError, match="per-question scores"):
        protocols.get(NAME).evaluate(np.array([0.8, 0.81]), np.array([0.82, 0.8]))


@pytest.mark.parametrize("m", [MAX_SAMPLED_NONZERO + 1, 3 * MAX_SAMPLED_NONZERO])
def test_normal_limit_within_one_over_m_of_the_binomial_law(m):
    """Beyond 1,000 non-zero deltas the p is the flips' normal limit with a continuity
    correction. For m deltas of +-1 the flipped sum is a sum of m random signs, whose exact
    two-sided tail is binomial: the p lies within 1 / m of it at every attainable sum with
    a tail between 0.1% and 50% (the law is symmetric: no skewness term in the error)."""
    x = np.arange(m + 1)
    pmf = stats.binom.pmf(x, m, 0.5)
    sums = np.arange(m % 2, 8 * int(np.sqrt(m)), 2)
    exact = np.array([pmf[np.abs(2 * x - m) >= s - 1e-9].sum() for s in sums])
    deltas = np.where(np.arange(m)[None, :] < ((m + sums) // 2)[:, None], 1.0, -1.0)
    got = signflip_t_pvalue(deltas, 999, np.random.default_rng(0))
    keep = (exact > 1e-3) & (exact < 0.5)
    assert keep.sum() > 10
    assert np.max(np.abs(got[keep] - exact[keep])) <= 1.0 / m
