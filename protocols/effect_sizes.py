"""Effect sizes of a paired comparison, with confidence intervals.

* :func:`mean_difference` — ``variant - base`` in the metric's units (the paired t CI of
  ``paired_t``, via :func:`protocols._decisions.t_decision`).
* :func:`relative_error_reduction` — ``(err_base - err_variant) / err_base`` for accuracies
  (fraction of the baseline's errors removed), delta-method t CI.
* :func:`cohens_dz` — the standardized paired effect ``d_z = mean(d) / sd(d)`` with the CI
  from inverting the noncentral t law of ``sqrt(k) d_z`` (exact for normal deltas).
* :func:`cohens_dz_from_mean_ci` — ``d_z`` of clustered per-question deltas with the CI of
  the mean difference that a cluster-robust test gives, divided by ``sd(d)``.

All take per-seed arrays with seeds on the last axis and leading batch axes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.optimize import elementwise

from evalcal_core.validate import check_alpha, fail

from ._decisions import SE_RTOL, t_decision

#: fewer seeds than this and d_z is noted as very imprecise
DZ_MIN_K = 10

#: baseline error (fraction) below which the relative error reduction is noted as unstable
NEAR_ZERO_ERROR = 0.01

NOTE_DZ_SMALL_K = "k < 10: d_z is very imprecise"
NOTE_DZ_NO_VARIANCE = ("d_z: no variance estimate where the deltas are equal up to "
                       "rounding (d_z and its CI NaN)")
NOTE_DZ_CLUSTERED = ("d_z interval: the cluster-robust CI of the mean difference divided by "
                     "the sd of the per-question deltas (the sd taken as known)")
NOTE_ERROR_NEAR_ZERO = ("baseline error is ~0 (< 1 pp): the relative error reduction is "
                        "unstable; report the difference in pp instead")


@dataclass(frozen=True)
class EffectSize:
    """An effect size with its two-sided CI.

    Attributes
    ----------
    name : str
        ``"difference"`` (metric units), ``"relative_error_reduction"`` (fraction of the
        baseline's errors) or ``"d_z"`` (unitless).
    estimate, ci_low, ci_high : ndarray, shape (...)
    level : float
        Confidence level of the CI (``1 - alpha``).
    note : str
        Caveats for the whole batch (``""`` when none).
    """

    name: str
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    level: float
    note: str = ""


def _seeds_iv(x, name, owner):
    x = np.asarray(x, dtype=float)
    if x.ndim < 1 or x.shape[-1] < 2:
        raise fail(name, "an array with at least 2 seeds on its last axis", owner=owner,
                   got=f"shape {x.shape}")
    return x


def mean_difference(deltas, alpha: float = 0.05) -> EffectSize:
    """Mean of per-seed deltas with the paired t CI (``paired_t``'s), metric units."""
    alpha = check_alpha(alpha)
    d = _seeds_iv(deltas, "deltas", "mean_difference")
    k = d.shape[-1]
    est = d.mean(axis=-1)
    _, lo, hi, _ = t_decision(est, d.std(axis=-1, ddof=1) / math.sqrt(k), k - 1, alpha)
    return EffectSize("difference", est, lo, hi, 1.0 - alpha)


def relative_error_reduction(base, variant, alpha: float = 0.05) -> EffectSize:
    """Share of the baseline's errors the variant removes, ``(err_b - err_v) / err_b``.

    With paired per-seed accuracies (fractions) ``err = 1 - accuracy`` and the ratio of
    means ``R = mean(err_b - err_v) / mean(err_b)``; the CI is ``R +- t_{k-1} se`` with the
    delta-method SE ``sd(u) / sqrt(k)``, ``u_i = (d_i - R err_b_i) / mean(err_b)``.

    Parameters
    ----------
    base, variant : ndarray, shape (..., k)
        Per-seed accuracies (fractions), paired by seed.

    Returns
    -------
    EffectSize
        NaN where the baseline makes no errors; a note when its error is below
        :data:`NEAR_ZERO_ERROR` (1 pp) anywhere in the batch.
    """
    alpha = check_alpha(alpha)
    b = _seeds_iv(base, "base", "relative_error_reduction")
    v = _seeds_iv(variant, "variant", "relative_error_reduction")
    if b.shape != v.shape:
        raise fail("variant", f"an array of the base's shape {b.shape}",
                   owner="relative_error_reduction", got=f"shape {v.shape}")
    k = b.shape[-1]
    err_b = 1.0 - b
    d = v - b                     # = err_b - err_v
    mean_err = err_b.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(mean_err > 0, d.mean(axis=-1) / mean_err, np.nan)
        u = (d - ratio[..., None] * err_b) / mean_err[..., None]
    se = u.std(axis=-1, ddof=1) / math.sqrt(k)
    half = stats.t.isf(alpha / 2.0, k - 1) * se
    note = NOTE_ERROR_NEAR_ZERO if np.any(mean_err < NEAR_ZERO_ERROR) else ""
    return EffectSize("relative_error_reduction", ratio, ratio - half, ratio + half,
                      1.0 - alpha, note)


#: above ``t**2 > ASYMPTOTIC_T2 * (df + 1)`` the noncentrality is solved from the large-t
#: expansion (:func:`_nc_where_cdf_is_large_t`): its error there is below 1e-8 in the cdf,
#: while scipy's ``nct.cdf`` returns NaN from t ~ 1e5 (d_z ~ 3e4 at k = 10)
ASYMPTOTIC_T2 = 1e4


def _nc_where_cdf_is_large_t(t, df, target):
    """Noncentrality with ``nct.cdf(t, df, nc) = target`` for large ``|t|``, closed form.

    ``T = (Z + nc) / W`` with ``W = sqrt(V / df)``, ``V`` chi-square(df), so
    ``P(T <= t) = E Phi(t (W - u))`` with ``u = nc / t`` (t > 0). Expanding the smooth
    density of ``W`` around ``u`` (the odd part of ``Phi(x) - 1[x > 0]`` integrates to 0,
    and ``int x (Phi(x) - 1[x > 0]) dx = -1/2``)::

        P(T <= t) = P(W > u) - f_W'(u) / (2 t**2) + O(t**-4),
        f_W'(u) / f_W(u) = (df - 1) / u - df u

    The leading term gives ``u0 = sqrt(chi2.isf(target, df) / df)`` and one Newton step on
    the correction ``u = u0 - ((df - 1) / u0 - df u0) / (2 t**2)``. Negative ``t`` by the
    symmetry ``nct.cdf(t, df, nc) = 1 - nct.cdf(-t, df, -nc)``.
    """
    sign = np.where(t < 0, -1.0, 1.0)
    # for t < 0 solve nct.cdf(|t|, df, -nc) = 1 - target and flip
    q = np.where(t < 0, 1.0 - target, target)
    u0 = np.sqrt(stats.chi2.isf(q, df) / df)
    u = u0 - ((df - 1.0) / u0 - df * u0) / (2.0 * t**2)
    return sign * np.abs(t) * u


def _nc_where_cdf_is(t, df, target):
    """Noncentrality ``nc`` with ``nct.cdf(t, df, nc) = target`` (arrays), NaN if unsolved."""
    large = t**2 > ASYMPTOTIC_T2 * (df + 1.0)

    # nct.cdf(t, df, nc) falls from 1 to 0 as nc grows: bracket, then solve, elementwise
    def f(nc, t, df, target):
        # scipy's nct.cdf returns NaN where it underflows far in a tail (e.g. df = 2,
        # t = -3, nc = 9): 0 there above t, 1 below
        cdf = stats.nct.cdf(t, df, nc)
        return np.where(np.isnan(cdf), np.where(nc > t, 0.0, 1.0), cdf) - target

    # the large-t cases are solved in closed form; give the solver a harmless t there
    t_small = np.where(large, 0.0, t)
    bracket = elementwise.bracket_root(f, t_small - 1.0, t_small + 1.0,
                                       args=(t_small, df, target))
    res = elementwise.find_root(f, bracket.bracket, args=(t_small, df, target),
                                tolerances={"xatol": 1e-12, "xrtol": 1e-13})
    small = np.where(bracket.success & res.success, res.x, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        asymptotic = _nc_where_cdf_is_large_t(t, df, target)
    return np.where(large, asymptotic, small)


def _dz_point(d, scale, owner):
    """``mean(d) / sd(d)`` over the last axis, NaN where the sd is rounding (the rule of
    :mod:`protocols._decisions`: ``sd / sqrt(k) <= SE_RTOL * max(|mean|, scale)``, so d_z
    has no value exactly where ``paired_t`` has no variance estimate)."""
    k = d.shape[-1]
    magnitude = np.abs(d).max(axis=-1)
    if scale is not None:
        scale = np.asarray(scale, dtype=float)
        if not np.all(np.isfinite(scale)):
            raise fail("scale", "finite magnitudes of the scores", "a non-finite value",
                       owner)
        magnitude = np.maximum(magnitude, np.abs(scale))
    mean = d.mean(axis=-1)
    sd = d.std(axis=-1, ddof=1)
    no_variance = sd / math.sqrt(k) <= SE_RTOL * np.maximum(np.abs(mean), magnitude)
    with np.errstate(divide="ignore", invalid="ignore"):
        dz = np.where(no_variance, np.nan, mean / sd)
    return dz, sd, no_variance


def cohens_dz(deltas, alpha: float = 0.05, *, scale=None) -> EffectSize:
    """Standardized paired effect ``d_z = mean(d) / sd(d)`` (``ddof = 1``), unitless.

    ``sqrt(k) d_z`` is the paired t statistic, noncentral t with ``k - 1`` df and
    noncentrality ``sqrt(k) delta_z`` for normal deltas; the CI holds the ``delta_z`` whose
    law puts the observed t inside its central ``1 - alpha`` (Steiger & Fouladi 1997).
    For very large ``t`` (``t**2 > 1e4 (k)``) the inversion uses the large-t expansion of
    the noncentral t (:func:`_nc_where_cdf_is_large_t`), where scipy's ``nct.cdf`` fails
    (NaN from d_z ~ 3e4 at k = 10, which printed a point interval). The inversion is
    solved for the whole batch at once (``scipy.optimize.elementwise``):
    pass the deltas of many comparisons stacked on a leading axis rather than one call
    each.

    Parameters
    ----------
    deltas : ndarray, shape (..., k)
        Per-seed deltas.
    alpha : float, default 0.05
        Two-sided level; the CI has level ``1 - alpha``.
    scale : ndarray or float, optional, shape (...)
        Magnitude of the scores the deltas were computed from (e.g. the largest |score|,
        fraction); the sd is judged against it as well as against the deltas' own
        magnitude. Pass it when the deltas are small differences of larger scores.

    Returns
    -------
    EffectSize
        Notes ``"k < 10: d_z is very imprecise"`` for fewer than 10 seeds. Where the deltas
        are equal up to rounding (``sd / sqrt(k) <= SE_RTOL * max(|mean|, scale)``, the rule
        of :mod:`protocols._decisions`) there is no variance estimate: estimate and CI NaN,
        and :data:`NOTE_DZ_NO_VARIANCE`.
    """
    alpha = check_alpha(alpha)
    d = _seeds_iv(deltas, "deltas", "cohens_dz")
    k = d.shape[-1]
    dz, _, no_variance = _dz_point(d, scale, "cohens_dz")
    t = np.sqrt(k) * dz
    ok = np.isfinite(t)
    t_ok = np.where(ok, t, 0.0)
    df = np.full_like(t_ok, k - 1.0)
    lo = _nc_where_cdf_is(t_ok, df, np.full_like(t_ok, 1.0 - alpha / 2.0)) / math.sqrt(k)
    hi = _nc_where_cdf_is(t_ok, df, np.full_like(t_ok, alpha / 2.0)) / math.sqrt(k)
    lo, hi = np.where(ok, lo, np.nan), np.where(ok, hi, np.nan)
    notes = [NOTE_DZ_SMALL_K] if k < DZ_MIN_K else []
    if np.any(no_variance):
        notes.append(NOTE_DZ_NO_VARIANCE)
    return EffectSize("d_z", dz, lo, hi, 1.0 - alpha, "; ".join(notes))


def cohens_dz_from_mean_ci(deltas, mean_ci_low, mean_ci_high, alpha: float = 0.05, *,
                           scale=None) -> EffectSize:
    """``d_z`` of clustered per-question deltas, with a cluster-aware interval.

    The noncentral t interval of :func:`cohens_dz` treats the questions as independent;
    with clustered questions it is too narrow. Here the interval is the caller's
    cluster-robust CI of the mean difference (e.g. ``cluster_cr2``'s ``ci_low``,
    ``ci_high`` at the same ``alpha``) divided by ``sd(d)`` of the per-question deltas. The
    sd is treated as known: its relative error is of order ``1 / sqrt(2 n)`` over ``n``
    questions, small beside the mean's uncertainty with few clusters; the price is that
    the interval is as wide as the mean's and no wider. Because ``sd > 0`` it excludes 0
    exactly when the cluster-robust CI does, so the effect size never contradicts the
    cluster-robust verdict.

    Parameters
    ----------
    deltas : ndarray, shape (..., n)
        Per-question deltas (variant minus base, the metric's units), questions on the last
        axis.
    mean_ci_low, mean_ci_high : ndarray or float, shape (...)
        Two-sided ``1 - alpha`` CI of ``mean(deltas)`` from a cluster-robust method (same
        units as the deltas); NaN where that method has no verdict.
    alpha : float, default 0.05
        The level the CI was computed at (recorded in ``level``).
    scale : ndarray or float, optional
        As in :func:`cohens_dz`.

    Returns
    -------
    EffectSize
        ``d_z`` and ``[mean_ci_low, mean_ci_high] / sd(d)`` (unitless); NaN where the deltas
        have no variance estimate or the CI is NaN. Note :data:`NOTE_DZ_CLUSTERED`.
    """
    alpha = check_alpha(alpha)
    owner = "cohens_dz_from_mean_ci"
    d = _seeds_iv(deltas, "deltas", owner)
    lo = np.asarray(mean_ci_low, dtype=float)
    hi = np.asarray(mean_ci_high, dtype=float)
    for name, bound in (("mean_ci_low", lo), ("mean_ci_high", hi)):
        if bound.shape != d.shape[:-1]:
            raise fail(name, f"an array of the deltas' batch shape {d.shape[:-1]}",
                       owner=owner, got=f"shape {bound.shape}")
    if np.any(lo > hi):
        bad = np.argmax(lo > hi)
        raise fail("mean_ci_low", "at most mean_ci_high",
                   f"{lo.flat[bad]:g} above {hi.flat[bad]:g}", owner)
    dz, sd, no_variance = _dz_point(d, scale, owner)
    with np.errstate(divide="ignore", invalid="ignore"):
        dz_lo = np.where(no_variance, np.nan, lo / sd)
        dz_hi = np.where(no_variance, np.nan, hi / sd)
    notes = [NOTE_DZ_CLUSTERED] + ([NOTE_DZ_NO_VARIANCE] if np.any(no_variance) else [])
    return EffectSize("d_z", dz, dz_lo, dz_hi, 1.0 - alpha, "; ".join(notes))
