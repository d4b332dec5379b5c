"""Shared body of the bootstrap protocols that test ``estimate / SE`` against a normal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._base import Protocol, check_draws
from ._decisions import z_decision
from ._replicate_law import check_replicates, replicate_summary
from ._result import make_result


@dataclass(frozen=True)
class ReplicateZProtocol(Protocol):
    """A bootstrap protocol with ``n_resamples`` replicates (``B`` is the old name).

    Parameters
    ----------
    n_resamples : int, default 1000
        Bootstrap replicates, in [2, 10,000,000] (``MAX_DRAWS``).
    replicates : {'drawn', 'summary'}, default 'drawn'
        'drawn' resamples every replicate; 'summary' draws the replicates' mean and SD
        from their exact-moment law (:mod:`protocols._replicate_law`): the same rejection
        rate at a fraction of the cost, for calibration (``sim.calibrate`` uses it).
    """

    n_resamples: int = 1000
    replicates: str = "drawn"

    stochastic = True
    aliases: ClassVar[dict[str, str]] = {"B": "n_resamples"}

    def __post_init__(self):
        check_draws(self.n_resamples, "n_resamples", self.name, low=2)
        check_replicates(self.replicates, self.name)

    def _summary(self, batch_shape, law, rng, drawn):
        """Mean and SD (ddof 1) of the replicates, shape ``batch_shape``.

        ``law()`` gives the replicate's :class:`~protocols._replicate_law.ReplicateLaw`;
        ``drawn(mask)`` draws the replicates of the experiments where ``mask`` is True,
        shape ``(mask.sum(), n_resamples)``. With ``replicates='drawn'`` every experiment is
        drawn (in row order, the stream of a plain resampling); with 'summary' only those
        the law does not cover.
        """
        if self.replicates == "summary":
            return replicate_summary(law(), self.n_resamples, rng, drawn)
        replicates = drawn(np.ones(batch_shape, dtype=bool)).reshape(
            tuple(batch_shape) + (self.n_resamples,))
        return replicates.mean(axis=-1), replicates.std(axis=-1, ddof=1)


def z_result_from_sd(estimate, sd, n_resamples, alpha, *, divide_by_sqrt_b=False):
    """z decision with SE = the bootstrap replicates' standard deviation.

    Parameters
    ----------
    estimate : ndarray, shape (...)
        Point estimate (fraction).
    sd : ndarray, shape (...)
        Standard deviation (ddof 1) of the replicates of the difference (fraction).
    n_resamples : int
        B, the number of replicates.
    alpha : float
    divide_by_sqrt_b : bool
        Divide the SE by sqrt(B): the pitfall that confuses the bootstrap's Monte Carlo
        error with the estimate's sampling error.
    """
    se = sd / np.sqrt(n_resamples) if divide_by_sqrt_b else sd
    p, lo, hi, sig = z_decision(estimate, se, alpha)
    return make_result(estimate, lo, hi, p, sig)
