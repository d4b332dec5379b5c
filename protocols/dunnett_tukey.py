"""Exact single-step simultaneous intervals for independent seeds: Dunnett (many-to-one) and
Tukey (all pairs).

Normal arms with a common variance: the intervals are exact at every effect, including 2 or 3
seeds per arm where a bootstrap of 3 values is degenerate; arms of unequal sizes go through
``scipy.stats.dunnett`` and ``scipy.stats.tukey_hsd`` (Tukey-Kramer).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from evalcal_core.validate import check_alpha, check_choice, check_int, fail

from ._decisions import SE_RTOL
from .multiplicity import SimultaneousCI, _comparisons_iv


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
                   owner="unpaired_exact_ci", got=f"shape {x.shape}")
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
