"""``evalcal export`` (issue 47 item 1): any input ``evaluate`` reads, written as the tidy CSV
it reads; ``evaluate`` of the written file gives the numbers of ``evaluate`` of the input."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process
from test_harness_logs import inspect_sample, write_inspect

import evalcal_cli
from reports.evaluate.cli import main as evaluate_main


def _export(*argv):
    return run_in_process(evalcal_cli.main, "evalcal", "export", *argv)


def _comparisons(*argv) -> list:
    done = run_in_process(evaluate_main, "python -m reports.evaluate", *argv, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["comparisons"]


def test_a_renamed_file_without_seeds_round_trips(tmp_path):
    """``model,item,correct`` (no seed) -> tidy CSV; evaluate reads both alike."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame([{"model": m, "item": f"i{q}", "correct": int(rng.random() < p),
                           "topic": f"t{q % 4}"}
                          for m, p in (("base", 0.5), ("new", 0.65), ("big", 0.7))
                          for q in range(80)])
    path, out = tmp_path / "mine.csv", tmp_path / "out" / "tidy.csv"
    frame.to_csv(path, index=False)
    layout = ["--model-column", "model", "--question-column", "item", "--score-column",
              "correct"]
    done = _export(path, *layout, "--cluster", "topic", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and "3 arms x 1 run(s) x 80 questions" in done.stdout
    written = pd.read_csv(out)
    assert list(written.columns) == ["seed", "arm", "question", "score", "topic"]
    assert len(written) == len(frame)
    assert (_comparisons(out, "--cluster", "topic")
            == _comparisons(path, *layout, "--cluster", "topic"))
    # nothing but the file and the folder's lock is left beside it
    assert sorted(os.listdir(out.parent)) == [".lock", "tidy.csv"]


def test_inspect_logs_export_as_runs(tmp_path):
    """Two Inspect logs of 3 epochs: the tidy CSV has one row per arm, epoch and question;
    evaluate of it under --design models gives the logs' own comparison."""
    logs = {}
    for arm, right in (("base", {1, 2, 3}), ("new", {1, 2, 3, 4, 5, 6})):
        samples = [inspect_sample(q, e, s="C" if (q + e) % 8 in right else "I")
                   for q in range(1, 21) for e in (1, 2, 3)]
        logs[arm] = write_inspect(tmp_path / f"{arm}.eval", samples)
    out = tmp_path / "tidy.csv"
    argv = [a for arm, path in logs.items() for a in ("--arm", f"{arm}={path}")]
    done = _export(*argv, "--out", out)
    assert done.returncode == 0, done.stderr
    assert "20 questions matched" in done.stdout
    assert "evaluate it with --design models" in done.stdout
    written = pd.read_csv(out)
    assert len(written) == 2 * 3 * 20 and written["seed"].nunique() == 3
    assert _comparisons(out, "--design", "models") == _comparisons(*argv)


@pytest.mark.parametrize("argv, words", [
    (["--out", "{tmp}"], ["{tmp}"]),
    (["--out", "{tmp}/tidy.txt"], ["--out", ".csv"]),
    (["--out", "{tmp}/tidy.csv", "--score-column", "nope"], ["--score-column", "'nope'"]),
])
def test_bad_export_is_one_line(tmp_path, argv, words):
    path = tmp_path / "r.csv"
    pd.DataFrame({"arm": ["a", "a", "b", "b"], "question": [1, 2, 1, 2],
                  "score": [1, 0, 1, 1]}).to_csv(path, index=False)
    argv = [a.format(tmp=tmp_path) for a in argv]
    done = _export(path, *argv)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for word in words:
        assert word.format(tmp=tmp_path) in done.stderr, done.stderr


def test_export_needs_an_input(tmp_path):
    done = _export("--out", tmp_path / "t.csv")
    assert done.returncode == 2 and "no input" in done.stderr
    assert not (tmp_path / "t.csv").exists()
