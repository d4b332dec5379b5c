"""Shared body of the bootstrap protocols that test ``estimate / SE`` against a normal."""

from __future__ import annotations

import numpy as np

from ._decisions import z_decision
from ._result import make_result


def check_n_resamples(owner: str, value) -> None:
    """``ValueError`` unless ``value`` is an integer >= 2."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2:
        raise ValueError(f"The 'B' parameter of {owner} must be an integer >= 2. "
                         f"Got {value!r} instead.")


def z_result_from_replicates(estimate, replicates, alpha, *, divide_by_sqrt_b=False):
    """Decision from bootstrap replicate differences, SE = their standard deviation.

    Parameters
    ----------
    estimate : ndarray, shape (...)
        Point estimate (fraction).
    replicates : ndarray, shape (..., B)
        Bootstrap replicates of the difference (fraction).
    alpha : float
    divide_by_sqrt_b : bool
        Divide the SE by sqrt(B): the pitfall that confuses the bootstrap's Monte Carlo
        error with the estimate's sampling error.
    """
    se = replicates.std(axis=-1, ddof=1)
    if divide_by_sqrt_b:
        se = se / np.sqrt(replicates.shape[-1])
    p, lo, hi, sig = z_decision(estimate, se, alpha)
    return make_result(estimate, lo, hi, p, sig)
