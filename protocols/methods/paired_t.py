"""``paired_t`` and ``paired_t_questions``: t-tests on paired differences (seeds, questions)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import METHODS_INDEPENDENT, METHODS_PAIRED, MODELS, MODELS_CLUSTERED

from .._base import (
    CLUSTERS_IGNORED,
    REPEATS_NOT_SEEDS,
    SEEDS_IGNORED,
    UNPAIRED_SEEDS,
    Protocol,
    register,
)
from .._decisions import data_scale, t_decision
from .._result import make_result


@register
@dataclass(frozen=True)
class PairedT(Protocol):
    """Paired t-test on per-seed deltas, ``scipy.stats.ttest_rel(variant, base)``.

    The CI is ``mean(d) +- t_{1-alpha/2, k-1} * sd(d) / sqrt(k)``.
    """

    name = "paired_t"
    summary = "paired t-test on per-seed deltas"
    min_k = 2
    paired = True
    valid_for = frozenset({METHODS_PAIRED})
    pitfall_for = {METHODS_INDEPENDENT: UNPAIRED_SEEDS, MODELS: REPEATS_NOT_SEEDS,
                   MODELS_CLUSTERED: REPEATS_NOT_SEEDS}

    def _evaluate(self, batch, alpha, rng):
        d = batch.seed_deltas
        k = d.shape[-1]
        estimate = d.mean(axis=-1)
        se = d.std(axis=-1, ddof=1) / k**0.5
        # Deltas equal on paper differ by rounding of the per-seed metrics, whose scale
        # decides what a zero spread is.
        scale = data_scale(batch.seed_base, batch.seed_variant)
        p, lo, hi, sig = t_decision(estimate, se, k - 1, alpha, scale)
        return make_result(estimate, lo, hi, p, sig)


@register
@dataclass(frozen=True)
class PairedTQuestions(Protocol):
    """Paired t-test on per-question differences of the k-run means.

    ``d_q = mean_k variant - mean_k base``; estimate ``mean(d_q)``, SE ``sd(d_q) / sqrt(n)``,
    Student t on n - 1 df (``scipy.stats.ttest_1samp(d_q, 0)``). It was a z-test until the
    design labels: on iid binary questions of fixed models the normal quantile rejected a
    true null in 7.0% of experiments at n = 30 and 10.7% at n = 10 (4,000 each); the t
    quantile is what keeps small benchmarks honest, and at n in the thousands it is the
    z-test. Treats questions as the sampling unit, the k runs as measurement noise averaged
    within a question: the honest test between two fixed models on independent questions
    (design ``models``). It ignores seed-to-seed training noise,
    a pitfall when the runs come from several training seeds (under ``seed_question`` with
    seed-effect sd 0.3 it rejects a true null in more than half the experiments;
    ``paired_two_level`` is the honest test on the same data), and it treats clustered
    questions as independent (``cluster_cr2`` is the honest test there).
    """

    name = "paired_t_questions"
    summary = "paired t-test on per-question differences of k-run means"
    needs_questions = True
    paired = True
    pitfall = SEEDS_IGNORED
    valid_for = frozenset({MODELS})
    pitfall_for = {METHODS_INDEPENDENT: SEEDS_IGNORED, MODELS_CLUSTERED: CLUSTERS_IGNORED}

    reads_runs = False

    def _evaluate(self, batch, alpha, rng):
        estimate, se, scale = question_t(batch)
        p, lo, hi, sig = t_decision(estimate, se, batch.n - 1, alpha, scale)
        return make_result(estimate, lo, hi, p, sig)


def question_t(batch):
    """Mean per-question delta of the k-run means, its standard error ``sd / sqrt(n)``
    and the data's scale (:func:`~protocols._decisions.data_scale`), arrays over the
    batch's experiments; computed once per batch."""
    return batch.shared("paired_t_questions:moments", lambda: _question_moments(batch))


def _question_moments(batch):
    n, k = batch.n, batch.k
    if batch.binary and n * n * k * k < 2**62:
        # 0/1 scores: exact integer sums of the correct-run deltas (no float pass over the
        # questions, and a zero spread is exactly zero); n * sum(d^2) <= n^2 k^2 fits int64
        d = batch.correct_deltas
        s1 = d.sum(axis=-1)
        s2 = np.einsum("...i,...i->...", d, d)
        variance = (n * s2 - s1 * s1) / (n * (n - 1) * k * k)
        scale = np.maximum(batch.correct_base.max(axis=-1),
                           batch.correct_variant.max(axis=-1)) / k
        return s1 / (k * n), np.sqrt(variance / n), scale
    dq = batch.question_deltas
    se = dq.std(axis=-1, ddof=1) / n**0.5
    return dq.mean(axis=-1), se, data_scale(batch.question_base, batch.question_variant)
