"""``question_bootstrap`` and ``paired_question_bootstrap``: resample the test questions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._base import Protocol
from ._bootstrap_z import check_n_resamples, z_result_from_replicates
from ._registry import register
from ._resample import resampled_means, resampled_sums_of_integers


def _bootstrap_means(per_question, counts, k, B, rng):
    # Binary scores make per-question means j/k: resample the integer counts j exactly and
    # cheaply; anything else resamples the values themselves.
    if counts is not None:
        return resampled_sums_of_integers(counts, B, rng) / (k * counts.shape[-1])
    return resampled_means(per_question, B, rng)


def _binary(*arrays):
    return all(np.all((a == 0) | (a == 1)) for a in arrays)


@register
@dataclass(frozen=True)
class QuestionBootstrap(Protocol):
    """Unpaired question bootstrap of per-question k-run means.

    Each arm's per-question mean over its ``k`` runs is resampled over questions with
    independent indices for the two arms, ``B`` times; SE = sd of the replicate
    differences; significant iff ``|estimate| / SE > z_{1-alpha/2}``.

    Parameters
    ----------
    B : int, default 1000
        Bootstrap replicates.
    """

    B: int = 1000

    name = "question_bootstrap"
    summary = "question bootstrap, independent indices per arm"
    needs_questions = True
    stochastic = True
    pitfall = "a question bootstrap that ignores pairing"

    def __post_init__(self):
        check_n_resamples(self.name, self.B)

    def _evaluate(self, base, variant, alpha, rng):
        k = base.shape[-2]
        qb = base.mean(axis=-2)
        qv = variant.mean(axis=-2)
        binary = _binary(base, variant)
        cb = base.sum(axis=-2).astype(np.int64) if binary else None
        cv = variant.sum(axis=-2).astype(np.int64) if binary else None
        rep_b = _bootstrap_means(qb, cb, k, self.B, rng)
        rep_v = _bootstrap_means(qv, cv, k, self.B, rng)
        estimate = qv.mean(axis=-1) - qb.mean(axis=-1)
        return z_result_from_replicates(estimate, rep_v - rep_b, alpha)


@register
@dataclass(frozen=True)
class PairedQuestionBootstrap(Protocol):
    """Paired question bootstrap: the same resampled questions for both arms.

    Resamples the per-question differences ``d_q = mean_k variant - mean_k base``; SE = sd
    of the ``B`` replicate means; significant iff ``|estimate| / SE > z_{1-alpha/2}``.

    Parameters
    ----------
    B : int, default 1000
        Bootstrap replicates.
    """

    B: int = 1000

    name = "paired_question_bootstrap"
    summary = "question bootstrap, same indices for both arms"
    needs_questions = True
    paired = True
    stochastic = True

    def __post_init__(self):
        check_n_resamples(self.name, self.B)

    def _evaluate(self, base, variant, alpha, rng):
        k = base.shape[-2]
        dq = variant.mean(axis=-2) - base.mean(axis=-2)
        counts = None
        if _binary(base, variant):
            counts = (variant.sum(axis=-2) - base.sum(axis=-2)).astype(np.int64)
        replicates = _bootstrap_means(dq, counts, k, self.B, rng)
        return z_result_from_replicates(dq.mean(axis=-1), replicates, alpha)
