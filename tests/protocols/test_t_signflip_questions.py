"""``t_signflip_questions``: the t interval, significant only if the sign-flip test agrees.

References: scipy's ``ttest_1samp`` (p and interval of the t on per-question deltas) and
``permutation_test`` over the signs of the deltas (exhaustive while at most 16 differ; the
mean as the statistic, which orders the patterns as the t does); the protocol's p is the
larger of the two p-values.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import protocols
from evalcal_core.designs import METHODS_PAIRED, MODELS, MODELS_CLUSTERED

NAME = "t_signflip_questions"


def _pair(seed, sims, k, n, p_base, p_variant):
    rng = np.random.default_rng(seed)
    base = (rng.random((sims, k, n)) < p_base).astype(float)
    variant = (rng.random((sims, k, n)) < p_variant).astype(float)
    return base, variant


def _scipy(d):
    t = stats.ttest_1samp(d, 0.0)
    lo, hi = t.confidence_interval(0.95)
    nonzero = d[d != 0]
    # the mean orders the sign patterns as the t does (a flip keeps sum(d**2)), without
    # the t's warning on patterns whose deltas are all equal
    flips = stats.permutation_test((nonzero,), np.mean, permutation_type="samples",
                                   n_resamples=np.inf).pvalue
    return t.pvalue, lo, hi, flips


def test_p_is_the_larger_of_scipy_t_and_exact_sign_flip_and_the_interval_is_the_t():
    base, variant = _pair(3, 8, 2, 12, 0.5, 0.7)  # 12 questions: at most 12 differ: exact
    res = protocols.get(NAME).evaluate(base, variant, rng=0)
    for i in range(base.shape[0]):
        d = variant[i].mean(0) - base[i].mean(0)
        p_t, lo, hi, p_flip = _scipy(d)
        assert res.p_value[i] == pytest.approx(max(p_t, p_flip), rel=1e-10)
        assert res.ci_low[i] == pytest.approx(lo, rel=1e-10)
        assert res.ci_high[i] == pytest.approx(hi, rel=1e-10)
        assert res.significant[i] == (p_t < 0.05 and p_flip < 0.05)


def test_significant_only_where_both_tests_reject():
    base, variant = _pair(5, 400, 2, 30, 0.55, 0.7)
    both = protocols.get(NAME).evaluate(base, variant, rng=1)
    t = protocols.get("paired_t_questions").evaluate(base, variant, rng=1)
    flips = protocols.get("signflip_questions").evaluate(base, variant, rng=1)
    np.testing.assert_array_equal(both.significant, t.significant & flips.significant)
    np.testing.assert_array_equal(both.ci_low, t.ci_low)
    assert both.significant.sum() < t.significant.sum()  # the sign-flip test decides some


def test_labels_per_design():
    cls = protocols.protocol_class(NAME)
    assert not cls.label(MODELS)
    assert cls.label(METHODS_PAIRED) and cls.label(MODELS_CLUSTERED)
