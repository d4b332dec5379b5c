"""Figures of ``reports.pitfalls``: one function per section, each returning PNG bytes.

Identity is carried by line style and marker as well as colour (grayscale-safe); protocols
keep the styles of :mod:`reports.figure_styles` (the recommended one thick and blue, pitfalls
grey and dashed); rates are in percent with their 95% Wilson band and the nominal alpha as a dotted
line; legends sit below the axes so they never cover data. Every figure takes the run's
alpha as an argument.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from reports.figure_styles import (
    MARKERS,
    STYLES,
    is_pitfall,
    percent_ticks,
    protocol_styles,
    recommended_name,
)

from .._report_page import PAGE_DPI
from .._save import png_bytes

#: colour-blind-safe colours that also differ in lightness (Okabe-Ito subset)
COLORS = ["#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00"]
ALPHA_STYLE = dict(color="black", lw=1, ls=(0, (1, 1.5)))


def _style(i: int) -> dict:
    return dict(color=COLORS[i % len(COLORS)], ls=STYLES[i % len(STYLES)],
                marker=MARKERS[i % len(MARKERS)], ms=5, lw=1.5)


def percent(ax, axis: str = "y") -> None:
    """Rates (fractions in the data) labelled in percent, ticks on clean steps (1, 2 or 5
    times a power of ten: no 2.5% gridlines under whole-percent labels)."""
    percent_ticks(ax.yaxis if axis == "y" else ax.xaxis)


def _label(name: str) -> str:
    return f"{name} (pitfall)" if is_pitfall(name) else str(name)


def rate_lines(ax, frame, x: str, group: str, order=None, labels=None) -> None:
    """One line per value of ``group``: ``rate`` against ``x`` with its Wilson band.

    Protocols (``group == "protocol"``) get their :func:`reports.figure_styles.protocol_styles`.
    """
    order = list(order) if order is not None else sorted(frame[group].unique())
    styles = protocol_styles(order) if group == "protocol" else None
    for name in order:  # the styles' zorder puts the recommended protocol on top
        part = frame[frame[group] == name].sort_values(x)
        style = styles[name] if styles else _style(order.index(name))
        label = labels.get(name, name) if labels else (
            _label(name) if styles else str(name))
        ax.plot(part[x], part["rate"], label=label, **style)
        ax.fill_between(part[x], part["rate_low"], part["rate_high"], color=style["color"],
                        alpha=0.15, lw=0)
    percent(ax)


def alpha_line(ax, alpha: float) -> None:
    """The nominal level as a dotted horizontal line (named in the figure's legend)."""
    ax.axhline(alpha, label=f"nominal alpha = {100 * alpha:g}%", zorder=15, **ALPHA_STYLE)


def _legend_entries(axes):
    """Handles and labels of all axes, each label once, in order of appearance."""
    seen = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    return list(seen.values()), list(seen)


def _finish(fig, axes, ncol=4) -> bytes:
    """Grid, one legend below the axes (never over data), tight layout; PNG bytes."""
    axes = list(np.atleast_1d(axes).flat)
    for ax in axes:
        ax.grid(alpha=0.3)
    handles, labels = _legend_entries(axes)
    bottom = 0.0
    if handles:
        rows = int(np.ceil(len(labels) / ncol))
        fig.legend(handles, labels, loc="lower center", ncol=min(ncol, len(labels)),
                   frameon=False, fontsize=9)
        bottom = (0.15 + 0.27 * rows) / fig.get_figheight()
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return png_bytes(fig, dpi=PAGE_DPI)


def single_run_figure(deltas_pp, sd_pp: float, pools: dict) -> bytes:
    """Section 1: histogram of the simulated null single-run delta; real S0p per-seed deltas.

    Parameters
    ----------
    deltas_pp : ndarray
        Simulated single-run deltas under the null (pp).
    sd_pp : float
        Their true standard deviation (pp), for the normal curve.
    pools : dict
        ``dataset -> per-seed deltas (pp)`` of the real S0p pools (may be empty).
    """
    ncols = 2 if pools else 1
    fig, axes = plt.subplots(1, ncols, figsize=(5.2 * ncols + 0.6, 4.3), squeeze=False)
    ax = axes[0, 0]
    edges = np.arange(-2.5, 2.5001, 0.125)
    counts, _ = np.histogram(np.clip(deltas_pp, edges[0], edges[-1]), edges)
    density = counts / (counts.sum() * np.diff(edges))
    centers = (edges[:-1] + edges[1:]) / 2
    outside = np.abs(centers) > 1
    ax.bar(centers[~outside], density[~outside], width=0.125, color="#bbbbbb",
           edgecolor="white", label="|Δ| < 1 pp")
    ax.bar(centers[outside], density[outside], width=0.125, color="#333333", hatch="//",
           edgecolor="white", label="|Δ| ≥ 1 pp: called a result")
    grid = np.linspace(edges[0], edges[-1], 400)
    ax.plot(grid, stats.norm.pdf(grid, scale=sd_pp), color=COLORS[1], ls="--", lw=1.5,
            label=f"normal, sd {sd_pp:.2f} pp")
    for edge in (-1, 1):
        ax.axvline(edge, color="black", lw=1, ls=(0, (1, 1.5)))
    ax.set_xlabel("single-run Δ, variant − baseline (pp)")
    ax.set_ylabel("density (1/pp)")
    ax.set_title("seed_gaussian, no true effect", fontsize=10)
    if pools:
        ax2 = axes[0, 1]
        for i, (_, d) in enumerate(sorted(pools.items())):
            style = _style(i + 1)
            jitter = np.linspace(-0.15, 0.15, len(d)) if len(d) > 1 else np.zeros(1)
            ax2.plot(d, i + jitter, ls="none", marker=style["marker"], color=style["color"],
                     ms=6, alpha=0.8)
        for edge in (-1, 1):
            ax2.axvline(edge, color="black", lw=1, ls=(0, (1, 1.5)))
        ax2.set_yticks(range(len(pools)))
        ax2.set_yticklabels([f"{n}\n({len(pools[n])} seeds)" for n in sorted(pools)])
        ax2.set_ylim(-0.6, len(pools) - 0.4)
        lim = max(2.5, 1.1 * max(np.abs(d).max() for d in pools.values()))
        ax2.set_xlim(-lim, lim)
        ax2.set_xlabel("per-seed Δ in the real S0p pool (pp)")
        ax2.set_title("real pools, no true effect (S0p)", fontsize=10)
    return _finish(fig, axes, ncol=3)


def pairing_figure(frame, pools, effect_pp: float, alpha: float, k: int) -> bytes:
    """Section 2: false-positive rate and power against the pairing correlation rho.

    ``pools`` is the ``pool_summary`` frame (may be empty): a third panel shows each real
    pool's measured rho with its Fisher-z interval on the same rho scale. ``k`` is the
    number of seeds per arm of every simulated cell.
    """
    ncols = 3 if len(pools) else 2
    fig, axes = plt.subplots(1, ncols, figsize=(5.3 * 2 + 3.6 * (ncols - 2), 4.6),
                             gridspec_kw={"width_ratios": [1, 1, 0.75][:ncols]})
    order = ["welch_t", "paired_t", "paired_bca_perm"]
    for ax, effect in zip(axes, (0.0, effect_pp)):
        rate_lines(ax, frame[frame["effect_pp"] == effect], "rho", "protocol", order)
        ax.set_xlabel("ρ, correlation of a seed's two arms")
        ax.set_xticks(sorted(frame["rho"].unique()))
        ax.set_xlim(-0.05, 1.0)
    alpha_line(axes[0], alpha)
    axes[0].set_ylabel("false-positive rate")
    axes[0].set_title(f"k = {k} seeds per arm, no true effect", fontsize=10)
    top = max(3 * alpha, 1.15 * float(frame[frame.effect_pp == 0].rate_high.max()))
    axes[0].set_ylim(-0.01 * top, top)
    axes[1].set_ylabel("power")
    axes[1].set_title(f"k = {k} seeds per arm, true effect +{effect_pp:g} pp", fontsize=10)
    axes[1].set_ylim(-0.02, 1.02)
    if len(pools):
        ax = axes[2]
        y = np.arange(len(pools))[::-1]
        ax.errorbar(pools["rho"], y, xerr=[pools["rho"] - pools["rho_low"],
                                           pools["rho_high"] - pools["rho"]],
                    fmt="D", color="black", ms=5, capsize=3, lw=1)
        ax.set_yticks(y)
        ax.set_yticklabels([f"{r.dataset} {r.scenario}\n({r.seeds} seeds)"
                            for r in pools.itertuples()], fontsize=8)
        ax.set_ylim(-0.6, len(pools) - 0.4)
        ax.axvspan(0, 0.9, color="#dddddd", zorder=0, label="simulated range of ρ")
        ax.set_xlim(-1.02, 1.02)
        ax.set_xlabel("measured ρ (95% Fisher-z interval)")
        ax.set_title("real pools: ρ between the arms'\nper-seed accuracies", fontsize=10)
    return _finish(fig, axes, ncol=5)


def small_k_figure(frame, alpha: float, effect_pp: float) -> bytes:
    """Section 3: smallest sign-flip p by k, and power by k."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    ax = axes[0]
    by_k = frame.drop_duplicates("k").sort_values("k")
    ok = by_k["min_sign_flip_p"] < alpha
    ax.semilogy(by_k["k"], by_k["min_sign_flip_p"], color="#777777", lw=1)
    ax.semilogy(by_k["k"][~ok], by_k["min_sign_flip_p"][~ok], "o", mfc="white",
                color="black", ms=7, label="smallest p ≥ alpha: can never pass")
    ax.semilogy(by_k["k"][ok], by_k["min_sign_flip_p"][ok], "s", color="black", ms=6,
                label="smallest p < alpha")
    alpha_line(ax, alpha)
    ax.set_xlabel("k (paired seeds)")
    ax.set_ylabel("smallest attainable sign-flip p")
    ax.set_title("exact sign-flip test: 2 / 2^k", fontsize=10)
    ax2 = axes[1]
    rate_lines(ax2, frame[frame["effect_pp"] == effect_pp], "k", "protocol",
               ["paired_bca_perm", "paired_t"])
    alpha_line(ax2, alpha)
    ax2.set_ylim(-0.02, 1.02)
    ax2.set_xlabel("k (paired seeds)")
    ax2.set_ylabel(f"power at +{effect_pp:g} pp")
    ax2.set_title(f"seed_gaussian, true effect +{effect_pp:g} pp", fontsize=10)
    for a in axes:
        a.set_xticks(by_k["k"])
    return _finish(fig, axes, ncol=3)


def rate_by_k_figure(frame, alpha: float, order, title: str, ylabel: str, ncol=3) -> bytes:
    """Section 4: one panel of rates by k, one line per protocol."""
    fig, ax = plt.subplots(figsize=(8, 4.6))
    rate_lines(ax, frame, "k", "protocol", order)
    alpha_line(ax, alpha)
    ax.set_xlabel("k (paired seeds)")
    ax.set_ylabel(ylabel)
    ax.set_xticks(sorted(frame["k"].unique()))
    top = 1.1 * float(frame["rate_high"].max())
    # a rate of exactly 0 stays visible above the frame
    ax.set_ylim(-0.03 * top, top)
    ax.set_title(title, fontsize=10)
    return _finish(fig, ax, ncol=ncol)


def protocol_dots_figure(frame, order, alpha: float, effect_pp: float,
                         reference: str | None = None, reference_words: str = "") -> bytes:
    """Section 5: false-positive rate, power and median CI width, one row per protocol.

    The false-positive panel is zoomed on alpha (at least 0 .. 3 alpha); a rate beyond it is
    written at the right edge with an arrow instead of a point. ``reference``, a protocol of
    ``order`` that is honest for the section's design (``reference_words`` says which), is
    drawn in the recommended protocol's blue and as a vertical line through every panel, so
    each pitfall reads against it.
    """
    styles = protocol_styles(order)
    if reference is not None:
        styles[reference] = dict(protocol_styles([recommended_name()])[recommended_name()])
    fig, axes = plt.subplots(1, 3, figsize=(12.5, 0.55 * len(order) + 2.6), sharey=True,
                             gridspec_kw={"width_ratios": [1.15, 1, 0.85]})
    y = np.arange(len(order))[::-1]
    null = frame[frame["effect_pp"] == 0].set_index("protocol").loc[order]
    shown = null[null["rate"] <= 0.5]
    top = max(3 * alpha, 1.2 * float(shown["rate_high"].max()) if len(shown) else 0)
    panels = [(0.0, "rate", "false-positive rate (zoomed)", axes[0], top),
              (effect_pp, "rate", f"power at +{effect_pp:g} pp", axes[1], 1.0),
              (effect_pp, "median_ci_width_pp", f"median CI width at +{effect_pp:g} pp (pp)",
               axes[2], None)]
    for effect, col, label, ax, xmax in panels:
        part = frame[frame["effect_pp"] == effect].set_index("protocol").loc[order]
        for yi, name in zip(y, order):
            r, st = part.loc[name], styles[name]
            color = st["color"]
            big = name == reference
            if col == "rate" and r["rate"] > xmax:
                ax.annotate(f"{100 * r['rate']:.0f}% [{100 * r['rate_low']:.0f}, "
                            f"{100 * r['rate_high']:.0f}] →", (1, yi),
                            xycoords=("axes fraction", "data"), xytext=(-4, 0),
                            textcoords="offset points", ha="right", va="center", fontsize=8.5,
                            color=color, fontweight="bold")
            elif col == "rate":
                ax.errorbar(r["rate"], yi, xerr=[[r["rate"] - r["rate_low"]],
                                                 [r["rate_high"] - r["rate"]]],
                            fmt=st["marker"], color=color, mfc=st.get("mfc", color), capsize=4,
                            ms=8 if big else 6, lw=2.4 if big else 1.6, zorder=5 if big else 3)
            else:
                ax.plot(r[col], yi, st["marker"], color=color, mfc=st.get("mfc", color),
                        ms=8 if big else 6, zorder=5 if big else 3)
        if reference is not None and not (col == "rate" and part.loc[reference, "rate"] > xmax):
            ax.axvline(part.loc[reference, col], color=styles[reference]["color"], lw=1.2,
                       ls=(0, (4, 2)), alpha=0.8, zorder=1,
                       label=f"{reference}, {reference_words}: the reference line")
        if col == "rate":
            ax.set_xlim(-0.01 * xmax, xmax)
            percent(ax, "x")
        else:
            ax.set_xlim(0, 1.1 * float(np.nanmax(part[col])))
        if effect == 0:
            ax.axvline(alpha, label=f"nominal alpha = {100 * alpha:g}%", **ALPHA_STYLE)
        ax.set_xlabel(label)
    axes[0].set_yticks(y)
    axes[0].set_yticklabels([f"{n} ({reference_words})" if n == reference else _label(n)
                             for n in order])
    for tick, name in zip(axes[0].get_yticklabels(), order):
        tick.set_color("#666666" if is_pitfall(name) and name != reference else "black")
        if name == reference:
            tick.set_fontweight("bold")
    axes[0].set_ylim(-0.6, len(order) - 0.4)
    marks = (f"blue, dashed line: {reference}, {reference_words}; " if reference else "")
    fig.suptitle("question_mixture, k = 8 decodings per arm, n = 4000 questions (95% Wilson "
                 f"intervals; {marks}grey: pitfalls)", fontsize=10)
    return _finish(fig, axes, ncol=2)


def skew_figure(frame, alpha: float, noises, rho=None) -> bytes:
    """Section 6: false-positive rate by k, one panel per protocol, one line per noise."""
    protocols = ["sign_flip", "paired_t"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    labels = {"normal": "normal noise", "t3": "heavy tails (t3)",
              "skewed": "skewed (log-normal)"}
    for ax, name in zip(axes, protocols):
        rate_lines(ax, frame[frame["protocol"] == name], "k", "noise", noises, labels)
        alpha_line(ax, alpha)
        where = f", ρ = {rho}" if rho is not None else ""
        ax.set_title(f"{name}: seed_gaussian{where}, no true effect", fontsize=10)
        ax.set_xlabel("k (paired seeds)")
        ax.set_xticks(sorted(frame["k"].unique()))
    axes[0].set_ylabel("false-positive rate")
    top = max(3 * alpha, 1.1 * float(frame["rate_high"].max()))
    axes[0].set_ylim(-0.02 * top, top)  # a rate of 0 stays visible above the frame
    return _finish(fig, axes, ncol=3)


def family_figure(frame, alpha: float) -> bytes:
    """Section 7: family-wise false-positive rate against the number of variants m.

    Left: the whole range; right: zoomed on alpha, where Holm's rate and the nominal level
    would otherwise lie on top of each other.
    """
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), gridspec_kw={"width_ratios": [1.3, 1]})
    labels = {"none": "no correction", "holm": "Holm"}
    ref = frame[frame["correction"] == "none"].sort_values("m")
    for i, ax in enumerate(axes):
        rate_lines(ax, frame if i == 0 else frame[frame["correction"] == "holm"], "m",
                   "correction", ["none", "holm"] if i == 0 else ["holm"], labels)
        ax.set_xlabel("m, variants compared with one baseline")
        ax.set_xticks(sorted(frame["m"].unique()))
    axes[1].get_lines()[0].set_color(COLORS[1])
    axes[0].plot(ref["m"], ref["independent_rate"], color="#777777", ls=(0, (5, 2)), lw=1.2,
                 label="1 − (1 − α)^m (independent tests)")
    alpha_line(axes[0], alpha)
    axes[1].axhline(alpha, **dict(ALPHA_STYLE, color="#D55E00", lw=1.4), zorder=15)
    axes[1].annotate(f"α = {100 * alpha:g}%", (1, alpha), xycoords=("axes fraction", "data"),
                     xytext=(-4, 4), textcoords="offset points", ha="right", va="bottom",
                     fontsize=9, color="#D55E00")
    axes[0].set_ylabel("family-wise false-positive rate")
    axes[0].set_ylim(0, 1.1 * float(max(frame["rate_high"].max(),
                                        ref["independent_rate"].max())))
    holm = frame[frame["correction"] == "holm"]
    axes[1].set_ylim(0, max(2 * alpha, 1.2 * float(holm["rate_high"].max())))
    axes[0].set_title(f"paired t, k = {int(frame['k'].iloc[0])} seeds, shared baseline, "
                      "no true effect", fontsize=10)
    axes[1].set_title("Holm, zoomed on the nominal level", fontsize=10)
    return _finish(fig, axes, ncol=2)


def questions_noise_figure(frame, alpha: float, sd_seeds, order) -> bytes:
    """Section 9: false-positive rate by k under ``seed_question``, one panel per seed-effect
    sd, one line per protocol; every panel on one scale so the climb is visible."""
    fig, axes = plt.subplots(1, len(sd_seeds), figsize=(4.4 * len(sd_seeds), 4.4), sharey=True)
    for ax, sd in zip(np.atleast_1d(axes), sd_seeds):
        rate_lines(ax, frame[frame["sd_seed"] == sd], "k", "protocol", order)
        alpha_line(ax, alpha)
        ax.set_title(f"seed-effect sd {sd:g} (logit)", fontsize=10)
        ax.set_xlabel("k (paired seeds)")
        ax.set_xticks(sorted(frame["k"].unique()))
    np.atleast_1d(axes)[0].set_ylabel("false-positive rate")
    top = max(3 * alpha, 1.08 * float(frame["rate_high"].max()))
    np.atleast_1d(axes)[0].set_ylim(-0.02 * top, top)  # a rate of 0 stays above the frame
    return _finish(fig, axes, ncol=3)
