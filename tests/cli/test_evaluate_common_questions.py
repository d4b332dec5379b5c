"""``--common-questions`` (issue 47 item 1): boards and pairs whose models cover different
questions keep the questions every arm has, say how many each arm lost, and drop exact
duplicate rows with a count; a duplicate with another score stays an error. A LiveBench-style
board (its own column names, no seed column, a missing question, a duplicate row) goes
through ``--leaderboard --common-questions`` with no code of the user's."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process

from reports.evaluate.cli import main

PROG = "python -m reports.evaluate"
#: LiveBench's per-question columns (its parquet export), read with the options below
LIVEBENCH = ["--model-column", "model", "--question-column", "question_id"]


def _evaluate(*argv):
    return run_in_process(main, PROG, *argv)


def _board(n=30, models=("m1", "m2", "m3", "m4"), seed=0) -> pd.DataFrame:
    """LiveBench's layout: question_id, task, model, score, turn, tstamp, category."""
    rng = np.random.default_rng(seed)
    rows = [{"question_id": f"{q:04x}", "task": f"t{q % 3}", "model": m,
             "score": float(rng.random() < 0.3 + 0.15 * i), "turn": 1,
             "tstamp": 1.7e9 + q, "category": f"c{q % 3}"}
            for i, m in enumerate(models) for q in range(n)]
    return pd.DataFrame(rows)


def _one_line(done, *words):
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def test_livebench_style_board_goes_through(tmp_path):
    """m4 lacks two questions and one of m2's rows is there twice (a rerun's timestamp,
    the same score): the board ranks the 4 models on the 28 common questions, its means
    those pandas computes on them, and the notes count what was dropped."""
    board = _board()
    board = board[~((board.model == "m4") & board.question_id.isin(["0003", "0011"]))]
    again = board[(board.model == "m2") & (board.question_id == "0005")].assign(tstamp=1.8e9)
    board = pd.concat([board, again], ignore_index=True)
    path = tmp_path / "livebench.csv"
    board.to_csv(path, index=False)
    refused = _evaluate(path, *LIVEBENCH, "--leaderboard")
    _one_line(refused, "--common-questions")
    done = _evaluate(path, *LIVEBENCH, "--leaderboard", "--common-questions")
    assert done.returncode == 0, done.stderr
    assert ("--common-questions: 28 of 30 questions are in every arm and kept; dropped, of "
            "each arm's own: m1 2, m2 2, m3 2") in done.stdout
    assert "--common-questions: 1 exact duplicate row(s) dropped" in done.stdout
    body = json.loads(_evaluate(path, *LIVEBENCH, "--leaderboard", "--common-questions",
                                "--json").stdout)
    assert body["n"] == 28
    common = board.drop_duplicates(["model", "question_id"])
    common = common[~common.question_id.isin(["0003", "0011"])]
    expected = common.groupby("model")["score"].mean()
    rows = body["leaderboard"]["rows"]
    got = {r["system"]: r["mean"] for r in rows}
    assert got == pytest.approx((100 * expected).to_dict(), abs=1e-9)


def test_a_pair_reads_as_the_common_questions_file(tmp_path):
    """Two arms over overlapping questions give the numbers of the file cut to the common
    questions by pandas (the reference), design models, one run per arm."""
    board = _board(n=60, models=("base", "new"))
    board = board[~((board.model == "base") & (board.question_id < "0005"))]
    board = board[~((board.model == "new") & (board.question_id > "0035"))]
    path, cut = tmp_path / "pair.csv", tmp_path / "cut.csv"
    board.to_csv(path, index=False)
    shared = set(board[board.model == "base"].question_id) & set(
        board[board.model == "new"].question_id)
    board[board.question_id.isin(shared)].to_csv(cut, index=False)
    got = json.loads(_evaluate(path, *LIVEBENCH, "--common-questions", "--json").stdout)
    expected = json.loads(_evaluate(cut, *LIVEBENCH, "--json").stdout)
    for body in (got, expected):
        body.pop("source")
    assert got == expected and got["n"] == len(shared) == 49


def test_conflicting_duplicates_stay_an_error(tmp_path):
    board = _board()
    first = board.iloc[[7]]
    board = pd.concat([board, first.assign(score=1 - first["score"])], ignore_index=True)
    path = tmp_path / "conflict.csv"
    board.to_csv(path, index=False)
    _one_line(_evaluate(path, *LIVEBENCH, "--leaderboard", "--common-questions"),
              "row 122", "conflicting duplicate", "with another score")


def test_no_common_question_names_the_sparsest_arms(tmp_path):
    board = _board()
    board = board[~((board.model == "m3") & (board.question_id < "0010"))]
    board = board[~((board.model == "m1") & (board.question_id >= "0010"))]
    path = tmp_path / "disjoint.csv"
    board.to_csv(path, index=False)
    _one_line(_evaluate(path, *LIVEBENCH, "--leaderboard", "--common-questions"),
              "no question is in every arm", "'m3' 14, 'm1' 16")


def test_common_questions_refused_with_logs(tmp_path):
    _one_line(_evaluate("--arm", f"a={tmp_path}/a.jsonl", "--arm", f"b={tmp_path}/b.jsonl",
                        "--common-questions"), "--common-questions", "results CSV")


def test_per_seed_duplicates_are_dropped_with_their_words(tmp_path):
    """A per-seed file: an exact duplicate row is dropped (the note names its columns); the
    numbers are those of the file without it."""
    rows = "seed,arm,metric\n0,a,0.50\n1,a,0.61\n2,a,0.55\n0,b,0.70\n1,b,0.80\n2,b,0.74\n"
    plain, doubled = tmp_path / "plain.csv", tmp_path / "doubled.csv"
    plain.write_text(rows)
    doubled.write_text(rows + "1,b,0.80\n")
    done = _evaluate(doubled, "--common-questions")
    assert done.returncode == 0, done.stderr
    assert ("--common-questions: 1 exact duplicate row(s) dropped (same seed, arm and "
            "metric)") in done.stdout
    got = json.loads(_evaluate(doubled, "--common-questions", "--json").stdout)
    expected = json.loads(_evaluate(plain, "--json").stdout)
    assert got["comparisons"] == expected["comparisons"]
