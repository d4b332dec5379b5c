"""``welch_t``: unpaired Welch t-test on the per-seed metrics of the two arms."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import METHODS_INDEPENDENT, METHODS_PAIRED, MODELS, MODELS_CLUSTERED

from .._base import REPEATS_NOT_SEEDS, Protocol, register
from .._decisions import t_decision
from .._result import make_result


@register
@dataclass(frozen=True)
class WelchT(Protocol):
    """Welch's unequal-variance t-test, ignoring the pairing of seeds.

    Equals ``scipy.stats.ttest_ind(variant, base, equal_var=False)`` on the per-seed metrics
    (row means); the CI uses the Welch–Satterthwaite degrees of freedom.
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


def uses_hsu_df(k_base: int, k_variant: int) -> bool:
    """Whether Welch's test takes Hsu's df ``min(k) - 1`` instead of the estimated one.

    The Welch-Satterthwaite df is estimated from the two variances; with an arm of 2
    seeds, or of 3 seeds beside a larger arm, its error makes the test over-reject: 6.0-8.0%
    at alpha = 5% with 3 or 2 seeds in the smaller arm and a variance ratio of 3-10
    (40,000 simulations per cell; ``python -m sim.decision_grid --families maxt``, cells
    ``kind=welch``), against at most 5.7% from 4 seeds per arm on. Hsu's df is never above
    the estimated one, so the test is conservative for normal arms at every variance ratio.
    """
    small = min(k_base, k_variant)
    return small == 2 or (small == 3 and k_base != k_variant)


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
        ``scipy.stats.ttest_ind(variant, base, equal_var=False)``'s p and
        ``confidence_interval(1 - alpha)``, except where :func:`uses_hsu_df`: there the
        Welch-Satterthwaite df is replaced by Hsu's ``min(k_b, k_v) - 1``. No variance
        estimate (both arms constant up to rounding): p and CI NaN, as
        :func:`protocols._decisions.t_decision` decides.
    """
    mb = np.asarray(base, dtype=float)
    mv = np.asarray(variant, dtype=float)
    kb, kv = mb.shape[-1], mv.shape[-1]
    vb = mb.var(axis=-1, ddof=1) / kb
    vv = mv.var(axis=-1, ddof=1) / kv
    estimate = mv.mean(axis=-1) - mb.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # Welch-Satterthwaite; 0/0 when both arms are constant, where t_decision's
        # zero-SE limit decides.
        df = (vb + vv) ** 2 / (vb**2 / (kb - 1) + vv**2 / (kv - 1))
    if uses_hsu_df(kb, kv):
        df = np.full_like(np.asarray(estimate, dtype=float), float(min(kb, kv) - 1))
    p, lo, hi, sig = t_decision(estimate, np.sqrt(vb + vv), df, alpha,
                                np.maximum(np.abs(mb).max(axis=-1), np.abs(mv).max(axis=-1)))
    return p, lo, hi, sig, estimate
