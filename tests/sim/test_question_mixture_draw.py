"""``question_mixture``'s draw: the plain construction value for value, and its law.

Consistency check: the reference writes the draw out plainly (multinomial blocks, inversion of
the pair law's cdf by ``np.searchsorted``, selection sampling of each question's runs in
Python on the child stream); the compiled kernels must consume the same random numbers and
give the same scores. The law itself is checked against independent references: the pair law
against numerical integration of binomial products (``scipy.integrate.quad``), the runs of a
fixed p against independent Bernoulli runs (exact pattern probabilities, chi-square).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from sim import generators
from sim.generators.question_mixture import TABLE_MAX_K, count_pair_law


def reference_draw(g, sims, k, delta, rng):
    n = g.n
    blocks = rng.multinomial(n, [g.p_hard, g.p_easy, max(0.0, 1 - g.p_hard - g.p_easy)],
                             size=sims)
    size = int(blocks[:, 2].sum())
    cdf = np.cumsum(count_pair_law(k, g.low, g.high).ravel())
    cdf[-1] = 1.0
    pairs = np.searchsorted(cdf, rng.random(size), side="right")
    counts = (pairs // (k + 1), pairs % (k + 1))
    child = rng.spawn(1)[0]
    m = int(round(delta * n))
    runs = [np.zeros((sims, k, n), dtype=bool) for _ in range(2)]
    i = 0
    for row, (hard, easy, _) in enumerate(blocks):
        runs[1][row, :, :min(m, hard)] = True
        for arm in runs:
            arm[row, :, hard:hard + easy] = True
        for col in range(hard + easy, n):
            for arm, count in zip(runs, counts):
                need = count[i]
                for j in range(k):
                    right = child.random() * (k - j) < need
                    arm[row, j, col] = right
                    need -= right
            i += 1
    return tuple(runs)


@pytest.mark.parametrize(("params", "sims", "k", "delta"), [
    ({}, 40, 3, 0.0),
    ({}, 40, 3, 0.013),
    ({}, 9, 1, 0.01),
    ({"n_questions": 300}, 30, 17, 0.02),
    ({"n_questions": 300, "p_hard": 0.3, "p_easy": 0.0}, 25, 2, 0.05),
    ({"n_questions": 60, "p_hard": 0.0, "p_easy": 1.0}, 5, 4, 0.0),
    ({"n_questions": 80, "low": 0.5, "high": 0.5}, 6, 5, 0.0),
])
def test_draw_equals_the_plain_construction(params, sims, k, delta):
    g = generators.get("question_mixture", **params)
    got = g.draw(sims, k, delta, np.random.default_rng(11))
    want = reference_draw(g, sims, k, delta, np.random.default_rng(11))
    for a, b in zip(got, want):
        assert a.dtype == bool and a.shape == (sims, k, g.n)
        assert np.array_equal(a, b)


@pytest.mark.parametrize(("k", "delta"), [(1, 0.0), (4, 0.01), (TABLE_MAX_K + 3, 0.0)])
def test_draw_counts_are_the_runs_counts_and_leave_the_stream_alike(k, delta):
    g = generators.get("question_mixture", n_questions=200)
    rng_runs, rng_counts = np.random.default_rng(4), np.random.default_rng(4)
    runs = g.draw(7, k, delta, rng_runs)
    counts = g.draw_counts(7, k, delta, rng_counts)
    for arm, count in zip(runs, counts):
        assert count.dtype == np.int64
        np.testing.assert_array_equal(arm.sum(axis=1), count)
    # the next chunk of a cell draws the same experiments in either mode
    assert rng_runs.random() == rng_counts.random()


@pytest.mark.parametrize(("k", "low", "high"), [(1, 0.2, 0.8), (6, 0.2, 0.8), (25, 0.0, 1.0),
                                                (12, 0.9, 1.0), (40, 0.05, 0.1)])
def test_pair_law_is_the_integral_of_binomial_products(k, low, high):
    """Reference: ``quad`` of ``binom.pmf(a) * binom.pmf(b)`` over p ~ Uniform(low, high),
    at 1e-12 absolute (quad's own error is below 1e-14 on these smooth integrands)."""
    law = count_pair_law(k, low, high)
    assert law.shape == (k + 1, k + 1) and abs(law.sum() - 1) < 1e-12
    assert not law.flags.writeable  # cached: shared by every caller
    for a, b in [(0, 0), (0, k), (k // 2, k // 2 + 1 if k > 1 else 0), (k, k), (1, 0)]:
        want = integrate.quad(lambda p, a=a, b=b: stats.binom.pmf(a, k, p)
                              * stats.binom.pmf(b, k, p),
                              low, high, epsabs=1e-15, epsrel=1e-12)[0] / (high - low)
        assert abs(law[a, b] - want) < 1e-12, (a, b)
    np.testing.assert_allclose(law, law.T, rtol=0, atol=1e-15)


def test_runs_of_a_fixed_p_are_independent_bernoulli():
    """With low = high = p every uncertain question's k = 3 runs are iid Bernoulli(p): the 8
    run patterns have probabilities p^s (1 - p)^(3 - s) (chi-square test, level 1e-4)."""
    g = generators.get("question_mixture", n_questions=500, p_easy=0.0, p_hard=0.0,
                       low=0.3, high=0.3)
    base, variant = g.draw(40, 3, 0.0, np.random.default_rng(9))
    for arm in (base, variant):
        pattern = (arm[:, 0, :] * 4 + arm[:, 1, :] * 2 + arm[:, 2, :]).ravel()
        seen = np.bincount(pattern, minlength=8)
        ones = np.array([bin(i).count("1") for i in range(8)])
        expected = 0.3**ones * 0.7**(3 - ones) * pattern.size
        assert stats.chisquare(seen, expected).pvalue > 1e-4
    # the two arms draw independently at the same p
    table = np.histogram2d(base.sum(axis=1).ravel(), variant.sum(axis=1).ravel(),
                           bins=[np.arange(5) - 0.5] * 2)[0]
    assert stats.chi2_contingency(table).pvalue > 1e-4

