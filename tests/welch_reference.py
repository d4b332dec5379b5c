"""Reference for ``welch_t`` and the unpaired comparisons: scipy's Welch statistic and SE on
the df rule of :func:`protocols.methods.welch_t.welch_df`, written out here from its
definition: the Welch-Satterthwaite df, at most the one with either arm's variance at its
one-sided 75% upper chi-square bound; Hsu's ``min(k_b, k_v) - 1`` where an arm has 2 seeds
or 3 beside a larger arm (:func:`protocols.methods.welch_t.uses_hsu_df` documents why)."""

from __future__ import annotations

import numpy as np
from scipy import stats


def _satterthwaite(v1, v2, k1, k2):
    return (v1 + v2) ** 2 / (v1**2 / (k1 - 1) + v2**2 / (k2 - 1))


def welch_reference_df(variant, base):
    """The df of :func:`welch_reference` (along the last axis)."""
    variant = np.asarray(variant, dtype=float)
    base = np.asarray(base, dtype=float)
    kv, kb = variant.shape[-1], base.shape[-1]
    vv = variant.var(axis=-1, ddof=1) / kv
    vb = base.var(axis=-1, ddof=1) / kb
    small = min(kv, kb)
    if small == 2 or (small == 3 and kv != kb):
        return np.full(np.shape(vv), float(small - 1))

    def high(v, k):
        return v * (k - 1) / stats.chi2.ppf(0.25, k - 1)

    return np.minimum(_satterthwaite(vv, vb, kv, kb),
                      np.minimum(_satterthwaite(high(vv, kv), vb, kv, kb),
                                 _satterthwaite(vv, high(vb, kb), kv, kb)))


def welch_reference(variant, base, alpha):
    """``(p, ci_low, ci_high)`` of Welch's t on ``variant - base`` along the last axis."""
    variant = np.asarray(variant, dtype=float)
    base = np.asarray(base, dtype=float)
    ref = stats.ttest_ind(variant, base, axis=-1, equal_var=False)
    df = welch_reference_df(variant, base)
    se = np.sqrt(variant.var(axis=-1, ddof=1) / variant.shape[-1]
                 + base.var(axis=-1, ddof=1) / base.shape[-1])
    estimate = variant.mean(axis=-1) - base.mean(axis=-1)
    half = stats.t.isf(alpha / 2, df) * se
    return 2 * stats.t.sf(np.abs(ref.statistic), df), estimate - half, estimate + half
