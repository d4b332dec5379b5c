"""``sample`` of the mcnemar, streaming and leaderboard families scores the same draws with
the same decision functions as ``simulate`` (consistency only: the end-to-end check in
tests/reports/test_end_to_end.py compares them with ``evaluate``)."""

from __future__ import annotations

import numpy as np

from sim.decisions import leaderboard, mcnemar, streaming
from sim.end_to_end import GATE


def _hits(rows, decision):
    (row,) = [r for r in rows if r["decision"] == decision]
    return row["hits"]


def test_mcnemar_sample_counts_are_simulates():
    params = mcnemar.QUICK_CELLS[1]
    rows = mcnemar.simulate(params, 40, np.random.default_rng(2))
    s = mcnemar.sample(params, 40, np.random.default_rng(2))
    assert len(s.frames) == 40
    assert s.decisions["significant"].sum() == _hits(rows, "mcnemar exact")
    assert s.decisions["covered"].sum() == _hits(rows, "mcnemar interval")


def test_streaming_sample_counts_are_simulates():
    """The claim a cell is read with is scored by simulate under its sequence's name; the
    gate is 0 exactly where that claim is shown."""
    params = streaming.CELLS[3]
    method, claim = streaming._reading(params)
    rows = streaming.simulate(params, 12, np.random.default_rng(4))
    s = streaming.sample(params, 12, np.random.default_rng(4))
    name = f"{method} sequence"
    assert (s.decisions[GATE] == 0).sum() == _hits(rows, f"{name}: {claim} at 2 pp shown")
    assert (s.decisions["0 left at"] > 0).sum() == _hits(rows, f"{name}: stop when 0 leaves")
    assert (~s.decisions["covered"]).sum() == _hits(
        rows, f"{name}: misses the truth at some look")
    assert s.options["stream_method"] == method and s.options["claim"] == claim


def test_streaming_cells_cover_every_reading():
    readings = {streaming._reading(p) for p in streaming.CELLS}
    assert readings == {(m, c) for m in streaming.METHODS for c in streaming.CLAIMS}


def test_leaderboard_board_decisions_follow_the_seed():
    """A board's decisions depend on its seed alone, not on the boards beside it (each is
    decided as ``evaluate --seed`` decides it)."""
    params = leaderboard.QUICK_CELLS[0]
    a, x = leaderboard.draw(params, 3, np.random.default_rng(1))
    both = leaderboard.decide_boards(x, [7, 9, 7])
    alone = leaderboard.decide_boards(x[2:], [7])
    for key, value in both.items():
        np.testing.assert_array_equal(value[2], alone[key][0])
