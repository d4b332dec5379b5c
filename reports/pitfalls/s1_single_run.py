"""Section 1: one run is not evidence (the single-run delta under the null)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from sim.grid import cell_deltas, wilson

from .._report_page import Section
from . import figures as figs
from ._context import THRESHOLD_PP, pool_params
from ._registry import section


def _single_run_rows(ctx, scan):
    command = ctx.command("seed_gaussian", (), (1,), (0.0,), ("single_run",))
    generator = command.build_generator()
    row = ctx.run(command).iloc[0].to_dict()
    deltas = 100 * cell_deltas(generator, 1, 0.0, command.sims, command.seed)[:, 0]
    sd = 100 * generator.delta_sd()
    rows = [dict(row, source="seed_gaussian", sd_delta_pp=float(deltas.std(ddof=1)),
                 analytic_rate=float(2 * special.ndtr(-THRESHOLD_PP / sd)))]
    commands, pools = [command.shell()], {}
    for pool in (p for p in scan.pools if p.scenario == "S0p"):
        command = ctx.command("real_pool", pool_params(pool), (1,), None, ("single_run",))
        d = 100 * pool.pool_deltas()
        hits = int((np.abs(d) >= THRESHOLD_PP - 1e-10).sum())
        low, high = wilson(hits, d.size)
        rows.append(dict(ctx.run(command).iloc[0].to_dict(), source=f"{pool.dataset} S0p",
                         sd_delta_pp=float(d.std(ddof=1)), pool_seeds=d.size,
                         pool_hits=hits, pool_rate=hits / d.size, pool_rate_low=low,
                         pool_rate_high=high))
        commands.append(command.shell())
        pools[pool.dataset] = d
    return pd.DataFrame(rows), commands, deltas, sd, pools


@section(1,
         "A single run's difference is seed noise: a 1 pp 'gain' appears often when nothing "
         "changed.")
def section_single_run(ctx, scan) -> Section:
    """Section 1: the single-run delta under the null, synthetic and real."""
    frame, commands, deltas, sd, pools = _single_run_rows(ctx, scan)
    cite = ctx.save("section1.csv", frame)
    s = Section(1, "One run is not evidence", commands=commands, csvs=["section1.csv"])
    s.figure = figs.single_run_figure(deltas, sd, pools)
    i = cite.row(source="seed_gaussian")
    s.measured.append([
        "seed_gaussian (seed-to-seed sd 0.5 pp per arm, arm correlation 0.5), no true effect: the "
        "single-run Δ has sd ", cite.num(i, "sd_delta_pp", ".2f"), " pp and |Δ| ≥ 1 pp in ",
        cite.rate_ci(i), " of ", cite.num(i, "sims", "d"), " experiments (normal theory: ",
        cite.pct(i, "analytic_rate"), "%)."])
    for dataset in sorted(pools):
        j = cite.row(source=f"{dataset} S0p")
        s.measured.append([
            f"Real pool {dataset} S0p (same recipe, different seeds; no true effect): ",
            cite.num(j, "pool_hits", "d"), " of ", cite.num(j, "pool_seeds", "d"),
            " seeds have |Δ| ≥ 1 pp (", cite.pct(j, "pool_rate"), "% [",
            cite.pct(j, "pool_rate_low"), ", ", cite.pct(j, "pool_rate_high"),
            "]); per-seed sd ", cite.num(j, "sd_delta_pp", ".2f"), " pp. Resampling one "
            "seed per experiment as the command does: ", cite.rate_ci(j), " of ",
            cite.num(j, "sims", "d"), "."])
    if not pools:
        s.notes.append("No real S0p pool with enough seeds: only the synthetic half is shown.")
    s.notes.extend(n for n in scan.notes if "S0p" in n or "No real-run pool" in n)
    s.explanation = [
        "Two runs of the same recipe differ by seed noise alone, and a single difference "
        "has no way to measure that noise: with a per-seed delta sd of ",
        cite.num(i, "sd_delta_pp", ".2f"), " pp, a 1 pp 'gain' appears in ", cite.pct(i),
        "% of comparisons in which nothing changed. The rule 'significant if |Δ| ≥ 1 pp' "
        "therefore has a false-positive rate set by the noise level, not by a chosen alpha, "
        "and on noisier tasks it is far higher. Measure the seed-to-seed spread with several "
        "paired seeds and test the per-seed deltas (sections 3 and 4) before calling a "
        "result."]
    return s
