"""``evaluate --stream``: the anytime-valid reading of two arms' paired differences in the
order the units arrived (numbers: :mod:`protocols.streaming`).

The order is the one the input states, never the ids sorted: each unit arrives at its
first row in the results file, at its smallest value of an ``--order-by`` column, or at its
first sample in a harness log (:class:`evalcal_core.scores.Arrival`); arrays given without
one are read in the order given. Two units at the same time along the streamed axis are
refused (no order to read).

The units are the design's: questions for fixed models, paired seeds for methods, and
clusters when the questions are clustered. A cluster is one unit, its mean delta, known
once its last question is in: clusters stream in the order they are complete
(:func:`cluster_stream`). A confidence sequence over questions is valid only if the
questions arrived exchangeably (in random order); when a file groups them by topic, the
valid reading streams the topics (``--cluster``), and the text says so.

With ``--claim`` the claim is decided on the ``1 - 2 alpha`` sequence at the first unit
where it is shown or refuted (:func:`protocols.streaming.decide_claim`), and ``--gate``
reads that verdict. A running intersection that becomes empty is reported as that finding
(``intersection_empty_after``), never as an interval, and the claim is then inconclusive.
"""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import Design
from evalcal_core.scores import GIVEN_ORDER, ArmScores
from evalcal_core.validate import InvalidParameterError, fail
from protocols.streaming import METHODS, confidence_sequence, decide_claim

from . import designs

#: the sequences ``--stream-method`` chooses from; the first is the default
STREAM_METHODS = METHODS


def arrival_order(times, ids, what: str, source: str) -> np.ndarray:
    """Positions of the units in the order they arrived: ``times`` sorted (stable).

    Parameters
    ----------
    times : array_like, shape (n,)
        Each unit's arrival time (row positions, or an ``--order-by`` column's values).
    ids : sequence of str
        The units' ids, to name two that tie.
    what : str
        The units' name (``questions``, ``seeds``), for the message.
    source : str
        Where the times came from (``file rows``, ``column t``), for the message.

    Raises
    ------
    InvalidParameterError
        Two units with the same time: the stream has no order to read.
    """
    times = np.asarray(times)
    order = np.argsort(times, kind="stable")
    same = times[order][1:] == times[order][:-1]
    if same.any():
        i = int(np.argmax(same))
        a, b = ids[order[i]], ids[order[i + 1]]
        raise fail("--order-by", f"a column giving each of the {len(times)} {what} its own "
                   f"value (--stream needs one arrival order; read from {source})",
                   got=f"the same value {times[order[i]].item()!r} for {what} {a!r} and {b!r}")
    return order


def cluster_stream(deltas, labels) -> tuple[np.ndarray, np.ndarray]:
    """Cluster means of per-question deltas, in the order the clusters are complete.

    Parameters
    ----------
    deltas : array_like, shape (..., n)
        Paired deltas (fractions) of the questions in arrival order; leading axes are
        independent experiments (the decision grid's batch).
    labels : array_like, shape (n,)
        Each question's cluster, in the same order.

    Returns
    -------
    means : ndarray, shape (..., c)
        Each cluster's mean delta (fractions), the cluster whose last question arrived
        first at the front: a watcher knows a cluster's mean only once all of it is in.
    order : ndarray of int, shape (c,)
        The clusters' codes (:func:`numpy.unique` order of ``labels``) in that order.
    """
    deltas = np.asarray(deltas, dtype=float)
    _, codes = np.unique(np.asarray(labels), return_inverse=True)
    count = np.bincount(codes)
    last = np.zeros(len(count), dtype=np.int64)
    np.maximum.at(last, codes, np.arange(len(codes)))
    order = np.argsort(last, kind="stable")
    # one matrix product over the leading axes: column j averages cluster order[j]
    weights = (codes[:, None] == order[None, :]) / count[order][None, :]
    return deltas @ weights, order


def stream_units(scores: ArmScores, design: Design) -> tuple[np.ndarray, str, str]:
    """``(deltas, unit, order)``: variant minus base per paired unit in arrival order, the
    units' name and where the order came from. The units are the design's
    (:meth:`~.designs.DesignAnalysis.stream_units`); units that carry clusters are read
    as clusters, each once it is complete."""
    if scores.m != 2:
        raise InvalidParameterError(f"--stream reads two arms as they arrive; got {scores.m} arms "
                                    f"({', '.join(scores.arms)})")
    deltas, times, ids, what, labels = designs.of(design).stream_units(scores)
    source = GIVEN_ORDER if scores.arrival is None else scores.arrival.source
    if labels is None:
        order = arrival_order(times, ids, what, source)
        return deltas[order], what, source
    # clusters: a question's place only decides when its cluster is complete, so ties
    # between questions of one cluster do not matter; ties across clusters are refused
    # below through the clusters' completion times
    order = np.lexsort((np.arange(len(times)), times))
    deltas = deltas[order]
    labels = labels[order]
    means, cluster_order = cluster_stream(deltas, labels)
    # a cluster is complete at its last question: two complete at the same time are a tie
    names, codes = np.unique(labels, return_inverse=True)
    t = np.asarray(times)[order]
    done = np.full(len(names), t.min(), dtype=t.dtype)
    np.maximum.at(done, codes, t)
    arrival_order(done[cluster_order], list(names[cluster_order]), "clusters", source)
    return means, "clusters", source


def stream_sequences(deltas, alpha: float, method: str = METHODS[0], *, claim: bool = True,
                     lower_is_better: bool = False):
    """The two confidence sequences ``--stream`` reads on paired deltas in arrival order:
    the ``1 - alpha`` sequence of the mean delta and, with ``claim``, the ``1 - 2 alpha``
    sequence a claim is decided on (of ``base - variant`` for a loss). Leading axes of
    ``deltas`` are independent streams: :func:`stream_summary` passes one, the decision
    grid's streaming family thousands.

    Parameters
    ----------
    deltas : ndarray, shape (..., units)
        ``variant - base`` per unit (fractions), in arrival order.
    alpha : float
    method : str
        One of :data:`protocols.streaming.METHODS`.
    claim : bool
        Whether to build the claim's sequence.
    lower_is_better : bool
        The metric is a loss: the claim's sequence is of the negated deltas.

    Returns
    -------
    cs, claim_cs : protocols.streaming sequences (``claim_cs`` ``None`` without ``claim``)
    """
    cs = confidence_sequence(deltas, alpha, method)
    if not claim:
        return cs, None
    return cs, confidence_sequence(-deltas if lower_is_better else deltas, 2.0 * alpha, method)


def stream_summary(scores: ArmScores, design: Design, alpha: float, fraction: bool,
                   method: str = METHODS[0], claim: str | None = None,
                   margin: float | None = None, lower_is_better: bool = False) -> dict:
    """The sequence's last interval, where 0 first left it and, with ``claim``, the
    claim's anytime-valid verdict at ``margin`` (fractions) and the unit it was reached at.

    ``order`` names where the arrival order came from. Where the running intersection
    became empty (``intersection_empty_after``, the unit after which it did; ``0``: never)
    the interval is ``None`` and so is the claim's where its own (``1 - 2 alpha``)
    sequence did, whose verdict is then inconclusive. ``lower_is_better`` (a loss): the
    claim is decided on ``base - variant``'s sequence (lower is better, the same reading as
    the fixed-n claim's) and its interval given on ``variant - base``; the output says so."""
    deltas, unit, order = stream_units(scores, design)
    if not fraction:
        raise InvalidParameterError("--stream needs differences of fractions in [-1, 1] "
                                    "(accuracies); a --metric-range metric has no such bound")
    cs, claim_cs = stream_sequences(deltas, alpha, method, claim=claim is not None,
                                    lower_is_better=lower_is_better)
    stopped, sign = cs.decision(0.0)
    empty = int(cs.empty_after())
    low, high = (None, None) if empty else map(float, cs.interval_at(cs.n))
    out = {"method": cs.method, "label": cs.label, "unit": unit, "order": order, "n": cs.n,
           "alpha": alpha, "low": low, "high": high, "intersection_empty_after": empty,
           "stopped_at": int(stopped), "direction": int(sign), "low_at_stop": None,
           "high_at_stop": None}
    if stopped:
        at_low, at_high = cs.interval_at(int(stopped))
        out.update(low_at_stop=float(at_low), high_at_stop=float(at_high))
    if lower_is_better:
        out["lower_is_better"] = True
    if claim is not None:
        margin = 0.0 if margin is None else float(margin)
        verdict = decide_claim(claim_cs, claim, margin)
        at, claim_empty = int(verdict.stopped_at), int(verdict.empty_after)
        c_low, c_high = ((None, None) if claim_empty
                         else map(float, claim_cs.interval_at(at if at else cs.n)))
        if lower_is_better and not claim_empty:
            c_low, c_high = -c_high, -c_low  # read on base - variant, shown on variant - base
        out["claim"] = {"claim": claim, "margin": margin, "verdict": str(verdict.verdict),
                        "decided_at": at, "level": 1.0 - 2.0 * alpha,
                        "intersection_empty_after": claim_empty, "low": c_low,
                        "high": c_high}
    return out
