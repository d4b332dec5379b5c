"""``question_mixture``: repeated decoding of fixed models on a benchmark of questions."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np
from scipy import special

from evalcal_core.designs import MODELS
from evalcal_core.resources import ensure_numba_cache
from evalcal_core.validate import check_int, check_number

from ._base import Generator, register

#: the largest k whose two counts are drawn from their joint law's table ((k + 1)^2 entries);
#: beyond, p_q is drawn and each count from ``rng.binomial``
TABLE_MAX_K = 256

@register
@dataclass(frozen=True)
class QuestionMixture(Generator):
    """Binary per-question scores from a mixture of easy, hard and uncertain questions.

    Each experiment draws a fresh benchmark: success probability ``p_q`` is 1 with
    probability ``p_easy``, 0 with probability ``p_hard``, otherwise Uniform(low, high). The
    variant copies ``p_q`` and promotes ``round(delta * n)`` hard questions to ``p = 1``
    (``delta = 0``: an exact clone). Each of the k runs of an arm draws independent
    Bernoulli(p_q): only decoding noise differs between runs (questions with p_q = 0 or 1
    need no random number).

    The questions are exchangeable, and every protocol treats them so (a permutation of
    the questions changes no statistic's law), so an experiment is drawn in blocks: the
    counts of hard, easy and uncertain questions from a multinomial, the hard ones first
    (the first ``round(delta * n)`` of them promoted: a random subset of the hard questions
    in law), then the easy ones, then the uncertain ones (a consumer that reads the
    questions in order, as a streaming test would, must shuffle them first). An uncertain
    question's correct runs are drawn as a count, Binomial(k, p_q), then placed on a
    uniformly random subset of the k runs, which is k independent Bernoulli(p_q) runs in
    law. ``p_q`` itself is never needed: the pair of counts (baseline, variant) is drawn
    from its joint law with ``p_q`` integrated out (:func:`count_pair_law`; one uniform
    per question), which is the same law as drawing ``p_q`` and then two Binomial(k, p_q)
    counts. The counts come from
    the experiment's stream and the placements from a child stream, so
    :meth:`draw_counts` gives the per-question counts of :meth:`draw`'s runs without
    drawing them (the question-level protocols read nothing else).

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
    draws_counts = True
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

    def _layout(self, sims, k, delta, rng) -> _Layout:
        """The experiments' blocks and the uncertain questions' correct-run counts (the
        experiment stream's only draws)."""
        shares = [self.p_hard, self.p_easy, max(0.0, 1.0 - self.p_hard - self.p_easy)]
        blocks = rng.multinomial(self.n, shares, size=sims)
        uncertain = int(blocks[:, 2].sum())
        if k <= TABLE_MAX_K:
            counts = count_pairs(uncertain, k, self.low, self.high, rng)
        else:
            p = self.low + (self.high - self.low) * rng.random(uncertain)
            counts = [rng.binomial(k, p).astype(np.int64) for _ in range(2)]
        promoted = np.minimum(blocks[:, 0], int(round(delta * self.n)))
        return _Layout(k, blocks[:, 0], blocks[:, 1], promoted, *counts)

    def _draw_counts(self, sims, k, delta, rng):
        return self._layout(sims, k, delta, rng).counts(self.n)

    def _draw(self, sims, k, delta, rng):
        layout = self._layout(sims, k, delta, rng)
        # the child stream leaves the experiment stream where draw_counts leaves it
        return layout.runs(self.n, rng.spawn(1)[0])


@dataclass(frozen=True)
class _Layout:
    """Experiments in blocks: per row ``hard`` hard questions (the first ``promoted`` of
    them right in every run of the variant), ``easy`` easy ones, then the uncertain ones,
    whose correct runs of each arm are ``count_base`` and ``count_variant`` (row-major)."""

    k: int
    hard: np.ndarray
    easy: np.ndarray
    promoted: np.ndarray
    count_base: np.ndarray
    count_variant: np.ndarray

    def counts(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Correct runs per question of each arm, int64 ``(sims, n)``."""
        out = [np.empty((self.hard.size, n), dtype=np.int64) for _ in range(2)]
        _kernel("fill_counts")(*out, self.hard, self.easy, self.promoted, self.count_base,
                               self.count_variant, self.k)
        return out[0], out[1]

    def runs(self, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """Each arm's runs, bool ``(sims, k, n)``: the counts placed on random runs."""
        out = [np.zeros((self.hard.size, self.k, n), dtype=bool) for _ in range(2)]
        _kernel("fill_runs")(*out, self.hard, self.easy, self.promoted, self.count_base,
                             self.count_variant, rng)
        return out[0], out[1]


@functools.lru_cache(maxsize=32)
def count_pair_law(k: int, low: float, high: float) -> np.ndarray:
    """Joint law of an uncertain question's correct runs in the two arms, float64
    ``(k + 1, k + 1)``: ``P(a, b) = E[Binom(a; k, p) Binom(b; k, p)]`` over
    ``p ~ Uniform(low, high)`` (``p = low`` when ``high == low``).

    With ``s = a + b``: ``C(k, a) C(k, b) B(s + 1, 2k - s + 1) (I_high - I_low) / (high -
    low)``, ``I`` the regularized incomplete beta of ``(s + 1, 2k - s + 1)``; where ``I_low``
    is over 1/2 the difference of the complements is taken (no cancellation).
    """
    a = np.arange(k + 1)
    log_choose = special.gammaln(k + 1) - special.gammaln(a + 1) - special.gammaln(k - a + 1)
    if high == low:
        pmf = np.exp(log_choose + special.xlogy(a, low) + special.xlog1py(k - a, -low))
        law = np.outer(pmf, pmf)
        return _frozen(law / law.sum())
    s = a[:, None] + a[None, :]
    x, y = s + 1.0, 2.0 * k - s + 1.0
    lower = special.betainc(x, y, low)
    mass = np.where(lower > 0.5, special.betaincc(x, y, low) - special.betaincc(x, y, high),
                    special.betainc(x, y, high) - lower)
    law = np.exp(log_choose[:, None] + log_choose[None, :] + special.betaln(x, y))
    law = law * np.maximum(mass, 0.0) / (high - low)
    return _frozen(law / law.sum())


def _frozen(array: np.ndarray) -> np.ndarray:
    # a cached result is shared by every caller: none may write into it
    array.setflags(write=False)
    return array


@functools.lru_cache(maxsize=32)
def _pair_table(k: int, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    # the flattened law's cdf (last entry exactly 1) and its guide table: guide[g] is the
    # first index whose cdf passes g / size, so inversion starts there (Chen and Asau)
    cdf = np.minimum(np.cumsum(count_pair_law(k, low, high).ravel()), 1.0)  # monotone
    cdf[-1] = 1.0
    guide = np.searchsorted(cdf, np.arange(cdf.size) / cdf.size, side="right")
    return cdf, guide.astype(np.int64)


def count_pairs(size: int, k: int, low: float, high: float, rng) -> list[np.ndarray]:
    """``size`` draws of (baseline, variant) correct runs of an uncertain question
    (:func:`count_pair_law`), two int64 arrays, one uniform each from ``rng`` (inversion)."""
    cdf, guide = _pair_table(int(k), float(low), float(high))
    out = [np.empty(size, dtype=np.int64) for _ in range(2)]
    _kernel("pairs")(cdf, guide, k + 1, rng, *out)
    return out


def _invert_pairs(cdf, guide, width, rng, base, variant):
    for i in range(base.size):
        u = rng.random()
        j = guide[int(u * cdf.size)]
        while cdf[j] <= u and j < cdf.size - 1:
            j += 1
        base[i] = j // width
        variant[i] = j - (j // width) * width


def _fill_counts(base, variant, hard, easy, promoted, count_base, count_variant, k):
    i = 0
    for row in range(base.shape[0]):
        h, e = hard[row], easy[row]
        for col in range(base.shape[1]):
            if col < h:
                base[row, col] = 0
                variant[row, col] = k if col < promoted[row] else 0
            elif col < h + e:
                base[row, col] = k
                variant[row, col] = k
            else:
                base[row, col] = count_base[i]
                variant[row, col] = count_variant[i]
                i += 1


def _fill_runs(base, variant, hard, easy, promoted, count_base, count_variant, rng):
    # out starts all False; selection sampling (Knuth's algorithm S, k uniforms) puts a
    # question's c correct runs on a uniformly random c of the k runs
    k = base.shape[1]
    i = 0
    for row in range(base.shape[0]):
        h, e = hard[row], easy[row]
        # run by run: contiguous writes
        variant[row, :, :promoted[row]] = True
        base[row, :, h:h + e] = True
        variant[row, :, h:h + e] = True
        for col in range(h + e, base.shape[2]):
            for arm in range(2):
                out = base if arm == 0 else variant
                need = count_base[i] if arm == 0 else count_variant[i]
                for j in range(k):
                    # P(run j right | need of the k - j runs left) = need / (k - j);
                    # no branch: a mispredicted one costs more than the uniform
                    right = rng.random() * (k - j) < need
                    out[row, j, col] = right
                    need -= right
            i += 1


_KERNELS = {"pairs": _invert_pairs, "fill_counts": _fill_counts,
            "fill_runs": _fill_runs}


@functools.cache
def _kernel(name: str):
    """The compiled kernel ``name`` (numba, cached on disk as the BCa kernels are); numba is
    imported on the first draw, not by every command that imports the generators."""
    ensure_numba_cache(os.path.dirname(__file__))
    import numba

    return numba.njit(cache=True, nogil=True)(_KERNELS[name])
