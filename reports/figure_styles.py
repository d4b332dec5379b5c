"""How protocols look in every figure: honest ones in colour, the recommended one thickest and
on top, pitfalls grey and dashed, judged for the study design drawn (:func:`drawing_for`);
rates labelled in percent on clean ticks.
"""

from __future__ import annotations

import contextlib
import contextvars

import pandas as pd

import protocols
from evalcal_core import designs
from evalcal_core.designs import COMPARE_MODELS
from sim.labels import DEFAULT_DESIGN, design_of

#: grayscale-safe styling: line style and marker carry the identity, not only colour
STYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p", "d"]
#: Okabe-Ito colours (colour-blind safe), the recommended protocol's first
HONEST_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"]
PITFALL_GRAYS = ["#555555", "#888888", "#aaaaaa"]
PITFALL_STYLES = ["--", ":", (0, (5, 1, 1, 1))]

#: the study design whose labels are drawn (:func:`drawing_for`); paired seeds unless set
_DESIGN = contextvars.ContextVar("design", default=DEFAULT_DESIGN)


@contextlib.contextmanager
def drawing_for(design: str):
    """Draw and label protocols for study design ``design`` (:data:`evalcal_core.designs.KINDS`)
    inside the block: which are pitfalls and which one is recommended depend on it."""
    token = _DESIGN.set(design)
    try:
        yield
    finally:
        _DESIGN.reset(token)


def frame_design(frame: pd.DataFrame) -> str:
    """The design the generators of a calibration frame simulate (paired seeds when they
    simulate several, or when the frame names none)."""
    if "generator" not in frame or frame.empty:
        return DEFAULT_DESIGN
    kinds = {design_of(g) for g in frame["generator"].unique()}
    return kinds.pop() if len(kinds) == 1 else DEFAULT_DESIGN


def _k_words() -> str:
    """What k counts under the design drawn: seeds, or decoding runs of fixed models."""
    if designs.get(_DESIGN.get()).compare == COMPARE_MODELS:
        return "k, runs per model (decoding repeats)"
    return "k, seeds per arm"


def is_recommended(name: str) -> bool:
    """Whether protocol ``name`` is the first choice for the design drawn
    (``Protocol.recommended_for``): it is drawn last (on top) and thickest."""
    try:
        return _DESIGN.get() in protocols.protocol_class(name).recommended_for
    except ValueError:  # a name not registered here
        return False


def recommended_name(names=None) -> str:
    """The recommended protocol (among ``names`` if given; '' when none is)."""
    pool = protocols.names() if names is None else names
    return next((n for n in pool if is_recommended(n)), "")


def is_pitfall(name: str) -> bool:
    """Whether protocol ``name`` is a pitfall for the design drawn, shown for teaching
    (:meth:`protocols.Protocol.label`)."""
    try:
        return bool(protocols.protocol_class(name).label(_DESIGN.get()))
    except ValueError:  # a name not registered here: treat it as honest
        return False


def protocol_order(names) -> list[str]:
    """The recommended protocol, the other honest ones, then the pitfalls (each sorted)."""
    return sorted(names, key=lambda n: (not is_recommended(n), is_pitfall(n), n))


def protocol_styles(names) -> dict[str, dict]:
    """Matplotlib keyword arguments per protocol, stable across the panels of a figure."""
    styles, honest, pitfall = {}, 0, 0
    for name in protocol_order(names):
        if is_recommended(name):
            styles[name] = dict(color=HONEST_COLORS[0], ls="-", marker="o", lw=3.2, ms=6,
                                zorder=10)
        elif not is_pitfall(name):
            honest += 1
            styles[name] = dict(color=HONEST_COLORS[honest % len(HONEST_COLORS)],
                                ls=STYLES[honest % len(STYLES)],
                                marker=MARKERS[honest % len(MARKERS)], lw=1.6, ms=4.5,
                                zorder=6)
        else:
            styles[name] = dict(color=PITFALL_GRAYS[pitfall % len(PITFALL_GRAYS)],
                                ls=PITFALL_STYLES[pitfall % len(PITFALL_STYLES)],
                                marker=MARKERS[(pitfall + 6) % len(MARKERS)], mfc="white",
                                lw=1.1, ms=4, zorder=3)
            pitfall += 1
    return styles



def percent_ticks(axis) -> None:
    """Rates (fractions) on ``axis`` (``ax.yaxis``/``ax.xaxis``) labelled in percent, with
    ticks on steps of 1, 2 or 5 times a power of ten and every label exact.

    Matplotlib's default locator may step by 2.5%, which whole-percent labels round to 0, 2,
    5, 8, 10%; here a tick is where its label says, and on a gridline.
    """
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axis.set_major_locator(MaxNLocator(nbins=8, steps=[1, 2, 5, 10]))
    axis.set_major_formatter(FuncFormatter(_percent_label))


def _percent_label(x, _pos=None) -> str:
    """``0.025 -> '2.5%'``: the fewest decimals that show the value exactly (up to 0.01%)."""
    text = f"{100 * x:.2f}".rstrip("0").rstrip(".")
    return ("0" if text in ("-0", "") else text) + "%"
