"""Effect sizes of a paired comparison, with confidence intervals.

* :func:`mean_difference` — ``variant - base`` in the metric's units (the paired t CI of
  ``paired_t``, via :func:`protocols._decisions.t_decision`).
* :func:`relative_error_reduction` — ``(err_base - err_variant) / err_base`` for accuracies
  (fraction of the baseline's errors removed), delta-method t CI.
* :func:`cohens_dz` — the standardized paired effect ``d_z = mean(d) / sd(d)`` with the CI
  from inverting the noncentral t law of ``sqrt(k) d_z`` (exact for normal deltas).

All take per-seed arrays with seeds on the last axis and leading batch axes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.optimize import elementwise

from evalcal_core.validate import check_alpha, fail

from ._decisions import t_decision

#: fewer seeds than this and d_z is noted as very imprecise
DZ_MIN_K = 10

#: baseline error (fraction) below which the relative error reduction is noted as unstable
NEAR_ZERO_ERROR = 0.01

NOTE_DZ_SMALL_K = "k < 10: d_z is very imprecise"
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
        raise fail(name, "an array with at least 2 seeds on its last axis", f"shape {x.shape}",
                   owner)
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
        raise fail("variant", f"an array of the base's shape {b.shape}", f"shape {v.shape}",
                   "relative_error_reduction")
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


def _nc_where_cdf_is(t, df, target):
    # nct.cdf(t, df, nc) falls from 1 to 0 as nc grows: bracket, then solve, elementwise
    def f(nc, t, df, target):
        # scipy's nct.cdf returns NaN where it underflows far in a tail (e.g. df = 2,
        # t = -3, nc = 9): 0 there above t, 1 below
        cdf = stats.nct.cdf(t, df, nc)
        return np.where(np.isnan(cdf), np.where(nc > t, 0.0, 1.0), cdf) - target

    bracket = elementwise.bracket_root(f, t - 1.0, t + 1.0, args=(t, df, target))
    res = elementwise.find_root(f, bracket.bracket, args=(t, df, target),
                                tolerances={"xatol": 1e-12, "xrtol": 1e-13})
    return np.where(bracket.success & res.success, res.x, np.nan)


def cohens_dz(deltas, alpha: float = 0.05) -> EffectSize:
    """Standardized paired effect ``d_z = mean(d) / sd(d)`` (``ddof = 1``), unitless.

    ``sqrt(k) d_z`` is the paired t statistic, noncentral t with ``k - 1`` df and
    noncentrality ``sqrt(k) delta_z`` for normal deltas; the CI holds the ``delta_z`` whose
    law puts the observed t inside its central ``1 - alpha`` (Steiger & Fouladi 1997).

    Parameters
    ----------
    deltas : ndarray, shape (..., k)
        Per-seed deltas.

    Returns
    -------
    EffectSize
        Notes ``"k < 10: d_z is very imprecise"`` for fewer than 10 seeds; NaN (estimate
        and CI) where all deltas are equal.
    """
    alpha = check_alpha(alpha)
    d = _seeds_iv(deltas, "deltas", "cohens_dz")
    k = d.shape[-1]
    sd = d.std(axis=-1, ddof=1)
    constant = np.ptp(d, axis=-1) == 0     # sd is rounding noise there, not 0
    with np.errstate(divide="ignore", invalid="ignore"):
        dz = np.where(constant, np.nan, d.mean(axis=-1) / sd)
    t = np.sqrt(k) * dz
    ok = np.isfinite(t)
    t_ok = np.where(ok, t, 0.0)
    df = np.full_like(t_ok, k - 1.0)
    lo = _nc_where_cdf_is(t_ok, df, np.full_like(t_ok, 1.0 - alpha / 2.0)) / math.sqrt(k)
    hi = _nc_where_cdf_is(t_ok, df, np.full_like(t_ok, alpha / 2.0)) / math.sqrt(k)
    lo, hi = np.where(ok, lo, np.nan), np.where(ok, hi, np.nan)
    note = NOTE_DZ_SMALL_K if k < DZ_MIN_K else ""
    return EffectSize("d_z", dz, lo, hi, 1.0 - alpha, note)
