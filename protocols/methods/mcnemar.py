"""``mcnemar``: McNemar's test on the per-question outcomes of seed 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from evalcal_core.validate import check_bool, check_choice, fail

from .._base import CLUSTERS_IGNORED, SEEDS_IGNORED, Protocol, register
from .._result import make_result

#: with ``exact=None`` the binomial test is used up to this many discordant questions
EXACT_MAX_DISCORDANT = 25

CI_METHODS = ("newcombe", "wald")


def wilson_interval(x, n, z):
    """Wilson score interval of a binomial proportion ``x / n`` (arrays), ``(low, high)``."""
    p = x / n
    centre = (x + z**2 / 2.0) / (n + z**2)
    half = z * np.sqrt(x * (n - x) / n + z**2 / 4.0) / (n + z**2)
    # The interval contains p; clip rounding so the square-and-add terms are >= 0.
    return np.minimum(centre - half, p), np.maximum(centre + half, p)


def newcombe_paired_interval(a, b, c, d, alpha):
    """Newcombe's (1998) square-and-add score interval for a difference of paired proportions.

    Method 10 of Newcombe, "Improved confidence intervals for the difference between binomial
    proportions based on paired data", *Stat. Med.* 17:2635-2650 (1998), as Fagerland,
    Lydersen & Laake, *Statistical Analysis of Contingency Tables* (2017, Sec. 8.5) state
    it. The difference is ``p1 - p2`` with ``p1 = (a + c) / N`` (the variant's accuracy) and
    ``p2 = (a + b) / N`` (the baseline's), ``N = a + b + c + d``; ``(l_i, u_i)`` are their
    Wilson intervals and ``psi`` the correlation of the two estimates, from
    ``A = a d - b c``: ``(A - N / 2) / sqrt(prod of margins)`` if ``A > N / 2``, 0 if
    ``0 <= A <= N / 2``, ``A / sqrt(...)`` if ``A < 0`` (0 when a margin is 0)::

        L = D - sqrt((p1 - l1)**2 + (u2 - p2)**2 - 2 psi (p1 - l1)(u2 - p2))
        U = D + sqrt((p2 - l2)**2 + (u1 - p1)**2 - 2 psi (p2 - l2)(u1 - p1))

    Parameters
    ----------
    a, b, c, d : ndarray of int
        Questions both arms get right; baseline only; variant only; neither.
    alpha : float

    Returns
    -------
    low, high : ndarray
        Fractions; within [-1, 1].
    """
    a, b, c, d = (np.asarray(x, dtype=float) for x in (a, b, c, d))
    n = a + b + c + d
    z = special.ndtri(1.0 - alpha / 2.0)
    p1, p2 = (a + c) / n, (a + b) / n
    l1, u1 = wilson_interval(a + c, n, z)
    l2, u2 = wilson_interval(a + b, n, z)
    margins = (a + c) * (b + d) * (a + b) * (c + d)
    cross = a * d - b * c
    numerator = np.where(cross > n / 2.0, cross - n / 2.0, np.where(cross < 0, cross, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        psi = np.where(margins > 0, numerator / np.sqrt(margins), 0.0)
    estimate = p1 - p2
    down = (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2.0 * psi * (p1 - l1) * (u2 - p2)
    up = (p2 - l2) ** 2 + (u1 - p1) ** 2 - 2.0 * psi * (p2 - l2) * (u1 - p1)
    low = np.maximum(estimate - np.sqrt(np.maximum(down, 0.0)), -1.0)
    high = np.minimum(estimate + np.sqrt(np.maximum(up, 0.0)), 1.0)
    return low, high


def mcnemar_exact_p(b, c):
    """Two-sided exact McNemar p: ``min(1, 2 * Binom(b + c, 1/2).cdf(min(b, c)))``.

    As ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``; ``b + c = 0``
    gives 1.
    """
    return np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5))


@register
@dataclass(frozen=True)
class McNemar(Protocol):
    """McNemar's test on the 2x2 table of seed 0's per-question outcomes.

    With ``b`` = questions the baseline gets right and the variant wrong and ``c`` the
    reverse, the chi-square form is ``(|b - c| - corr)**2 / (b + c)`` on 1 degree of
    freedom, as ``statsmodels.stats.contingency_tables.mcnemar(exact=False)``; the exact
    form is the two-sided binomial test ``min(1, 2 * Binom(b + c, 1/2).cdf(min(b, c)))``
    (``mcnemar(exact=True)``). By default the exact test is used while ``b + c <= 25``
    (:data:`EXACT_MAX_DISCORDANT`), where the chi-square approximation is poor (b = 0,
    c = 5: exact p = 0.0625, chi-square 0.025), and the chi-square form beyond.

    The CI on the difference of paired proportions ``(c - b) / n`` is Newcombe's (1998)
    square-and-add score interval (method 10, :func:`newcombe_paired_interval`). The Wald
    interval ``estimate +- z * sqrt(b + c - (c - b)**2 / n) / n`` (Agresti, *Categorical
    Data Analysis*, 3rd ed., 2013, Sec. 11.1.1), ``ci='wald'``, has zero width at
    ``b + c = 0`` and covers the true difference far less often than its level when
    discordant pairs are rare (86-87% at 95% for ``b = 0``, small n).

    The honest test between two fixed models on independent questions (design ``models``)
    from one run each: the questions are the sample. With several runs it reads the first
    only (``paired_t_questions`` averages them).

    Parameters
    ----------
    exact : bool or None, default None
        True: binomial test; False: chi-square; None: binomial while b + c <= 25.
    correction : bool, default False
        Continuity correction of the chi-square form. Unlike statsmodels, ``|b - c| - 1`` is
        floored at 0, so ``b == c`` gives p = 1 rather than slightly less.
    ci : {'newcombe', 'wald'}, default 'newcombe'
        The interval on the difference of proportions.

    Notes
    -----
    ``b + c = 0`` (the arms agree on every question) gives p = 1, where statsmodels
    returns NaN for the chi-square form.
    """

    exact: bool | None = None
    correction: bool = False
    ci: str = "newcombe"

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
        if self.exact is not None and not isinstance(self.exact, (bool, np.bool_)):
            raise fail("exact", "True, False or None", self.exact, self.name)
        check_bool(self.correction, "correction", self.name)
        check_choice(self.ci, "ci", CI_METHODS, self.name)

    def _evaluate(self, batch, alpha, rng):
        b0 = batch.base[..., 0, :]
        v0 = batch.variant[..., 0, :]
        n = b0.shape[-1]
        b = ((b0 == 1) & (v0 == 0)).sum(axis=-1)
        c = ((b0 == 0) & (v0 == 1)).sum(axis=-1)
        a = ((b0 == 1) & (v0 == 1)).sum(axis=-1)
        discordant = b + c
        estimate = (c - b) / n
        gap = np.abs(b - c).astype(float)
        if self.correction:
            gap = np.maximum(gap - 1.0, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            statistic = np.where(discordant > 0, gap**2 / np.maximum(discordant, 1), 0.0)
        p = stats.chi2.sf(statistic, 1)
        exact = (discordant <= EXACT_MAX_DISCORDANT if self.exact is None
                 else np.full(np.shape(discordant), bool(self.exact)))
        if exact.any():
            p = np.where(exact, mcnemar_exact_p(b, c), p)
        if self.ci == "wald":
            # Var((c - b) / n) = [(b + c) / n - ((c - b) / n)**2] / n, estimated without the
            # null's constraint b = c; never negative since |c - b| <= b + c <= n.
            var_n2 = np.maximum(discordant - (c - b) ** 2 / n, 0.0)
            half = special.ndtri(1.0 - alpha / 2.0) * np.sqrt(var_n2) / n
            low, high = estimate - half, estimate + half
        else:
            low, high = newcombe_paired_interval(a, b, c, n - a - b - c, alpha)
        return make_result(estimate, low, high, p, p < alpha)
