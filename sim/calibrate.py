"""``python -m sim.calibrate``: false-positive rate and power of every protocol, by k.

Example::

    python -m sim.calibrate --k 3 10
    python -m sim.calibrate --k 3 10 --mde --target-power 0.9
    python -m sim.calibrate --k 8 --generator question_mixture --effects 0 1 --sims 500

Besides the requested grid it searches, for every recommended protocol and effect, the
smallest k reaching the target power up to ``--k-max`` (``seed_budget.csv``; the rule for
"recommended" is in :mod:`sim.budget`), and with ``--mde`` the smallest effect each k
detects (``mde.csv``, :mod:`sim.mde`). Real-pool rates get a pool-sampling interval
(``pool_low``/``pool_high``, :mod:`sim.grid.pool`).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

import pandas as pd

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.outdir import locked_out, remove_stale
from evalcal_core.params import parse_key_values
from evalcal_core.validate import check_alpha, check_int, check_number, fail
from protocols._replicate_law import REPLICATE_MODES

from . import generators
from .budget import DEFAULT_K_MAX, search_budget
from .figures import plot_power_curves
from .generators.real_pool import default_k_cap
from .grid import DEFAULT_REPLICATES, DEFAULT_REPS, calibrate, check_memory, chunk_size, run_cells
from .grid.parallel import BACKENDS
from .mde import check_searchable, search_mde
from .outputs import seed_budget, summary_table, write_csv
from .pilot import generator_from_pilot
from .pool_summary import fit_check, pool_summary

DEFAULT_EFFECTS = [0.0, 0.5, 1.0, 2.0]

DEFAULT_OUT = Path("reports") / "output" / "calibrate"

#: upper bounds checked before any work (a typo such as --sims 10^12 must not start a run)
MAX_SIMS = 10**7
MAX_K = 10**4
MAX_JOBS = 4096
#: files main() may write; those of an earlier run that this run does not write are removed
KNOWN_OUTPUTS = ("calibration.csv", "seed_budget.csv", "pool_summary.csv", "fit_check.csv",
                 "command.json", "power_curves.png")


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="python -m sim.calibrate",
        description="Score evaluation protocols for false-positive rate and power by "
                    "simulation, and tell how many seeds to budget.")
    p.add_argument("--k", nargs="+", type=int, required=True, metavar="K",
                   help="seeds per arm: one integer, or MIN MAX for the range MIN..MAX")
    p.add_argument("--effects", nargs="+", type=float, default=None, metavar="PP",
                   help="true effects in percentage points (default 0 0.5 1 2; a real pool "
                        "has its own)")
    p.add_argument("--generator", default="seed_gaussian",
                   help="one of " + ", ".join(generators.names()) + "; or "
                        + "; ".join(f"'{k}': {v}" for k, v in generators.SHORTHANDS.items()))
    p.add_argument("--param", nargs="+", default=[], metavar="KEY=VALUE",
                   help="generator parameters, e.g. sigma=0.004 rho=0.3 (fractions)")
    p.add_argument("--from-pilot", metavar="RESULTS",
                   help="fit the generator to your pilot runs: a protocols.evaluate CSV, or "
                        "two harness logs as BASELINE_LOG,VARIANT_LOG")
    p.add_argument("--sims", type=int, default=2000, help="experiments per cell (2000)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (0.05)")
    p.add_argument("--protocols", nargs="+", metavar="NAME",
                   help="protocols to score (default: all applicable)")
    p.add_argument("--protocol-param", nargs="+", default=[], metavar="KEY=VALUE",
                   help="set on every selected protocol with that parameter, e.g. B=30")
    p.add_argument("--seed", type=int, default=0, help="root seed (0)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="parallel workers (default: all cores; results do not depend on it)")
    p.add_argument("--backend", choices=BACKENDS, default="loky",
                   help="loky (local processes) or dask (a dask.distributed cluster)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="dask scheduler address; default: a local cluster on loopback")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder ({DEFAULT_OUT})")
    p.add_argument("--target-power", type=float, default=0.8, metavar="P",
                   help="power the seed budget and --mde answer for (0.8)")
    p.add_argument("--k-max", type=int, default=DEFAULT_K_MAX, metavar="K",
                   help=f"search the seed budget up to this k ({DEFAULT_K_MAX}); a real pool "
                        "caps it at a third of its seeds")
    p.add_argument("--fpr-tolerance", type=float, default=None, metavar="T",
                   help="a protocol is recommended only if its false-positive rate's upper "
                        "bound is <= alpha + T at every k (default alpha / 2)")
    p.add_argument("--mde", action="store_true",
                   help="also search the minimum detectable effect of every k (mde.csv); "
                        "generators with a continuous effect only")
    p.add_argument("--percent", action="store_true",
                   help="--from-pilot: the pilot's scores are percentages (91.3 = 91.3%%)")
    p.add_argument("--allow-large-k", action="store_true",
                   help="real pools: allow k above a third of the pool (experiments then "
                        "share most of their seeds)")
    p.add_argument("--pool-reps", type=int, default=DEFAULT_REPS, metavar="R",
                   help=f"real pools: half-sample replicates behind pool_low/pool_high, "
                        f"and with --check-fit the pools a fitted model redraws to judge "
                        f"its own fit ({DEFAULT_REPS}; 0 = off)")
    p.add_argument("--replicates", choices=REPLICATE_MODES, default=DEFAULT_REPLICATES,
                   help="z-bootstrap protocols: 'summary' draws the B replicates' mean and SD "
                        "from their exact-moment law (the same rates, far faster); 'drawn' "
                        f"resamples every replicate ({DEFAULT_REPLICATES})")
    p.add_argument("--check-fit", action="store_true",
                   help="real pools: also calibrate seed_question fitted to each pool and "
                        "write fit_check.csv, with where a correct model's difference "
                        "would fall (null_mean, se_null; a parametric bootstrap of "
                        "--pool-reps pools)")
    p.add_argument("--no-plot", action="store_true", help="skip power_curves.png")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no table")
    return p


def _ks(values) -> list[int]:
    if len(values) > 2:
        raise ValueError(f"--k takes one integer or MIN MAX; got {len(values)} values")
    low, high = values[0], values[-1]
    if low < 1:
        raise ValueError(f"--k must be >= 1; got {low}")
    if high > MAX_K:
        raise ValueError(f"--k must be <= {MAX_K}; got {high}")
    if low > high:
        raise ValueError(f"--k MIN MAX needs MIN <= MAX; got {low} > {high}")
    return list(range(low, high + 1))


def _check(args) -> None:
    check_int(args.sims, "--sims", low=1, high=MAX_SIMS)
    check_int(args.jobs, "--jobs", low=1, high=MAX_JOBS)
    check_alpha(args.alpha, "--alpha")
    check_int(args.seed, "--seed", low=0, high=2**63 - 1)
    if args.scheduler and args.backend != "dask":
        raise ValueError("--scheduler goes with --backend dask")
    if args.effects is not None and len(set(args.effects)) != len(args.effects):
        raise ValueError(f"--effects has a repeated value: {args.effects}")
    check_number(args.target_power, "--target-power", low=0, high=1, low_open=True,
                 high_open=True)
    if args.fpr_tolerance is not None:
        check_number(args.fpr_tolerance, "--fpr-tolerance", low=0, high=1 - args.alpha)
    check_int(args.pool_reps, "--pool-reps", low=0)
    if args.pool_reps == 1:
        raise fail("--pool-reps", "0 (off) or an integer >= 2", args.pool_reps)
    if args.percent and not args.from_pilot:
        raise ValueError("--percent describes a pilot's scores; it goes with --from-pilot")


def _check_k_max(args, ks) -> None:
    check_int(args.k_max, "--k-max", low=max(ks))


def _generators(args, params):
    """The generators to calibrate, and the pilot's observed effect (pp) or ``None``."""
    if args.from_pilot:
        if args.generator != "seed_gaussian":
            raise ValueError("--from-pilot chooses the generator itself; drop --generator")
        fit = generator_from_pilot(args.from_pilot, percent=args.percent)
        generator = generators.get(fit.generator.name, **{**fit.generator.params(), **params})
        if not args.quiet:
            print(fit.text + " (calibrated alongside the requested effects)")
        return [generator], fit.observed_effect_pp
    return generators.expand(args.generator, params), None


def _check_memory(generator, ks) -> None:
    """Refuse a grid whose largest cell cannot fit in memory, before drawing anything."""
    k = max(ks)
    check_memory(generator, k, chunk_size(generator, k))


def _effects(generator, requested, observed=None):
    """Effects (pp) to calibrate: the requested ones (or the pool's own), the null always
    (the seed budget's validity needs it), and a pilot's observed effect."""
    fixed = generator.fixed_effect()
    if fixed is not None:
        if requested is not None:
            for effect in requested:
                generator.check_effect(effect / 100)
        return [100 * fixed]
    effects = list(DEFAULT_EFFECTS if requested is None else requested)
    if 0.0 not in effects:
        effects.insert(0, 0.0)
    if observed is not None:
        observed = round(float(observed), 4)
        if observed not in effects:
            try:
                generator.check_effect(observed / 100)
            except ValueError:
                print(f"note: the pilot's own effect {observed:+.4g} pp cannot be simulated "
                      f"by {generator.name}; left out", file=sys.stderr)
            else:
                effects.append(observed)
    return effects


def _k_cap(generator, ks, args) -> int:
    """Largest k of the seed-budget search for ``generator`` (real pools: a third of the
    pool unless --allow-large-k; ValueError if the requested k already exceed it)."""
    if not generator.from_pool:
        return args.k_max
    size = generator.pool_size
    cap = default_k_cap(size)
    label = f"{generator.dataset} {generator.scenario}"
    if max(ks) > cap and not args.allow_large_k:
        raise ValueError(f"--k {max(ks)} is above a third of the {size}-seed pool {label} "
                         f"(at most {cap}): experiments would share most of their seeds. "
                         f"Pass --allow-large-k to run it anyway")
    if args.allow_large_k:
        if max(ks) > cap:
            print(f"warning: --allow-large-k: k up to {max(ks)} draws more than a third of the "
                  f"{size}-seed pool {label}; experiments share most of their seeds, so its "
                  f"rates say less about fresh seeds", file=sys.stderr)
        cap = size
    return min(args.k_max, cap)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    _check(args)
    ks = _ks(args.k)
    _check_k_max(args, ks)
    params = parse_key_values(args.param, "--param")
    protocol_params = parse_key_values(args.protocol_param, "--protocol-param")
    chosen, observed = _generators(args, params)
    if args.mde:
        for generator in chosen:
            check_searchable(generator)
    for generator in chosen:
        _check_memory(generator, ks)
    with locked_out(args.out):
        return _run(args, argv, ks, protocol_params, chosen, observed)


def _run(args, argv, ks, protocol_params, chosen, observed) -> int:
    caps = {g.describe(): _k_cap(g, ks, args) for g in chosen}
    common = dict(sims=args.sims, alpha=args.alpha, seed=args.seed, jobs=args.jobs,
                  backend=args.backend, scheduler=args.scheduler, out=args.out,
                  progress=not args.quiet, pool_reps=args.pool_reps)
    frames, fits = [], []
    for generator in chosen:
        effects = _effects(generator, args.effects, observed)
        frame = calibrate(generator, ks, effects, protocol_names=args.protocols,
                          protocol_params=protocol_params, replicates=args.replicates,
                          **common)
        frames.append(frame)
        if args.check_fit and generator.from_pool:
            fit_common = {**common, "protocol_params": protocol_params,
                          "replicates": args.replicates}
            fit_common.pop("pool_reps")
            fits.append(fit_check(generator, frame, ks, effects, fit_common,
                                  reps=args.pool_reps))
    frame = pd.concat(frames, ignore_index=True)
    run = functools.partial(run_cells, **common, desc="seed budget search")
    frame = search_budget(frame, chosen, caps=caps, target_power=args.target_power,
                          tolerance=args.fpr_tolerance, run=run)
    budget = seed_budget(frame, target_power=args.target_power, caps=caps,
                         tolerance=args.fpr_tolerance)
    mde = None
    if args.mde:
        mde, cells = search_mde(frame, chosen, ks, target_power=args.target_power,
                                tolerance=args.fpr_tolerance,
                                run=functools.partial(run_cells, **common,
                                                      desc="effect search"))
        frame = pd.concat([frame, cells], ignore_index=True)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(frame, args.out / "calibration.csv")
    write_csv(budget, args.out / "seed_budget.csv")
    written = ["calibration.csv", "seed_budget.csv"]
    if mde is not None:
        write_csv(mde, args.out / "mde.csv")
        written.append("mde.csv")
    pools = [g for g in chosen if g.from_pool]
    pools_table = pool_summary(pools) if pools else None
    if pools:
        write_csv(pools_table, args.out / "pool_summary.csv")
        written.append("pool_summary.csv")
        for warning in pools_table["warning"]:
            if warning:
                print(f"warning: {warning}", file=sys.stderr)
    if fits:
        write_csv(pd.concat(fits, ignore_index=True), args.out / "fit_check.csv")
        written.append("fit_check.csv")
    write_atomic(args.out / "command.json", json.dumps(
        {"argv": sys.argv[1:] if argv is None else list(argv)}) + "\n")
    grid = frame[~frame["searched"].astype(bool)]
    if not args.no_plot:
        title = grid["generator"].iloc[0] + ": " + (
            grid["generator_params"].iloc[0] if len(frames) == 1 else "real-run pools")
        plot_power_curves(grid, args.out / "power_curves.png", title=title)
        written.append("power_curves.png")
    stale = remove_stale(args.out, KNOWN_OUTPUTS, written + ["command.json"])
    if not args.quiet:
        print(summary_table(grid, budget, mde))
        if pools:
            print("\nreal pools: true effect and pairing correlation of per-seed accuracies")
            shown = pools_table.drop(columns="warning")
            print(shown.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        print(f"\nwrote {args.out}/: {', '.join(written)}")
        if stale:
            print(f"removed {', '.join(stale)} of an earlier run with other settings")
    return 0


def run() -> None:
    """Console entry point."""
    run_main(main, "python -m sim.calibrate")


if __name__ == "__main__":
    run()
