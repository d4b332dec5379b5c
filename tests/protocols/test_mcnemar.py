"""McNemar's exact p-value and Newcombe's score interval, against statsmodels, a published
table and exact enumeration of the multinomial."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

import protocols
from protocols.methods.mcnemar import (
    EXACT_MAX_DISCORDANT,
    mcnemar_tables,
    newcombe_paired_interval,
)

Z975 = special.ndtri(0.975)


def _scores(a, b, c, d):
    """One experiment, one run: a both right, b baseline only, c variant only, d neither."""
    base = np.r_[np.ones(a), np.ones(b), np.zeros(c), np.zeros(d)]
    variant = np.r_[np.ones(a), np.zeros(b), np.ones(c), np.zeros(d)]
    return base[None], variant[None]


def test_b0_c5_is_exact_by_default():
    """Reference: ``statsmodels mcnemar([[a, 0], [5, d]], exact=True).pvalue`` = 2 / 2**5 =
    0.0625 (analytic); the chi-square form would give 0.025 and a false win at 5%."""
    res = protocols.get("mcnemar").evaluate(*_scores(10, 0, 5, 5))
    ref = sm_mcnemar(np.array([[10, 0], [5, 5]]), exact=True).pvalue
    assert res.p_value == pytest.approx(0.0625, rel=1e-12)
    np.testing.assert_allclose(res.p_value, ref, rtol=1e-10)
    assert not res.significant


def test_default_is_exact_up_to_25_discordant_pairs_and_chi_square_beyond():
    """Reference: statsmodels ``mcnemar(table, exact=b + c <= 25)`` to 1e-10 on every
    table (b, c) with b + c <= 40 (n = 60)."""
    proto = protocols.get("mcnemar")
    checked = 0
    for b in range(41):
        for c in range(41 - b):
            if b + c == 0:
                continue
            table = np.array([[10, b], [c, 50 - b - c]])
            exact = b + c <= EXACT_MAX_DISCORDANT
            ref = sm_mcnemar(table, exact=exact, correction=False).pvalue
            res = proto.evaluate(*_scores(10, b, c, 50 - b - c))
            np.testing.assert_allclose(res.p_value, ref, rtol=1e-10, err_msg=f"{b}, {c}")
            checked += 1
    assert checked == 860


def test_newcombe_interval_matches_fagerland_lydersen_laake():
    """Published value: Fagerland, Lydersen & Laake, *Statistical Analysis of Contingency
    Tables* (2017), Ch. 8, complete response before and after consolidation therapy (Cavo et
    al. 2012), table [[59, 6], [16, 80]]: Newcombe square-and-add estimate -0.0621, 95% CI
    (-0.1186, -0.0046) (the values the authors' R package contingencytables tests). Rows
    are the first measurement: the variant here."""
    # variant right: 59 + 6; baseline right: 59 + 16.
    res = protocols.get("mcnemar", ci="newcombe").evaluate(*_scores(59, 16, 6, 80))
    assert round(float(res.estimate), 4) == -0.0621
    assert round(float(res.ci_low), 4) == -0.1186
    assert round(float(res.ci_high), 4) == -0.0046


def test_newcombe_interval_edge_cases():
    """Analytic: the interval contains the estimate, lies in [-1, 1], has positive width at
    b + c = 0 (the Wald interval has none) and is antisymmetric under swapping the arms."""
    for a, b, c, d in [(6, 0, 0, 4), (0, 0, 10, 0), (0, 10, 0, 0), (3, 2, 5, 0), (0, 0, 0, 7)]:
        low, high = newcombe_paired_interval(a, b, c, d, 0.05)
        est = (c - b) / (a + b + c + d)
        assert -1.0 <= low <= est <= high <= 1.0
        assert high - low > 0.0
        swapped = newcombe_paired_interval(a, c, b, d, 0.05)
        np.testing.assert_allclose(swapped, (-high, -low), rtol=1e-12, atol=1e-15)


def _outcomes(n):
    return np.array([(a, b, c, n - a - b - c) for a in range(n + 1) for b in range(n + 1 - a)
                     for c in range(n + 1 - a - b)])


def _coverage(n, cells, method):
    """Exact coverage of the 95% interval at each cell-probability vector: the sum of the
    multinomial probabilities of the tables whose interval contains pi_c - pi_b."""
    tables = _outcomes(n)
    a, b, c, d = tables.T
    if method == "newcombe":
        low, high = newcombe_paired_interval(a, b, c, d, 0.05)
    else:
        est = (c - b) / n
        half = Z975 * np.sqrt(np.maximum(b + c - (c - b) ** 2 / n, 0.0)) / n
        low, high = est - half, est + half
    out = []
    for probs in cells:
        theta = probs[2] - probs[1]
        covered = (low <= theta + 1e-12) & (theta - 1e-12 <= high)
        out.append(stats.multinomial.pmf(tables, n, probs)[covered].sum())
    return np.array(out)


def _grids():
    rng = np.random.default_rng(0)
    b_zero = [(pa, 0.0, pc, 1.0 - pa - pc) for pa in np.linspace(0.05, 0.9, 18)
              for pc in np.linspace(0.01, 0.3, 15) if pa + pc < 1.0]
    return {"b = 0": b_zero, "random": [tuple(p) for p in rng.dirichlet(np.ones(4), 300)]}


@pytest.mark.parametrize("n", [10, 20, pytest.param(40, marks=pytest.mark.slow)])
def test_newcombe_coverage_by_enumeration(n):
    """Exact coverage by enumerating the multinomial (no Monte Carlo): over a grid with
    pi_b = 0 (the variant only fixes questions) and 300 random cell-probability vectors, the
    Newcombe interval's mean coverage is >= 0.95 - 0.01 and its worst >= 0.95 - 0.06
    (measured: mean 0.953-0.983, worst 0.898-0.936). The Wald interval's mean coverage at
    pi_b = 0 is 0.67 (n = 10), 0.79 (n = 20), 0.86 (n = 40), the 86-87% that motivated the
    change."""
    for label, cells in _grids().items():
        newcombe = _coverage(n, cells, "newcombe")
        assert newcombe.mean() >= 0.94, (label, newcombe.mean())
        assert newcombe.min() >= 0.89, (label, newcombe.min())
        if label == "b = 0":
            wald = _coverage(n, cells, "wald")
            assert wald.mean() < 0.87, wald.mean()
            assert newcombe.mean() - wald.mean() > 0.09


# --- the interval beside the verdict (ci='matched') ------------------------------------------

def test_fagerland_example_is_a_table_where_newcombe_and_the_exact_p_disagree():
    """The published table above: exact p = 0.0525 (scipy.stats.binomtest(6, 22)) is not
    significant at 5%, yet Newcombe's interval excludes 0. The matched interval keeps
    Newcombe's far bound and moves the near bound to 0 (analytic: the rule of
    :func:`matched_interval`)."""
    res = protocols.get("mcnemar", ci="matched").evaluate(*_scores(59, 16, 6, 80))
    ref = stats.binomtest(6, 22, 0.5).pvalue
    assert float(res.p_value) == pytest.approx(ref, rel=1e-12) and ref > 0.05
    assert round(float(res.ci_low), 4) == -0.1186 and float(res.ci_high) == 0.0
    assert not res.significant


@pytest.mark.parametrize("ci", ["bonferroni", "matched"])
@pytest.mark.parametrize("alpha", [0.1, 0.05, 0.01, 0.001])
def test_interval_holds_zero_exactly_when_the_exact_p_is_not_significant(alpha, ci):
    """Exact enumeration of every table with n = 1..30 (a, b, c, d >= 0): the exact p equals
    scipy.stats.binomtest(c, b + c).pvalue, and 0 lies in the interval iff p >= alpha; the
    plain Newcombe interval disagrees on some of them (so the check can fail)."""
    tables = np.concatenate([_outcomes(n) for n in range(1, 31)])
    a, b, c, d = tables.T
    t = mcnemar_tables(a, b, c, d, alpha, exact=True, ci=ci)
    distinct = {(int(x), int(y)) for x, y in zip(b, c)}
    ref = {bc: (stats.binomtest(bc[1], sum(bc), 0.5).pvalue if sum(bc) else 1.0)
           for bc in distinct}
    np.testing.assert_allclose(t.p_value, [ref[(int(x), int(y))] for x, y in zip(b, c)],
                               rtol=1e-10)
    holds = (t.ci_low <= 0.0) & (0.0 <= t.ci_high)
    np.testing.assert_array_equal(holds, t.p_value >= alpha)
    assert np.all((t.ci_low <= t.estimate) & (t.estimate <= t.ci_high))
    assert np.all((t.ci_low >= -1.0) & (t.ci_high <= 1.0))
    plain = mcnemar_tables(a, b, c, d, alpha, exact=True, ci="newcombe")
    assert np.any(((plain.ci_low <= 0) & (0 <= plain.ci_high)) != (plain.p_value >= alpha))


@pytest.mark.parametrize("ci", ["bonferroni", "matched"])
def test_interval_agrees_with_the_chi_square_verdict_and_the_cut_case(ci):
    """Tables of n = 200 with 26-60 discordant pairs, where the default verdict is the
    chi-square form: p equals statsmodels' ``mcnemar(exact=False, correction=False)`` and 0
    lies in the interval iff p >= alpha. It includes tables where Newcombe holds 0 but the
    test rejects (the near bound is cut to the mapped conditional bound) and the reverse."""
    n, alpha = 200, 0.01  # at 0.01 both kinds of disagreement occur (at 0.05 only the cut)
    rows = [(a, b, c, n - a - b - c) for a in range(0, 141, 7) for b in range(61)
            for c in range(61 - b) if 26 <= b + c and a + b + c <= n]
    a, b, c, d = np.array(rows).T
    t = mcnemar_tables(a, b, c, d, alpha, ci=ci)
    assert not t.exact.any()
    for i in range(0, len(rows), 97):
        ref = sm_mcnemar(np.array([[a[i], b[i]], [c[i], d[i]]]), exact=False,
                         correction=False).pvalue
        assert t.p_value[i] == pytest.approx(ref, rel=1e-10)
    holds = (t.ci_low <= 0.0) & (0.0 <= t.ci_high)
    np.testing.assert_array_equal(holds, t.p_value >= alpha)
    plain = mcnemar_tables(a, b, c, d, alpha, ci="newcombe")
    plain_holds = (plain.ci_low <= 0) & (0 <= plain.ci_high)
    assert np.any(plain_holds & (plain.p_value < alpha))   # the cut case occurs
    assert np.any(~plain_holds & (plain.p_value >= alpha))  # the widened case occurs


@pytest.mark.parametrize("n", [10, 20, 40])
def test_matched_interval_coverage_by_enumeration(n):
    """Exact coverage (multinomial enumeration, no Monte Carlo) of the matched interval
    beside the exact verdict, at 95%: (1) at theta = pi_c - pi_b = 0 it is at least 0.95 in
    every cell, since there it is 1 - the size of the exact conditional test, which is valid
    (Clopper-Pearson; binomial tail bound, analytic); (2) it is never below Newcombe's (it
    only widens when no table is cut, and no table is cut for n <= 40); measured mean
    0.953-0.957 over 300 random cells, worst 0.898 (n = 10) to 0.943 (n = 40), equal to
    Newcombe's worst."""
    tables = _outcomes(n)
    a, b, c, d = tables.T
    matched = mcnemar_tables(a, b, c, d, 0.05, exact=True, ci="matched")
    plain = mcnemar_tables(a, b, c, d, 0.05, exact=True, ci="newcombe")
    null_cells = [(pa, pbc, pbc, max(1.0 - pa - 2 * pbc, 0.0))
                  for pa in np.linspace(0.0, 0.9, 10) for pbc in np.linspace(0.01, 0.45, 12)
                  if pa + 2 * pbc <= 1.0 + 1e-12]
    for probs in null_cells:
        pmf = stats.multinomial.pmf(tables, n, probs)
        covered = (matched.ci_low <= 0.0) & (0.0 <= matched.ci_high)
        assert pmf[covered].sum() >= 0.95 - 1e-12, probs
    for probs in _grids()["random"]:
        pmf = stats.multinomial.pmf(tables, n, probs)
        theta = probs[2] - probs[1]
        cov = [pmf[(t.ci_low <= theta + 1e-12) & (theta - 1e-12 <= t.ci_high)].sum()
               for t in (matched, plain)]
        assert cov[0] >= cov[1] - 1e-12


def test_wald_interval_is_clipped_to_minus_one_one():
    """Base [1, 1, 1, 1], variant [1, 0, 0, 0]: b = 3, c = 0, n = 4, estimate -0.75 and
    Wald half-width 1.96 * sqrt(3 - 9/4) / 4 = 0.424 (analytic), so the raw lower bound
    -1.17 is clipped to -1, where a difference of proportions ends."""
    res = protocols.get("mcnemar", ci="wald").evaluate(np.ones((1, 4)),
                                                       np.array([[1.0, 0, 0, 0]]))
    half = Z975 * np.sqrt(3 - 9 / 4) / 4
    assert float(res.estimate) == -0.75 and -0.75 - half < -1.0
    assert float(res.ci_low) == -1.0
    assert float(res.ci_high) == pytest.approx(-0.75 + half, rel=1e-12)


def test_protocol_equals_the_vectorized_table_function():
    """Consistency only: the protocol on scores equals :func:`mcnemar_tables` on the counts,
    for each ci and exact setting, on a batch of random tables."""
    rng = np.random.default_rng(3)
    base = (rng.random((60, 1, 30)) < 0.7).astype(float)
    variant = np.where(rng.random((60, 1, 30)) < 0.6, base, 1.0 - base)
    b0, v0 = base[:, 0], variant[:, 0]
    counts = [((b0 == x) & (v0 == y)).sum(-1) for x, y in ((1, 1), (1, 0), (0, 1), (0, 0))]
    for ci in ("bonferroni", "matched", "newcombe", "wald"):
        for exact in (None, True, False):
            res = protocols.get("mcnemar", ci=ci, exact=exact).evaluate(base, variant)
            t = mcnemar_tables(*counts, 0.05, exact=exact, ci=ci)
            np.testing.assert_array_equal(res.ci_low, t.ci_low)
            np.testing.assert_array_equal(res.p_value, t.p_value)


# --- the decision grid's family (sim/decisions/mcnemar.py) ------------------------------------

def test_grid_cells_have_the_stated_marginals_and_correlation():
    """Analytic: the cells of base 0.7, delta 0.1, rho 0.5 have marginals 0.7 and 0.8 and
    phi coefficient (pi_a pi_d - pi_b pi_c) / sqrt(p1 q1 p2 q2) = 0.5; a rho that would
    make a cell negative is refused naming the parameter."""
    from sim.decisions.mcnemar import cell_probabilities

    pa, pb, pc, pd = cell_probabilities(0.7, 0.1, 0.5)
    assert pa + pb == pytest.approx(0.7) and pa + pc == pytest.approx(0.8)
    phi = (pa * pd - pb * pc) / np.sqrt(0.7 * 0.3 * 0.8 * 0.2)
    assert phi == pytest.approx(0.5, rel=1e-12)
    with pytest.raises(ValueError, match="'rho' parameter of cell_probabilities"):
        cell_probabilities(0.7, 0.1, -1.0)


def test_grid_size_matches_the_exact_size_and_nothing_disagrees():
    """At delta = 0, n = 20 (base 0.7, rho 0.5), the simulated rejection rate of 20,000
    tables is within 4.5 binomial SE of the exact size: sum over m = b + c ~ Binom(n, pi_b +
    pi_c) of the conditional rejection probability under Binom(m, 1/2), each p from
    scipy.stats.binomtest. The printed interval never disagrees with the verdict; plain
    Newcombe does on some tables (measured 1.6% in this cell)."""
    from sim.decisions import mcnemar as family
    from sim.decisions.mcnemar import cell_probabilities

    cell = {**family.QUICK_CELLS[0], "n": 20, "delta": 0.0}
    _, pb, pc, _ = cell_probabilities(cell["base"], 0.0, cell["rho"])
    size = sum(stats.binom.pmf(m, 20, pb + pc) * stats.binom.pmf(c, m, 0.5)
               for m in range(1, 21) for c in range(m + 1)
               if stats.binomtest(c, m, 0.5).pvalue < 0.05)
    sims = 20_000
    out = {o["decision"]: o for o in family.simulate(cell, sims, np.random.default_rng(5))}
    rate = out["mcnemar exact"]["hits"] / sims
    assert abs(rate - size) <= 4.5 * np.sqrt(size * (1 - size) / sims), (rate, size)
    assert out["verdict/interval disagree"]["hits"] == 0
    assert out["verdict/newcombe disagree"]["hits"] > 0


def test_the_familys_tables_become_the_questions_they_count():
    """sim.decisions.mcnemar scores the printed verdict on 0/1 runs rebuilt from its drawn
    2x2 tables: counting them back gives the tables, and exact McNemar on them equals the
    binomial test of the discordant counts (scipy)."""
    from sim.decisions import mcnemar as family

    rng = np.random.default_rng(5)
    tables = tuple(rng.multinomial(40, [0.4, 0.15, 0.25, 0.2], size=7).T)
    base, variant = family.tables_as_scores(tables)
    b, v = base[:, 0], variant[:, 0]
    counted = ((b * v).sum(-1), (b * (1 - v)).sum(-1), ((1 - b) * v).sum(-1),
               ((1 - b) * (1 - v)).sum(-1))
    for got, want in zip(counted, tables):
        np.testing.assert_array_equal(got, want)
    printed = family._printed(tables)
    for i in range(7):
        n_b, n_c = int(tables[1][i]), int(tables[2][i])
        if n_b + n_c:
            ref = stats.binomtest(n_c, n_b + n_c, 0.5).pvalue
            assert printed.p_value[i] == pytest.approx(ref, rel=1e-9)
