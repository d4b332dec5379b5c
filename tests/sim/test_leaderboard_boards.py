"""sim.decisions.leaderboard's public-board check (board_check) on small boards: seeded,
named streams; the tiers' error under the global null; the rates anchored to the binomial
law at the nominal level (scipy.stats.binom, 99.9% bounds)."""

from __future__ import annotations

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
    tiers = _by(rows, "null", "leaderboard tiers (more than one)")
    assert false["sims"] == tiers["sims"] == BOARDS
    # a second tier needs a separation: never more often than a false separation
    assert tiers["hits"] <= false["hits"]
    assert false["hits"] <= stats.binom.ppf(0.999, BOARDS, 0.05)
    best = _by(rows, "spread", "leaderboard best set")
    assert best["hits"] >= stats.binom.ppf(0.001, BOARDS, 0.95)
    ranks = _by(rows, "spread", "leaderboard rank intervals")
    assert ranks["hits"] >= stats.binom.ppf(0.001, BOARDS, 0.95)
    assert not [r for r in rows if r["cell"]["scenario"] == "spread"
                and r["decision"].startswith("leaderboard tiers")]

