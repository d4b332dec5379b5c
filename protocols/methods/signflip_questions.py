"""``signflip_questions``: studentized sign-flip test on the per-question deltas of fixed models."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from evalcal_core.designs import METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED

from .._base import SEEDS_IGNORED, Protocol, check_draws, register
from .._resample import TIE_RTOL, _chunks, _flat, sign_flip_pvalue
from .._result import make_result

#: most non-zero deltas whose ``2**m`` sign patterns are enumerated (meet-in-the-middle
#: kernel: ``2**(m/2)`` sums per half, as ``sign_flip``); beyond, patterns are sampled
MAX_EXACT_NONZERO = 16

#: most non-zero deltas whose law is sampled; beyond, the law's normal limit is used, with a
#: continuity correction for the lattice of binary counts. A sum of random signs times fixed
#: deltas is symmetric and platykurtic (fourth cumulant -2 sum(d**4)), so beyond |z| = sqrt(3)
#: (p < 0.083) its normal limit overstates the tail: conservative where a test decides, and
#: the cost no longer grows with B x m (a 4,000-question benchmark x 2,000 experiments)
MAX_SAMPLED_NONZERO = 100

#: random sign patterns drawn at once: the stream of patterns does not depend on how many
#: experiments share it, so a batch gives each experiment what it would get alone
FLIP_BLOCK = 1024


def _packed_nonzero(d, nonzero, width):
    # The non-zero deltas first (stable order), cut to ``width`` columns: only zeros are cut.
    order = np.argsort(~nonzero, axis=-1, kind="stable")[:, :width]
    return np.take_along_axis(d, order, axis=-1)


def _sampled_pvalue(d, n_permutations, rng):
    """``(1 + count) / (1 + B)`` over ``B`` random sign patterns shared by the rows of ``d``."""
    m, n = d.shape
    threshold = np.abs(d.sum(axis=-1)) - TIE_RTOL * np.abs(d).sum(axis=-1)
    count = np.zeros(m)
    for start in range(0, n_permutations, FLIP_BLOCK):
        flips = min(FLIP_BLOCK, n_permutations - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(flips, n))
        # Memory: one block of flips times one chunk of experiments at a time.
        for sl in _chunks(m, flips):
            sums = np.abs(d[sl] @ signs.T)
            count[sl] += (sums >= threshold[sl, None]).sum(axis=-1)
    return (1.0 + count) / (1.0 + n_permutations)


def signflip_t_pvalue(d, n_permutations, rng):
    """Two-sided studentized sign-flip p-value of the mean of ``d`` over its last axis.

    The statistic is the one-sample t, ``|t| = |mean(d)| / (sd(d) / sqrt(n))``. A sign flip
    leaves ``sum(d**2)`` unchanged, and ``t**2 = (n - 1) S**2 / (n sum(d**2) - S**2)`` with
    ``S = sum(d)`` grows with ``|S|``: counting ``|t*| >= |t|`` is counting ``|S*| >= |S|``,
    which is what is computed. Zero deltas do not change under a flip, so with at most
    :data:`MAX_EXACT_NONZERO` non-zero deltas the ``2**m`` patterns of the ``m`` non-zero ones
    give the exact p; up to :data:`MAX_SAMPLED_NONZERO`, ``n_permutations`` random patterns
    of the non-zero deltas (one set for the whole batch) give ``p = (1 + count) / (1 +
    n_permutations)``; beyond,
    the law's normal limit ``2 Phi(-(|S| - min|d|) / sqrt(sum(d**2)))`` (``min|d|`` over the
    non-zero deltas: half the lattice step of binary counts). All deltas zero: p = 1.

    Parameters
    ----------
    d : ndarray, shape (..., n)
        Per-question deltas (any units: the p-value is scale-free).
    n_permutations : int
        Random sign patterns B where the exact law is not enumerated.
    rng : numpy.random.Generator
        Drawn from only when some experiment has more than 16 non-zero deltas.

    Returns
    -------
    ndarray, shape (...)
    """
    flat, batch_shape = _flat(np.asarray(d, dtype=float), 1)
    # Deltas equal on paper but for rounding (float means of runs) are zeros, not signs.
    nonzero = np.abs(flat) > TIE_RTOL * np.abs(flat).max(axis=-1, keepdims=True)
    flat = np.where(nonzero, flat, 0.0)
    n_nonzero = nonzero.sum(axis=-1)
    exact = n_nonzero <= MAX_EXACT_NONZERO
    normal = n_nonzero > MAX_SAMPLED_NONZERO
    sampled = ~exact & ~normal
    p = np.empty(flat.shape[0])
    if exact.any():
        width = max(1, int(n_nonzero[exact].max()))
        packed = _packed_nonzero(flat[exact], nonzero[exact], width)
        # Zero padding doubles the count and the number of patterns alike: the p is exact.
        p[exact] = sign_flip_pvalue(packed, rng, max_exact_k=MAX_EXACT_NONZERO)
    if sampled.any():
        # only the non-zero deltas flip: B patterns over 100 columns (zero-padded, so that the
        # patterns, and each experiment's p, do not depend on the batch), not over n
        packed = _packed_nonzero(flat[sampled], nonzero[sampled], MAX_SAMPLED_NONZERO)
        if packed.shape[1] < MAX_SAMPLED_NONZERO:
            packed = np.pad(packed, ((0, 0), (0, MAX_SAMPLED_NONZERO - packed.shape[1])))
        p[sampled] = _sampled_pvalue(packed, n_permutations, rng)
    if normal.any():
        # the flips' law of sum(d) has mean 0 and variance sum(d**2); it lives on a lattice
        # of step 2 min|d| for integer-like deltas (binary counts): the continuity correction
        # min|d| keeps the atom at |S| in the tail (conservative for other deltas)
        part = flat[normal]
        smallest = np.where(part != 0, np.abs(part), np.inf).min(axis=-1)
        excess = np.maximum(np.abs(part.sum(axis=-1)) - smallest, 0.0)
        p[normal] = 2.0 * special.ndtr(-excess / np.sqrt((part**2).sum(axis=-1)))
    return p.reshape(batch_shape)


@register
@dataclass(frozen=True)
class SignflipQuestions(Protocol):
    """Studentized sign-flip (randomization) test on per-question deltas of k-run means.

    ``d_q = mean_k variant - mean_k base``; two-sided p of the one-sample t over random
    signs of the ``d_q`` (see :func:`signflip_t_pvalue`): exact over the sign patterns of
    the non-zero deltas while there are at most 16 of them, ``p = (1 + count) / (1 + B)``
    over ``B`` random patterns up to 100, the randomization law's normal limit (with a
    continuity correction) beyond. Significant iff ``p < alpha``. The estimate is the mean
    delta (fraction); there is no CI.

    Exact under symmetry of each ``d_q`` about 0 (repeats split at random between two arms
    of the same model, or exchangeable arms); for mean-zero deltas that are not symmetric
    it keeps alpha asymptotically, the flips' law of ``sqrt(n) mean(d)`` having variance
    ``mean(d**2)``, which estimates the variance of the deltas under the null (Romano 1990,
    JASA 85:686). Studentizing changes no p-value here (sign flips keep ``sum(d**2)``, so
    ``|t|`` grows with ``|sum(d)|``); it is what makes the test the t's own randomization
    twin. Binary items with
    few repeats make most deltas exactly 0, where the t's normal-theory tail is least
    trustworthy and the enumeration cheapest. Like ``paired_t_questions`` it treats the
    questions as the sample and the runs as noise averaged within a question, so it
    ignores seed-to-seed training noise, and it flips questions one at a time, so it
    ignores clusters of questions.

    Parameters
    ----------
    n_permutations : int, default 9999
        Random sign patterns B (alias ``B``), at most 10,000,000.
    """

    n_permutations: int = 9999

    name = "signflip_questions"
    summary = "studentized sign-flip test on per-question differences of k-run means"
    needs_questions = True
    paired = True
    stochastic = True
    pitfall = SEEDS_IGNORED
    valid_for = frozenset({MODELS})
    pitfall_for = {METHODS_INDEPENDENT: SEEDS_IGNORED,
                   MODELS_CLUSTERED: "flips correlated questions one by one: needs the cluster "
                                     "as the unit; use cluster_cr2"}
    aliases = {"B": "n_permutations"}

    def __post_init__(self):
        check_draws(self.n_permutations, "n_permutations", self.name, low=1)

    def _evaluate(self, batch, alpha, rng):
        # Integer counts for binary scores: the signed sums are exact, so ties are exact.
        d = batch.correct_deltas.astype(float) if batch.binary else batch.question_deltas
        p = signflip_t_pvalue(d, self.n_permutations, rng)
        return make_result(batch.question_deltas.mean(axis=-1), p_value=p,
                           significant=p < alpha)
