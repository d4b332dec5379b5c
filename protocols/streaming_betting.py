"""The betting confidence sequence (hedged capital process) of Waudby-Smith & Ramdas (2024).

"Estimating means of bounded random variables by betting", JRSS-B 86(1), Theorem 3 and
Section 5. For observations ``x_i`` in ``[0, 1]`` (a paired delta ``d`` maps to ``x = (d +
1) / 2``) and a candidate mean ``m``, two gamblers bet on the sign of ``x_i - m`` with the
predictable plug-in bet ``lambda_t = sqrt(2 log(2 / alpha) / (sigma2_hat_{t-1} t log(1 +
t)))`` (:func:`protocols.streaming_base.plug_in_bets`), truncated at ``c / m`` and ``c /
(1 - m)``:

* ``K+_t(m) = prod_{i<=t} (1 + min(lambda_i, c / m) (x_i - m))``,
* ``K-_t(m) = prod_{i<=t} (1 - min(lambda_i, c / (1 - m)) (x_i - m))``,

and the sequence at look ``t`` is ``{m : max(theta K+_t(m), (1 - theta) K-_t(m)) < 1 /
alpha}``. At the true mean both are nonnegative martingales, so by Ville's inequality the
sequence holds it at every look with probability ``>= 1 - alpha`` (``theta alpha`` on the
low side, ``(1 - theta) alpha`` on the high side).

Each factor of ``K+`` is nonincreasing in ``m`` and each of ``K-`` nondecreasing (the
truncation keeps every factor positive), so the set is the interval ``(l_t, u_t)`` with
``theta K+_t(l_t) = 1 / alpha`` and ``(1 - theta) K-_t(u_t) = 1 / alpha``. Hence:

* whether a value ``v`` lies below or above the sequence at each look needs the capital at
  ``v`` alone: one cumulative sum over looks, vectorized over experiments
  (:meth:`BettingSequence.sides`; exact, used by every decision);
* the bounds at every look are read on a grid of candidate means (``grid`` points on
  ``[-1, 1]``, the largest excluded point reported, so never narrower than the exact set),
  vectorized over experiments, looks and the grid in chunks of bounded memory;
* the bounds after one look are found to ``1e-9`` by nested grids over the running
  intersection (:meth:`BettingSequence.interval_at`).

``K-`` of ``x`` at ``m`` is ``K+`` of ``1 - x`` at ``1 - m`` (the bets are unchanged by the
reflection), so every upper-side quantity is computed as the lower side of the reflected
stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from evalcal_core.validate import check_int, check_number

from .streaming_base import ConfidenceSequence, plug_in_bets, to_unit

#: truncation of the bets (``c``): Waudby-Smith & Ramdas recommend 1/2 or 3/4
TRUNCATION = 0.5
#: weight of the upward bet in the hedge (``theta``): 1/2 splits alpha evenly
THETA = 0.5
#: grid points on [-1, 1] for the bounds at every look (spacing 0.001 in delta units)
GRID = 2001
#: floats one chunk of (experiments x looks x grid points) may hold (64 MB)
CHUNK = 8_000_000
#: candidate means per level of the nested grids of :meth:`BettingSequence.interval_at`
_SUBGRID = 64
#: levels of nested grids: 64**5 ~ 1e9 cells, finer than any printed digit
_LEVELS = 5


def _log_capital_up(x, lam, m):
    """``log K+_t(m)`` for ``t = 1..T`` along the looks axis (-2 when ``m`` carries a
    trailing grid axis: ``x``, ``lam`` of shape (..., T, 1) against ``m`` (..., 1, G))."""
    with np.errstate(divide="ignore"):
        bet = np.minimum(lam, TRUNCATION / m)       # m = 0: no truncation (c / 0 = inf)
    return np.cumsum(np.log1p(bet * (x - m)), axis=-2)


def _excluded_below(x, lam, value, log_weight, threshold):
    """Whether ``value`` (in ``[0, 1]``) is below the sequence at each look, running."""
    log_k = _log_capital_up(x[..., None], lam[..., None], np.asarray(value)[..., None, None])
    return np.logical_or.accumulate(log_weight + log_k[..., 0] >= threshold, axis=-1)


def _grid_lower(x, lam, log_weight, threshold, grid):
    """Lower bounds (in ``[0, 1]``) at every look from ``grid`` points: the largest grid
    point below the sequence (the prefix of excluded points, counted chunk by chunk)."""
    m = np.linspace(0.0, 1.0, grid)
    flat_x = x.reshape((-1, x.shape[-1]))
    flat_lam = lam.reshape(flat_x.shape)
    count = np.zeros(flat_x.shape, dtype=np.int64)
    rows = max(1, min(flat_x.shape[0], CHUNK // (flat_x.shape[1] * 16)))
    cols = max(1, CHUNK // (rows * flat_x.shape[1]))
    for r in range(0, flat_x.shape[0], rows):
        xs, ls = flat_x[r:r + rows, :, None], flat_lam[r:r + rows, :, None]
        for g in range(0, grid, cols):
            log_k = _log_capital_up(xs, ls, m[None, None, g:g + cols])
            count[r:r + rows] += (log_weight + log_k >= threshold).sum(axis=-1)
    low = np.where(count > 0, m[np.maximum(count - 1, 0)], 0.0)
    return np.maximum.accumulate(low.reshape(x.shape), axis=-1)


def _exact_lower(x, lam, t, log_weight, threshold):
    """The running-intersection lower bound after look ``t`` (shape (...)), in ``[0, 1]``,
    by nested grids: each level keeps the cell that holds the largest candidate excluded
    at some look ``1..t`` (at each look the excluded candidates are a prefix of the cell,
    and the cell's left end is excluded at some look by construction)."""
    upto = np.broadcast_to(np.asarray(t), x.shape[:-1]).reshape(-1)
    looks = int(upto.max())
    flat_x = x.reshape((-1, x.shape[-1]))[:, :looks]
    flat_lam = lam.reshape((-1, x.shape[-1]))[:, :looks]
    out = np.empty(flat_x.shape[0])
    rows = max(1, CHUNK // (looks * (_SUBGRID + 1)))
    steps = np.arange(_SUBGRID + 1) / _SUBGRID
    seen = np.arange(1, looks + 1)[None, :, None]
    for r in range(0, flat_x.shape[0], rows):
        xs, ls = flat_x[r:r + rows, :, None], flat_lam[r:r + rows, :, None]
        stop = upto[r:r + rows, None, None]
        lo, hi = np.zeros(xs.shape[0]), np.ones(xs.shape[0])
        for _ in range(_LEVELS):
            pts = lo[:, None] + (hi - lo)[:, None] * steps           # (rows, S + 1)
            log_k = _log_capital_up(xs, ls, pts[:, None, :])
            hit = (log_weight + log_k >= threshold) & (seen <= stop)
            count = hit.sum(axis=-1).max(axis=-1)                    # the best look's prefix
            pick = np.maximum(count - 1, 0)[:, None]
            lo = np.where(count > 0, np.take_along_axis(pts, pick, axis=-1)[:, 0], lo)
            hi = np.take_along_axis(pts, np.minimum(count, _SUBGRID)[:, None], axis=-1)[:, 0]
        out[r:r + rows] = lo
    return out.reshape(x.shape[:-1])


@dataclass(frozen=True, eq=False)
class BettingSequence(ConfidenceSequence):
    """The hedged betting confidence sequence (Waudby-Smith & Ramdas 2024, Theorem 3).

    Attributes
    ----------
    deltas : ndarray, shape (..., T)
        Paired differences in ``[-1, 1]`` (fractions), arrival order along the last axis.
    alpha : float
        Miscoverage over all looks (``alpha / 2`` on each side with ``theta = 1/2``).
    grid : int
        Candidate means on ``[-1, 1]`` for :attr:`low` and :attr:`high` at every look (the
        decisions and :meth:`interval_at` do not use it).
    """

    grid: int = GRID
    method: ClassVar[str] = "betting"
    label: ClassVar[str] = "betting confidence sequence (Waudby-Smith & Ramdas 2024)"

    def __post_init__(self):
        super().__post_init__()
        check_int(self.grid, "grid", type(self).__name__, low=11)

    @cached_property
    def _stream(self):
        """``(x, lam)``: the observations in ``[0, 1]`` and their (untruncated) bets."""
        x = to_unit(self.deltas)
        return x, plug_in_bets(x, self.alpha)[0]

    @property
    def _threshold(self) -> float:
        return float(np.log(1.0 / self.alpha))

    def sides(self, value) -> tuple[np.ndarray, np.ndarray]:
        """``(under, over)`` at each look, exact: ``theta K+_t(v) >= 1 / alpha`` at some
        look so far (``v`` below the sequence), ``(1 - theta) K-_t(v) >= 1 / alpha`` (above)."""
        x, lam = self._stream
        v = float(to_unit(check_number(value, "value", type(self).__name__,
                                       low=-1.0, high=1.0)))
        under = _excluded_below(x, lam, v, np.log(THETA), self._threshold)
        over = _excluded_below(1.0 - x, lam, 1.0 - v, np.log(1.0 - THETA), self._threshold)
        return under, over

    def _excludes_at_end(self, values: np.ndarray) -> np.ndarray:
        """As :meth:`sides` at the last look, one value per experiment (exact, no grid)."""
        x, lam = self._stream
        v = to_unit(values)
        under = _excluded_below(x, lam, v, np.log(THETA), self._threshold)[..., -1]
        over = _excluded_below(1.0 - x, lam, 1.0 - v, np.log(1.0 - THETA),
                               self._threshold)[..., -1]
        return under | over

    @cached_property
    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        x, lam = self._stream
        low = _grid_lower(x, lam, np.log(THETA), self._threshold, self.grid)
        high = 1.0 - _grid_lower(1.0 - x, lam, np.log(1.0 - THETA), self._threshold, self.grid)
        return 2.0 * low - 1.0, 2.0 * high - 1.0

    def interval_at(self, t) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` of the running intersection after look ``t`` (1-based; int or
        array of shape (...)), to about ``1e-9``, shape (...), fractions."""
        x, lam = self._stream
        t = np.broadcast_to(np.asarray(t, dtype=np.int64), self.deltas.shape[:-1])
        low = _exact_lower(x, lam, t, np.log(THETA), self._threshold)
        high = 1.0 - _exact_lower(1.0 - x, lam, t, np.log(1.0 - THETA), self._threshold)
        return 2.0 * low - 1.0, 2.0 * high - 1.0


def betting_confidence_sequence(deltas, alpha: float = 0.05, *,
                                grid: int = GRID) -> BettingSequence:
    """The betting confidence sequence of paired deltas in ``[-1, 1]``.

    Parameters
    ----------
    deltas : array_like, shape (..., T)
        Paired differences (variant minus base), fractions, in arrival order.
    alpha : float
        The sequence holds the true mean at every look with probability >= ``1 - alpha``.
    grid : int
        Candidate means on ``[-1, 1]`` for the bounds at every look.

    Returns
    -------
    BettingSequence
    """
    return BettingSequence(deltas, alpha, grid)
