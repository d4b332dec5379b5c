"""How far a correct model's fit check would land from its pool: a parametric bootstrap.

``--check-fit`` fits ``seed_question`` to a real pool of N seeds and compares the fitted
model's rejection rates (fresh seeds) with the pool's (k of the N seeds per experiment).
Even a correct model would not match: the pool's rates carry the luck of *which* N seeds it
holds, the fit is made on those same seeds (for an effect pool, at the pool's own mean
delta), and a rate near 0 or 1 is skewed. Against Monte Carlo error alone every pool
"misses"; against the half-sample pool sd (:mod:`sim.grid.pool`) a pool whose every
half-sample rejects always (or never) has sd 0.

This module measures the yardstick directly, by repeating the whole check in a world where
the fitted model is true (a parametric bootstrap, Efron & Tibshirani 1993, ch. 6). For each
replicate r:

1. draw a pool of N paired seeds on one benchmark from the fitted model, at the real pool's
   effect (:class:`ModelPool`);
2. score the protocols on it exactly as on the real pool (k of its N seeds per experiment);
3. fit ``seed_question`` to it, as to the real pool, and score the protocols on that fit
   (fresh seeds) at the replicate pool's own effect: 0 for a null pool, else its mean delta;
4. ``diff_r`` = step 3's rate - step 2's rate, per (protocol, k).

The real ``diff`` is then read against the replicates' mean ``null_mean`` and their spread
``null_sd`` (the replicate variance less its Monte Carlo part, two binomial rates of
``sims`` experiments each). Replicates are cells like any other: cached and resumable, and a
result depends only on the root seed.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalcal_core.options import Execution
from evalcal_core.validate import InvalidParameterError, check_int

from .generators import PoolView, pool_rows
from .generators import generator_class as _generator_class
from .generators import get as _get_generator
from .grid import (
    DEFAULT_REPLICATES,
    CellRequest,
    applicable_protocols,
    cell_seed,
    run_cells,
)


@dataclass(frozen=True)
class ModelPool(PoolView):
    """Experiments of k seeds drawn without replacement from one simulated pool.

    Parameters
    ----------
    parent : Generator
        The model that draws the pool (a fitted ``seed_question``).
    size : int
        Seeds in the pool (N).
    stream : int
        Entropy of the pool's random stream (names the pool).
    effect : float
        True effect the pool is drawn at (fraction); the only effect it can simulate.
    """

    size: int = 30
    stream: int = 0
    effect: float = 0.0

    name = "model_pool"

    @property
    def max_k(self) -> int:  # type: ignore[override]
        return self.size

    def describe(self) -> str:
        return (f"{self.parent.describe()};model_pool={self.stream};size={self.size};"
                f"effect={self.effect!r}")

    def fixed_effect(self) -> float:
        return self.effect

    def check_effect(self, delta: float) -> None:
        if abs(delta - self.effect) > 1e-12:
            raise InvalidParameterError(f"The 'effect' of a model pool is fixed at "
                                        f"{100 * self.effect:+.4f} pp; got {100 * delta:+.4f} pp")

    def pool(self) -> tuple[np.ndarray, np.ndarray]:
        """The pool's ``(base, variant)`` scores, shape ``(size, n)`` (drawn once per process)."""
        return _draw_pool(self.parent, self.size, self.stream, self.effect)

    def _draw(self, sims, k, delta, rng):
        base, variant = self.pool()
        order = pool_rows(rng, sims, self.size, k)
        return base[order], variant[order]


@functools.lru_cache(maxsize=4)
def _draw_pool(parent, size, stream, effect):
    """One experiment of ``size`` seeds from ``parent`` (one benchmark, as a real pool holds),
    read-only; cached, since every cell of the pool reads it."""
    base, variant = parent.draw(1, size, effect, np.random.default_rng(stream))
    base, variant = base[0], variant[0]
    base.flags.writeable = False
    variant.flags.writeable = False
    return base, variant


def fitted_generator(base, variant):
    """``seed_question`` fitted by the method of moments to a pool's ``(k, n)`` 0/1 scores."""
    fit = _generator_class("seed_question").fit(base, variant)
    return _get_generator("seed_question", **{**fit.params(), "n_questions": int(base.shape[1])})


def null_diffs(fitted, effect, null, pool_size, ks, protocol_names, reps, *, seed, sims,
               protocol_params=None, replicates=None, **common) -> pd.DataFrame:
    """The fit check's ``diff`` in a world where ``fitted`` is true, per (protocol, k).

    Parameters
    ----------
    fitted : Generator
        The model fitted to the real pool.
    effect : float
        The real pool's effect (fraction): the replicate pools are drawn at it.
    null : bool
        The pool is a declared null: the replicates' fits are simulated at effect 0, as the
        real one is; otherwise at each replicate pool's mean delta.
    pool_size : int
        Seeds per pool (N).
    ks : sequence of int
    protocol_names : list of str
    reps : int
        Replicates (0 gives an empty frame).
    seed, sims : int
        Root seed and experiments per replicate cell.
    protocol_params, replicates, **common
        As :func:`sim.grid.calibrate` (the runner's options).

    Returns
    -------
    pandas.DataFrame
        ``protocol``, ``k``, ``null_reps``, ``null_mean``, ``null_sd`` and
        ``null_mean_se`` (fractions): the replicates' mean diff, the sd of a correct
        model's diff (Monte Carlo variance removed, floored at 0), and the standard error
        of ``null_mean`` (the replicates' whole spread over sqrt(reps)).
    """
    reps = check_int(reps, "--pool-reps", low=0)
    columns = ["protocol", "k", "null_reps", "null_mean", "null_sd", "null_mean_se"]
    if reps == 0:
        return pd.DataFrame({"protocol": pd.Series(dtype=object), "k": pd.Series(dtype=int),
                             **{c: pd.Series(dtype=float) for c in columns[2:]}})
    pools, fits = [], []
    for r in range(reps):
        stream = int(cell_seed(seed, "fit_check_pool", fitted.describe(), pool_size,
                               float(effect), r).generate_state(1)[0])
        pool = ModelPool(parent=fitted, size=pool_size, stream=stream, effect=float(effect))
        base, variant = pool.pool()
        refit = fitted_generator(base, variant)
        refit_effect = 0.0 if null else float(np.mean(variant.mean(axis=1)
                                                       - base.mean(axis=1)))
        pools.append(pool)
        fits.append((refit, refit_effect))

    def requests(generator, effect_fraction):
        chosen = applicable_protocols(generator, ks, protocol_names, protocol_params,
                                      replicates or DEFAULT_REPLICATES)
        return [CellRequest(generator, name, params, int(k), 100.0 * effect_fraction)
                for k in ks for name, (protocol, params) in chosen.items()
                if generator.why_not(protocol, k) is None]

    wanted = [q for p in pools for q in requests(p, p.effect)]
    wanted += [q for g, e in fits for q in requests(g, e)]
    frame = run_cells(wanted, Execution(sims=sims, seed=seed, **common), pool_reps=0,
                      desc="fit-check replicates")
    rate = {(row.generator_params, row.protocol, row.k): (row.rate, row.sims)
            for row in frame.itertuples()}
    rows = []
    for name in protocol_names:
        for k in ks:
            diffs, mc = [], []
            for pool, (refit, _) in zip(pools, fits):
                a = rate.get((pool.describe(), name, k))
                b = rate.get((refit.describe(), name, k))
                if a is None or b is None:
                    continue
                diffs.append(b[0] - a[0])
                mc.append(a[0] * (1 - a[0]) / max(a[1] - 1, 1)
                          + b[0] * (1 - b[0]) / max(b[1] - 1, 1))
            if len(diffs) < 2:
                continue
            spread = float(np.var(diffs, ddof=1))
            rows.append([name, int(k), len(diffs), float(np.mean(diffs)),
                         math.sqrt(max(spread - float(np.mean(mc)), 0.0)),
                         math.sqrt(spread / len(diffs))])
    return pd.DataFrame(rows, columns=columns)
