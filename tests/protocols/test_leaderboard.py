"""protocols.leaderboard against direct computations (numpy), the exact sign test
(scipy.stats.binomtest), exact enumeration of every board and a binomial simulation bound."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import special, stats

from protocols import leaderboard as lb


def test_pair_se_is_the_paired_standard_error():
    rng = np.random.default_rng(0)
    x = rng.random((6, 40))
    means, diff, se = lb.pair_se(x)
    for i, j in [(0, 1), (2, 5), (4, 3)]:
        d = x[i] - x[j]
        assert diff[i, j] == pytest.approx(d.mean())
        assert se[i, j] == pytest.approx(d.std(ddof=1) / np.sqrt(d.size))


def test_two_systems_are_the_exact_sign_test():
    """Reference: scipy.stats.binomtest (McNemar's exact test) on every 0/1 table with
    n = 3..10 questions, all 2^n sign vectors enumerated: separated exactly when the
    two-sided p <= 0.05, and the worse system's p of being beaten is the one-sided p."""
    for n in range(3, 11):
        for b, c in itertools.product(range(n + 1), repeat=2):
            if b + c > n:
                continue
            x = np.zeros((2, n))
            x[0, :b] = 1.0                          # b questions only system 0 gets right
            x[1, b:b + c] = 1.0
            board = lb.leaderboard(x, draws=max(100, 2**n))
            assert board.exact and board.draws == 2**n
            p = stats.binomtest(b, b + c).pvalue if b + c else 1.0
            assert board.separated[0, 1] == (b > c and p <= 0.05)
            assert board.separated[1, 0] == (c > b and p <= 0.05)
            if c > b:
                one_sided = stats.binomtest(c, b + c, alternative="greater").pvalue
                assert board.beaten_p[0] == pytest.approx(one_sided, rel=1e-12)


@pytest.mark.parametrize("n", [5, 6, 200])
def test_an_all_0_and_an_all_1_system_are_separated(n):
    """Issue 45: a constant delta over n questions is the sign test's most extreme table,
    p = 2 * 2^-n (scipy.stats.binomtest(n, n)): not separable at n = 5 (p = 0.0625), separated
    from n = 6 on; with two coin-flip systems beside them the all-0 system's rank is [4, 4]."""
    rng = np.random.default_rng(1)
    x = np.vstack([np.zeros(n), np.ones(n), rng.random((2, n)) < 0.5]).astype(float)
    board = lb.leaderboard(x, rng=2)
    p = stats.binomtest(n, n).pvalue
    assert board.separated[1, 0] == (p <= 0.05)
    assert not board.identical[0, 1]
    if n == 200:
        assert (board.rank_low[0], board.rank_high[0]) == (4, 4)
        assert (board.rank_low[1], board.rank_high[1]) == (1, 1)
        assert list(board.best_set) == [False, True, False, False]
        assert board.tier[1] == 1 and board.tier[0] == 3


def _all_boards(m, n):
    """Every 0/1 board of m systems on n questions up to the order of the questions (which
    changes no decision), with its probability when every answer is a fair coin."""
    patterns = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1).astype(float)   # (2^m, m)
    combos = np.array(list(itertools.combinations_with_replacement(range(2**m), n)))
    x = np.swapaxes(patterns[combos], -1, -2)                                   # (B, m, n)
    counts = np.stack([(combos == k).sum(axis=1) for k in range(2**m)], axis=1)
    ways = special.factorial(n) / special.factorial(counts).prod(axis=1)
    return x, ways / 2.0 ** (m * n)


def test_exact_level_by_enumerating_every_board():
    """Reference: exact enumeration. Three systems answering 6 questions at accuracy 0.5
    independently (every one of the 2^18 boards equally likely; flipping a question's answers
    is a symmetry of this law, so the sign-flip test is exact): the family-wise error of any
    separation and the chance that system 0, tied for best, leaves the best set are both
    <= alpha, computed exactly; and they are not 0 (the test can separate at n = 6)."""
    x, prob = _all_boards(3, 6)
    assert prob.sum() == pytest.approx(1.0, rel=1e-12)
    d = lb.simultaneous_pairs(x, 0.05, draws=100)
    assert d.exact and d.draws == 64
    fwer = prob @ d.separated.any(axis=(-2, -1))
    excluded = prob @ ~d.best_set[:, 0]
    assert 0.0 < fwer <= 0.05
    assert 0.0 < excluded <= 0.05


def test_false_separation_rate_on_an_asymmetric_null():
    """Simulation bound: 10 tied systems at accuracy about 0.73 with shared question
    difficulty (the decision grid's generator; the sign-flip law is asymptotic here) on
    n = 100 questions, 1,000 boards: false separations at most the binomial 99.9% quantile
    at alpha = 5% (scipy.stats.binom; a rate of 7.5% fails with probability 0.95)."""
    rng = np.random.default_rng(3)
    boards, m, n = 1000, 10, 100
    u = rng.standard_normal((boards, 1, n))
    x = (rng.random((boards, m, n)) < 1.0 / (1.0 + np.exp(-1.0 - u))).astype(float)
    d = lb.simultaneous_pairs(x, 0.05, draws=200, rng=4)
    assert d.separated.any(axis=(-2, -1)).sum() <= stats.binom.ppf(0.999, boards, 0.05)


def test_clear_order_gives_exact_ranks_and_ties_are_never_separated():
    rng = np.random.default_rng(3)
    noise = rng.normal(0, 0.01, (1, 200))
    x = np.vstack([0.9 + noise + rng.normal(0, 0.01, 200), 0.5 + noise,
                   0.5 + noise, 0.1 + noise + rng.normal(0, 0.01, 200)])
    board = lb.leaderboard(x, rng=0)
    assert list(board.rank_low) == [1, 2, 2, 4] and list(board.rank_high) == [1, 3, 3, 4]
    assert not board.separated[1, 2] and not board.separated[2, 1]
    assert board.identical[1, 2]                  # identical answers: never separated
    assert list(board.best_set) == [True, False, False, False]
    assert list(board.tier) == [1, 2, 2, 3]


def test_batch_equals_one_board_at_a_time():
    """Boards draw their signs one after another from the generator: a batch equals its
    boards computed in order from the same generator."""
    rng = np.random.default_rng(4)
    x = (rng.random((3, 5, 60)) < 0.6).astype(float)
    batch = lb.simultaneous_pairs(x, draws=300, rng=7)
    gen = np.random.default_rng(7)
    for b in range(3):
        one = lb.simultaneous_pairs(x[b], draws=300, rng=gen)
        assert one.critical == batch.critical[b]
        np.testing.assert_array_equal(one.beaten_p, batch.beaten_p[b])
        np.testing.assert_array_equal(one.separated, batch.separated[b])


def test_best_set_is_inside_the_all_pairs_set():
    """Consistency: each system's test against its m - 1 rivals is never less powerful than
    the all-pairs separations (its null maximum is over fewer, one-sided pairs), so a
    possibly-best system has no rival separated above it (rank interval from 1)."""
    rng = np.random.default_rng(8)
    a = np.linspace(0, 1.0, 12)
    x = (rng.random((40, 12, 150)) < 1 / (1 + np.exp(-a[:, None]))).astype(float)
    d = lb.simultaneous_pairs(x, draws=300, rng=9)
    assert np.all(d.rank_low[d.best_set] == 1)
    assert d.best_set.sum() < (d.rank_low == 1).sum()


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match="'x' parameter"):
        lb.leaderboard(np.zeros((1, 10)))
    with pytest.raises(ValueError, match="'x' parameter"):
        lb.leaderboard(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="'draws' parameter"):
        lb.leaderboard(np.zeros((3, 20)), draws=10)


def _consistent_tiers(means, separated):
    """Reference: walk the cuts of the mean order one at a time (module docstring)."""
    order = np.argsort(-means, kind="stable")
    tier = np.empty(means.size, dtype=int)
    current = 1
    for k, i in enumerate(order):
        tier[i] = current
        if k + 1 < means.size and separated[np.ix_(order[:k + 1], order[k + 1:])].all():
            current += 1
    return order, tier


def test_tiers_are_the_cuts_of_the_separation_graph():
    """Consistency: lb.tiers over a batch equals the walk board by board, and two systems in
    different tiers are always a separated pair ordered as their tiers."""
    rng = np.random.default_rng(11)
    means = rng.random((200, 7))
    means[:, 3] = means[:, 5]                    # a tie in the means: input order decides
    rank = np.argsort(np.argsort(-means, axis=-1, kind="stable"), axis=-1)
    # mostly separated patterns that agree with the means, so that cuts happen
    separated = (rank[:, :, None] < rank[:, None, :]) & (rng.random((200, 7, 7)) < 0.9)
    order, tier = lb.tiers(means, separated)
    assert (tier.max(axis=-1) > 1).mean() > 0.5
    for b in range(200):
        ref_order, ref_tier = _consistent_tiers(means[b], separated[b])
        np.testing.assert_array_equal(order[b], ref_order)
        np.testing.assert_array_equal(tier[b], ref_tier)
    higher = tier[:, :, None] < tier[:, None, :]
    assert not (higher & ~separated).any()


def test_progress_counts_every_draw_once():
    rng = np.random.default_rng(5)
    x = (rng.random((4, 7, 50)) < 0.6).astype(float)
    counts = []
    lb.simultaneous_pairs(x, draws=300, rng=1, progress=counts.append)
    assert sum(counts) == 4 * 300
    one = []
    board = lb.leaderboard(x[0], draws=300, rng=1, progress=one.append)
    assert sum(one) == 300
    # the bar does not change the numbers
    assert board.critical == lb.leaderboard(x[0], draws=300, rng=1).critical
