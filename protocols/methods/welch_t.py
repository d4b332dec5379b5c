"""``welch_t``: unpaired Welch t-test on the per-seed metrics of the two arms."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from evalcal_core.designs import METHODS_INDEPENDENT, METHODS_PAIRED, MODELS, MODELS_CLUSTERED

from .._base import REPEATS_NOT_SEEDS, Protocol, register
from .._decisions import t_decision
from .._result import make_result


@register
@dataclass(frozen=True)
class WelchT(Protocol):
    """Welch's unequal-variance t-test, ignoring the pairing of seeds.

    The statistic and SE are ``scipy.stats.ttest_ind(variant, base, equal_var=False)``'s on
    the per-seed metrics (row means); the degrees of freedom are :func:`welch_df`'s, at most
    the Welch–Satterthwaite df (the p-value is scipy's where the two df agree).
    """

    name = "welch_t"
    summary = "unpaired Welch t-test on per-seed metrics"
    min_k = 2
    #: the reason under ``methods_paired``: valid there, conservative on positively
    #: correlated pairs, but it throws away what the pairing buys
    pitfall = "an unpaired test on paired seeds"
    valid_for = frozenset({METHODS_INDEPENDENT})
    pitfall_for = {METHODS_PAIRED: "an unpaired test on paired seeds: loses the power of "
                                   "pairing",
                   MODELS: REPEATS_NOT_SEEDS, MODELS_CLUSTERED: REPEATS_NOT_SEEDS}

    def _evaluate(self, batch, alpha, rng):
        p, lo, hi, sig, estimate = welch_decision(batch.seed_base, batch.seed_variant, alpha)
        return make_result(estimate, lo, hi, p, sig)


#: one-sided confidence of the variance bounds that :func:`welch_df` (and
#: ``paired_two_level``'s df) takes the Satterthwaite df at
DF_CONFIDENCE = 0.75


def upper_variance_bound(variance, df, confidence: float = DF_CONFIDENCE):
    """One-sided upper confidence bound of a variance estimated on ``df`` degrees of freedom.

    For a normal sample, ``df * s**2 / sigma**2`` is chi-square on ``df`` df, so
    ``s**2 * df / chi2.ppf(1 - confidence, df)`` is at least ``sigma**2`` with probability
    ``confidence``.

    Parameters
    ----------
    variance : ndarray
        Variance estimates (any squared unit; returned in the same unit).
    df : int or ndarray
        Their degrees of freedom (> 0).
    confidence : float
        One-sided confidence of the bound (fraction).

    Returns
    -------
    ndarray
        The bounds, ``variance * df / chi2.ppf(1 - confidence, df)``.
    """
    return np.asarray(variance, dtype=float) * df / stats.chi2.ppf(1.0 - confidence, df)


def uses_hsu_df(k_base: int, k_variant: int) -> bool:
    """Whether Welch's test takes Hsu's df ``min(k) - 1`` instead of the estimated one.

    With an arm of 2 seeds, or of 3 seeds beside a larger arm, even :func:`welch_df`'s
    bounded df over-rejects (up to 5.6% at alpha = 5% with 2 seeds beside 10-40; the
    plain Welch-Satterthwaite df: 6.0-12.4%, 200,000 normal experiments per cell). Hsu's
    df is never above the estimated one, so the test is conservative for normal arms at
    every variance ratio.
    """
    small = min(k_base, k_variant)
    return small == 2 or (small == 3 and k_base != k_variant)


def _satterthwaite(vb, vv, kb, kv):
    with np.errstate(divide="ignore", invalid="ignore"):
        return (vb + vv) ** 2 / (vb**2 / (kb - 1) + vv**2 / (kv - 1))


def welch_df(var_base, var_variant, k_base: int, k_variant: int):
    """Degrees of freedom of Welch's t: Satterthwaite's, bounded, or Hsu's.

    The plug-in Welch-Satterthwaite df ``(v_b + v_v)**2 / (v_b**2 / (k_b - 1) + v_v**2 /
    (k_v - 1))`` errs together with the SE: where the arm with few seeds happens to have a
    small sample variance, the SE is too small *and* the df too large (it moves toward
    the other arm's). With 4 seeds beside 10-40 that gives 6.0-6.3% false rejections at
    alpha = 5%, worst near equal variances (200,000 normal experiments per cell, sd ratio
    1/10 to 10). So each arm's variance is also taken at its one-sided 75% upper confidence
    bound (:func:`upper_variance_bound`, :data:`DF_CONFIDENCE`) and the df is the least of
    the plug-in one and the two it gives so: 4.9-5.2% there, and never below Hsu's
    ``min(k) - 1`` (a two-term Satterthwaite df is at least the smaller term's df).
    Where :func:`uses_hsu_df` it is Hsu's.

    Parameters
    ----------
    var_base, var_variant : ndarray, shape (...)
        Squared standard errors of the two arms' means (sample variance / k).
    k_base, k_variant : int
        Seeds per arm (>= 2).

    Returns
    -------
    ndarray, shape (...)
        The df (NaN where both variances are 0: no variance estimate).
    """
    vb = np.asarray(var_base, dtype=float)
    vv = np.asarray(var_variant, dtype=float)
    if uses_hsu_df(k_base, k_variant):
        return np.full(np.broadcast(vb, vv).shape, float(min(k_base, k_variant) - 1))
    plug_in = _satterthwaite(vb, vv, k_base, k_variant)
    base_high = _satterthwaite(upper_variance_bound(vb, k_base - 1), vv, k_base, k_variant)
    variant_high = _satterthwaite(vb, upper_variance_bound(vv, k_variant - 1), k_base,
                                  k_variant)
    # np.minimum keeps a 0/0 NaN (no variance estimate): t_decision decides there.
    return np.minimum(plug_in, np.minimum(base_high, variant_high))


def welch_decision(base, variant, alpha: float):
    """Welch's t test and CI on per-seed metrics of possibly unequal seed counts.

    Parameters
    ----------
    base : ndarray, shape (..., k_b)
    variant : ndarray, shape (..., k_v)
        Per-seed metrics (fractions or metric units), independent seeds, ``k >= 2`` each.
    alpha : float
        Two-sided level.

    Returns
    -------
    p_value, ci_low, ci_high, significant, estimate : ndarray, shape (...)
        The Welch t statistic and SE of ``scipy.stats.ttest_ind(variant, base,
        equal_var=False)`` on :func:`welch_df`'s degrees of freedom (at most scipy's). No
        variance estimate (both arms constant up to rounding): p and CI NaN, as
        :func:`protocols._decisions.t_decision` decides.
    """
    mb = np.asarray(base, dtype=float)
    mv = np.asarray(variant, dtype=float)
    kb, kv = mb.shape[-1], mv.shape[-1]
    vb = mb.var(axis=-1, ddof=1) / kb
    vv = mv.var(axis=-1, ddof=1) / kv
    estimate = mv.mean(axis=-1) - mb.mean(axis=-1)
    df = welch_df(vb, vv, kb, kv)
    p, lo, hi, sig = t_decision(estimate, np.sqrt(vb + vv), df, alpha,
                                np.maximum(np.abs(mb).max(axis=-1), np.abs(mv).max(axis=-1)))
    return p, lo, hi, sig, estimate
