"""The harness reproductions of lm-eval and Inspect (``protocols/methods/harness_lm_eval.py``,
``harness_inspect.py``) against independent computations of the tools' formulas.

References: the formulas cited in the modules, written here with the Python standard
library (``statistics.stdev``), scipy and statsmodels (``OLS(...).fit(cov_type='cluster')``
for Inspect's clustered SE: with an intercept only its small-sample factor
``G / (G - 1) * (N - 1) / (N - K)`` is Inspect's ``C / (C - 1)``; ``proportion_confint(...,
method='wilson')`` for the Wilson interval); the tools' own functions where they install
(``inspect_ai``; ``lm_eval`` is skipped when absent); exact enumeration of two independent
binomials for the null rejection rates of the Monte Carlo test.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import protocols
from protocols import ScoreBatch

OVERLAP_NORMAL = ("harness_lm_eval_overlap", "harness_inspect_stderr")
PART_A = (*OVERLAP_NORMAL, "harness_lm_eval_comparator", "harness_inspect_stderr_cluster",
          "harness_inspect_bootstrap", "harness_inspect_ci_wilson",
          "harness_inspect_ci_wilson_cluster")
Z95 = stats.norm.ppf(0.975)


def _data(seed=3, batch=8, k=3, n=40):
    """Binary scores with a per-question difficulty shared by the arms, and 4 unequal
    clusters of questions."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.2, 0.9, (batch, 1, n))
    shift = rng.uniform(-0.4, 0.4, (batch, 1, 1))
    base = (rng.random((batch, k, n)) < p).astype(float)
    variant = (rng.random((batch, k, n)) < np.clip(p + shift, 0, 1)).astype(float)
    codes = np.repeat(np.arange(4), [4, 8, 12, 16])
    return base, variant, codes


def _per_question(x):
    """A model's per-question score: its mean over its k runs (lists, one per experiment)."""
    return [list(row) for row in x.mean(axis=-2)]


def _stdlib_stderr(values):
    # lm-eval's mean_stderr: sample_stddev (divisor n - 1) / sqrt(n)
    return statistics.stdev(values) / math.sqrt(len(values))


def _statsmodels_cluster_se(values, codes):
    fit = sm.OLS(np.asarray(values), np.ones((len(values), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": codes})
    return float(fit.bse[0])


def _disjoint(lo_b, hi_b, lo_v, hi_v):
    return lo_v > hi_b or lo_b > hi_v


def test_all_part_a_protocols_are_registered_as_harness_reproductions():
    """Each is registered, names the tool it reproduces, and is reportable for no design
    (descriptive protocols, every design label a one-line reason) (consistency check)."""
    for name in PART_A:
        cls = protocols.protocol_class(name)
        assert cls.harness, name
        assert cls.valid_for == frozenset()
        assert not cls.paired
    assert protocols.protocol_class("paired_t").harness == ""
    assert protocols.protocol_class("harness_inspect_bootstrap").stochastic
    assert protocols.protocol_class("harness_inspect_stderr_cluster").needs_clusters


@pytest.mark.parametrize("name", OVERLAP_NORMAL)
def test_normal_overlap_against_the_stdlib_formula(name):
    """acc +- 1.96 * stdev / sqrt(n) per model (``statistics.stdev``); significant iff the two
    intervals are disjoint; the CI on the difference is [lo_v - hi_b, hi_v - lo_b]."""
    base, variant, _ = _data()
    res = protocols.get(name).evaluate(base, variant)
    for i, (qb, qv) in enumerate(zip(_per_question(base), _per_question(variant))):
        mb, mv = statistics.fmean(qb), statistics.fmean(qv)
        sb, sv = _stdlib_stderr(qb), _stdlib_stderr(qv)
        lo_b, hi_b, lo_v, hi_v = mb - Z95 * sb, mb + Z95 * sb, mv - Z95 * sv, mv + Z95 * sv
        assert res.significant[i] == _disjoint(lo_b, hi_b, lo_v, hi_v)
        np.testing.assert_allclose([res.ci_low[i], res.ci_high[i]],
                                   [lo_v - hi_b, hi_v - lo_b], rtol=1e-12)
        np.testing.assert_allclose(res.p_value[i],
                                   2 * stats.norm.sf(abs(mv - mb) / (sb + sv)), rtol=1e-10)
    assert res.significant.any() and not res.significant.all()   # both verdicts exercised


def test_comparator_against_the_script_formula():
    """model_comparator.py: Z = (acc1 - acc2) / sqrt(se1**2 + se2**2), p = 2 norm.sf(|Z|)."""
    base, variant, _ = _data()
    res = protocols.get("harness_lm_eval_comparator").evaluate(base, variant)
    for i, (qb, qv) in enumerate(zip(_per_question(base), _per_question(variant))):
        diff = statistics.fmean(qv) - statistics.fmean(qb)
        se = math.hypot(_stdlib_stderr(qb), _stdlib_stderr(qv))
        np.testing.assert_allclose(res.p_value[i], 2 * stats.norm.sf(abs(diff / se)),
                                   rtol=1e-10)
        np.testing.assert_allclose([res.ci_low[i], res.ci_high[i]],
                                   [diff - Z95 * se, diff + Z95 * se], rtol=1e-12)
    np.testing.assert_array_equal(res.significant, res.p_value < 0.05)


def test_cluster_stderr_against_statsmodels():
    """Inspect's clustered SE = statsmodels' cluster-robust SE of an intercept (CR1, factor
    G / (G - 1)); overlap of mean +- 1.96 SE."""
    base, variant, codes = _data()
    res = protocols.get("harness_inspect_stderr_cluster").evaluate(base, variant,
                                                                   clusters=codes)
    for i, (qb, qv) in enumerate(zip(_per_question(base), _per_question(variant))):
        sb, sv = _statsmodels_cluster_se(qb, codes), _statsmodels_cluster_se(qv, codes)
        mb, mv = np.mean(qb), np.mean(qv)
        np.testing.assert_allclose([res.ci_low[i], res.ci_high[i]],
                                   [mv - mb - Z95 * (sb + sv), mv - mb + Z95 * (sb + sv)],
                                   rtol=1e-10)
        assert res.significant[i] == (abs(mv - mb) > Z95 * (sb + sv))


def test_wilson_against_statsmodels():
    """Each model's interval is statsmodels' Wilson interval of its count of n questions
    (k = 1: 0/1 per-question scores); significant iff the two are disjoint."""
    base, variant, _ = _data(k=1, n=60, batch=8)
    res = protocols.get("harness_inspect_ci_wilson").evaluate(base, variant)
    n = base.shape[-1]
    lo_b, hi_b = proportion_confint(base.sum(axis=(-2, -1)), n, 0.05, method="wilson")
    lo_v, hi_v = proportion_confint(variant.sum(axis=(-2, -1)), n, 0.05, method="wilson")
    np.testing.assert_allclose(res.ci_low, lo_v - hi_b, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(res.ci_high, hi_v - lo_b, rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(res.significant, (lo_v > hi_b) | (lo_b > hi_v))
    assert np.isnan(res.p_value).all()


def test_wilson_cluster_against_statsmodels():
    """Korn-Graubard: effective n* = min(p (1 - p) / v, n), v the statsmodels cluster
    variance of the mean; the Wilson interval of p on n* with critical value t_{0.975, G-1}
    (``proportion_confint`` at the level whose normal quantile is that t)."""
    base, variant, codes = _data()
    res = protocols.get("harness_inspect_ci_wilson_cluster").evaluate(base, variant,
                                                                      clusters=codes)
    t = stats.t.ppf(0.975, len(np.unique(codes)) - 1)
    level = 2 * stats.norm.sf(t)
    for i, (qb, qv) in enumerate(zip(_per_question(base), _per_question(variant))):
        bounds = []
        for values in (qb, qv):
            p = float(np.mean(values))
            n_eff = min(p * (1 - p) / _statsmodels_cluster_se(values, codes) ** 2,
                        len(values))
            bounds.append(proportion_confint(p * n_eff, n_eff, level, method="wilson"))
        (lo_b, hi_b), (lo_v, hi_v) = bounds
        np.testing.assert_allclose([res.ci_low[i], res.ci_high[i]],
                                   [lo_v - hi_b, hi_v - lo_b], rtol=1e-9)
        assert res.significant[i] == _disjoint(lo_b, hi_b, lo_v, hi_v)


@pytest.mark.parametrize("replicates", ["drawn", "summary"])
def test_bootstrap_se_is_the_ddof0_sd_of_the_resample_means(replicates):
    """Monte Carlo, R = 20,000 copies of one experiment whose variant is all 0 (its
    bootstrap SE is 0, so the CI half-width is 1.96 times the base's bootstrap SE). With
    B = 10 resamples Inspect's ``np.std`` (ddof 0) of the resample means has E[SE**2] =
    (B - 1) / B * m2 / n exactly (m2: the per-question scores' variance, divisor n: the
    ideal bootstrap variance of a mean). The bound is 4.5 Monte Carlo SEs of the mean over
    the copies (about 1.5% of it), against a 10% gap to the ddof-1 SD."""
    rng = np.random.default_rng(11)
    n, b, r = 200, 10, 20_000
    base = (rng.random((3, n)) < 0.6).astype(float)
    variant = np.zeros_like(base)
    proto = protocols.get("harness_inspect_bootstrap", n_resamples=b, replicates=replicates)
    res = proto.evaluate(np.broadcast_to(base, (r, 3, n)), np.broadcast_to(variant, (r, 3, n)),
                         rng=5)
    se2 = ((res.ci_high - res.ci_low) / (2 * Z95)) ** 2
    m2 = base.mean(axis=0).var()
    expected = (b - 1) / b * m2 / n
    bound = 4.5 * se2.std(ddof=1) / math.sqrt(r)
    assert abs(se2.mean() - expected) <= bound, (se2.mean(), expected, bound)
    assert abs(m2 / n - expected) > 3 * bound          # the test can tell ddof 0 from 1


def test_against_inspect_ai_itself():
    """Inspect's own metrics on the per-question scores (k-run means) of each model give the
    intervals whose overlap the protocols decide."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.scorer import SampleScore, Score, ci_wilson, stderr

    base, variant, codes = _data()

    def scores(values):
        return [SampleScore(score=Score(value=float(v)), sample_id=j,
                            sample_metadata={"task": int(codes[j])})
                for j, v in enumerate(values)]

    def normal(values, cluster=None):
        s = scores(values)
        m, se = np.mean(values), stderr(cluster=cluster)(s)
        return m - Z95 * se, m + Z95 * se

    def wilson(values, cluster=None):
        out = ci_wilson(cluster=cluster)(scores(values))
        return out["lower"], out["upper"]

    checks = {"harness_inspect_stderr": (normal, None, 1e-10),
              "harness_inspect_stderr_cluster": (normal, "task", 1e-10),
              "harness_inspect_ci_wilson": (wilson, None, 1e-10),
              # Inspect's t quantile is its own bisection, not scipy's
              "harness_inspect_ci_wilson_cluster": (wilson, "task", 1e-6)}
    for name, (interval, cluster, rtol) in checks.items():
        res = protocols.get(name).evaluate(base, variant, clusters=codes)
        for i, (qb, qv) in enumerate(zip(_per_question(base), _per_question(variant))):
            (lo_b, hi_b), (lo_v, hi_v) = interval(qb, cluster), interval(qv, cluster)
            np.testing.assert_allclose([res.ci_low[i], res.ci_high[i]],
                                       [lo_v - hi_b, hi_v - lo_b], rtol=rtol, err_msg=name)
            assert res.significant[i] == _disjoint(lo_b, hi_b, lo_v, hi_v), name


def test_against_lm_eval_itself():
    """lm-eval's own ``mean_stderr`` (skipped where lm-eval is not installed: it is heavy)."""
    metrics = pytest.importorskip("lm_eval.api.metrics")
    base, variant, _ = _data()
    res = protocols.get("harness_lm_eval_comparator").evaluate(base, variant)
    for i, (qb, qv) in enumerate(zip(_per_question(base), _per_question(variant))):
        z = (np.mean(qv) - np.mean(qb)) / math.hypot(metrics.mean_stderr(qb),
                                                     metrics.mean_stderr(qv))
        np.testing.assert_allclose(res.p_value[i], 2 * stats.norm.sf(abs(z)), rtol=1e-10)


# --------------------------------------------------------------------------------------------
# Null rejection rates: two identical models, iid binary questions

N, P, SIMS = 100, 0.7, 4000


def _exact_null_rates():
    """Exact rejection rates at alpha = 0.05 by enumerating the two models' independent
    Binomial(N, P) correct counts (k = 1): the overlap of the normal intervals (SE
    sqrt(a (1 - a) / (N - 1)), the stdev of 0/1 scores over sqrt(N)), the comparator z, and
    the overlap of statsmodels' Wilson intervals."""
    x = np.arange(N + 1)
    weight = np.outer(stats.binom.pmf(x, N, P), stats.binom.pmf(x, N, P))
    acc = x / N
    se = np.sqrt(acc * (1 - acc) / (N - 1))
    diff = np.abs(acc[None, :] - acc[:, None])
    lo, hi = proportion_confint(x, N, 0.05, method="wilson")
    return {
        "overlap": float((weight * (diff > Z95 * (se[:, None] + se[None, :]))).sum()),
        "comparator": float((weight * (diff > Z95 * np.hypot(se[:, None], se[None, :]))).sum()),
        "wilson": float((weight * ((lo[None, :] > hi[:, None]) | (lo[:, None] > hi[None, :])))
                        .sum()),
    }


def test_null_rates_of_two_identical_models_on_iid_questions():
    """Monte Carlo, 4,000 null experiments (n = 100 iid binary questions, both models right
    with probability 0.7, independently): each protocol's rate is the exact enumerated rate
    within 4.5 binomial SEs; the overlap rules reject far below alpha (exact 0.6% for the
    normal intervals: their z threshold is sqrt(2) * 1.96) and the comparator near alpha.
    The bootstrap's SE is random, so it is held to the overlap rule's bound only."""
    exact = _exact_null_rates()
    assert exact["overlap"] < 0.01 and exact["wilson"] < 0.01
    assert abs(exact["comparator"] - 0.05) < 0.01
    rng = np.random.default_rng(2024)
    base = rng.random((SIMS, 1, N)) < P
    variant = rng.random((SIMS, 1, N)) < P
    batch = ScoreBatch.from_arrays(base, variant)
    reference = {"harness_lm_eval_overlap": "overlap", "harness_inspect_stderr": "overlap",
                 "harness_lm_eval_comparator": "comparator",
                 "harness_inspect_ci_wilson": "wilson"}
    for name, key in reference.items():
        rate = protocols.get(name).evaluate(batch).significant.mean()
        se = math.sqrt(exact[key] * (1 - exact[key]) / SIMS)
        assert abs(rate - exact[key]) <= 4.5 * se, (name, rate, exact[key])
    rate = protocols.get("harness_inspect_bootstrap").evaluate(batch, rng=1).significant.mean()
    se_half_alpha = math.sqrt(0.025 * 0.975 / SIMS)
    assert rate <= 0.025 - 4.5 * se_half_alpha, rate


# --------------------------------------------------------------------------------------------
# Default selections: harness protocols run only when named


def test_default_lists_leave_the_harness_protocols_out():
    """calibration's ``applicable_protocols``, ``design_check`` and ``evaluate`` select no
    harness reproduction unless named; ``--harness-defaults`` adds all of them."""
    from protocols.analysis.protocol_table import evaluate_protocols
    from sim import design_check as dc
    from sim import generators
    from sim.grid.runner import applicable_protocols

    harness = {n for n in protocols.names() if protocols.protocol_class(n).harness}
    assert set(PART_A) <= harness
    g = generators.get("question_mixture", n_questions=50)
    assert not harness & set(applicable_protocols(g, [1, 3]))
    named = applicable_protocols(g, [1, 3], ["harness_lm_eval_comparator"])
    assert list(named) == ["harness_lm_eval_comparator"]
    assert not harness & set(dc.CheckGrid().protocol_names())
    grid = dc.CheckGrid(protocols=("paired_t_questions",), harness_defaults=True)
    assert grid.protocol_names() == ["paired_t_questions", *sorted(harness)]
    base, variant, _ = _data(batch=1)
    rows, _ = evaluate_protocols(base[0], variant[0], kind="models")
    assert not harness & {r.protocol for r in rows}
    rows, _ = evaluate_protocols(base[0], variant[0], kind="models",
                                 protocols=["harness_inspect_ci_wilson"])
    assert [r.protocol for r in rows] == ["harness_inspect_ci_wilson"]


def test_design_check_harness_defaults_table(tmp_path):
    """``--harness-defaults`` puts every harness protocol in the table, labelled for the
    design; the option's value is validated."""
    from sim import design_check as dc

    frame = dc.design_check(dc.CheckGrid(kinds=("models",), questions=(40,), repeats=(1,),
                                         sims=50, protocols=("paired_t_questions",),
                                         harness_defaults=True))
    assert set(PART_A) - {"harness_inspect_stderr_cluster",
                          "harness_inspect_ci_wilson_cluster"} <= set(frame["protocol"])
    assert not frame.loc[frame["protocol"].isin(PART_A), "reportable"].any()
    with pytest.raises(ValueError, match="'--harness-defaults'.*True or False.*Got 'yes'"):
        dc.CheckGrid(harness_defaults="yes")


def test_design_check_cli_option(tmp_path, capsys):
    """``python -m sim.design_check --harness-defaults`` (in process, through ``main``) writes
    the harness rows to its CSV and prints them; without it none appear."""
    import pandas as pd

    from sim import design_check as dc

    common = ["--design", "models", "--questions", "40", "--repeats", "1", "--sims", "30",
              "--protocols", "paired_t_questions", "--quiet"]
    assert dc.main([*common, "--harness-defaults", "--out", str(tmp_path / "with")]) == 0
    assert "harness_lm_eval_comparator" in capsys.readouterr().out
    rows = pd.read_csv(tmp_path / "with" / "design_check.csv")
    assert {"harness_lm_eval_overlap", "harness_inspect_ci_wilson"} <= set(rows["protocol"])
    assert dc.main([*common, "--out", str(tmp_path / "without")]) == 0
    rows = pd.read_csv(tmp_path / "without" / "design_check.csv")
    assert set(rows["protocol"]) == {"paired_t_questions"}
