"""Scores in the user's own layout (issue 47 item 1): ``--score-column``, ``--arm-column``
(``--model-column``), ``--question-column`` and ``--seed-column`` read a CSV whose columns
have other names exactly as the same CSV under the reader's names; a file without a seed
column is one run per arm (fixed models), said in the design's reason. Every fault is one
line with exit status 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process

from reports.evaluate import compare
from reports.evaluate.cli import main

PROG = "python -m reports.evaluate"


def _evaluate(*argv):
    return run_in_process(main, PROG, *argv)


def _tidy(seeds=(0, 1, 2), arms=("base", "new"), n=40, seed=0) -> pd.DataFrame:
    """A per-question file under the reader's names: 0/1 scores, ``new`` better."""
    rng = np.random.default_rng(seed)
    rows = [{"seed": s, "arm": a, "question": f"q{q}",
             "score": int(rng.random() < (0.5 if a == "base" else 0.7))}
            for s in seeds for a in arms for q in range(n)]
    return pd.DataFrame(rows)


def _body(result) -> dict:
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    body.pop("source")
    return body


def test_renamed_columns_read_as_the_reader_names(tmp_path):
    """The same scores under other column names (in another column order) give the same
    output, number for number, as the file under the reader's names."""
    frame = _tidy()
    plain, renamed = tmp_path / "plain.csv", tmp_path / "renamed.csv"
    frame.to_csv(plain, index=False)
    frame.rename(columns={"seed": "run", "arm": "model", "question": "item_id",
                          "score": "correct"})[["item_id", "correct", "model", "run"]].to_csv(
        renamed, index=False)
    expected = _body(_evaluate(plain, "--json"))
    got = _body(_evaluate(renamed, "--json", "--score-column", "correct", "--model-column",
                          "model", "--question-column", "Item_ID", "--seed-column", "run"))
    assert got == expected
    again = _body(_evaluate(renamed, "--json", "--score-column", "correct", "--arm-column",
                            "model", "--question-column", "item_id", "--seed-column", "run"))
    assert again == expected


def test_per_seed_file_score_column_is_the_metric(tmp_path):
    path = tmp_path / "seeds.csv"
    pd.DataFrame({"seed": [0, 1, 2, 3] * 2, "arm": ["a"] * 4 + ["b"] * 4,
                  "accuracy": [0.70, 0.72, 0.69, 0.71, 0.74, 0.75, 0.73, 0.76]}).to_csv(
        path, index=False)
    plain = tmp_path / "plain.csv"
    pd.read_csv(path).rename(columns={"accuracy": "metric"}).to_csv(plain, index=False)
    assert (_body(_evaluate(path, "--json", "--score-column", "accuracy"))
            == _body(_evaluate(plain, "--json")))


def test_without_a_seed_column_each_arm_is_one_fixed_model(tmp_path):
    """``arm,question,score``: one run per arm, design models, the reason saying why; the
    numbers are those of the same file with a one-value seed column."""
    frame = _tidy(seeds=(1,), n=60)
    bare, seeded = tmp_path / "bare.csv", tmp_path / "seeded.csv"
    frame.drop(columns="seed").to_csv(bare, index=False)
    frame.to_csv(seeded, index=False)
    got = _evaluate(bare)
    assert got.returncode == 0, got.stderr
    design = got.stdout.splitlines()[1]
    assert design.startswith("design: models, 1 run, 60 questions")
    assert "one run per arm (no seed column: each arm is one fixed model)" in design
    body, expected = _body(_evaluate(bare, "--json")), _body(_evaluate(seeded, "--json"))
    body["design"].pop("inferred"), body["design"].pop("line")
    expected["design"].pop("inferred"), expected["design"].pop("line")
    assert body == expected


def test_without_a_seed_column_renamed_columns_and_a_frame(tmp_path):
    """The API reads the same: a DataFrame with ``model,item,loss``-style names and no seed."""
    frame = _tidy(seeds=(1,), n=50).drop(columns="seed")
    frame = frame.rename(columns={"arm": "model", "question": "item", "score": "right"})
    result = compare(frame, model_column="model", question_column="item",
                     score_column="right")
    assert result.design.runs == 1 and result.design.n_questions == 50
    assert "no seed column" in result.design.inferred[0]


def _one_line_refusal(result, *words):
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


@pytest.fixture
def renamed(tmp_path):
    path = tmp_path / "renamed.csv"
    _tidy().rename(columns={"arm": "model", "score": "correct"}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("argv, words", [
    (["--score-column", "acc"], ["--score-column", "'acc' is not a column", "correct"]),
    (["--arm-column", "mdl", "--score-column", "correct"], ["--arm-column", "'mdl'"]),
    (["--score-column", "correct", "--question-column", "Correct"],
     ["--score-column", "--question-column", "different columns"]),
    (["--arm-column", "model", "--model-column", "model"],
     ["--arm-column", "--model-column", "one at a time"]),
    (["--score-column", " "], ["--score-column", "a column name"]),
    (["--score-column", "correct", "--arm-column", "model", "--cluster", "question"],
     ["--cluster", "question column"]),
    ([], ["needs columns", "--score-column", "found seed, model, question, correct"]),
])
def test_bad_column_options_are_one_line(renamed, argv, words):
    _one_line_refusal(_evaluate(renamed, *argv), *words)


def test_a_named_column_clashing_with_the_reader_name_is_refused(tmp_path):
    """``--score-column correct`` on a file that also has a ``score`` column: which one is
    the score is ambiguous, so neither is picked silently."""
    path = tmp_path / "both.csv"
    frame = _tidy()
    frame.assign(correct=frame["score"]).to_csv(path, index=False)
    _one_line_refusal(_evaluate(path, "--score-column", "correct"), "--score-column",
                      "also has a column 'score'")


def test_column_options_refused_with_logs(tmp_path):
    _one_line_refusal(_evaluate("--arm", f"a={tmp_path}/a.jsonl", "--arm",
                                f"b={tmp_path}/b.jsonl", "--score-column", "acc"),
                      "--score-column", "results CSV")


def test_messages_name_the_users_column(renamed, tmp_path):
    """A bad score is named by the user's column, not the reader's name for it."""
    frame = pd.read_csv(renamed, dtype=str)
    frame.loc[5, "correct"] = "oops"
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    _one_line_refusal(_evaluate(path, "--score-column", "correct", "--arm-column", "model"),
                      "row 7", "column 'correct' must be a finite number", "'oops'")


def test_one_arm_csv_with_tasks_names_cluster_task_too(tmp_path):
    """A one-arm CSV (``--arm NAME=PATH``) holding several tasks: the refusal names both ways
    out, ``--task`` and ``--cluster task``, and the second one reads (issue 47 item 1)."""
    for arm in ("x", "y"):
        rows = [{"question": f"q{q}", "score": int((q + (arm == "y")) % 3 > 0),
                 "task": f"t{q % 3}"} for q in range(30)]
        pd.DataFrame(rows).to_csv(tmp_path / f"{arm}.csv", index=False)
    argv = ["--arm", f"x={tmp_path}/x.csv", "--arm", f"y={tmp_path}/y.csv"]
    _one_line_refusal(_evaluate(*argv), "several tasks (t0, t1, t2)", "--task",
                      "--cluster task")
    read = _evaluate(*argv, "--cluster", "task")
    assert read.returncode == 0, read.stderr
    assert "clusters: 3 by 'task'" in read.stdout
