"""``question_mixture``: repeated decoding of fixed models on a benchmark of questions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import MODELS
from evalcal_core.validate import check_int, check_number

from ._base import Generator, register


@register
@dataclass(frozen=True)
class QuestionMixture(Generator):
    """Binary per-question scores from a mixture of easy, hard and uncertain questions.

    Each experiment draws a fresh benchmark: success probability ``p_q`` is 1 with
    probability ``p_easy``, 0 with probability ``p_hard``, otherwise Uniform(low, high). The
    variant copies ``p_q`` and promotes ``round(delta * n)`` randomly chosen hard questions to
    ``p = 1`` (``delta = 0``: an exact clone). Each of the k runs of an arm draws independent
    Bernoulli(p_q): only decoding noise differs between runs (questions with p_q = 0 or 1
    need no random number).

    Parameters
    ----------
    n_questions : int, default 4000
    p_easy : float, default 0.42
    p_hard : float, default 0.28
    low, high : float, default 0.2, 0.8
        Range of the uncertain questions' success probability.
    """

    n_questions: int = 4000
    p_easy: float = 0.42
    p_hard: float = 0.28
    low: float = 0.2
    high: float = 0.8

    name = "question_mixture"
    binary = True
    #: fixed models: the k runs of an arm are decoding repeats, the questions the sample
    design = MODELS

    def __post_init__(self):
        check_int(self.n_questions, "n_questions", self.owner, low=2, high=10**7)
        check_number(self.p_easy, "p_easy", self.owner, low=0, high=1)
        check_number(self.p_hard, "p_hard", self.owner, low=0, high=1 - self.p_easy)
        check_number(self.low, "low", self.owner, low=0, high=1)
        check_number(self.high, "high", self.owner, low=self.low, high=1)

    @property
    def n(self) -> int:
        return int(self.n_questions)

    def check_effect(self, delta):
        # Promotions come from the hard questions: a few standard deviations below their
        # expected count keeps the chance of running short negligible.
        n = self.n
        hard = self.p_hard * n
        room = hard - 5 * np.sqrt(n * self.p_hard * (1 - self.p_hard))
        check_number(delta, "effect", self.owner, low=0, high=max(room, 0) / n)

    def _draw(self, sims, k, delta, rng):
        n = self.n
        u = rng.random((sims, n))
        hard = u < self.p_hard
        easy = (u >= self.p_hard) & (u < self.p_hard + self.p_easy)
        # Only the uncertain questions need a probability and random runs; easy ones are
        # right in every run, hard ones wrong (until promoted).
        rows, cols = np.nonzero(~(hard | easy))
        p = self.low + (self.high - self.low) * rng.random(rows.size)
        solved_variant = easy
        m = int(round(delta * n))
        if m > 0:
            # Random priorities among the hard questions; the m smallest are promoted.
            priority = np.where(hard, rng.random((sims, n)), np.inf)
            chosen = np.argpartition(priority, m - 1, axis=1)[:, :m]
            promote = np.take_along_axis(hard, chosen, axis=1)
            solved_variant = easy.copy()
            solved_variant[np.nonzero(promote)[0], chosen[promote]] = True
        return (_bernoulli_runs(easy, rows, cols, p, k, rng),
                _bernoulli_runs(solved_variant, rows, cols, p, k, rng))


def _bernoulli_runs(solved, rows, cols, p, k, rng):
    """k independent runs per experiment, bool ``(sims, k, n)``.

    bool 0/1 scores: an eighth of float64's memory, and protocols read counts of them.
    Questions with success probability 0 or 1 (``solved``) need no random number; the
    uncertain ones at ``(rows, cols)`` draw k Bernoulli(``p``) outcomes each.
    """
    sims, n = solved.shape
    out = np.broadcast_to(solved[:, None, :], (sims, k, n)).copy()
    # Advanced indices split by a slice come first: the assigned block is (uncertain, k).
    out[rows, :, cols] = rng.random((rows.size, k)) < p[:, None]
    return out
