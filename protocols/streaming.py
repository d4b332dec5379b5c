"""Anytime-valid comparisons: confidence sequences for the mean paired difference, and the
decisions at a margin a watcher may read off them after every item.

A user watching an evaluation run question by question (or seed by seed) may look after
every item and stop when the result looks decided. A fixed-n test read that way inflates
false positives (``sim.sequential`` teaches by how much); a *confidence sequence* does not:
with probability at least ``1 - alpha`` it holds the true mean at every look at once, so
"stop the first time the sequence clears the margin" keeps the false-claim rate <=
``alpha`` however often one looks.

Two sequences, both Waudby-Smith & Ramdas (2024, "Estimating means of bounded random
variables by betting", JRSS-B), for paired deltas ``d`` in ``[-1, 1]`` (a difference of two
accuracies or of two 0/1 scores) mapped to ``x = (d + 1) / 2`` in ``[0, 1]``:

``betting`` (the default, :mod:`protocols.streaming_betting`)
    The hedged capital process with predictable plug-in bets (Theorem 3). About half the
    width of the empirical-Bernstein sequence once the variance is small; not always
    narrower: where the deltas vary most (every pair discordant) it ends about 5% wider
    (``python benchmarks/bench_stream_cost.py --widths``).
``empirical-bernstein`` (:class:`EmpiricalBernsteinSequence`)
    The predictable-plug-in empirical-Bernstein sequence (Theorem 2, two-sided, ``log(2 /
    alpha)``). With ``mu_hat_t``, ``sigma2_hat_t`` as in
    :func:`protocols.streaming_base.plug_in_moments`, bets ``lambda_t = min(sqrt(2
    log(2 / alpha) / (sigma2_hat_{t-1} t log(1 + t))), 1/2)``, ``v_t = 4 (x_t -
    mu_hat_{t-1})^2`` and ``psi(l) = (-log(1 - l) - l) / 4``, the sequence at look ``t`` is
    ``sum lambda_i x_i / sum lambda_i +- (log(2 / alpha) + sum v_i psi(lambda_i)) / sum
    lambda_i``: closed form, computed for every experiment and look with cumulative sums.

Both are valid for independent observations with a common mean (and for martingale
differences); bounds are running intersections.

Decisions at a margin ``M`` >= 0 (fractions, the units of ``evaluate --margin``) read the
sequence's lower bound ``L_t`` and upper bound ``U_t`` at every look
(:func:`read_margin`):

==================  =========================  =====================================
statement           when                       used by
==================  =========================  =====================================
variant better      ``L_t > M``                superiority shown; three-way
variant worse       ``U_t < -M``               non-inferiority refuted; three-way
equivalent          ``-M < L_t`` and ``U_t < M``  equivalence shown; three-way
not worse           ``L_t > -M``               non-inferiority shown
not better          ``U_t < M``                superiority refuted
==================  =========================  =====================================

A claim (:func:`stream_claim`) reads the rules of :func:`protocols.claims.claim_verdict`
on the ``1 - 2 alpha`` sequence (one-sided ``alpha``, as the fixed-n claims read a ``1 - 2
alpha`` interval) and stops at the first look where it is shown or refuted. The three-way
decision (:func:`three_way`: better, worse or equivalent, whichever the sequence shows
first) reads the ``1 - alpha`` sequence, so that *any* false declaration over all looks has
probability <= ``alpha`` (seqbench's rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from evalcal_core.validate import check_alpha, check_choice, check_number

from .streaming_base import ConfidenceSequence, first_true, plug_in_bets, to_unit
from .streaming_betting import BettingSequence, betting_confidence_sequence

__all__ = ["METHODS", "SEQUENCES", "BettingSequence", "ConfidenceSequence",
           "EmpiricalBernsteinSequence", "MarginReading", "StreamVerdict",
           "betting_confidence_sequence", "claim_decision", "confidence_sequence", "decide_claim",
           "eb_confidence_sequence", "read_margin", "stream_claim", "three_way"]

#: the claims a stream decides, as ``evaluate --claim`` spells them
CLAIMS = ("superiority", "non-inferiority", "equivalence")


@dataclass(frozen=True, eq=False)
class EmpiricalBernsteinSequence(ConfidenceSequence):
    """The predictable-plug-in empirical-Bernstein sequence (Waudby-Smith & Ramdas 2024,
    Theorem 2); attributes as :class:`~protocols.streaming_base.ConfidenceSequence`."""

    method: ClassVar[str] = "empirical-bernstein"
    label: ClassVar[str] = ("empirical-Bernstein confidence sequence "
                            "(Waudby-Smith & Ramdas 2024)")

    @cached_property
    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        x = to_unit(self.deltas)
        lam, mu_prev, _ = plug_in_bets(x, self.alpha)
        lam = np.minimum(lam, 0.5)
        log_term = np.log(2.0 / self.alpha)          # the two-sided sequence of Theorem 2
        psi = (-np.log1p(-lam) - lam) / 4.0
        s_lam = np.cumsum(lam, axis=-1)
        center = np.cumsum(lam * x, axis=-1) / s_lam
        half = (log_term + np.cumsum(4.0 * (x - mu_prev) ** 2 * psi, axis=-1)) / s_lam
        # running intersection: a confidence sequence may be intersected over time
        low_x = np.maximum.accumulate(np.maximum(center - half, 0.0), axis=-1)
        high_x = np.minimum.accumulate(np.minimum(center + half, 1.0), axis=-1)
        return 2.0 * low_x - 1.0, 2.0 * high_x - 1.0


#: every sequence, by the name ``--stream-method`` takes; the first is the default
SEQUENCES = {cls.method: cls for cls in (BettingSequence, EmpiricalBernsteinSequence)}
METHODS = tuple(SEQUENCES)


def confidence_sequence(deltas, alpha: float = 0.05,
                        method: str = METHODS[0]) -> ConfidenceSequence:
    """The confidence sequence ``method`` (one of :data:`METHODS`) of paired deltas.

    Parameters
    ----------
    deltas : array_like, shape (..., T)
        Paired differences (variant minus base) in arrival order, fractions in ``[-1, 1]``
        (0/1 score differences, or differences of per-question, per-seed or per-cluster
        mean scores); leading axes are independent experiments.
    alpha : float
        The sequence holds the true mean at every look with probability >= ``1 - alpha``.
    method : str
        ``"betting"`` (default) or ``"empirical-bernstein"``.
    """
    check_choice(method, "method", METHODS, owner="confidence_sequence")
    return SEQUENCES[method](deltas, alpha)


def eb_confidence_sequence(deltas, alpha: float = 0.05) -> EmpiricalBernsteinSequence:
    """The empirical-Bernstein confidence sequence of paired deltas in ``[-1, 1]``
    (:func:`confidence_sequence` with ``method="empirical-bernstein"``)."""
    return EmpiricalBernsteinSequence(deltas, alpha)


@dataclass(frozen=True)
class MarginReading:
    """The first look (1-based; ``0``: never) at which each statement about ``delta =
    variant - base`` holds on a sequence, shape (...) each.

    Attributes
    ----------
    margin : float
        ``M`` >= 0, fractions.
    better : ndarray
        ``L_t > M``.
    worse : ndarray
        ``U_t < -M``.
    not_worse : ndarray
        ``L_t > -M``.
    not_better : ndarray
        ``U_t < M``.
    equivalent : ndarray
        ``-M < L_t`` and ``U_t < M`` (the later of ``not_worse`` and ``not_better``).
    """

    margin: float
    better: np.ndarray
    worse: np.ndarray
    not_worse: np.ndarray
    not_better: np.ndarray

    @property
    def equivalent(self) -> np.ndarray:
        both = (self.not_worse > 0) & (self.not_better > 0)
        return np.where(both, np.maximum(self.not_worse, self.not_better), 0)


def read_margin(cs: ConfidenceSequence, margin: float) -> MarginReading:
    """Read the statements of :class:`MarginReading` off ``cs`` at every look.

    Uses only :meth:`ConfidenceSequence.sides` at ``M`` and ``-M`` (exact for the betting
    sequence, whatever its grid)."""
    margin = check_number(margin, "margin", "read_margin", low=0.0, high=1.0, high_open=True)
    under_hi, over_hi = cs.sides(margin)
    if margin == 0.0:
        under_lo, over_lo = under_hi, over_hi
    else:
        under_lo, over_lo = cs.sides(-margin)
    return MarginReading(margin, better=first_true(under_hi), worse=first_true(over_lo),
                         not_worse=first_true(under_lo), not_better=first_true(over_hi))


@dataclass(frozen=True)
class StreamVerdict:
    """A decision read off a sequence at the first look where it is decided.

    Attributes
    ----------
    verdict : ndarray of str, shape (...)
        :func:`stream_claim`: ``"shown"``, ``"refuted"`` or ``"inconclusive"`` (not decided
        within the stream, or shown and refuted at the same look: an empty sequence).
        :func:`three_way`: ``"better"``, ``"worse"``, ``"equivalent"`` or ``"undecided"``.
    stopped_at : ndarray of int, shape (...)
        That look, 1-based; ``0`` when never decided.
    empty_after : ndarray of int, shape (...), or None
        :func:`stream_claim`: the look after which the sequence's running intersection
        became empty (``0``: never); such a stream is ``"inconclusive"`` whatever it showed
        before (its data contradict the sequence's exchangeability). ``None`` where not
        computed (:func:`three_way`, :func:`claim_decision`).
    """

    verdict: np.ndarray
    stopped_at: np.ndarray
    empty_after: np.ndarray | None = None


def _first_of(times: dict, none: str) -> StreamVerdict:
    """The outcome whose first look comes first (``none`` if none ever happens; ``none``
    too when two different outcomes tie at that look)."""
    names = list(times)
    stack = np.stack([np.where(times[k] > 0, times[k], np.iinfo(np.int64).max)
                      for k in names])
    first = stack.min(axis=0)
    ties = (stack == first).sum(axis=0) > 1
    decided = first < np.iinfo(np.int64).max
    label = np.asarray(names, dtype=object)[stack.argmin(axis=0)]
    verdict = np.where(decided & ~ties, label, none).astype(str)
    return StreamVerdict(verdict, np.where(decided, first, 0))


def stream_claim(deltas, claim: str, margin: float, alpha: float = 0.05,
                 method: str = METHODS[0]) -> StreamVerdict:
    """A claim about ``delta = variant - base`` decided by a watcher who looks after every
    item, on the ``1 - 2 alpha`` sequence (one-sided level ``alpha``).

    Parameters
    ----------
    deltas : array_like, shape (..., T)
        Paired differences in arrival order, fractions in ``[-1, 1]``.
    claim : {"superiority", "non-inferiority", "equivalence"}
        Shown / refuted as in :func:`protocols.claims.claim_verdict`: superiority ``L >
        M`` / ``U < M``; non-inferiority ``L > -M`` / ``U < -M``; equivalence inside ``(-M,
        M)`` / ``L > M`` or ``U < -M``.
    margin : float
        ``M``, fractions; > 0 except for superiority (0: "variant better").
    alpha : float
        One-sided level: P(the claim is ever shown while its null holds) <= ``alpha``.
    method : str
        One of :data:`METHODS`.

    Returns
    -------
    StreamVerdict
    """
    check_choice(claim, "claim", CLAIMS, owner="stream_claim")
    alpha = check_alpha(alpha, owner="stream_claim")
    check_number(alpha, "alpha", "stream_claim", high=0.5, high_open=True)
    margin = check_number(margin, "margin", "stream_claim", low=0.0, high=1.0,
                          low_open=claim != "superiority", high_open=True)
    return decide_claim(confidence_sequence(deltas, 2.0 * alpha, method), claim, margin)


def decide_claim(cs: ConfidenceSequence, claim: str, margin: float, *,
                 locate: bool = True) -> StreamVerdict:
    """``claim`` at ``margin`` (fractions) read off ``cs`` (the ``1 - 2 alpha`` sequence
    for a one-sided level ``alpha``), as :func:`stream_claim` decides it: the first look
    where it is shown or refuted, and ``"inconclusive"`` where the sequence's running
    intersection became empty within the stream (:meth:`ConfidenceSequence.empty_after`:
    the units' mean drifted as they arrived, so neither side's reading is valid). Voiding
    a verdict never adds a false claim, so the level of :func:`claim_decision` holds.
    ``locate=False`` (the decision grid) skips finding the look where it emptied
    (:meth:`~protocols.streaming_base.ConfidenceSequence.empty_after`); the verdicts are
    the same."""
    decided = claim_decision(read_margin(cs, margin), claim)
    empty = cs.empty_after(locate)
    void = empty > 0
    return StreamVerdict(np.where(void, "inconclusive", decided.verdict).astype(str),
                         np.where(void, 0, decided.stopped_at), empty)


def claim_decision(reading: MarginReading, claim: str) -> StreamVerdict:
    """``claim`` (one of :data:`CLAIMS`) shown or refuted, from a :class:`MarginReading`
    (of the ``1 - 2 alpha`` sequence for a one-sided level ``alpha``)."""
    r = reading
    if claim == "superiority":
        shown, refuted = r.better, r.not_better
    elif claim == "non-inferiority":
        shown, refuted = r.not_worse, r.worse
    else:
        check_choice(claim, "claim", CLAIMS, owner="claim_decision")
        shown = r.equivalent
        refuted = np.where((r.better > 0) & (r.worse > 0), np.minimum(r.better, r.worse),
                           np.maximum(r.better, r.worse))
    return _first_of({"shown": shown, "refuted": refuted}, "inconclusive")


def three_way(cs: ConfidenceSequence, margin: float) -> StreamVerdict:
    """Better by more than ``M``, worse by more than ``M``, or equivalent within ``M``:
    whichever ``cs`` shows first (seqbench's three declarations). Read on a ``1 - alpha``
    sequence, any false declaration over all looks has probability <= ``alpha``."""
    r = read_margin(cs, check_number(margin, "margin", "three_way", low=0.0, high=1.0,
                                     low_open=True, high_open=True))
    return _first_of({"better": r.better, "worse": r.worse, "equivalent": r.equivalent},
                     "undecided")
