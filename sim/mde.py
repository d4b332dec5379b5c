"""Minimum detectable effect: the smallest true effect a protocol detects at k seeds.

"How small a gain can 5 seeds see?" For every recommended protocol (the rule of
:mod:`sim.budget`) and every requested k, the effect is searched on a geometric grid
(``effect_pp = 0.01 * 2 ** (j / 8)``, about 9% steps, rounded to 3 significant digits), with
the stateless search of :mod:`sim.search`: start near 1 pp, double until power >= target,
bisect to neighbouring grid points, then walk to the effects whose Wilson intervals exclude
the target. Only generators whose effect is continuous (``generator.fixed_effect() is
None``) can be searched. Cells are cached like any other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

import protocols

from .budget import default_tolerance, verdict
from .grid import CellRequest
from .search import Point, crossing, next_index

#: grid points per doubling of the effect
STEPS_PER_DOUBLING = 8
#: smallest grid effect (pp)
GRID_START_PP = 0.01
#: largest effect searched (pp)
GRID_MAX_PP = 50.0
#: where the search starts (pp)
START_PP = 1.0


def grid_effect(j: int) -> float:
    """Effect (pp) of grid index ``j``."""
    x = GRID_START_PP * 2 ** (j / STEPS_PER_DOUBLING)
    return float(f"{x:.3g}")


def grid_cap(generator) -> int:
    """Largest grid index whose effect the generator can simulate (and <= GRID_MAX_PP)."""
    top = int(STEPS_PER_DOUBLING * math.log2(GRID_MAX_PP / GRID_START_PP))
    for j in range(top, -1, -1):
        try:
            generator.check_effect(grid_effect(j) / 100)
        except ValueError:
            continue
        return j
    raise ValueError(f"generator {generator.name} cannot simulate any positive effect "
                     f"on the grid from {GRID_START_PP} pp")


def check_searchable(generator) -> None:
    """``ValueError`` unless ``generator`` simulates any effect (``--mde`` needs that)."""
    fixed = generator.fixed_effect()
    if fixed is not None:
        raise ValueError(f"The '--mde' option needs a generator whose effect can be varied; "
                         f"{generator.name} ({generator.describe()}) fixes it at "
                         f"{100 * fixed:+.4g} pp. Got --mde with it instead.")


def _step(j: int) -> int:
    return j + STEPS_PER_DOUBLING


@dataclass(frozen=True)
class _Curve:
    generator: object
    protocol: str
    protocol_params: str
    k: int


def _points(frame, setting, protocol, k) -> dict[int, Point]:
    rows = frame[(frame["generator_params"] == setting) & (frame["protocol"] == protocol)
                 & (frame["k"] == k) & (frame["effect_pp"] > 0)]
    index = {grid_effect(j): j for j in range(0, 200)}
    return {index[e]: Point(float(r.rate), float(r.rate_low), float(r.rate_high))
            for e, r in zip(rows["effect_pp"], rows.itertuples()) if e in index}


def search_mde(calibration: pd.DataFrame, chosen, ks, *, target_power: float,
               tolerance: float | None, run) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Search the minimum detectable effect; return ``(mde table, new cells)``.

    Parameters
    ----------
    calibration : pandas.DataFrame
        Cells so far (their effect-0 rows decide which protocols are recommended).
    chosen : list of Generator
        Generators with a continuous effect.
    ks : list of int
        The k of each row of the table.
    target_power : float
    tolerance : float or None
        Of the validity rule (default alpha / 2).
    run : callable
        ``run(requests) -> frame`` (:func:`sim.grid.run_cells`).

    Returns
    -------
    mde : pandas.DataFrame
        ``generator, generator_params, protocol, k, target_power, mde_pp`` (NaN when not
        found), ``mde_low_pp, mde_high_pp`` (the largest grid effect whose power's Wilson
        interval lies below the target and the smallest whose interval lies above: the
        MDE is between them), ``note`` (words: why not recommended, or not reached).
    cells : pandas.DataFrame
        The cells measured by the search (rows of a calibration frame).
    """
    curves, notes = [], {}
    for g in chosen:
        check_searchable(g)
        part = calibration[calibration["generator_params"] == g.describe()]
        for protocol, rows in part.groupby("protocol", sort=True):
            alpha = float(rows["alpha"].iloc[0])
            tol = default_tolerance(alpha) if tolerance is None else tolerance
            v = verdict(calibration, g.name, rows["null_params"].iloc[0], protocol, alpha, tol)
            floor = protocols.protocol_class(protocol).min_k
            for k in ks:
                if k < floor:
                    continue
                curve = _Curve(g, protocol, rows["protocol_params"].iloc[0], int(k))
                curves.append(curve)
                if not v.recommended:
                    notes[curve] = "not recommended: " + v.why
                elif k not in v.null_ks:
                    notes[curve] = "not recommended: false-positive rate not measured at this k"
    caps = {g.describe(): grid_cap(g) for g in chosen}
    start = int(round(STEPS_PER_DOUBLING * math.log2(START_PP / GRID_START_PP)))
    found = calibration.iloc[:0]
    for _ in range(100):
        frame = pd.concat([calibration, found], ignore_index=True)
        requests = set()
        for c in curves:
            if c in notes:
                continue
            setting = c.generator.describe()
            points = _points(frame, setting, c.protocol, c.k)
            j = (min(start, caps[setting]) if not points else
                 next_index(points, target_power, 0, caps[setting], _step))
            if j is not None:
                requests.add(CellRequest(c.generator, c.protocol, c.protocol_params, c.k,
                                         grid_effect(j)))
        if not requests:
            break
        new = run(sorted(requests, key=lambda r: (r.generator.describe(), r.protocol, r.k,
                                                   r.effect_pp)))
        found = pd.concat([found, new], ignore_index=True)
    frame = pd.concat([calibration, found], ignore_index=True)
    rows = []
    for c in curves:
        setting = c.generator.describe()
        row = {"generator": c.generator.name, "generator_params": setting,
               "protocol": c.protocol, "k": c.k, "target_power": float(target_power),
               "mde_pp": math.nan, "mde_low_pp": math.nan, "mde_high_pp": math.nan}
        if c in notes:
            row["note"] = notes[c]
            rows.append(row)
            continue
        points = _points(frame, setting, c.protocol, c.k)
        x = crossing(points, target_power, 0, caps[setting], _step)
        if x.at is None:
            row["note"] = f"not reached by effect {grid_effect(caps[setting]):g} pp"
        else:
            row["mde_pp"] = grid_effect(x.at)
            # Below `low` the power is confidently short of the target; from `high` on it
            # is confidently at or above it.
            row["mde_low_pp"] = grid_effect(x.low - 1) if x.low is not None and x.low > 0 \
                else 0.0
            row["mde_high_pp"] = grid_effect(x.high) if x.high is not None else math.nan
            row["note"] = "" if x.high is not None else "upper end not reached"
        rows.append(row)
    columns = ["generator", "generator_params", "protocol", "k", "target_power", "mde_pp",
               "mde_low_pp", "mde_high_pp", "note"]
    return pd.DataFrame(rows, columns=columns), found.assign(searched=True)

