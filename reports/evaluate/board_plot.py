"""``--leaderboard --forest PATH.png``: the ranked forest plot of a leaderboard.

One row per system, best first: its simultaneous rank interval as a bar on the rank axis
(1 = best), a dot at its rank by mean, its mean in the row's label, the possibly-best
systems in colour and each display tier on a band of its own shade. The numbers come
from :func:`protocols.leaderboard.leaderboard`; nothing is computed here.

The bars are rank intervals rather than intervals of the means because the separations are
simultaneous over the *differences*: the rank intervals are what those pairwise decisions
say about every system at once (see :mod:`protocols.leaderboard`). Systems in different
tiers are separated pairs.
"""

from __future__ import annotations

import numpy as np

from .._save import save_png
from .forest import FOREST_DPI, WRAP_CHARS, check_forest_path, keep_inside, wrapped_label

#: lines a system's name may take on the board (a row per system: longer names are cut)
BOARD_LINES = 5

#: label size (points) of a row: smaller on long boards so that the rows do not overlap
LABEL_POINTS = {40: 8.0, 90: 6.5}
SMALL_POINTS = 5.5
#: figure height (inches) per row: short boards get room, 135 systems fit one tall page
ROW_INCHES = {30: 0.28, 90: 0.17}
LONG_ROW_INCHES = 0.13


def _by_rows(table: dict, m: int, default: float) -> float:
    return next((v for limit, v in sorted(table.items()) if m <= limit), default)


def figure_size(m: int, lines: int = 1) -> tuple[float, float]:
    """Width and height (inches) of the figure for ``m`` systems whose longest label takes
    ``lines`` lines."""
    return 7.5, 1.6 + m * _by_rows(ROW_INCHES, m, LONG_ROW_INCHES) * max(1.0, 0.7 * lines)


def name_lines(names) -> int:
    """Lines the longest of ``names`` takes as a row label (at most :data:`BOARD_LINES`)."""
    longest = max((len(str(n)) for n in names), default=1)
    return min(BOARD_LINES, -(-longest // WRAP_CHARS))


def plot_board(board, names, *, fraction: bool = True, unit: str = "", ax=None):
    """Draw the ranked forest plot of ``board`` and return the Axes.

    Parameters
    ----------
    board : protocols.leaderboard.Leaderboard
        The computed leaderboard.
    names : sequence of str
        System names, in the board's input order.
    fraction : bool
        The means are fractions (shown as percent) rather than metric units.
    unit : str
        What the paired units are (``"questions"``, ``"seeds"``, ``"clusters"``), for the
        title.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure of :func:`figure_size` when omitted.

    Returns
    -------
    matplotlib.axes.Axes
        Row ``r`` (0 = best, drawn at the top at ``y = m - 1 - r``) is system
        ``board.order[r]``; the y tick labels name the systems top to bottom in rank order.
    """
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figure_size(len(names), name_lines(names)))
    from matplotlib.ticker import MaxNLocator

    order = np.asarray(board.order)
    m = order.size
    y = m - 1 - np.arange(m)
    rank = np.arange(1, m + 1)
    tiers = np.asarray(board.tier)[order]
    for t in np.unique(tiers):
        rows = y[tiers == t]
        ax.axhspan(rows.min() - 0.5, rows.max() + 0.5, color="0.88" if t % 2 else "0.96",
                   lw=0, zorder=0, gid=f"tier {t}")
        ax.text(1.01, (rows.min() + rows.max()) / 2, f"T{t}", transform=ax.get_yaxis_transform(),
                va="center", ha="left", fontsize=7, color="0.35")
    best = np.asarray(board.best_set)[order]
    colors = np.where(best, "C3", "C0")
    # projecting caps: an interval of one rank still shows as a short bar
    ax.hlines(y, np.asarray(board.rank_low)[order], np.asarray(board.rank_high)[order],
              colors=colors, lw=3, capstyle="projecting", zorder=2, gid="rank intervals")
    ax.scatter(rank, y, s=14, color="black", zorder=3, gid="rank by mean")
    means = np.asarray(board.means)[order] * (100.0 if fraction else 1.0)
    shown = [f"{wrapped_label(names[i], lines=BOARD_LINES)}  {v:.1f}%" if fraction
             else f"{wrapped_label(names[i], lines=BOARD_LINES)}  {v:.4g}"
             for i, v in zip(order, means)]
    ax.set_yticks(y, shown, fontsize=_by_rows(LABEL_POINTS, m, SMALL_POINTS))
    ax.set_ylim(-0.6, m - 0.4)
    ax.set_xlim(0.3, m + 0.7)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))
    ax.set_xlabel(f"rank (1 = best)\nbar: {100 * (1 - board.alpha):g}% simultaneous rank "
                  "interval (red: possibly best); dot: rank by mean; bands: tiers T1, T2, ...",
                  fontsize=8)
    pairs = m * (m - 1) // 2
    ax.set_title(f"{m} systems on {board.units} paired {unit or 'units'}: sign-flip max over "
                 f"{pairs:,} pairs, {int(tiers.max())} tier{'' if tiers.max() == 1 else 's'}, "
                 f"{int(best.sum())} possibly best",
                 fontsize=9)
    ax.grid(axis="x", color="0.8", lw=0.5)
    return ax


def write_board_plot(board, names, path, *, fraction: bool = True, unit: str = "") -> str:
    """Draw :func:`plot_board` on a new figure and write it to ``path`` (PNG, atomically)."""
    path = check_forest_path(path)
    return str(save_png(board_figure(board, names, fraction=fraction, unit=unit), path,
                        dpi=FOREST_DPI))


def board_figure(board, names, *, fraction: bool = True, unit: str = ""):
    """:func:`plot_board` on a new figure, laid out so that no title or label is cut;
    returns the figure (the caller saves or embeds it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figure_size(len(names), name_lines(names)))
    plot_board(board, names, fraction=fraction, unit=unit, ax=ax)
    keep_inside(fig, [ax.title, ax.xaxis.label])
    return fig
