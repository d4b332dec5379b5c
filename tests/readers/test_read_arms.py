"""m arms aligned into :class:`~evalcal_core.scores.ArmScores`: harness logs
(:func:`evalcal_core.readers.read_arms`) and tidy CSVs with any arm names
(:func:`evalcal_core.results_io.read_results_arms`). Expected values are written by hand."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from tests_paths import FIXTURES

from evalcal_core import readers
from evalcal_core.results_io import ARMS, check_arm_scores, read_results_arms, read_tidy_arms
from evalcal_core.scores import ArmScores

LOGS = FIXTURES / "logs"


def _arm(path, rows, header="run,question,score"):
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def test_three_arms_keep_common_questions_in_the_first_arms_order(tmp_path):
    a = _arm(tmp_path / "a.csv", ["0,q1,1", "0,q2,0", "0,q3,1", "0,q9,1"])
    b = _arm(tmp_path / "b.csv", ["0,q3,0", "0,q2,1", "0,q1,1"])
    c = _arm(tmp_path / "c.csv", ["0,q2,0", "0,q1,0", "0,q3,0", "0,q7,0"])
    arms = readers.read_arms({"small": a, "medium": b, "large": c})
    assert isinstance(arms, ArmScores) and arms.arms == ("small", "medium", "large")
    assert arms.question_ids == ("q1", "q2", "q3") and arms.run_ids == ("run 0",)
    np.testing.assert_array_equal(arms.scores, [[[1, 0, 1]], [[1, 1, 0]], [[0, 0, 0]]])
    assert any("only in small were dropped: q9" in n for n in arms.notes)
    assert any("only in large were dropped: q7" in n for n in arms.notes)


def test_inspect_epochs_are_matched_by_label_and_extra_epochs_dropped(tmp_path):
    """The fixture (epochs 1, 2) against itself, and against a copy holding epoch 1 only."""
    full = LOGS / "inspect_json" / "tiny.json"
    arms = readers.read_arms({"a": full, "b": LOGS / "inspect_eval" / "tiny.eval"},
                             cluster="topic")
    assert arms.run_ids == ("epoch 1", "epoch 2") and arms.runs_are == "repeats"
    np.testing.assert_array_equal(arms.scores[0], arms.scores[1])
    assert arms.cluster_name == "topic" and list(arms.clusters) == ["letters", "greek"] * 2 + [
        "letters"]
    one = readers.read_log(full)
    two = readers.RunLog(scores=one.scores[:1], questions=one.questions, runs=one.runs[:1],
                         metric=one.metric, task=one.task, model=one.model, format=one.format,
                         source="epoch1-only", runs_are="repeats")
    aligned = readers.align_logs({"a": one, "b": two})
    assert aligned.matched_by == "label" and aligned.scores.run_ids == ("epoch 1",)
    assert any("1 run(s) only in a were dropped: epoch 2" in n for n in aligned.scores.notes)


def test_lm_eval_runs_of_different_dates_pair_by_position_with_a_note(tmp_path):
    folder = LOGS / "lm_eval" / "dummy"
    files = sorted(folder.glob("samples_*.jsonl"))
    base, var = tmp_path / "base", tmp_path / "var"
    for target, file in ((base, files[0]), (var, files[1])):
        target.mkdir()
        shutil.copy(file, target)
    alignment = readers.read_logs({"baseline": base, "variant": var})
    assert alignment.matched_by == "position" and alignment.scores.r == 1
    assert alignment.summary_lines()[1].startswith("1 run(s) paired by position")


def test_lm_eval_group_read_with_task_clusters(tmp_path):
    folder = LOGS / "lm_eval" / "dummy"
    first = sorted(folder.glob("samples_*.jsonl"))[0]
    for task in ("mini_a", "mini_b"):
        text = first.read_text()
        (tmp_path / first.name.replace("tiny_qa", task)).write_text(text)
    with pytest.raises(ValueError, match="several tasks.*--task.*--cluster task"):
        readers.read_log(tmp_path)
    log = readers.read_log(tmp_path, cluster="task")
    assert log.n == 12 and log.questions[0] == "mini_a/0"
    assert log.clusters == ("mini_a",) * 6 + ("mini_b",) * 6


def test_read_arms_errors_name_options(tmp_path):
    a = _arm(tmp_path / "a.csv", ["0,q1,1"])
    b = _arm(tmp_path / "b.csv", ["0,z1,1"])
    with pytest.raises(ValueError, match="no questions in common"):
        readers.read_arms({"a": a, "b": b})
    with pytest.raises(ValueError, match="at least two"):
        readers.read_arms({"a": a})
    with pytest.raises(ValueError, match=r"--cluster 'topic' is not a column"):
        readers.read_arms({"a": a, "b": a}, cluster="topic")


# --- tidy CSV with any arm names ---------------------------------------------------------------

def test_results_arms_any_names_per_question_with_clusters(tmp_path):
    rows = [f"{s},{arm},q{q},{int((s + q + i) % 3 == 0)},{'x' if q < 2 else 'y'}"
            for s in (2, 1) for i, arm in enumerate(("gpt", "llama", "mistral"))
            for q in range(4)]
    path = _arm(tmp_path / "r.csv", rows, "seed,arm,question,score,subject")
    arms = read_results_arms(path, cluster="subject")
    assert arms.arms == ("gpt", "llama", "mistral") and arms.runs_are == "seeds"
    assert arms.run_ids == (1, 2) and arms.question_ids == ("q0", "q1", "q2", "q3")
    assert list(arms.clusters) == ["x", "x", "y", "y"] and arms.cluster_name == "subject"
    expected = [[[int((s + q + i) % 3 == 0) for q in range(4)] for s in (1, 2)]
                for i in range(3)]
    np.testing.assert_array_equal(arms.scores, expected)


def test_results_arms_baseline_first_and_agrees_with_the_fixed_arm_names(tmp_path):
    path = _arm(tmp_path / "r.csv", ["0,variant,0.91", "0,Baseline,0.9", "1,variant,0.93",
                                     "1,baseline,0.92"], "seed,arm,metric")
    with pytest.raises(ValueError, match="arm 'baseline' has no score for seed 0"):
        read_results_arms(path)  # any names: 'Baseline' is a third arm
    path.write_text(path.read_text().replace("Baseline", "baseline"))
    arms = read_results_arms(path)
    assert arms.arms == ("baseline", "variant") and arms.n == 1
    np.testing.assert_array_equal(arms.scores, [[[0.9], [0.92]], [[0.91], [0.93]]])
    path.write_text(path.read_text().replace("0,baseline", "0,BASELINE"))
    fixed = read_tidy_arms(path, arms=ARMS)  # names matched case-insensitively
    assert fixed.arms == ARMS
    np.testing.assert_array_equal(fixed.scores, arms.scores)


def test_tidy_arms_with_fixed_names_refuse_others_and_scale(tmp_path):
    path = _arm(tmp_path / "r.csv", ["0,baseline,90", "0,variant,91", "1,treatment,92"],
                "seed,arm,metric")
    with pytest.raises(ValueError, match=r"r\.csv: row 4: column 'arm' must be 'baseline' or "
                                         r"'variant', got 'treatment'$"):
        read_tidy_arms(path, arms=ARMS)
    with pytest.raises(ValueError, match=r"must be 'a', 'baseline' or 'variant', got"):
        read_tidy_arms(path, arms=("a",) + ARMS)
    path.write_text("seed,arm,metric\n0,baseline,90\n0,variant,91\n")
    unchecked = read_tidy_arms(path, arms=ARMS)  # percentages pass: no checks
    np.testing.assert_array_equal(unchecked.scores, [[[90.0]], [[91.0]]])
    np.testing.assert_array_equal(read_tidy_arms(path, scale=0.01).scores,
                                  [[[90 * 0.01]], [[91 * 0.01]]])
    only = _arm(tmp_path / "o.csv", ["0,baseline,0.9"], "seed,arm,metric")
    with pytest.raises(ValueError, match="arm 'variant' has no score for seed 0"):
        read_tidy_arms(only, arms=ARMS)


def test_results_arms_checks_units(tmp_path):
    path = _arm(tmp_path / "p.csv", ["0,a,91", "0,b,92", "1,a,90", "1,b,93"],
                "seed,arm,metric")
    with pytest.raises(ValueError, match="look like percentages.*--percent"):
        read_results_arms(path)
    np.testing.assert_allclose(read_results_arms(path, percent=True).scores[:, :, 0],
                               [[0.91, 0.90], [0.92, 0.93]])
    assert read_results_arms(path, metric_range=(0, 100)).scores.max() == 93
    half = _arm(tmp_path / "h.csv", [f"0,{a},q{q},{0.5 if q == 0 else 1}" for a in "ab"
                                     for q in range(40)], "seed,arm,question,score")
    with pytest.raises(ValueError, match="--partial-credit"):
        read_results_arms(half)
    assert read_results_arms(half, partial_credit=True).n == 40


def test_results_arms_errors(tmp_path):
    one = _arm(tmp_path / "o.csv", ["0,a,0.5"], "seed,arm,metric")
    with pytest.raises(ValueError, match="names one arm"):
        read_results_arms(one)
    gap = _arm(tmp_path / "g.csv", ["0,a,0.5", "0,b,0.5", "1,a,0.5"], "seed,arm,metric")
    with pytest.raises(ValueError, match="arm 'b' has no score for seed 1"):
        read_results_arms(gap)
    with pytest.raises(ValueError, match="does not exist"):
        read_results_arms(tmp_path / "missing.csv")


def test_check_arm_scores_names_the_arm(tmp_path):
    arms = ArmScores(arms=("a", "b", "c"), scores=np.array([[[0.5]], [[0.5]], [[1.5]]]),
                     question_ids=("metric",), run_ids=(0,), source="s")
    with pytest.raises(ValueError, match="s: c seed 0: score 1.5 is outside"):
        check_arm_scores(arms)


def test_read_arms_checks_units_like_the_results_csv(tmp_path):
    a = _arm(tmp_path / "a.csv", ["0,q1,90", "0,q2,80"])
    b = _arm(tmp_path / "b.csv", ["0,q1,70", "0,q2,100"])
    with pytest.raises(ValueError, match="look like percentages.*--percent"):
        readers.read_arms({"a": a, "b": b})
    np.testing.assert_allclose(readers.read_arms({"a": a, "b": b}, percent=True).scores,
                               [[[0.9, 0.8]], [[0.7, 1.0]]])
    assert readers.read_arms({"a": a, "b": b}, metric_range=(0, 100)).scores.max() == 100
    assert readers.read_logs({"a": a, "b": b}).scores.scores.max() == 100  # unchecked


def test_read_arms_passes_the_log_options_to_every_arm(tmp_path):
    a = _arm(tmp_path / "a.csv", ["0,q1,1,x"], "run,question,score,topic")
    arms = readers.read_arms({"a": a, "b": a}, fmt="csv", cluster="topic",
                             max_member_bytes=2 * 2**20)
    assert arms.cluster_name == "topic" and list(arms.clusters) == ["x"]
