"""``--forest PATH.png``: every comparison's difference with its adjusted (simultaneous)
interval, the unadjusted interval thinner behind it, zero and the claim's margin drawn."""

from __future__ import annotations

import math
import re
from pathlib import Path

from evalcal_core.atomic import check_target
from evalcal_core.validate import InvalidParameterError

from .._save import save_png

#: characters kept of an arm name in a tick label (a 5,000-character name would make the
#: figure thousands of inches wide, and matplotlib refuse it)
MAX_LABEL = 40

#: resolution of the --forest PNGs, dots per inch
FOREST_DPI = 120

#: what the thick interval of each correction is: holm, bh and bonferroni draw the
#: single-step Bonferroni interval (Holm's and BH's steps have no interval of their own)
INTERVAL_KIND = {"holm": "Bonferroni-simultaneous", "bonferroni": "Bonferroni-simultaneous",
                 "bh": "Bonferroni-simultaneous", "maxt": "max-T simultaneous",
                 "none": "unadjusted"}


def check_forest_path(path, option: str = "--forest") -> Path:
    """Refuse a forest-plot path that is empty, lacks ``.png`` or names no regular file.

    matplotlib appends ``.png`` to a name without it, so the file written would not be the
    one named; the suffix is required rather than guessed.

    Raises
    ------
    ValueError
        One line naming ``option``, the value and what is allowed.
    """
    text = str(path)
    if not text.strip() or not text.lower().endswith(".png") or text.endswith(("/", "\\")):
        raise InvalidParameterError(f"{option} {text!r} is not a PNG path: give a file name ending "
                                    "in .png")
    if Path(text).name.lower() == ".png":
        raise InvalidParameterError(f"{option} {text!r} is not a PNG path: give a file name ending "
                                    "in .png")
    try:
        check_target(text)
    except ValueError as exc:
        raise InvalidParameterError(f"{option}: {exc}") from None
    return Path(text)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def plot_label(name: str, limit: int = MAX_LABEL) -> str:
    """``name`` made safe for a matplotlib label (the name itself is unchanged elsewhere).

    Control characters (CR, tab, newline) become their visible escapes, ``$`` is escaped
    so that no mathtext is parsed, and a name longer than ``limit`` characters is cut
    with an ellipsis.
    """
    text = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"),
                        str(name))
    if len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return text.replace("$", r"\$")


def forest_plot(analysis, units, path) -> str:
    """Write the forest plot to ``path`` (PNG, atomically) and return the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = check_forest_path(path)
    comps = analysis.comparisons
    f = units.factor
    fig, ax = plt.subplots(figsize=(7.5, 1.5 + 0.45 * len(comps)))
    for i, c in enumerate(comps):
        y = len(comps) - 1 - i
        if not math.isnan(c.ci_low):
            ax.plot([f * c.ci_low, f * c.ci_high], [y + 0.18, y + 0.18], color="0.45", lw=1,
                    marker="|", ms=6)
        if not math.isnan(c.sim_low):
            ax.plot([f * c.sim_low, f * c.sim_high], [y, y], color="C0" if c.significant
                    else "0.3", lw=3, solid_capstyle="butt")
        ax.plot([f * c.estimate], [y], "o", color="black", ms=5)
    ax.axvline(0, color="black", lw=0.8)
    if analysis.claim and analysis.margin:
        m = f * analysis.margin
        marks = {"superiority": [m], "non-inferiority": [-m], "equivalence": [-m, m]}
        for x in marks[analysis.claim]:
            ax.axvline(x, color="C3", ls="--", lw=1)
    ax.set_yticks(range(len(comps)))
    ax.set_yticklabels([f"{plot_label(c.variant)} - {plot_label(c.base)}"
                        for c in reversed(comps)])
    kind = INTERVAL_KIND.get(analysis.correction, analysis.correction)
    ax.set_xlabel(f"difference ({units.name}); thick: {100 * analysis.sim_level:.4g}% "
                  f"{kind} interval, thin above: unadjusted")
    margin = (f"\ndashed: {analysis.claim} margin" if analysis.claim and analysis.margin
              else "")
    ax.set_title(f"{plot_label(analysis.primary)}, {analysis.design.describe()}{margin}",
                 fontsize=9)
    ax.set_ylim(-0.6, len(comps) - 0.3)
    fig.tight_layout()
    return str(save_png(fig, path, dpi=FOREST_DPI))
