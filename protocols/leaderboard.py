"""Whole leaderboards: every pair of ``m`` systems at once, tiers, simultaneous rank
intervals and a confidence set for the best.

The systems are compared on the same paired units (questions of fixed models, seeds of
training methods, or clusters of questions): ``x[i, u]`` is system ``i``'s score on unit
``u`` (for questions with repeats, the mean over the repeats). Pair ``(i, j)``'s paired
deltas are ``D_iju = x_iu - x_ju``; its statistic is the self-normalised sum

    S_ij = sum_u D_iju / sqrt(sum_u D_iju^2),

McNemar's ``(b - c) / sqrt(b + c)`` on 0/1 scores. Under "i and j are exchangeable on each
unit" the deltas are symmetric about 0, and flipping their signs unit by unit gives ``S_ij``'s
exact randomization law (the exact sign test on 0/1 scores): a constant non-zero delta over
``n`` units is as extreme as a flip can be, p = 2 * 2^-n, so an all-0 and an all-1 system
are separated from n = 6 units on (no "no variance estimate" here).

**Joint null** (the paired sign-flip of :func:`scipy.stats.permutation_test`'s
``"samples"`` type, shared by all pairs): one vector of random signs ``e_u`` per draw flips
unit ``u`` of every pair at once, so the draws keep the dependence between pairs (the units'
covariance); ``S*_ij = sum_u e_u D_iju / sqrt(sum_u D_iju^2)``. Each board has draws of its
own (never one set shared by many boards: a shared set's level is that set's, not alpha),
and the observed board counts as one draw (p = (1 + #{draws >= observed}) / (draws + 1),
Monte Carlo p-values that are valid at any number of draws). When ``2^n <= draws`` every
sign vector is enumerated instead (exact).

**Separations** (single-step max over all pairs): ``i`` is separated above ``j`` when
``S_ij`` exceeds the critical value of ``max_{pairs} |S*|`` (its adjusted p <= alpha). The
law of the maximum is exact when the systems' scores of a unit are jointly sign-symmetric
(e.g. independent answers at accuracy 0.5) and asymptotic otherwise; the family-wise error
of any false separation is measured on the decision grid (``sim/decisions/leaderboard.py``).
Jointly with probability about ``1 - alpha`` then:

* no pair is separated in the wrong order or when tied;
* system ``i``'s rank (1 = best) lies in ``[1 + #{j separated above i},
  m - #{j separated below i}]`` for every ``i`` at once (the rank intervals of
  Al Mohamad, Goeman & van Zwet 2022 built from simultaneous pairwise decisions);
* systems in different tiers (:func:`tiers`) are ordered correctly.

**Best set** (one test per system, Gupta's subset selection read as tests): system ``i`` is
out when some rival beats it, simultaneously over its ``m - 1`` rivals only: its statistic
``max_j S_ji`` against the joint null of ``max_j S*_ji`` (one-sided). The truly best system
is out only when its own test rejects, so the set holds it with probability >= 1 - alpha
with no correction over systems; each system's null maximum is over ``m - 1`` one-sided
pairs rather than all ``m (m - 1) / 2`` two-sided ones, so the set is never larger than
"no system separated above" and usually smaller.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.validate import check_alpha, check_int, fail

from ._decisions import SE_RTOL

#: sign-flip draws of the joint null per board: the Monte Carlo p-values are valid at any
#: number (the observed board is one of the draws); 2,000 put a p-value near 0.05 within
#: 0.5 pp (its binomial SE) at 14 ms a board of 10 systems x 500 questions
DEFAULT_DRAWS = 2_000
#: elements of the largest array built at once ((boards x draws) x (units + systems^2))
CHUNK_ELEMENTS = 2**23
#: a null maximum within this relative distance of the observed statistic counts as a tie
#: (as extreme: conservative), so that rounding never makes the observed draw less extreme
#: than itself
TIE_RTOL = 1e-9


@dataclass(frozen=True)
class PairDecisions:
    """Simultaneous pairwise decisions of a batch of leaderboards (leading axes: boards).

    Attributes
    ----------
    means : ndarray, shape (..., m)
        Mean score per system (the units' metric, e.g. fraction).
    diff, se : ndarray, shape (..., m, m)
        ``diff[i, j] = means[i] - means[j]`` and its paired SE (descriptive).
    stat : ndarray, shape (..., m, m)
        ``S_ij``, the self-normalised sum of the paired deltas (module docstring).
    critical : ndarray, shape (...)
        The critical value of ``max |S*|`` over all pairs (``inf`` when too few draws or
        units let no pair reach alpha).
    separated : ndarray of bool, shape (..., m, m)
        ``separated[i, j]``: ``i`` is shown better than ``j`` (``S_ij > critical``).
    identical : ndarray of bool, shape (..., m, m)
        Pairs with the same score on every unit (to rounding): never separated.
    rank_low, rank_high : ndarray of int, shape (..., m)
        Simultaneous rank intervals (1 = best).
    beaten_p : ndarray, shape (..., m)
        The p-value of "some rival is better than ``i``" (one-sided, over ``m - 1`` rivals).
    best_set : ndarray of bool, shape (..., m)
        The confidence set for the best system (``beaten_p > alpha``).
    order, tier : ndarray of int, shape (..., m)
        Systems by decreasing mean, and each system's tier (:func:`tiers`, 1 = top).
    draws : int
        Joint-null draws per board (``2^n`` when enumerated).
    exact : bool
        Whether every sign vector was enumerated.
    """

    means: np.ndarray
    diff: np.ndarray
    se: np.ndarray
    stat: np.ndarray
    critical: np.ndarray
    separated: np.ndarray
    identical: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    beaten_p: np.ndarray
    best_set: np.ndarray
    order: np.ndarray
    tier: np.ndarray
    draws: int
    exact: bool


@dataclass(frozen=True)
class Leaderboard(PairDecisions):
    """One board's :class:`PairDecisions` (systems in input order unless stated), with
    ``critical`` a float and

    Attributes
    ----------
    alpha : float
        Simultaneous level.
    units : int
        Paired units (questions, seeds or clusters).
    lower_is_better : bool
        The scores are a loss: every decision was taken on their reflection (best = lowest),
        ``means`` and ``diff`` are the scores' own (see
        :func:`protocols.analysis.analyze`).
    """

    alpha: float = 0.05
    units: int = 0
    lower_is_better: bool = False


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


def tiers(means, separated) -> tuple[np.ndarray, np.ndarray]:
    """Tiers of a batch of boards that claim no more than the separations: ``(order, tier)``.

    Systems sorted by decreasing mean (ties in input order); the order is cut after
    position ``k`` exactly when every system above the cut is separated above every
    system below it, so any two systems in different tiers are a separated pair (ordered
    as their tiers) and a tier boundary is wrong only where a separation is. The finest
    such partition into runs of the order (the cuts do not depend on each other).

    Parameters
    ----------
    means : ndarray, shape (..., m)
    separated : ndarray of bool, shape (..., m, m)
        ``separated[..., i, j]``: ``i`` shown better than ``j``.

    Returns
    -------
    order, tier : ndarray of int, shape (..., m)
        Systems by decreasing mean; each system's tier (1 = top).
    """
    means = np.asarray(means, dtype=float)
    m = means.shape[-1]
    order = np.argsort(-means, axis=-1, kind="stable")
    sep = np.asarray(separated, dtype=bool)
    # the separations in mean order: ordered[b, r, s] = separated[order[r], order[s]]
    ordered = np.take_along_axis(np.take_along_axis(sep, order[..., :, None], axis=-2),
                                 order[..., None, :], axis=-1)
    # unseparated pairs in the block rows 0..k, columns k+1..m-1, by 2-D prefix sums
    prefix = np.cumsum(np.cumsum(~ordered, axis=-1), axis=-2)
    k = np.arange(m - 1)
    block = prefix[..., k, m - 1] - prefix[..., k, k]
    cut = block == 0
    by_position = 1 + np.concatenate([np.zeros(cut.shape[:-1] + (1,), dtype=int),
                                      np.cumsum(cut, axis=-1)], axis=-1)
    tier = np.empty_like(by_position)
    np.put_along_axis(tier, order, by_position, axis=-1)
    return order, tier


def _x_iv(x):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-2] < 2 or x.shape[-1] < 3 or not np.all(np.isfinite(x)):
        raise fail("x", "a finite array of shape (..., systems >= 2, units >= 3)",
                   owner="leaderboard", got=f"shape {x.shape}")
    return x


def _flip_blocks(rng, boards, m, n, draws):
    """Yield ``(lo, hi, start, stop, signs)``: the +-1 signs of boards ``lo:hi``' draws
    ``start:stop``, shape ``(hi - lo, stop - start, n)``. Board ``b``'s signs are the next
    ``draws * ceil(n / 64)`` 64-bit words of ``rng``'s stream, in board order, so a batch
    draws what its boards drawn one by one from the same generator would."""
    per = max(1, CHUNK_ELEMENTS // (n + m * m))        # (board, draw) pairs per block
    words = -(-n // 64)
    if per >= draws:
        step = max(1, per // draws)
        for lo in range(0, boards, step):
            hi = min(boards, lo + step)
            raw = rng.bit_generator.random_raw((hi - lo) * draws * words)
            yield lo, hi, 0, draws, _signs(raw, (hi - lo, draws), n)
        return
    for lo in range(boards):
        for start in range(0, draws, per):
            stop = min(draws, start + per)
            raw = rng.bit_generator.random_raw((stop - start) * words)
            yield lo, lo + 1, start, stop, _signs(raw, (1, stop - start), n)


def _signs(raw, shape, n):
    bytes_ = raw.astype("<u8").view(np.uint8).reshape(shape + (-1,))
    bits = np.unpackbits(bytes_, axis=-1, count=n, bitorder="little").astype(np.float32)
    return 2.0 * bits - 1.0


def simultaneous_pairs(x, alpha: float = 0.05, *, draws: int = DEFAULT_DRAWS,
                       rng=None, progress=None) -> PairDecisions:
    """Sign-flip max over every pair of ``m`` systems, vectorized over a batch of boards.

    Parameters
    ----------
    x : array_like, shape (..., m, n)
        Scores of ``m >= 2`` systems on ``n >= 3`` paired units per board.
    alpha : float
        Simultaneous level (family-wise over all pairs; the best set's coverage).
    draws : int
        Joint-null draws per board (each board its own; all ``2^n`` sign vectors instead
        when ``2^n <= draws``).
    rng : numpy.random.Generator or int, optional
        Boards draw their signs from it one after another, in board order.
    progress : callable, optional
        Called as ``progress(count)`` after each block of joint-null draws with the number
        of (board, draw) maxima just computed; they total ``boards * draws`` (a progress
        bar's ``update``).

    Returns
    -------
    PairDecisions
    """
    x = _x_iv(x)
    alpha = check_alpha(alpha, owner="leaderboard")
    draws = check_int(draws, "draws", low=100, high=10**6)
    rng = np.random.default_rng(rng)
    batch_shape, (m, n) = x.shape[:-2], x.shape[-2:]
    flat = x.reshape((-1, m, n))
    b = flat.shape[0]
    means, diff, se = pair_se(flat)
    # D_iju = rel_iu - rel_ju: scores relative to system 0 drop each unit's common level
    # (less cancellation in sum D^2) and keep 0/1 scores integers (exact projections below)
    rel = flat - flat[:, :1, :]
    sums = rel.sum(axis=-1)
    gram = rel @ np.swapaxes(rel, -1, -2)
    sq = np.diagonal(gram, axis1=-2, axis2=-1)
    ss = np.maximum(sq[:, :, None] + sq[:, None, :] - 2.0 * gram, 0.0)  # sum_u D_iju^2
    scale = np.abs(flat).max(axis=(-2, -1))[:, None, None]
    identical = (ss <= n * (SE_RTOL * scale) ** 2) | np.eye(m, dtype=bool)
    weight = np.where(identical, 0.0, 1.0 / np.sqrt(np.where(identical, 1.0, ss)))
    stat = (sums[:, :, None] - sums[:, None, :]) * weight
    beaten = stat.max(axis=-2)                     # max_j S_ji: the best rival against i

    exact = 2**n <= draws
    total = 2**n if exact else draws
    all_max = np.empty((b, total))
    beaten_count = np.zeros((b, m))
    beaten_tie = beaten - TIE_RTOL * np.maximum(np.abs(beaten), 1.0)
    if exact:
        signs = 2.0 * ((np.arange(total)[:, None] >> np.arange(n)) & 1).astype(np.float32) - 1.0
        step = max(1, CHUNK_ELEMENTS // (total * (n + m * m)))
        blocks = [(lo, min(b, lo + step), 0, total, signs[None])
                  for lo in range(0, b, step)]
    else:
        blocks = _flip_blocks(rng, b, m, n, draws)
    # sum_u e_u D_iju = proj_i - proj_j: projections of integer scores are exact in float32
    # (a quarter of float64's time), so the all-plus flip ties the observed statistic bit
    # for bit; other scores stay in float64
    dtype = np.float32 if np.array_equal(rel, np.round(rel)) and np.abs(rel).max() * n < 2**24 \
        else np.float64
    rel_t = np.swapaxes(rel, -1, -2).astype(dtype)
    for lo, hi, start, stop, e in blocks:
        proj = (e.astype(dtype, copy=False) @ rel_t[lo:hi]).astype(float)  # (boards, draws, m)
        t = (proj[..., :, None] - proj[..., None, :]) * weight[lo:hi, None]
        rival = t.max(axis=-2)                               # max_j S*_ji per draw
        all_max[lo:hi, start:stop] = rival.max(axis=-1)      # = max over pairs of |S*|
        beaten_count[lo:hi] += (rival >= beaten_tie[lo:hi, None]).sum(axis=1)
        if progress is not None:
            progress((hi - lo) * (stop - start))
    # p <= alpha for at most `allowed` draws at least as extreme as the observed board
    # (which is one of the enumerated vectors, or the extra draw of a Monte Carlo p)
    allowed = int(np.floor(alpha * total)) if exact else int(np.floor(alpha * (total + 1))) - 1
    if allowed < 0:
        critical = np.full(b, np.inf)
    else:
        critical = -np.partition(-all_max, allowed, axis=-1)[:, allowed]
    separated = (stat > critical[:, None, None] * (1.0 + TIE_RTOL)) & ~identical
    beaten_p = beaten_count / total if exact else (1.0 + beaten_count) / (total + 1)
    above = separated.sum(axis=-2)       # systems shown better than i
    below = separated.sum(axis=-1)       # systems i is shown better than
    order, tier = tiers(means, separated)

    def back(a, tail):
        return a.reshape(batch_shape + tail)

    return PairDecisions(back(means, (m,)), back(diff, (m, m)), back(se, (m, m)),
                         back(stat, (m, m)), back(critical, ()), back(separated, (m, m)),
                         back(identical, (m, m)), back(1 + above, (m,)),
                         back(m - below, (m,)), back(beaten_p, (m,)),
                         back(beaten_p > alpha, (m,)), back(order, (m,)), back(tier, (m,)),
                         total, exact)


def leaderboard(x, alpha: float = 0.05, *, draws: int = DEFAULT_DRAWS,
                rng=None, progress=None) -> Leaderboard:
    """Every pair, tiers, rank intervals and the best set of ``m`` systems.

    Parameters
    ----------
    x : array_like, shape (m, n)
        Score of each system on each paired unit (``m >= 2``, ``n >= 3``).
    alpha : float
        Simultaneous level (family-wise over all pairs; the best set's coverage).
    draws : int
        Joint-null draws.
    rng : numpy.random.Generator or int, optional
    progress : callable, optional
        As in :func:`simultaneous_pairs` (the counts total ``draws``, or ``2^n``).

    Returns
    -------
    Leaderboard
    """
    x = np.asarray(x, dtype=float)
    if x.ndim != 2:
        raise fail("x", "one board: an array of shape (systems, units)", owner="leaderboard",
                   got=f"shape {x.shape}")
    d = simultaneous_pairs(x, alpha, draws=draws, rng=rng, progress=progress)
    fields = {**d.__dict__, "critical": float(d.critical)}
    return Leaderboard(**fields, alpha=float(alpha), units=int(x.shape[1]))
