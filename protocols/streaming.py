"""Anytime-valid comparisons: a confidence sequence for the mean paired difference.

A user watching an evaluation run question by question (or seed by seed) may look after
every item and stop when the result looks decided. A fixed-n test read that way inflates
false positives (``sim.sequential`` teaches by how much); a *confidence sequence* does not:
with probability at least ``1 - alpha`` it holds the true mean at every time at once, so
"stop the first time 0 leaves the sequence" keeps the false-positive rate <= ``alpha``
however often one looks.

The sequence here is the predictable-plug-in empirical-Bernstein confidence sequence of
Waudby-Smith & Ramdas (2024, "Estimating means of bounded random variables by betting",
JRSS-B, Theorem 2: two-sided, ``log(2 / alpha)``) for observations
in [0, 1]; a paired delta ``d`` in ``[-1, 1]`` (difference of two accuracies, or of two
0/1 scores) is mapped to ``x = (d + 1) / 2``. With ``mu_hat_t = (1/2 + sum_{i<=t} x_i) /
(t + 1)``, ``sigma2_hat_t = (1/4 + sum_{i<=t} (x_i - mu_hat_i)^2) / (t + 1)``,

* bets ``lambda_t = min(sqrt(2 log(2 / alpha) / (sigma2_hat_{t-1} t log(1 + t))), 1/2)``,
* ``v_t = 4 (x_t - mu_hat_{t-1})^2`` and ``psi(l) = (-log(1 - l) - l) / 4``,

the sequence at time ``t`` is ``sum lambda_i x_i / sum lambda_i +- (log(2 / alpha) + sum
v_i psi(lambda_i)) / sum lambda_i``, all sums over ``i <= t``: closed form, so a batch of
experiments and every time are computed with cumulative sums (no loop over either).
Valid for independent observations with a common mean (and for martingale differences).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.validate import check_alpha, fail


@dataclass(frozen=True)
class ConfidenceSequence:
    """A confidence sequence for the mean paired difference, at every time.

    Attributes
    ----------
    low, high : ndarray, shape (..., T)
        Bounds after each of the ``T`` observations (the deltas' units), clipped to
        ``[-1, 1]``.
    mean : ndarray, shape (..., T)
        The running mean of the deltas.
    alpha : float
    """

    low: np.ndarray
    high: np.ndarray
    mean: np.ndarray
    alpha: float

    def first_exclusion(self, value: float = 0.0) -> np.ndarray:
        """1-based index of the first observation after which ``value`` lies outside the
        sequence (``0`` if it never does), shape (...)."""
        out = (self.low > value) | (self.high < value)
        hit = out.any(axis=-1)
        return np.where(hit, out.argmax(axis=-1) + 1, 0)

    def decision(self, value: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """``(stopped_at, sign)``: where ``value`` first left the sequence (0: never) and
        the side the mean lies on then (+1 above ``value``, -1 below, 0 never)."""
        t = self.first_exclusion(value)
        index = np.maximum(t - 1, 0)[..., None]
        above = np.take_along_axis(self.low, index, axis=-1)[..., 0] > value
        return t, np.where(t > 0, np.where(above, 1, -1), 0)


def eb_confidence_sequence(deltas, alpha: float = 0.05) -> ConfidenceSequence:
    """The empirical-Bernstein confidence sequence of paired deltas in ``[-1, 1]``.

    Parameters
    ----------
    deltas : array_like, shape (..., T)
        Paired differences (variant minus base) in arrival order, each in ``[-1, 1]``
        (e.g. 0/1 score differences, or differences of per-question mean scores).
    alpha : float
        The sequence holds the true mean at every time with probability >= ``1 - alpha``.

    Returns
    -------
    ConfidenceSequence
    """
    alpha = check_alpha(alpha, owner="eb_confidence_sequence")
    d = np.asarray(deltas, dtype=float)
    if d.ndim < 1 or d.shape[-1] < 1 or not np.all(np.isfinite(d)):
        raise fail("deltas", "finite paired differences in [-1, 1] along the last axis",
                   f"shape {d.shape}", owner="eb_confidence_sequence")
    if np.any(np.abs(d) > 1.0 + 1e-12):
        raise fail("deltas", "paired differences in [-1, 1] (differences of fractions)",
                   float(d[np.abs(d) > 1.0 + 1e-12][0]), owner="eb_confidence_sequence")
    x = np.clip((d + 1.0) / 2.0, 0.0, 1.0)
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mu_hat = (0.5 + np.cumsum(x, axis=-1)) / (t + 1.0)            # mu_hat_t, t = 1..T
    mu_prev = np.concatenate([np.full(x.shape[:-1] + (1,), 0.5), mu_hat[..., :-1]], axis=-1)
    sigma2 = (0.25 + np.cumsum((x - mu_hat) ** 2, axis=-1)) / (t + 1.0)
    sigma2_prev = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), sigma2[..., :-1]],
                                 axis=-1)
    log_term = np.log(2.0 / alpha)              # the two-sided sequence of Theorem 2
    lam = np.minimum(np.sqrt(2.0 * log_term / (sigma2_prev * t * np.log1p(t))), 0.5)
    v = 4.0 * (x - mu_prev) ** 2
    psi = (-np.log1p(-lam) - lam) / 4.0
    s_lam = np.cumsum(lam, axis=-1)
    center = np.cumsum(lam * x, axis=-1) / s_lam
    half = (log_term + np.cumsum(v * psi, axis=-1)) / s_lam
    low_x = np.maximum(center - half, 0.0)
    high_x = np.minimum(center + half, 1.0)
    # running intersection: a confidence sequence may be intersected over time
    low_x = np.maximum.accumulate(low_x, axis=-1)
    high_x = np.minimum.accumulate(high_x, axis=-1)
    mean = np.cumsum(d, axis=-1) / t
    return ConfidenceSequence(2.0 * low_x - 1.0, 2.0 * high_x - 1.0, mean, alpha)
