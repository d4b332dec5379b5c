"""``paired_t`` and ``paired_t_questions``: t- and z-tests on paired differences."""

from __future__ import annotations

from dataclasses import dataclass

from .._base import Protocol, register
from .._decisions import t_decision, z_decision
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

    def _evaluate(self, batch, alpha, rng):
        d = batch.seed_deltas
        k = d.shape[-1]
        estimate = d.mean(axis=-1)
        se = d.std(axis=-1, ddof=1) / k**0.5
        p, lo, hi, sig = t_decision(estimate, se, k - 1, alpha)
        return make_result(estimate, lo, hi, p, sig)


@register
@dataclass(frozen=True)
class PairedTQuestions(Protocol):
    """z-test on per-question differences of the k-run means.

    ``d_q = mean_k variant - mean_k base``; estimate ``mean(d_q)``, SE ``sd(d_q) / sqrt(n)``.
    Treats questions as the sampling unit and so ignores seed-to-seed training noise: a
    pitfall when the runs come from several seeds (under ``seed_question`` with seed-effect
    sd 0.3 it rejects a true null in more than half the experiments); ``paired_two_level``
    is the honest test on the same data.
    """

    name = "paired_t_questions"
    summary = "z-test on per-question differences of k-run means"
    needs_questions = True
    paired = True
    pitfall = "questions as the only noise, seeds ignored"

    def _evaluate(self, batch, alpha, rng):
        dq = batch.question_deltas
        n = dq.shape[-1]
        estimate = dq.mean(axis=-1)
        se = dq.std(axis=-1, ddof=1) / n**0.5
        p, lo, hi, sig = z_decision(estimate, se, alpha)
        return make_result(estimate, lo, hi, p, sig)
