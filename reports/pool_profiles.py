"""``python -m reports.pool_profiles``: the real-run pools of each training profile side by side.

For every dataset and every training profile (``cpu``, ``paper``): under the null scenario
the baseline's accuracy, the sd of the per-seed delta, the correlation of the two arms'
per-seed accuracies, and the false-positive rate of the one-run rules and of the paired
protocols; under each variant scenario the pool's mean delta with its 95% t interval
(whether the variant helps, as the paper's S1 and S2 do) and the power of the paired
protocols at the pool's own effect. Rates are simulated from the pool itself
(:func:`sim.grid.calibrate`), each with its pool-sampling interval (which seeds the pool
happens to hold, Monte Carlo error included). A profile the store does not hold is a
column that says so: the table keeps its shape until the GPU pool exists.

Writes ``pool_profiles.csv`` (one row per profile, dataset, scenario and quantity) and
``pool_profiles.md`` (one table per dataset, a column per profile).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core import scenarios
from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import (
    MAX_SIMS,
    add_options,
    alpha_option,
    check_options,
    config_from_args,
    jobs_option,
    option,
    out_option,
    pool_option,
    seed_option,
    sims_option,
)
from evalcal_core.outdir import run_outputs
from evalcal_core.validate import Each, Interval, fail
from real_runs.store import DEFAULT_POOL, check_store, pool_cells, pool_profiles
from sim.outputs import csv_text

DEFAULT_OUT = Path("reports") / "output" / "pool_profiles"
PROG = "python -m reports.pool_profiles"
#: the profiles compared by default: the CPU stand-in and the paper's GPU regime
PROFILES = ("cpu", "paper")
#: one run per arm: a 1 pp rule and a formal test on one run (both pitfalls for methods)
ONE_RUN = ("single_run", "mcnemar")
#: the honest protocols for paired seeds
PAIRED = ("paired_t", "paired_bca_perm")
KS = (3, 10)
COLUMNS = ["profile", "dataset", "scenario", "quantity", "protocol", "k", "value", "low",
           "high", "unit", "seeds", "sims", "alpha"]


def _pools(root, profile):
    from sim import generators

    extra = {} if root is None else {"root": str(root)}
    return [generators.get("real_pool", dataset=d, scenario=s, profile=profile, **extra)
            for d, s in pool_cells(root, profile)]


def profile_rows(root, profile: str, *, ks=KS, sims: int = 2000, seed: int = 0,
                 alpha: float = 0.05, jobs: int = 1) -> list[dict]:
    """The quantities of one profile's pools (see the module docstring), as rows.

    Parameters
    ----------
    root : path or None
        Run store; None is the committed pool.
    profile : str
        Training profile held by the store.
    ks : tuple of int
        Seeds per arm of the simulated studies; those above a third of a pool's seeds are
        left out for that pool (as ``sim.calibrate`` refuses them).
    sims : int
        Simulated studies per (pool, k, protocol) cell.
    seed : int
        Root seed of the simulation; the rows depend on nothing else.
    alpha : float
        Two-sided level of every protocol (fraction).
    jobs : int
        Worker processes.

    Returns
    -------
    list of dict
        Rows with the keys of :data:`COLUMNS`. Accuracies and rates in percent, deltas in
        percentage points, ``rho`` without unit; ``low``/``high`` are a 95% t interval
        (mean delta), a Fisher-z interval (rho) or the pool-sampling interval (rates).
    """
    from sim.grid import calibrate
    from sim.pool_summary import pool_summary

    pools = _pools(root, profile)
    summary = pool_summary(pools)
    rows = []
    for pool, info in zip(pools, summary.to_dict("records")):
        common = dict(profile=profile, dataset=pool.dataset, scenario=pool.scenario,
                      seeds=int(info["seeds"]), alpha=alpha)

        def add(quantity, value, low=np.nan, high=np.nan, unit="", protocol="", k=0,
                sims_=0, common=common):
            rows.append(dict(common, quantity=quantity, protocol=protocol, k=k,
                             value=float(value), low=float(low), high=float(high), unit=unit,
                             sims=sims_))

        null = bool(info["null"])
        if null:
            add("baseline accuracy", info["base_acc_pct"], unit="%")
            add("sd of the per-seed delta", info["sd_delta_pp"], unit="pp")
            add("rho of the arms' per-seed accuracies", info["rho"], info["rho_low"],
                info["rho_high"])
        add("mean delta", info["mean_delta_pp"], info["delta_ci_low_pp"],
            info["delta_ci_high_pp"], unit="pp")
        # as in sim.calibrate: k at most a third of the pool, else the rate describes
        # little more than the pool's own seeds
        usable = [k for k in ks if 3 * k <= info["seeds"]]
        if not usable:
            continue
        # A one-run rule reads one seed's pair: its rate does not depend on k, so it is
        # simulated at the smallest k only (a cell's draws do not depend on its protocols).
        one_run = list(ONE_RUN) if null else []
        effect = [100 * pool.fixed_effect()]
        common_run = dict(sims=sims, alpha=alpha, seed=seed, jobs=jobs, progress=False)
        frames = [calibrate(pool, usable[:1], effect, protocol_names=one_run + list(PAIRED),
                            **common_run)]
        if usable[1:]:
            frames.append(calibrate(pool, usable[1:], effect, protocol_names=list(PAIRED),
                                    **common_run))
        what = "false-positive rate" if null else "power at the pool's own delta"
        cells = {(r["protocol"], int(r["k"])): r
                 for frame in frames for r in frame.to_dict("records")}
        for name in one_run + list(PAIRED):
            for k in usable[:1] if name in ONE_RUN else usable:
                r = cells[(name, k)]
                add(what, 100 * r["rate"], 100 * r["pool_low"], 100 * r["pool_high"],
                    unit="%", protocol=name, k=0 if name in ONE_RUN else k,
                    sims_=int(r["sims"]))
    return rows


def shown_profiles(asked, held) -> list[str]:
    """The profiles to set side by side: those ``asked`` for, else :data:`PROFILES` and
    then any other profile ``held``."""
    return list(asked) if asked else list(dict.fromkeys([*PROFILES, *held]))


def pool_profiles_table(root=None, profiles=None, **kwargs) -> pd.DataFrame:
    """Rows (:data:`COLUMNS`) of every shown profile the store holds (see
    :func:`shown_profiles`); a profile it lacks has no rows. ``kwargs`` go to
    :func:`profile_rows`."""
    held = pool_profiles(root)
    rows = []
    for profile in shown_profiles(profiles, held):
        if profile in held:
            rows += profile_rows(root, profile, **kwargs)
    return pd.DataFrame(rows, columns=COLUMNS)


#: what the tables' numbers are (printed above them)
LEGEND = (
    "Per dataset, the pools of each training profile side by side. Accuracy is the "
    "baseline's mean test accuracy; delta = variant - baseline per seed; rho = correlation "
    "of the arms' per-seed accuracies [Fisher-z 95% interval]; mean delta [95% t interval "
    "over the pool's seeds]: helps / hurts when the interval excludes 0. Rates: {sims} "
    "simulated studies per cell, each drawing k of the pool's seeds (k at most a third of "
    "them; one-run rules read one seed's pair), rejections at two-sided {level}; "
    "[pool-sampling interval, Monte Carlo error included]. Under S0p (a true null) a rate "
    "is a false-positive rate, under S1/S2 the power to detect the pool's own delta in its "
    "direction.")


def legend(frame: pd.DataFrame) -> str:
    """:data:`LEGEND` with the frame's simulations per cell and level."""
    sims = "/".join(sorted({str(int(n)) for n in frame["sims"] if n})) or "no"
    alpha = float(frame["alpha"].iloc[0]) if len(frame) else 0.05
    return LEGEND.format(sims=sims, level=f"{100 * alpha:g}%")


def layout(frame: pd.DataFrame, shown) -> list[tuple[str, list[str], list[list]]]:
    """The side-by-side tables: per dataset, its column headers (one per shown profile) and
    per quantity the frame index of each profile's row (None where it has none).

    A profile with no row at all is "not trained yet"; one without rows for this dataset is
    "not trained for" it.
    """
    present = set(frame["profile"])
    tables = []
    for dataset, part in frame.groupby("dataset", sort=True):
        head = []
        for p in shown:
            seeds = part.loc[part["profile"] == p, "seeds"]
            head.append(f"{p} ({int(seeds.min())} seeds)" if len(seeds) else
                        f"{p} (not trained {'yet' if p not in present else 'for ' + dataset})")
        by_key: dict = {}  # insertion order: the frame's order of quantities
        for i, key, profile in zip(part.index, zip(part["scenario"], part["quantity"],
                                                   part["protocol"], part["k"]),
                                   part["profile"]):
            by_key.setdefault(key, {})[profile] = i
        tables.append((dataset, head, [[at.get(p) for p in shown] for at in by_key.values()]))
    return tables


def value_format(row) -> str:
    """The format of a row's value and bounds: a sign on deltas, 2 decimals for pp and rho,
    1 for percentages."""
    digits = 2 if row["unit"] in ("", "pp") else 1
    return f"{'+' if row['quantity'] == 'mean delta' else ''}.{digits}f"


def verdict(row) -> str:
    """``helps``/``hurts``/``unclear`` for a variant scenario's mean delta (by its 95% t
    interval), else empty."""
    known = scenarios.SCENARIOS.get(row["scenario"])
    if row["quantity"] != "mean delta" or known is None or known.null:
        return ""
    return "helps" if row["low"] > 0 else "hurts" if row["high"] < 0 else "unclear"


def _cell(row) -> str:
    if not np.isfinite(row["value"]):
        return "–"
    fmt = value_format(row)
    text = f"{row['value']:{fmt}}"
    if np.isfinite(row["low"]):
        text += f" [{row['low']:{fmt}}, {row['high']:{fmt}}]"
    said = verdict(row)
    return f"{text}: {said}" if said else text


def label(row) -> str:
    """A row's quantity in words, with its scenario, protocol, k and unit."""
    scenario, quantity = row["scenario"], row["quantity"]
    unit = f" ({row['unit']})" if row["unit"] else ""
    if row["protocol"]:
        k = "one run" if row["k"] == 0 else f"k = {row['k']}"
        return f"{scenario} {quantity}, {row['protocol']}, {k}{unit}"
    return f"{scenario} {quantity}{unit}"


def to_markdown(frame: pd.DataFrame, shown) -> str:
    """One table per dataset: a row per quantity, a column per shown profile (see
    :func:`layout`), under the legend."""
    out = [legend(frame), ""]
    for dataset, head, lines in layout(frame, shown):
        out += [f"**{dataset}**", "", "| quantity | " + " | ".join(head) + " |",
                "|---|" + "---:|" * len(shown)]
        for at in lines:
            first = frame.loc[next(i for i in at if i is not None)]
            out.append(f"| {label(first)} | " + " | ".join(
                "–" if i is None else _cell(frame.loc[i]) for i in at) + " |")
        out.append("")
    return "\n".join(out)


@dataclass(frozen=True)
class PoolProfilesOptions:
    """What ``python -m reports.pool_profiles`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`) whose own rule is checked when built."""

    pool: str | None = pool_option()
    out: Path = out_option(DEFAULT_OUT)
    profiles: tuple[str, ...] | None = option(
        "--profiles", None, nargs="+",
        help="profiles to set side by side (default: cpu, paper and any other the store "
             "holds)")
    ks: tuple[int, ...] = option("--ks", KS, nargs="+", kind=int, metavar="K",
                                 constraint=Each(Interval("int", 1, 10_000)),
                                 help="seed counts per arm of the simulated studies (3 10)")
    sims: int = sims_option(2000, constraint=Interval("int", 10, MAX_SIMS),
                            help="simulated studies per cell (2000)")
    seed: int = seed_option()
    alpha: float = alpha_option()
    jobs: int = jobs_option()

    def __post_init__(self):
        check_options(self)


def build_parser() -> argparse.ArgumentParser:
    """The options of :class:`PoolProfilesOptions`, as declared there."""
    # ``python -OO`` strips docstrings: the description must not need one.
    summary = (__doc__ or "").strip().splitlines()[:1]
    # --k (the range of sim.calibrate) must not be read as an abbreviation of --ks
    return add_options(ArgumentParser(prog=PROG, description=summary[0] if summary else None,
                                      allow_abbrev=False), PoolProfilesOptions)


def main(argv=None) -> int:
    """Check the arguments and the store, then compute and write under ``--out``."""
    args = config_from_args(PoolProfilesOptions, build_parser().parse_args(argv))
    if args.pool is None:
        pool_cells(None, option="--pool STORE")  # the committed pool may be missing
    store = DEFAULT_POOL if args.pool is None else check_store(args.pool, "--pool")
    held = pool_profiles(store)
    if args.profiles and not set(args.profiles) & set(held):
        raise fail("--profiles", f"a profile the store {store} holds ({', '.join(held)})",
                   args.profiles)
    with run_outputs(args.out, PROG, known=("pool_profiles.csv", "pool_profiles.md")) as out:
        frame = pool_profiles_table(args.pool, args.profiles, ks=tuple(sorted(set(args.ks))),
                                    sims=args.sims, seed=args.seed, alpha=args.alpha,
                                    jobs=args.jobs)
        markdown = to_markdown(frame, shown_profiles(args.profiles, held))
        write_atomic(out.path / "pool_profiles.csv", csv_text(frame, "%.6g"))
        write_atomic(out.path / "pool_profiles.md", markdown)
        out.wrote("pool_profiles.csv", "pool_profiles.md")
    print(markdown)
    print(f"wrote {args.out}/pool_profiles.md and pool_profiles.csv")
    return 0


def run() -> None:
    """Console entry point."""
    run_main(main, PROG)


if __name__ == "__main__":
    run()
