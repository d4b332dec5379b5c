"""Simulating the designs on common random numbers: every design sees the same experiments."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import protocols
from evalcal_core.validate import check_alpha, check_int, fail
from protocols import Protocol

from ..generators import Generator
from ..grid import cell_seed, chunk_size, wilson
from .boundaries import _t_path
from .designs import DESIGN_CLASSES, DESIGNS, Draws, get_design


@dataclass(frozen=True)
class SequentialResult:
    """Outcome of one design on a batch of simulated experiments.

    Attributes
    ----------
    design : str
    k_min, k_max : int
        Fewest and most seeds per arm.
    looks : tuple of int
        Seeds at which the design may stop.
    effect_pp : float
        True effect in percentage points (0 = the null).
    sims : int
    alpha : float
        Two-sided level.
    rejections : int
        Experiments that rejected (either sign).
    rate, rate_low, rate_high : float
        Rejection rate and its Wilson 95% interval; the false-positive rate at effect 0.
    power, power_low, power_high : float
        Rate of rejections with the sign of the effect, with its Wilson 95% interval; NaN at
        effect 0.
    wrong_sign : int
        Rejections with the wrong sign (0 at effect 0).
    mean_seeds : float
        Mean seeds per arm used (the look of the first rejection, else ``k_max``).
    seeds_used : ndarray of int, shape (sims,)
        Seeds used by each experiment.
    fixed_k_same_power : float
        Smallest k at which the fixed design, on the same draws, reaches ``power``; NaN at
        effect 0 or when no k up to ``k_max`` does.
    """

    design: str
    k_min: int
    k_max: int
    looks: tuple
    effect_pp: float
    sims: int
    alpha: float
    rejections: int
    rate: float
    rate_low: float
    rate_high: float
    power: float
    power_low: float
    power_high: float
    wrong_sign: int
    mean_seeds: float
    seeds_used: np.ndarray = field(repr=False)
    fixed_k_same_power: float = math.nan

    def seeds_distribution(self) -> pd.Series:
        """Share of experiments that stopped at each look (index: seeds)."""
        counts = np.array([(self.seeds_used == j).sum() for j in self.looks])
        return pd.Series(counts / self.sims, index=pd.Index(self.looks, name="seeds"))

    def row(self) -> dict:
        """The scalar fields plus seed-use quantiles, for ``sequential.csv``."""
        keys = ["design", "k_min", "k_max", "effect_pp", "sims", "alpha", "rejections", "rate",
                "rate_low", "rate_high", "power", "power_low", "power_high", "wrong_sign",
                "mean_seeds"]
        out = {key: getattr(self, key) for key in keys}
        out["median_seeds"] = float(np.median(self.seeds_used))
        out["p90_seeds"] = float(np.quantile(self.seeds_used, 0.9))
        out["stopped_early"] = float(np.mean(self.seeds_used < self.k_max))
        out["n_looks"] = len(self.looks)
        out["fixed_k_same_power"] = self.fixed_k_same_power
        return out


def _simulate_iv(generator, protocol, k_min, k_max, effect_pp, sims, alpha, looks, designs,
                 caller):
    if not isinstance(generator, Generator):
        raise fail("generator", "a generator from sim.generators.get", generator, caller)
    if isinstance(protocol, str):
        protocol = protocols.get(protocol)
    if not isinstance(protocol, Protocol):
        raise fail("protocol", "a protocol name or object", protocol, caller)
    k_min = check_int(k_min, "k_min", caller, low=2)
    k_max = check_int(k_max, "k_max", caller, low=2)
    if k_max < k_min:
        raise fail("k_max", f">= k_min ({k_min})", k_max, caller)
    ok = isinstance(effect_pp, (int, float, np.integer, np.floating)) \
        and not isinstance(effect_pp, bool) and np.isfinite(effect_pp)
    if not ok:
        raise fail("effect_pp", "a finite number (percentage points)", effect_pp, caller)
    generator.check_effect(effect_pp / 100.0)
    sims = check_int(sims, "sims", caller, low=1)
    alpha = check_alpha(alpha, "alpha", caller)
    why = generator.why_not(protocol, k_min)
    if why is not None:
        raise fail("protocol", f"a protocol that runs at k_min = {k_min} on generator "
                   f"{generator.name!r} ({protocol.name!r} {why})", protocol.name, caller)
    if looks is None:
        looks = tuple(range(k_min, k_max + 1))
    else:
        arr = np.asarray(looks)
        ok = arr.ndim == 1 and arr.size > 0 and np.issubdtype(arr.dtype, np.integer) \
            and np.all(np.diff(arr) > 0) and arr[0] >= k_min and arr[-1] == k_max
        if not ok:
            raise fail("looks", f"strictly increasing integers in [k_min, k_max] = [{k_min}, "
                       f"{k_max}] ending at k_max", looks, caller)
        looks = tuple(int(j) for j in arr)
    designs = tuple(designs)
    unknown = [d for d in designs if d not in DESIGN_CLASSES]
    if unknown or not designs:
        raise fail("designs", f"a non-empty subset of {tuple(DESIGN_CLASSES)}", designs, caller)
    return generator, protocol, k_min, k_max, float(effect_pp), sims, alpha, looks, designs


def _draw(generator, protocol, first, k_top, delta, sims, alpha, data_rng, protocol_rng):
    """Draw ``sims`` experiments of ``k_top`` seeds and evaluate ``protocol`` after each
    ``j = first..k_top`` seeds. A loop over chunks of experiments bounds memory; the loop
    over ``j`` is over looks, each a vectorized call."""
    chunk = chunk_size(generator, k_top)
    codes = generator.clusters()  # fixed by the generator: once, not per look
    parts = []
    for start in range(0, sims, chunk):
        base, variant = generator.draw(min(chunk, sims - start), k_top, delta, data_rng)
        sig, est = [], []
        for j in range(first, k_top + 1):
            r = protocol.evaluate(base[:, :j], variant[:, :j], alpha, rng=protocol_rng,
                                  clusters=codes)
            sig.append(r.significant)
            est.append(r.estimate)
        d = variant.mean(axis=-1) - base.mean(axis=-1)
        t, mean = _t_path(d)
        parts.append((np.stack(sig, axis=1), np.stack(est, axis=1), t, mean))
    sig, est, t, mean = (np.concatenate(x) for x in zip(*parts))
    return Draws(significant=sig, estimate=est, first=first, t=t, mean=mean)


def _first_stop(reject: np.ndarray) -> np.ndarray:
    """Index of the first True per row, -1 where none."""
    hit = reject.any(axis=1)
    return np.where(hit, reject.argmax(axis=1), -1)


def _fixed_power(draws: Draws, effect_pp: float, k_max: int) -> pd.Series:
    """Power (correct sign) of the fixed design at each k = first..k_max, same draws."""
    cols = slice(0, k_max - draws.first + 1)
    hits = draws.significant[:, cols] & (np.sign(draws.estimate[:, cols]) == np.sign(effect_pp))
    return pd.Series(hits.mean(axis=0), index=np.arange(draws.first, k_max + 1))


def _tally(design, draws, k_min, k_max, looks, effect_pp, sims, alpha, fixed_power):
    rule = get_design(design)
    design_looks = rule.looks(looks)
    reject, sign = rule.decisions(draws, np.asarray(design_looks), alpha)
    stop = _first_stop(reject)
    rejected = stop >= 0
    rows = np.arange(sims)
    stop_sign = np.where(rejected, sign[rows, np.maximum(stop, 0)], 0.0)
    seeds = np.where(rejected, np.asarray(design_looks)[np.maximum(stop, 0)], k_max)
    rejections = int(rejected.sum())
    low, high = wilson(rejections, sims)
    if effect_pp == 0:
        power = power_low = power_high = same = math.nan
        wrong = 0
    else:
        correct = int((rejected & (stop_sign == np.sign(effect_pp))).sum())
        wrong = rejections - correct
        power = correct / sims
        power_low, power_high = wilson(correct, sims)
        reached = fixed_power[fixed_power >= power]
        same = float(reached.index[0]) if len(reached) else math.nan
    return SequentialResult(
        design=design, k_min=k_min, k_max=k_max, looks=tuple(int(j) for j in design_looks),
        effect_pp=effect_pp, sims=sims, alpha=alpha, rejections=rejections,
        rate=rejections / sims, rate_low=low, rate_high=high, power=power,
        power_low=power_low, power_high=power_high, wrong_sign=wrong,
        mean_seeds=float(seeds.mean()), seeds_used=seeds.astype(int),
        fixed_k_same_power=same)


def simulate_sequential(generator, protocol, k_min: int, k_max: int, effect_pp: float,
                        sims: int, alpha: float = 0.05, *, rng=None, looks=None,
                        designs=DESIGNS) -> dict[str, SequentialResult]:
    """Several stopping designs on the same simulated experiments (common random numbers).

    Parameters
    ----------
    generator : sim.generators.Generator
        Draws ``(base, variant)`` of shape ``(sims, k, n)``.
    protocol : str or protocols.Protocol
        The test that ``peek`` and ``fixed`` apply; the group-sequential and e-process
        designs use the paired t statistic of the per-seed deltas (mean over questions).
    k_min, k_max : int
        Seeds per arm at the first look (>= 2) and at most.
    effect_pp : float
        True effect, variant minus baseline, in percentage points (0 = the null).
    sims : int
        Experiments.
    alpha : float, default 0.05
        Two-sided level of every design.
    rng : numpy.random.Generator, int or None
        Normalized with ``np.random.default_rng``; two child streams (data, protocol) are
        spawned from it, so the data do not depend on the protocol.
    looks : sequence of int or None
        Seeds at which the sequential designs look (default ``k_min..k_max``); must end at
        ``k_max``.
    designs : sequence of str
        Subset of :data:`DESIGNS`.

    Returns
    -------
    dict
        Design name -> :class:`SequentialResult`.
    """
    generator, protocol, k_min, k_max, effect_pp, sims, alpha, looks, designs = _simulate_iv(
        generator, protocol, k_min, k_max, effect_pp, sims, alpha, looks, designs,
        "simulate_sequential")
    data_rng, protocol_rng = np.random.default_rng(rng).spawn(2)
    first = max(protocol.min_k, 2)
    draws = _draw(generator, protocol, first, k_max, effect_pp / 100.0, sims, alpha, data_rng,
                  protocol_rng)
    fixed_power = _fixed_power(draws, effect_pp, k_max)
    return {d: _tally(d, draws, k_min, k_max, looks, effect_pp, sims, alpha, fixed_power)
            for d in designs}


def simulate_peeking(generator, protocol, k_min: int, k_max: int, effect_pp: float,
                     sims: int, alpha: float = 0.05, rng=None) -> SequentialResult:
    """Add a seed and test again until ``protocol`` rejects or ``k_max`` seeds are spent.

    The protocol runs at nominal ``alpha`` after every seed ``j = k_min..k_max`` and the
    experiment stops at the first rejection. Parameters are those of
    :func:`simulate_sequential`.

    Returns
    -------
    SequentialResult
        ``rate`` at effect 0 is the false-positive rate of the practice; ``seeds_used`` is
        the look of the first rejection, else ``k_max``.
    """
    return simulate_sequential(generator, protocol, k_min, k_max, effect_pp, sims, alpha,
                               rng=rng, designs=("peek",))["peek"]


def sequential_table(generator, protocol, k_min: int, k_max_values, effects_pp, sims: int,
                     alpha: float = 0.05, *, seed: int = 0, designs=DESIGNS) -> pd.DataFrame:
    """Every design at every ``k_max`` and effect, one row each (``sequential.csv``).

    Per effect the experiments are drawn once with ``max(k_max_values)`` seeds, from a stream
    derived from the seed and the cell's names (:func:`sim.grid.cell_seed`); each ``k_max``
    uses their first ``k_max`` seeds, so the curves over ``k_max`` share their draws.

    Returns
    -------
    pandas.DataFrame
        Columns of :meth:`SequentialResult.row` plus generator, generator_params, protocol.
    """
    ks = sorted({k for k in k_max_values})
    if not ks or not all(isinstance(k, (int, np.integer)) for k in ks) \
            or not isinstance(k_min, (int, np.integer)) or ks[0] < k_min:
        raise fail("k_max_values", f"non-empty integers >= k_min ({k_min!r})", k_max_values,
                   "sequential_table")
    effects_pp = list(effects_pp)
    if not effects_pp:
        raise fail("effects_pp", "non-empty", [], "sequential_table")
    seed = check_int(seed, "seed", "sequential_table", low=0)
    ks = [int(k) for k in ks]
    top = ks[-1]
    # Validate every argument before any work (the largest k_max covers the others).
    for effect in effects_pp:
        _simulate_iv(generator, protocol, k_min, top, effect, sims, alpha, None, designs,
                     "sequential_table")
    rows = []
    for effect in effects_pp:
        args = _simulate_iv(generator, protocol, k_min, top, effect, sims, alpha, None,
                            designs, "sequential_table")
        generator, protocol, _, _, effect, sims, alpha, _, designs = args
        names = (generator.name, generator.describe(), top, float(effect))
        data_rng = np.random.default_rng(cell_seed(seed, "sequential-data", *names))
        protocol_rng = np.random.default_rng(cell_seed(seed, "sequential-protocol",
                                                       protocol.name, *names))
        first = max(protocol.min_k, 2)
        draws = _draw(generator, protocol, first, top, effect / 100.0, sims, alpha, data_rng,
                      protocol_rng)
        for k_max in ks:
            looks = tuple(range(k_min, k_max + 1))
            fixed_power = _fixed_power(draws, effect, k_max)
            for design in designs:
                result = _tally(design, draws, k_min, k_max, looks, effect, sims, alpha,
                                fixed_power)
                rows.append({"generator": generator.name,
                             "generator_params": generator.describe(),
                             "protocol": protocol.name, **result.row()})
    return pd.DataFrame(rows)
