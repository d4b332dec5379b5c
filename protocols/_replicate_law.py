"""The law of a z-bootstrap's replicate mean and standard deviation, without the replicates.

The z-bootstrap protocols (``question_bootstrap``, ``paired_question_bootstrap``,
``run_bootstrap``, ``run_bootstrap_sqrt_b``) use their ``B`` replicates only through two
summaries: the replicates' standard deviation (the SE) and, for the run bootstrap, their mean
(the estimate). Given the data, the replicates are independent and identically distributed,
and their mean ``mu``, variance ``sigma**2`` and fourth cumulant ``kappa4`` follow exactly
from the data (:func:`question_mean_law`, :func:`run_pick_law`). With
``replicates="summary"`` a protocol draws the two summaries from their large-B law instead
of drawing ``B`` replicates (O(1) random numbers per experiment instead of O(B k)):

* the mean of B replicates is Normal(mu, sigma**2 / B) (its skewness is that of one replicate
  divided by sqrt(B));
* the variance of B replicates (ddof 1) is unbiased for ``sigma**2`` and has variance
  ``2 sigma**4 / (B - 1) + kappa4 / B`` exactly; it is drawn from the gamma law with that
  mean and variance (for normal replicates that gamma is exactly ``sigma**2
  chi2_{B-1} / (B - 1)``, and the two summaries are then independent).

This is a calibration device, for the many thousands of experiments of a simulation: the
rejection rate it gives is the protocol's rate (``tests/protocols/test_replicate_law.py``
compares both against drawn replicates), but a single experiment's decision differs from
the one its drawn replicates would give, as two rng seeds' decisions differ. Experiments
whose replicate law is far from normal (standardised excess kurtosis above
:data:`MAX_EXCESS_KURTOSIS`: a handful of questions, or a handful that differ) or
degenerate (``sigma = 0``) are resampled as usual.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.validate import check_choice

#: the choices of a z-bootstrap protocol's ``replicates`` parameter
REPLICATE_MODES = ("drawn", "summary")

#: largest |kappa4 / sigma**4| of one replicate for which the summary law is used: the
#: replicate is then within a few per cent of normal in its fourth moment (real pools with
#: thousands of questions are near 1e-3)
MAX_EXCESS_KURTOSIS = 0.05


def check_replicates(value, owner: str) -> str:
    """``value`` if it is one of :data:`REPLICATE_MODES`, else ``ValueError``."""
    return check_choice(value, "replicates", REPLICATE_MODES, owner)


@dataclass(frozen=True)
class ReplicateLaw:
    """Mean, variance and fourth cumulant of one bootstrap replicate, per experiment.

    Attributes
    ----------
    mean, var, kappa4 : ndarray, shape (...)
        In the units of the replicate (fraction), its square and its fourth power.
    """

    mean: np.ndarray
    var: np.ndarray
    kappa4: np.ndarray

    def __sub__(self, other: ReplicateLaw) -> ReplicateLaw:
        # The law of X - Y for independent X, Y (the two arms resample independently).
        return ReplicateLaw(self.mean - other.mean, self.var + other.var,
                            self.kappa4 + other.kappa4)


def _central_moments(values, axis):
    mean = values.mean(axis=axis, keepdims=True)
    dev2 = (values - mean) ** 2
    return mean.squeeze(axis), dev2.mean(axis=axis), (dev2**2).mean(axis=axis)


def question_mean_law(values) -> ReplicateLaw:
    """Law of the mean of ``n`` values drawn with replacement from ``values`` (the question
    bootstrap of one arm, or of the paired differences).

    Parameters
    ----------
    values : ndarray, shape (..., n)
        Per-question values (fraction).

    Returns
    -------
    ReplicateLaw
        ``mean(values)``, ``m2 / n`` and ``(m4 - 3 m2**2) / n**3``, with ``m2``, ``m4`` the
        central moments of ``values`` (divisor n): the cumulants of a mean of n iid draws.
    """
    n = values.shape[-1]
    mean, m2, m4 = _central_moments(np.asarray(values, dtype=float), -1)
    return ReplicateLaw(mean, m2 / n, (m4 - 3.0 * m2**2) / n**3)


def run_pick_law(scores=None, *, correct=None, k=None) -> ReplicateLaw:
    """Law of one arm's run-bootstrap replicate: each question's score from a random run.

    The questions pick independently, so the replicate accuracy ``(1/n) sum_q Y_q`` has the
    sums of the per-question cumulants divided by ``n``, ``n**2`` and ``n**4``. For 0/1
    scores question q is Bernoulli(p_q) with ``p_q = correct_q / k``: variance ``p q`` and
    fourth cumulant ``p q (1 - 6 p q)``.

    Parameters
    ----------
    scores : ndarray, shape (..., k, n), optional
        Any scores.
    correct : ndarray of int, shape (..., n), optional
        0/1 scores given as correct counts per question (with ``k``) instead of ``scores``.
    k : int, optional

    Returns
    -------
    ReplicateLaw
    """
    if correct is not None:
        n = correct.shape[-1]
        # Per-question terms depend on the count only: look them up (k + 1 values).
        p = np.arange(k + 1) / k
        pq = p * (1.0 - p)
        return ReplicateLaw(correct.sum(axis=-1) / (k * n), pq[correct].sum(axis=-1) / n**2,
                            (pq * (1.0 - 6.0 * pq))[correct].sum(axis=-1) / n**4)
    n = scores.shape[-1]
    mean, m2, m4 = _central_moments(np.asarray(scores, dtype=float), -2)
    return ReplicateLaw(mean.mean(axis=-1), m2.sum(axis=-1) / n**2,
                        (m4 - 3.0 * m2**2).sum(axis=-1) / n**4)


def rows(values, mask):
    """The experiments of ``values`` where ``mask`` (its leading axes) is True, flattened to
    one leading axis (no copy when all are); ``None`` stays ``None``."""
    if values is None:
        return None
    if mask.all():
        return values.reshape((-1,) + values.shape[mask.ndim:])
    return values[mask]


def summary_applies(law: ReplicateLaw) -> np.ndarray:
    """Where the summary law is used: ``sigma > 0`` and a near-normal replicate."""
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = law.kappa4 / law.var**2
    return (law.var > 0) & (np.abs(excess) <= MAX_EXCESS_KURTOSIS)


def draw_summary(law: ReplicateLaw, n_resamples: int, rng):
    """Mean and standard deviation (ddof 1) of ``n_resamples`` replicates, from their law.

    Parameters
    ----------
    law : ReplicateLaw
    n_resamples : int
        B >= 2.
    rng : numpy.random.Generator

    Returns
    -------
    mean, sd : ndarray, shape (...)
        Drawn for every experiment (use them where :func:`summary_applies`).
    """
    b = float(n_resamples)
    var = np.where(law.var > 0, law.var, 1.0)
    mean = np.array(law.mean + np.sqrt(var / b) * rng.standard_normal(np.shape(var)),
                    dtype=float)
    # Var(s^2) is positive: kappa4 >= -2 sigma^4, so 2/(B-1) + kappa4/(B sigma^4) > 0.
    var_of_var = 2.0 * var**2 / (b - 1.0) + np.where(law.var > 0, law.kappa4, 0.0) / b
    sample_var = rng.gamma(var**2 / var_of_var, var_of_var / var)
    return mean, np.array(np.sqrt(sample_var), dtype=float)


def replicate_summary(law: ReplicateLaw, n_resamples: int, rng, drawn):
    """Mean and SD of the replicates: from the law where it applies, else from ``drawn``.

    Parameters
    ----------
    law : ReplicateLaw
    n_resamples : int
    rng : numpy.random.Generator
    drawn : callable
        ``drawn(mask)`` returns the replicates, shape ``(mask.sum(), n_resamples)``, of the
        experiments where ``mask`` (shape of ``law.mean``) is True, drawn from ``rng``.

    Returns
    -------
    mean, sd : ndarray, shape (...)
    """
    mean, sd = draw_summary(law, n_resamples, rng)
    resample = ~summary_applies(law)
    if resample.any():
        replicates = drawn(resample)
        mean[resample] = replicates.mean(axis=-1)
        sd[resample] = replicates.std(axis=-1, ddof=1)
    return mean, sd
