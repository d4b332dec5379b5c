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
from scipy import optimize, stats

from evalcal_core.validate import check_alpha, check_choice, check_int, fail

from ._decisions import SE_RTOL
from ._resample import _chunks, _flat
from .claims import _claim_iv

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
    pivot : ndarray, shape (..., P, m) or None
        The statistics under the same resamples of the data *centred at their estimates*:
        the resampling law of the pivots ``(estimate - delta) / se`` at the observed effects,
        which simultaneous intervals need. ``None`` where :attr:`null` is that law already
        (a null drawn from centred data or from a normal law that does not depend on the
        effects).
    """

    estimate: np.ndarray
    se: np.ndarray
    df: np.ndarray | float
    observed: np.ndarray
    null: np.ndarray
    weights: np.ndarray | None
    pivot: np.ndarray | None = None

    @property
    def exact(self) -> bool:
        """Whether every resample was enumerated."""
        return self.weights is not None


def signflip_patterns(k: int, n_flips: int, rng, *, max_exact_k: int = 16,
                      two_sided: bool = True):
    """Sign patterns of ``k`` seeds: all of them (exact) or ``n_flips`` random ones.

    Two-sided, exact enumeration keeps the first seed's sign at +1: a pattern and its
    negation give the same ``|t|`` in every comparison, so the ``2**(k-1)`` patterns, each
    with weight ``2**-(k-1)``, give the exact two-sided law. One-sided statistics tell a
    pattern from its negation: all ``2**k`` patterns, weight ``2**-k``. Either way the
    first pattern is the identity.

    Returns
    -------
    signs : ndarray, shape (P, k) of +-1.0
    weights : ndarray, shape (P,) or None
    """
    if k <= max_exact_k:
        free = k - 1 if two_sided else k
        bits = (np.arange(2 ** free)[:, None] >> np.arange(free)) & 1
        signs = np.concatenate([np.ones((bits.shape[0], k - free)), 1.0 - 2.0 * bits], axis=1)
        return signs, np.full(signs.shape[0], 2.0 ** -free)
    return rng.choice(np.array([-1.0, 1.0]), size=(n_flips, k)), None


def paired_signflip_null(deltas, n_flips: int = 10_000, *, rng=None,
                         max_exact_k: int = 16, unit_weights=None) -> JointNull:
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
    unit_weights : ndarray, shape (k,), optional
        How each unit's expected delta scales with the comparison's effect, with mean 1:
        a unit that is a cluster's sum scaled by ``G / n`` has expectation ``effect *
        n_g G / n``, so its weight is ``n_g G / n``. Default: 1 for every unit (seeds).

    Returns
    -------
    JointNull
        ``observed`` is the paired t statistic of each comparison
        (``scipy.stats.ttest_rel``'s), ``df = k - 1``. ``pivot`` holds the same sign
        patterns applied to the deltas centred at their expectations at the estimate
        (``d - estimate * unit_weights``; see :func:`simultaneous_ci`).
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
    if weights is not None:
        # The first enumerated pattern is the identity: its statistic *is* the observed one.
        # Set it so, since the null's shortcut variance (Q - S**2 / k) cancels badly when
        # the deltas barely vary, and the observed pattern must tie with itself.
        null[..., 0, :] = observed
    w = _unit_weights_iv(unit_weights, k, "paired_signflip_null")
    pivot = _signflip_t(d - estimate[..., None] * w, signs)
    return JointNull(estimate, se, float(k - 1), observed, null, weights, pivot)


def _unit_weights_iv(unit_weights, k, owner):
    if unit_weights is None:
        return np.ones(k)
    w = np.asarray(unit_weights, dtype=float)
    if w.shape != (k,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise fail("unit_weights", f"{k} positive finite numbers (one per unit)",
                   f"shape {w.shape}", owner=owner)
    return w / w.mean()


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
    """Joint multivariate-t null of per-unit paired t statistics (questions of fixed models).

    With ``n`` units (questions) each comparison's statistic ``mean(d_c) / (sd(d_c) /
    sqrt(n))`` is asymptotically normal, and jointly so with the correlation of the arms'
    means estimated from the units. Draws of arm means from ``N(0, cov(x) / n)``, divided by
    one shared ``sqrt(chi2_{n-1} / (n - 1))`` per draw, give every comparison's null
    statistic at once, each with the t law on ``n - 1`` df of the per-question t test (the
    multcomp convention for an estimated covariance). The normal law alone made max-T's
    family-wise error 5.8% at n = 100 binary questions (``python -m sim.decision_grid
    --families models_arms``).

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
        ``df = n - 1``.
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
    z = z / np.sqrt(rng.chisquare(n - 1, size=(n_draws, 1)) / (n - 1))
    draws = np.einsum("pa,...ia,ci->...pc", z, root, lmat, optimize=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        null = draws / se[..., None, :]
    return JointNull(estimate, se, float(n - 1), observed, null, None)


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

    ``"maxt"``: ``c`` is the larger of two max-|t| quantiles (:func:`maxt_critical`): that
    of :attr:`JointNull.null` and that of :attr:`JointNull.pivot` (when given).

    * The sign flips of the *uncentred* deltas are the exact law of ``max |T|`` only when
      every difference is 0; with real differences their quantile shrinks (a flipped
      large effect gives small ``|t|``), and intervals built on it alone covered all
      comparisons in only 80-88% of experiments at +8 sd with 6-12 seeds.
    * The sign flips of the deltas centred at their estimates approximate the law of the
      pivots at the observed effects (a wild bootstrap with Rademacher weights); alone they
      cover too little with fewer than 6 seeds (78% at k = 3).
    * Taking the larger keeps the interval consistent with the max-T test beside it (an
      interval that excludes 0 has ``|t| > c`` at least the test's critical value, so the
      single-step and the step-down p are <= alpha) and covers at every effect where the
      centred law is accurate (:mod:`sim.decisions.maxt` scores it).
    * Where the enumerated law is too coarse for the level (fewer than ``1 / alpha``
      patterns: at most 5 seeds at alpha = 0.05, where max-T can never reject) neither
      law is accurate (92% joint coverage at k = 3 and +0.5 sd); the Bonferroni t
      multiplier, valid for normal deltas at any effect, is then a floor as well.

    ``"bonferroni"``: ``c = t_{1 - alpha / (2m), df}``.
    """
    alpha = check_alpha(alpha)
    check_choice(method, "method", ("maxt", "bonferroni"), owner="simultaneous_ci")
    m = joint.estimate.shape[-1]
    if method == "maxt":
        c = np.asarray(maxt_critical(joint.null, alpha, weights=joint.weights))
        if joint.pivot is not None:
            c = np.maximum(c, maxt_critical(joint.pivot, alpha, weights=joint.weights))
        if joint.weights is not None and joint.weights.size * alpha <= 1.0:
            df = np.broadcast_to(np.asarray(joint.df, dtype=float), joint.se.shape)
            c = np.maximum(c, np.max(stats.t.isf(alpha / (2.0 * m), df), axis=-1))
        # closed at the test's tie rule: a bound that meets 0 where |t| = c (rounding apart)
        # must not exclude it, since the test beside it counts that tie as not rejecting
        half = c[..., None] * (1.0 + TIE_RTOL) * joint.se
    else:
        df = np.broadcast_to(np.asarray(joint.df, dtype=float), joint.se.shape)
        c = stats.t.isf(alpha / (2.0 * m), df)
        half = c * joint.se
    return SimultaneousCI(joint.estimate - half, joint.estimate + half, c, method)


def smallest_signflip_p(k: int, *, max_exact_k: int = 16) -> float:
    """The smallest two-sided max-T p-value an exact sign-flip null of ``k`` seeds can give.

    ``2**-(k - 1)``: the observed pattern and its negation are 2 of the ``2**k`` patterns
    (beyond ``max_exact_k`` the null is sampled and p can be as small as ``1 / (1 + P)``;
    0 is returned there). With ``k <= 5`` it is >= 1/16 > 0.05: max-T cannot reject.
    """
    k = check_int(k, "k", low=2)
    return 2.0 ** -(k - 1) if k <= max_exact_k else 0.0


@dataclass(frozen=True)
class MaxTClaim:
    """Claims of ``m`` comparisons decided by one-sided max-T tests at their margins.

    Attributes
    ----------
    p_shown : ndarray, shape (..., m)
        Step-down adjusted p of the claim's null (non-inferiority: ``delta <= -margin``;
        superiority: ``delta <= margin``; equivalence: the larger of its two one-sided
        nulls' adjusted p).
    p_refuted : ndarray, shape (..., m)
        Step-down adjusted p of the opposite one-sided null (the claim is refuted when it
        is rejected); for equivalence the smaller of the two "outside the margin" ones.
    verdict : ndarray of str, shape (..., m)
        ``"shown"`` where ``p_shown < alpha``, ``"refuted"`` where ``p_refuted < alpha``,
        else ``"inconclusive"``.
    exact : bool
        Whether every sign pattern was enumerated.
    """

    p_shown: np.ndarray
    p_refuted: np.ndarray
    verdict: np.ndarray
    exact: bool


def maxt_claim(deltas, claim: str, margin: float, alpha: float = 0.05, *,
               n_flips: int = 10_000, rng=None, max_exact_k: int = 16,
               unit_weights=None) -> MaxTClaim:
    """Claims over ``m`` paired comparisons by step-down one-sided max-T at the margins.

    Each claim's null sits at a known value (``delta = -margin`` for non-inferiority), so
    the deltas are *shifted* to it and flipped: at the margin the shifted per-seed vectors
    are jointly symmetric about 0, and the sign-flip law of their one-sided t statistics is
    exact whatever the other comparisons' effects (subset pivotality holds because each
    column depends on its own deltas and the shared signs only). Reading a claim off a
    simultaneous interval instead needs the pivots' law at the observed effects, which the
    uncentred flips do not give (false claims 6-10% at the margin with 3-5 seeds).

    Every one-sided hypothesis of the family (``m`` of them, ``2 m`` for equivalence: both
    sides of every comparison) enters one step-down max-T, so the family-wise rate of false
    claims is <= ``alpha`` at the margins. A claim at ``alpha`` needs
    ``2**-k < alpha``: one-sided p cannot go below ``2**-k`` (5 seeds at alpha = 0.05).

    Parameters
    ----------
    deltas : ndarray, shape (..., m, k)
        Per-unit deltas (``variant - base``) of each comparison, units paired across
        comparisons (seeds, or clusters' scaled sums).
    claim : {"superiority", "non_inferiority", "equivalence"}
    margin : float
        Metric units; > 0 (superiority: >= 0).
    alpha : float
        Level of the family of one-sided tests.
    n_flips, rng, max_exact_k, unit_weights
        As in :func:`paired_signflip_null`: each unit is shifted by ``margin`` times its
        weight (a cluster's scaled sum expects ``effect * n_g G / n``).

    Returns
    -------
    MaxTClaim
    """
    claim, margin, alpha = _claim_iv(claim, margin, alpha, "maxt_claim")
    d = np.asarray(deltas, dtype=float)
    if d.ndim < 2 or d.shape[-1] < 2:
        raise fail("deltas", "an array of shape (..., m, k) with k >= 2 units",
                   f"shape {d.shape}", owner="maxt_claim")
    n_flips = check_int(n_flips, "n_flips", low=1)
    k = d.shape[-1]
    m = d.shape[-2]
    rng = np.random.default_rng(rng)
    signs, weights = signflip_patterns(k, n_flips, rng, max_exact_k=max_exact_k,
                                       two_sided=False)
    w = _unit_weights_iv(unit_weights, k, "maxt_claim")
    # columns: "up" tests reject when delta > lower margin; "down" when delta < upper margin
    low_null = -margin if claim != "superiority" else margin
    cols = [d - low_null * w]             # claim side for superiority / non-inferiority
    if claim == "equivalence":
        cols.append(margin * w - d)       # delta < margin side
    shown_t = np.concatenate(cols, axis=-2)
    p_cols = _onesided_stepdown(shown_t, signs, weights)
    if claim == "equivalence":
        p_shown = np.maximum(p_cols[..., :m], p_cols[..., m:])
        # refuted: delta shown >= margin or shown <= -margin
        ref = np.concatenate([d - margin * w, -margin * w - d], axis=-2)
        p_ref_cols = _onesided_stepdown(ref, signs, weights)
        p_refuted = np.minimum(p_ref_cols[..., :m], p_ref_cols[..., m:])
    else:
        p_shown = p_cols
        p_refuted = _onesided_stepdown(low_null * w - d, signs, weights)
    with np.errstate(invalid="ignore"):
        verdict = np.where(p_shown < alpha, "shown",
                           np.where(p_refuted < alpha, "refuted", "inconclusive"))
    return MaxTClaim(p_shown, p_refuted, verdict, weights is not None)


def _onesided_stepdown(x, signs, weights):
    """Step-down max-T p of one-sided t tests ``mean(x) > 0`` per column of ``x`` (..., c, k).

    A column with no variance estimate (constant) gets t = +-inf by the sign of its mean,
    or 0 for a zero mean: it rejects only when every unit lies strictly on the claim's
    side, which the resampling law then accounts for.
    """
    k = x.shape[-1]
    obs = _onesided_t(x.mean(axis=-1), (x * x).sum(axis=-1), k)
    flat, batch_shape = _flat(x, 2)
    b, c, _ = flat.shape
    q = (flat * flat).sum(axis=-1)
    null = np.empty((b, signs.shape[0], c))
    for sl in _chunks(b, signs.shape[0] * c * 2):
        s = np.einsum("pk,bck->bpc", signs, flat[sl], optimize=True)
        null[sl] = _onesided_t(s / k, q[sl, None, :], k)
    obs_flat = obs.reshape(b, c)
    if weights is not None:
        null[:, 0, :] = obs_flat      # the identity pattern ties with the observed statistic
    order = np.argsort(-obs_flat, axis=-1, kind="stable")
    null_sorted = np.take_along_axis(null, order[:, None, :], axis=-1)
    succ = np.maximum.accumulate(null_sorted[..., ::-1], axis=-1)[..., ::-1]
    thr = np.take_along_axis(obs_flat, order, axis=-1)
    p = _share_at_least(succ, _threshold(thr), weights)
    p = np.minimum(np.maximum.accumulate(p, axis=-1), 1.0)
    out = np.empty_like(p)
    np.put_along_axis(out, order, p, axis=-1)
    return out.reshape(batch_shape + (c,))


def _onesided_t(mean, sumsq, k):
    # sd from sum(x**2) and the mean: flipping signs keeps sum(x**2)
    var = np.maximum(sumsq - k * mean * mean, 0.0) / (k - 1)
    se = np.sqrt(var / k)
    scale = np.sqrt(sumsq / k)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / se
    # rounding-level spread is no spread (protocols._decisions.SE_RTOL)
    flat = se <= SE_RTOL * np.maximum(np.abs(mean), scale)
    zero = np.abs(mean) <= SE_RTOL * scale
    return np.where(flat, np.where(zero, 0.0, np.sign(mean) * np.inf), t)


def maxt_adjust(joint: JointNull, *, stepdown: bool = True) -> np.ndarray:
    """Max-T adjusted p-values of a :class:`JointNull` (step-down unless told otherwise)."""
    f = maxt_stepdown if stepdown else maxt_singlestep
    return f(joint.observed, joint.null, weights=joint.weights)


# --------------------------------------------------------------------------------------------
# Exact single-step intervals for independent seeds (Dunnett, Tukey)


def unpaired_exact_critical(n_arms: int, k: int, alpha: float, family: str) -> float:
    """Critical value of the exact single-step simultaneous t intervals of independent arms.

    Normal arms with a common variance, ``k`` seeds each, the variance pooled over all
    ``n_arms`` arms (``n_arms (k - 1)`` df). ``"many_to_one"``: Dunnett's (the ``|t|`` of
    the ``n_arms - 1`` comparisons with one control are multivariate t with correlation
    1/2); ``"all_pairs"``: Tukey's (the studentized range over ``sqrt 2``). Exact at every
    effect, including ``k = 2`` or 3 seeds where a bootstrap of 3 values is degenerate.

    Returns
    -------
    float
        ``c`` with ``P(max |T| <= c) = 1 - alpha``; the intervals are ``estimate +- c se``
        with ``se = sqrt(2 s_pooled**2 / k)``.
    """
    n_arms = check_int(n_arms, "n_arms", low=2)
    k = check_int(k, "k", low=2)
    alpha = check_alpha(alpha)
    check_choice(family, "family", ("many_to_one", "all_pairs"), owner="unpaired_exact_critical")
    df = n_arms * (k - 1)
    if family == "all_pairs" or n_arms == 2:
        return float(stats.studentized_range.ppf(1.0 - alpha, n_arms, df) / np.sqrt(2.0))
    m = n_arms - 1
    corr = np.full((m, m), 0.5) + 0.5 * np.eye(m)
    law = stats.multivariate_t(shape=corr, df=df, seed=np.random.default_rng(0))

    def inside(c):
        return law.cdf(np.full(m, c), lower_limit=np.full(m, -c)) - (1.0 - alpha)

    hi = float(stats.t.isf(alpha / (2.0 * m), df))       # Bonferroni: always >= Dunnett
    lo = float(stats.t.isf(alpha / 2.0, df))
    return float(optimize.brentq(inside, lo, hi, xtol=1e-6)) if inside(lo) < 0 else lo


def unpaired_exact_ci(scores, comparisons, alpha: float, family: str) -> SimultaneousCI:
    """Dunnett (many-to-one) or Tukey (all pairs) simultaneous intervals, vectorized.

    Parameters
    ----------
    scores : ndarray, shape (..., a, k)
        Per-seed metric of each arm (independent seeds, ``k`` per arm).
    comparisons : sequence of (int, int)
        ``(i, j)``: arm ``i`` minus arm ``j``; for ``"many_to_one"`` every ``j`` is the
        same control.
    alpha : float
    family : {"many_to_one", "all_pairs"}

    Returns
    -------
    SimultaneousCI
        Equal to ``scipy.stats.dunnett(...).confidence_interval()`` and
        ``scipy.stats.tukey_hsd(...).confidence_interval()``. A zero pooled variance gives
        NaN bounds (no variance estimate).
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim < 2 or x.shape[-1] < 2:
        raise fail("scores", "an array of shape (..., a, k) with k >= 2 seeds",
                   f"shape {x.shape}", owner="unpaired_exact_ci")
    comparisons = _comparisons_iv(comparisons, x.shape[-2])
    a, k = x.shape[-2:]
    c = unpaired_exact_critical(a, k, alpha, family)
    i = np.array([p[0] for p in comparisons])
    j = np.array([p[1] for p in comparisons])
    mean = x.mean(axis=-1)
    est = mean[..., i] - mean[..., j]
    pooled = x.var(axis=-1, ddof=1).mean(axis=-1, keepdims=True)
    se = np.sqrt(2.0 * pooled / k) * np.ones_like(est)
    se = np.where(se <= SE_RTOL * np.abs(x).max(axis=(-2, -1))[..., None], np.nan, se)
    return SimultaneousCI(est - c * se, est + c * se, np.asarray(c), "exact")


def unpaired_exact_unequal(groups, comparisons, levels, family: str, *, rng=None):
    """Dunnett's or Tukey-Kramer's single-step p and intervals for arms of unequal sizes.

    Parameters
    ----------
    groups : sequence of 1-D arrays
        Per-seed metric of each arm (independent seeds, any count >= 2 each).
    comparisons : sequence of (int, int)
        ``(i, j)``: arm ``i`` minus arm ``j``; for ``"many_to_one"`` every ``j`` is the
        same control.
    levels : sequence of float
        Confidence levels of the intervals wanted (e.g. ``[0.95, 0.90]``).
    family : {"many_to_one", "all_pairs"}
    rng : numpy.random.Generator or int, optional
        For ``scipy.stats.dunnett``'s randomized multivariate-t quadrature.

    Returns
    -------
    p : ndarray, shape (C,)
        ``scipy.stats.dunnett(...).pvalue`` or ``tukey_hsd(...).pvalue`` per comparison.
    intervals : list of (low, high)
        One pair of arrays per level, as ``confidence_interval(level)`` gives them. No
        variance at all (every arm constant up to rounding) gives NaN p and intervals
        (scipy would divide by 0).
    """
    check_choice(family, "family", ("many_to_one", "all_pairs"), owner="unpaired_exact_unequal")
    x = [np.asarray(v, dtype=float) for v in groups]
    comparisons = _comparisons_iv(comparisons, len(x))
    ks = [v.size for v in x]
    if min(ks) < 2:
        raise fail("groups", "arms of at least 2 seeds each", f"sizes {ks}",
                   owner="unpaired_exact_unequal")
    pooled = sum((k - 1) * v.var(ddof=1) for k, v in zip(ks, x)) / (sum(ks) - len(x))
    if np.sqrt(pooled) <= SE_RTOL * max(np.abs(v).max() for v in x):
        p = np.full(len(comparisons), np.nan)
        return p, [(p, p)] * len(levels)
    if family == "many_to_one":
        res = stats.dunnett(*[x[i] for i, _ in comparisons], control=x[comparisons[0][1]],
                            rng=np.random.default_rng(rng))
        return (np.asarray(res.pvalue, dtype=float),
                [(ci.low, ci.high) for ci in map(res.confidence_interval, levels)])
    res = stats.tukey_hsd(*x)
    return (np.array([res.pvalue[i, j] for i, j in comparisons], dtype=float),
            [(np.array([ci.low[i, j] for i, j in comparisons]),
              np.array([ci.high[i, j] for i, j in comparisons]))
             for ci in map(res.confidence_interval, levels)])

