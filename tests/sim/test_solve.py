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
