"""One driver for "how big must the study be": the smallest k, or the smallest effect.

Like statsmodels' ``Power.solve_power``, a :class:`Curve` fixes all but one unknown: pass
``effect_pp`` and leave ``k=None`` to search the smallest k whose power reaches the target
(the seed budget, :mod:`sim.budget`), or pass ``k`` and leave ``effect_pp=None`` to search
the smallest effect (the minimum detectable effect, :mod:`sim.mde`). Unlike a closed-form
power, each point of the curve is a simulated cell, so :func:`solve` measures in rounds:
every curve names the next index it needs (:func:`sim.search.next_index`), the round's cells
are computed together (in parallel, through the cache), and it stops when no curve needs
more. The search is stateless: a resumed run takes the same path.

Axes: k itself, or an index ``j`` into the geometric effect grid ``effect_pp = 0.01 * 2 **
(j / 36)`` (1.94% steps, rounded to 5 significant digits; the effect search starts near
1 pp). While nothing reaches the target, the next point is where a normal-theory power
curve through the highest point would reach it (:meth:`Curve.step`: at least one index up,
at most a doubling of k or of the effect); the bisection and the walk that follow measure
whatever the guess missed, so the guess changes which cells are drawn, not what a cell says.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pandas as pd
from scipy import special

from evalcal_core.validate import InvalidParameterError

from .grid import CellRequest
from .search import Crossing, Point, crossing, next_index

#: grid points per doubling of the effect: neighbours 2 ** (1 / 36) - 1 = 1.94% apart, so
#: the bisection ends at a relative width <= 2% (the minimum detectable effect's precision)
STEPS_PER_DOUBLING = 36
#: smallest grid effect (pp)
GRID_START_PP = 0.01
#: largest effect searched (pp)
GRID_MAX_PP = 50.0
#: where the effect search starts (pp)
START_PP = 1.0
#: rounds before giving up (each round measures one more point per curve)
MAX_ROUNDS = 100
#: smallest non-centrality a measured rate must imply for :meth:`Curve.step` to guess from
#: it (a rate at the level implies 0; below this the guess would run away: it doubles)
GUESS_MIN_NCP = 0.5


def grid_effect(j: int) -> float:
    """Effect (pp) of grid index ``j``."""
    x = GRID_START_PP * 2 ** (j / STEPS_PER_DOUBLING)
    # 5 significant digits: rounding moves a point by <= 0.005%, far below the 1.94% steps
    return float(f"{x:.5g}")


#: grid effect (pp) -> its index
_GRID_INDEX = {grid_effect(j): j for j in range(
    0, int(STEPS_PER_DOUBLING * math.log2(GRID_MAX_PP / GRID_START_PP)) + 2)}
#: grid index where the effect search starts
START_INDEX = int(round(STEPS_PER_DOUBLING * math.log2(START_PP / GRID_START_PP)))


def grid_cap(generator) -> int:
    """Largest grid index whose effect the generator can simulate (and <= GRID_MAX_PP)."""
    top = int(STEPS_PER_DOUBLING * math.log2(GRID_MAX_PP / GRID_START_PP))
    for j in range(top, -1, -1):
        try:
            generator.check_effect(grid_effect(j) / 100)
        except ValueError:
            continue
        return j
    raise InvalidParameterError(f"generator {generator.name} cannot simulate any positive effect "
                                f"on the grid from {GRID_START_PP} pp")


@dataclass(frozen=True)
class Curve:
    """One protocol's power on one generator setting, along the axis left unknown.

    Exactly one of ``k`` and ``effect_pp`` is ``None``: that is what is solved for.
    ``floor`` and ``cap`` bound the index searched (k itself, or the effect grid's index).
    """

    generator: object
    protocol: str
    protocol_params: str
    target: float
    cap: int
    k: int | None = None
    effect_pp: float | None = None
    floor: int = 0
    alpha: float = 0.05

    def __post_init__(self):
        if (self.k is None) == (self.effect_pp is None):
            raise InvalidParameterError("a Curve solves for k or for effect_pp: leave exactly one "
                                        "None")

    @property
    def solves_for(self) -> str:
        return "k" if self.k is None else "effect_pp"

    def value(self, i: int):
        """The k or the effect (pp) at index ``i``."""
        return int(i) if self.k is None else grid_effect(i)

    def request(self, i: int) -> CellRequest:
        """The cell measuring index ``i``."""
        if self.k is None:
            return CellRequest(self.generator, self.protocol, self.protocol_params, int(i),
                               float(self.effect_pp))
        return CellRequest(self.generator, self.protocol, self.protocol_params, self.k,
                           grid_effect(i))

    def step(self, i: int, point: Point) -> int:
        """Next index when nothing up to ``i`` (measured as ``point``) reaches the target.

        A two-sided level-``alpha`` test of a normal mean has power ``Phi(ncp - z)`` with
        ``z = Phi^-1(1 - alpha / 2)`` and ``ncp`` growing as ``sqrt(k)`` and as the effect;
        the rate at ``i`` gives ``ncp`` there, and the step goes to where the target's ``ncp``
        would be reached: ``k * r**2`` or the effect times ``r``, ``r`` the ratio of the two.
        Power that grows slower than that (repeats of fixed models, whose question
        variance does not shrink with k) takes another step. Never less than one index up,
        never more than a doubling (which is also the step while the rate is at or below
        the level, where the guess says nothing).
        """
        most = 2 * i if self.k is None else i + STEPS_PER_DOUBLING
        z = special.ndtri(1 - self.alpha / 2)
        ncp = z + special.ndtri(min(max(point.rate, 0.0), 1.0))
        if not ncp > GUESS_MIN_NCP:
            return most
        ratio = (z + special.ndtri(self.target)) / ncp
        if self.k is None:
            guess = math.ceil(i * ratio**2 - 1e-9)
        else:
            guess = i + math.ceil(STEPS_PER_DOUBLING * math.log2(ratio) - 1e-9)
        return min(max(guess, i + 1), most)

    def points(self, frame: pd.DataFrame | MeasuredPoints) -> dict[int, Point]:
        """The curve's measured points in ``frame`` (rows of a calibration frame, or their
        :class:`MeasuredPoints`)."""
        if not isinstance(frame, MeasuredPoints):
            frame = MeasuredPoints(frame)
        rows = frame.of(self.generator.name, self.generator.describe(), self.protocol)
        if self.k is None:
            return {k: point for k, effect, point in rows if effect == self.effect_pp}
        return {_GRID_INDEX[effect]: point for k, effect, point in rows
                if k == self.k and effect > 0 and effect in _GRID_INDEX}

    def next(self, frame: pd.DataFrame | MeasuredPoints) -> int | None:
        """The next index to measure, or ``None`` when the crossing is known."""
        points = self.points(frame)
        if not points and self.k is not None:
            return min(START_INDEX, self.cap)
        return next_index(points, self.target, self.floor, self.cap, self.step)

    def crossing(self, frame: pd.DataFrame | MeasuredPoints, cap: int | None = None
                 ) -> Crossing:
        """What ``frame`` says about where the power crosses the target."""
        points = self.points(frame)
        return crossing(points, self.target, self.floor, self.cap if cap is None else cap,
                        self.step)


class MeasuredPoints:
    """A calibration frame's measured points, grouped by curve, read by every curve.

    Built once per round, so a round costs one pass over the frame rather than a boolean
    mask over the whole frame per curve (which dominated a small calibration). A curve sees
    the rows of its generator setting and protocol in the frame's order (a later row of the
    same k or effect replaces an earlier one, as a dict built from the rows would).
    """

    def __init__(self, frame: pd.DataFrame):
        self._rows: dict[tuple, list] = {}
        columns = ("generator", "generator_params", "protocol", "k", "effect_pp", "rate",
                   "rate_low", "rate_high")
        for name, params, protocol, k, effect, rate, low, high in zip(
                *(frame[c].tolist() for c in columns)):
            self._rows.setdefault((name, params, protocol), []).append(
                (int(k), float(effect), Point(float(rate), float(low), float(high))))

    def of(self, generator: str, generator_params: str, protocol: str) -> list:
        """``(k, effect_pp, Point)`` of the rows of one generator setting and protocol."""
        return self._rows.get((generator, generator_params, protocol), [])


def solve(curves: Iterable[Curve] | Callable[[pd.DataFrame], Iterable[Curve]],
          frame: pd.DataFrame, *, run: Callable, also=None,
          max_rounds: int = MAX_ROUNDS) -> pd.DataFrame:
    """Measure every curve until its crossing of the target is known.

    Parameters
    ----------
    curves : iterable of Curve, or callable
        The curves; a callable ``curves(frame)`` is asked again every round (which curves
        are searched may depend on the cells measured so far).
    frame : pandas.DataFrame
        Cells measured so far (a calibration frame).
    run : callable
        ``run(requests) -> frame`` computing cells (:func:`sim.grid.run_cells` with the
        run's options).
    also : callable, optional
        ``also(frame, requests) -> set of CellRequest``: more cells to measure in the same
        round (the seed budget's effect-0 cells at the k it measures).
    max_rounds : int

    Returns
    -------
    pandas.DataFrame
        The cells measured, in the order of the rounds, marked ``searched = True``.
    """
    found = []
    for _ in range(max_rounds):
        current = pd.concat([frame, *found], ignore_index=True)
        todo = curves(current) if callable(curves) else curves
        measured = MeasuredPoints(current)
        requests = set()
        for c in todo:
            i = c.next(measured)
            if i is not None:
                requests.add(c.request(i))
        if also is not None:
            requests |= also(current, requests)
        if not requests:
            return (pd.concat(found, ignore_index=True) if found
                    else frame.iloc[:0]).assign(searched=True)
        new = run(sorted(requests, key=lambda r: (r.generator.describe(), r.protocol, r.k,
                                                   r.effect_pp)))
        found.append(new.assign(searched=True))
    raise RuntimeError("the search did not settle")  # a bug: it always ends
