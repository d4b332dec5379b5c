"""The many-arm comparisons on a batch of experiments
(:func:`protocols.analysis.arms.compare_batch`, what the decision grid's many-arm families
call) give, experiment by experiment, what ``evaluate``'s comparisons print for that
experiment alone (:func:`protocols.analysis.compare.compare_arms`, at the same integer
seed), under every correction and design; and its numbers equal independent references
(statsmodels' Holm, scipy's t intervals at ``alpha / C``, a brute-force sign-flip max-T)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from evalcal_core.designs import COMPARE_METHODS, COMPARE_MODELS, Design
from evalcal_core.scores import ArmScores
from protocols import multiplicity as mt
from protocols.analysis.arms import compare_batch
from protocols.analysis.compare import compare_arms
from protocols.analysis.primary import primary_name, primary_result

SIMS = 5
ALPHA = 0.05


def _arm_scores(x, design, codes):
    m, runs, n = x.shape
    return ArmScores(arms=tuple(f"a{i}" for i in range(m)), scores=x,
                     question_ids=tuple(f"q{j}" for j in range(n)),
                     run_ids=tuple(str(r) for r in range(runs)),
                     clusters=None if codes is None else np.array([f"c{c}" for c in codes]),
                     cluster_name=design.cluster)


# (design, binary, cluster code per question or None)
DESIGNS = {
    "paired seeds": (Design(compare=COMPARE_METHODS, paired=True, runs=8, n_questions=1),
                     False, None),
    "independent seeds": (Design(compare=COMPARE_METHODS, paired=False, runs=4,
                                 n_questions=1), False, None),
    "one 0/1 run": (Design(compare=COMPARE_MODELS, runs=1, n_questions=80), True, None),
    "repeats": (Design(compare=COMPARE_MODELS, runs=3, n_questions=40), True, None),
    "clusters": (Design(compare=COMPARE_MODELS, runs=1, n_questions=60, cluster="topic",
                        n_clusters=12), True, np.arange(60) % 12),
}


def _draw(design, binary, rng, m=4):
    shape = (SIMS, m, design.runs, design.n_questions)
    if binary:
        p = 0.55 + 0.1 * (np.arange(m) / m)[:, None, None]
        return (rng.random(shape) < p).astype(float)
    return 0.6 + 0.01 * np.arange(m)[:, None, None] + 0.02 * rng.standard_normal(shape)


@pytest.mark.parametrize("name", list(DESIGNS))
@pytest.mark.parametrize("correction", ["holm", "bonferroni", "bh", "none", "maxt"])
def test_batch_equals_evaluates_comparisons_experiment_by_experiment(name, correction):
    design, binary, codes = DESIGNS[name]
    x = _draw(design, binary, np.random.default_rng(3))
    comps = mt.many_to_one(x.shape[1])
    primary = primary_name(design, binary)
    batch = compare_batch(x, design, comps, primary=primary, alpha=ALPHA,
                          corrections=(correction,), codes=codes, seed=7)
    low, high = batch.bounds[correction]
    significant = batch.significant(correction, ALPHA)
    for i in range(SIMS):
        rows = compare_arms(_arm_scores(x[i], design, codes), design, alpha=ALPHA,
                            correction=correction, reference="a0", seed=7,
                            binary=binary).comparisons
        assert [r.variant for r in rows] == ["a1", "a2", "a3"]
        for j, row in enumerate(rows):
            assert row.estimate == pytest.approx(batch.estimate[i, j], abs=1e-12)
            assert row.p_value == pytest.approx(batch.p_value[i, j], abs=1e-12, nan_ok=True)
            assert row.sim_low == pytest.approx(low[i, j], abs=1e-12, nan_ok=True)
            assert row.sim_high == pytest.approx(high[i, j], abs=1e-12, nan_ok=True)
            assert row.significant == bool(significant[i, j])


@pytest.mark.parametrize("claim, margin", [("non-inferiority", 0.02), ("equivalence", 0.05),
                                           ("superiority", 0.0)])
@pytest.mark.parametrize("correction", ["holm", "maxt"])
@pytest.mark.parametrize("lower_is_better", [False, True])
def test_batch_claims_equal_evaluates(claim, margin, correction, lower_is_better):
    """Claims on paired seeds: the Bonferroni read-off under holm and the exact max-T tests
    at the margin under maxt, for a metric and a loss."""
    design, binary, codes = DESIGNS["paired seeds"]
    x = _draw(design, binary, np.random.default_rng(5))
    comps = mt.many_to_one(x.shape[1])
    batch = compare_batch(x, design, comps, primary="paired_t", alpha=ALPHA,
                          corrections=(correction,), seed=2, claim=claim, margin=margin,
                          lower_is_better=lower_is_better)
    source = batch.maxt if correction == "maxt" else batch
    for i in range(SIMS):
        out = compare_arms(_arm_scores(x[i], design, codes), design, alpha=ALPHA,
                           correction=correction, reference="a0", seed=2, claim=claim,
                           margin=margin, fraction=False, lower_is_better=lower_is_better)
        for j, row in enumerate(out.comparisons):
            assert row.claim == source.claim_verdicts[i, j]
            assert row.claim_low == pytest.approx(source.claim_low[i, j], abs=1e-12)
            assert row.claim_high == pytest.approx(source.claim_high[i, j], abs=1e-12)


def test_holm_and_bonferroni_intervals_equal_statsmodels_and_scipy():
    """Paired seeds: Holm's p is statsmodels' ``multipletests(method="holm")`` of the paired
    t p, and the holm interval is scipy's paired t interval at ``1 - alpha / C``."""
    design, binary, _ = DESIGNS["paired seeds"]
    x = _draw(design, binary, np.random.default_rng(9))
    comps = mt.many_to_one(x.shape[1])
    c = len(comps)
    batch = compare_batch(x, design, comps, primary="paired_t", alpha=ALPHA,
                          corrections=("holm",), seed=0)
    low, high = batch.bounds["holm"]
    for i in range(SIMS):
        metric = x[i, :, :, 0]
        tests = [stats.ttest_rel(metric[a], metric[b]) for a, b in comps]
        p = np.array([t.pvalue for t in tests])
        np.testing.assert_allclose(batch.p_value[i], p, rtol=1e-10)
        np.testing.assert_allclose(batch.p_adjusted["holm"][i],
                                   multipletests(p, method="holm")[1], rtol=1e-10)
        for j, t in enumerate(tests):
            ci = t.confidence_interval(1 - ALPHA / c)
            assert low[i, j] == pytest.approx(ci.low, rel=1e-10)
            assert high[i, j] == pytest.approx(ci.high, rel=1e-10)


def _tstat(d):
    return d.mean(axis=-1) / (d.std(axis=-1, ddof=1) / np.sqrt(d.shape[-1]))


def test_maxt_p_equals_a_brute_force_sign_flip_maxt():
    """Paired seeds (8: every sign pattern enumerated): the step-down max-T p of the first
    step (the largest |t|) is the share of the 2**8 joint sign patterns whose max |t|
    reaches it, counted here by brute force."""
    design, binary, _ = DESIGNS["paired seeds"]
    x = _draw(design, binary, np.random.default_rng(13))
    comps = mt.many_to_one(x.shape[1])
    batch = compare_batch(x, design, comps, primary="paired_t", alpha=ALPHA,
                          corrections=("maxt",), seed=0)
    for i in range(SIMS):
        d = np.stack([x[i, a, :, 0] - x[i, b, :, 0] for a, b in comps])      # (C, k)
        k = d.shape[1]
        observed = np.abs(_tstat(d))
        top = observed.max()
        maxima = [np.abs(_tstat(d * np.array(s))).max()
                  for s in itertools.product((-1.0, 1.0), repeat=k)]
        share = np.mean(np.array(maxima) >= top * (1 - 1e-9))
        assert batch.p_adjusted["maxt"][i, observed.argmax()] == pytest.approx(share,
                                                                              abs=1e-12)


def test_interval_only_runs_the_twin_and_keeps_the_primarys_pitfall():
    """t_signflip_questions' interval-only call is paired_t_questions' interval (the same
    arrays, no sign-flip law drawn), and reports t_signflip_questions as its protocol."""
    design, binary, _ = DESIGNS["repeats"]
    x = _draw(design, binary, np.random.default_rng(1))
    full = primary_result(design, x[:, 0], x[:, 1], 0.01, name="t_signflip_questions",
                          rng=np.random.default_rng(0))
    twin = primary_result(design, x[:, 0], x[:, 1], 0.01, name="t_signflip_questions",
                          rng=np.random.default_rng(0), interval_only=True)
    np.testing.assert_array_equal(full.ci_low, twin.ci_low)
    np.testing.assert_array_equal(full.ci_high, twin.ci_high)
    assert twin.protocol == "t_signflip_questions"
    # the paired t interval on the per-question deltas of the run means (scipy)
    d = x[:, 1].mean(axis=1) - x[:, 0].mean(axis=1)
    ref = stats.ttest_1samp(d, 0.0, axis=-1).confidence_interval(0.99)
    np.testing.assert_allclose(twin.ci_low, ref.low, rtol=1e-10)


def test_an_integer_seed_decides_each_experiment_as_it_would_alone():
    """An integer seed: each resampling step starts from it and one set of draws serves the
    batch, so an experiment's verdict on a sampled null (30 clusters) does not depend on
    the other experiments of its batch: the grid's verdict is the command's."""
    _, binary, _ = DESIGNS["clusters"]
    design = Design(compare=COMPARE_MODELS, runs=1, n_questions=60, cluster="topic",
                    n_clusters=30)
    codes = np.arange(60) % 30                              # 30 clusters: a sampled null
    x = _draw(design, binary, np.random.default_rng(2))
    comps = mt.many_to_one(x.shape[1])
    kw = dict(primary="cluster_cr2", alpha=ALPHA, corrections=("maxt",), codes=codes,
              n_draws=500)
    a = compare_batch(x, design, comps, seed=4, **kw)
    assert not a.maxt.joint.exact
    for i in range(SIMS):
        one = compare_batch(x[i:i + 1], design, comps, seed=4, **kw)
        np.testing.assert_array_equal(a.p_adjusted["maxt"][i], one.p_adjusted["maxt"][0])


def test_equal_variances_maxt_is_not_a_joint_null():
    design, binary, _ = DESIGNS["independent seeds"]
    x = _draw(design, binary, np.random.default_rng(0))
    with pytest.raises(ValueError, match="exact"):
        compare_batch(x, design, mt.many_to_one(4), primary="welch_t",
                      corrections=("maxt",), equal_variances=True)
