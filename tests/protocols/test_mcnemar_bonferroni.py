"""The ``bonferroni`` interval beside the exact McNemar verdict (protocols.methods.mcnemar),
checked by exact enumeration of the trinomial (b, c, concordant) with scipy's
``multinomial.pmf``: no Monte Carlo, so the bounds below are exact up to the grid."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from protocols.methods.mcnemar import mcnemar_tables


def _tables(n):
    """Every (b, c, concordant) with b + c <= n."""
    return np.array([(b, c, n - b - c) for b in range(n + 1) for c in range(n + 1 - b)])


def _grid(step):
    """(pi_b, pi_c) on an even grid with pi_b + pi_c <= 1, one-way lines included."""
    v = np.arange(0.0, 1.0 + 1e-9, step)
    return np.array([(x, y) for x in v for y in v if x + y <= 1.0 + 1e-9])


def _coverage(n, ci, grid):
    tables = _tables(n)
    b, c, _ = tables.T
    # the concordant count's split into a and d does not enter these intervals
    t = mcnemar_tables(np.zeros_like(b), b, c, n - b - c, 0.05, exact=True, ci=ci)
    probs = np.column_stack([grid, np.clip(1.0 - grid.sum(1), 0.0, 1.0)])
    pmf = stats.multinomial.pmf(tables[None, :, :], n, probs[:, None, :])
    delta = grid[:, 1] - grid[:, 0]
    covered = ((t.ci_low[None] <= delta[:, None] + 1e-12)
               & (delta[:, None] - 1e-12 <= t.ci_high[None]))
    return (pmf * covered).sum(1), t


@pytest.mark.parametrize("n, floor", [(20, 0.958), (50, 0.963), (100, 0.959)])
def test_coverage_by_exact_enumeration(n, floor):
    """Exact coverage over (pi_b, pi_c) on a 0.01 grid (0.02 at n = 100) including
    one-way discordance (pi_b = 0 or pi_c = 0): the minimum is >= 95% (measured 95.8%,
    96.3%, 95.9% on a 0.005 grid, at or beside delta = 0), and >= 98.5% on the one-way
    lines (measured 98.7%). The plain Newcombe interval, enumerated the same way with
    pi_b = 0 and the concordant questions split evenly, falls to 88.5% at n = 100 (the
    audit's figure; Newcombe depends on that split, so it is not enumerated here)."""
    grid = _grid(0.02 if n == 100 else 0.01)
    cov, _ = _coverage(n, "bonferroni", grid)
    assert cov.min() >= 0.95
    assert cov.min() >= floor - 0.002   # a coarser grid than the measured one
    one_way = ((grid[:, 0] == 0) | (grid[:, 1] == 0)) & (grid.sum(1) > 0)
    assert cov[one_way].min() >= 0.985


def test_old_matched_interval_undercovers_one_way_discordance():
    """Exact enumeration of the 4-cell multinomial (a, 0, c, d) at n = 100, pi_b = 0,
    pi_c = 0.02, pi_a = 0.5: the former default (``matched``) covers 88.5% (so the check
    above can fail for an interval like it); ``bonferroni`` covers > 98%."""
    n = 100
    rows = np.array([(a, 0, c, n - a - c) for a in range(n + 1) for c in range(n + 1 - a)])
    pmf = stats.multinomial.pmf(rows, n, [0.5, 0.0, 0.02, 0.48])
    cov = {}
    for ci in ("matched", "bonferroni"):
        t = mcnemar_tables(*rows.T, 0.05, exact=True, ci=ci)
        cov[ci] = pmf[(t.ci_low <= 0.02) & (0.02 <= t.ci_high)].sum()
    assert round(cov["matched"], 3) == 0.885
    assert cov["bonferroni"] > 0.98


def test_identical_answers_and_zero_discordance_width():
    """100 identical answers: b = c = 0, so the interval is [-pi_u, pi_u] with pi_u the
    Clopper-Pearson upper bound of 0/100 at level alpha / 2 (analytic: 1 - (alpha / 4)**(1 /
    n) = 4.29 pp); it holds 0 and p = 1."""
    t = mcnemar_tables(70, 0, 0, 30, 0.05, exact=True)
    pi_u = 1.0 - 0.0125 ** (1 / 100)
    np.testing.assert_allclose([t.ci_low, t.ci_high], [-pi_u, pi_u], rtol=1e-10)
    assert round(100 * pi_u, 2) == 4.29 and t.p_value == 1.0


def test_bounds_against_clopper_pearson_by_statsmodels():
    """Reference: statsmodels ``proportion_confint(method="beta")``. b = 3, c = 14, n = 100
    (exact p = 0.0127, significant): pi in [pi_l, pi_u] at level 0.025 on 17/100, r in
    CP at 0.025 on 14/17 (> 1/2, so no replacement); low = pi_l (2 r_l - 1), high = pi_u (2
    r_u - 1). b = 3, c = 10 (p = 0.092): r_l < 1/2 so low = pi_u (2 r_l - 1) < 0."""
    from statsmodels.stats.proportion import proportion_confint

    for b, c in ((3, 14), (3, 10)):
        t = mcnemar_tables(100 - b - c, b, c, 0, 0.05, exact=True)
        pl, pu = proportion_confint(b + c, 100, alpha=0.025, method="beta")
        rl, ru = proportion_confint(c, b + c, alpha=0.025, method="beta")
        low = (pl if rl >= 0.5 else pu) * (2 * rl - 1)
        np.testing.assert_allclose([t.ci_low, t.ci_high], [low, pu * (2 * ru - 1)], rtol=1e-9)
        assert (t.ci_low > 0) == (t.p_value < 0.05)


def test_verdict_replacement_case_is_exercised():
    """A table where the exact test rejects but the split's interval at level alpha / 2
    still holds 1/2 (b = 5, c = 15, n = 100: p = 0.0414 < 0.05, Clopper-Pearson at 0.025
    on 15/20 has lower bound 0.477): the near bound is the exact test's own conditional
    bound (Clopper-Pearson at 0.05, scipy.stats.binomtest's interval) times pi_l, > 0."""
    t = mcnemar_tables(80, 5, 15, 0, 0.05, exact=True)
    assert t.p_value < 0.05
    r_wide = stats.binomtest(15, 20).proportion_ci(0.975, method="exact")
    assert r_wide.low <= 0.5
    r = stats.binomtest(15, 20).proportion_ci(0.95, method="exact")
    pi_l = stats.binomtest(20, 100).proportion_ci(0.975, method="exact").low
    assert float(t.ci_low) == pytest.approx(pi_l * (2 * r.low - 1), rel=1e-9)
    assert t.ci_low > 0
