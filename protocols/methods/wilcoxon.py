"""``wilcoxon``: Wilcoxon signed-rank test on per-seed deltas."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from evalcal_core.designs import METHODS_INDEPENDENT, METHODS_PAIRED, MODELS, MODELS_CLUSTERED
from evalcal_core.validate import check_int

from .._base import REPEATS_NOT_SEEDS, UNPAIRED_SEEDS, Protocol, check_draws, register
from .._resample import TIE_RTOL, sign_flip_pvalue
from .._result import make_result


def signed_ranks(d):
    """Ranks of ``|d|`` among the non-zero deltas (average ranks for ties), signed; 0 for zeros.

    Parameters
    ----------
    d : ndarray, shape (..., k)

    Returns
    -------
    ndarray, shape (..., k)
    """
    tol = TIE_RTOL * np.abs(d).max(axis=-1, keepdims=True)
    zero = np.abs(d) <= tol
    magnitude = np.where(zero, -np.inf, np.abs(d))
    # Zeros get the lowest ranks; shifting by their count leaves the non-zeros ranked 1..m.
    ranks = stats.rankdata(magnitude, axis=-1) - zero.sum(axis=-1, keepdims=True)
    return np.where(zero, 0.0, np.sign(d) * ranks)


@register
@dataclass(frozen=True)
class Wilcoxon(Protocol):
    """Wilcoxon signed-rank test on the per-seed deltas, exact.

    Zero deltas are dropped (``zero_method='wilcox'``); the two-sided p-value is the exact
    permutation distribution of the signed-rank sum (all 2**k sign patterns up to
    ``max_exact_k``). Without ties or zeros this equals
    ``scipy.stats.wilcoxon(d, method='exact')``; with ties it stays exact (conditional on
    the tied ranks) where scipy falls back to a normal approximation.
    The estimate is the mean delta; there is no CI. Beyond ``max_exact_k`` seeds the sign
    patterns are sampled (``n_permutations`` of them, ``p = (1 + count) / (1 + N)``): the
    p-value is then a Monte Carlo estimate that depends on ``rng``, hence
    ``stochastic = True`` (deterministic up to ``max_exact_k``, as ``sign_flip``).

    Parameters
    ----------
    max_exact_k : int, default 16
    n_permutations : int, default 10000
    """

    max_exact_k: int = 16
    n_permutations: int = 10_000

    name = "wilcoxon"
    summary = "Wilcoxon signed-rank test on per-seed deltas"
    min_k = 2
    paired = True
    stochastic = True
    valid_for = frozenset({METHODS_PAIRED})
    pitfall_for = {METHODS_INDEPENDENT: UNPAIRED_SEEDS, MODELS: REPEATS_NOT_SEEDS,
                   MODELS_CLUSTERED: REPEATS_NOT_SEEDS}

    def __post_init__(self):
        check_int(self.max_exact_k, "max_exact_k", self.name, low=1, high=24)
        check_draws(self.n_permutations, "n_permutations", self.name, low=1)

    def _evaluate(self, batch, alpha, rng):
        d = batch.seed_deltas
        p = sign_flip_pvalue(signed_ranks(d), rng, max_exact_k=self.max_exact_k,
                             n_permutations=self.n_permutations)
        return make_result(d.mean(axis=-1), p_value=p, significant=p < alpha)
