"""``evaluate --leaderboard``: the numbers of protocols.leaderboard on the file's units."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcal_core.cli import call_main
from protocols import leaderboard as lb
from reports.evaluate import main


def _board(tmp_path, m=12, n=150, seed=0):
    rng = np.random.default_rng(seed)
    p = np.linspace(0.55, 0.8, m)
    x = (rng.random((m, n)) < p[:, None]).astype(int)
    rows = [(0, f"s{i:02d}", q, int(x[i, q])) for i in range(m) for q in range(n)]
    path = tmp_path / "board.csv"
    pd.DataFrame(rows, columns=["seed", "arm", "question", "score"]).to_csv(path, index=False)
    return path, x


def test_json_equals_the_library(tmp_path, capsys):
    path, x = _board(tmp_path)
    assert call_main(main, "evaluate", [str(path), "--leaderboard", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)["leaderboard"]
    ref = lb.leaderboard(x.astype(float), 0.05, rng=np.random.default_rng(0))
    assert body["critical"] == pytest.approx(ref.critical, rel=1e-12)
    assert body["separated_pairs"] == int(ref.separated.sum())
    by_name = {r["system"]: r for r in body["rows"]}
    for i in range(x.shape[0]):
        row = by_name[f"s{i:02d}"]
        assert (row["rank_low"], row["rank_high"]) == (ref.rank_low[i], ref.rank_high[i])
        assert row["possibly_best"] == bool(ref.best_set[i])
        assert row["mean"] == pytest.approx(100 * x[i].mean())


def test_text_and_markdown(tmp_path, capsys):
    path, _ = _board(tmp_path)
    assert call_main(main, "evaluate", [str(path), "--leaderboard"]) == 0
    out = capsys.readouterr().out
    assert ("leaderboard: 12 systems on 150 paired questions; max over all 66 pairs of "
            "McNemar-type sign statistics") in out
    assert all(line == line.rstrip() for line in out.splitlines())
    assert call_main(main, "evaluate", [str(path), "--leaderboard", "--format",
                                        "markdown"]) == 0
    assert "| rank | tier | system |" in capsys.readouterr().out


@pytest.mark.parametrize("extra", [["--claim", "superiority"], ["--reference", "s00"],
                                   ["--correction", "bh"]])
def test_options_that_do_not_apply_are_refused(tmp_path, capsys, extra):
    path, _ = _board(tmp_path)
    assert call_main(main, "evaluate", [str(path), "--leaderboard", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--leaderboard" in err[0]


def test_stream_reads_two_arms_in_file_order(tmp_path, capsys):
    """--stream: protocols.streaming on the per-question deltas in the file's order."""
    from protocols.streaming import confidence_sequence

    path, x = _board(tmp_path, m=2, n=400)
    assert call_main(main, "evaluate", [str(path), "--stream", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)["stream"]
    cs = confidence_sequence((x[1] - x[0]).astype(float), 0.05)
    low, high = cs.interval_at(400)
    assert body["n"] == 400 and body["unit"] == "questions"
    assert body["low"] == pytest.approx(low) and body["high"] == pytest.approx(high)
    assert body["stopped_at"] == int(cs.first_exclusion(0.0))
    path3, _ = _board(tmp_path, m=3, n=50)
    assert call_main(main, "evaluate", [str(path3), "--stream"]) == 2
    assert "--stream reads two arms" in capsys.readouterr().err


def test_constant_systems_through_the_command(tmp_path, capsys):
    """Issue 45 end to end: an all-0 and an all-1 system among coin-flip systems on 200
    questions. The all-1 system alone is possibly best (its rivals' p of being beaten is at
    most the smallest Monte Carlo p, 1 / 2,001, against the sign test's 2^-199), the all-0
    system's rank interval is [m, m], and the tiers put the two at the ends."""
    rng = np.random.default_rng(2)
    m, n = 5, 200
    x = np.vstack([np.zeros(n), np.ones(n), rng.random((m - 2, n)) < 0.5]).astype(int)
    rows = [(0, f"s{i}", q, int(x[i, q])) for i in range(m) for q in range(n)]
    path = tmp_path / "constant.csv"
    pd.DataFrame(rows, columns=["seed", "arm", "question", "score"]).to_csv(path, index=False)
    assert call_main(main, "evaluate", [str(path), "--leaderboard", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)["leaderboard"]
    by_name = {r["system"]: r for r in body["rows"]}
    assert (by_name["s0"]["rank_low"], by_name["s0"]["rank_high"]) == (m, m)
    assert (by_name["s1"]["rank_low"], by_name["s1"]["rank_high"]) == (1, 1)
    assert [r["system"] for r in body["rows"] if r["possibly_best"]] == ["s1"]
    assert by_name["s0"]["p_beaten"] == pytest.approx(1 / (lb.DEFAULT_DRAWS + 1))
    assert by_name["s1"]["tier"] == 1 and by_name["s0"]["tier"] == max(
        r["tier"] for r in body["rows"])
    assert ["s1", "s0"] in body["separated"]
    assert body["null_draws"] == lb.DEFAULT_DRAWS and body["exact"] is False
