"""``mcnemar``: McNemar's test on the per-question outcomes of seed 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from evalcal_core.validate import check_bool

from .._base import CLUSTERS_IGNORED, SEEDS_IGNORED, Protocol, register
from .._result import make_result


@register
@dataclass(frozen=True)
class McNemar(Protocol):
    """McNemar's test on the 2x2 table of seed 0's per-question outcomes.

    With ``b`` = questions the baseline gets right and the variant wrong and ``c`` the
    reverse, the statistic is ``(|b - c| - corr)**2 / (b + c)`` on 1 degree of freedom, as
    ``statsmodels.stats.contingency_tables.mcnemar(exact=False)``; ``exact=True`` uses the
    two-sided binomial test ``min(1, 2 * Binom(b + c, 1/2).cdf(min(b, c)))``.

    The CI on the difference of paired proportions ``(c - b) / n`` is the Wald interval
    with the unrestricted variance (Agresti, *Categorical Data Analysis*, 3rd ed., 2013,
    Sec. 11.1.1): ``estimate +- z * sqrt(b + c - (c - b)**2 / n) / n``. The null SE
    ``sqrt(b + c) / n`` (the test's) is too wide away from the null.

    Parameters
    ----------
    exact : bool, default False
        Binomial test instead of the chi-square approximation.
    correction : bool, default False
        Continuity correction of the chi-square form. Unlike statsmodels, ``|b - c| - 1`` is
        floored at 0, so ``b == c`` gives p = 1 rather than slightly less.

    Notes
    -----
    ``b + c = 0`` (the arms agree on every question) gives p = 1, where statsmodels
    returns NaN.
    """

    exact: bool = False
    correction: bool = False

    name = "mcnemar"
    summary = "McNemar's test on seed 0's per-question outcomes"
    binary = True
    needs_questions = True
    paired = True
    pitfall = "one run, " + SEEDS_IGNORED.replace(", ", ": ")
    uses_first_seed_only = True
    valid_for = frozenset({"models"})
    pitfall_for = {"methods_independent": pitfall, "models_clustered": CLUSTERS_IGNORED}

    def __post_init__(self):
        for field in ("exact", "correction"):
            check_bool(getattr(self, field), field, self.name)

    def _evaluate(self, batch, alpha, rng):
        b0 = batch.base[..., 0, :]
        v0 = batch.variant[..., 0, :]
        n = b0.shape[-1]
        b = ((b0 == 1) & (v0 == 0)).sum(axis=-1)
        c = ((b0 == 0) & (v0 == 1)).sum(axis=-1)
        discordant = b + c
        estimate = (c - b) / n
        if self.exact:
            p = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(b, c), discordant, 0.5))
        else:
            gap = np.abs(b - c).astype(float)
            if self.correction:
                gap = np.maximum(gap - 1.0, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                statistic = np.where(discordant > 0, gap**2 / discordant, 0.0)
            p = stats.chi2.sf(statistic, 1)
        # Var((c - b) / n) = [(b + c) / n - ((c - b) / n)**2] / n, estimated without the
        # null's constraint b = c; never negative since |c - b| <= b + c <= n.
        var_n2 = np.maximum(discordant - (c - b) ** 2 / n, 0.0)
        half = special.ndtri(1.0 - alpha / 2.0) * np.sqrt(var_n2) / n
        return make_result(estimate, estimate - half, estimate + half, p, p < alpha)
