"""``question_mixture``: repeated decoding of fixed models on a benchmark of questions."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import MODELS
from evalcal_core.resources import ensure_numba_cache
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
        # hard: u < p_hard; easy: p_hard <= u < top; uncertain: u >= top (top >= p_hard)
        top = self.p_hard + self.p_easy
        easy = u < top
        easy &= u >= self.p_hard
        uncertain = u >= top
        # Only the uncertain questions need a probability and random runs; easy ones are
        # right in every run, hard ones wrong (until promoted). Their (row, column) in
        # row-major order, from flat indices: a 2-d nonzero costs several times more.
        flat = np.flatnonzero(uncertain)
        rows = np.repeat(np.arange(sims), np.count_nonzero(uncertain, axis=1))
        cols = flat - rows * n
        p = self.low + (self.high - self.low) * rng.random(flat.size)
        solved_variant = easy
        m = int(round(delta * n))
        if m > 0:
            # Random priorities among the hard questions; the m smallest are promoted.
            hard = u < self.p_hard
            priority = rng.random((sims, n))
            priority[~hard] = np.inf
            solved_variant = easy | _smallest(priority, hard, m)
        return (_bernoulli_runs(easy, rows, cols, p, k, rng),
                _bernoulli_runs(solved_variant, rows, cols, p, k, rng))


def _smallest(priority, hard, m):
    """bool ``(sims, n)``: the ``m`` hard questions of each row with the smallest priority
    (every hard one where a row has fewer).

    The m-th smallest value bounds them (``np.partition`` is cheaper than
    ``np.argpartition``); a row where equal priorities (probability ~1e-10 per row) would
    give more than m takes the first m that ``np.argpartition`` returns.
    """
    kth = np.partition(priority, m - 1, axis=1)[:, m - 1:m]
    chosen = hard & (priority <= kth)
    tied = np.flatnonzero(np.count_nonzero(chosen, axis=1) > m)
    if tied.size:
        first = np.argpartition(priority[tied], m - 1, axis=1)[:, :m]
        chosen[tied] = False
        chosen[tied[:, None], first] = hard[tied[:, None], first]
    return chosen


def _bernoulli_runs(solved, rows, cols, p, k, rng):
    """k independent runs per experiment, bool ``(sims, k, n)``.

    bool 0/1 scores: an eighth of float64's memory, and protocols read counts of them.
    Questions with success probability 0 or 1 (``solved``) need no random number; the
    uncertain ones at ``(rows, cols)`` draw k Bernoulli(``p``) outcomes each: the outcomes
    of ``rng.random((rows.size, k)) < p[:, None]``, written in place by a compiled loop
    (:func:`_runs_kernel`) that draws the same uniforms in the same order, without the
    (uncertain, k) temporaries and the scatter (half the cost of the draw).
    """
    sims, n = solved.shape
    out = np.empty((sims, k, n), dtype=bool)
    out[...] = solved[:, None, :]
    _runs_kernel()(out, rows, cols, p, rng)
    return out


def _write_runs(out, rows, cols, p, rng):
    # Uniform j of uncertain question i is the (i * k + j)-th of the stream, as in
    # rng.random((rows.size, k)); a uniform below p is a correct run.
    k = out.shape[1]
    for i in range(rows.size):
        row, col, prob = rows[i], cols[i], p[i]
        for j in range(k):
            out[row, j, col] = rng.random() < prob


@functools.cache
def _runs_kernel():
    """:func:`_write_runs` compiled (numba, cached on disk as the BCa kernels are); numba is
    imported on the first draw, not by every command that imports the generators."""
    ensure_numba_cache(os.path.dirname(__file__))
    import numba

    return numba.njit(cache=True, nogil=True)(_write_runs)
