"""``python -m reports.plan_figure``: the study planner's answer, and its figure.

Takes the options of ``python -m sim.plan`` (the numbers come from there: ``sim`` draws
nothing) plus ``--figure FILE``: prints the plan and draws the closed-form power over seeds k
(rows) and questions n (columns, log scale) at the chosen number of repeats r, with the
target-power contour, iso-cost lines and the chosen design marked. For ``--design models``
the rows are the repeats r (there are no seeds); for models_clustered the columns are
the total questions G m of G clusters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.ticker import FuncFormatter

from evalcal_core.cli import run_main
from evalcal_core.options import add_options, option
from sim import plan as planner
from sim import plan_designs
from sim.plan_search import power_grid

from ._save import save_png

DEFAULT_FIGURE = "plan.png"


def plot_plan(plan, grid, *, ax=None):
    """Draw ``plan`` (a :class:`sim.plan_search.Plan`) and its power ``grid``
    (:func:`sim.plan_search.power_grid`: rows, columns, power and cost) on ``ax`` (a new
    figure when ``None``); returns the Axes.

    Filled contours of power (percent) with a colour bar; the target-power contour in black;
    dashed gray iso-cost lines labelled in the cost unit; the chosen design as a red star.
    """
    c = plan.config
    # the design's object says whether its rows are seeds (k) or repeats (r)
    design = plan_designs.get(c.design)
    rows, ns, power, cost = grid
    own = ax is None
    if own:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(7.0, 4.8))
    fig = ax.figure
    levels = np.linspace(0, 100, 11)
    filled = ax.contourf(ns, rows, 100 * power, levels=levels, cmap="viridis")
    fig.colorbar(filled, ax=ax, label="power (%)")
    target = ax.contour(ns, rows, 100 * power, levels=[100 * c.power], colors="black",
                        linewidths=1.6)
    ax.clabel(target, fmt={lev: f"power {lev:g}%" for lev in target.levels}, fontsize=8)
    positive = cost[np.isfinite(cost) & (cost > 0)]
    if positive.size and positive.max() > positive.min():
        chosen_cost = plan.chosen["cost"] if plan.chosen else np.median(positive)
        iso = chosen_cost * np.array([0.5, 1.0, 2.0, 4.0])
        iso = iso[(iso > positive.min()) & (iso < positive.max())]
        if iso.size:
            lines = ax.contour(ns, rows, cost, levels=iso, colors="0.85", linestyles="--",
                               linewidths=1.0)
            ax.clabel(lines, fmt={v: f"{v:.3g} {c.costs.unit}" for v in lines.levels},
                      fontsize=7)
    r_word = ""
    if plan.chosen is not None:
        ch = plan.chosen
        y = ch["k"] if design.seeds else ch["r"]
        seeds = (f"k={ch.get('k')}, " if design.seeds
                 else f"G={ch.get('clusters')}, " if design.clustered else "")
        ax.plot([ch["n"]], [y], marker="*", color="red", markersize=15,
                markeredgecolor="white", linestyle="none", clip_on=False, zorder=5,
                label=f"chosen: {seeds}n={ch['n']:,}, r={ch['r']}, cost {ch['cost']:.4g} "
                      f"{c.costs.unit}")
        ax.legend(loc="best", fontsize=8, framealpha=0.9)
        r_word = f", r = {ch['r']} repeats" if design.seeds else ""
        effect = ch["effect_pp"]
    else:
        effect = 100 * (c.effect or 0.01)
    ax.set_xscale("log")
    # plain numbers; minor ticks labelled at 2 and 5 on a short axis only (matplotlib's
    # 3x10^1 4x10^1 labels overlap, and so would 5000 10000 on a long one)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    short = np.log10(np.max(ns) / np.min(ns)) <= 2
    ax.xaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: f"{v:g}" if short and f"{v:.0e}"[0] in "25" else ""))
    ax.set_xlabel("questions n")
    ax.set_ylabel("seeds per arm k" if design.seeds else "repeats r")
    ax.set_title(f"{c.design}: power at {effect:.3g} pp{r_word} (alpha {c.alpha:g})",
                 fontsize=10)
    if own:
        fig.tight_layout()
    return ax


@dataclass(frozen=True)
class FigureOptions:
    """The option ``python -m reports.plan_figure`` adds to ``sim.plan``'s."""

    figure: str = option("--figure", DEFAULT_FIGURE, metavar="FILE", in_argv=False,
                         help=f"the PNG to write (default {DEFAULT_FIGURE})")


def build_parser():
    """``sim.plan``'s options (:class:`sim.plan.PlanOptions`) and :class:`FigureOptions`."""
    parser = planner.build_parser(prog="python -m reports.plan_figure")
    parser.description = (__doc__ or "").split("\n\n")[0].replace("``", "")
    return add_options(parser, FigureOptions)


def main(argv=None) -> int:
    """Command line: ``sim.plan``'s options and ``--figure``; the plan printed, then drawn."""
    import matplotlib

    matplotlib.use("Agg")
    args = build_parser().parse_args(argv)
    # the tables' folder is locked and marked incomplete while they are computed and written;
    # the figure is one file, written atomically
    plan = planner.run_plan_into(planner.config_from_args(args), args.out,
                                 "python -m reports.plan_figure")
    print("\n".join(planner.report_lines(plan)))
    ax = plot_plan(plan, power_grid(plan))
    print(f"figure: {save_png(ax.figure, args.figure)}")
    return 0 if plan.chosen is not None else 1


if __name__ == "__main__":
    run_main(main, "python -m reports.plan_figure")
