"""How much a real pool's rates owe to *which* seeds the pool happens to hold: half-samples.

This is ``--pool-method halves`` (about 5.5x the cost of the real grid); the default
estimates the same error from the seeds each experiment of the cell drew, at no extra
cells (:mod:`sim.grid.pool_seeds`).

A ``real_pool`` experiment draws k of the pool's N recorded seeds. The Wilson interval of a
cell covers the Monte Carlo error of those draws only: the rate itself is the rate *of this
pool*, and a different set of N seeds would give another one. This module adds a second
interval for that pool-sampling error.

Method: half-sampling (the delete-d jackknife with d = N - m, m = floor(N / 2); Shao & Wu
1989, *Ann. Statist.* 17, 1176-1197). Each replicate is a random subset of m distinct pool
seeds; the cell is re-run on it (experiments draw k of those m seeds) with fewer
simulations. The pool rate is a U-statistic of the pool (the mean over k-subsets), the
replicate's rate is unbiased for it, and

    Var_pool  ~=  (m / d) * [ var_s(rate_s) - mean_s(rate_s (1 - rate_s)) / (sims_s - 1) ]

(the replicate spread less its own binomial Monte Carlo part). Why not the ordinary
bootstrap: a resample with replacement holds duplicated seeds, and an experiment that draws
the same seed twice pairs identical runs, which shrinks the seed-to-seed spread and biases a
rate. The delete-d jackknife needs no duplicates and, with d proportional to N, stays
consistent for non-smooth statistics such as a rejection rate, where the delete-1
jackknife is not. For a rejection indicator the half-sample spread also carries the
U-statistic's higher-order (interaction) terms, which weigh more in a half-pool, so the
estimate errs on the wide side: on 30-seed pools of heavy-tailed (t3) deltas the estimated
sd of paired_t's false-positive rate was 2.1x the sd across 60 independent pools at k = 5
and 1.6x at k = 10 (``tests/sim/test_advice.py``). k > m has no replicate: the interval is
NaN.

Columns added to a calibration frame: ``pool_sd`` (the pool-sampling standard deviation of
the rate, fraction) and ``pool_low``/``pool_high``: the Wilson interval widened by it, each
side's Monte Carlo half-width and ``z * pool_sd`` added in quadrature. Synthetic generators
(fresh seeds every experiment) get NaN.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from evalcal_core.options import Execution
from evalcal_core.validate import check_int

from ..generators import PoolView, pool_rows
from .execute import CellRequest, execute
from .seeding import cell_seed

#: half-sample replicates by default (``--pool-reps``)
DEFAULT_REPS = 30
#: fewest simulations of one replicate's cell
MIN_REP_SIMS = 100


def replicate_sims(sims: int) -> int:
    """Simulations per replicate cell: a tenth of the main cell's, at least 100."""
    return max(MIN_REP_SIMS, int(sims) // 10)


@dataclass(frozen=True)
class HalfPool(PoolView):
    """Experiments drawn from a fixed subset of a real pool's seeds (one replicate).

    Parameters
    ----------
    parent : Generator
        The real pool (``from_pool``).
    seeds : tuple of int
        Row indices of the pool's seeds in this replicate (m distinct).
    replicate : int
        Replicate number (names the cell and its random streams).
    """

    seeds: tuple = ()
    replicate: int = 0

    name = "real_pool_half"

    @property
    def max_k(self) -> int:  # type: ignore[override]
        return len(self.seeds)

    def describe(self) -> str:
        return (f"{self.parent.describe()};half_sample={self.replicate};"
                f"seeds={'-'.join(map(str, self.seeds))}")

    def fixed_effect(self) -> float:
        return self.parent.fixed_effect()

    def null_setting(self) -> str:
        return self.describe()

    def check_effect(self, delta: float) -> None:
        self.parent.check_effect(delta)

    def _draw(self, sims, k, delta, rng):
        base, variant = self.parent.pool()
        subset = np.asarray(self.seeds)
        # k distinct seeds of the replicate per experiment
        rows = subset[pool_rows(rng, sims, subset.size, k)]
        return base[rows], variant[rows]


def half_pools(pool, reps: int, seed: int) -> list[HalfPool]:
    """``reps`` random half-samples (m = floor(N / 2) distinct seeds) of ``pool``.

    The subsets come from a stream named by the pool's setting and the root seed, so they do
    not depend on which cells are computed.
    """
    reps = check_int(reps, "--pool-reps", low=0)
    size = pool.pool_size
    m = size // 2
    rng = np.random.default_rng(cell_seed(seed, "pool_half_samples", pool.describe()))
    out = []
    for r in range(reps):
        chosen = np.sort(rng.choice(size, m, replace=False))
        out.append(HalfPool(parent=pool, seeds=tuple(int(i) for i in chosen), replicate=r))
    return out


@dataclass(frozen=True)
class PoolInterval:
    """Pool-sampling error of one rate (fractions)."""

    sd: float
    low: float
    high: float


def pool_interval(rate, rate_low, rate_high, rep_rates, rep_sims, pool_size,
                  alpha=0.05) -> PoolInterval:
    """Combine a cell's Wilson interval with its half-sample replicates' spread.

    Parameters
    ----------
    rate, rate_low, rate_high : float
        The cell's rate on the whole pool and its Wilson interval.
    rep_rates : array_like
        Rates of the same cell on half-sample replicates (at least 2).
    rep_sims : int
        Simulations of each replicate cell.
    pool_size : int
        N, the pool's seeds; replicates hold m = floor(N / 2).

    Returns
    -------
    PoolInterval
        ``sd`` from the delete-d jackknife formula (module docstring); the interval is the
        Wilson one widened in quadrature by ``z * sd`` on each side, clipped to [0, 1].
    """
    r = np.asarray(rep_rates, dtype=float)
    if r.size < 2:
        return PoolInterval(math.nan, math.nan, math.nan)
    m = pool_size // 2
    d = pool_size - m
    mc = float(np.mean(r * (1 - r))) / (rep_sims - 1)
    var = (m / d) * max(0.0, float(r.var(ddof=1)) - mc)
    sd = math.sqrt(var)
    z = stats.norm.ppf(1 - alpha / 2)
    low = rate - math.hypot(rate - rate_low, z * sd)
    high = rate + math.hypot(rate_high - rate, z * sd)
    return PoolInterval(sd, max(0.0, low), min(1.0, high))


def add_pool_columns(frame: pd.DataFrame, requests, reps: int,
                     run: Execution) -> pd.DataFrame:
    """``frame`` with ``pool_sd``, ``pool_low``, ``pool_high`` (NaN where not a real pool).

    ``requests`` are the frame's cells (:class:`sim.grid.CellRequest`); for each
    real-pool cell with k <= N/2 the same protocol is run on ``reps`` half-sample replicates
    with :func:`replicate_sims` simulations (cached like any cell under ``out``).
    """
    frame = frame.assign(pool_sd=math.nan, pool_low=math.nan, pool_high=math.nan)
    pools = {r.generator.describe(): r.generator for r in requests
             if r.generator.from_pool}
    if not reps or not pools or frame.empty:
        return frame
    halves = {key: half_pools(g, reps, run.seed) for key, g in pools.items()}
    rep_sims = replicate_sims(run.sims)
    extra = [CellRequest(h, r.protocol, r.protocol_params, r.k, r.effect_pp)
             for r in requests if r.generator.describe() in halves
             for h in halves[r.generator.describe()] if r.k <= h.max_k]
    if not extra:
        return frame
    rows = execute(extra, dataclasses.replace(run, sims=rep_sims), desc="pool half-samples")
    rates = {}
    for row in rows:
        parent = row.generator_params.split(";half_sample=")[0]
        key = (parent, row.protocol, row.protocol_params, row.k, row.effect_pp)
        rates.setdefault(key, []).append(row.rate)
    for i, row in frame.iterrows():
        key = (row["generator_params"], row["protocol"], row["protocol_params"], row["k"],
               row["effect_pp"])
        if key not in rates:
            continue
        size = pools[row["generator_params"]].pool_size
        interval = pool_interval(row["rate"], row["rate_low"], row["rate_high"], rates[key],
                                 rep_sims, size)
        frame.loc[i, ["pool_sd", "pool_low", "pool_high"]] = (interval.sd, interval.low,
                                                              interval.high)
    return frame
