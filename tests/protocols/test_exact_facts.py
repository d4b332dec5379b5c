"""Facts about the exact sign-flip and BCa protocols that follow from counting (analytic).

With k seeds the sign-flip test has 2**k equally likely patterns, and the observed pattern and
its mirror image always reach the observed |sum|, so p >= 2 / 2**k: at k <= 5 no sign-flip p
reaches 0.05. These facts set the floor of what ``paired_bca_perm`` can detect.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

import protocols
from protocols import _resample

#: protocols built on the per-seed deltas, found by their parameters (sign flips, BCa)
#: the protocols that flip the signs of per-seed deltas (signflip_questions flips questions)
SIGN_FLIP_NAMES = [n for n in protocols.names() if "n_permutations" in protocols.parameters(n)
                   and not protocols.protocol_class(n).needs_questions]
BCA_NAMES = [n for n in protocols.names() if "bootstrap" in protocols.parameters(n)]
#: every protocol that works on per-seed metrics of paired seeds (n = 1 allowed)
PAIRED_PER_SEED = [n for n in protocols.names()
                   if protocols.protocol_class(n).paired
                   and not protocols.protocol_class(n).needs_questions]


def _deltas(k, max_abs=1.0):
    """Hypothesis: finite per-seed deltas (accuracy differences are fractions in [-1, 1])."""
    return hnp.arrays(np.float64, k, elements=st.floats(-max_abs, max_abs, allow_nan=False))


def test_registry_properties_select_the_expected_protocols():
    """The property-based selections above are not empty (consistency check)."""
    assert {"sign_flip", "paired_bca_perm", "wilcoxon"} <= set(SIGN_FLIP_NAMES)
    assert {"bca", "paired_bca_perm"} <= set(BCA_NAMES)
    assert {"paired_t", "sign_flip"} <= set(PAIRED_PER_SEED)


@given(d=_deltas(3))
@settings(max_examples=200)
def test_sign_flip_p_at_k3_is_never_below_a_quarter(d):
    """Analytic: with k = 3 the observed pattern and its mirror are 2 of 8, so p >= 0.25 for
    every input, ties and zeros included."""
    res = protocols.get("sign_flip").evaluate(np.zeros(3), d)
    assert res.p_value >= 0.25
    assert not res.significant


@pytest.mark.parametrize("bootstrap", ["exact", "random"])
@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_paired_bca_perm_is_never_significant_at_k_up_to_5(k, bootstrap):
    """Analytic: min p = 2 / 2**k >= 1/16 > 0.05 for k <= 5, so the protocol (which needs
    p < alpha) cannot declare a win, however large and consistent the effect."""
    rng = np.random.default_rng(k)
    base = rng.normal(0.5, 0.01, size=(500, k, 1))
    effect = rng.choice([-0.3, 0.3], size=(500, 1, 1))
    variant = base + effect + rng.normal(0.0, 0.001, size=(500, k, 1))
    proto = protocols.get("paired_bca_perm", bootstrap=bootstrap, n_resamples=500)
    res = proto.evaluate(base, variant, 0.05, rng=0)
    assert not res.significant.any()
    np.testing.assert_allclose(res.p_value, 2.0 / 2.0**k)
    assert _resample.min_sign_flip_pvalue(k) == 2.0 / 2.0**k
    # The CI alone does exclude 0: it is the permutation p that blocks the decision.
    assert np.all((res.ci_low > 0) | (res.ci_high < 0))


@given(d=_deltas(6))
@settings(max_examples=200)
def test_sign_flip_min_p_at_k6_is_one_32nd(d):
    """Analytic: at k = 6 the smallest attainable p is 2 / 64 = 1/32 (never below)."""
    res = protocols.get("sign_flip").evaluate(np.zeros(6), d)
    assert res.p_value >= 1.0 / 32.0


@given(d=hnp.arrays(np.float64, 6, elements=st.floats(1e-6, 0.5)))
@settings(max_examples=50)
def test_sign_flip_min_p_at_k6_is_attained_by_all_positive_deltas(d):
    """Analytic: all-positive deltas make the identity pattern (and its mirror) the unique
    maximum of |sum|, so p = 1/32 exactly; the same for the combined protocol's p and for
    Wilcoxon (all ranks positive).

    Deltas are >= 1e-6 (one question in a million): differences below the kernels' relative
    tie tolerance (1e-12 of sum |d|, which makes lattice values tie despite rounding) count
    as ties by design, e.g. [0.5, 1e-206, ...] gives p = 1."""
    for name in ("sign_flip", "paired_bca_perm", "wilcoxon"):
        res = protocols.get(name).evaluate(np.zeros(6), d)
        assert res.p_value == 1.0 / 32.0, name


@pytest.mark.parametrize("name", PAIRED_PER_SEED)
@pytest.mark.parametrize("delta", [0.0, 0.25, -0.125])
@pytest.mark.parametrize("k", [2, 3, 6, 10])
def test_constant_deltas_are_degenerate_not_broken(name, delta, k):
    """All deltas equal to d (exactly representable): estimate d, CI [d, d] where there is a
    CI, p = 1 when d = 0; no warning and no NaN where the protocol reports a value.
    Analytic: zero spread is the limit of a vanishing SE; every bootstrap resample and every
    sign pattern of zeros gives the observed statistic."""
    proto = protocols.get(name)
    # Seeds differ, deltas do not; multiples of 1/32 keep every sum and mean exact.
    base = np.tile((8.0 + np.arange(k))[:, None] / 32.0, (1, 4))
    variant = base + delta
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = proto.evaluate(base, variant, rng=0)
    assert res.estimate == delta
    if res.degenerate:
        # No variance estimate for a non-zero delta: no evidence (p, CI NaN).
        assert delta != 0.0
        assert np.isnan(res.p_value) and np.isnan(res.ci_low) and np.isnan(res.ci_high)
        assert not res.significant
        return
    if not np.isnan(res.ci_low):
        assert res.ci_low == delta and res.ci_high == delta
    if not np.isnan(res.p_value) and delta == 0.0:
        assert res.p_value == 1.0
    if delta == 0.0:
        assert not res.significant


@pytest.mark.parametrize("name", ["paired_t", "welch_t"])
@pytest.mark.parametrize("k", [2, 3, 6])
def test_zero_standard_error_with_a_nonzero_estimate_is_no_evidence(name, k):
    """Constant non-zero deltas (paired_t) or two constant arms (welch_t): the t statistic
    is d / 0. p = NaN, not significant, ``degenerate``; a zero estimate keeps p = 1. A
    documented departure from scipy, which returns t = inf and p = 0 (checked here, so a
    change in scipy is noticed). Fails on 679e496, which returned p = 0 (significant)."""
    base = np.zeros(k)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = protocols.get(name).evaluate(base, base + 1.0)
        zero = protocols.get(name).evaluate(base, base)
    assert np.isnan(res.p_value) and not res.significant and res.degenerate
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scipy_p = (stats.ttest_rel(base + 1.0, base) if name == "paired_t"
                   else stats.ttest_ind(base + 1.0, base, equal_var=False)).pvalue
    assert scipy_p == 0.0
    assert zero.p_value == 1.0 and not zero.significant and not zero.degenerate


@pytest.mark.parametrize("bootstrap", ["exact", "random"])
def test_identical_arms_with_varying_seeds(bootstrap):
    """base == variant with per-seed noise: every delta is exactly 0, so the BCa CI is [0, 0]
    and the sign-flip p is 1 (analytic, as above), without warnings."""
    base = np.random.default_rng(0).random((20, 7, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = protocols.get("paired_bca_perm", bootstrap=bootstrap).evaluate(base, base, rng=1)
    np.testing.assert_array_equal(res.ci_low, 0.0)
    np.testing.assert_array_equal(res.ci_high, 0.0)
    np.testing.assert_array_equal(res.p_value, 1.0)


@pytest.mark.parametrize("name", SIGN_FLIP_NAMES)
@pytest.mark.parametrize("k", [17, 20])
def test_sampled_sign_flips_never_give_p_below_one_over_n_plus_1(name, k):
    """Beyond ``max_exact_k`` seeds sign patterns are sampled and p = (1 + count) / (1 + N):
    p >= 1 / (1 + N) always (analytic), attained by all-positive large deltas (the chance
    that one of N = 99 random patterns is all-plus or all-minus is 99 * 2 / 2**k < 2e-3).
    bca reports no p-value (NaN)."""
    n_perm = 99
    rng = np.random.default_rng(k)
    d = np.abs(rng.normal(0.05, 0.01, size=(50, k, 1)))
    d[25:] = rng.normal(0.0, 0.01, size=(25, k, 1))
    res = protocols.get(name, n_permutations=n_perm).evaluate(np.zeros_like(d), d, rng=3)
    if np.all(np.isnan(res.p_value)):
        return
    assert np.all(res.p_value >= 1.0 / (1.0 + n_perm))
    np.testing.assert_array_equal(res.p_value[:25], 1.0 / (1.0 + n_perm))
    scaled = res.p_value * (1 + n_perm)  # multiples of 1 / (1 + N)
    np.testing.assert_allclose(scaled, np.rint(scaled), rtol=0.0, atol=1e-9)


@pytest.mark.parametrize("name", ["sign_flip", "wilcoxon"])
def test_sampled_sign_flip_p_is_within_binomial_error_of_exact(name):
    """At k = 17 the sampled p (N = 2000 patterns) estimates the exact p (all 2**17 patterns,
    ``max_exact_k=17``) within 5 binomial SEs sqrt(p (1 - p) / N) plus the 1 / (1 + N) offset."""
    n_perm = 2000
    rng = np.random.default_rng(17)
    d = rng.normal(0.004, 0.01, size=(40, 17, 1))
    sampled = protocols.get(name, n_permutations=n_perm).evaluate(np.zeros_like(d), d, rng=4)
    exact = protocols.get(name, max_exact_k=17).evaluate(np.zeros_like(d), d)
    se = np.sqrt(exact.p_value * (1.0 - exact.p_value) / n_perm)
    assert np.all(np.abs(sampled.p_value - exact.p_value) <= 5.0 * se + 1.0 / (1 + n_perm))


@pytest.mark.parametrize(("k", "carrying"), [
    (70, slice(0, 8)),      # the first byte of the first 64-bit draw
    (70, slice(56, 64)),    # its last byte
    (70, slice(64, 70)),    # the second draw's bits, in a byte it fills only in part
    (70, slice(0, 70)),     # every seed
    (130, slice(120, 130)),  # a third draw
    (130, slice(0, 130)),    # three draws together (each read from its own word)
    (20, slice(0, 20)),
])
def test_sampled_sign_flip_p_matches_the_binomial_law(k, carrying):
    """Reference: with deltas +-1 on the ``carrying`` seeds and 0 elsewhere, a uniform sign
    pattern gives sum(s * d) = 2 B - m, B ~ Binomial(m, 1/2) over the m carrying seeds, so
    the exact p is P(|2 B - m| >= |sum d|) (scipy.stats.binom). The sampled p (N = 20,000
    patterns) is within 5 binomial SEs plus the 1 / (1 + N) offset. Any seed whose sign
    the draw does not set (a byte or a 64-bit word left unread) moves p out of that band:
    with the carrying seeds alone unread the statistic is constant and p = 1."""
    n_perm = 20_000
    rng = np.random.default_rng(k)
    m = carrying.stop - carrying.start
    d = np.zeros((6, k, 1))
    d[:, carrying, 0] = rng.choice([-1.0, 1.0], size=(6, m), p=[0.3, 0.7])
    observed = np.abs(d.sum(axis=(1, 2)))
    b = np.arange(m + 1)
    reach = np.abs(2 * b - m)[None, :] >= observed[:, None] - 1e-9
    exact = (stats.binom.pmf(b, m, 0.5)[None, :] * reach).sum(axis=1)
    got = protocols.get("sign_flip", n_permutations=n_perm).evaluate(np.zeros_like(d), d,
                                                                      rng=5).p_value
    se = np.sqrt(exact * (1.0 - exact) / n_perm)
    assert np.all(np.abs(got - exact) <= 5.0 * se + 1.0 / (1 + n_perm)), (got, exact)
