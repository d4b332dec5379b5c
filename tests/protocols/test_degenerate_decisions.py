"""Degenerate degrees of freedom and zero variance give sane answers or "no verdict".

``paired_two_level``'s Satterthwaite df has a negative term (``- MS_resid``) and fell to
0.06 on three runs per arm with per-seed deltas 24, 25, 24 pp, giving a CI of +-1e39 that
was not flagged. It is now raised to the least df the model allows
(:func:`protocols.methods.paired_two_level.min_two_level_df`). ``welch_t``'s df has only
positive terms and cannot fall below ``k - 1``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats
from welch_reference import welch_reference

import protocols
from protocols._resample import TIE_RTOL
from protocols.methods.paired_two_level import min_two_level_df, two_level_variance


def _population_df(x, y, k, n):
    """Satterthwaite df of ``MS_seed + MS_question - MS_resid`` at expected mean squares
    ``A = 1 + x``, ``B = 1 + y`` (``sigma_e = 1``), straight from the formula."""
    a, b = k - 1, n - 1
    big_a, big_b = 1 + x, 1 + y
    return (big_a + big_b - 1) ** 2 / (big_a**2 / a + big_b**2 / b + 1 / (a * b))


@pytest.mark.parametrize("k, n", [(2, 2), (2, 500), (3, 5), (3, 100), (10, 40)])
def test_min_two_level_df_is_the_least_population_df(k, n):
    """Reference: brute-force minimum of the population Satterthwaite df over a dense
    log grid of the variance components (0 and 1e-6 ... 1e6 times sigma_e**2), and
    scipy.optimize.minimize from an interior start: neither goes below the closed form,
    and the grid's corner (no seed or question variance) attains it."""
    grid = np.concatenate([[0.0], np.logspace(-6, 6, 400)])
    df = _population_df(grid[:, None], grid[None, :], k, n)
    bound = min_two_level_df(k, n)
    assert df.min() == pytest.approx(bound, rel=1e-12)
    assert df.min() >= bound * (1 - 1e-12)
    res = optimize.minimize(lambda z: _population_df(z[0], z[1], k, n), [3.0, 3.0],
                            bounds=[(0, None), (0, None)])
    assert res.fun >= bound * (1 - 1e-9)
    assert res.fun == pytest.approx(bound, rel=1e-6)


def _audit_like_runs(shared):
    """Three runs per arm on 100 questions, the baseline wrong everywhere, the variant right
    on 24, 25, 24 questions (per-seed deltas 24, 25, 24 pp), ``shared`` of them common to
    all three runs and the rest on distinct questions."""
    k, n = 3, 100
    variant = np.zeros((k, n), dtype=bool)
    variant[:, :shared] = True
    col = shared
    for s, count in enumerate([24, 25, 24]):
        variant[s, col:col + count - shared] = True
        col += count - shared
    return np.zeros((k, n), dtype=bool), variant


def _mean_squares(d):
    """The two-way ANOVA mean squares ``(MS_seed, MS_question, MS_resid)`` of ``d[k, n]``."""
    k, n = d.shape
    grand = d.mean()
    ms_s = n * ((d.mean(1) - grand) ** 2).sum() / (k - 1)
    ms_q = k * ((d.mean(0) - grand) ** 2).sum() / (n - 1)
    resid = d - d.mean(1, keepdims=True) - d.mean(0, keepdims=True) + grand
    return ms_s, ms_q, (resid**2).sum() / ((k - 1) * (n - 1))


def _satterthwaite(ms_s, ms_q, ms_e, k, n):
    """Satterthwaite df of ``MS_seed + MS_question - MS_resid`` (question component kept),
    or k - 1 where ``MS_question <= MS_resid`` (dropped)."""
    if ms_q <= ms_e * (1 + TIE_RTOL):
        return k - 1.0
    return (ms_s + ms_q - ms_e) ** 2 / (ms_s**2 / (k - 1) + ms_q**2 / (n - 1)
                                        + ms_e**2 / ((k - 1) * (n - 1)))


def _plug_in_df(d):
    """The Satterthwaite df without the floor, from the two-way ANOVA mean squares."""
    k, n = d.shape
    ms_s, ms_q, ms_e = _mean_squares(d)
    assert ms_q > ms_e          # the question component is kept
    return _satterthwaite(ms_s, ms_q, ms_e, k, n)


def _bounded_df(d):
    """The documented df before the floor, by hand: the least of the plug-in Satterthwaite
    df and the same with MS_question, then MS_seed, at its one-sided 75% upper chi-square
    bound ``MS m / chi2.ppf(0.25, m)`` (scipy.stats.chi2)."""
    k, n = d.shape
    ms_s, ms_q, ms_e = _mean_squares(d)
    q_high = ms_q * (n - 1) / stats.chi2.ppf(0.25, n - 1)
    s_high = ms_s * (k - 1) / stats.chi2.ppf(0.25, k - 1)
    return min(_satterthwaite(ms_s, ms_q, ms_e, k, n), _satterthwaite(ms_s, q_high, ms_e, k, n),
               _satterthwaite(s_high, ms_q, ms_e, k, n))


def test_two_level_df_below_the_model_range_is_floored():
    """The audit's failure: plug-in df 0.06 (below the least possible, 1.94). Reference:
    the t test by hand at the floor df (scipy.stats.t) combined with
    scipy.stats.ttest_rel on the per-seed accuracies, as the protocol combines them
    (larger p, union of the CIs); the count path and the array path agree."""
    base, variant = _audit_like_runs(shared=6)
    d = variant.astype(float) - base
    plug_in = _plug_in_df(d)
    floor = min_two_level_df(3, 100)
    assert plug_in < 0.1 < floor
    variance, df, _ = two_level_variance(d)
    assert df == pytest.approx(floor, rel=1e-12)

    res = protocols.get("paired_two_level").evaluate(base, variant, 0.05)
    est = d.mean()
    p_two = 2 * stats.t.sf(est / np.sqrt(variance), floor)
    half = stats.t.isf(0.025, floor) * np.sqrt(variance)
    ref = stats.ttest_rel(variant.mean(1), base.mean(1))
    ci = ref.confidence_interval(0.95)
    assert res.p_value == pytest.approx(max(p_two, ref.pvalue), rel=1e-9)
    assert res.ci_low == pytest.approx(min(est - half, ci.low), rel=1e-9)
    assert res.ci_high == pytest.approx(max(est + half, ci.high), rel=1e-9)
    # a sane answer: seeds within 1 pp of 24 pp, a CI within a few pp of it
    assert 0.2 < res.ci_low < est < res.ci_high < 0.3
    assert bool(res.significant) and not bool(res.degenerate)


@pytest.mark.parametrize("shared", [0, 6, 12, 24])
def test_two_level_zero_seed_variance_is_no_verdict(shared):
    """Per-seed deltas 24, 24, 24 pp (no seed variance whatever the questions do): p NaN,
    CI NaN, degenerate, not significant (the convention of protocols._decisions), not an
    interval from the question component alone. Analytic case."""
    base, variant = _audit_like_runs(shared)
    variant[1, :] = variant[0, :]            # every seed 24 pp
    res = protocols.get("paired_two_level").evaluate(base, variant)
    assert bool(res.degenerate) and not bool(res.significant)
    assert np.isnan(res.p_value) and np.isnan(res.ci_low) and np.isnan(res.ci_high)


def test_two_level_df_is_the_bounded_df_raised_to_the_floor():
    """Reference: the Satterthwaite formula by hand (:func:`_bounded_df`: the plug-in df, or
    k - 1 where the question component is dropped, at most the df with either mean square
    at its upper bound) on 200 experiments of k = 3 seeds and 40 questions with a weak
    question component (the floor binds in some): the df equals ``max(bounded, floor)``."""
    rng = np.random.default_rng(5)
    d = (0.02 * rng.standard_normal((200, 3, 1)) + 0.3 * rng.standard_normal((200, 1, 40))
         + rng.standard_normal((200, 3, 40)))
    _, df, _ = two_level_variance(d)
    bounded = np.array([_bounded_df(x) for x in d])
    floor = min_two_level_df(3, 40)
    assert 0 < (bounded < floor).sum() < 200
    np.testing.assert_allclose(df, np.maximum(bounded, floor), rtol=1e-10)


def _kept(d):
    """Whether the protocol keeps the question component (MS_question above MS_resid)."""
    k, n = d.shape
    grand = d.mean()
    ms_q = k * ((d.mean(0) - grand) ** 2).sum() / (n - 1)
    resid = d - d.mean(1, keepdims=True) - d.mean(0, keepdims=True) + grand
    return ms_q > (resid**2).sum() / ((k - 1) * (n - 1)) * (1 + TIE_RTOL)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_welch_df_stays_between_its_component_dfs(k):
    """Reference: scipy.stats.ttest_ind(equal_var=False): p equals ``welch_reference``'s
    (scipy's statistic on the bounded df written out), and scipy's Welch df lies in
    [k - 1, 2 (k - 1)] (all its terms are positive, so no floor is
    needed), including with one arm nearly constant."""
    rng = np.random.default_rng(k)
    base = 0.7 + 0.01 * rng.standard_normal((500, k))
    variant = 0.71 + 0.01 * rng.standard_normal((500, k)) * rng.uniform(1e-6, 1, (500, 1))
    res = protocols.get("welch_t").evaluate(base[..., None], variant[..., None])
    ref = stats.ttest_ind(variant, base, axis=-1, equal_var=False)
    np.testing.assert_allclose(res.p_value, welch_reference(variant, base, 0.05)[0],
                               rtol=1e-9)
    assert np.all((ref.df >= k - 1 - 1e-9) & (ref.df <= 2 * (k - 1) + 1e-9))
    assert not res.degenerate.any()


def test_effect_sizes_family_quick_cells_are_well_formed():
    """Consistency of the decision-grid family (sim/decisions/effect_sizes.py) on its
    QUICK_CELLS at 400 experiments: outcomes follow the contract of sim.decisions, the
    rounding cell is refused in every experiment, and the d_z coverage (exact for normal
    deltas) is within 4.5 binomial SEs of 0.95."""
    from sim.decisions import MEASURES
    from sim.decisions import effect_sizes as family

    sims = 400
    for i, cell in enumerate(family.QUICK_CELLS):
        for out in family.simulate(cell, sims, np.random.default_rng([11, i])):
            assert set(out) == {"decision", "measure", "hits", "sims", "alpha"}
            assert out["measure"] in MEASURES and 0 <= out["hits"] <= out["sims"] <= sims
            if cell["kind"] == "dz_rounding":
                assert out["hits"] == sims
            if cell["kind"] == "dz" and out["measure"] == "coverage":
                assert abs(out["hits"] / sims - 0.95) <= 4.5 * np.sqrt(0.95 * 0.05 / sims)
