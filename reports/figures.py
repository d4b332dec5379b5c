"""The figure of a calibration run (``power_curves.png``), laid out by the shape of the grid.

* one setting, several k: line plots of the rejection rate against k, one panel per effect;
* several settings (e.g. every real-run pool), several k: small multiples, one panel per
  setting, with one shared legend;
* one k: a dot plot with 95% Wilson intervals, one row per protocol.

Honest protocols are drawn in colour, the recommended one (``Protocol.recommended_for``) on top
and thickest; pitfalls are grey and dashed. Both are judged for the design the frame's
generator simulates (:func:`frame_design`): a per-question test is honest between fixed
models and a pitfall between training methods. The
false-positive panels are zoomed on the nominal level; every rate above the visible range is
marked by a caret at the top edge with its value. A curve identical to one drawn over it is
shown by hollow markers and named in the panel's title. The power panels mark the target
power and the k at which the recommended protocol reaches it (the seed budget's k when
given). Rates are shown in percent. The protocols' styles are :mod:`reports.figure_styles`.
"""

from __future__ import annotations

import contextvars
import math
import textwrap

import numpy as np
import pandas as pd

from reports._report_page import MIN_JUDGED_SIMS
from reports.figure_styles import (
    _k_words,
    drawing_for,
    frame_design,
    is_pitfall,
    is_recommended,
    percent_ticks,
    protocol_order,
    protocol_styles,
    recommended_name,
)
from reports.words import short_label as _short_label
from reports.words import title_words as _title_words

#: the false-positive panels show at least 0 .. FPR_ZOOM * alpha
FPR_ZOOM = 3.0


#: whether the calibration drawn has enough simulations per cell to judge from
#: (:data:`reports._report_page.MIN_JUDGED_SIMS`): a quick run names no recommended protocol
#: and marks no seed budget
_JUDGED = contextvars.ContextVar("judged", default=True)


# --------------------------------------------------------------------------------------------
# Drawing helpers



def _percent_axis(ax, axis="y") -> None:
    percent_ticks(ax.yaxis if axis == "y" else ax.xaxis)


def _edge_label(ax, value: float, text: str, axis="y") -> None:
    """``text`` beside the axes at ``value`` (outside the data area: never on a curve)."""
    if axis == "y":
        ax.annotate(text, (1, value), xycoords=("axes fraction", "data"), xytext=(4, 0),
                    textcoords="offset points", va="center", ha="left", fontsize=8)
    else:
        ax.annotate(text, (value, 1), xycoords=("data", "axes fraction"), xytext=(0, 3),
                    textcoords="offset points", va="bottom", ha="center", fontsize=8)


def _has_pool_band(part: pd.DataFrame) -> bool:
    """Real-pool rows with a pool-sampling interval (``pool_low``/``pool_high``)."""
    return "pool_high" in part and bool(np.isfinite(part["pool_high"]).any())


def _fpr_top(part: pd.DataFrame, alpha: float) -> float:
    """Top of a false-positive panel: the honest protocols' intervals, at least 3 alpha."""
    honest = part[~part["protocol"].map(is_pitfall)]
    highest = float(honest["rate_high"].max()) if len(honest) else 0.0
    if _has_pool_band(honest):
        highest = max(highest, float(np.nanmax(honest["pool_high"])))
    top = max(FPR_ZOOM * alpha, 1.15 * highest)
    step = 0.05 if top > 0.2 else 0.01
    return min(1.0, math.ceil(top / step - 1e-9) * step)


def _mark_off_scale(ax, part: pd.DataFrame, top: float, styles: dict) -> None:
    """Every rate above the zoomed panel: a caret at the top edge at its k, and its value
    just below the caret; the first value of each protocol carries its name. Protocols off
    scale at the same k stack downwards; with many k, neighbouring labels alternate rows so
    that they never overlap."""
    over = part[part["rate"] > top]
    crowded = part["k"].nunique() > 10
    rows_at: dict = {}
    for name in protocol_order(over["protocol"].unique()):
        cells = over[over["protocol"] == name].sort_values("k")
        color = styles[name]["color"]
        ax.plot(cells["k"].astype(float), np.full(len(cells), top), marker="^", ms=6,
                color=color, clip_on=False, zorder=20, ls="none")
        for j, (k, rate) in enumerate(zip(cells["k"], cells["rate"])):
            row = rows_at.get(k, 0)
            rows_at[k] = row + 1
            if crowded:
                row = 2 * row + (int(k) % 2)
            text = f"{name} {100 * rate:.0f}%" if j == 0 else f"{100 * rate:.0f}%"
            ax.annotate(text, xy=(float(k), top), xycoords="data",
                        xytext=(0, -5 - 10 * row), textcoords="offset points",
                        ha="left" if j == 0 and k == part["k"].min() else "center", va="top",
                        fontsize=7.5, color=color, zorder=21, annotation_clip=False,
                        bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none",
                                  alpha=0.85))


def _same_curves(part: pd.DataFrame, names) -> dict[str, str]:
    """Protocols whose curve in ``part`` is exactly another's, drawn on top of it (the same
    rejections at every k): ``hidden -> the protocol it lies under``."""
    order = protocol_order(names)  # earlier in the order = drawn later, on top
    series = {n: part[part["protocol"] == n].set_index("k")["rate"].sort_index()
              for n in order}
    hidden = {}
    for i, name in enumerate(order):
        mine = series[name]
        if mine.empty:
            continue
        for above in order[:i]:
            other = series[above]
            if above not in hidden and other.index.equals(mine.index) and np.allclose(
                    other.to_numpy(), mine.to_numpy(), rtol=0, atol=1e-12):
                hidden[name] = above
                break
    return hidden


def _show_hidden(ax, part: pd.DataFrame, styles: dict, hidden: dict) -> str:
    """Draw each hidden curve's markers hollow and enlarged on top of the curve covering it;
    return a note for the panel's title (``'sign_flip = paired_bca_perm'``)."""
    for name, above in hidden.items():
        cells = part[part["protocol"] == name].sort_values("k")
        style = styles[name]
        ax.plot(cells["k"], cells["rate"], ls="none", marker=style["marker"],
                ms=styles[above].get("ms", 6) + 4, mfc="none", mec=style["color"], mew=1.4,
                zorder=styles[above]["zorder"] + 1)
    under: dict = {}
    for name, above in hidden.items():
        under.setdefault(above, []).append(name)
    note = "; ".join(f"{', '.join(names)}: same curve as {above} (hollow markers)"
                     for above, names in under.items())
    # a panel is 4-6 inches wide: a long note wraps instead of leaving the canvas
    return "\n".join(textwrap.wrap(note, 62))


def _mark_crossing(ax, part: pd.DataFrame, styles: dict, target: float, budget_k) -> None:
    """Where the recommended protocol reaches ``target`` power: a dotted drop line at that k
    and its value. ``budget_k`` is the seed budget's k (an int, possibly beyond the panel) or
    ``None``: then the first k of the panel whose measured power reaches the target."""
    name = recommended_name(part["protocol"].unique())
    if not name:
        return
    cells = part[part["protocol"] == name].sort_values("k")
    color = styles[name]["color"]
    ks = part["k"].unique()
    if budget_k is not None:
        k, words = int(budget_k), f"seed budget: k = {int(budget_k)}"
    else:
        reached = cells[cells["rate"] >= target]
        if reached.empty:
            ax.annotate(f"{name}: {100 * target:.0f}% not reached by k = {int(ks.max())}",
                        xy=(1, target), xycoords=("axes fraction", "data"), xytext=(-4, -4),
                        textcoords="offset points", ha="right", va="top", fontsize=7.5,
                        color=color, zorder=21,
                        bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85))
            return
        k = int(reached["k"].iloc[0])
        words = f"≥ {100 * target:.0f}% from k = {k}"
    if k > ks.max():
        # beyond the panel: written in the lower right corner, where the power curves of
        # the largest k rarely are (at the target line it would cover them)
        ax.annotate(f"{words} →", xy=(1, 0.04), xycoords="axes fraction",
                    xytext=(-4, 0), textcoords="offset points", ha="right", va="bottom",
                    fontsize=7.5, color=color, zorder=21, fontweight="bold",
                    bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85))
        return
    ax.plot([k, k], [0, target], color=color, lw=1.2, ls=(0, (1, 1.5)), zorder=9)
    ax.plot([k], [target], marker="o", ms=9, mfc="none", mec="black", mew=1.2, zorder=22)
    ax.annotate(words, xy=(k, 0.02), xytext=(4, 0), textcoords="offset points", rotation=90,
                ha="left", va="bottom", fontsize=7.5, color=color, fontweight="bold",
                zorder=21,
                bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85))


def _lines(ax, part: pd.DataFrame, styles: dict, names, faint_pitfalls=False) -> None:
    """Rate against k with its Wilson band, one line per protocol, recommended last."""
    for name in reversed(protocol_order(names)):
        cells = part[part["protocol"] == name].sort_values("k")
        if cells.empty:
            continue
        style = styles[name]
        if faint_pitfalls and is_pitfall(name):
            style = dict(style, alpha=0.55)
        ax.plot(cells["k"], cells["rate"], label=name, **style)
        if not is_pitfall(name):
            ax.fill_between(cells["k"], cells["rate_low"], cells["rate_high"],
                            color=style["color"], alpha=0.12, lw=0, zorder=style["zorder"] - 1)
            if is_recommended(name) and _has_pool_band(cells):
                # The pool-sampling interval, for the recommended protocol only: six wide
                # overlapping bands would hide the lines (every protocol's is in the CSV).
                ax.fill_between(cells["k"], cells["pool_low"], cells["pool_high"],
                                color=style["color"], alpha=0.07, lw=0.6, ls=(0, (2, 2)),
                                edgecolor=style["color"], zorder=style["zorder"] - 2)


def _rate_panel(ax, part, styles, names, effect, alpha, *, pitfalls_in_power=True,
                target: float = 0.8, budget_k=None) -> str:
    """One panel of rates against k: zoomed false-positive rate, or power 0-100% with the
    target power and where the recommended protocol reaches it (``budget_k``: the seed
    budget's k, else the first k measured to reach it). Returns a note naming curves hidden
    under an identical one (for the panel's title; '' when none)."""
    if effect == 0:
        top = _fpr_top(part, alpha)
        shown = list(names)
        _lines(ax, part, styles, names)
        ax.axhline(alpha, color="black", lw=1, ls=(0, (1, 1)), zorder=1)
        _edge_label(ax, alpha, f"α = {100 * alpha:g}%")
        # a rate of exactly 0 stays visible above the frame
        ax.set_ylim(-0.02 * top, top)
        _mark_off_scale(ax, part, top, styles)
    else:
        shown = [n for n in names if pitfalls_in_power or not is_pitfall(n)]
        _lines(ax, part, styles, shown, faint_pitfalls=True)
        ax.axhline(target, color="#666666", lw=0.9, ls=(0, (4, 2)), zorder=1)
        _edge_label(ax, target, f"{100 * target:.0f}%")
        ax.set_ylim(-0.025, 1.025)
        if _JUDGED.get():
            _mark_crossing(ax, part, styles, target, budget_k)
    # honest curves only: a pitfall under an honest curve is not worth a note
    hidden = {n: a for n, a in _same_curves(part, shown).items() if not is_pitfall(n)}
    note = _show_hidden(ax, part, styles, hidden)
    _percent_axis(ax)
    ks = np.sort(part["k"].unique())
    ax.set_xticks(ks)
    ax.set_xlim(ks[0] - 0.3, ks[-1] + 0.3)
    ax.grid(alpha=0.3)
    return note


def _budget_k(budget, params, effect):
    """The seed budget's k for the recommended protocol at (``params``, ``effect``): an int,
    or ``None`` when there is no budget, no such row or no number (not recommended, not
    reached)."""
    if budget is None or budget.empty:
        return None
    name = recommended_name(budget["protocol"].unique())
    rows = budget[(budget["protocol"] == name) & (budget["generator_params"] == params)
                  & np.isclose(budget["effect_pp"].astype(float), float(effect))]
    if rows.empty:
        return None
    text = str(rows["k_needed"].iloc[0])
    return int(text) if text.isdigit() else None


def _target(budget) -> float:
    """The target power of the seed budget (0.8 without one)."""
    if budget is None or budget.empty or "target_power" not in budget:
        return 0.8
    return float(budget["target_power"].iloc[0])


def _panel_title(effect: float, prefix: str = "") -> str:
    if effect == 0:
        return f"{prefix}no true effect: false-positive rate"
    return f"{prefix}true effect {effect:+.2f} pp: power"


def _legend(fig, styles, names, note: str = "") -> float:
    """One legend below the panels: honest protocols, then pitfalls; returns its height."""
    import matplotlib.lines as mlines

    handles = []
    for name in protocol_order(names):
        style = {k: v for k, v in styles[name].items() if k != "zorder"}
        label = name + (" (recommended)" if is_recommended(name) and _JUDGED.get() else
                        " (pitfall)" if is_pitfall(name) else "")
        handles.append(mlines.Line2D([], [], label=label, **style))
    # about 2.6 inches per legend column keeps the legend inside a narrow figure
    ncol = max(1, min(4, len(handles), int(fig.get_figwidth() // 2.6)))
    rows = math.ceil(len(handles) / ncol)
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8.5, frameon=False,
               bbox_to_anchor=(0.5, 0.02 if note else 0.0))
    if note:
        fig.text(0.5, 0.005, note, ha="center", va="bottom", fontsize=8, color="#444444")
    return 0.22 * rows + (0.4 if note else 0.15)


# --------------------------------------------------------------------------------------------
# The three layouts


def _heading(calibration: pd.DataFrame, title: str, pool_mark: str = "") -> str:
    sims = sorted(calibration["sims"].unique())
    count = f"{int(sims[0])}" if len(sims) == 1 else f"{int(sims[0])}-{int(sims[-1])}"
    head = _title_words(title) if title else str(calibration["generator"].iloc[0])
    if _has_pool_band(calibration):
        return (f"{head}\n{count} simulated experiments per cell; bands and bars: 95% Wilson "
                f"(simulation error)\n{pool_mark}: widened by the pool-sampling error "
                f"(pool_low, pool_high)")
    return f"{head}\n{count} simulated experiments per cell; bands and bars: 95% Wilson"


def _curves_one_setting(calibration, title, budget=None):
    import matplotlib.pyplot as plt

    names = list(calibration["protocol"].unique())
    styles = protocol_styles(names)
    effects = sorted(calibration["effect_pp"].unique())
    ncols = min(len(effects), 2)
    nrows = math.ceil(len(effects) / ncols)
    width = max(6.0 * ncols + 0.6, 8.0)
    legend_in = 0.22 * math.ceil(len(names) / max(1, min(4, int(width // 2.6)))) + 0.15
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, 3.9 * nrows + legend_in + 0.7),
                             squeeze=False)
    alpha = float(calibration["alpha"].iloc[0])
    for ax, effect in zip(axes.flat, effects):
        part = calibration[calibration["effect_pp"] == effect]
        params = part["generator_params"].iloc[0]
        note = _rate_panel(ax, part, styles, names, effect, alpha, target=_target(budget),
                           budget_k=_budget_k(budget, params, effect))
        ax.set_title(_panel_title(effect) + (f"\n{note}" if note else ""), fontsize=10)
        ax.set_xlabel(_k_words())
        ax.set_ylabel("rejection rate")
    for ax in list(axes.flat)[len(effects):]:
        ax.set_visible(False)
    fig.suptitle(_heading(calibration, title, f"wide faint band ({recommended_name()})"),
                 fontsize=10)
    height = _legend(fig, styles, names)
    fig.tight_layout(rect=(0, height / fig.get_figheight(), 1, 1))
    return fig


def _curves_many_settings(calibration, title, budget=None):
    import matplotlib.pyplot as plt

    names = list(calibration["protocol"].unique())
    styles = protocol_styles(names)
    panels = sorted(calibration.groupby(["generator_params", "effect_pp"]).groups)
    labels = {p: _short_label(p) for p, _ in panels}
    # real pools: one row per dataset, one column per scenario
    rows_of = {}
    for params, _ in panels:
        rows_of.setdefault(labels[params].split(" ")[0], []).append(params)
    ncols = max(len(v) for v in rows_of.values())
    nrows = len(rows_of)
    if ncols * nrows > 1.5 * len(panels):  # not a grid: fill row by row
        ncols = min(3, len(panels))
        nrows = math.ceil(len(panels) / ncols)
        positions = {p: divmod(i, ncols) for i, p in enumerate(panels)}
    else:
        positions = {}
        for r, params_list in enumerate(rows_of.values()):
            for c, params in enumerate(params_list):
                for p in panels:
                    if p[0] == params:
                        positions[p] = (r, c)
    width = max(4.3 * ncols + 0.6, 8.0)
    legend_in = 0.22 * math.ceil(len(names) / max(1, min(4, int(width // 2.6)))) + 0.4
    fig, axes = plt.subplots(nrows, ncols, figsize=(width,
                                                    3.0 * nrows + legend_in + 0.7),
                             squeeze=False, sharex=True)
    used = set()
    alpha = float(calibration["alpha"].iloc[0])
    for (params, effect), (r, c) in positions.items():
        ax = axes[r, c]
        used.add((r, c))
        part = calibration[(calibration["generator_params"] == params)
                           & (calibration["effect_pp"] == effect)]
        note = _rate_panel(ax, part, styles, names, effect, alpha, pitfalls_in_power=False,
                           target=_target(budget), budget_k=_budget_k(budget, params, effect))
        what = "FPR" if effect == 0 else f"power, effect {effect:+.2f} pp"
        ax.set_title(f"{labels[params]}: {what}" + (f"\n{note}" if note else ""), fontsize=9)
        if c == 0:
            ax.set_ylabel("rejection rate")
        if r == nrows - 1:
            ax.set_xlabel(_k_words())
        ax.tick_params(labelsize=8)
    for r in range(nrows):
        for c in range(ncols):
            if (r, c) not in used:
                axes[r, c].set_visible(False)
    fig.suptitle(_heading(calibration, title, f"wide faint band ({recommended_name()})"),
                 fontsize=10)
    height = _legend(fig, styles, names, note="Pitfalls are drawn only where there is no "
                     "true effect: the power of a test that does not hold its level means "
                     "nothing.")
    fig.tight_layout(rect=(0, height / fig.get_figheight(), 1, 1))
    return fig


def _dots(calibration, title):
    import matplotlib.pyplot as plt

    panels = sorted(calibration.groupby(["generator_params", "effect_pp"]).groups)
    several = calibration["generator_params"].nunique() > 1
    names = protocol_order(calibration["protocol"].unique())
    styles = protocol_styles(names)
    ncols = min(len(panels), 2 if len(panels) <= 4 else 3)
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols + 2.6,
                                                    0.32 * len(names) * nrows + 1.3 * nrows
                                                    + 0.9), squeeze=False)
    alpha = float(calibration["alpha"].iloc[0])
    k = int(calibration["k"].iloc[0])
    y = np.arange(len(names))[::-1]
    for i, (ax, (params, effect)) in enumerate(zip(axes.flat, panels)):
        part = calibration[(calibration["generator_params"] == params)
                           & (calibration["effect_pp"] == effect)].set_index("protocol")
        top = _fpr_top(part.reset_index(), alpha) if effect == 0 else 1.0
        for yi, name in zip(y, names):
            if name not in part.index:
                continue
            r = part.loc[name]
            style = styles[name]
            color = style["color"]
            if r["rate"] > top:
                ax.annotate(f"off scale: {100 * r['rate']:.0f}% →", (top, yi), xytext=(-3, 0),
                            textcoords="offset points", ha="right", va="center", fontsize=8.5,
                            color="#333333", annotation_clip=False)
                continue
            if np.isfinite(r.get("pool_low", np.nan)):
                # the pool-sampling interval: a thin, faint bar behind the Wilson one
                ax.errorbar(r["rate"], yi, xerr=[[r["rate"] - r["pool_low"]],
                                                 [r["pool_high"] - r["rate"]]],
                            fmt="none", color=color, lw=0.8, alpha=0.45, capsize=0,
                            zorder=style["zorder"] - 1)
            ax.errorbar(r["rate"], yi, xerr=[[r["rate"] - r["rate_low"]],
                                             [r["rate_high"] - r["rate"]]],
                        fmt=style["marker"], color=color, mfc=style.get("mfc", color),
                        ms=7 if is_recommended(name) else 5, capsize=3,
                        lw=2.2 if is_recommended(name) else 1.2, zorder=style["zorder"])
        if effect == 0:
            ax.axvline(alpha, color="black", lw=1, ls=(0, (1, 1)))
            _edge_label(ax, alpha, f"α = {100 * alpha:g}%", axis="x")
            ax.set_xlim(-0.02 * top, top)
            ax.set_xlabel("false-positive rate")
        else:
            ax.axvline(0.8, color="#666666", lw=0.9, ls=(0, (4, 2)))
            _edge_label(ax, 0.8, "80%", axis="x")
            ax.set_xlim(-0.02, 1.02)
            ax.set_xlabel("power (rejection rate)")
        _percent_axis(ax, "x")
        ax.set_yticks(y)
        # the rows are the same in every panel: name them in the first column only
        ax.set_yticklabels([n + (" (pitfall)" if is_pitfall(n) else "") for n in names]
                           if i % ncols == 0 else [], fontsize=8.5)
        for label, name in zip(ax.get_yticklabels(), names):
            label.set_color("#777777" if is_pitfall(name) else "black")
            if is_recommended(name):
                label.set_fontweight("bold")
        ax.set_ylim(-0.7, len(names) - 0.3)
        ax.grid(axis="x", alpha=0.3)
        prefix = f"{_short_label(params)}, " if several else ""
        what = "false-positive rate" if effect == 0 else f"power at {effect:+.2g} pp"
        ax.set_title(f"{prefix}{what} (k = {k})", fontsize=10, pad=14)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(_heading(calibration, title, "thin faint bars"), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.25 / fig.get_figheight()))
    return fig


def power_curves_figure(calibration: pd.DataFrame, *, title: str = "",
                        budget: pd.DataFrame | None = None):
    """The calibration's rejection rates, laid out by grid shape: a new figure of one panel
    per effect (or per setting and effect), returned for the caller to save
    (:func:`reports._save.save_png`).

    Parameters
    ----------
    calibration : pandas.DataFrame
        ``calibration.csv`` rows (rates are fractions; shown in percent).
    title : str, optional
        A heading; an encoded setting in it (``generator: k=v;...``) is written in words
        with units.
    budget : pandas.DataFrame, optional
        ``seed_budget.csv``: the power panels mark its target power and the recommended
        protocol's k; without it, 80% and the first k measured to reach it. With fewer
        than :data:`~reports._report_page.MIN_JUDGED_SIMS` simulations per cell (a quick
        run) no protocol is labelled recommended and no k is marked.
    """
    several_k = calibration["k"].nunique() > 1
    several_settings = calibration["generator_params"].nunique() > 1
    judged = _JUDGED.set(int(calibration["sims"].min()) >= MIN_JUDGED_SIMS)
    try:
        with drawing_for(frame_design(calibration)):
            if not several_k:
                fig = _dots(calibration, title)
            elif several_settings:
                fig = _curves_many_settings(calibration, title, budget)
            else:
                fig = _curves_one_setting(calibration, title, budget)
    finally:
        _JUDGED.reset(judged)
    return fig
