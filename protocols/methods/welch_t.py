"""``welch_t``: unpaired Welch t-test on the per-seed metrics of the two arms."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._base import REPEATS_NOT_SEEDS, Protocol, register
from .._decisions import data_scale, t_decision
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
    valid_for = frozenset({"methods_independent"})
    recommended_for = frozenset({"methods_independent"})
    pitfall_for = {"methods_paired": "an unpaired test on paired seeds: loses the power of "
                                     "pairing",
                   "models": REPEATS_NOT_SEEDS, "models_clustered": REPEATS_NOT_SEEDS}

    def _evaluate(self, batch, alpha, rng):
        mb = batch.seed_base
        mv = batch.seed_variant
        k = mb.shape[-1]
        vb = mb.var(axis=-1, ddof=1) / k
        vv = mv.var(axis=-1, ddof=1) / k
        estimate = mv.mean(axis=-1) - mb.mean(axis=-1)
        se = (vb + vv) ** 0.5
        with np.errstate(divide="ignore", invalid="ignore"):
            # Welch-Satterthwaite; 0/0 when both arms are constant, where t_decision's
            # zero-SE limit decides.
            df = (vb + vv) ** 2 / ((vb**2 + vv**2) / (k - 1))
        p, lo, hi, sig = t_decision(estimate, se, df, alpha, data_scale(mb, mv))
        return make_result(estimate, lo, hi, p, sig)
