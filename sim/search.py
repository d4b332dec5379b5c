"""Where a noisy, increasing power curve crosses a target, on an integer axis.

The axis is k (seeds per arm) for the seed budget and an index into a geometric grid of
effects for the minimum detectable effect. The search is *stateless*: given the points
measured so far it names the next index to measure, or ``None`` when done, so a resumed run
(cells come from the cache) takes the same path.

Steps:

1. nothing measured reaches the target: step up from the highest point (``step_up`` of it
   and its measurement: at least one index, at most a doubling of k or the effect), up to
   the cap;
2. bisect between the first point at or above the target and the measured point below it
   (or the axis floor) until they are neighbours: that first point is the crossing ``at``;
3. walk down from ``at - 1`` while the point's Wilson interval still reaches the target, and
   up from ``at`` while its interval still reaches below it: the ends bracket the crossing
   with its Monte Carlo uncertainty (``low``: the smallest index whose upper Wilson bound
   reaches the target; ``high``: the first index from ``at`` on whose lower bound does).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    """A measured rate (fractions): estimate and Wilson bounds."""

    rate: float
    low: float
    high: float


@dataclass(frozen=True)
class Crossing:
    """The first index reaching the target, with its Monte Carlo bracket.

    Attributes
    ----------
    at : int or None
        Smallest index whose rate is >= target with the index below it measured below target
        (or the floor); ``None`` when not reached.
    low : int or None
        Smallest index of the contiguous run below ``at`` whose upper Wilson bound is >=
        target (``at`` itself when the point below is confidently short).
    high : int or None
        First index >= ``at`` whose lower Wilson bound is >= target; ``None`` when none up to
        the cap.
    complete : bool
        Every point the answer depends on is measured.
    top : int or None
        Highest index measured (what "not reached" refers to).
    """

    at: int | None
    low: int | None
    high: int | None
    complete: bool
    top: int | None


def next_index(points: Mapping[int, Point], target: float, floor: int, cap: int,
               step_up: Callable[[int, Point], int]) -> int | None:
    """The next index to measure, or ``None`` when the crossing and its bracket are known.

    Parameters
    ----------
    points : mapping int -> Point
        Measurements so far (any indices in ``[floor, cap]``).
    target : float
        Power to reach (fraction).
    floor, cap : int
        Smallest and largest index that can be measured.
    step_up : callable
        ``step_up(i, point)``: next index to try above the highest measured index ``i``
        (measured as ``point``) when nothing reaches the target yet.
    """
    return _walk(points, target, floor, cap, step_up)[0]


def crossing(points: Mapping[int, Point], target: float, floor: int, cap: int,
             step_up: Callable[[int, Point], int]) -> Crossing:
    """What the measured ``points`` say about the crossing (see :class:`Crossing`)."""
    return _walk(points, target, floor, cap, step_up)[1]


def _walk(points, target, floor, cap, step_up):
    ks = sorted(k for k in points if floor <= k <= cap)
    if not ks:
        start = min(max(floor, 1), cap)
        return start, Crossing(None, None, None, False, None)
    top = ks[-1]
    reached = [k for k in ks if points[k].rate >= target]
    if not reached:
        if top >= cap:
            return None, Crossing(None, None, None, True, top)
        return (min(max(step_up(top, points[top]), top + 1), cap),
                Crossing(None, None, None, False, top))
    at = reached[0]
    below = [k for k in ks if k < at]
    last_below = below[-1] if below else floor - 1
    if at - last_below > 1:
        return (at + last_below) // 2, Crossing(at, None, None, False, top)
    # Walk down: the contiguous indices below `at` whose upper bound still reaches target.
    k = at - 1
    while k >= floor and k in points and points[k].high >= target:
        k -= 1
    if k >= floor and k not in points:
        return k, Crossing(at, None, None, False, top)
    low = k + 1
    # Walk up: from `at`, the first index whose lower bound reaches the target.
    k = at
    while k <= cap and k in points and points[k].low < target:
        k += 1
    if k <= cap and k not in points:
        return k, Crossing(at, low, None, False, top)
    return None, Crossing(at, low, k if k <= cap else None, True, max(top, min(k, cap)))
