"""``python -m sim.sequential``: the sequential designs' table, figure and command line.

The numbers are :mod:`sim.sequential`'s (:func:`sim.sequential.sequential_table`); this
module draws them (``sequential.png``) and is the command ``python -m sim.sequential``
forwards to (``sim/sequential/__main__.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import (
    add_options,
    alpha_option,
    check_options,
    config_from_args,
    option,
    out_option,
    seed_option,
    sims_option,
)
from evalcal_core.outdir import run_outputs
from evalcal_core.params import parse_key_values
from evalcal_core.validate import AllOf, Rule
from sim.generators import get as get_generator
from sim.outputs import write_csv
from sim.sequential import DESIGNS, sequential_table

from ._save import save_png
from .words import setting_words

_STYLE = {"peek": ("tab:red", "-", "o"), "fixed": ("black", ":", "s"),
          "gs_pocock": ("tab:blue", "--", "^"), "gs_obf": ("tab:green", "-.", "D"),
          "e_tmix": ("tab:purple", (0, (5, 1, 1, 1)), "v")}
_LABEL = {"peek": "peek: test after every seed", "fixed": "fixed k = k_max",
          "gs_pocock": "group-sequential, Pocock spending",
          "gs_obf": "group-sequential, O'Brien-Fleming spending",
          "e_tmix": "anytime-valid e-process (t mixture)"}


def sequential_figure(frame: pd.DataFrame):
    """False-positive rate, power and mean seeds used against ``k_max``, one line per design.

    Left: rate at effect 0 with Wilson 95% bands and the nominal alpha line (hidden without
    effect-0 rows). Middle: power at the smallest non-zero effect (hidden without one).
    Right: mean seeds used (solid: that effect, dotted: the null). Returns the figure; the
    caller saves it (:func:`reports._save.save_png`) and chooses the matplotlib backend
    (``Agg`` for files).
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    alpha = float(frame["alpha"].iloc[0])
    k_min = int(frame["k_min"].iloc[0])
    nonzero = sorted(e for e in frame["effect_pp"].unique() if e != 0)
    effect = min(nonzero, key=abs) if nonzero else None
    designs = [d for d in DESIGNS if d in set(frame["design"])]
    fig, axes = plt.subplots(1, 3, figsize=(15, 5.2))
    for design in designs:
        color, style, marker = _STYLE[design]
        kw = dict(color=color, ls=style, marker=marker, ms=3.5, lw=1.4)
        part = frame[frame["design"] == design].sort_values("k_max")
        null = part[part["effect_pp"] == 0]
        if not null.empty:
            axes[0].plot(null["k_max"], null["rate"], label=_LABEL[design], **kw)
            axes[0].fill_between(null["k_max"], null["rate_low"], null["rate_high"],
                                 color=color, alpha=0.15, lw=0)
            axes[2].plot(null["k_max"], null["mean_seeds"], color=color, ls=":", lw=1.2)
        if effect is not None:
            alt = part[part["effect_pp"] == effect]
            axes[1].plot(alt["k_max"], alt["power"], label=_LABEL[design], **kw)
            axes[1].fill_between(alt["k_max"], alt["power_low"], alt["power_high"],
                                 color=color, alpha=0.15, lw=0)
            axes[2].plot(alt["k_max"], alt["mean_seeds"], label=_LABEL[design], **kw)
    null_high = frame.loc[frame["effect_pp"] == 0, "rate_high"]
    if null_high.empty:
        axes[0].set_visible(False)
    else:
        axes[0].axhline(alpha, color="gray", lw=1.2, ls=(0, (1, 1)),
                        label=f"nominal α = {100 * alpha:g}%")
        axes[0].set_ylim(0, max(2.2 * alpha, 1.1 * float(null_high.max())))
    axes[0].set_title("effect 0 pp: false-positive rate")
    axes[0].set_ylabel("rejection rate")
    if effect is not None:
        axes[1].set_title(f"effect {effect:g} pp: power (correct sign)")
        axes[1].set_ylim(0, 1.02)
        axes[1].set_ylabel("power")
        null_note = "" if null_high.empty else ", dotted: 0 pp"
        axes[2].set_title(f"mean seeds used (solid: {effect:g} pp{null_note})")
    else:
        axes[1].set_visible(False)
        axes[2].set_title("mean seeds used (dotted: 0 pp)")
    axes[2].set_ylabel("seeds per arm")
    for ax in axes:
        ax.set_xlabel(f"k_max (first look at k_min = {k_min} seeds)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    legend = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    handles, labels = list(legend.values()), list(legend)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3), fontsize=9,
               frameon=False)

    fig.suptitle(f"Adding seeds until it is significant: {frame['generator'].iloc[0]} "
                 f"({setting_words(frame['generator_params'].iloc[0])}), "
                 f"{int(frame['sims'].iloc[0])} experiments, protocol "
                 f"{frame['protocol'].iloc[0]}", fontsize=10)
    from matplotlib.ticker import PercentFormatter

    for ax in axes[:2]:
        ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def build_parser() -> argparse.ArgumentParser:
    """The options of :class:`SequentialOptions`, as declared there."""
    return add_options(ArgumentParser(
        prog="python -m sim.sequential",
        description="False-positive rate, power and seeds used when seeds are added until "
                    "the test is significant, against valid sequential designs."),
        SequentialOptions)


def _summary(frame: pd.DataFrame) -> str:
    """The rows at a few k_max values, as a fixed-width table."""
    ks = sorted(set(frame["k_max"]))
    shown_k = sorted({k for k in (6, 10, 20) if k in ks} | {ks[-1]})
    part = frame[frame["k_max"].isin(shown_k)].copy()
    part["rate [95% CI]"] = [f"{r:.3f} [{lo:.3f}, {hi:.3f}]" for r, lo, hi in
                             zip(part["rate"], part["rate_low"], part["rate_high"])]
    cols = ["design", "k_max", "effect_pp", "rate [95% CI]", "power", "mean_seeds",
            "fixed_k_same_power"]
    return part[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}",
                                na_rep="-")


PROG = "python -m sim.sequential"
#: files main() may write; those of an earlier run that this run does not write are removed
KNOWN_OUTPUTS = ("sequential.csv", "sequential.png", "command.json")
#: largest k_max (a typo such as --k 3 1000000000 must not start allocating)
MAX_K = 10**4
_K_RANGE = AllOf(Rule(lambda k: k[0] >= 2, "K_MIN >= 2 (a t statistic needs two seeds)"),
                 Rule(lambda k: k[0] <= k[1], "K_MIN K_MAX with K_MIN <= K_MAX"),
                 Rule(lambda k: k[1] <= MAX_K, f"K_MIN K_MAX with K_MAX <= {MAX_K}"))


@dataclass(frozen=True)
class SequentialOptions:
    """Everything ``python -m sim.sequential`` was asked; checked once, when built.

    Each field is a command-line option declared with its flag, default, help and
    constraint (:mod:`evalcal_core.options`). ``k`` is ``(K_MIN, K_MAX)``; ``effects`` in
    percentage points; ``params`` the generator's ``KEY=VALUE`` strings as typed.
    """

    k: tuple[int, int] = option(
        "--k", nargs=2, kind=int, metavar=("K_MIN", "K_MAX"), always=True,
        constraint=_K_RANGE,
        help="first look at K_MIN seeds; rows for every k_max in K_MIN..K_MAX")
    effects: tuple[float, ...] = option(
        "--effects", (0.0, 1.0), nargs="+", kind=float, metavar="PP",
        constraint=Rule(lambda e: len(set(e)) == len(e), "distinct values"),
        help="true effects in percentage points (default 0 1)")
    sims: int = sims_option(2000, help="experiments per effect (2000)")
    seed: int = seed_option()
    alpha: float = alpha_option()
    protocol: str = option("--protocol", "paired_t", help="protocol that peeks (paired_t)")
    generator: str = option("--generator", "seed_gaussian",
                            help="generator (seed_gaussian)")
    params: tuple[str, ...] = option("--param", (), nargs="+", metavar="KEY=VALUE",
                                     help="generator parameters, e.g. sigma=0.004 noise=t3")
    designs: tuple[str, ...] = option("--designs", tuple(DESIGNS), nargs="+", metavar="NAME",
                                      help=f"designs (default: all of {' '.join(DESIGNS)})")
    out: Path = out_option(Path("reports") / "output" / "sequential")
    no_plot: bool = option("--no-plot", False, switch=True, in_argv=False,
                           help="skip sequential.png")
    quiet: bool = option("--quiet", False, switch=True, in_argv=False, help="print nothing")

    def __post_init__(self):
        check_options(self)


def main(argv=None) -> int:
    """Command line; returns the exit code (``ValueError`` is handled by the caller).

    Every argument is checked before ``--out`` is locked; the run then holds the lock while
    it computes and writes, keeps the folder marked incomplete until every output is written
    (:func:`evalcal_core.outdir.run_outputs`), and removes outputs an earlier run left that
    it does not write.
    """
    config = config_from_args(SequentialOptions, build_parser().parse_args(argv))
    k_min, k_top = config.k
    generator = get_generator(config.generator, **parse_key_values(config.params, "--param"))
    with run_outputs(config.out, PROG, known=KNOWN_OUTPUTS) as outputs:
        frame = sequential_table(generator, config.protocol, k_min, range(k_min, k_top + 1),
                                 list(config.effects), config.sims, config.alpha, seed=config.seed,
                                 designs=list(config.designs))
        write_csv(frame, outputs.path / "sequential.csv")
        outputs.wrote("sequential.csv")
        write_atomic(outputs.path / "command.json", json.dumps(
            {"argv": sys.argv[1:] if argv is None else list(argv)}) + "\n")
        outputs.wrote("command.json")
        if not config.no_plot:
            import matplotlib

            matplotlib.use("Agg")
            save_png(sequential_figure(frame), outputs.path / "sequential.png")
            outputs.wrote("sequential.png")
    if not config.quiet:
        print(_summary(frame))
        print(f"\nwrote {config.out}/: {', '.join(outputs.written)}")
        if outputs.removed:
            print(f"removed {', '.join(outputs.removed)} of an earlier run with other settings")
    return 0


def run() -> None:
    """Console entry point: ``prog: error: msg`` on stderr and exit 2 for bad input."""
    run_main(main, PROG)


if __name__ == "__main__":
    run()
