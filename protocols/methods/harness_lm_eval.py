"""``harness_lm_eval_overlap`` and ``harness_lm_eval_comparator``: what lm-eval prints.

EleutherAI's lm-evaluation-harness reports, per task, ``acc`` (the mean of the per-item
scores) and ``acc_stderr``. For a metric aggregated by ``mean``, ``stderr_for_metric``
(``lm_eval/api/metrics.py``, v0.4.13) returns ``mean_stderr``::

    sample_stddev(arr) = sqrt(sum((x - mean(arr))**2) / (len(arr) - 1))
    mean_stderr(arr) = sample_stddev(arr) / sqrt(len(arr))

(``lm_eval/evaluator_utils.py`` prints "N/A" below two items). That is the sample standard
deviation (ddof 1) of the per-item scores over ``sqrt(n)``. On evalcal's layout a model's
per-item score is its mean over its ``k`` runs (``ScoreBatch.question_base``), so
``acc_stderr = sd(question_means, ddof=1) / sqrt(n)`` per model, each model on its own: the
pairing of the questions across the two models is never used.

Two decisions users make from it are registered here:

* ``harness_lm_eval_overlap``: the two models' intervals ``acc +- z * acc_stderr`` do not
  overlap (``z = 1.96`` at alpha = 0.05);
* ``harness_lm_eval_comparator``: ``scripts/model_comparator.py`` (``calculate_z_value``):
  ``Z = (acc1 - acc2) / sqrt(se1**2 + se2**2)``, ``p = 2 * norm.sf(|Z|)``; the script prints
  whether ``p > alpha``, and the decision here is ``p < alpha`` (the same but at equality).

Non-overlap of two ``1 - alpha`` normal intervals is the z-test with standard error
``se_b + se_v`` instead of ``sqrt(se_b**2 + se_v**2)``: ``|d| > z (se_b + se_v)`` exactly
when the intervals are disjoint. So :func:`overlap_result` reports the CI on the difference
``[lo_v - hi_b, hi_v - lo_b] = d +- z (se_b + se_v)`` (it excludes 0 exactly when the two
intervals do not overlap) and the p-value ``2 Phi(-|d| / (se_b + se_v))`` (below alpha
exactly then): one verdict, stated three ways. With equal SEs this rejects only when the
z statistic exceeds ``sqrt(2) z``, 2.77 at alpha = 0.05: a two-sided level of 0.56% for
independent arms, the known conservatism of comparing overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import MODELS, MODELS_CLUSTERED

from .._base import CLUSTERS_IGNORED, SEEDS_IGNORED, Protocol, register
from .._decisions import data_scale, z_decision
from .._result import make_result

#: why a non-overlap rule misleads between two fixed models (one line, shown in tables)
OVERLAP_UNPAIRED = ("non-overlap of two intervals is conservative and unpaired: it loses "
                    "power")
#: why an unpaired comparison of two fixed models misleads
UNPAIRED_QUESTIONS = "unpaired: ignores that both models answered the same questions"


def mean_stderr(values):
    """lm-eval's ``mean_stderr`` (and Inspect's ``stderr()``) along the last axis.

    Parameters
    ----------
    values : ndarray, shape (..., n)
        Per-question scores of one model (fraction), ``n >= 2``.

    Returns
    -------
    mean, se : ndarray, shape (...)
        The mean and ``sd(values, ddof=1) / sqrt(n)`` (fraction).
    """
    n = values.shape[-1]
    return values.mean(axis=-1), values.std(axis=-1, ddof=1) / np.sqrt(n)


def overlap_result(batch, se_base, se_variant, alpha):
    """The verdict "the two ``1 - alpha`` normal intervals ``mean +- z se`` do not overlap".

    Parameters
    ----------
    batch : ScoreBatch
        The experiments (the estimate is the difference of the per-question means).
    se_base, se_variant : ndarray, shape (...)
        Each model's standard error as its harness prints it (fraction).
    alpha : float
        Two-sided level; the intervals are ``1 - alpha`` intervals (95% at 0.05).

    Returns
    -------
    ProtocolResult
        CI ``d +- z (se_b + se_v)`` and p ``2 Phi(-|d| / (se_b + se_v))``: the CI excludes
        0 and p < alpha exactly where the intervals are disjoint. Both SEs zero with
        different means is no variance estimate (degenerate, not significant), the
        convention of :mod:`protocols._decisions`.
    """
    qb, qv = batch.question_base, batch.question_variant
    estimate = qv.mean(axis=-1) - qb.mean(axis=-1)
    p, lo, hi, sig = z_decision(estimate, se_base + se_variant, alpha, data_scale(qb, qv))
    return make_result(estimate, lo, hi, p, sig)


class _PerModelHarness(Protocol):
    """Shared attributes: per-question scores, each model summarised on its own."""

    needs_questions = True
    reads_runs = False
    pitfall = SEEDS_IGNORED
    valid_for = frozenset()


@register
@dataclass(frozen=True)
class HarnessLmEvalOverlap(_PerModelHarness):
    """lm-eval's ``acc +- 1.96 * acc_stderr`` for each model; significant iff the two
    intervals do not overlap.

    ``acc_stderr`` is ``mean_stderr`` of ``lm_eval/api/metrics.py`` (EleutherAI/
    lm-evaluation-harness v0.4.13, chosen by ``stderr_for_metric`` for ``mean``-aggregated
    metrics): ``sd(scores, ddof=1) / sqrt(n)`` over the per-item scores, here each model's
    per-question mean over its k runs. See the module docstring for the CI and p reported.
    """

    name = "harness_lm_eval_overlap"
    summary = "lm-eval acc +- 1.96 acc_stderr per model: the intervals do not overlap"
    harness = "lm-eval acc_stderr (mean_stderr), interval overlap"
    pitfall_for = {MODELS: OVERLAP_UNPAIRED, MODELS_CLUSTERED: CLUSTERS_IGNORED}

    def _evaluate(self, batch, alpha, rng):
        _, se_b = mean_stderr(batch.question_base)
        _, se_v = mean_stderr(batch.question_variant)
        return overlap_result(batch, se_b, se_v, alpha)


@register
@dataclass(frozen=True)
class HarnessLmEvalComparator(_PerModelHarness):
    """lm-eval's ``scripts/model_comparator.py``: unpaired two-sample z-test on the two
    models' ``acc`` and ``acc_stderr``.

    ``calculate_z_value`` (EleutherAI/lm-evaluation-harness, ``scripts/model_comparator.py``):
    ``Z = (acc1 - acc2) / sqrt(acc_stderr1**2 + acc_stderr2**2)``, two-sided
    ``p = 2 * scipy.stats.norm.sf(|Z|)``; the script marks a task ``p > alpha`` (no
    difference) or not. The CI is ``d +- z_{1-alpha/2} sqrt(se_b**2 + se_v**2)``. The
    standard error of the difference ignores the covariance of the two models over the
    same questions: with positively correlated models (shared difficulty) the test is
    conservative and loses the power of pairing.
    """

    name = "harness_lm_eval_comparator"
    summary = "lm-eval model_comparator.py: unpaired z-test from acc and acc_stderr"
    harness = "lm-eval scripts/model_comparator.py calculate_z_value, p < alpha"
    pitfall_for = {MODELS: UNPAIRED_QUESTIONS, MODELS_CLUSTERED: CLUSTERS_IGNORED}

    def _evaluate(self, batch, alpha, rng):
        qb, qv = batch.question_base, batch.question_variant
        mean_b, se_b = mean_stderr(qb)
        mean_v, se_v = mean_stderr(qv)
        estimate = mean_v - mean_b
        p, lo, hi, sig = z_decision(estimate, np.sqrt(se_b**2 + se_v**2), alpha,
                                    data_scale(qb, qv))
        return make_result(estimate, lo, hi, p, sig)
