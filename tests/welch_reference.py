"""Reference for ``welch_t`` and the unpaired comparisons: scipy's Welch statistic, with
Hsu's df ``min(k_b, k_v) - 1`` where an arm has 2 seeds or 3 beside a larger arm
(:func:`protocols.methods.welch_t.uses_hsu_df` documents why)."""

from __future__ import annotations

import numpy as np
from scipy import stats


def welch_reference(variant, base, alpha):
    """``(p, ci_low, ci_high)`` of Welch's t on ``variant - base`` along the last axis."""
    variant = np.asarray(variant, dtype=float)
    base = np.asarray(base, dtype=float)
    ref = stats.ttest_ind(variant, base, axis=-1, equal_var=False)
    kv, kb = variant.shape[-1], base.shape[-1]
    small = min(kv, kb)
    if not (small == 2 or (small == 3 and kv != kb)):
        ci = ref.confidence_interval(1.0 - alpha)
        return ref.pvalue, ci.low, ci.high
    df = min(kv, kb) - 1
    estimate = variant.mean(axis=-1) - base.mean(axis=-1)
    se = np.sqrt(variant.var(axis=-1, ddof=1) / kv + base.var(axis=-1, ddof=1) / kb)
    half = stats.t.isf(alpha / 2, df) * se
    return 2 * stats.t.sf(np.abs(ref.statistic), df), estimate - half, estimate + half
