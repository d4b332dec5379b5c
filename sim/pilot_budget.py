"""Seed budgets that survive a small pilot: the delta spread with its uncertainty.

A pilot of k_p seeds per arm gives k_p per-seed deltas (variant - baseline). Their unbiased
variance ``s**2`` follows ``sigma_d**2 * chi2(k_p - 1) / (k_p - 1)`` for normal deltas, so
with three seeds ``s`` is below the true delta sd about half the time and below 0.6 of it a
fifth of the time. A budget computed at ``s`` (the point estimate) then falls short of the
target power in about half the pilots. :func:`delta_spread` gives the one-sided upper
confidence limit of the delta sd at ``assurance`` (default 0.8),

    sigma_U = s * sqrt((k_p - 1) / chi2.ppf(1 - assurance, k_p - 1)),

and a budget computed at ``sigma_U`` reaches the target power whenever ``sigma_U >=
sigma_d``, i.e. in at least ``assurance`` of pilots ("k = 6 (80% assurance; point estimate
4)"). The paired t-test's power is exact here (noncentral t, :func:`paired_t_power`); the
simulated seed budget of ``--from-pilot`` uses a generator whose delta sd is ``sigma_U``
(:mod:`sim.pilot`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evalcal_core.validate import check_number, fail

#: default probability that the budget reaches the target power, over the pilot's luck
DEFAULT_ASSURANCE = 0.8
#: largest k the analytic budget searches
K_MAX = 10_000


@dataclass(frozen=True)
class DeltaSpread:
    """The per-seed delta sd of a pilot and its upper confidence limit (fractions).

    Attributes
    ----------
    k : int
        Pilot seeds (deltas).
    mean : float
        Mean delta.
    sd : float
        Unbiased sample sd ``s`` (``ddof=1``).
    upper : float
        One-sided upper confidence limit of the delta sd at ``assurance``.
    assurance : float
    warnings : tuple of str
        Why the estimate is fragile (fewer than 3 seeds, deltas that do not vary).
    """

    k: int
    mean: float
    sd: float
    upper: float
    assurance: float
    warnings: tuple = ()

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Two-sided ``level`` confidence interval of the delta sd (fractions).

        The chi-square law of ``s**2`` with ``k - 1`` degrees of freedom (normal deltas):
        ``s sqrt((k - 1) / chi2.ppf((1 +- level) / 2, k - 1))``; wide at small k (three
        seeds: 0.52 s to 6.3 s at 95%).
        """
        df = self.k - 1
        tail = (1 - level) / 2
        return (self.sd * math.sqrt(df / stats.chi2.isf(tail, df)),
                self.sd * math.sqrt(df / stats.chi2.ppf(tail, df)))


def _spread_iv(deltas, assurance):
    d = np.asarray(deltas, dtype=float).ravel()
    if d.size < 2:
        raise fail("deltas", "at least 2 per-seed deltas (a spread needs 2)", d.size,
                   "delta_spread")
    if not np.isfinite(d).all():
        raise fail("deltas", "finite", d[~np.isfinite(d)][:3].tolist(), "delta_spread")
    assurance = check_number(assurance, "assurance", low=0, high=1, low_open=True,
                             high_open=True)
    return d, float(assurance)


def delta_spread(deltas, assurance: float = DEFAULT_ASSURANCE) -> DeltaSpread:
    """The delta sd of a pilot with its ``assurance`` upper confidence limit (chi-square law
    of the sample variance with ``k - 1`` degrees of freedom, normal deltas)."""
    d, assurance = _spread_iv(deltas, assurance)
    k = d.size
    sd = float(d.std(ddof=1))
    upper = sd * math.sqrt((k - 1) / stats.chi2.ppf(1 - assurance, k - 1))
    warnings = []
    if k < 3:
        warnings.append(f"the pilot has {k} seeds per arm: its delta sd has {k - 1} degree(s) "
                        f"of freedom, and the {100 * assurance:.0f}%-assurance limit is "
                        f"{upper / sd if sd else math.inf:.1f} times the estimate; run at "
                        f"least 3 seeds")
    if sd <= 1e-12:  # rounding leaves ~1e-17 for equal deltas
        sd, upper = 0.0, 0.0
        warnings.append("the pilot's per-seed deltas do not vary (sd 0): no spread to plan "
                        "with; its budget is not meaningful")
    return DeltaSpread(k, float(d.mean()), sd, float(upper), assurance, tuple(warnings))


def paired_t_power(k, effect, sd, alpha: float = 0.05):
    """Exact power of the two-sided paired t-test with ``k`` pairs (noncentral t).

    Parameters
    ----------
    k : int or array of int
        Seeds per arm (>= 2).
    effect, sd : float
        True mean delta and delta sd (same units).
    alpha : float
    """
    k = np.asarray(k, dtype=float)
    df = k - 1
    crit = stats.t.isf(alpha / 2, df)
    nc = np.abs(effect) / sd * np.sqrt(k) if sd > 0 else np.full(k.shape, np.inf)
    # The lower tail as the upper tail of the mirrored law: scipy's nct.cdf far in the
    # tail is NaN where nct.sf is ~0.
    lower = np.nan_to_num(stats.nct.sf(crit, df, -nc), nan=0.0)
    return stats.nct.sf(crit, df, nc) + lower


def k_needed(effect, sd, *, alpha: float = 0.05, power: float = 0.8,
             k_max: int = K_MAX) -> int | None:
    """Smallest k >= 2 with paired-t power >= ``power`` (``None`` up to ``k_max``)."""
    if sd == 0:
        return 2 if effect != 0 else None
    ks = np.arange(2, k_max + 1)
    # Powers rise with k: search doubling windows instead of all k_max at once.
    low = 2
    while low <= k_max:
        high = min(k_max, 2 * low)
        window = ks[(ks >= low) & (ks <= high)]
        hit = np.flatnonzero(paired_t_power(window, effect, sd, alpha) >= power)
        if hit.size:
            return int(window[hit[0]])
        low = high + 1
    return None


@dataclass(frozen=True)
class PilotBudget:
    """The paired t-test's seed budget from a pilot (k per arm)."""

    effect: float
    power: float
    assurance: float
    k_assured: int | None
    k_point: int | None

    @property
    def text(self) -> str:
        def show(k):
            return str(k) if k is not None else f"> {K_MAX}"

        return (f"k = {show(self.k_assured)} ({100 * self.assurance:.0f}% assurance; point "
                f"estimate {show(self.k_point)})")


def pilot_budget(deltas, effect, *, alpha: float = 0.05, power: float = 0.8,
                 assurance: float = DEFAULT_ASSURANCE) -> PilotBudget:
    """Seeds per arm the paired t-test needs at ``effect`` (units of the deltas), at the
    pilot's point estimate of the delta sd and at its ``assurance`` upper limit."""
    return budget_from_spread(delta_spread(deltas, assurance), effect, alpha=alpha,
                              power=power)


def budget_from_spread(spread: DeltaSpread, effect, *, alpha: float = 0.05,
                       power: float = 0.8) -> PilotBudget:
    """:func:`pilot_budget` of a :class:`DeltaSpread` already computed."""
    return PilotBudget(float(effect), float(power), spread.assurance,
                       k_needed(effect, spread.upper, alpha=alpha, power=power),
                       k_needed(effect, spread.sd, alpha=alpha, power=power))
