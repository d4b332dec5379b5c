"""What every confidence sequence of :mod:`protocols.streaming` shares: the input check,
the map of paired deltas onto ``[0, 1]`` and the base class a sequence overrides.

A sequence subclass computes its bounds (:attr:`ConfidenceSequence.low`,
:attr:`~ConfidenceSequence.high`) and may override :meth:`ConfidenceSequence.sides` (which
side of the sequence a value lies on, at every look) and
:meth:`ConfidenceSequence.interval_at` where it can answer them more exactly than its
stored bounds; the decisions read only these two.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import ClassVar

import numpy as np

from evalcal_core.validate import check_alpha, fail


def check_deltas(deltas, owner: str) -> np.ndarray:
    """``deltas`` as a float array ``(..., T)`` of paired differences in ``[-1, 1]``, or the
    one-line :class:`~evalcal_core.validate.InvalidParameterError`."""
    d = np.asarray(deltas, dtype=float)
    if d.ndim < 1 or d.shape[-1] < 1 or not np.all(np.isfinite(d)):
        raise fail("deltas", "finite paired differences in [-1, 1] along the last axis",
                   owner=owner, got=f"shape {d.shape}")
    if np.any(np.abs(d) > 1.0 + 1e-12):
        raise fail("deltas", "paired differences in [-1, 1] (differences of fractions)",
                   float(d[np.abs(d) > 1.0 + 1e-12][0]), owner=owner)
    return np.clip(d, -1.0, 1.0)


def to_unit(d):
    """A paired delta in ``[-1, 1]`` as an observation in ``[0, 1]``: ``(d + 1) / 2``."""
    return (np.asarray(d, dtype=float) + 1.0) / 2.0


def plug_in_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mu_prev, sigma2_prev)``: the regularised running mean and variance of ``x`` in
    ``[0, 1]`` known *before* each observation (Waudby-Smith & Ramdas 2024, eq. 15:
    ``mu_hat_t = (1/2 + sum x) / (t + 1)``, ``sigma2_hat_t = (1/4 + sum (x_i -
    mu_hat_i)^2) / (t + 1)``; at ``t = 0``: 1/2 and 1/4), shape of ``x``."""
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mu_hat = (0.5 + np.cumsum(x, axis=-1)) / (t + 1.0)
    sigma2 = (0.25 + np.cumsum((x - mu_hat) ** 2, axis=-1)) / (t + 1.0)
    lead = x.shape[:-1] + (1,)
    return (np.concatenate([np.full(lead, 0.5), mu_hat[..., :-1]], axis=-1),
            np.concatenate([np.full(lead, 0.25), sigma2[..., :-1]], axis=-1))


def plug_in_bets(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lambda_t, mu_prev, sigma2_prev)``: the predictable plug-in bets
    ``sqrt(2 log(2 / alpha) / (sigma2_hat_{t-1} t log(1 + t)))`` (before truncation) of
    Waudby-Smith & Ramdas (2024), eqs. 13 and 26, shape of ``x``."""
    mu_prev, sigma2_prev = plug_in_moments(x)
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    lam = np.sqrt(2.0 * np.log(2.0 / alpha) / (sigma2_prev * t * np.log1p(t)))
    return lam, mu_prev, sigma2_prev


@dataclass(frozen=True, eq=False)
class ConfidenceSequence:
    """A confidence sequence for the mean paired difference, at every look.

    With probability at least ``1 - alpha`` the true mean lies inside the sequence at every
    look at once (bounds are running intersections: ``low`` never falls, ``high`` never
    rises).

    Attributes
    ----------
    deltas : ndarray, shape (..., T)
        The paired differences (variant minus base, fractions in ``[-1, 1]``) in arrival
        order; leading axes are independent experiments.
    alpha : float
        Miscoverage over all looks together (two-sided: ``alpha / 2`` on each side).
    """

    deltas: np.ndarray
    alpha: float
    #: the name this sequence is registered and selected under (``--stream-method``)
    method: ClassVar[str] = ""
    #: how the output names the sequence
    label: ClassVar[str] = ""

    def __post_init__(self):
        object.__setattr__(self, "deltas", check_deltas(self.deltas, type(self).__name__))
        object.__setattr__(self, "alpha", check_alpha(self.alpha, owner=type(self).__name__))

    @property
    def low(self) -> np.ndarray:
        """Lower bounds after each look, shape (..., T), fractions (``-1``: none yet)."""
        return self._bounds[0]

    @property
    def high(self) -> np.ndarray:
        """Upper bounds after each look, shape (..., T), fractions (``+1``: none yet)."""
        return self._bounds[1]

    @cached_property
    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    @cached_property
    def mean(self) -> np.ndarray:
        """The running mean of the deltas, shape (..., T), fractions."""
        t = np.arange(1, self.deltas.shape[-1] + 1, dtype=float)
        return np.cumsum(self.deltas, axis=-1) / t

    @property
    def n(self) -> int:
        """Looks (observations) in the stream."""
        return int(self.deltas.shape[-1])

    def sides(self, value) -> tuple[np.ndarray, np.ndarray]:
        """``(under, over)``, boolean, shape (..., T): whether ``value`` (a fraction) lies
        below the sequence (``low > value``) or above it (``high < value``) at each look.

        Once true, each stays true (running intersection)."""
        value = float(value)
        return self.low > value, self.high < value

    def interval_at(self, t) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` after look ``t`` (1-based; an int or an array of shape (...)),
        shape (...), fractions."""
        index = np.broadcast_to(np.asarray(t, dtype=np.int64) - 1, self.deltas.shape[:-1])
        index = index[..., None]
        return (np.take_along_axis(self.low, index, axis=-1)[..., 0],
                np.take_along_axis(self.high, index, axis=-1)[..., 0])

    def first_exclusion(self, value: float = 0.0) -> np.ndarray:
        """1-based look after which ``value`` first lies outside the sequence (``0`` if it
        never does), shape (...)."""
        under, over = self.sides(value)
        return first_true(under | over)

    def empty_after(self, locate: bool = True) -> np.ndarray:
        """1-based look after which the running intersection is empty (``0``: never), shape
        (...); with ``locate=False`` the last look where it is empty by then (cheaper: no
        bisection), enough to know whether it ever was.

        Under the sequence's assumption (exchangeable units with a common mean) this
        happens with probability at most ``alpha``; when it happens the data contradict
        that assumption (the mean drifted as units arrived), and the sequence gives no
        interval after it. The intersection only shrinks, so it is empty at some look iff
        it is empty at the last one: where the final running mean is inside the sequence
        (the usual case) nothing more is computed; elsewhere the first empty look is found
        by bisection on :meth:`interval_at`, vectorized over experiments."""
        return (self._first_empty if locate else self._empty_at_end).copy()

    @cached_property
    def _empty_at_end(self) -> np.ndarray:
        lead = self.deltas.shape[:-1]
        out = np.zeros(lead, dtype=np.int64)
        suspect = self._excludes_at_end(np.clip(self.mean[..., -1], -1.0, 1.0))
        if suspect.any():
            sub = replace(self, deltas=self.deltas[suspect])
            low, high = sub.interval_at(np.full(sub.deltas.shape[:-1], sub.n))
            out[suspect] = np.where(low > high, sub.n, 0)
        return out

    @cached_property
    def _first_empty(self) -> np.ndarray:
        lead = self.deltas.shape[:-1]
        out = np.zeros(lead, dtype=np.int64)
        # a value inside the sequence at the last look proves it nonempty at every look
        suspect = self._empty_at_end > 0
        if not suspect.any():
            return out
        sub = replace(self, deltas=self.deltas[suspect])
        # bisection for the first empty look: lo not empty (0: before any look), hi empty
        lo = np.zeros(sub.deltas.shape[:-1], dtype=np.int64)
        hi = np.full(lo.shape, sub.n, dtype=np.int64)
        while np.any(hi - lo > 1):
            mid = (lo + hi) // 2
            mid = np.where(hi - lo > 1, mid, hi)
            m_low, m_high = sub.interval_at(np.maximum(mid, 1))
            now = m_low > m_high
            hi = np.where(now, mid, hi)
            lo = np.where(now, lo, mid)
        out[suspect] = hi
        return out

    def _excludes_at_end(self, values: np.ndarray) -> np.ndarray:
        """Whether each experiment's ``values[...]`` (fractions) lies outside the sequence
        at some look (below or above it), shape (...)."""
        return (self.low[..., -1] > values) | (self.high[..., -1] < values)

    def decision(self, value: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """``(stopped_at, sign)``: the look where ``value`` first left the sequence (0:
        never) and the side the sequence lies on then (+1 above ``value``, -1 below, 0
        never)."""
        under, over = self.sides(value)
        t_under, t_over = first_true(under), first_true(over)
        stopped = np.where(t_under == 0, t_over,
                           np.where(t_over == 0, t_under, np.minimum(t_under, t_over)))
        sign = np.where(stopped == 0, 0, np.where(stopped == t_under, 1, -1))
        return stopped, sign


def first_true(flags: np.ndarray) -> np.ndarray:
    """1-based index of the first True along the last axis, ``0`` where there is none."""
    flags = np.asarray(flags, dtype=bool)
    return np.where(flags.any(axis=-1), flags.argmax(axis=-1) + 1, 0)
