"""Tests of protocols.claims: superiority, non-inferiority, equivalence (TOST) and gates."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.weightstats import ttost_ind, ttost_paired
from welch_reference import welch_reference_df

from protocols import claims as C


def _data(seed, k=12, shift=0.0):
    rng = np.random.default_rng(seed)
    base = rng.normal(0.70, 0.02, size=k)
    variant = base + rng.normal(shift, 0.015, size=k)
    return variant, base


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("margin", [0.005, 0.01, 0.03])
def test_paired_equals_ttost_paired(seed, margin):
    """Reference: statsmodels.stats.weightstats.ttost_paired (TOST p and its lower test's p
    for non-inferiority), to 1e-10."""
    v, b = _data(seed, shift=(seed - 4) * 0.003)
    ref = ttost_paired(v, b, -margin, margin)
    eq = C.paired_claim(v - b, "equivalence", margin)
    ni = C.paired_claim(v - b, "non_inferiority", margin)
    np.testing.assert_allclose(eq.p_value, ref[0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(ni.p_value, ref[1][1], rtol=0, atol=1e-10)


@pytest.mark.parametrize("seed", range(8))
def test_welch_equals_ttost_ind_unequal(seed):
    """Reference: statsmodels ttost_ind(usevar="unequal")'s two one-sided t statistics,
    unequal group sizes, on the df of ``welch_reference_df`` (the bounded Welch df written
    out from its definition; statsmodels' own p uses the plug-in df), to 1e-10."""
    rng = np.random.default_rng(seed)
    v = rng.normal(0.70, 0.01, size=7)
    b = rng.normal(0.70 + (seed - 4) * 0.004, 0.03, size=11)
    ref = ttost_ind(v, b, -0.02, 0.02, usevar="unequal")
    df = welch_reference_df(v, b)
    p_low, p_up = stats.t.sf(ref[1][0], df), stats.t.cdf(ref[2][0], df)
    got = C.welch_claim(v, b, "equivalence", 0.02)
    np.testing.assert_allclose(got.p_value, max(p_low, p_up), rtol=0, atol=1e-10)
    np.testing.assert_allclose(C.welch_claim(v, b, "non_inferiority", 0.02).p_value,
                               p_low, rtol=0, atol=1e-10)


def test_superiority_is_one_sided_t():
    """Reference: scipy.stats.ttest_rel(alternative="greater") p-value."""
    v, b = _data(3, shift=0.01)
    got = C.paired_claim(v - b, "superiority")
    ref = stats.ttest_rel(v, b, alternative="greater").pvalue
    np.testing.assert_allclose(got.p_value, ref, rtol=1e-12)


def test_question_claim_z_and_t():
    """Reference: analytic one-sided z and t p-values on per-question deltas."""
    rng = np.random.default_rng(4)
    d = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.75, 0.15], size=400)
    se = d.std(ddof=1) / 20
    z = C.question_claim(d, "non_inferiority", 0.02)
    t = C.question_claim(d, "non_inferiority", 0.02, reference="t")
    np.testing.assert_allclose(z.p_value, stats.norm.sf((d.mean() + 0.02) / se), rtol=1e-12)
    np.testing.assert_allclose(t.p_value, stats.t.sf((d.mean() + 0.02) / se, 399), rtol=1e-12)


def test_from_estimate_composes_with_se_df():
    """Consistency: claim_from_estimate on paired_t's estimate, SE and df equals
    paired_claim (as a cluster-robust protocol's se and df would compose)."""
    v, b = _data(5)
    d = v - b
    a = C.claim_from_estimate(d.mean(), d.std(ddof=1) / np.sqrt(d.size), d.size - 1,
                              "equivalence", 0.01)
    c = C.paired_claim(d, "equivalence", 0.01)
    np.testing.assert_allclose(a.p_value, c.p_value, rtol=1e-14)


def test_verdict_agrees_with_p_value_batch():
    """Consistency: shown iff p < alpha (CI 1 - 2 alpha), on a batch of 2,000."""
    rng = np.random.default_rng(6)
    d = rng.normal(0.0, 0.02, size=(2000, 10)) + rng.normal(0, 0.01, size=(2000, 1))
    for claim in C.CLAIMS:
        r = C.paired_claim(d, claim, 0.01)
        np.testing.assert_array_equal(r.shown, r.p_value < 0.05)
        assert r.verdict.shape == (2000,)


@pytest.mark.parametrize("claim, lo, hi, margin, expected", [
    ("non_inferiority", -0.004, 0.01, 0.005, "shown"),
    ("non_inferiority", -0.02, -0.006, 0.005, "refuted"),      # regression beyond margin
    ("non_inferiority", -0.02, 0.01, 0.005, "inconclusive"),
    ("equivalence", -0.004, 0.004, 0.005, "shown"),
    ("equivalence", 0.006, 0.02, 0.005, "refuted"),
    ("equivalence", -0.02, -0.006, 0.005, "refuted"),
    ("equivalence", -0.004, 0.006, 0.005, "inconclusive"),
    ("superiority", 0.001, 0.02, None, "shown"),
    ("superiority", -0.02, -0.001, None, "refuted"),
    ("superiority", -0.01, 0.01, None, "inconclusive"),
    ("superiority", 0.001, 0.02, 0.005, "inconclusive"),
    ("non_inferiority", np.nan, np.nan, 0.005, "inconclusive"),
])
def test_claim_verdict_table(claim, lo, hi, margin, expected):
    """Reference: the rules in the module docstring's table."""
    v = C.claim_verdict(claim, 0.0, lo, hi, margin)
    assert v == expected
    assert C.EXIT_STATUS[v] == {"shown": 0, "refuted": 1, "inconclusive": 3}[expected]


def test_exit_status_property():
    r = C.paired_claim(np.array([[0.01, 0.012, 0.011], [-0.05, -0.06, -0.055]]),
                       "non_inferiority", 0.01)
    np.testing.assert_array_equal(r.exit_status, [0, 1])


def test_zero_se_is_inconclusive():
    r = C.paired_claim(np.full(5, 0.01), "non_inferiority", 0.02)
    assert np.isnan(r.p_value) and r.verdict == "inconclusive"


def test_check_margin_messages():
    with pytest.raises(ValueError, match=r"The '--margin' option must be a finite number > 0"
                                         r". Got -0.01 instead."):
        C.check_margin(-0.01)
    with pytest.raises(ValueError, match=r"The '--margin' option must be a finite number > 0"
                                         r". Got 0.0 instead."):
        C.check_margin(0.0)
    with pytest.raises(ValueError, match=r"in the metric's units: 5 is 500 pp on accuracies; "
                                         r"did you mean 0.05\?"):
        C.check_margin(5, (0.0, 1.0))
    assert C.check_margin(0.02) == 0.02
    assert C.check_margin(5, (0.0, 100.0)) == 5.0


def test_claim_messages():
    with pytest.raises(ValueError, match="The 'margin' parameter of paired_claim|"
                                         "The 'margin' parameter of claim_from_estimate"):
        C.paired_claim(np.ones(4), "equivalence")
    with pytest.raises(ValueError, match="The 'claim' parameter of claim_from_estimate must "
                                         "be one of superiority, non_inferiority"):
        C.paired_claim(np.ones(4), "inferiority", 0.1)
    with pytest.raises(ValueError, match="The 'deltas' parameter of paired_claim must be an "
                                         "array with at least 2 values"):
        C.paired_claim(np.ones(1), "superiority")


@pytest.mark.slow
@pytest.mark.parametrize("claim, truth", [("non_inferiority", -1.0), ("equivalence", 1.0),
                                          ("equivalence", -1.0)])
def test_size_at_the_margin(claim, truth):
    """Reference: exact t law; at the margin the rate of "shown" is <= alpha (NI: = alpha)
    within 3 binomial SEs on 20,000 normal experiments."""
    rng = np.random.default_rng(7)
    sims, alpha, margin = 20_000, 0.05, 0.01
    d = rng.normal(truth * margin, 0.01, size=(sims, 8))
    rate = C.paired_claim(d, claim, margin, alpha).shown.mean()
    se = np.sqrt(alpha * (1 - alpha) / sims)
    assert rate <= alpha + 3 * se
    if claim == "non_inferiority":
        assert abs(rate - alpha) <= 3 * se
