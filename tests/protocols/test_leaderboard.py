"""protocols.leaderboard against direct computations (numpy, scipy.stats.t) and exact cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from protocols import leaderboard as lb


def test_pair_se_is_the_paired_standard_error():
    rng = np.random.default_rng(0)
    x = rng.random((6, 40))
    means, diff, se = lb.pair_se(x)
    for i, j in [(0, 1), (2, 5), (4, 3)]:
        d = x[i] - x[j]
        assert diff[i, j] == pytest.approx(d.mean())
        assert se[i, j] == pytest.approx(d.std(ddof=1) / np.sqrt(d.size))


def test_two_systems_critical_is_the_t_quantile():
    """One pair: max |T| is |T|, t on n - 1 df; the Monte Carlo quantile within 4 SE
    (the quantile's SE from the t density)."""
    rng = np.random.default_rng(1)
    n, draws = 15, 40_000
    x = rng.normal(size=(2, n))
    board = lb.leaderboard(x, 0.05, draws=draws, rng=2)
    ref = stats.t.ppf(0.975, n - 1)
    se = np.sqrt(0.975 * 0.025 / draws) / (2 * stats.t.pdf(ref, n - 1))
    assert abs(board.critical - ref) < 4 * se


def test_clear_order_gives_exact_ranks_and_ties_are_never_separated():
    rng = np.random.default_rng(3)
    noise = rng.normal(0, 0.01, (1, 200))
    x = np.vstack([0.9 + noise + rng.normal(0, 0.01, 200), 0.5 + noise,
                   0.5 + noise, 0.1 + noise + rng.normal(0, 0.01, 200)])
    board = lb.leaderboard(x, rng=0)
    assert list(board.rank_low) == [1, 2, 2, 4] and list(board.rank_high) == [1, 3, 3, 4]
    assert not board.separated[1, 2] and not board.separated[2, 1]
    assert board.degenerate[1, 2]                 # identical answers: no variance estimate
    assert list(board.best_set) == [True, False, False, False]
    assert list(board.tier) == [1, 2, 2, 3]


def test_batch_equals_one_board_at_a_time():
    rng = np.random.default_rng(4)
    x = (rng.random((3, 5, 60)) < 0.6).astype(float)
    batch = lb.simultaneous_pairs(x, rng=7)
    for b in range(3):
        one = lb.simultaneous_pairs(x[b], rng=7)
        assert one.critical == pytest.approx(batch.critical[b], rel=1e-12)
        np.testing.assert_array_equal(one.separated, batch.separated[b])


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match="'x' parameter"):
        lb.leaderboard(np.zeros((1, 10)))
    with pytest.raises(ValueError, match="'x' parameter"):
        lb.leaderboard(np.zeros((3, 2)))


def _greedy_tiers(means, separated):
    """Reference: the display tiers walked one system at a time (module docstring)."""
    order = np.argsort(-means, kind="stable")
    tier = np.empty(means.size, dtype=int)
    current, leader = 1, order[0]
    for i in order:
        if separated[leader, i]:
            current, leader = current + 1, i
        tier[i] = current
    return order, tier


def test_batched_tiers_equal_the_walk_board_by_board():
    """Consistency: lb.tiers over a batch of random separation patterns equals the
    one-board walk of the module docstring, board by board."""
    rng = np.random.default_rng(11)
    means = rng.random((40, 9))
    means[:, 3] = means[:, 5]                    # a tie in the means: input order decides
    separated = rng.random((40, 9, 9)) < 0.3
    order, tier = lb.tiers(means, separated)
    for b in range(40):
        ref_order, ref_tier = _greedy_tiers(means[b], separated[b])
        np.testing.assert_array_equal(order[b], ref_order)
        np.testing.assert_array_equal(tier[b], ref_tier)


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
