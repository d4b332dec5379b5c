"""``evaluate --stream``: the anytime-valid reading of two arms' paired differences in the
order the units arrived — by question or seed id, numerically when the ids are numbers, the
order harnesses number their samples (numbers: :mod:`protocols.streaming`).

The units are the design's: questions for fixed models, paired seeds for methods, and
clusters (each the mean delta of its questions, in the order of its first question) when
the questions are clustered. With ``--claim`` the claim is decided on the ``1 - 2 alpha``
sequence at the first unit where it is shown or refuted, and ``--gate`` reads that
verdict.
"""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import METHODS_INDEPENDENT, METHODS_PAIRED, MODELS_CLUSTERED, Design
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError
from protocols.streaming import METHODS, confidence_sequence, stream_claim

#: the sequences ``--stream-method`` chooses from; the first is the default
STREAM_METHODS = METHODS


def stream_units(scores: ArmScores, design: Design) -> tuple[np.ndarray, str]:
    """``(deltas, unit)``: variant minus base per paired unit, in the file's order."""
    if scores.m != 2:
        raise InvalidParameterError(f"--stream reads two arms as they arrive; got {scores.m} arms "
                                    f"({', '.join(scores.arms)})")
    base, variant = scores.arm(scores.arms[0]), scores.arm(scores.arms[1])
    if design.kind == METHODS_INDEPENDENT:
        raise InvalidParameterError("--stream needs paired units (questions or paired seeds); with "
                                    "--unpaired seeds there are none")
    if design.kind == METHODS_PAIRED:
        return (variant.mean(axis=1) - base.mean(axis=1))[_arrival(scores.run_ids)], "seeds"
    order = _arrival(scores.question_ids)
    deltas = (variant.mean(axis=0) - base.mean(axis=0))[order]
    if design.kind != MODELS_CLUSTERED or scores.clusters is None:
        return deltas, "questions"
    # a cluster's mean is known once its questions are in: clusters in the order their
    # first question arrived (a CS for the mean of the cluster means)
    labels = np.asarray(scores.clusters)[order]
    _, first, codes = np.unique(labels, return_index=True, return_inverse=True)
    means = np.bincount(codes, weights=deltas) / np.bincount(codes)
    return means[np.argsort(first, kind="stable")], "clusters"


def _arrival(ids) -> np.ndarray:
    """The order units arrived in: by id, numerically when every id is a number (the order
    harnesses number their samples and seeds), else as text."""
    ids = [str(i) for i in ids]
    try:
        keys = [float(i) for i in ids]
    except ValueError:
        keys = ids
    return np.argsort(np.array(keys, dtype=object if keys is ids else float), kind="stable")


def stream_summary(scores: ArmScores, design: Design, alpha: float, fraction: bool,
                   method: str = METHODS[0], claim: str | None = None,
                   margin: float | None = None) -> dict:
    """The sequence's last interval, where 0 first left it and, with ``claim``, the
    claim's anytime-valid verdict at ``margin`` (fractions) and the unit it was reached at."""
    deltas, unit = stream_units(scores, design)
    if not fraction:
        raise InvalidParameterError("--stream needs differences of fractions in [-1, 1] "
                                    "(accuracies); a --metric-range metric has no such bound")
    cs = confidence_sequence(deltas, alpha, method)
    stopped, sign = cs.decision(0.0)
    low, high = cs.interval_at(cs.n)
    out = {"method": cs.method, "label": cs.label, "unit": unit, "n": cs.n, "alpha": alpha,
           "low": float(low), "high": float(high), "stopped_at": int(stopped),
           "direction": int(sign), "low_at_stop": None, "high_at_stop": None}
    if stopped:
        at_low, at_high = cs.interval_at(int(stopped))
        out.update(low_at_stop=float(at_low), high_at_stop=float(at_high))
    if claim is not None:
        margin = 0.0 if margin is None else float(margin)
        verdict = stream_claim(deltas, claim, margin, alpha, method)
        at = int(verdict.stopped_at)
        claim_cs = confidence_sequence(deltas, 2.0 * alpha, method)
        c_low, c_high = claim_cs.interval_at(at if at else cs.n)
        out["claim"] = {"claim": claim, "margin": margin, "verdict": str(verdict.verdict),
                        "decided_at": at, "level": 1.0 - 2.0 * alpha,
                        "low": float(c_low), "high": float(c_high)}
    return out
