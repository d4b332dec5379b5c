"""sim.decisions.leaderboard's public-board check (board_check) on small boards: seeded,
named streams; the tiers' error under the global null; the rates anchored to the binomial
law at the nominal level (scipy.stats.binom, 99.9% bounds)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from sim.decisions import leaderboard as family

SMALL = [{"systems": 12, "n": 120, "scenario": "null", "gap": 0.0},
         {"systems": 12, "n": 120, "scenario": "spread", "gap": 1.0}]
BOARDS = 120


def _by(rows, scenario, decision):
    (row,) = [r for r in rows if r["cell"]["scenario"] == scenario
              and r["decision"] == decision]
    return row


def test_board_check_is_seeded_and_anchored():
    rows = family.board_check(BOARDS, seed=4, cells=SMALL)
    assert rows == family.board_check(BOARDS, seed=4, cells=SMALL)
    assert rows != family.board_check(BOARDS, seed=5, cells=SMALL)
    false = _by(rows, "null", "leaderboard any false separation")
    tiers = _by(rows, "null", "leaderboard tiers misordered")
    assert false["sims"] == tiers["sims"] == BOARDS
    # a second tier needs a separation: never more often than a false separation
    assert tiers["hits"] <= false["hits"]
    assert false["hits"] <= stats.binom.ppf(0.999, BOARDS, 0.05)
    best = _by(rows, "spread", "leaderboard best set")
    assert best["hits"] >= stats.binom.ppf(0.001, BOARDS, 0.95)
    ranks = _by(rows, "spread", "leaderboard rank intervals")
    assert ranks["hits"] >= stats.binom.ppf(0.001, BOARDS, 0.95)
    # tiers are cut only between separated systems: misordered only with a false separation
    spread_false = _by(rows, "spread", "leaderboard any false separation")
    assert _by(rows, "spread", "leaderboard tiers misordered")["hits"] <= spread_false["hits"]
    # the best set of one test per system is never larger than "none separated above"
    kept = _by(rows, "spread", "leaderboard best set: systems kept")
    assert kept["hits"] <= _by(rows, "spread", "leaderboard best set: systems kept (old)")["hits"]


def test_constant_systems_are_separated_and_the_old_rule_was_not():
    """Issue 45's board: an all-0 and an all-1 system among 8 tied ones, n = 200 questions.
    The all-1 system is separated above the all-0 one on every board (p = 2^-199 by the
    exact sign test); the old rule, which called a constant delta "no variance estimate",
    never separated them."""
    cell = {"systems": 10, "n": 200, "scenario": "constant", "gap": 0.0}
    rows = {r["decision"]: r for r in family.simulate(cell, 60, np.random.default_rng(6))}
    assert rows["leaderboard all-1 over all-0 separated"]["hits"] == 60
    assert rows["leaderboard all-1 over all-0 separated (old)"]["hits"] == 0
    assert rows["leaderboard best set"]["hits"] == 60
    # the set is the all-1 system alone on every board
    assert rows["leaderboard best set: systems kept"]["hits"] == 60
