"""``evaluate --stream``: the anytime-valid reading of two arms' paired differences in the
order the units arrived — by question or seed id, numerically when the ids are numbers, the
order harnesses number their samples (numbers: :mod:`protocols.streaming`)."""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import Design
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError
from protocols.streaming import eb_confidence_sequence

from .render import Units


def stream_units(scores: ArmScores, design: Design) -> tuple[np.ndarray, str]:
    """``(deltas, unit)``: variant minus base per paired unit, in the file's order."""
    if scores.m != 2:
        raise InvalidParameterError(f"--stream reads two arms as they arrive; got {scores.m} arms "
                                    f"({', '.join(scores.arms)})")
    base, variant = scores.arm(scores.arms[0]), scores.arm(scores.arms[1])
    if design.kind == "methods_independent":
        raise InvalidParameterError("--stream needs paired units (questions or paired seeds); with "
                                    "--unpaired seeds there are none")
    if design.kind == "methods_paired":
        return (variant.mean(axis=1) - base.mean(axis=1))[_arrival(scores.run_ids)], "seeds"
    return (variant.mean(axis=0) - base.mean(axis=0))[_arrival(scores.question_ids)], "questions"


def _arrival(ids) -> np.ndarray:
    """The order units arrived in: by id, numerically when every id is a number (the order
    harnesses number their samples and seeds), else as text."""
    ids = [str(i) for i in ids]
    try:
        keys = [float(i) for i in ids]
    except ValueError:
        keys = ids
    return np.argsort(np.array(keys, dtype=object if keys is ids else float), kind="stable")


def stream_summary(scores: ArmScores, design: Design, alpha: float, units: Units) -> dict:
    """The confidence sequence's last interval and where 0 first left it."""
    deltas, unit = stream_units(scores, design)
    if not units.fraction:
        raise InvalidParameterError("--stream needs differences of fractions in [-1, 1] "
                                    "(accuracies); a --metric-range metric has no such bound")
    cs = eb_confidence_sequence(deltas, alpha)
    stopped, sign = cs.decision(0.0)
    return {"method": "empirical-Bernstein confidence sequence (Waudby-Smith & Ramdas 2024)",
            "unit": unit, "n": int(deltas.size), "alpha": alpha,
            "low": float(cs.low[-1]), "high": float(cs.high[-1]),
            "stopped_at": int(stopped), "direction": int(sign),
            "low_at_stop": float(cs.low[stopped - 1]) if stopped else None,
            "high_at_stop": float(cs.high[stopped - 1]) if stopped else None}


def stream_lines(s: dict, names, units: Units) -> list[str]:
    """The streaming reading as text lines."""
    level = f"{100 * (1 - s['alpha']):g}%"
    lines = [f"anytime-valid ({s['method']}; {level}, valid however often you look): after "
             f"{s['n']:,} {s['unit']} {names[1]} - {names[0]} lies in "
             f"{units.interval(s['low'], s['high'])} {units.short}".rstrip()]
    if s["stopped_at"]:
        better = names[1] if s["direction"] > 0 else names[0]
        lines.append(f"0 left the sequence after {s['unit'][:-1]} {s['stopped_at']:,} "
                     f"({better} better; there "
                     f"{units.interval(s['low_at_stop'], s['high_at_stop'])}): a watcher "
                     "could have stopped there")
    else:
        lines.append("0 never left the sequence: no anytime-valid decision yet (more "
                     f"{s['unit']} or a larger difference needed)")
    return lines
