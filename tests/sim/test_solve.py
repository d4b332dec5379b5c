"""``sim.solve``: one driver for the smallest k and the smallest effect (consistency checks
on exact, noise-free power curves: the answer is known in closed form)."""

import math

import pandas as pd
import pytest

from sim.solve import Curve, grid_effect, solve


class _Setting:
    name = "toy"

    def describe(self):
        return "a=1"


G = _Setting()


def _run_with(power):
    calls = []

    def run(requests):
        calls.append(len(requests))
        return pd.DataFrame([dict(generator="toy", generator_params="a=1", protocol=r.protocol,
                                  k=r.k, effect_pp=r.effect_pp, rate=power(r.k, r.effect_pp),
                                  rate_low=power(r.k, r.effect_pp),
                                  rate_high=power(r.k, r.effect_pp)) for r in requests])
    return run, calls


EMPTY = pd.DataFrame(columns=["generator", "generator_params", "protocol", "k", "effect_pp",
                              "rate", "rate_low", "rate_high"])


def test_solve_for_k():
    """Power k / 10 at 1 pp: the smallest k with power >= 0.8 is 8."""
    run, calls = _run_with(lambda k, e: min(1.0, k / 10))
    curve = Curve(G, "p", "", 0.8, cap=50, effect_pp=1.0, floor=2)
    found = solve([curve], EMPTY, run=run)
    assert found["searched"].all() and len(calls) == len(found)
    assert curve.crossing(found).at == 8


def test_solve_for_the_effect():
    """Power 1 - exp(-effect): the smallest grid effect with power >= 0.8 is the first grid
    point at or above ln 5 = 1.609 pp."""
    run, _ = _run_with(lambda k, e: 1 - math.exp(-e))
    curve = Curve(G, "p", "", 0.8, cap=400, k=5)  # index 400: 0.01 * 2 ** (400 / 36) pp
    found = solve([curve], EMPTY, run=run)
    at = grid_effect(curve.crossing(found).at)
    assert at >= math.log(5) > grid_effect(curve.crossing(found).at - 1)


def test_a_curve_solves_for_exactly_one_unknown():
    with pytest.raises(ValueError, match="exactly one None"):
        Curve(G, "p", "", 0.8, cap=5, k=3, effect_pp=1.0)
    with pytest.raises(ValueError, match="exactly one None"):
        Curve(G, "p", "", 0.8, cap=5)


def _masked_points(curve, frame):
    """The points by boolean masks over the frame (the plain pandas reading of the rows)."""
    mine = frame[(frame["generator"] == "toy") & (frame["generator_params"] == "a=1")
                 & (frame["protocol"] == curve.protocol)]
    if curve.k is None:
        rows = mine[mine["effect_pp"] == curve.effect_pp]
        return {int(r.k): (r.rate, r.rate_low, r.rate_high) for r in rows.itertuples()}
    rows = mine[(mine["k"] == curve.k) & (mine["effect_pp"] > 0)]
    index = {grid_effect(j): j for j in range(600)}
    return {index[r.effect_pp]: (r.rate, r.rate_low, r.rate_high) for r in rows.itertuples()
            if r.effect_pp in index}


def test_points_are_the_rows_of_the_curve_later_rows_replacing_earlier_ones():
    """MeasuredPoints (one index of the frame) gives each curve the points a boolean mask over
    the frame gives: other settings, protocols and effects left out, a repeated k or effect
    taken from its last row."""
    rows = [("toy", "a=1", "p", 3, 1.0, 0.2), ("toy", "a=1", "p", 4, 1.0, 0.3),
            ("toy", "a=1", "p", 3, 1.0, 0.25), ("toy", "a=2", "p", 5, 1.0, 0.9),
            ("toy", "a=1", "q", 5, 1.0, 0.9), ("other", "a=1", "p", 6, 1.0, 0.9),
            ("toy", "a=1", "p", 7, 2.0, 0.9), ("toy", "a=1", "p", 5, grid_effect(40), 0.4),
            ("toy", "a=1", "p", 5, grid_effect(41), 0.5), ("toy", "a=1", "p", 5, 1.234, 0.6),
            ("toy", "a=1", "p", 5, grid_effect(40), 0.45), ("toy", "a=1", "p", 5, 0.0, 0.05)]
    frame = pd.DataFrame(rows, columns=["generator", "generator_params", "protocol", "k",
                                        "effect_pp", "rate"])
    frame = frame.assign(rate_low=frame["rate"] - 0.01, rate_high=frame["rate"] + 0.01)
    for curve in (Curve(G, "p", "", 0.8, cap=50, effect_pp=1.0),
                  Curve(G, "p", "", 0.8, cap=50, effect_pp=2.0),
                  Curve(G, "p", "", 0.8, cap=400, k=5), Curve(G, "q", "", 0.8, cap=400, k=3)):
        got = {i: (p.rate, p.low, p.high) for i, p in curve.points(frame).items()}
        assert got == _masked_points(curve, frame)
    assert Curve(G, "p", "", 0.8, cap=50, effect_pp=1.0).points(frame)[3].rate == 0.25
