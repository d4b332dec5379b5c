"""The harness defaults of part B, each against an independent computation of its tool's
documented formula (written here in numpy/scipy), and, where the tool is installed, against
the tool's own function (``pytest.importorskip``).

Monte Carlo comparisons evaluate ``R`` copies of one input and bound the gap of two means by
``Z`` two-sample standard errors measured from the copies (``Z = 5``: a two-sided normal tail
of 5.7e-7 per comparison), as ``_protocol_checks.assert_mc_equivalent`` does.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

import protocols
from protocols.methods.harness_aso import aso_epsilon_min, violation_ratios
from protocols.methods.harness_bayes import prob_beta_greater
from protocols.methods.harness_evals import evals_bootstrap_std
from protocols.methods.harness_rliable import (
    probability_of_improvement,
    rliable_difference_interval,
    rliable_poi_interval,
)

Z = 5.0
HARNESS_B = ("harness_evals_bootstrap", "harness_rliable_interval", "harness_rliable_poi",
             "harness_aso_05", "harness_aso_02", "harness_beta_binomial")


def assert_mc_close(ours, reference):
    """Means of two samples of a Monte Carlo quantity agree within ``Z`` standard errors."""
    ours, reference = np.asarray(ours, float), np.asarray(reference, float)
    se = np.sqrt(ours.var(ddof=1) / ours.size + reference.var(ddof=1) / reference.size)
    gap = abs(ours.mean() - reference.mean())
    assert gap <= Z * se + 1e-12, f"MC means differ by {gap:.4g} > {Z} SE = {Z * se:.4g}"


# ------------------------------------------------------------------------------------------
# Registration


@pytest.mark.parametrize("name", HARNESS_B)
def test_registered_as_descriptive_harness_protocols(name):
    """Each default is a registered protocol naming its tool, reportable for no design."""
    cls = protocols.protocol_class(name)
    assert cls.valid_for == frozenset()
    assert cls.harness and cls.pitfall


@pytest.mark.parametrize("name", [n for n in HARNESS_B if n != "harness_beta_binomial"])
def test_n_resamples_is_validated(name):
    """One resample has no spread: refused with a message naming the parameter."""
    with pytest.raises(ValueError, match=rf"The 'n_resamples' parameter of {name} must be an "
                                         r"integer >= 2.* Got 1 instead"):
        protocols.get(name, n_resamples=1)


# ------------------------------------------------------------------------------------------
# OpenAI evals: bootstrap_std of half-samples without replacement


def test_evals_bootstrap_std_has_the_half_sample_variance():
    """Reference: sampling h = N // 2 of N values without replacement, the mean has variance
    ``s2 / h * (N - h) / (N - 1)`` (``s2`` the values' plug-in variance; Cochran, *Sampling
    Techniques*, thm 2.2), and ``np.std`` (ddof 0) of B replicates has expectation of its
    square ``(B - 1) / B`` of that. 4,000 copies; bound Z SE of the mean of sd**2."""
    total, correct, b, copies = 51, 19, 200, 4000
    sd = evals_bootstrap_std(np.full(copies, correct), total, b, np.random.default_rng(3))
    p, h = correct / total, total // 2
    expected = p * (1 - p) / h * (total - h) / (total - 1) * (b - 1) / b
    se = (sd**2).std(ddof=1) / np.sqrt(copies)
    assert abs((sd**2).mean() - expected) <= Z * se


def test_evals_half_sample_equals_random_sample_of_events():
    """Reference: evals' own draw, ``random.sample(vals, len(vals) // 2)``, done here with
    ``rng.permutation`` of the events; the hypergeometric shortcut must give the same
    distribution of the half-sample mean (compared by the mean of sd over copies)."""
    total, correct, b, copies = 12, 5, 50, 600
    vals = np.r_[np.ones(correct), np.zeros(total - correct)]
    rng = np.random.default_rng(11)
    keys = rng.random((copies, b, total))
    half = vals[np.argsort(keys, axis=-1)[..., : total // 2]].mean(axis=-1)
    reference = half.std(axis=-1)
    ours = evals_bootstrap_std(np.full(copies, correct), total, b, np.random.default_rng(12))
    assert_mc_close(ours, reference)


def test_evals_protocol_decides_by_interval_overlap():
    """Consistency (the same draws in the same order): significant exactly when
    ``acc +- 1.96 sd`` of the two arms do not overlap; the CI is the difference's."""
    rng = np.random.default_rng(5)
    base = rng.random((300, 2, 40)) < 0.6
    variant = rng.random((300, 2, 40)) < rng.uniform(0.5, 0.9, (300, 1, 1))
    res = protocols.get("harness_evals_bootstrap").evaluate(base, variant, rng=7)
    stream = np.random.default_rng(7)
    sd_b = evals_bootstrap_std(base.sum(axis=(-2, -1)), 80, 1000, stream)
    sd_v = evals_bootstrap_std(variant.sum(axis=(-2, -1)), 80, 1000, stream)
    acc_b, acc_v = base.mean(axis=(-2, -1)), variant.mean(axis=(-2, -1))
    apart = (acc_v - 1.959964 * sd_v > acc_b + 1.959964 * sd_b) | (
        acc_b - 1.959964 * sd_b > acc_v + 1.959964 * sd_v)
    np.testing.assert_array_equal(res.significant, apart)
    np.testing.assert_allclose(res.estimate, acc_v - acc_b, atol=1e-15)
    assert 0.1 < apart.mean() < 0.9   # both verdicts occur: the check can fail


# ------------------------------------------------------------------------------------------
# rliable: stratified bootstrap interval, probability of improvement


def _naive_rliable(x, y, b, rng, statistic, alpha=0.05):
    """rliable's bootstrap written plainly: each resample draws k run indices per sample."""
    k = x.size
    ix, iy = rng.integers(0, k, (b, k)), rng.integers(0, k, (b, k))
    values = statistic(x[ix], y[iy])
    return np.percentile(values, [100 * alpha / 2, 100 * (1 - alpha / 2)])


RUNS_X = np.array([0.712, 0.731, 0.705, 0.744, 0.720, 0.738])
RUNS_Y = np.array([0.701, 0.716, 0.722, 0.699, 0.710, 0.716])


def test_rliable_difference_interval_matches_the_plain_bootstrap():
    """Reference: :func:`_naive_rliable` with ``mean(x*) - mean(y*)``; both endpoints
    within MC error over 300 copies of 500 resamples each."""
    copies, b = 300, 500
    low, high = rliable_difference_interval(np.broadcast_to(RUNS_X, (copies, 6)),
                                            np.broadcast_to(RUNS_Y, (copies, 6)),
                                            n_resamples=b, rng=1)
    rng = np.random.default_rng(2)
    ref = np.array([_naive_rliable(RUNS_X, RUNS_Y, b, rng,
                                   lambda x, y: x.mean(-1) - y.mean(-1))
                    for _ in range(copies)])
    assert_mc_close(low, ref[:, 0])
    assert_mc_close(high, ref[:, 1])


def test_probability_of_improvement_is_mann_whitney_u():
    """Reference: ``scipy.stats.mannwhitneyu(x, y).statistic / k**2`` (rliable's formula),
    on lattice scores with ties; exact."""
    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 5, (20, 7)) / 4, rng.integers(0, 5, (20, 7)) / 4
    ref = [stats.mannwhitneyu(a, b).statistic / 49 for a, b in zip(x, y)]
    np.testing.assert_allclose(probability_of_improvement(x, y), ref, rtol=0, atol=1e-15)
    assert probability_of_improvement(RUNS_X, RUNS_X) == 0.5


def test_rliable_poi_interval_matches_the_plain_bootstrap():
    """Reference: :func:`_naive_rliable` with the Mann-Whitney share of each resample
    computed by scipy-free pairwise comparison; endpoints within MC error."""
    copies, b = 300, 500

    def poi(xs, ys):
        return ((xs[..., :, None] > ys[..., None, :])
                + 0.5 * (xs[..., :, None] == ys[..., None, :])).mean(axis=(-2, -1))

    _, low, high = rliable_poi_interval(np.broadcast_to(RUNS_X, (copies, 6)),
                                        np.broadcast_to(RUNS_Y, (copies, 6)),
                                        n_resamples=b, rng=3)
    rng = np.random.default_rng(4)
    ref = np.array([_naive_rliable(RUNS_X, RUNS_Y, b, rng, poi) for _ in range(copies)])
    assert_mc_close(low, ref[:, 0])
    assert_mc_close(high, ref[:, 1])


def test_rliable_protocols_decide_from_their_intervals():
    """Consistency: the interval protocol reports the interval it decides by (CI excludes
    0); the POI protocol decides by the POI interval excluding 0.5 (same rng, same draws)."""
    rng = np.random.default_rng(8)
    base = 0.7 + 0.01 * rng.standard_normal((200, 5, 1))
    variant = base + 0.01 * rng.standard_normal((200, 5, 1)) + rng.uniform(0, 0.02, (200, 1, 1))
    res = protocols.get("harness_rliable_interval").evaluate(base, variant, rng=9)
    low, high = rliable_difference_interval(variant[..., 0], base[..., 0], rng=9)
    np.testing.assert_array_equal(res.ci_low, low)
    np.testing.assert_array_equal(res.significant, (low > 0) | (high < 0))
    poi = protocols.get("harness_rliable_poi").evaluate(base, variant, rng=9)
    _, plow, phigh = rliable_poi_interval(variant[..., 0], base[..., 0], rng=9)
    np.testing.assert_array_equal(poi.significant, (plow > 0.5) | (phigh < 0.5))
    assert 0.1 < poi.significant.mean() < 0.9


def test_rliable_tool_agrees():
    """Reference: rliable itself (``get_interval_estimates`` with a list of two score arrays
    and ``probability_of_improvement``). POI exact; interval endpoints within MC error: the
    tool's one interval (2,000 reps) against ours over 200 copies (its MC SD taken as ours)."""
    library = pytest.importorskip("rliable.library")
    metrics = pytest.importorskip("rliable.metrics")
    assert metrics.probability_of_improvement(RUNS_X[:, None], RUNS_Y[:, None]) == \
        pytest.approx(float(probability_of_improvement(RUNS_X, RUNS_Y)), abs=1e-15)
    # rliable draws from numpy's global state: seeded here, restored after.
    state = np.random.get_state()  # noqa: NPY002
    np.random.seed(20240611)  # noqa: NPY002
    try:
        _, intervals = library.get_interval_estimates(
            {"d": [RUNS_X[:, None], RUNS_Y[:, None]]},
            lambda x, y: np.array([x.mean() - y.mean()]), reps=2000)
    finally:
        np.random.set_state(state)  # noqa: NPY002
    tool_low, tool_high = intervals["d"][:, 0]
    low, high = rliable_difference_interval(np.broadcast_to(RUNS_X, (200, 6)),
                                            np.broadcast_to(RUNS_Y, (200, 6)), rng=5)
    for ours, tool in ((low, tool_low), (high, tool_high)):
        assert abs(ours.mean() - tool) <= Z * ours.std(ddof=1) * np.sqrt(1 + 1 / ours.size)


# ------------------------------------------------------------------------------------------
# deep-significance: ASO


def _grid_violation_ratio(a, b, dt=0.005):
    """deepsig's ``compute_violation_ratio`` written from its documentation: quantile
    functions on the grid ``t = arange(dt, 1, dt)``, violation set ``F^-1 < G^-1``, first
    grid point left out of the violation integral, 0.5 when W2 = 0."""
    t = np.arange(dt, 1, dt)

    def quantile(s):
        s = np.sort(s, axis=-1)
        return s[..., np.clip(np.ceil(s.shape[-1] * t).astype(int) - 1, 0, s.shape[-1] - 1)]

    f, g = quantile(a), quantile(b)
    diff = g - f
    w2 = (diff**2 * dt).sum(axis=-1)
    viol = (np.where(f < g, diff, 0.0)[..., 1:] ** 2 * dt).sum(axis=-1)
    return np.where(w2 == 0, 0.5, viol / np.where(w2 == 0, 1.0, w2))


@pytest.mark.parametrize("k", [2, 3, 7, 10, 37])
def test_violation_ratio_matches_the_grid_formula(k):
    """Reference: :func:`_grid_violation_ratio`; both directions, with ties; exact."""
    rng = np.random.default_rng(k)
    a = rng.integers(0, 6, (50, k)) / 5
    b = rng.integers(0, 6, (50, k)) / 5
    ab, ba = violation_ratios(np.sort(a, axis=-1), np.sort(b, axis=-1))
    np.testing.assert_allclose(ab, _grid_violation_ratio(a, b), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ba, _grid_violation_ratio(b, a), rtol=1e-12, atol=1e-15)


def test_aso_epsilon_min_matches_the_plain_bootstrap():
    """Reference: eps_min = clip(ratio + z_0.95 SD(ratios of resamples), 0, 1) with
    resamples drawn plainly (k indices with replacement) and :func:`_grid_violation_ratio`;
    means of 150 copies of 300 resamples each within MC error, both directions."""
    copies, b = 150, 300
    a = np.array([0.70, 0.74, 0.69, 0.73, 0.75, 0.71, 0.72])
    y = np.array([0.71, 0.70, 0.68, 0.72, 0.69, 0.73, 0.70])
    ours_ab, ours_ba = aso_epsilon_min(np.broadcast_to(a, (copies, 7)),
                                       np.broadcast_to(y, (copies, 7)), n_resamples=b, rng=6)
    rng = np.random.default_rng(7)
    ia, iy = rng.integers(0, 7, (copies, b, 7)), rng.integers(0, 7, (copies, b, 7))
    z = stats.norm.ppf(0.95)
    ref_ab = np.clip(_grid_violation_ratio(a, y) + z * _grid_violation_ratio(
        a[ia], y[iy]).std(axis=-1), 0, 1)
    ref_ba = np.clip(_grid_violation_ratio(y, a) + z * _grid_violation_ratio(
        y[iy], a[ia]).std(axis=-1), 0, 1)
    assert_mc_close(ours_ab, ref_ab)
    assert_mc_close(ours_ba, ref_ba)


@pytest.mark.parametrize(("name", "threshold"), [("harness_aso_05", 0.5),
                                                  ("harness_aso_02", 0.2)])
def test_aso_protocols_decide_by_eps_min(name, threshold):
    """Consistency (same rng, same draws): significant iff eps_min < threshold one way."""
    rng = np.random.default_rng(10)
    base = 0.7 + 0.01 * rng.standard_normal((200, 6, 1))
    variant = 0.7 + 0.01 * rng.standard_normal((200, 6, 1)) + rng.uniform(0, 0.02, (200, 1, 1))
    res = protocols.get(name).evaluate(base, variant, rng=11)
    e_vb, e_bv = aso_epsilon_min(variant[..., 0], base[..., 0], rng=11)
    np.testing.assert_array_equal(res.significant, (e_vb < threshold) | (e_bv < threshold))
    assert 0.05 < res.significant.mean() < 0.95


def test_deepsig_tool_agrees():
    """Reference: deepsig itself. ``compute_violation_ratio`` exactly; ``aso`` (1,000
    bootstrap iterations, its own seeding) within MC error of our mean over 100 copies,
    the tool's MC SD taken as ours."""
    deepsig_aso = pytest.importorskip("deepsig.aso")
    a = np.array([0.70, 0.74, 0.69, 0.73, 0.75, 0.71, 0.72, 0.745])
    y = np.array([0.71, 0.70, 0.68, 0.72, 0.69, 0.73, 0.70, 0.705])
    ab, _ = violation_ratios(np.sort(a), np.sort(y))
    assert float(ab) == pytest.approx(deepsig_aso.compute_violation_ratio(a, y, dt=0.005),
                                      rel=1e-12)
    state = np.random.get_state()  # noqa: NPY002 (the tool seeds numpy's global state)
    try:
        tool = deepsig_aso.aso(a, y, show_progress=False, seed=1234)
    finally:
        np.random.set_state(state)  # noqa: NPY002
    ours, _ = aso_epsilon_min(np.broadcast_to(a, (100, 8)), np.broadcast_to(y, (100, 8)),
                              rng=8)
    assert abs(ours.mean() - tool) <= Z * ours.std(ddof=1) * np.sqrt(1 + 1 / ours.size)


# ------------------------------------------------------------------------------------------
# bayes_evals: Beta-binomial P(A > B)


@pytest.mark.parametrize(("a1", "b1", "a2", "b2"), [(3, 5, 2, 7), (151, 51, 140, 62),
                                                    (40, 2, 38, 4), (1, 1, 1, 1)])
def test_prob_beta_greater_matches_quadrature(a1, b1, a2, b2):
    """Reference: ``integral f_X(x) F_Y(x) dx`` by ``scipy.integrate.quad``."""
    ref = integrate.quad(lambda x: stats.beta.pdf(x, a1, b1) * stats.beta.cdf(x, a2, b2),
                         0, 1, limit=200, epsabs=1e-13)[0]
    assert float(prob_beta_greater(a1, b1, a2, b2)) == pytest.approx(ref, abs=1e-9)


def test_prob_beta_greater_analytic_cases():
    """Analytic: P(Beta(a, 1) > U) = E[X] = a / (a + 1); symmetric arms give 1/2."""
    a = np.arange(1, 9)
    np.testing.assert_allclose(prob_beta_greater(a, 1, 1, 1), a / (a + 1), rtol=1e-12)
    np.testing.assert_allclose(prob_beta_greater(5, 9, 5, 9), 0.5, rtol=1e-12)


def test_beta_binomial_protocol_matches_posterior_draws():
    """Reference: bayes_evals' own method, 200,000 draws from each Beta posterior of the
    pooled answers; P within 5 binomial SE; the decision uses 0.95 / 0.05 at alpha 0.05."""
    rng = np.random.default_rng(12)
    base = rng.random((3, 2, 60)) < np.array([0.60, 0.60, 0.70])[:, None, None]
    variant = rng.random((3, 2, 60)) < np.array([0.62, 0.75, 0.55])[:, None, None]
    cb, cv = base.sum(axis=(-2, -1)), variant.sum(axis=(-2, -1))
    p = prob_beta_greater(1 + cv, 1 + 120 - cv, 1 + cb, 1 + 120 - cb)
    draws = 200_000
    mc = (rng.beta(1 + cv, 121 - cv, (draws, 3)) > rng.beta(1 + cb, 121 - cb, (draws, 3)))
    se = np.sqrt(p * (1 - p) / draws)
    assert np.all(np.abs(mc.mean(axis=0) - p) <= Z * se + 1e-12)
    res = protocols.get("harness_beta_binomial").evaluate(base, variant)
    np.testing.assert_array_equal(res.significant, (p > 0.95) | (p < 0.05))
    np.testing.assert_allclose(res.estimate, (cv - cb) / 120, atol=1e-15)
