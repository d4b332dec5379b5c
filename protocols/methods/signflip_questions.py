"""``signflip_questions``: studentized sign-flip test on the per-question deltas of fixed models."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from evalcal_core.designs import METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED

from .._base import SEEDS_IGNORED, Protocol, check_draws, register
from .._resample import TIE_RTOL, _chunks, _flat, sign_flip_pvalue
from .._result import make_result
from .paired_t import question_t

#: most non-zero deltas whose ``2**m`` sign patterns are enumerated (meet-in-the-middle
#: kernel: ``2**(m/2)`` sums per half, as ``sign_flip``); beyond, patterns are sampled
MAX_EXACT_NONZERO = 16

#: most non-zero deltas whose law is sampled; beyond, the law's normal limit is used, with a
#: continuity correction for the lattice of binary counts. A sum of random signs times fixed
#: deltas is symmetric and platykurtic (fourth cumulant -2 sum(d**4)), so beyond |z| = sqrt(3)
#: (p < 0.083) its normal limit overstates the tail: conservative where a test decides, and
#: the cost no longer grows with B x m (a 4,000-question benchmark x 2,000 experiments)
MAX_SAMPLED_NONZERO = 100

#: integer deltas below this size take the integer path: their sums of squares stay far
#: below 2**53, exact in int64 and in the float64 sums they replace
_INT_LIMIT = 2**20

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
    d = np.asarray(d)
    if np.issubdtype(d.dtype, np.integer) and (d.size == 0 or np.abs(d).max() < _INT_LIMIT):
        flat, batch_shape = _flat(d.astype(np.int64, copy=False), 1)
        return _integer_pvalue(flat, n_permutations, rng).reshape(batch_shape)
    flat, batch_shape = _flat(d.astype(float, copy=False), 1)
    # Deltas equal on paper but for rounding (float means of runs) are zeros, not signs.
    nonzero = np.abs(flat) > TIE_RTOL * np.abs(flat).max(axis=-1, keepdims=True)
    flat = np.where(nonzero, flat, 0.0)
    return _float_pvalue(flat, nonzero, n_permutations, rng).reshape(batch_shape)


def _integer_pvalue(d, n_permutations, rng):
    """:func:`signflip_t_pvalue` of integer deltas ``d``, shape ``(m, n)``, bit for bit.

    Binary scores give integer deltas (differences of correct-run counts). The normal limit
    then needs only ``sum(d)``, ``sum(d**2)`` and ``min |d|`` over the non-zero deltas,
    exact in integers (and exact in the float64 sums they replace, below 2**53), so the
    rows beyond :data:`MAX_SAMPLED_NONZERO` non-zero deltas (every experiment of a large
    benchmark) are computed on the integers at once, without the float copies; the others
    take the float path. The non-zero deltas are the same: no integer is within the
    rounding tolerance ``TIE_RTOL * max|d|`` of zero.
    """
    n_nonzero = np.count_nonzero(d, axis=-1)
    normal = n_nonzero > MAX_SAMPLED_NONZERO
    p = np.empty(d.shape[0])
    if normal.any():
        part = d[normal] if not normal.all() else d
        total = part.sum(axis=-1)
        squares = np.einsum("ij,ij->i", part, part)
        # min |d| over the non-zero deltas: 1 in all but contrived rows
        smallest = np.ones(part.shape[0])
        no_one = ~(part == 1).any(axis=-1) & ~(part == -1).any(axis=-1)
        if no_one.any():
            a = np.abs(part[no_one])
            smallest[no_one] = np.where(a != 0, a, np.iinfo(a.dtype).max).min(axis=-1)
        p[normal] = _normal_pvalue(total.astype(float), squares.astype(float), smallest)
    if not normal.all():
        rest = d[~normal].astype(float)
        p[~normal] = _float_pvalue(rest, rest != 0, n_permutations, rng)
    return p


def _normal_pvalue(total, squares, smallest):
    # the flips' law of sum(d) has mean 0 and variance sum(d**2); it lives on a lattice of
    # step 2 min|d| for integer-like deltas (binary counts): the continuity correction
    # min|d| keeps the atom at |S| in the tail (conservative for other deltas)
    excess = np.maximum(np.abs(total) - smallest, 0.0)
    return 2.0 * special.ndtr(-excess / np.sqrt(squares))


def _float_pvalue(flat, nonzero, n_permutations, rng):
    """The p-values of :func:`signflip_t_pvalue` of ``flat`` ``(m, n)`` whose zeros are
    exact (``nonzero`` marks the others)."""
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
        part = flat[normal]
        smallest = np.where(part != 0, np.abs(part), np.inf).min(axis=-1)
        p[normal] = _normal_pvalue(part.sum(axis=-1), (part**2).sum(axis=-1), smallest)
    return p


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
    reads_runs = False
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
        p = batch_pvalue(batch, self.n_permutations, rng)
        return make_result(question_t(batch)[0], p_value=p,
                           significant=p < alpha)


def batch_pvalue(batch, n_permutations, rng):
    """:func:`signflip_t_pvalue` of a batch's per-question deltas, computed once per batch
    where no experiment's law is sampled.

    Binary scores pass their integer correct-run counts (the signed sums, and so the ties,
    are exact). Where every experiment is enumerated or takes the normal limit, the p-values
    use no random number and do not depend on ``n_permutations``: ``signflip_questions`` and
    ``t_signflip_questions`` evaluated on the same batch share them. Otherwise each draws
    its own sign patterns from its own ``rng``.
    """
    d = batch.correct_deltas if batch.binary else batch.question_deltas
    if not batch.shared("signflip_questions:sampled", lambda: _any_sampled(d)):
        return batch.shared("signflip_questions:p", lambda: signflip_t_pvalue(
            d, n_permutations, rng))
    return signflip_t_pvalue(d, n_permutations, rng)


def _any_sampled(d) -> bool:
    """Whether some experiment of ``d`` has its law sampled (16 < non-zero deltas <= 100)."""
    flat, _ = _flat(np.asarray(d), 1)
    if np.issubdtype(flat.dtype, np.integer):
        n_nonzero = np.count_nonzero(flat, axis=-1)
    else:
        flat = flat.astype(float, copy=False)
        n_nonzero = np.count_nonzero(
            np.abs(flat) > TIE_RTOL * np.abs(flat).max(axis=-1, keepdims=True), axis=-1)
    return bool(((n_nonzero > MAX_EXACT_NONZERO) & (n_nonzero <= MAX_SAMPLED_NONZERO)).any())
