"""Whole leaderboards: every pair of ``m`` systems at once, tie tiers, simultaneous rank
intervals and a confidence set for the best.

The systems are compared on the same paired units (questions of fixed models, seeds of
training methods, or clusters of questions): ``x[i, u]`` is system ``i``'s score on unit
``u`` (for questions with repeats, the mean over the repeats). For the ``m (m - 1) / 2``
pairs, the differences ``d_ij = mean(x_i) - mean(x_j)`` and their paired standard errors
``se_ij = sqrt((V_ii + V_jj - 2 V_ij) / n)`` come from one covariance matrix ``V`` of the
units (one ``m x m`` product, no loop over pairs).

**Simultaneous inference** (max-T, single step): the critical value ``c`` is the ``1 - alpha``
quantile of ``max_ij |T_ij|`` under the joint null, drawn as ``Z ~ N(0, V / n)`` divided by
one ``sqrt(chi2_{n-1} / (n - 1))`` per draw (the multivariate t the per-pair t statistics
follow; multcomp's convention for an estimated covariance), the maximum over all pairs taken
draw by draw in chunks. Then, jointly with probability about ``1 - alpha``:

* every interval ``d_ij +- c se_ij`` holds its true difference, so a pair is *separated*
  when its interval excludes 0 (the family-wise error of any false separation <= alpha);
* system ``i``'s rank (1 = best) lies in ``[1 + #{j: j separated above i},
  m - #{j: j separated below i}]`` for every ``i`` at once (the rank intervals of
  Al Mohamad, Goeman & van Zwet 2022 built from simultaneous pairwise intervals);
* the best system is among those no other system is separated above (the confidence set for
  the best).

**Tiers** (:func:`tiers`): systems sorted by mean; a new tier starts at the first system
separated from the top of the current tier (a greedy reading for display: systems in one
tier are not separated from that tier's leader, and the printed pairwise verdicts decide).
Under the global null a second tier needs a false separation, so the tiers' family-wise
error is at most max-T's; with real differences a tier may hold a system truly worse than
one in the next tier (rates measured in docs/evaluate.md, "Leaderboards").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.validate import check_alpha, check_int, fail

from ._decisions import SE_RTOL

#: joint-null draws for the critical value
DEFAULT_DRAWS = 2_000
#: elements of the largest array built at once (draws x systems x systems)
CHUNK_ELEMENTS = 2**23


@dataclass(frozen=True)
class Leaderboard:
    """A leaderboard's simultaneous decisions (systems in input order unless stated).

    Attributes
    ----------
    means : ndarray, shape (m,)
        Mean score per system (the units' metric, e.g. fraction).
    diff, se : ndarray, shape (m, m)
        ``diff[i, j] = means[i] - means[j]`` and its paired SE (0 on the diagonal).
    critical : float
        The max-T multiplier ``c`` (simultaneous over all pairs).
    separated : ndarray of bool, shape (m, m)
        ``separated[i, j]``: ``i`` is shown better than ``j`` (``diff - c se > 0``).
    rank_low, rank_high : ndarray of int, shape (m,)
        Simultaneous rank intervals (1 = best).
    best_set : ndarray of bool, shape (m,)
        The confidence set for the best system.
    order : ndarray of int, shape (m,)
        Systems by decreasing mean.
    tier : ndarray of int, shape (m,)
        Display tier of each system (1 = top).
    alpha : float
    df : float
        Degrees of freedom of the per-pair t (units - 1).
    degenerate : ndarray of bool, shape (m, m)
        Pairs with no variance estimate (identical answers on every unit): never separated.
    """

    means: np.ndarray
    diff: np.ndarray
    se: np.ndarray
    critical: float
    separated: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    best_set: np.ndarray
    order: np.ndarray
    tier: np.ndarray
    alpha: float
    df: float
    degenerate: np.ndarray


def pair_se(x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means, differences and paired SEs of every pair, from one covariance matrix.

    Parameters
    ----------
    x : ndarray, shape (..., m, n)
        Score of each of ``m`` systems on ``n`` paired units.

    Returns
    -------
    means : (..., m), diff : (..., m, m), se : (..., m, m)
        ``se[i, j]`` equals ``x[i] - x[j]``'s ``std(ddof=1) / sqrt(n)``.
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[-1]
    means = x.mean(axis=-1)
    centred = x - means[..., None]
    cov = centred @ np.swapaxes(centred, -1, -2) / (n - 1)
    var = np.diagonal(cov, axis1=-2, axis2=-1)
    pair_var = np.maximum(var[..., :, None] + var[..., None, :] - 2.0 * cov, 0.0) / n
    return means, means[..., :, None] - means[..., None, :], np.sqrt(pair_var)


@dataclass(frozen=True)
class PairDecisions:
    """Simultaneous pairwise decisions of a batch of leaderboards (leading axes: boards).

    Attributes
    ----------
    means : (..., m); diff, se : (..., m, m); critical : (...)
    separated, degenerate : bool (..., m, m)
    rank_low, rank_high : int (..., m)
    best_set : bool (..., m)
    order, tier : int (..., m)
        Systems by decreasing mean, and each system's display tier (:func:`tiers`).
    """

    means: np.ndarray
    diff: np.ndarray
    se: np.ndarray
    critical: np.ndarray
    separated: np.ndarray
    degenerate: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    best_set: np.ndarray
    order: np.ndarray
    tier: np.ndarray


def tiers(means, separated) -> tuple[np.ndarray, np.ndarray]:
    """Display tiers of a batch of boards: ``(order, tier)``, both of shape (..., m).

    Systems sorted by decreasing mean (ties in input order); the first is the leader of
    tier 1, and a new tier starts, led by it, at the first system ``i`` the current
    leader is separated from (``separated[leader, i]``). A greedy reading: systems in a
    tier are not separated from its leader.

    Parameters
    ----------
    means : ndarray, shape (..., m)
    separated : ndarray of bool, shape (..., m, m)
        ``separated[..., i, j]``: ``i`` shown better than ``j``.
    """
    means = np.asarray(means, dtype=float)
    m = means.shape[-1]
    order = np.argsort(-means, axis=-1, kind="stable")
    flat_order = order.reshape(-1, m)
    flat_sep = np.asarray(separated, dtype=bool).reshape(-1, m, m)
    boards = np.arange(flat_order.shape[0])
    tier = np.empty_like(flat_order)
    current = np.ones(boards.size, dtype=int)
    leader = flat_order[:, 0].copy()
    for pos in range(m):                 # m steps, every board at once
        i = flat_order[:, pos]
        new = flat_sep[boards, leader, i]
        current += new
        leader = np.where(new, i, leader)
        tier[boards, i] = current
    return order, tier.reshape(order.shape)


def simultaneous_pairs(x, alpha: float = 0.05, *, draws: int = DEFAULT_DRAWS,
                       rng=None, progress=None) -> PairDecisions:
    """Max-T over every pair of ``m`` systems, vectorized over a batch of boards.

    Parameters
    ----------
    x : array_like, shape (..., m, n)
        Scores of ``m >= 2`` systems on ``n >= 3`` paired units per board.
    alpha : float
        Simultaneous level.
    draws : int
        Joint-null draws (one set shared by the boards: common random numbers).
    rng : numpy.random.Generator or int, optional
    progress : callable, optional
        Called as ``progress(count)`` after each chunk of joint-null draws with the number
        of (board, draw) maxima just computed; they total ``boards * draws`` (a progress
        bar's ``update``).

    Returns
    -------
    PairDecisions
    """
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-2] < 2 or x.shape[-1] < 3 or not np.all(np.isfinite(x)):
        raise fail("x", "a finite array of shape (..., systems >= 2, units >= 3)",
                   owner="leaderboard", got=f"shape {x.shape}")
    alpha = check_alpha(alpha, owner="leaderboard")
    draws = check_int(draws, "draws", low=100, high=10**6)
    rng = np.random.default_rng(rng)
    batch_shape, (m, n) = x.shape[:-2], x.shape[-2:]
    flat = x.reshape((-1, m, n))
    means, diff, se = pair_se(flat)
    scale = np.abs(flat).max(axis=(-2, -1))[:, None, None]
    degenerate = se <= SE_RTOL * np.maximum(np.abs(diff), scale)
    degenerate |= np.eye(m, dtype=bool)
    critical = _critical(flat, se, degenerate, alpha, draws, rng, progress)
    separated = (diff - critical[:, None, None] * se > 0) & ~degenerate
    above = separated.sum(axis=-2)       # systems shown better than i
    below = separated.sum(axis=-1)       # systems i is shown better than
    order, tier = tiers(means, separated)

    def back(a, tail):
        return a.reshape(batch_shape + tail)

    return PairDecisions(back(means, (m,)), back(diff, (m, m)), back(se, (m, m)),
                         back(critical, ()), back(separated, (m, m)),
                         back(degenerate, (m, m)), back(1 + above, (m,)),
                         back(m - below, (m,)), back(above == 0, (m,)),
                         back(order, (m,)), back(tier, (m,)))


def _critical(x, se, degenerate, alpha, draws, rng, progress=None):
    """Per board, the 1 - alpha quantile of the max over pairs of |T| (see the module)."""
    b, m, n = x.shape
    centred = x - x.mean(axis=-1, keepdims=True)
    cov = centred @ np.swapaxes(centred, -1, -2) / ((n - 1) * n)
    lam, vec = np.linalg.eigh(cov)
    root = vec * np.sqrt(np.maximum(lam, 0.0))[:, None, :]
    inv_se = np.where(degenerate, 0.0, 1.0 / np.where(se > 0, se, 1.0))
    z_all = rng.standard_normal((draws, m))
    chi = np.sqrt(rng.chisquare(n - 1, size=draws) / (n - 1))
    maxima = np.empty((b, draws))
    # blocks of boards x chunks of draws, each at most CHUNK_ELEMENTS pairs' statistics
    boards = max(1, CHUNK_ELEMENTS // (m * m * 64))
    step = max(1, CHUNK_ELEMENTS // (min(boards, b) * m * m))
    for lo in range(0, b, boards):
        hi = min(b, lo + boards)
        for start in range(0, draws, step):
            stop = min(draws, start + step)
            z = np.einsum("pk,bmk->bpm", z_all[start:stop], root[lo:hi])
            z /= chi[None, start:stop, None]
            t = np.abs(z[..., :, None] - z[..., None, :]) * inv_se[lo:hi, None]
            maxima[lo:hi, start:stop] = t.reshape(hi - lo, stop - start, -1).max(axis=-1)
            if progress is not None:
                progress((hi - lo) * (stop - start))
    # the ceil((1 - alpha)(P + 1))-th smallest maximum (Monte Carlo p just at alpha)
    rank = min(int(np.ceil((1.0 - alpha) * (draws + 1))), draws)
    return np.sort(maxima, axis=-1)[:, rank - 1]


def leaderboard(x, alpha: float = 0.05, *, draws: int = DEFAULT_DRAWS,
                rng=None, progress=None) -> Leaderboard:
    """Every pair, tiers, rank intervals and the best set of ``m`` systems.

    Parameters
    ----------
    x : array_like, shape (m, n)
        Score of each system on each paired unit (``m >= 2``, ``n >= 3``).
    alpha : float
        Simultaneous level (family-wise over all pairs).
    draws : int
        Joint-null draws for the critical value.
    rng : numpy.random.Generator or int, optional
    progress : callable, optional
        As in :func:`simultaneous_pairs` (the counts total ``draws``).

    Returns
    -------
    Leaderboard
    """
    x = np.asarray(x, dtype=float)
    if x.ndim != 2:
        raise fail("x", "one board: an array of shape (systems, units)", owner="leaderboard",
                   got=f"shape {x.shape}")
    d = simultaneous_pairs(x, alpha, draws=draws, rng=rng, progress=progress)
    return Leaderboard(d.means, d.diff, d.se, float(d.critical), d.separated, d.rank_low,
                       d.rank_high, d.best_set, d.order, d.tier, alpha,
                       float(x.shape[1] - 1), d.degenerate)
