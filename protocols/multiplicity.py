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

The joint null comes from :mod:`protocols.joint_null` (paired sign flips, an unpaired
bootstrap of centred arms, or the asymptotic normal law of many units). Claims at margins
decided by one-sided max-T are :mod:`protocols.maxt_claims`; the exact single-step intervals
of independent arms (Dunnett, Tukey) :mod:`protocols.dunnett_tukey`.

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
                   f"{obs.shape}", got=f"shape {null.shape}")
    if weights is not None:
        weights = np.asarray(weights, dtype=float)
        if weights.shape != (null.shape[-2],) or np.any(weights < 0):
            raise fail("weights", f"non-negative probabilities of the {null.shape[-2]} "
                       "resamples", got=f"shape {weights.shape}")
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


def simultaneous_ci(joint, alpha: float = 0.05, *, method: str = "maxt") -> SimultaneousCI:
    """Simultaneous ``1 - alpha`` intervals ``estimate +- c * se`` for all comparisons.

    ``"maxt"``: ``c`` is the larger of two max-|t| quantiles (:func:`maxt_critical`): that
    of ``joint.null`` and that of ``joint.pivot`` (when given), ``joint`` a
    :class:`protocols.joint_null.JointNull`.

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


def maxt_adjust(joint, *, stepdown: bool = True) -> np.ndarray:
    """Max-T adjusted p-values of a :class:`protocols.joint_null.JointNull` (step-down unless
    told otherwise)."""
    f = maxt_stepdown if stepdown else maxt_singlestep
    return f(joint.observed, joint.null, weights=joint.weights)
