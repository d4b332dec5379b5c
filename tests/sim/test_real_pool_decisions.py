"""The decision grid's real-pool families (``real_claims``, ``real_leaderboard``): the planted
shift and tie are exactly what they say, a user's pool runs through ``--llm-pools``, an
absent pool is skipped in one line, and the shared pools' cells name their models."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest
from item_pools import pool_frame, shared_pool, write_pool

from evalcal_core.cli import call_main
from reports import decision_grid as rdg
from sim import decision_grid as dg
from sim import decisions
from sim.decisions import real_claims as rc
from sim.decisions import real_leaderboard as rl

PROG = "python -m sim.decision_grid"


@pytest.fixture
def pool(tmp_path):
    """6 models x 40 items x 4 attempts of 0/1 scores, each (model, item) its own rate."""
    return write_pool(tmp_path, models=tuple("abcdef"), items=40, attempts=4, seed=3)


def test_shifted_turns_exactly_the_planted_attempts():
    """Reference: counting. Each experiment's matrix changes by exactly ``flips`` right
    attempts (down: only right ones turned wrong; up: only wrong ones turned right), and
    the turned cells differ from one experiment to another."""
    rng = np.random.default_rng(0)
    matrix = rng.random((300, 40, 4)) < 0.4
    for flips in (-12, -1, 5):
        out = rc.shifted(matrix, flips, np.random.default_rng(1))
        assert (out.sum(axis=(1, 2)) - matrix.sum(axis=(1, 2)) == flips).all()
        changed = out != matrix
        assert (changed.sum(axis=(1, 2)) == abs(flips)).all()
        assert (matrix[changed] == (flips < 0)).all()      # only right turned down, wrong up
        if abs(flips) > 1:
            assert len({tuple(np.flatnonzero(c)) for c in changed}) > 250
    assert (rc.shifted(matrix, 0, rng) == matrix).all()


def test_pool_cells_follow_their_rules(pool):
    """Reference: pandas on the written file. Margin = flips / (N R) with flips even; the
    eligible models have >= 2 flips right and >= flips wrong attempts; the named model is
    the one with the largest mean p (1 - p) over items."""
    frame = pd.read_csv(pool)
    cells = rc.pool_cells(str(pool))
    # 40 items <= 100: the first cell has them all, so no second cell of every item
    assert [c["runs"] for c in cells] == [1, 2]
    assert [c["n"] for c in cells] == [40, 40]
    right = frame.groupby("model")["score"].sum()
    p = frame.groupby(["model", "item"])["score"].mean()
    mixed = (p * (1 - p)).groupby("model").mean()
    for c in cells:
        assert c["flips"] % 2 == 0 and c["margin"] == c["flips"] / (40 * 4)
        assert c["pool"] == str(pool) and c["of"] == 6 and c["attempts"] == 4
        ok = right[(right >= 2 * c["flips"]) & (160 - right >= c["flips"])].index
        if c["model"] == "all":
            assert c["eligible"] == len(ok)
            assert sorted(c["left_out"]) == sorted(set(right.index) - set(ok))
        else:
            assert c["model"] == mixed[ok].idxmax()


def test_a_ragged_pool_keeps_its_complete_models_and_says_so(tmp_path):
    """A model short of one attempt is left out, and the cells count it."""
    frame = pool_frame(models=tuple("abcd"), items=20, attempts=4, seed=1)
    path = tmp_path / "ragged.csv"
    frame.iloc[1:].to_csv(path, index=False)                 # model a lacks one attempt
    for cells in (rc.pool_cells(str(path)), rl.pool_cells(str(path))):
        assert all(c["dropped_ragged"] == 1 and c["of"] == 3 for c in cells)


def test_the_shift_is_the_planted_amount(pool):
    """Reference: the analytic truth flips / (N R). Every draw returns it exactly, and the
    mean of variant minus baseline over 4,000 experiments of all 40 items is within 4 Monte
    Carlo standard errors of it at every shift (at 0: an A/A pair)."""
    cell = rc.pool_cells(str(pool))[1]
    assert cell["runs"] == 2
    rng = np.random.default_rng(5)
    for _, shift in rc.SHIFTS:
        base, variant, truth = rc.draw(cell, 4000, shift, rng)
        assert base.shape == variant.shape == (4000, 2, 40)
        assert truth == round(shift * cell["flips"]) / 160
        delta = variant.mean(axis=(1, 2)) - base.mean(axis=(1, 2))
        se = delta.std(ddof=1) / np.sqrt(delta.size)
        assert abs(delta.mean() - truth) < 4 * se + 1e-12


def test_the_planted_tie_is_exact_on_a_one_attempt_board(tmp_path):
    """Reference: counting. On a board of every item, the swap twin has X's number right
    on every board and disagrees with X on exactly 2 swaps items; its truth equals X's."""
    path = write_pool(tmp_path, models=tuple("abcdefg"), items=60, attempts=1, seed=2)
    cell = {**rl.pool_cells(str(path))[0], "n": 60}
    assert cell["split"] == "swap" and cell["swaps"] >= 1
    a, x = rl.draw(cell, 200, np.random.default_rng(0))
    # the pair and the 6 other models
    assert a[0] == a[1] and x.shape == (200, 8, 60)
    # items drawn in a different order per board: compare sums and discordance
    assert (x[:, 0].sum(axis=1) == x[:, 1].sum(axis=1)).all()
    assert ((x[:, 0] != x[:, 1]).sum(axis=1) == 2 * cell["swaps"]).all()
    frame = pd.read_csv(path)
    right = frame.groupby("model")["score"].sum()
    assert a[0] == right[cell["tied"]]
    assert list(a[2:]) == [right[m] for m in cell["others"]]


def test_the_planted_tie_splits_two_different_attempts(tmp_path):
    """Reference: a pool built so that each (model, item) has exactly one right attempt of
    two: the tied pair (two different attempts) then has exactly one right per item."""
    frame = pool_frame(models=tuple("abcd"), items=30, attempts=2, seed=0)
    frame["score"] = (frame["attempt"] == frame["item"].str[1:].astype(int) % 2).astype(int)
    path = tmp_path / "one_right.csv"
    frame.to_csv(path, index=False)
    cell = rl.pool_cells(str(path))[0]
    assert cell["split"] == "attempts"
    _, x = rl.draw(cell, 50, np.random.default_rng(1))
    assert (x[:, 0] + x[:, 1] == 1).all()


def test_tied_outcomes_read_each_printed_decision():
    """Reference: hand-made decisions of three boards of 3 systems."""
    separated = np.zeros((3, 3, 3), bool)
    separated[0, 1, 0] = True
    d = {"separated": separated, "tier": np.array([[1, 1, 2], [1, 2, 3], [1, 1, 1]]),
         "rank_low": np.array([[1, 1, 3], [1, 1, 1], [1, 1, 1]]),
         "rank_high": np.array([[3, 2, 3], [3, 3, 3], [3, 3, 3]]),
         "best_set": np.array([[1, 1, 0], [1, 1, 1], [1, 0, 1]], bool)}
    got = rl.tied_outcomes(d)
    assert list(got["tied pair separated"]) == [True, False, False]
    assert list(got["tied pair in different tiers"]) == [False, True, False]
    assert list(got[rl.TOLD_APART]) == [True, True, False]
    assert list(got[rl.BEST_DIFFERS]) == [False, False, True]


def test_a_users_pool_runs_through_the_grid_and_the_command(pool, tmp_path, capsys):
    """``--llm-pools PATH``: both families' cells on the user's pool, their decisions equal
    to ``evaluate``'s on sampled experiments (consistency check, no outside reference)."""
    out = tmp_path / "grid"
    argv = ["--families", "real_claims", "real_leaderboard", "--quick", "--sims", "100",
            "--llm-pools", str(pool), "--end-to-end", "3", "--out", str(out)]
    assert call_main(rdg.main, PROG, argv) == 0
    text = capsys.readouterr().out
    assert "every decision equal to the grid's" in text
    frame = pd.read_csv(out / "decision_grid.csv")
    assert set(frame.family) == {"real_claims", "real_leaderboard"}
    assert frame.cell.str.contains(str(pool), regex=False).all()


@pytest.mark.parametrize("content,words", [
    ("model,item,attempt,score\na,q1,0,0.5\na,q2,0,1\nb,q1,0,0\nb,q2,0,1\n", "0/1 scores"),
    ("model,item,attempt,score\na,q1,0,1\na,q2,0,1\nb,q1,0,0\nb,q2,0,1\n", ">= 2 attempts"),
])
def test_a_pool_the_families_cannot_use_is_one_line(tmp_path, capsys, content, words):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    argv = ["--families", "real_claims", "--quick", "--llm-pools", str(path)]
    assert call_main(rdg.main, PROG, argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and str(path) in err


def test_an_absent_pool_skips_its_cells_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCAL_POOLS", str(tmp_path))        # an empty pools folder
    fake = types.SimpleNamespace(CELLS=[{"pool": "lcb_codegen_20240417"}, {"pool": "x"}],
                                 QUICK_CELLS=[], missing=rc.missing)
    cells, lines = decisions.cells_of(fake)
    assert cells == [] and len(lines) == 2
    assert "lcb_codegen_20240417 not found" in lines[0] and "real_claims" in lines[0]
    assert all("\n" not in line for line in lines)


def test_shared_pools_cells_name_their_models():
    """LiveCodeBench (skips without ../shared): 43 models x 400 items x 10 attempts; the
    margin 80 / 4,000 = 2 pp at 100 items; the board names its 10 systems' models."""
    shared_pool("lcb_codegen_20240417")
    claim = rc.pool_cells("lcb_codegen_20240417")[0]
    assert (claim["of"], claim["items"], claim["attempts"]) == (43, 400, 10)
    assert claim["flips"] == 80 and claim["margin"] == 0.02 and claim["n"] == 100
    board = rl.pool_cells("lcb_codegen_20240417")[0]
    assert board["split"] == "attempts" and len(board["others"]) == rl.SYSTEMS - 2
    assert board["tied"] not in board["others"]
    out = {o["decision"]: o for o in rl.simulate(board, 30, np.random.default_rng(0))}
    assert out[rl.TOLD_APART]["sims"] == 30
    frame = dg.run_grid(dg.GridConfig(families=("real_claims",), quick=True, sims=60, jobs=1))
    lcb = frame[frame.cell.str.contains('"pool":"lcb_codegen_20240417"', regex=False)]
    assert len(lcb) and lcb.cell.str.contains('"of":43', regex=False).all()
