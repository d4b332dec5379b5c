"""The design's primary protocol on a batch of experiments
(:func:`protocols.analysis.primary.primary_result`, what the decision grid's families call)
gives, experiment by experiment, the numbers ``evaluate``'s comparison prints for that
experiment alone (:func:`protocols.analysis.compare.compare_arms`), for every design; the
protocol it runs is the registered protocol's own result (independent of the analysis
layer); and a pitfall at the shape on a real pool withholds every verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import protocols
from evalcal_core.designs import COMPARE_METHODS, COMPARE_MODELS, Design
from evalcal_core.scores import ArmScores
from protocols.analysis.compare import compare_arms
from protocols.analysis.evidence import TABLE
from protocols.analysis.primary import primary_result

SIMS = 6


def _scores(rng, sims, runs, n, binary):
    shape = (sims, 2, runs, n)
    if binary:
        return (rng.random(shape) < 0.6).astype(float)
    return 0.6 + 0.05 * rng.standard_normal(shape)


DESIGNS = [
    # (design, binary, clusters per question or None, expected primary)
    (Design(compare=COMPARE_METHODS, paired=True, runs=5, n_questions=40), False, None,
     "paired_t"),
    (Design(compare=COMPARE_METHODS, paired=False, runs=5, n_questions=40), False, None,
     "welch_t"),
    (Design(compare=COMPARE_MODELS, runs=1, n_questions=60), True, None, "mcnemar"),
    (Design(compare=COMPARE_MODELS, runs=3, n_questions=60), True, None,
     "t_signflip_questions"),
    (Design(compare=COMPARE_MODELS, runs=1, n_questions=60, cluster="topic", n_clusters=12),
     True, np.arange(60) % 12, "cluster_cr2"),
]


@pytest.mark.parametrize("design, binary, codes, expected", DESIGNS,
                         ids=[d[3] for d in DESIGNS])
def test_batch_equals_evaluates_comparison_experiment_by_experiment(design, binary, codes,
                                                                    expected):
    rng = np.random.default_rng(11)
    x = _scores(rng, SIMS, design.runs, design.n_questions, binary)
    seed = 4
    batch = primary_result(design, x[:, 0], x[:, 1], 0.05, binary=binary, clusters=codes,
                           rng=np.random.default_rng(seed))
    assert batch.protocol == expected
    # the registered protocol's own result on the same batch (the analysis layer bypassed)
    kwargs = {"exact": True} if expected == "mcnemar" else {}
    args = (x[:, 0], x[:, 1])
    if expected in ("paired_t", "welch_t"):
        args = (x[:, 0].mean(axis=-1), x[:, 1].mean(axis=-1))
        args = tuple(a[..., None] for a in args)
    extra = {"clusters": codes} if codes is not None else {}
    own = protocols.get(expected, **kwargs).evaluate(*args, 0.05,
                                                     rng=np.random.default_rng(seed), **extra)
    np.testing.assert_array_equal(batch.estimate, own.estimate)
    np.testing.assert_array_equal(batch.ci_low, own.ci_low)
    np.testing.assert_array_equal(batch.p_value, own.p_value)
    # t_signflip_questions' p draws a sign-flip law from the stream, so one experiment alone
    # gets other flips: its estimate and (t) interval are compared, not its p
    exact_p = expected != "t_signflip_questions"
    for i in range(SIMS):
        scores = ArmScores(arms=("base", "new"), scores=x[i],
                           question_ids=tuple(f"q{j}" for j in range(design.n_questions)),
                           run_ids=tuple(str(r) for r in range(design.runs)),
                           clusters=None if codes is None else np.array(
                               [f"c{c}" for c in codes]),
                           cluster_name=design.cluster)
        row = compare_arms(scores, design, seed=seed, binary=binary).comparisons[0]
        assert row.protocol == expected
        assert row.estimate == pytest.approx(batch.estimate[i], abs=1e-12)
        assert row.ci_low == pytest.approx(batch.ci_low[i], abs=1e-12)
        assert row.ci_high == pytest.approx(batch.ci_high[i], abs=1e-12)
        if exact_p:
            assert row.p_value == pytest.approx(batch.p_value[i], abs=1e-12)


def test_unequal_seed_counts_are_welchs_t_on_each_seeds_metric():
    """4 seeds beside 9: Welch's statistic equals scipy's (its df is bounded below scipy's
    plug-in df, so only the statistic is compared: estimate / half-width ratio)."""
    from scipy import stats
    rng = np.random.default_rng(2)
    base, variant = rng.standard_normal((SIMS, 4, 1)), 0.3 + rng.standard_normal((SIMS, 9, 1))
    design = Design(compare=COMPARE_METHODS, paired=False, runs=4)
    r = primary_result(design, base, variant, 0.05, binary=False)
    ref = stats.ttest_ind(variant[..., 0], base[..., 0], axis=-1, equal_var=False)
    se = np.sqrt(base[..., 0].var(axis=-1, ddof=1) / 4 + variant[..., 0].var(axis=-1, ddof=1) / 9)
    np.testing.assert_allclose(r.estimate / se, ref.statistic, rtol=1e-12)
    assert r.protocol == "welch_t"


def _real_invalid(n, runs, clusters):
    t = pd.read_csv(TABLE)
    row = t[(t["kind"] == "models_clustered") & (t["protocol"] == "cluster_cr2")
            & (t["effect_pp"] == 0) & (t["pool_models"] > 0) & (t["n_questions"] == n)
            & (t["runs"] == runs) & (t["clusters"] == clusters)]
    return bool(len(row)) and bool((row["state"] == "invalid").all())


def test_a_pitfall_at_the_shape_withholds_every_verdict():
    """3 clusters, 100 questions, one run: the shipped table's real cell of that shape is
    invalid (read here with pandas), so no experiment gets a p, an interval or a verdict."""
    assert _real_invalid(100, 1, 3)
    design = Design(compare=COMPARE_MODELS, runs=1, n_questions=100, cluster="topic",
                    n_clusters=3)
    rng = np.random.default_rng(0)
    x = _scores(rng, SIMS, 1, 100, True)
    r = primary_result(design, x[:, 0], x[:, 1], 0.05, binary=True,
                       clusters=np.arange(100) % 3)
    assert r.pitfall.startswith("over its level on a real pool")
    assert r.degenerate.all() and not r.significant.any()
    assert np.isnan(r.p_value).all() and np.isnan(r.ci_low).all()
    np.testing.assert_allclose(r.estimate, x[:, 1].mean(axis=(-1, -2)) - x[:, 0].mean(
        axis=(-1, -2)), atol=1e-12)


def test_the_primary_is_named_or_picked_from_binary():
    design = Design(compare=COMPARE_MODELS, runs=1, n_questions=10)
    x = np.zeros((2, 1, 10))
    with pytest.raises(TypeError, match="binary="):
        primary_result(design, x, x, 0.05)
