"""Minimum detectable effect: the smallest true effect a protocol detects at k seeds.

"How small a gain can 5 seeds see?" For every recommended protocol (the rule of
:mod:`sim.budget`) and every requested k, the effect is searched on a geometric grid
(``effect_pp = 0.01 * 2 ** (j / 36)``, 1.94% steps, rounded to 5 significant digits), with
the driver :func:`sim.solve.solve` (its effect axis): start near 1 pp, double until power >= target,
bisect to neighbouring grid points, then walk to the effects whose Wilson intervals exclude
the target. Only generators whose effect is continuous (``generator.fixed_effect() is
None``) can be searched. Cells are cached like any other.

Precision: the MDE is the first grid point whose simulated power reaches the target, so it
errs by the grid's round-up (0 to +1.94%) plus the Monte Carlo error of the power where it
crosses (its binomial SD over the power curve's slope in log effect: 1.2-1.4% of the effect
for ``paired_t`` at 2,000 simulations, 0.4% at 20,000). It is not "within 2%" at the
default ``--sims``: measured against the exact noncentral t, -3.1% to +4.8% over 320 cells
(README; ``tests/sim/test_mde_precision.py`` checks round-up + 4 SD).
"""

from __future__ import annotations

import math

import pandas as pd

import protocols
from evalcal_core.validate import InvalidParameterError

from .budget import default_tolerance, verdict
from .solve import Curve, grid_cap, grid_effect, solve
from .validity import ValidityRule


def check_searchable(generator) -> None:
    """``ValueError`` unless ``generator`` simulates any effect (``--mde`` needs that)."""
    fixed = generator.fixed_effect()
    if fixed is not None:
        raise InvalidParameterError("The '--mde' option needs a generator whose effect can be "
                                    f"varied; {generator.name} ({generator.describe()}) fixes it "
                                    f"at {100 * fixed:+.4g} pp. Got --mde with it instead.")


def search_mde(calibration: pd.DataFrame, chosen, ks, *, target_power: float,
               tolerance: float | None, run,
               max_sims: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
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
        Of the validity rule (default alpha / 5).
    max_sims : int or None
        Cap of the validity rule's sequential stop (:mod:`sim.validity`).
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
    caps = {g.describe(): grid_cap(g) for g in chosen}
    for g in chosen:
        part = calibration[calibration["generator_params"] == g.describe()]
        for protocol, rows in part.groupby("protocol", sort=True):
            alpha = float(rows["alpha"].iloc[0])
            tol = default_tolerance(alpha) if tolerance is None else tolerance
            rule = ValidityRule.make(alpha, int(calibration["sims"].min()), tolerance=tol,
                                     max_sims=max_sims)
            v = verdict(calibration, g.name, rows["null_params"].iloc[0], protocol, alpha, tol,
                        rule=rule)
            floor = protocols.protocol_class(protocol).min_k
            for k in ks:
                if k < floor:
                    continue
                curve = Curve(g, protocol, rows["protocol_params"].iloc[0], target_power,
                              caps[g.describe()], k=int(k), alpha=alpha)
                curves.append(curve)
                if not v.recommended:
                    notes[curve] = "not recommended: " + v.why
                elif k not in v.null_ks:
                    notes[curve] = "not recommended: false-positive rate not measured at this k"
    found = solve([c for c in curves if c not in notes], calibration, run=run)
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
        x = c.crossing(frame)
        if x.at is None:
            row["note"] = _not_reached(c, frame)
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
    return pd.DataFrame(rows, columns=columns), found



def _not_reached(curve, frame) -> str:
    """Words for a curve whose power stays below the target up to its cap.

    Where the cap is the largest effect the generator can simulate (a larger one would put
    accuracies outside [0, 1]) and the power there is confidently below the target (its
    Wilson upper bound), no effect reaches the power: "impossible at any effect", with the
    power measured at that largest effect. Otherwise the search stopped at the grid's end
    (:data:`sim.solve.GRID_MAX_PP`) and a larger effect might still reach it.
    """
    top = grid_effect(curve.cap)
    point = curve.points(frame).get(curve.cap)
    if point is None:
        return f"not reached by effect {top:g} pp"
    power = (f"power {100 * point.rate:.1f}% [{100 * point.low:.1f}, {100 * point.high:.1f}] "
             f"at +{top:g} pp")
    try:
        curve.generator.check_effect(grid_effect(curve.cap + 1) / 100)
    except ValueError:
        largest = True
    else:
        largest = False
    if largest and point.high < curve.target:
        return (f"impossible at any effect: {power}, the largest effect "
                f"{curve.generator.name} can simulate, below the target "
                f"{100 * curve.target:.0f}%")
    return f"not reached by effect {top:g} pp ({power})"
