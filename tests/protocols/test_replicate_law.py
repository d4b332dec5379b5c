"""``replicates="summary"``: the z-bootstraps' replicate mean and SD drawn from their law.

References:

* the replicate's mean, variance and fourth cumulant against exact enumeration of every
  equally likely resample (small n, so the law is far from normal and every term counts);
* the drawn summaries against drawn replicates: the same distribution (two-sample KS test,
  and the mean and variance of the replicate variance within Monte Carlo error);
* rejection rates of every z-bootstrap protocol with ``summary`` against ``drawn`` on the
  same simulated experiments (a paired comparison: discordant decisions must balance);
* ``paired_two_level``'s count path against its array path (``two_level_variance``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

import protocols
from protocols import ScoreBatch
from protocols._batch import PoolScores
from protocols._replicate_law import (
    MAX_EXCESS_KURTOSIS,
    ReplicateLaw,
    draw_summary,
    question_mean_law,
    replicate_summary,
    run_pick_law,
    summary_applies,
)
from protocols._resample import resampled_means, resampled_run_picks
from protocols.methods.paired_two_level import two_level_variance, two_level_variance_binary

Z_BOOTSTRAPS = ["question_bootstrap", "paired_question_bootstrap", "run_bootstrap",
                "run_bootstrap_sqrt_b"]
#: logit effect per protocol that puts its rejection rate between 10% and 90% below
MODERATE_EFFECT = {"question_bootstrap": 0.3, "paired_question_bootstrap": 0.06,
                   "run_bootstrap": 0.4, "run_bootstrap_sqrt_b": 0.02}


def _cumulants(values, weights):
    """Mean, variance and fourth cumulant of a discrete law."""
    mean = np.sum(weights * values)
    m2 = np.sum(weights * (values - mean) ** 2)
    m4 = np.sum(weights * (values - mean) ** 4)
    return mean, m2, m4 - 3 * m2**2


def test_question_mean_law_is_exact_by_enumeration():
    values = np.array([0.0, 0.25, 1.0, 1.0, 0.5])
    n = values.size
    means = np.array([values[list(idx)].mean()
                      for idx in itertools.product(range(n), repeat=n)])
    exact = _cumulants(means, np.full(means.size, 1 / means.size))
    law = question_mean_law(values)
    np.testing.assert_allclose([law.mean, law.var, law.kappa4], exact, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("binary", [True, False])
def test_run_pick_law_is_exact_by_enumeration(binary):
    rng = np.random.default_rng(4)
    k, n = 3, 4
    scores = (rng.random((k, n)) < 0.5).astype(float) if binary else rng.random((k, n))
    picks = np.array([scores[list(runs), range(n)].mean()
                      for runs in itertools.product(range(k), repeat=n)])
    exact = _cumulants(picks, np.full(picks.size, 1 / picks.size))
    law = (run_pick_law(correct=scores.sum(axis=0).astype(np.int64), k=k) if binary
           else run_pick_law(scores))
    np.testing.assert_allclose([law.mean, law.var, law.kappa4], exact, rtol=1e-12, atol=1e-15)


def test_difference_of_independent_laws():
    a = ReplicateLaw(np.array(0.5), np.array(2.0), np.array(-1.0))
    b = ReplicateLaw(np.array(0.2), np.array(3.0), np.array(0.5))
    d = a - b
    assert (float(d.mean), float(d.var), float(d.kappa4)) == pytest.approx((0.3, 5.0, -0.5))


@pytest.mark.parametrize("kind", ["question", "run"])
def test_drawn_summaries_follow_the_replicates_law(kind):
    """2,000 summaries from the law against 2,000 sets of B = 40 drawn replicates."""
    rng = np.random.default_rng(11)
    reps, b = 2000, 40
    if kind == "question":
        values = (rng.random(300) < 0.8).astype(float) * rng.random(300)
        law = question_mean_law(np.broadcast_to(values, (reps, 300)))
        drawn = resampled_means(np.broadcast_to(values, (reps, 300)), b, rng)
    else:
        scores = (rng.random((4, 300)) < 0.7).astype(float)
        law = run_pick_law(np.broadcast_to(scores, (reps, 4, 300)))
        drawn = resampled_run_picks(np.broadcast_to(scores, (reps, 4, 300)), b, rng)
    assert summary_applies(law).all()
    mean, sd = draw_summary(law, b, np.random.default_rng(12))
    drawn_mean, drawn_sd = drawn.mean(axis=-1), drawn.std(axis=-1, ddof=1)
    # Same distributions (a false alarm at the 1e-3 level on a correct law).
    assert stats.ks_2samp(sd, drawn_sd).pvalue > 1e-3
    assert stats.ks_2samp(mean, drawn_mean).pvalue > 1e-3
    # The variance of B replicates: its mean and its spread, each within 4 MC SE.
    var, drawn_var = sd**2, drawn_sd**2
    se_mean = np.sqrt(var.var() / reps + drawn_var.var() / reps)
    assert abs(var.mean() - drawn_var.mean()) < 4 * se_mean
    sigma2 = float(law.var[0])
    spread = 2 * sigma2**2 / (b - 1) + float(law.kappa4[0]) / b
    # The sample variance of `reps` draws of s^2 has relative SE sqrt((2 + excess) / reps);
    # s^2 is near gamma with shape sigma^4 / spread, whose excess kurtosis is 6 / shape.
    excess = 6 * spread / sigma2**2
    for v in (var, drawn_var):
        assert abs(v.var(ddof=1) / spread - 1) < 4 * np.sqrt((2 + excess) / reps)


def test_far_from_normal_replicates_are_resampled():
    spread = [0.2, 0.4, 0.6, 0.8] * 500
    one_differs = [1.0] + [0.0] * 1999   # a replicate is ~Poisson(1)/n: far from normal
    law = question_mean_law(np.array([spread, one_differs]))
    applies = summary_applies(law)
    assert list(applies) == [True, False]
    calls = []

    def drawn(mask):
        calls.append(mask.copy())
        return np.tile([1.0, 3.0], (int(mask.sum()), 1))

    mean, sd = replicate_summary(law, 2, np.random.default_rng(0), drawn)
    assert len(calls) == 1 and list(calls[0]) == [False, True]
    assert (mean[1], sd[1]) == (2.0, pytest.approx(np.sqrt(2.0)))


def test_zero_variance_is_resampled_not_drawn():
    law = question_mean_law(np.full((3, 50), 0.5))
    assert not summary_applies(law).any()
    assert MAX_EXCESS_KURTOSIS < 1


def _experiments(k, n, sims, effect, seed):
    # Per-question difficulty shared by the seeds, seed effects, paired arms: a small
    # seed_question-like world with moderate rates.
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(1.5, 1.5, (sims, 1, n))
    seed_effect = rng.normal(0, 0.15, (sims, k, 1))
    noise = rng.normal(0, 0.5, (sims, k, n))
    logit_b = difficulty + seed_effect + noise
    logit_v = logit_b + effect + rng.normal(0, 0.3, (sims, k, n))
    u = rng.random((sims, k, n))
    return u < 1 / (1 + np.exp(-logit_b)), u < 1 / (1 + np.exp(-logit_v))


@pytest.mark.parametrize("name", Z_BOOTSTRAPS)
def test_summary_rates_match_drawn_rates(name):
    """Paired comparison on the same 3,000 experiments: the discordant decisions (one mode
    rejects, the other does not) must split evenly, an exact binomial (McNemar) test."""
    base, variant = _experiments(k=4, n=400, sims=3000, effect=MODERATE_EFFECT[name], seed=1)
    batch = ScoreBatch(base, variant, True)
    drawn = protocols.get(name, n_resamples=200).evaluate(batch, rng=5).significant
    summary = protocols.get(name, n_resamples=200, replicates="summary").evaluate(
        batch, rng=6).significant
    only_drawn = int((drawn & ~summary).sum())
    only_summary = int((summary & ~drawn).sum())
    assert 0.1 < drawn.mean() < 0.9, "the cell must not be degenerate"
    p = stats.binomtest(only_drawn, only_drawn + only_summary).pvalue
    assert p > 1e-3, (only_drawn, only_summary, drawn.mean(), summary.mean())


@pytest.mark.parametrize("name", Z_BOOTSTRAPS)
def test_summary_is_the_same_on_every_batch_kind(name):
    rng = np.random.default_rng(2)
    base = rng.random((9, 300)) < 0.7
    variant = rng.random((9, 300)) < 0.75
    order = np.argsort(rng.random((6, 9)), axis=1)[:, :4]
    proto = protocols.get(name, n_resamples=100, replicates="summary")
    ref = proto.evaluate(base[order].astype(float), variant[order].astype(float), rng=3)
    pool = PoolScores(base, variant, binary=True)
    for batch in (ScoreBatch(base[order], variant[order], True),
                  ScoreBatch.from_pool(pool, order)):
        got = proto.evaluate(batch, rng=3)
        for field in ("estimate", "ci_low", "ci_high", "p_value", "significant"):
            assert np.array_equal(getattr(got, field), getattr(ref, field), equal_nan=True)


def test_replicates_parameter_is_validated():
    with pytest.raises(ValueError, match="'replicates' parameter of question_bootstrap"):
        protocols.get("question_bootstrap", replicates="fast")


@pytest.mark.parametrize("k,n", [(2, 2), (2, 5), (3, 50), (10, 1000)])
@pytest.mark.parametrize("kind", ["random", "lattice", "constant"])
def test_two_level_count_path_equals_array_path(k, n, kind):
    rng = np.random.default_rng(k * n)
    m = 500
    if kind == "random":
        b = rng.random((m, k, n)) < 0.7
        v = np.where(rng.random((m, k, n)) < 0.8, b, rng.random((m, k, n)) < 0.75)
    elif kind == "lattice":
        b = np.broadcast_to(np.arange(n) % 3 == 0, (m, k, n)).copy()
        v = b.copy()
        v[:, ::2, :1] = ~v[:, ::2, :1]
    else:
        b = np.ones((m, k, n), bool)
        v = b.copy()
    ref = two_level_variance(v.astype(float) - b)
    got = two_level_variance_binary(v.mean(-1) - b.mean(-1),
                                    v.sum(-2).astype(np.int64) - b.sum(-2),
                                    (v != b).sum(-1), n)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=0)
