"""``python -m reports.paper_figures``: the paper's figures, from the real-run pool.

1. ``delta_ci.png``: mean Δ with its BCa 95% CI per dataset and scenario, at each k of the
   paper table (3, 10, 20 seeds).
2. ``welch_vs_signflip.png``: unpaired Welch p against paired sign-flip p for every S1/S2
   row, with the 0.05 lines.
3. ``learning_curves.png``: test accuracy per epoch for three seeds of CIFAR-10 S1,
   baseline and variant.

Same data as ``python -m reports.paper_table``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalcal_core import scenarios
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import add_options, config_from_args, option, out_option, pool_option
from evalcal_core.outdir import run_outputs
from real_runs.store import check_store, pool_cells
from reports._save import save_png
from reports.paper_table import paper_table

DEFAULT_OUT = Path("reports") / "output" / "paper_figures"
PROG = "python -m reports.paper_figures"
#: every figure the command may write
FIGURES = ("delta_ci.png", "welch_vs_signflip.png", "learning_curves.png")
_MARKERS = {3: "o", 10: "s", 20: "D"}
_GRAYS = {3: "0.65", 10: "0.35", 20: "0.0"}


def _pyplot():
    # the backend is the caller's; only ``main`` selects Agg
    import matplotlib.pyplot as plt

    return plt


def _is_null(scenario: str) -> bool:
    try:
        return scenarios.scenario(scenario).null
    except ValueError:
        return False


def plot_delta_ci(table, *, ax=None):
    """Figure 1: mean Δ and BCa 95% CI (pp) per dataset/scenario, one marker per k.

    Filled markers: ``paired_bca_perm`` calls the row significant; hollow: it does not.
    True-null scenarios (no real effect: any significant row is a false positive) are shaded.
    Draws on ``ax`` (a new figure sized to the rows when ``None``; its legend goes below the
    axes) and returns it.
    """
    cells = list(dict.fromkeys(zip(table["dataset"], table["scenario"])))
    ks = sorted(table["k"].unique())
    rows = len(cells) * (len(ks) + 0.7)
    own = ax is None
    if own:
        _, ax = _pyplot().subplots(figsize=(8.6, 0.27 * rows + 2.1))
    fig = ax.figure
    ticks, y = [], 0.0
    for dataset, scenario in cells:
        top = y
        for k in ks:
            row = table[(table.dataset == dataset) & (table.scenario == scenario)
                        & (table.k == k)]
            if row.empty:
                continue
            r = row.iloc[0]
            color = _GRAYS.get(k, "0.2")
            ax.errorbar(r.mean_delta_pp, y, xerr=[[r.mean_delta_pp - r.bca_low_pp],
                                                  [r.bca_high_pp - r.mean_delta_pp]],
                        fmt=_MARKERS.get(k, "o"), color=color, ms=6, capsize=2.5,
                        mfc=color if r.paired_verdict else "white", mew=1.3)
            ticks.append((y, f"k = {k}"))
            y -= 1
        middle = (top + y + 1) / 2
        null = _is_null(scenario)
        if null:
            ax.axhspan(y + 0.5, top + 0.5, color="#f2e6c9", zorder=0, lw=0)
        ax.annotate(f"{dataset} {scenario}" + ("\n(true null)" if null else ""),
                    (0, middle), xycoords=("axes fraction", "data"), xytext=(-52, 0),
                    textcoords="offset points", ha="right", va="center", fontsize=9,
                    fontweight="bold")
        y -= 0.7
    ax.axvline(0, color="black", lw=0.8, ls=":")
    ax.set_yticks([t for t, _ in ticks], [lab for _, lab in ticks], fontsize=8)
    ax.set_ylim(y + 0.2, 0.8)
    ax.set_xlabel("mean Δ, variant − baseline (pp), with BCa 95% CI")
    ax.set_title("Paired deltas on the real-run pool", fontsize=11)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = [Line2D([], [], marker=_MARKERS.get(k, "o"), color=_GRAYS.get(k, "0.2"), ls="",
                      label=f"k = {k} seeds") for k in ks]
    handles += [Line2D([], [], marker="o", color="black", ls="", label="significant "
                       "(paired_bca_perm)"),
                Line2D([], [], marker="o", color="black", mfc="white", ls="",
                       label="not significant"),
                Patch(color="#f2e6c9", label="true null: a significant row is a false "
                      "positive")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    if own:
        fig.tight_layout(rect=(0.1, 0.55 / fig.get_figheight(), 1, 1))
    return ax


def _spread_labels(ax, points, min_gap_px=11.0):
    """Label positions (display offsets) that keep labels ``min_gap_px`` apart vertically.

    ``points``: list of ``(x, y, text)`` in data coordinates. Labels whose boxes would
    overlap (close in x) are pushed down in turn; returns ``(x, y, text, dy)``.
    """
    trans = ax.transData
    placed, out = [], []
    for x, y, text in sorted(points, key=lambda p: -trans.transform((p[0], p[1]))[1]):
        px, py = trans.transform((x, y))
        ty = py + 3
        for qx, qy in placed:
            if abs(qx - px) < 90 and abs(qy - ty) < min_gap_px:
                ty = qy - min_gap_px
        placed.append((px, ty))
        out.append((x, y, text, ty - py))
    return out


def plot_welch_vs_signflip(table, *, ax=None):
    """Figure 2: Welch p (unpaired) against sign-flip p (paired) for the effect rows.

    The four quadrants cut at 0.05 say which test calls the row significant; rows that
    either test calls significant are labelled, labels spread so that none overlap. Draws
    on ``ax`` (a new figure when ``None``) and returns it.
    """
    rows = table[~table.scenario.map(_is_null)]
    own = ax is None
    if own:
        _, ax = _pyplot().subplots(figsize=(7.4, 6.2))
    for k, part in rows.groupby("k"):
        ax.scatter(part.sign_flip_p, part.welch_p, marker=_MARKERS.get(k, "o"),
                   facecolor="none" if k == 3 else _GRAYS.get(k, "0.2"),
                   edgecolor="black", label=f"k = {k} seeds", zorder=3, s=40)
    ax.set_xscale("log")
    ax.set_yscale("log")
    lo = min(1e-4, float(np.nanmin(rows[["sign_flip_p", "welch_p"]].to_numpy(), initial=1))
             / 3) if len(rows) else 1e-4
    # p-values lie in (0, 1]: the axes end at p = 1 (points there are drawn whole, unclipped)
    ax.set_xlim(lo, 1)
    ax.set_ylim(lo, 1)
    for collection in ax.collections:
        collection.set_clip_on(False)
    ax.axvline(0.05, color="black", lw=0.8, ls="--")
    ax.axhline(0.05, color="black", lw=0.8, ls="--")
    ax.plot([lo, 1], [lo, 1], color="0.6", lw=0.8)
    ax.annotate("equal p", (0.3 * np.sqrt(lo), 0.3 * np.sqrt(lo)), rotation=45, fontsize=7,
                color="0.45", ha="center", va="bottom")
    # The quadrants' names: the two of the p < 0.05 column inside its corners (far from the
    # points, which crowd near p = 1); the two of the p >= 0.05 column in the right margin,
    # beside their rows, since that column is narrow and full of points.
    quadrant = dict(fontsize=8, color="#7a4a00", alpha=0.9)
    ax.text(0.02, 0.02, "both tests significant", ha="left", va="bottom",
            transform=ax.transAxes, **quadrant)
    ax.text(0.02, 0.98, "only the paired test\nsignificant", ha="left", va="top",
            transform=ax.transAxes, **quadrant)
    margin = ax.get_yaxis_transform()  # x in axes fraction, y in data
    ax.text(1.03, np.sqrt(0.05), "neither\n(sign-flip\np ≥ 0.05)", ha="left", va="center",
            transform=margin, **quadrant)
    ax.text(1.03, np.sqrt(0.05 * lo), "only Welch\nsignificant\n(sign-flip\np ≥ 0.05)",
            ha="left", va="center", transform=margin, **quadrant)
    ax.figure.canvas.draw()  # the transforms below need the final limits
    labelled = [(r.sign_flip_p, r.welch_p, f"{r.dataset} {r.scenario}, k={r.k}")
                for r in rows.itertuples() if min(r.sign_flip_p, r.welch_p) < 0.05]
    for x, y, text, dy in _spread_labels(ax, labelled):
        ax.annotate(text, (x, y), xytext=(6, dy), textcoords="offset points", fontsize=7,
                    va="center", arrowprops=dict(arrowstyle="-", color="0.6", lw=0.5)
                    if abs(dy - 3) > 1 else None)
    ax.set_xlabel("paired sign-flip p (log scale)")
    ax.set_ylabel("unpaired Welch p (log scale)")
    ax.set_title("Same runs, paired vs unpaired test (dashed: p = 0.05)", fontsize=11)
    ax.legend(loc="center right", frameon=True, fontsize=8, framealpha=0.9)
    if own:
        ax.figure.tight_layout()
    return ax


def learning_pairs(root, dataset="cifar10", scenario="S1", n_seeds=3, profile=None) -> list:
    """The first ``n_seeds`` (baseline, variant) run records of a pool cell, for
    :func:`plot_learning_curves`; empty when the pool has no such runs."""
    from real_runs.store import DEFAULT_POOL, load_pair_records

    try:
        return load_pair_records(root or DEFAULT_POOL, dataset, scenario, profile)[:n_seeds]
    except (ValueError, FileNotFoundError):
        return []


def plot_learning_curves(pairs, *, dataset="cifar10", scenario="S1", ax=None):
    """Figure 3: test accuracy (%) per epoch, baseline and variant, of ``pairs``
    (:func:`learning_pairs`, not empty).

    One colour per seed, solid baseline, dashed variant: the two arms of a seed move
    together, while seeds differ; the box states both at the last epoch. Draws on ``ax`` (a
    new figure when ``None``) and returns it.
    """
    own = ax is None
    if own:
        _, ax = _pyplot().subplots(figsize=(7.6, 4.6))
    colors = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00"]
    finals_b, finals_v = [], []
    for i, (base, var) in enumerate(pairs):
        epochs = np.arange(1, base.epoch_accuracy.size + 1)
        color = colors[i % len(colors)]
        ax.plot(epochs, 100 * base.epoch_accuracy, "-", marker="o", color=color, ms=4,
                label=f"seed {base.seed}: baseline")
        ax.plot(epochs, 100 * var.epoch_accuracy, "--", marker="s", color=color, ms=4,
                mfc="white", label=f"seed {var.seed}: variant ({scenario})")
        finals_b.append(100 * base.epoch_accuracy[-1])
        finals_v.append(100 * var.epoch_accuracy[-1])
    finals_b, finals_v = np.array(finals_b), np.array(finals_v)
    deltas = ", ".join(f"{d:+.1f}" for d in finals_v - finals_b)
    spread = finals_b.max() - finals_b.min()
    ax.text(0.02, 0.97, f"Last epoch: baselines span {spread:.1f} pp across seeds;\n"
            f"variant − baseline within each seed: {deltas} pp.\nCompare arms within a "
            "seed (paired), not across seeds.", transform=ax.transAxes, va="top",
            fontsize=8, bbox=dict(boxstyle="round", fc="white", ec="0.7"))
    ax.set_xticks(epochs)
    ax.set_xlabel("epoch")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(f"{dataset} {scenario}: learning curves of {len(pairs)} paired seeds "
                 "(colour = seed; solid baseline, dashed variant)", fontsize=9.5)
    ax.legend(fontsize=7.5, ncol=1, loc="lower right", frameon=True, framealpha=0.9)
    ax.grid(alpha=0.3)
    if own:
        ax.figure.tight_layout()
    return ax


def build_paper_figures(root=None, out=DEFAULT_OUT, profile=None) -> list[Path]:
    """Write the three figures (the third only if the pool has CIFAR-10 S1 runs).

    ``profile`` picks the training profile's pools when the store holds several.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = paper_table(root, profile=profile)
    written = [out / "delta_ci.png", out / "welch_vs_signflip.png"]
    save_png(plot_delta_ci(table).figure, written[0])
    save_png(plot_welch_vs_signflip(table).figure, written[1])
    pairs = learning_pairs(root, profile=profile)
    if pairs:
        written.append(save_png(plot_learning_curves(pairs).figure,
                                out / "learning_curves.png"))
    return written


@dataclass(frozen=True)
class PaperFiguresOptions:
    """What ``python -m reports.paper_figures`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`)."""

    pool: str | None = pool_option()
    out: Path = out_option(DEFAULT_OUT)
    profile: str | None = option("--profile", None,
                                 help="training profile of the pools (cpu, paper); needed "
                                      "only when the store holds several")


def build_parser() -> ArgumentParser:
    """The options of :class:`PaperFiguresOptions`, as declared there."""
    # ``python -OO`` strips docstrings: the description must not need one.
    summary = (__doc__ or "").strip().splitlines()[:1]
    return add_options(ArgumentParser(prog=PROG, description=summary[0] if summary else None),
                       PaperFiguresOptions)


def main(argv=None) -> int:
    """Check the pool, then draw every figure under ``--out``."""
    args = config_from_args(PaperFiguresOptions, build_parser().parse_args(argv))
    if args.pool is not None:
        check_store(args.pool, "--pool")  # a store the user names must exist
    pool_cells(args.pool, args.profile, option="--pool STORE")  # before the lock
    import matplotlib

    matplotlib.use("Agg")
    # locked and marked incomplete until every figure is drawn; a learning_curves.png of an
    # earlier pool that this one cannot draw is removed
    with run_outputs(args.out, PROG, known=FIGURES) as outputs:
        paths = build_paper_figures(args.pool, outputs.path, args.profile)
        outputs.wrote(*(path.name for path in paths))
    for path in paths:
        print(f"wrote {path}")
    return 0


def run() -> None:
    run_main(main, PROG)


if __name__ == "__main__":
    run()
