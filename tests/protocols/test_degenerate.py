"""No variance estimate, judged relative to the data's scale; bounded resample counts.

A spread that is floating-point rounding (per-seed deltas equal on paper) is no variance
estimate: p NaN, ``degenerate``, not significant, in every protocol that divides by an
estimated SE (:data:`protocols._decisions.SE_RTOL`). Analytic cases, no outside reference.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from _protocol_checks import default_clusters

import protocols
from protocols._base import MAX_DRAWS

#: the case that exposed the exact ``se == 0`` rule: deltas 0.01 each on paper
SEEDS_BASE = np.array([0.81, 0.83, 0.85])
SEEDS_VARIANT = np.array([0.82, 0.84, 0.86])


def _assert_no_variance_estimate(res):
    assert bool(np.all(res.degenerate))
    assert bool(np.all(np.isnan(res.p_value)))
    assert not bool(np.any(res.significant))
    assert bool(np.all(np.isnan(res.ci_low))) and bool(np.all(np.isnan(res.ci_high)))


def test_the_case_is_rounding():
    """The deltas' sd is rounding (about 6.4e-17), not 0: an exact ``se == 0`` test misses it,
    and scipy's ttest_rel gives a p-value of order 1e-14 for it."""
    sd = np.std(SEEDS_VARIANT - SEEDS_BASE, ddof=1)
    assert 0.0 < sd < 1e-15


def test_paired_t_has_no_variance_estimate_on_deltas_equal_up_to_rounding():
    res = protocols.get("paired_t").evaluate(SEEDS_BASE, SEEDS_VARIANT)
    _assert_no_variance_estimate(res)
    assert float(res.estimate) == pytest.approx(0.01)


def test_every_se_based_per_seed_protocol_agrees():
    """welch_t with arms constant up to rounding; paired_t on a batch mixing the rounding
    case with a real spread: only the rounding case is degenerate."""
    base = 0.3 + np.array([0.0, 5.5e-17, -5.5e-17])
    variant = np.full(3, 0.31)
    _assert_no_variance_estimate(protocols.get("welch_t").evaluate(base, variant))
    batch_base = np.stack([SEEDS_BASE, SEEDS_BASE])
    batch_variant = np.stack([SEEDS_VARIANT, SEEDS_BASE + [0.01, 0.0101, 0.0102]])
    res = protocols.get("paired_t").evaluate(batch_base[..., None], batch_variant[..., None])
    assert res.degenerate.tolist() == [True, False]
    assert res.p_value[1] < 0.001 and res.significant[1]


@pytest.mark.parametrize("name", ["paired_t_questions", "paired_question_bootstrap",
                                  "cluster_cr2", "cluster_cr1"])
def test_question_level_protocols_on_deltas_equal_up_to_rounding(name):
    """Per-question deltas all 0.01 on paper (questions scored 0.81, 0.83, ... against
    0.82, 0.84, ...): no variance estimate for the question-level t, z and cluster tests."""
    base = np.round(np.linspace(0.81, 0.99, 10), 2)[None, :].repeat(2, axis=0)
    variant = np.round(np.linspace(0.82, 1.0, 10), 2)[None, :].repeat(2, axis=0)
    assert 0.0 < np.std(variant - base) < 1e-15
    proto = protocols.get(name)
    clusters = default_clusters(10) if proto.needs_clusters else None
    _assert_no_variance_estimate(proto.evaluate(base, variant, rng=0, clusters=clusters))


def test_a_zero_estimate_with_a_rounding_spread_is_no_difference():
    """Deltas that are 0 up to rounding: p = 1 and the CI the estimate itself, as for
    exactly identical arms."""
    base = np.array([0.1 + 0.2, 0.3, 0.6 / 2])
    variant = np.array([0.3, 0.1 + 0.2, 0.3])
    res = protocols.get("paired_t").evaluate(base, variant)
    assert float(res.p_value) == 1.0 and not res.degenerate


def test_paired_two_level_with_two_identical_seeds_is_degenerate():
    """Two seeds with identical answers (the seed-level variance estimate is 0): the question
    component alone gives p < 1e-4 from two copies of one seed, but paired_two_level needs
    paired_t to reject, and paired_t has no variance estimate: degenerate, not significant."""
    rng = np.random.default_rng(0)
    seed_base = rng.random(200) < 0.6
    seed_variant = seed_base | (rng.random(200) < 0.3)
    base = np.stack([seed_base, seed_base]).astype(float)
    variant = np.stack([seed_variant, seed_variant]).astype(float)
    for b, v in ((base, variant), (base.astype(bool), variant.astype(bool))):
        res = protocols.get("paired_two_level").evaluate(b, v)
        assert not (res.p_value < 1e-4)
        _assert_no_variance_estimate(res)
    assert protocols.get("paired_t").evaluate(base, variant).degenerate


def test_paired_two_level_with_seeds_equal_up_to_rounding_is_degenerate():
    """Continuous scores, seed 1 = seed 0 shifted by rounding only: degenerate as well."""
    rng = np.random.default_rng(1)
    row = rng.random(50)
    base = np.stack([row, row * (1 + 1e-16)])
    variant = base + rng.normal(0.02, 0.05, 50)
    _assert_no_variance_estimate(protocols.get("paired_two_level").evaluate(base, variant))


RESAMPLING = [n for n in protocols.names() if "n_resamples" in protocols.parameters(n)]
PERMUTING = [n for n in protocols.names() if "n_permutations" in protocols.parameters(n)]


@pytest.mark.parametrize("value", [1e12, 1e22, 10**12, MAX_DRAWS + 1])
@pytest.mark.parametrize("name", RESAMPLING)
def test_huge_n_resamples_is_refused_instantly(name, value):
    """Refused when the protocol is built, before any allocation: well under a second."""
    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf"The 'n_resamples' parameter of {name} must be an "
                                         r"integer <= 10,000,000"):
        protocols.get(name, n_resamples=value)
    if "B" in protocols.protocol_class(name).aliases:
        with pytest.raises(ValueError, match=r"'n_resamples' parameter"):
            protocols.get(name, B=value)
    assert time.perf_counter() - start < 0.5
    assert protocols.get(name, n_resamples=MAX_DRAWS).n_resamples == MAX_DRAWS


@pytest.mark.parametrize("name", PERMUTING)
def test_huge_n_permutations_is_refused(name):
    with pytest.raises(ValueError, match=rf"The 'n_permutations' parameter of {name} must be "
                                         r"an integer <= 10,000,000"):
        protocols.get(name, n_permutations=1e22)
