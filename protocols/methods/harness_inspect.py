"""Inspect's printed uncertainty per model, and the overlap verdict a reader draws from it.

UK AISI's Inspect (``inspect_ai/scorer/_metrics/std.py``, inspect-ai 0.3.285) prints each
model's score with one of these metrics; a reader comparing two models asks whether the two
95% intervals overlap (Inspect prints no test between models). Each protocol here computes
the metric for each model on its own and is significant iff the two models' ``1 - alpha``
intervals are disjoint (95% at alpha = 0.05):

``harness_inspect_stderr``
    ``stderr()``: ``np.std(values, ddof=1) / np.sqrt(n)`` (0 below two samples); the same
    number as lm-eval's ``acc_stderr``. Intervals ``mean +- z * stderr``.
``harness_inspect_stderr_cluster``
    ``stderr(cluster=...)`` (``_clustered_stderr``, "Appendix A of arXiv:2411.00640 ... with
    a finite cluster correction"): ``sqrt(C / (C - 1) * sum_c (sum_{i in c} (x_i -
    mean))**2) / N`` over ``C`` clusters and ``N`` samples, i.e. the CR1 variance of the mean
    with the ``C / (C - 1)`` factor only. Intervals ``mean +- z * stderr``.
``harness_inspect_bootstrap``
    ``bootstrap_stderr(num_samples=1000)``: ``np.std`` (ddof 0) of the means of
    ``num_samples`` resamples of the samples with replacement. Intervals ``mean +- z *
    bootstrap_stderr``. Inspect draws from numpy's global state; here from ``rng``.
``harness_inspect_ci_wilson``
    ``ci_wilson(level=0.95)``: the Wilson score interval of the mean as a binomial
    proportion, ``(p + c**2 / 2n) / (1 + c**2 / n) +- c sqrt(p (1 - p) / n + c**2 / 4n**2)
    / (1 + c**2 / n)`` with ``c = z_{1 - alpha/2}``, clipped to [0, 1].
``harness_inspect_ci_wilson_cluster``
    ``ci_wilson(cluster=...)``: the same with the Korn-Graubard effective size
    ``n* = min(p (1 - p) / v, n)`` (``v``: the clustered variance of the mean above; ``n``
    where ``p (1 - p)`` or ``v`` is 0) and the Student t critical value on ``C - 1`` df.

On evalcal's layout a model's per-sample score is its mean over its ``k`` runs, what
Inspect's default epoch reducer (``mean``) gives. The verdict is reported as one CI on the
difference, ``[lo_v - hi_b, hi_v - lo_b]``, which excludes 0 exactly when the two
intervals are disjoint; the normal-interval protocols also report the matching p-value
(:func:`~protocols.methods.harness_lm_eval.overlap_result`), the Wilson ones none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from evalcal_core.designs import MODELS, MODELS_CLUSTERED

from .._base import CLUSTERS_IGNORED, SEEDS_IGNORED, register
from .._bootstrap_z import ReplicateZProtocol
from .._replicate_law import question_mean_law, rows
from .._result import make_result
from .cluster_robust import cluster_sums
from .harness_lm_eval import (
    OVERLAP_UNPAIRED,
    HarnessLmEvalOverlap,
    _PerModelHarness,
    overlap_result,
)
from .question_bootstrap import _bootstrap_means

#: why a cluster-robust non-overlap rule misleads where no clusters are declared
FOR_CLUSTERS = "for clustered questions; non-overlap of two intervals is conservative"


def clustered_stderr(values, codes, n_clusters):
    """Inspect's ``stderr(cluster=...)`` of the mean along the last axis.

    Parameters
    ----------
    values : ndarray, shape (..., n)
        Per-question scores of one model (fraction).
    codes : ndarray of int, shape (n,)
        Cluster of each question, ``0 .. n_clusters - 1``.
    n_clusters : int
        C >= 2.

    Returns
    -------
    mean, se : ndarray, shape (...)
        ``mean(values)`` and ``sqrt(C / (C - 1) * sum_c S_c**2) / n`` with ``S_c`` the
        cluster sums of ``values - mean`` (fraction).
    """
    n = values.shape[-1]
    mean = values.mean(axis=-1)
    sums = cluster_sums(values - mean[..., None], codes, n_clusters)
    c = n_clusters
    return mean, np.sqrt((sums**2).sum(axis=-1) * c / (c - 1)) / n


def wilson_interval(p, n, critical):
    """Wilson score interval of a proportion ``p`` of ``n`` trials, clipped to [0, 1].

    Parameters
    ----------
    p : ndarray
        Proportion (fraction in [0, 1]).
    n : ndarray or float
        Number of trials (may be an effective, non-integer size).
    critical : float
        Critical value (``z_{1 - alpha/2}``, or a t quantile).

    Returns
    -------
    low, high : ndarray
    """
    c2 = critical * critical
    denominator = 1.0 + c2 / n
    center = (p + c2 / (2.0 * n)) / denominator
    half = critical * np.sqrt(p * (1.0 - p) / n + c2 / (4.0 * n * n)) / denominator
    return np.clip(center - half, 0.0, 1.0), np.clip(center + half, 0.0, 1.0)


def disjoint_result(estimate, base_interval, variant_interval):
    """The verdict "the two intervals are disjoint", as a CI on the difference.

    ``[lo_v - hi_b, hi_v - lo_b]`` excludes 0 exactly when the intervals are disjoint; no
    p-value.
    """
    (lo_b, hi_b), (lo_v, hi_v) = base_interval, variant_interval
    low, high = lo_v - hi_b, hi_v - lo_b
    return make_result(estimate, low, high, None, (low > 0.0) | (high < 0.0))


@register
@dataclass(frozen=True)
class HarnessInspectStderr(HarnessLmEvalOverlap):
    """Inspect's ``stderr()`` per model; significant iff ``mean +- 1.96 stderr`` of the two
    models do not overlap (what a reader of Inspect's "accuracy +- stderr" does).

    ``stderr()`` is ``np.std(values, ddof=1) / np.sqrt(n)``, the formula of lm-eval's
    ``acc_stderr``, so this protocol gives the verdicts of ``harness_lm_eval_overlap``.
    """

    name = "harness_inspect_stderr"
    summary = "Inspect stderr() per model: the mean +- 1.96 stderr intervals do not overlap"
    harness = "Inspect stderr(), interval overlap"


@register
@dataclass(frozen=True)
class HarnessInspectStderrCluster(_PerModelHarness):
    """Inspect's ``stderr(cluster=...)`` per model; significant iff the two models'
    ``mean +- 1.96 stderr`` intervals do not overlap.

    The clustered SE is ``sqrt(C / (C - 1) sum_c S_c**2) / N`` (:func:`clustered_stderr`):
    CR1 with the cluster factor only, and a normal quantile whatever the number of clusters.
    """

    name = "harness_inspect_stderr_cluster"
    summary = "Inspect stderr(cluster=) per model: the 95% intervals do not overlap"
    harness = "Inspect stderr(cluster=...), interval overlap"
    needs_clusters = True
    pitfall_for = {MODELS: FOR_CLUSTERS, MODELS_CLUSTERED: OVERLAP_UNPAIRED}

    def _evaluate(self, batch, alpha, rng):
        codes, g = batch.clusters, batch.n_clusters
        _, se_b = clustered_stderr(batch.question_base, codes, g)
        _, se_v = clustered_stderr(batch.question_variant, codes, g)
        return overlap_result(batch, se_b, se_v, alpha)


@register
@dataclass(frozen=True)
class HarnessInspectBootstrap(ReplicateZProtocol):
    """Inspect's ``bootstrap_stderr(num_samples=1000)`` per model; significant iff the two
    models' ``mean +- 1.96 bootstrap_stderr`` intervals do not overlap.

    Each model's questions are resampled on their own (``np.random.choice(values, n)``,
    ``num_samples`` times); its SE is ``np.std`` of the resample means with ddof 0, i.e.
    ``sqrt((B - 1) / B)`` times the replicates' sd (ddof 1) that
    :meth:`~protocols._bootstrap_z.ReplicateZProtocol._summary` gives.

    Parameters
    ----------
    n_resamples : int, default 1000
        Inspect's ``num_samples`` (alias ``B``).
    replicates : {'drawn', 'summary'}, default 'drawn'
        As in :class:`~protocols._bootstrap_z.ReplicateZProtocol`.
    """

    reads_runs = False

    name = "harness_inspect_bootstrap"
    summary = "Inspect bootstrap_stderr() per model: the 95% intervals do not overlap"
    harness = "Inspect bootstrap_stderr(num_samples=1000), interval overlap"
    needs_questions = True
    pitfall = SEEDS_IGNORED
    valid_for = frozenset()
    pitfall_for = {MODELS: OVERLAP_UNPAIRED, MODELS_CLUSTERED: CLUSTERS_IGNORED}

    def _evaluate(self, batch, alpha, rng):
        b = self.n_resamples
        ses = []
        for arm in ("base", "variant"):
            per_question = getattr(batch, f"question_{arm}")
            counts = getattr(batch, f"correct_{arm}") if batch.binary else None

            def drawn(mask, per_question=per_question, counts=counts):
                return _bootstrap_means(rows(per_question, mask), rows(counts, mask),
                                            batch.k, b, rng)

            _, sd = self._summary(batch.batch_shape,
                                  lambda per_question=per_question:
                                  question_mean_law(per_question), rng, drawn)
            ses.append(sd * np.sqrt((b - 1.0) / b))
        return overlap_result(batch, ses[0], ses[1], alpha)


@register
@dataclass(frozen=True)
class HarnessInspectCiWilson(_PerModelHarness):
    """Inspect's ``ci_wilson()`` per model; significant iff the two models' Wilson
    intervals (level ``1 - alpha``) do not overlap.

    Binary scores only (Inspect accepts any value in [0, 1] and is then conservative); a
    model's per-question mean over its k runs is its score, in [0, 1].
    """

    name = "harness_inspect_ci_wilson"
    summary = "Inspect ci_wilson() per model: the two Wilson 95% intervals do not overlap"
    harness = "Inspect ci_wilson(), interval overlap"
    binary = True
    pitfall_for = {MODELS: OVERLAP_UNPAIRED, MODELS_CLUSTERED: CLUSTERS_IGNORED}

    def _evaluate(self, batch, alpha, rng):
        qb, qv = batch.question_base, batch.question_variant
        n = qb.shape[-1]
        critical = special.ndtri(1.0 - alpha / 2.0)
        pb, pv = qb.mean(axis=-1), qv.mean(axis=-1)
        return disjoint_result(pv - pb, wilson_interval(pb, n, critical),
                               wilson_interval(pv, n, critical))


@register
@dataclass(frozen=True)
class HarnessInspectCiWilsonCluster(_PerModelHarness):
    """Inspect's ``ci_wilson(cluster=...)`` per model; significant iff the two models'
    Korn-Graubard Wilson intervals (level ``1 - alpha``) do not overlap.

    Per model: ``v = clustered_stderr**2`` (:func:`clustered_stderr`), effective size
    ``n* = min(p (1 - p) / v, n)`` where ``p (1 - p) > 0`` and ``v > 0`` (else ``n``), and
    the critical value ``t_{1 - alpha/2, C - 1}`` in the Wilson formula.
    """

    name = "harness_inspect_ci_wilson_cluster"
    summary = "Inspect ci_wilson(cluster=) per model: the Wilson intervals do not overlap"
    harness = "Inspect ci_wilson(cluster=...) (Korn-Graubard), interval overlap"
    binary = True
    needs_clusters = True
    pitfall_for = {MODELS: FOR_CLUSTERS, MODELS_CLUSTERED: OVERLAP_UNPAIRED}

    def _evaluate(self, batch, alpha, rng):
        codes, g = batch.clusters, batch.n_clusters
        n = batch.n
        critical = stats.t.ppf(1.0 - alpha / 2.0, g - 1)
        intervals, means = [], []
        for values in (batch.question_base, batch.question_variant):
            p, se = clustered_stderr(values, codes, g)
            v, spread = se**2, p * (1.0 - p)
            usable = (spread > 0.0) & (v > 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                n_eff = np.where(usable, np.minimum(spread / v, n), float(n))
            intervals.append(wilson_interval(p, n_eff, critical))
            means.append(p)
        return disjoint_result(means[1] - means[0], intervals[0], intervals[1])
