"""A real pool's pool-sampling error from the cell's own experiments (no extra cells).

A ``real_pool`` experiment draws k of the pool's N seeds, so the cell's rate estimates the
pool's U-statistic ``theta_N`` = the mean over k-subsets of the rejection indicator ``h``.
Another pool of N seeds would give another ``theta_N``; its variance over pools is, to
first order (Hoeffding's projection),

    Var(theta_N)  ~=  k**2 / N * zeta_1,   zeta_1 = Var_j( h_1(j) ),

with ``h_1(j)`` the rejection rate of experiments that contain seed j. Each experiment
records which seeds it drew (:func:`sim.generators.pool_rows`), so the cell already
holds, per pool seed j, ``n_j`` (experiments containing it) and ``r_j`` (their rejections):
``h_1(j) ~= r_j / n_j``. Their spread over j carries Monte Carlo noise too, which is
subtracted (the mean of ``hj (1 - hj) / (n_j - 1)``, the same correction as the half-sample
method). Two estimators:

* ``projection``: ``k**2 / N * zeta_1_hat`` (first order; omits the higher Hoeffding terms,
  which matter when k / N is not small);
* ``jackknife`` (default): the delete-one-seed jackknife of the U-statistic, written with the
  same counts: leaving seed j out, the rate is that of the experiments without j, and
  ``theta_(-j) - theta = k / (N - k) (theta - h_1(j))`` for the exact U-statistic, so
  ``var_J = (N - 1) / N * (k / (N - k))**2 * sum_j (h_1(j) - mean)**2`` (Monte Carlo part
  subtracted). The jackknife of a U-statistic errs on the wide side (Efron-Stein), by
  about ``(N / (N - k))**2`` over the first-order term; at k <= N / 3 that is what the
  higher-order terms need.

Either way the variance is floored at the cell's Monte Carlo variance (Agresti-Coull: two
added successes and failures), so a rate at 0 or 1 never gets a zero-width pool interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evalcal_core.validate import fail

#: estimators of the pool-sampling variance
METHODS = ("jackknife", "projection")
DEFAULT_METHOD = "jackknife"


def encode_counts(n: np.ndarray, r: np.ndarray) -> str:
    """``n_j`` and ``r_j`` of every pool seed as text (a cached row's ``seed_counts``)."""
    return ",".join(map(str, np.asarray(n, int))) + "|" + ",".join(map(str, np.asarray(r, int)))


def decode_counts(text: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The arrays of :func:`encode_counts` (``None`` for an empty text)."""
    if not isinstance(text, str) or "|" not in text:
        return None
    n, r = text.split("|")
    return np.array(n.split(","), dtype=np.int64), np.array(r.split(","), dtype=np.int64)


def seed_tallies(order: np.ndarray, significant: np.ndarray, pool_size: int):
    """``(n_j, r_j)`` of a batch: experiments containing each pool seed, and their
    rejections (``order``: shape (m, k) seed indices; ``significant``: shape (m,))."""
    order = np.asarray(order)
    n = np.bincount(order.ravel(), minlength=pool_size)
    hit = order[np.asarray(significant, bool)]
    r = np.bincount(hit.ravel(), minlength=pool_size)
    return n, r


@dataclass(frozen=True)
class PoolVariance:
    """Pool-sampling error of one rate (fractions)."""

    sd: float
    low: float
    high: float


def pool_variance(rejections: int, sims: int, k: int, n_j, r_j, *,
                  method: str = DEFAULT_METHOD, monte_carlo: bool = True) -> float:
    """Pool-sampling variance of a cell's rate (module docstring), floored at its Monte
    Carlo variance.

    Parameters
    ----------
    rejections, sims : int
        The cell's counts.
    k : int
        Seeds per experiment.
    n_j, r_j : array_like
        Per pool seed: experiments that drew it, and their rejections.
    method : {'jackknife', 'projection'}
    monte_carlo : bool
        Subtract the Monte Carlo part of the spread of ``r_j / n_j`` (off only where the
        experiments are every k-subset once, as in a test against the exact jackknife).
    """
    if method not in METHODS:
        raise fail("method", f"one of {', '.join(METHODS)}", method, "pool_variance")
    n_j, r_j = np.asarray(n_j, float), np.asarray(r_j, float)
    size = n_j.size
    tilde = (rejections + 2) / (sims + 4)
    floor = tilde * (1 - tilde) / (sims + 4)
    seen = n_j > 1
    if seen.sum() < 2 or k >= size:
        return floor
    h = r_j[seen] / n_j[seen]
    spread = float(np.sum((h - h.mean()) ** 2))
    noise = float(np.mean(h * (1 - h) / (n_j[seen] - 1))) if monte_carlo else 0.0
    m = int(seen.sum())
    if method == "projection":
        zeta = max(0.0, spread / (m - 1) - noise)
        var = k**2 / size * zeta
    else:
        var = max(0.0, (size - 1) / size * (k / (size - k)) ** 2 * (spread - (m - 1) * noise))
    return max(var, floor)


def pool_interval(rate, rate_low, rate_high, rejections, sims, k, n_j, r_j, *,
                  method: str = DEFAULT_METHOD, alpha: float = 0.05) -> PoolVariance:
    """The Wilson interval widened in quadrature by ``z * sd`` (``sd`` the pool-sampling
    sd of :func:`pool_variance`), clipped to [0, 1]."""
    sd = math.sqrt(pool_variance(rejections, sims, k, n_j, r_j, method=method))
    z = stats.norm.ppf(1 - alpha / 2)
    low = rate - math.hypot(rate - rate_low, z * sd)
    high = rate + math.hypot(rate_high - rate, z * sd)
    return PoolVariance(sd, max(0.0, low), min(1.0, high))


def add_seed_pool_columns(frame, requests, *, method: str = DEFAULT_METHOD):
    """``frame`` with ``pool_sd``, ``pool_low``, ``pool_high`` from each real-pool row's
    ``seed_counts`` (NaN for synthetic generators), and without ``seed_counts``."""
    frame = frame.assign(pool_sd=math.nan, pool_low=math.nan, pool_high=math.nan)
    pools = {r.generator.describe() for r in requests if r.generator.from_pool}
    if pools and not frame.empty:
        for i, row in frame.iterrows():
            counts = decode_counts(row["seed_counts"])
            if row["generator_params"] not in pools or counts is None:
                continue
            iv = pool_interval(row["rate"], row["rate_low"], row["rate_high"],
                               int(row["rejections"]), int(row["sims"]), int(row["k"]),
                               *counts, method=method)
            frame.loc[i, ["pool_sd", "pool_low", "pool_high"]] = (iv.sd, iv.low, iv.high)
    return frame.drop(columns="seed_counts", errors="ignore")
