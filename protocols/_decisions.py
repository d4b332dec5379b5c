"""Turn an estimate and its standard error into a p-value, a CI and a decision.

Shared by the z- and t-based protocols. A zero standard error means the test has no
variance estimate (identical arms, constant deltas, binary per-seed metrics that happen to
agree). With a zero estimate that is no difference at all: p = 1 and CI [0, 0]. With a
non-zero estimate there is no evidence either way: p = NaN, CI NaN and "not significant".
This departs from scipy (1.17), whose ``ttest_rel``/``ttest_ind`` give t = inf and p = 0
there: calling it p = 0, the limit of a vanishing SE, gave ``paired_t`` and ``welch_t`` a
12.5% false-positive rate at k = 2 on binary per-seed metrics. ``make_result`` marks such
experiments ``degenerate``.

"Zero" is relative to the data's scale, not exact: per-seed deltas that are equal on paper
come out of floating point unequal (seeds 0.81/0.83/0.85 against 0.82/0.84/0.86 give deltas
whose sd is 6.4e-17, not 0), and a t statistic of 0.01 / 3.7e-17 is rounding, not evidence.
A standard error at most :data:`SE_RTOL` times ``max(|estimate|, scale)`` (``scale``: the
magnitude of the numbers the variance was computed from) counts as no variance estimate,
and an estimate at most ``SE_RTOL * scale`` as a zero estimate.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

#: a standard error at most this fraction of the data's scale is rounding, not variance
#: (4,500 float64 epsilons: far above the rounding of a mean or a difference of means, far
#: below any real spread of scores that are themselves rounded to a few digits)
SE_RTOL = 1e-12


def _no_variance_estimate(estimate, se, p, half_width, scale):
    scale = 0.0 if scale is None else np.abs(np.asarray(scale, dtype=float))
    zero_estimate = np.abs(estimate) <= SE_RTOL * scale
    zero_se = se <= SE_RTOL * np.maximum(np.abs(estimate), scale)
    p = np.where(zero_se, np.where(zero_estimate, 1.0, np.nan), p)
    half_width = np.where(zero_se, np.where(zero_estimate, 0.0, np.nan), half_width)
    return p, half_width


def data_scale(*arrays):
    """Largest ``|value|`` of each experiment over the arrays' last axis, shape ``(...)``:
    the ``scale`` a spread computed from these values is judged against."""
    return np.max([np.abs(a).max(axis=-1) for a in arrays], axis=0)


def z_decision(estimate, se, alpha, scale=None):
    """Two-sided normal test and Wald CI.

    Parameters
    ----------
    estimate, se : ndarray
        Estimate and its standard error (same units, e.g. fraction).
    alpha : float
        Two-sided level.
    scale : ndarray or float, optional
        Magnitude of the data the SE was computed from (e.g. the largest |score|); ``None``
        judges the SE against ``|estimate|`` alone.

    Returns
    -------
    p_value, ci_low, ci_high, significant : ndarray
        No variance estimate (``se <= SE_RTOL * max(|estimate|, scale)``): p = 1 and the CI
        the estimate itself for a zero estimate; p and CI NaN, not significant, otherwise.
    """
    estimate = np.asarray(estimate, dtype=float)
    se = np.asarray(se, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(estimate) / se
    p = 2.0 * special.ndtr(-z)
    half = special.ndtri(1.0 - alpha / 2.0) * se
    p, half = _no_variance_estimate(estimate, se, p, half, scale)
    with np.errstate(invalid="ignore"):
        return p, estimate - half, estimate + half, p < alpha


def t_decision(estimate, se, df, alpha, scale=None):
    """Two-sided Student t test and t CI, as ``scipy.stats.ttest_*`` compute them.

    Parameters
    ----------
    estimate, se : ndarray
        Estimate and its standard error.
    df : ndarray or float
        Degrees of freedom (may be fractional, as in Welch's test).
    alpha : float
        Two-sided level.
    scale : ndarray or float, optional
        As in :func:`z_decision`.

    Returns
    -------
    p_value, ci_low, ci_high, significant : ndarray
        No variance estimate: as :func:`z_decision`.
    """
    estimate = np.asarray(estimate, dtype=float)
    se = np.asarray(se, dtype=float)
    df = np.asarray(df, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(estimate) / se
        # Where se = 0 the Welch df is 0/0; any finite df works, the zero-SE rule overrides
        # p and CI.
        df = np.where(np.isfinite(df) & (df > 0), df, 1.0)
    p = 2.0 * stats.t.sf(t, df)
    half = stats.t.ppf(1.0 - alpha / 2.0, df) * se
    p, half = _no_variance_estimate(estimate, se, p, half, scale)
    with np.errstate(invalid="ignore"):
        return p, estimate - half, estimate + half, p < alpha
