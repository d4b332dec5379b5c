"""``--forest PATH.png``: every comparison's difference with its adjusted (simultaneous)
interval, the unadjusted interval thinner behind it, zero and the claim's margin drawn."""

from __future__ import annotations

import math
import os
import re
import textwrap
from pathlib import Path

from evalcal_core.atomic import check_target
from evalcal_core.validate import InvalidParameterError

from .._save import save_png

#: characters kept of an arm name in a tick label (a 5,000-character name would make the
#: figure thousands of inches wide, and matplotlib refuse it)
MAX_LABEL = 40

#: a long name is wrapped over lines of this many characters, at most this many lines (a
#: 200-character model name is shown whole), then cut with an ellipsis
WRAP_CHARS = 40
WRAP_LINES = 6

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
    return check_output_path(path, option, (".png",), "a PNG path")


def check_output_path(path, option: str, suffixes: tuple, what: str) -> Path:
    """Refuse an output path that is empty, ends in a folder separator, is a bare suffix or
    lacks one of ``suffixes``, or names no regular file (:func:`evalcal_core.atomic.
    check_target`), in one line: ``OPTION 'VALUE' is not WHAT: give a file name ending in
    SUFFIX``."""
    text = str(path)
    name = Path(text).name.lower()
    if (not text.strip() or not name.endswith(suffixes) or name in suffixes
            or text.endswith(("/", "\\"))):
        raise InvalidParameterError(f"{option} {text!r} is not {what}: give a file name ending "
                                    f"in {suffixes[0]}")
    try:
        check_target(text)
    except ValueError as exc:
        raise InvalidParameterError(f"{option}: {exc}") from None
    # the folder is checked now, not when the plot is saved after the analysis has run
    folder = next((p for p in Path(text).absolute().parents if p.exists()), None)
    if folder is not None and not folder.is_dir():
        raise InvalidParameterError(f"{option} {text!r} is under the file {folder}: give a "
                                    "path in a folder")
    if folder is not None and not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidParameterError(f"{option} {text!r}: the folder {folder} is not writable")
    return Path(text)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def plot_label(name: str, limit: int = MAX_LABEL) -> str:
    """``name`` made safe for a matplotlib label (the name itself is unchanged elsewhere).

    Control characters (CR, tab, newline) become their visible escapes, ``$`` is escaped
    so that no mathtext is parsed, and a name longer than ``limit`` characters is cut
    with an ellipsis.
    """
    return _cut(_visible(name), limit).replace("$", r"\$")


def _visible(name) -> str:
    """Control characters as their visible escapes."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"),
                        str(name))


def _cut(text: str, limit: int) -> str:
    return text[: limit - 1] + "\u2026" if len(text) > limit else text


def wrapped_label(name: str, width: int = WRAP_CHARS, lines: int = WRAP_LINES) -> str:
    """``name`` as :func:`plot_label` makes it safe, over lines of at most ``width``
    characters (broken anywhere: model names rarely have spaces), at most ``lines`` lines."""
    text = _cut(_visible(name), width * lines)
    # cut into lines before escaping ``$``: a line break between ``\`` and ``$`` would
    # leave a bare ``$`` (mathtext)
    return "\n".join(text[i:i + width].replace("$", r"\$")
                     for i in range(0, max(len(text), 1), width))


def keep_inside(fig, texts, *, min_chars: int = 16) -> None:
    """Lay ``fig`` out and wrap each of ``texts`` (titles, axis labels) until it lies
    inside the figure.

    A title or x-label is centred on its axes; long tick labels push the axes right, so a
    long line would run past the figure's edge and be cut in the PNG. Each line is re-wrapped
    at 85% of its width until the text's box is inside the figure (or the lines are
    ``min_chars`` characters), and the layout redone.
    """
    fig.tight_layout()
    for text in texts:
        lines = text.get_text().split("\n")
        width = max(len(line) for line in lines)
        while width > min_chars:
            box = text.get_window_extent(fig.canvas.get_renderer())
            if box.x0 >= fig.bbox.x0 - 0.5 and box.x1 <= fig.bbox.x1 + 0.5:
                break
            width = int(0.85 * width)
            text.set_text("\n".join(textwrap.fill(line, width, break_on_hyphens=False)
                                    for line in lines))
            fig.tight_layout()


def no_verdict(comparison) -> bool:
    """Whether a comparison was given no verdict and so has no interval to draw (a refusal
    of its protocol, a real-pool pitfall, or no variance estimate)."""
    return math.isnan(comparison.ci_low) and math.isnan(comparison.sim_low)


def drawn_intervals(analysis) -> str:
    """What the forest plot's bars are, naming only those drawn (every comparison refused
    leaves none): ``"thick: 95% max-T simultaneous interval, thin above: unadjusted"``, or
    ``""``. The x-label and the page's caption both say it."""
    comps = analysis.comparisons
    kind = INTERVAL_KIND.get(analysis.correction, analysis.correction)
    drawn = []
    if any(not math.isnan(c.sim_low) for c in comps):
        drawn.append(f"thick: {100 * analysis.sim_level:.4g}% {kind} interval")
    if any(not math.isnan(c.ci_low) for c in comps):
        drawn.append("thin above: unadjusted")
    return ", ".join(drawn)


def forest_figure(analysis, units):
    """The forest plot of ``analysis`` on a new figure, laid out so that no label is cut;
    returns the figure (the caller saves or embeds it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    comps = analysis.comparisons
    f = units.factor
    labels = [f"{wrapped_label(c.variant)}\n- {wrapped_label(c.base)}" if
              max(len(c.variant), len(c.base)) > WRAP_CHARS
              else f"{plot_label(c.variant)} - {plot_label(c.base)}" for c in reversed(comps)]
    # each row as tall as its label's lines need
    rows = max(label.count("\n") + 1 for label in labels)
    fig, ax = plt.subplots(figsize=(7.5, 1.5 + max(0.45, 0.17 * rows) * len(comps)))
    for i, c in enumerate(comps):
        y = len(comps) - 1 - i
        if not math.isnan(c.ci_low):
            ax.plot([f * c.ci_low, f * c.ci_high], [y + 0.18, y + 0.18], color="0.45", lw=1,
                    marker="|", ms=6)
        if not math.isnan(c.sim_low):
            ax.plot([f * c.sim_low, f * c.sim_high], [y, y], color="C0" if c.significant
                    else "0.3", lw=3, solid_capstyle="butt")
        if no_verdict(c):
            # a refused comparison: its estimate alone, open, and said so beside it
            ax.plot([f * c.estimate], [y], "o", mfc="white", mec="black", ms=5)
            ax.annotate("no verdict", (f * c.estimate, y), xytext=(6, 0),
                        textcoords="offset points", va="center", fontsize=8, color="0.3")
        else:
            ax.plot([f * c.estimate], [y], "o", color="black", ms=5)
    ax.axvline(0, color="black", lw=0.8)
    if analysis.claim and analysis.margin:
        m = f * analysis.margin
        marks = {"superiority": [m], "non-inferiority": [-m], "equivalence": [-m, m]}
        for x in marks[analysis.claim]:
            ax.axvline(x, color="C3", ls="--", lw=1)
    if any(no_verdict(c) for c in comps):
        # room right of the farthest dot for its "no verdict" beside it (it crossed the
        # frame); read after zero and the margins are drawn, so both stay in view
        low, high = ax.get_xlim()
        ax.set_xlim(low, high + 0.2 * (high - low))
    ax.set_yticks(range(len(comps)))
    ax.set_yticklabels(labels, fontsize=8 if rows > 1 else None)
    refused = ("\nopen dot: the estimate of a comparison given no verdict (no interval; "
               "see the notes)" if any(no_verdict(c) for c in comps) else "")
    drawn = drawn_intervals(analysis)
    xlabel = ax.set_xlabel(f"difference ({units.name})" + (f"; {drawn}" if drawn else "")
                           + refused)
    margin = (f"\ndashed: {analysis.claim} margin" if analysis.claim and analysis.margin
              else "")
    title = ax.set_title(f"{plot_label(analysis.primary)}, {analysis.design.describe()}"
                         f"{margin}", fontsize=9)
    ax.set_ylim(-0.6, len(comps) - 0.3)
    keep_inside(fig, [title, xlabel])
    return fig


def forest_plot(analysis, units, path) -> str:
    """Write the forest plot to ``path`` (PNG, atomically) and return the path."""
    path = check_forest_path(path)
    return str(save_png(forest_figure(analysis, units), path, dpi=FOREST_DPI))
