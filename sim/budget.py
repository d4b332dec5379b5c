"""The seed budget: which protocols to trust, and how many seeds each needs.

The validity rule
-----------------
A protocol is *recommended* for a generator setting only if

1. it declares no pitfall (``protocols.protocol_class(name).pitfall`` is empty);
2. its false-positive rate was measured (effect-0 cells of the setting named in the rows'
   ``null_params``: the same setting, or for a real pool the null pool of its dataset);
3. at **every** k measured there, the rate's upper bound is <= alpha + tolerance, where the
   upper bound is the 95% Wilson bound (``rate_high``), or for a real pool the
   pool-sampling bound ``pool_high`` where there is one (:mod:`sim.grid.pool`). The
   tolerance defaults to alpha / 2 (``--fpr-tolerance``): with 2,000 simulations a protocol
   whose true rate is exactly alpha passes at one k with probability >= 0.995, and one whose
   true rate is 1.5 alpha passes with probability ~0.5 at best;
4. the false-positive rate was measured at the k it is recommended with.

A protocol whose lower bound exceeds alpha at some k is ``invalid`` (the lower bound at
Bonferroni level 0.05 / (number of k measured), so that a protocol whose rate is exactly
alpha is not called invalid by the luck of one k among many); one whose upper bound only
fails to get below alpha + tolerance is *not shown* valid (more ``--sims`` may settle it).
Neither is recommended, and neither gets a k.

The k search
------------
For every recommended protocol and effect, the smallest k with power >= the target is
searched beyond the requested range (:func:`sim.solve.solve` over :mod:`sim.search`:
doubling, then bisection, then a walk
to the k range over which the power's Wilson interval straddles the target), up to
``--k-max`` or the generator's cap. Each k it measures gets its effect-0 cell as well, so the
rule above covers it. Cells are cached like any other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
from scipy import stats

import protocols
from evalcal_core.params import decode

from . import generators
from .grid import CellRequest, wilson
from .search import Point, crossing
from .solve import Curve, solve

#: power levels the seed budget always reports (besides ``--target-power``)
POWER_TARGETS = (0.8, 0.9)
#: upper end of the k search unless ``--k-max`` says otherwise
DEFAULT_K_MAX = 50
#: rounds of the search before giving up (each round measures one more k per curve)
MAX_ROUNDS = 100


def default_tolerance(alpha: float) -> float:
    """How far above alpha a false-positive rate's upper bound may reach: alpha / 2."""
    return alpha / 2


@dataclass(frozen=True)
class Verdict:
    """Whether a protocol is recommended on a setting, and why (fractions)."""

    recommended: bool
    why: str
    max_fpr: float
    fpr_upper: float
    null_ks: frozenset


def _upper(rows: pd.DataFrame) -> pd.Series:
    """95% upper bounds: ``pool_high`` where there is one, else the Wilson ``rate_high``."""
    pool = rows["pool_high"] if "pool_high" in rows else pd.Series(math.nan, rows.index)
    return pool.where(pool.notna(), rows["rate_high"])


def _lower(rows: pd.DataFrame, level: float) -> pd.Series:
    """Lower bounds at two-sided ``level`` (Wilson, widened by ``pool_sd`` where known)."""
    out = []
    z = stats.norm.ppf(1 - level / 2)
    for r in rows.itertuples():
        low, _ = wilson(int(r.rejections), int(r.sims), alpha=level)
        sd = getattr(r, "pool_sd", math.nan)
        if sd == sd:  # not NaN
            low = max(0.0, r.rate - math.hypot(r.rate - low, z * sd))
        out.append(low)
    return pd.Series(out, index=rows.index, dtype=float)


def verdict(calibration: pd.DataFrame, generator: str, null_params: str, protocol: str,
            alpha: float, tolerance: float) -> Verdict:
    """Apply the validity rule (module docstring) to one protocol on one setting."""
    pitfall = protocols.protocol_class(protocol).pitfall
    if pitfall:
        return Verdict(False, f"declared pitfall: {pitfall}", math.nan, math.nan, frozenset())
    null = calibration[(calibration["generator"] == generator)
                       & (calibration["generator_params"] == null_params)
                       & (calibration["protocol"] == protocol)
                       & (calibration["effect_pp"] == 0)]
    if null.empty:
        return Verdict(False, "validity unknown: no effect-0 cells of its null setting "
                       f"({null_params})", math.nan, math.nan, frozenset())
    # "Invalid" is a claim about some k among many: Bonferroni over the k measured, so a
    # protocol whose rate is exactly alpha is not called invalid by the luck of one k.
    level = 0.05 / len(null)
    upper, lower = _upper(null), _lower(null, level)
    ks = frozenset(int(k) for k in null["k"])
    max_fpr = float(null["rate"].max())
    worst = null.loc[upper.idxmax()]
    fpr_upper = float(upper.max())
    limit = alpha + tolerance
    if (lower > alpha).any():
        bad = null.loc[(lower - alpha).idxmax()]
        return Verdict(False, f"invalid: false-positive rate {_pct(bad['rate'])} at k = "
                       f"{int(bad['k'])}, above alpha = {_pct(alpha)} (lower bound "
                       f"{_pct(lower.max())} at Bonferroni level {level:.2g})", max_fpr,
                       fpr_upper, ks)
    if fpr_upper > limit:
        return Verdict(False, f"not shown valid: false-positive rate {_pct(worst['rate'])} at "
                       f"k = {int(worst['k'])} has upper bound {_pct(fpr_upper)} > alpha + "
                       f"tolerance = {_pct(limit)} (more --sims may settle it)",
                       max_fpr, fpr_upper, ks)
    return Verdict(True, f"false-positive rate <= {_pct(limit)} at every k measured "
                   f"({len(ks)} between {min(ks)} and {max(ks)}; largest upper bound "
                   f"{_pct(fpr_upper)} at k = {int(worst['k'])})", max_fpr, fpr_upper, ks)


def _pct(x: float) -> str:
    return f"{100 * float(x):.1f}%"


def _label(target: float) -> str:
    return f"k_power_{round(100 * target):d}"


def _points(rows: pd.DataFrame) -> dict[int, Point]:
    return {int(r.k): Point(float(r.rate), float(r.rate_low), float(r.rate_high))
            for r in rows.itertuples()}


def _double(k: int) -> int:
    return 2 * k


def _k_text(c, points, floor, cap, null_ks, *, within: bool) -> str:
    """A k answer in words or as a number (see :func:`seed_budget`)."""
    if c.at is None:
        if within:
            return f"not reached by k = {cap}"
        return f"not reached within the k tried (up to {c.top})"
    if c.at > floor and c.at - 1 not in points:
        return f"<= {c.at} (smaller k not tried)"
    if c.at not in null_ks:
        return f"{c.at} (false-positive rate not measured at this k)"
    return str(c.at)


def seed_budget(calibration: pd.DataFrame, *, target_power: float = 0.8, caps=None,
                tolerance: float | None = None) -> pd.DataFrame:
    """One row per (setting, protocol, nonzero effect): recommended or not, why, and k.

    A pure function of the calibration frame: it reads the cells there (run
    :func:`search_budget` first to add the cells the k search needs).

    Parameters
    ----------
    calibration : pandas.DataFrame
        ``calibrate`` rows (with ``null_params``; ``pool_low``/``pool_high`` optional).
    target_power : float
        Power the ``k_needed`` columns answer for (fraction).
    caps : dict or int or None
        Largest k of the search per ``generator_params`` (or for all): "not reached by
        k = CAP" once the cap is measured; without it "not reached within the k tried".
    tolerance : float or None
        Of the validity rule; default alpha / 2.

    Returns
    -------
    pandas.DataFrame
        Columns ``generator, generator_params, protocol, effect_pp, null_params,
        recommended`` (yes/no), ``why, max_fpr, fpr_upper, target_power, k_needed`` (a number
        or words), ``k_needed_low, k_needed_high`` (the k range over which the power's
        Wilson interval straddles the target; NaN when not known), and ``k_power_80``,
        ``k_power_90`` (numbers or words).
    """
    rows = []
    targets = sorted({*POWER_TARGETS, float(target_power)})
    keys = ["generator", "generator_params", "protocol"]
    for (generator, params, protocol), part in calibration.groupby(keys, sort=True):
        alpha = float(part["alpha"].iloc[0])
        tol = default_tolerance(alpha) if tolerance is None else tolerance
        null_params = part["null_params"].iloc[0] if "null_params" in part else params
        v = verdict(calibration, generator, null_params, protocol, alpha, tol)
        cap = caps.get(params) if isinstance(caps, dict) else caps
        floor = protocols.protocol_class(protocol).min_k
        for effect, cells in part[part["effect_pp"] != 0].groupby("effect_pp", sort=True):
            points = _points(cells)
            row = {"generator": generator, "generator_params": params, "protocol": protocol,
                   "effect_pp": effect, "null_params": null_params,
                   "recommended": "yes" if v.recommended else "no", "why": v.why,
                   "max_fpr": v.max_fpr, "fpr_upper": v.fpr_upper,
                   "target_power": float(target_power)}
            for target in targets:
                c = crossing(points, target, floor, cap or max(points), _double)
                within = cap is not None and c.complete
                text = _k_text(c, points, floor, cap, v.null_ks, within=within)
                if not v.recommended:
                    text = "not recommended"
                if target == float(target_power):
                    row["k_needed"] = text
                    ok = v.recommended and c.at is not None
                    row["k_needed_low"] = c.low if ok and c.low is not None else math.nan
                    row["k_needed_high"] = c.high if ok and c.high is not None else math.nan
                if target in POWER_TARGETS:
                    row[_label(target)] = text
            if v.recommended and "not measured" in row["k_needed"]:
                row["recommended"] = "no"
                row["why"] = "false-positive rate not measured at the k it would need"
            rows.append(row)
    columns = ["generator", "generator_params", "protocol", "effect_pp", "null_params",
               "recommended", "why", "max_fpr", "fpr_upper", "target_power", "k_needed",
               "k_needed_low", "k_needed_high"] + [_label(t) for t in POWER_TARGETS]
    return pd.DataFrame(rows, columns=columns)


def null_generator(generator, by_setting: dict):
    """The generator whose effect-0 cells validate ``generator``'s protocols (``None``: no
    such setting exists)."""
    setting = generator.null_setting()
    if setting is None:
        return None
    if setting == generator.describe():
        return generator
    if setting in by_setting:
        return by_setting[setting]
    return generators.get(generator.name, **decode(setting))


def search_budget(calibration: pd.DataFrame, chosen, *, caps: dict, target_power: float,
                  tolerance: float | None, run) -> pd.DataFrame:
    """Add the cells the k search needs to ``calibration`` (see the module docstring).

    Parameters
    ----------
    calibration : pandas.DataFrame
        The requested grid, all generators together.
    chosen : list of Generator
        The generators of the frame.
    caps : dict
        ``generator_params`` -> largest k to search.
    target_power : float
    tolerance : float or None
    run : callable
        ``run(requests) -> frame`` computing :class:`sim.grid.CellRequest` cells (cached),
        e.g. :func:`sim.grid.run_cells` with the run's options.

    Returns
    -------
    pandas.DataFrame
        ``calibration`` plus the searched cells, marked ``searched = True``.
    """
    frame = calibration.assign(searched=False)
    by_setting = {g.describe(): g for g in chosen}
    targets = sorted({*POWER_TARGETS, float(target_power)})
    asked = set()  # null cells asked for once (a guard: each is computed once)

    def groups(current):
        """(generator, protocol, its rows, tolerance) of every honest protocol searched."""
        keys = ["generator", "generator_params", "protocol"]
        for (_, params, protocol), part in current.groupby(keys, sort=True):
            if params not in by_setting or protocols.protocol_class(protocol).pitfall:
                continue  # a null pool measured for another setting, or a pitfall
            alpha = float(part["alpha"].iloc[0])
            yield by_setting[params], protocol, part, (
                default_tolerance(alpha) if tolerance is None else tolerance)

    def curves(current):
        # Only a recommended protocol is searched (the verdict may change as null cells
        # are added).
        for g, protocol, part, tol in groups(current):
            if not verdict(current, g.name, part["null_params"].iloc[0], protocol,
                           float(part["alpha"].iloc[0]), tol).recommended:
                continue
            floor = protocols.protocol_class(protocol).min_k
            for effect in sorted(set(part.loc[part["effect_pp"] != 0, "effect_pp"])):
                for target in targets:
                    yield Curve(g, protocol, part["protocol_params"].iloc[0], target,
                                caps[g.describe()], effect_pp=float(effect), floor=floor)

    def null_cells(current, requests):
        # Every k measured or asked for gets its effect-0 cell, searched or not (a real
        # pool's null pool may not have been calibrated at all).
        out = set()
        for g, protocol, part, _ in groups(current):
            null_g = null_generator(g, by_setting)
            if null_g is None:
                continue
            null_params = part["null_params"].iloc[0]
            null_rows = current[(current["generator_params"] == null_params)
                                & (current["protocol"] == protocol)
                                & (current["effect_pp"] == 0)]
            wanted = set(int(k) for k in part.loc[part["effect_pp"] != 0, "k"])
            wanted |= {r.k for r in requests if r.generator is g and r.protocol == protocol}
            pparams = part["protocol_params"].iloc[0]
            for k in wanted - set(int(k) for k in null_rows["k"]):
                if null_g.max_k is not None and k > null_g.max_k:
                    continue  # the null pool is smaller: that k stays unvalidated
                request = CellRequest(null_g, protocol, pparams, int(k), 0.0)
                if request not in asked:
                    asked.add(request)
                    out.add(request)
        return out

    found = solve(curves, frame, run=run, also=null_cells, max_rounds=MAX_ROUNDS)
    return pd.concat([frame, found], ignore_index=True)
