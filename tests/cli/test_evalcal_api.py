"""``import evalcal``: the functions give the commands' numbers, and docs/api.md runs.

Consistency checks (the reference is the command's own output, run as a user runs it); the
statistics themselves are tested against their references elsewhere.
"""

from __future__ import annotations

import dataclasses
import doctest
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from tests_paths import FIXTURES, REPO

import evalcal
from sim.outputs import csv_text

LOGS = FIXTURES / "logs"
PAIRS = {
    "lm-eval": {"seed1": LOGS / "lm_eval" / "dummy"
                / "samples_tiny_qa_2026-11-24T18-03-01.098898.jsonl",
                "seed2": LOGS / "lm_eval" / "dummy"
                / "samples_tiny_qa_2026-11-24T18-03-09.760803.jsonl"},
    "inspect": {"eval": LOGS / "inspect_eval" / "tiny.eval",
                "json": LOGS / "inspect_json" / "tiny.json"},
}


def _command(*argv, cwd):
    proc = subprocess.run([sys.executable, "-m", *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("harness", sorted(PAIRS))
def test_compare_two_harness_logs_equals_the_command(harness, tmp_path):
    """The same two logs through ``evalcal evaluate --json`` (the console script's module)
    and through ``evalcal.compare``: the same body, number for number."""
    arms = PAIRS[harness]
    argv = [a for name, path in arms.items() for a in ("--arm", f"{name}={path}")]
    cli = json.loads(_command("evalcal_cli", "evaluate", *argv, "--json", cwd=tmp_path))
    result = evalcal.compare(arms=arms)
    assert result.to_dict() == cli
    frame = result.to_frame()
    assert list(frame["estimate"]) == [c["estimate"] for c in cli["comparisons"]]
    assert list(frame["p_value"]) == [c["p_value"] for c in cli["comparisons"]]
    assert "<table" in result._repr_html_() and "| comparison |" in result.to_markdown()


def test_calibrate_equals_the_command(tmp_path):
    """``evalcal.calibrate`` returns calibration.csv's and seed_budget.csv's rows."""
    argv = ["--k", "3", "4", "--effects", "0", "1", "--protocols", "paired_t", "welch_t",
            "--sims", "300", "--k-max", "6"]
    _command("sim.calibrate", *argv, "--out", str(tmp_path / "out"), "--jobs", "1",
             "--no-plot", "--quiet", cwd=tmp_path)
    cal = evalcal.calibrate(k=(3, 4), effects=[0, 1], protocols=["paired_t", "welch_t"],
                            sims=300, k_max=6)
    assert cal.config.to_argv()[:2] == ["--k", "3"]
    for name, frame in (("calibration.csv", cal.to_frame()), ("seed_budget.csv", cal.budget)):
        # the file's text is the frame's, written by the command's own writer
        assert (tmp_path / "out" / name).read_text() == csv_text(frame)
    text = str(cal)
    assert "false-positive rate" in text and "seed budget" in text
    markdown = cal.to_markdown()
    assert markdown.count("| protocol | k = 3 | k = 4 |") == 2
    assert "<table" in cal._repr_html_()


def test_plan_equals_the_command(tmp_path):
    """``evalcal.plan``'s text is the command's printout; with ``out`` it writes the same
    tables."""
    argv = ["--sd-seed", "0.5", "--sd-question", "8", "--effect", "1", "--cost", "seed=4",
            "question=0.001", "--sims", "200", "--show", "2"]
    printed = _command("sim.plan", *argv, "--out", str(tmp_path / "cli"), cwd=tmp_path)
    study = evalcal.plan(sd_seed=0.5, sd_question=8, effect=1,
                         cost={"seed": 4, "question": 0.001}, sims=200, show=2,
                         out=tmp_path / "api")
    assert str(study) + "\n" == printed
    for name in ("plan_designs.csv", "plan_checked.csv"):
        assert (tmp_path / "cli" / name).read_text() == (tmp_path / "api" / name).read_text()
    assert study.chosen == study.to_frame().iloc[0].to_dict() | {
        k: v for k, v in study.chosen.items() if k not in study.to_frame()}
    assert study.to_markdown().count("\n|") == 2 + 2   # header, rule, two designs
    assert "<table" in study._repr_html_()


def test_results_are_frozen():
    cal = evalcal.Calibration(config=None, result=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cal.result = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        evalcal.StudyPlan(plan=None, lines=()).lines = ("x",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        evalcal.compare().config = None


@pytest.mark.parametrize(("call", "options", "message"), [
    (evalcal.calibrate, {"k": 3, "bogus": 1}, r"calibrate\(\) got unknown option\(s\) bogus"),
    (evalcal.calibrate, {"sims": 10}, r"The 'k' parameter of calibrate\(\) must be given"),
    (evalcal.calibrate, {"k": (5, 3)},
     r"The 'k' parameter of calibrate\(\) must be MIN MAX with MIN <= MAX"),
    (evalcal.plan, {"bogus": 1}, r"plan\(\) got unknown option\(s\) bogus"),
    (evalcal.plan, {"cost": {"gpu": 1}, "sd_seed": 1},
     r"The 'cost' parameter of plan\(\) must be KEY=VALUE"),
    (evalcal.plan, {"k_max": "x"},
     r"The 'k_max' parameter of plan\(\) must be an integer\. Got 'x' \(a str\) instead\."),
    (evalcal.compare, {"bogus": 1}, r"compare\(\) got unknown option\(s\) bogus"),
    # the command's --arm is arms= here; a list of pairs, odd keys or paths are named as such
    (evalcal.compare, {"arm": [("a", "x"), ("b", "y")]},
     r"The 'arm' parameter of compare\(\) must be spelled arms=, a dict \{name: log path\}"),
    (evalcal.compare, {"arms": [("a", "x"), ("b", "y")]},
     r"The 'arms' parameter of compare\(\) must be a dict \{name: log path\}\. Got "
     r"\[\('a', 'x'\), \('b', 'y'\)\] \(a list\) instead\."),
    (evalcal.compare, {"arms": {"a": "x"}}, r"'arms' parameter of compare\(\) must be a dict "
                                          r"of two or more arms"),
    (evalcal.compare, {"arms": {"a=b": "x", "c": "y"}},
     r"'arms' parameter .* must be keyed by arm names: non-empty text without '='\. Got 'a=b'"),
    (evalcal.compare, {"arms": {"a": "x", 3: "y"}}, r"keyed by arm names.*Got 3 \(a int\)"),
    (evalcal.compare, {"arms": {"a": None, "b": "y"}},
     r"must be a log path for each arm \(arm 'a'\)\. Got None"),
])
def test_bad_options_are_one_line(call, options, message):
    with pytest.raises(ValueError, match=message) as info:
        call(**options)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("out", "message"), [
    ("", r"The 'out' parameter of calibrate\(\) must be a folder path, not empty"),
    ("{file}", r"The 'out' parameter must be a folder \(.*is a file\)"),
    ("{file}/under", r"The 'out' parameter must be a folder \(.*is under the file"),
])
def test_calibrate_out_is_checked_before_any_cell(out, message, tmp_path):
    """``out=`` a file was a NotADirectoryError traceback from the cell cache, and ``""`` wrote
    the cache into the working folder (issue 47's hostile run)."""
    file = tmp_path / "afile"
    file.write_text("x\n")
    with pytest.raises(ValueError, match=message) as info:
        evalcal.calibrate(k=3, sims=20, effects=(0,), protocols=("paired_t",),
                          out=out.replace("{file}", str(file)))
    assert "\n" not in str(info.value)


def test_a_config_is_run_as_given_with_replaced_fields():
    from sim.calibration import CalibrationConfig

    config = CalibrationConfig(k=(3,), effects=(0.0,), protocols=("paired_t",), sims=200,
                               out=None, quiet=True, k_max=3)
    cal = evalcal.calibrate(config, seed=1)
    assert cal.config == dataclasses.replace(config, seed=1)
    assert set(cal.to_frame()["seed"]) == {1}
    with pytest.raises(ValueError, match=r"'config' parameter of calibrate\(\) must be a "
                                         r"sim.calibration.CalibrationConfig"):
        evalcal.calibrate({"k": 3})


def _markdown_blocks(path):
    """The ``python`` code blocks of a Markdown page, with their first line numbers."""
    blocks, lines, start = [], None, 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if lines is None and re.match(r"^```python\s*$", line):
            lines, start = [], number
        elif lines is not None and line.startswith("```"):
            blocks.append((start, "\n".join(lines) + "\n"))
            lines = None
        elif lines is not None:
            lines.append(line)
    return blocks


def test_docs_api_session_runs(monkeypatch):
    """docs/api.md's examples, one session, from the repository's root (they only read)."""
    monkeypatch.chdir(REPO)
    page = REPO / "docs" / "api.md"
    blocks = _markdown_blocks(page)
    assert len(blocks) >= 4
    parser, globs = doctest.DocTestParser(), {}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for start, text in blocks:
        test = parser.get_doctest(text, globs, f"docs/api.md:{start}", str(page), start)
        runner.run(test, clear_globs=False)
        globs.update(test.globs)   # one session across the blocks (a DocTest copies them)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted >= 15
    assert failed == 0


def test_markdown_cells_stay_one_cell():
    from evalcal._api import markdown_table

    frame = pd.DataFrame({"arm": ["a|b", "c\nd"], "x": [1.23456, np.nan]})
    assert markdown_table(frame).splitlines()[2:] == ["| a\\|b | 1.235 |", "| c d |  |"]
