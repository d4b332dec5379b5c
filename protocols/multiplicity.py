"""Many comparisons at once: p-value adjustments, max-T step-down and simultaneous CIs.

Two families of corrections:

* :func:`adjust` — Bonferroni, Holm and Benjamini–Hochberg on raw p-values (equal to
  ``statsmodels.stats.multitest.multipletests`` with ``"bonferroni"``, ``"holm"``,
  ``"fdr_bh"``), vectorized over leading batch axes.
* Max-T (Westfall & Young 1993, algorithm 2.8): the joint resampling distribution of all
  comparisons' studentized statistics under one shared resample gives the law of their
  maximum, which accounts for the correlation between comparisons (a shared baseline, shared
  seeds) that Bonferroni and Holm ignore. :func:`maxt_stepdown` turns observed statistics
  and a joint null into step-down adjusted p-values; :func:`maxt_singlestep` and
  :func:`simultaneous_ci` give the single-step p-values and intervals.

The joint null comes from one of three generators, each returning a :class:`JointNull`:

* :func:`paired_signflip_null` — paired seeds: one sign pattern per resample flips the same
  seeds in every comparison's deltas. Exact (every pattern, with weights) up to
  ``max_exact_k`` seeds.
* :func:`unpaired_bootstrap_null` — unpaired seeds: a bootstrap of each arm's *centred*
  values (every arm resampled once per replicate, shared by all comparisons).
* :func:`gaussian_null` — many units (questions of a fixed model): the comparisons'
  z-statistics are asymptotically jointly normal with the correlation estimated from the
  units, so the null is drawn from that normal law (the ``multcomp`` approach).

Statistics are studentized (t, not raw mean differences): comparisons with different
variances then enter the maximum on one scale, so a noisy comparison does not dominate the
maximum and mask a precise one. For one comparison the sign-flip t is a monotone function
of ``|sum(d)|``, so the test equals the raw sign-flip test of :mod:`protocols._resample`.

NaN p-values and statistics (a comparison with no variance estimate, see
:mod:`protocols._decisions`) stay NaN and never reject; they still count in the family
size (a NaN p is treated as 1 for the others' adjustment), so a degenerate comparison can
not make the others' correction milder.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evalcal_core.validate import check_alpha, check_choice, check_int, fail

from ._resample import _chunks, _flat

#: the adjustments of :func:`adjust`, in the order reports list them
METHODS = ("none", "bonferroni", "holm", "bh")

#: statsmodels' names of :data:`METHODS`
STATSMODELS_NAMES = {"bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh"}

#: relative tolerance for ties between resampled and observed statistics
TIE_RTOL = 1e-12


# --------------------------------------------------------------------------------------------
# Families of comparisons


def many_to_one(n_arms: int, control: int = 0) -> list[tuple[int, int]]:
    """Comparisons ``(arm, control)`` of every other arm with ``control`` (arm minus control)."""
    n_arms = check_int(n_arms, "n_arms", low=2)
    control = check_int(control, "control", low=0, high=n_arms - 1)
    return [(i, control) for i in range(n_arms) if i != control]


def all_pairs(n_arms: int) -> list[tuple[int, int]]:
    """All ``n_arms (n_arms - 1) / 2`` comparisons ``(j, i)``, ``i < j`` (arm j minus arm i)."""
    n_arms = check_int(n_arms, "n_arms", low=2)
    return [(j, i) for i, j in itertools.combinations(range(n_arms), 2)]


def contrast_matrix(comparisons, n_arms: int) -> np.ndarray:
    """Rows ``e_i - e_j`` for comparisons ``(i, j)``: shape (len(comparisons), n_arms)."""
    comparisons = _comparisons_iv(comparisons, n_arms)
    out = np.zeros((len(comparisons), n_arms))
    for row, (i, j) in enumerate(comparisons):
        out[row, i] += 1.0
        out[row, j] -= 1.0
    return out


def pair_deltas(scores, comparisons) -> np.ndarray:
    """Per-unit deltas of each comparison: ``scores[..., i, :] - scores[..., j, :]``.

    Parameters
    ----------
    scores : ndarray, shape (..., a, k)
        Per-seed (or per-question) metric of each of ``a`` arms.
    comparisons : sequence of (int, int)

    Returns
    -------
    ndarray, shape (..., len(comparisons), k)
    """
    scores = np.asarray(scores, dtype=float)
    comparisons = _comparisons_iv(comparisons, scores.shape[-2])
    i = np.array([c[0] for c in comparisons])
    j = np.array([c[1] for c in comparisons])
    return scores[..., i, :] - scores[..., j, :]


def _comparisons_iv(comparisons, n_arms):
    out = [tuple(int(v) for v in c) for c in comparisons]
    if not out or any(len(c) != 2 or c[0] == c[1] or min(c) < 0 or max(c) >= n_arms
                      for c in out):
        raise fail("comparisons", f"a non-empty list of pairs (i, j) of distinct arms in "
                   f"0..{n_arms - 1}", comparisons)
    return out


# --------------------------------------------------------------------------------------------
# Adjustments of raw p-values


def adjust(p, method: str = "holm") -> np.ndarray:
    """Adjusted p-values of the family along the last axis.

    Parameters
    ----------
    p : array_like, shape (..., m)
        Raw p-values (fractions); leading axes are independent families.
    method : {"none", "bonferroni", "holm", "bh"}
        ``"bh"`` is Benjamini–Hochberg (controls the false discovery rate, not the FWER).

    Returns
    -------
    ndarray, shape (..., m)
        Equal to ``multipletests(p, method=...)[1]`` per family (``"fdr_bh"`` for ``"bh"``).
        Ties get equal adjusted values. A NaN stays NaN and counts as p = 1 for the others.
    """
    check_choice(method, "method", METHODS, owner="adjust")
    p = np.asarray(p, dtype=float)
    if p.ndim == 0:
        raise fail("p", "an array with a last axis of comparisons", p, owner="adjust")
    if np.any((p < 0) | (p > 1)):
        raise fail("p", "p-values in [0, 1] (or NaN)", float(p[(p < 0) | (p > 1)][0]),
                   owner="adjust")
    missing = np.isnan(p)
    if method == "none":
        return p.copy()
    m = p.shape[-1]
    q = np.where(missing, 1.0, p)
    if method == "bonferroni":
        out = np.minimum(q * m, 1.0)
    else:
        order = np.argsort(q, axis=-1, kind="stable")
        ranked = np.take_along_axis(q, order, axis=-1)
        if method == "holm":
            # step-down: (m - i) p_(i), made monotone from the smallest p upwards
            ranked = np.maximum.accumulate(ranked * (m - np.arange(m)), axis=-1)
        else:
            # step-up: m p_(i) / i, made monotone from the largest p downwards
            ranked = ranked * (m / np.arange(1, m + 1))
            ranked = np.minimum.accumulate(ranked[..., ::-1], axis=-1)[..., ::-1]
        ranked = np.minimum(ranked, 1.0)
        out = np.empty_like(ranked)
        np.put_along_axis(out, order, ranked, axis=-1)
    out[missing] = np.nan
    return out


# --------------------------------------------------------------------------------------------
# Joint nulls


@dataclass(frozen=True)
class JointNull:
    """Observed statistics of ``m`` comparisons and their joint resampling null.

    Attributes
    ----------
    estimate : ndarray, shape (..., m)
        Mean difference of each comparison (metric units, e.g. fraction).
    se : ndarray, shape (..., m)
        Its standard error (same units).
    df : ndarray or float
        Degrees of freedom of the marginal t reference (``inf`` for z).
    observed : ndarray, shape (..., m)
        Studentized statistics ``estimate / se``.
    null : ndarray, shape (..., P, m)
        The statistics under each of ``P`` shared resamples.
    weights : ndarray, shape (P,) or None
        Probabilities of the resamples when they are all enumerated (exact); ``None`` for
        ``P`` random resamples (Monte Carlo p ``(1 + count) / (1 + P)``).
    """

    estimate: np.ndarray
    se: np.ndarray
    df: np.ndarray | float
    observed: np.ndarray
    null: np.ndarray
    weights: np.ndarray | None

    @property
    def exact(self) -> bool:
        """Whether every resample was enumerated."""
        return self.weights is not None


def signflip_patterns(k: int, n_flips: int, rng, *, max_exact_k: int = 16):
    """Sign patterns of ``k`` seeds: all of them (exact) or ``n_flips`` random ones.

    Exact enumeration keeps the first seed's sign at +1: a pattern and its negation give
    the same ``|t|`` in every comparison, so the ``2**(k-1)`` patterns, each with weight
    ``2**-(k-1)``, give the exact two-sided law (the identity pattern is among them).

    Returns
    -------
    signs : ndarray, shape (P, k) of +-1.0
    weights : ndarray, shape (P,) or None
    """
    if k <= max_exact_k:
        bits = (np.arange(2 ** (k - 1))[:, None] >> np.arange(k - 1)) & 1
        signs = np.concatenate([np.ones((bits.shape[0], 1)), 1.0 - 2.0 * bits], axis=1)
        return signs, np.full(signs.shape[0], 2.0 ** -(k - 1))
    return rng.choice(np.array([-1.0, 1.0]), size=(n_flips, k)), None


def paired_signflip_null(deltas, n_flips: int = 10_000, *, rng=None,
                         max_exact_k: int = 16) -> JointNull:
    """Joint sign-flip null of paired t statistics of ``m`` comparisons.

    Each resample flips the signs of the same seeds in every comparison's deltas, which
    keeps the dependence between comparisons (shared baseline, shared seed effects). Valid
    when each seed's vector of deltas is symmetric about 0 under the null jointly (e.g.
    multivariate normal seed effects).

    Parameters
    ----------
    deltas : ndarray, shape (..., m, k)
        Per-seed deltas of each comparison (e.g. from :func:`pair_deltas`).
    n_flips : int
        Random sign patterns when ``k > max_exact_k``.
    rng : numpy.random.Generator, optional
        Used only when ``k > max_exact_k``; one set of patterns for the whole batch.
    max_exact_k : int
        Up to this many seeds all ``2**(k-1)`` patterns are enumerated (exact p-values).

    Returns
    -------
    JointNull
        ``observed`` is the paired t statistic of each comparison
        (``scipy.stats.ttest_rel``'s), ``df = k - 1``.
    """
    d = np.asarray(deltas, dtype=float)
    if d.ndim < 2 or d.shape[-1] < 2:
        raise fail("deltas", "an array of shape (..., m, k) with k >= 2 seeds",
                   f"shape {d.shape}", owner="paired_signflip_null")
    n_flips = check_int(n_flips, "n_flips", low=1)
    k = d.shape[-1]
    rng = np.random.default_rng(rng)
    signs, weights = signflip_patterns(k, n_flips, rng, max_exact_k=max_exact_k)
    estimate = d.mean(axis=-1)
    se = d.std(axis=-1, ddof=1) / np.sqrt(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = estimate / se
    null = _signflip_t(d, signs)
    return JointNull(estimate, se, float(k - 1), observed, null, weights)


def _signflip_t(d, signs):
    # t = mean / (sd / sqrt(k)); flipping signs keeps sum(d**2), so only the sum changes:
    # var = (Q - S**2 / k) / (k - 1).
    flat, batch_shape = _flat(d, 2)
    b, m, k = flat.shape
    n_pat = signs.shape[0]
    q = (flat * flat).sum(axis=-1)
    out = np.empty((b, n_pat, m))
    for sl in _chunks(b, n_pat * m * 2):
        s = np.einsum("pk,bmk->bpm", signs, flat[sl], optimize=True)
        var = (q[sl, None, :] - s * s / k) / (k - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (s / k) / np.sqrt(np.maximum(var, 0.0) / k)
        out[sl] = t
    return out.reshape(batch_shape + (n_pat, m))


def unpaired_bootstrap_null(scores, comparisons, n_resamples: int = 10_000, *, rng=None,
                            statistic: str = "welch") -> JointNull:
    """Joint bootstrap null of unpaired two-sample t statistics (arms with ``k`` seeds each).

    Every replicate resamples each arm's *centred* values (``x - mean(x)``) with replacement,
    once, and computes every comparison from the same resampled arms; a shared control then
    enters all its comparisons, as it does in the data. Centring each arm at its own mean
    makes every comparison's null true in the resamples whatever the real differences are,
    which is what the step-down needs (subset pivotality); a permutation of arm labels
    would need equal distributions in all arms, also under partial nulls.

    Parameters
    ----------
    scores : ndarray, shape (..., a, k)
        Per-seed metric of each of ``a`` arms (``k`` seeds each, unpaired).
    comparisons : sequence of (int, int)
        ``(i, j)``: arm ``i`` minus arm ``j``.
    n_resamples : int
    rng : numpy.random.Generator
        One set of resample indices is drawn per call and shared by the batch.
    statistic : {"welch", "pooled"}
        ``"welch"``: Welch t (``df`` holds each comparison's Welch–Satterthwaite df).
        ``"pooled"``: t with the variance pooled over all ``a`` arms and ``a (k - 1)`` df
        (Dunnett's statistic).

    Returns
    -------
    JointNull
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim < 2 or x.shape[-1] < 2:
        raise fail("scores", "an array of shape (..., a, k) with k >= 2 seeds",
                   f"shape {x.shape}", owner="unpaired_bootstrap_null")
    check_choice(statistic, "statistic", ("welch", "pooled"), owner="unpaired_bootstrap_null")
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    comparisons = _comparisons_iv(comparisons, x.shape[-2])
    rng = np.random.default_rng(rng)
    a, k = x.shape[-2:]
    i = np.array([c[0] for c in comparisons])
    j = np.array([c[1] for c in comparisons])
    estimate, se, df = _two_sample(x.mean(axis=-1), x.var(axis=-1, ddof=1), k, i, j, statistic)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = estimate / se
    flat, batch_shape = _flat(x - x.mean(axis=-1, keepdims=True), 2)
    idx = rng.integers(0, k, size=(n_resamples, a, k))
    null = np.empty((flat.shape[0], n_resamples, len(comparisons)))
    for sl in _chunks(flat.shape[0], n_resamples * a * k):
        boot = np.take_along_axis(flat[sl, None, :, :], idx[None], axis=-1)
        est, s, _ = _two_sample(boot.mean(axis=-1), boot.var(axis=-1, ddof=1), k, i, j,
                                statistic)
        with np.errstate(divide="ignore", invalid="ignore"):
            null[sl] = est / s
    return JointNull(estimate, se, df, observed,
                     null.reshape(batch_shape + null.shape[1:]), None)


def _two_sample(mean, var, k, i, j, statistic):
    est = mean[..., i] - mean[..., j]
    if statistic == "pooled":
        pooled = var.mean(axis=-1, keepdims=True)
        se = np.sqrt(pooled * 2.0 / k) * np.ones_like(est)
        df = float(var.shape[-1] * (k - 1))
    else:
        vi, vj = var[..., i] / k, var[..., j] / k
        se = np.sqrt(vi + vj)
        with np.errstate(divide="ignore", invalid="ignore"):
            df = (vi + vj) ** 2 / ((vi**2 + vj**2) / (k - 1))
    return est, se, df


def gaussian_null(scores, comparisons, n_draws: int = 10_000, *, rng=None) -> JointNull:
    """Joint normal null of per-unit paired z statistics (many questions, one fixed model).

    With ``n`` units (questions) each comparison's z statistic
    ``mean(d_c) / (sd(d_c) / sqrt(n))`` is asymptotically normal, and jointly so with the
    correlation of the arms' means estimated from the units. Draws of arm means from
    ``N(0, cov(x) / n)`` give every comparison's null statistic at once; each has exactly the
    N(0, 1) law the per-comparison z test uses.

    Parameters
    ----------
    scores : ndarray, shape (..., a, n)
        Per-question score of each arm (paired by question).
    comparisons : sequence of (int, int)
    n_draws : int
    rng : numpy.random.Generator
        One set of standard normal draws per call, shared by the batch.

    Returns
    -------
    JointNull
        ``df = inf``.
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim < 2 or x.shape[-1] < 2:
        raise fail("scores", "an array of shape (..., a, n) with n >= 2 questions",
                   f"shape {x.shape}", owner="gaussian_null")
    n_draws = check_int(n_draws, "n_draws", low=1)
    lmat = contrast_matrix(comparisons, x.shape[-2])
    rng = np.random.default_rng(rng)
    n = x.shape[-1]
    centred = x - x.mean(axis=-1, keepdims=True)
    cov = np.einsum("...in,...jn->...ij", centred, centred) / ((n - 1) * n)
    vc = np.einsum("ci,...ij,cj->...c", lmat, cov, lmat)
    se = np.sqrt(np.maximum(vc, 0.0))
    estimate = x.mean(axis=-1) @ lmat.T
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = estimate / se
    # a square root of the (positive semi-definite) covariance of the arm means
    lam, vec = np.linalg.eigh(cov)
    root = vec * np.sqrt(np.maximum(lam, 0.0))[..., None, :]
    z = rng.standard_normal((n_draws, x.shape[-2]))
    draws = np.einsum("pa,...ia,ci->...pc", z, root, lmat, optimize=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        null = draws / se[..., None, :]
    return JointNull(estimate, se, np.inf, observed, null, None)


# --------------------------------------------------------------------------------------------
# Max-T


def _threshold(abs_t):
    # ties with the observed value count as "at least as large" despite rounding
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(abs_t), abs_t, abs_t - TIE_RTOL * np.maximum(abs_t, 1.0))


def _share_at_least(maxima, threshold, weights):
    # maxima (B, P, m) against threshold (B, m): share of resamples at or above
    exceed = maxima >= threshold[:, None, :]
    if weights is None:
        return (1.0 + exceed.sum(axis=1)) / (1.0 + maxima.shape[1])
    return np.einsum("bpm,p->bm", exceed, weights)


def _maxt_iv(observed_t, null_t, weights):
    obs = np.asarray(observed_t, dtype=float)
    null = np.asarray(null_t, dtype=float)
    if obs.ndim < 1 or null.shape[:-2] != obs.shape[:-1] or null.shape[-1] != obs.shape[-1]:
        raise fail("null_t", f"an array of shape (..., P, m) matching observed_t "
                   f"{obs.shape}", f"shape {null.shape}")
    if weights is not None:
        weights = np.asarray(weights, dtype=float)
        if weights.shape != (null.shape[-2],) or np.any(weights < 0):
            raise fail("weights", f"non-negative probabilities of the {null.shape[-2]} "
                       "resamples", f"shape {weights.shape}")
    return obs, null, weights


def maxt_stepdown(observed_t, null_t, *, weights=None) -> np.ndarray:
    """Westfall–Young max-T step-down adjusted p-values (two-sided, on ``|t|``).

    Order the comparisons by decreasing ``|t|``; the j-th gets the share of resamples in
    which the maximum of ``|T*|`` over it and all comparisons below it reaches its ``|t|``
    ("successive maxima"), and adjusted p-values are made monotone in that order. Strong
    FWER control under subset pivotality.

    Parameters
    ----------
    observed_t : ndarray, shape (..., m)
    null_t : ndarray, shape (..., P, m)
        Joint null, e.g. :attr:`JointNull.null`.
    weights : ndarray, shape (P,), optional
        Probabilities of enumerated resamples (exact p). Without: ``P`` random resamples
        and ``p = (1 + count) / (1 + P)``.

    Returns
    -------
    ndarray, shape (..., m)
        NaN where ``observed_t`` is NaN (its null column still enters the others' maxima).
    """
    obs, null, weights = _maxt_iv(observed_t, null_t, weights)
    flat_obs, batch_shape = _flat(obs, 1)
    flat_null = null.reshape((-1,) + null.shape[-2:])
    b, p_count, m = flat_null.shape
    abs_obs = np.abs(flat_obs)
    key = np.where(np.isnan(abs_obs), -np.inf, abs_obs)
    order = np.argsort(-key, axis=-1, kind="stable")
    out = np.empty((b, m))
    for sl in _chunks(b, p_count * m * 3):
        o = order[sl]
        null_sorted = np.take_along_axis(np.nan_to_num(np.abs(flat_null[sl]), nan=0.0),
                                         o[:, None, :], axis=-1)
        # successive maxima: column j holds max over comparisons j..m-1 in this order
        succ = np.maximum.accumulate(null_sorted[..., ::-1], axis=-1)[..., ::-1]
        p = _share_at_least(succ, _threshold(np.take_along_axis(key[sl], o, axis=-1)),
                            weights)
        p = np.minimum(np.maximum.accumulate(p, axis=-1), 1.0)
        res = np.empty_like(p)
        np.put_along_axis(res, o, p, axis=-1)
        out[sl] = res
    out[np.isnan(abs_obs)] = np.nan
    return out.reshape(batch_shape + (m,))


def maxt_singlestep(observed_t, null_t, *, weights=None) -> np.ndarray:
    """Single-step max-T adjusted p-values: the share of resamples with ``max |T*| >= |t|``.

    Equals Dunnett's (many-to-one) or Tukey's (all pairs) single-step p-values when the
    null is their multivariate t law. Never below :func:`maxt_stepdown`'s.
    """
    obs, null, weights = _maxt_iv(observed_t, null_t, weights)
    maxima = np.nanmax(np.nan_to_num(np.abs(null), nan=0.0), axis=-1)   # (..., P)
    flat_max = maxima.reshape(-1, maxima.shape[-1])
    flat_obs, batch_shape = _flat(obs, 1)
    thr = _threshold(np.abs(flat_obs))
    out = np.empty(flat_obs.shape)
    for sl in _chunks(flat_obs.shape[0], flat_max.shape[1] * flat_obs.shape[1]):
        out[sl] = _share_at_least(np.broadcast_to(flat_max[sl, :, None],
                                                  flat_max[sl].shape + (flat_obs.shape[1],)),
                                  thr[sl], weights)
    out = np.minimum(out, 1.0)
    out[np.isnan(flat_obs)] = np.nan
    return out.reshape(batch_shape + (flat_obs.shape[1],))


def maxt_critical(null_t, alpha: float = 0.05, *, weights=None) -> np.ndarray:
    """The ``1 - alpha`` quantile of ``max |T*|`` over the comparisons, per family.

    Monte Carlo: the ``ceil((1 - alpha)(P + 1))``-th smallest maximum (the value whose
    single-step p is just at ``alpha``); exact: the smallest ``c`` with
    ``P(max |T*| <= c) >= 1 - alpha``.

    Returns
    -------
    ndarray, shape (...)
    """
    alpha = check_alpha(alpha)
    null = np.asarray(null_t, dtype=float)
    maxima = np.sort(np.nanmax(np.nan_to_num(np.abs(null), nan=0.0), axis=-1), axis=-1)
    p_count = maxima.shape[-1]
    if weights is None:
        rank = min(int(np.ceil((1.0 - alpha) * (p_count + 1))), p_count)
        return maxima[..., rank - 1]
    w = np.asarray(weights, dtype=float)
    order = np.argsort(np.nanmax(np.nan_to_num(np.abs(null), nan=0.0), axis=-1), axis=-1,
                       kind="stable")
    cum = np.cumsum(w[order], axis=-1)
    idx = np.argmax(cum >= 1.0 - alpha - 1e-12, axis=-1)
    return np.take_along_axis(maxima, idx[..., None], axis=-1)[..., 0]


@dataclass(frozen=True)
class SimultaneousCI:
    """Confidence intervals that hold for all comparisons at once.

    Attributes
    ----------
    low, high : ndarray, shape (..., m)
        Bounds (metric units).
    critical : ndarray
        The multiplier of the standard error: shape (...) (one per family) for ``"maxt"``,
        (..., m) for ``"bonferroni"`` (each comparison's df).
    method : str
        ``"maxt"`` or ``"bonferroni"``.
    """

    low: np.ndarray
    high: np.ndarray
    critical: np.ndarray
    method: str


def simultaneous_ci(joint: JointNull, alpha: float = 0.05, *,
                    method: str = "maxt") -> SimultaneousCI:
    """Simultaneous ``1 - alpha`` intervals ``estimate +- c * se`` for all comparisons.

    ``"maxt"``: ``c`` is :func:`maxt_critical` of the joint null (single-step max-T;
    Dunnett/Tukey-type intervals). ``"bonferroni"``: ``c = t_{1 - alpha / (2m), df}``.
    The max-T interval is never wider than the Bonferroni one beyond resampling error.
    """
    alpha = check_alpha(alpha)
    check_choice(method, "method", ("maxt", "bonferroni"), owner="simultaneous_ci")
    m = joint.estimate.shape[-1]
    if method == "maxt":
        c = np.asarray(maxt_critical(joint.null, alpha, weights=joint.weights))
        half = c[..., None] * joint.se
    else:
        df = np.broadcast_to(np.asarray(joint.df, dtype=float), joint.se.shape)
        c = stats.t.isf(alpha / (2.0 * m), df)
        half = c * joint.se
    return SimultaneousCI(joint.estimate - half, joint.estimate + half, c, method)


def maxt_adjust(joint: JointNull, *, stepdown: bool = True) -> np.ndarray:
    """Max-T adjusted p-values of a :class:`JointNull` (step-down unless told otherwise)."""
    f = maxt_stepdown if stepdown else maxt_singlestep
    return f(joint.observed, joint.null, weights=joint.weights)
