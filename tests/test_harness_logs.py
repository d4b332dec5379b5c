"""Readers of harness logs (evalcal_core.readers): one test group per format, then aligning.

The fixtures are written here into ``tmp_path``, following what each harness writes:

* lm-evaluation-harness: the ``example`` dict of ``lm_eval/evaluator.py`` (``doc_id``, ``doc``,
  ``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``, ``metrics``, the three
  hashes, then one key per metric), saved by ``EvaluationTracker.save_results_samples`` as
  ``<output_path>/<model_name_sanitized>/samples_<task>_<date_id>.jsonl`` next to
  ``results_<date_id>.json``;
* Inspect: ``inspect_ai/log/_recorders/eval.py`` (a zip with ``header.json``,
  ``_journal/start.json`` and ``samples/{id}_epoch_{epoch}.json``);
* HELM: ``PerInstanceStats`` in ``helm/benchmark/metrics/metric.py`` written by
  ``helm/benchmark/runner.py`` with ``asdict_without_nones`` (so ``perturbation`` is absent
  on unperturbed instances), ``Stat`` fields ``name``/``count``/``sum``/``mean``/...

The expected scores are the values written into the fixtures; the two-arm CSV is also checked
against ``evalcal_core.results_io.read_results_arms`` (consistency between this project's two
readers).
"""

from __future__ import annotations

import importlib.util
import json
import zipfile
from dataclasses import FrozenInstanceError
from pathlib import Path

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra.numpy import arrays

from evalcal_core.readers import LogAlignment, RunLog, align_logs, read_log
from evalcal_core.results_io import read_results_arms

DATE = "2024-05-13T13-53-11.123456"
HAS_PARQUET = any(importlib.util.find_spec(m) for m in ("pyarrow", "fastparquet"))


# --- fixture writers --------------------------------------------------------------------------

def lm_row(doc_id, filter="none", repeats=1, **metrics):
    """One line of an lm-eval samples file, as ``lm_eval/evaluator.py`` builds it."""
    metrics = metrics or {"acc": 1.0}
    row = {
        "doc_id": doc_id,
        "doc": {"question": f"q{doc_id}", "answer": "4"},
        "target": "4",
        "arguments": {"gen_args_0": {"arg_0": f"Q: q{doc_id}\nA:", "arg_1": {"until": ["\n"]}}},
        "resps": [["4"] * repeats],
        "filtered_resps": [["4"] * repeats],
        "filter": filter,
        "metrics": list(metrics),
        "doc_hash": "d" * 64,
        "prompt_hash": "p" * 64,
        "target_hash": "t" * 64,
    }
    row.update(metrics)
    return row


def write_lm_eval(folder: Path, task: str, rows, *, date=DATE, results: dict | None = None,
                  raw: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"samples_{task}_{date}.jsonl"
    path.write_text(raw if raw is not None else "".join(json.dumps(r) + "\n" for r in rows))
    if results is not None:
        (folder / f"results_{date}.json").write_text(json.dumps(results))
    return path


def inspect_sample(sample_id, epoch, **scores):
    return {"id": sample_id, "epoch": epoch, "input": f"question {sample_id}", "target": "C",
            "messages": [], "output": {"model": "m", "choices": []},
            "scores": {name: {"value": value, "answer": "x", "explanation": "e"}
                       for name, value in scores.items()}}


def write_inspect(path: Path, samples, *, task="arc_easy", model="openai/gpt-4o", epochs=None,
                  header=True) -> Path:
    epochs = epochs if epochs is not None else len({s["epoch"] for s in samples})
    spec = {"eval_id": "abc", "run_id": "def", "created": "2025-01-01T00:00:00+00:00",
            "task": task, "task_version": 0, "model": model,
            "config": {"epochs": epochs, "epochs_reducer": ["mean"]}}
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": spec,
                                                           "plan": {}}))
        for sample in samples:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json",
                             json.dumps(sample))
        if header:
            archive.writestr("header.json", json.dumps({
                "version": 2, "status": "success", "eval": spec, "plan": {},
                "results": {"scores": []}, "stats": {}}))
    return path


def helm_entry(instance_id, trial=0, perturbation=None, **stats):
    entry = {"instance_id": instance_id, "train_trial_index": trial,
             "stats": [{"name": {"name": name, "split": "test"}, "count": 1, "sum": value,
                        "sum_squared": value * value, "min": value, "max": value,
                        "mean": value, "variance": 0.0, "stddev": 0.0}
                       for name, value in stats.items()]}
    if perturbation is not None:
        entry["perturbation"] = {"name": perturbation, "robustness": True, "fairness": False,
                                 "computed_on": "perturbed"}
        for stat in entry["stats"]:
            stat["name"]["perturbation"] = entry["perturbation"]
    return entry


def write_helm(folder: Path, entries, *, run_name="mmlu:subject=anatomy,model=openai_gpt2",
               model="openai/gpt2") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run_spec.json").write_text(json.dumps({
        "name": run_name, "scenario_spec": {"class_name": "MMLUScenario"},
        "adapter_spec": {"method": "multiple_choice_joint", "model": model}}))
    path = folder / "per_instance_stats.json"
    path.write_text(json.dumps(entries))
    return path


# --- lm-evaluation-harness --------------------------------------------------------------------

def test_lm_eval_file_reads_one_run_with_task_and_model(tmp_path):
    rows = [lm_row(i, acc=float(i % 2)) for i in (0, 1, 2, 10)]
    path = write_lm_eval(tmp_path / "EleutherAI__pythia-70m", "arc_easy", rows,
                         results={"model_name": "EleutherAI/pythia-70m",
                                  "config": {"model_args": "pretrained=other"}})
    log = read_log(path)
    assert isinstance(log, RunLog)
    assert log.format == "lm-eval" and log.task == "arc_easy"
    assert log.model == "EleutherAI/pythia-70m" and log.metric == "acc"
    assert log.questions == ("0", "1", "2", "10")  # natural order of doc_id
    assert log.runs == (DATE,)
    np.testing.assert_array_equal(log.scores, [[0.0, 1.0, 0.0, 0.0]])
    assert log.source == str(path)


def test_lm_eval_model_from_model_args_then_folder(tmp_path):
    rows = [lm_row(0), lm_row(1)]
    with_args = write_lm_eval(tmp_path / "a", "gsm8k", rows, results={
        "config": {"model": "hf", "model_args": "pretrained=EleutherAI/gpt-j-6b,dtype=float"}})
    assert read_log(with_args).model == "EleutherAI/gpt-j-6b"
    bare = write_lm_eval(tmp_path / "meta-llama__Llama-3-8B", "gsm8k", rows)
    assert read_log(bare).model == "meta-llama/Llama-3-8B"


def test_lm_eval_several_filters_need_a_choice(tmp_path):
    rows = ([lm_row(i, filter="strict-match", exact_match=1.0) for i in range(3)]
            + [lm_row(i, filter="flexible-extract", exact_match=float(i == 0)) for i in range(3)])
    path = write_lm_eval(tmp_path, "gsm8k", rows)
    with pytest.raises(ValueError, match=r"several filters \(strict-match, flexible-extract\)"
                                         r".*pass --filter"):
        read_log(path)
    strict = read_log(path, filter="strict-match")
    flexible = read_log(path, filter="flexible-extract")
    np.testing.assert_array_equal(strict.scores, [[1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(flexible.scores, [[1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match=r"filter 'none' \(--filter\) is absent; filters present: "
                                         r"strict-match, flexible-extract"):
        read_log(path, filter="none")


def test_lm_eval_repeats_are_one_run_with_the_logged_per_document_value(tmp_path):
    """``repeats`` give several responses per line; the metric is already per document."""
    rows = [lm_row(0, repeats=5, exact_match=0.6), lm_row(1, repeats=5, exact_match=0.2)]
    log = read_log(write_lm_eval(tmp_path, "gsm8k_cot_self_consistency", rows))
    assert log.k == 1 and log.task == "gsm8k_cot_self_consistency"
    np.testing.assert_allclose(log.scores, [[0.6, 0.2]])


def test_lm_eval_several_metrics_need_a_choice(tmp_path):
    path = write_lm_eval(tmp_path, "hellaswag",
                         [lm_row(i, acc=1.0, acc_norm=float(i)) for i in range(2)])
    with pytest.raises(ValueError, match=r"several metrics \(acc, acc_norm\); pass --metric"):
        read_log(path)
    log = read_log(path, metric="acc_norm")
    assert log.metric == "acc_norm"
    np.testing.assert_array_equal(log.scores, [[0.0, 1.0]])


def test_lm_eval_without_metrics_list_infers_numeric_keys(tmp_path):
    """Older files have no ``filter``/``metrics`` keys: numbers outside the fixed fields."""
    rows = [{k: v for k, v in lm_row(i, acc=0.5).items() if k not in ("filter", "metrics")}
            for i in range(2)]
    log = read_log(write_lm_eval(tmp_path, "piqa", rows))
    assert log.metric == "acc"
    np.testing.assert_array_equal(log.scores, [[0.5, 0.5]])


def test_lm_eval_folder_discovery_at_any_depth(tmp_path):
    write_lm_eval(tmp_path / "out" / "org__model", "arc_easy", [lm_row(0), lm_row(1)])
    log = read_log(tmp_path / "out")
    assert log.task == "arc_easy" and log.n == 2 and log.model == "org/model"


def test_lm_eval_folder_with_several_tasks(tmp_path):
    write_lm_eval(tmp_path, "arc_easy", [lm_row(0)])
    write_lm_eval(tmp_path, "arc_challenge", [lm_row(0), lm_row(1)])
    with pytest.raises(ValueError, match=r"several tasks \(arc_challenge, arc_easy\); "
                                         r"pass --task"):
        read_log(tmp_path)
    assert read_log(tmp_path, task="arc_challenge").n == 2
    with pytest.raises(ValueError, match=r"task 'mmlu' \(--task\) is absent; tasks present: "
                                         r"arc_challenge, arc_easy"):
        read_log(tmp_path, task="mmlu")


def test_lm_eval_folder_with_two_runs_of_one_task_reads_two_runs(tmp_path):
    """Two sample files of one task are two runs: by recorded seed, else by file date."""
    write_lm_eval(tmp_path, "arc_easy", [lm_row(0, acc=1.0), lm_row(1, acc=0.0)])
    write_lm_eval(tmp_path, "arc_easy", [lm_row(0, acc=0.0), lm_row(1, acc=0.0)],
                  date="2024-06-01T00-00-00.000001")
    log = read_log(tmp_path)
    assert log.runs == ("run 1", "run 2") and log.runs_are == "repeats"
    np.testing.assert_array_equal(log.scores, [[1, 0], [0, 0]])
    assert "numbered by file date" in log.notes[0]
    seeded = tmp_path / "seeded"
    for seed, date, acc in ((7, "2024-06-01T00-00-00.000001", 1.0), (3, DATE, 0.0)):
        write_lm_eval(seeded, "arc_easy", [lm_row(0, acc=acc)], date=date,
                      results={"model_name": "org/m", "config": {"random_seed": seed}})
    log = read_log(seeded)
    assert log.runs == ("seed 3", "seed 7") and log.model == "org/m" and not log.notes
    np.testing.assert_array_equal(log.scores, [[0], [1]])


def test_lm_eval_folder_with_three_seeded_runs_per_arm_reads_three_paired_runs(tmp_path):
    """The issue's case: each arm's folder holds 3 runs of one task, matched by seed."""
    from evalcal_core.readers import read_arms

    for arm, shift in (("base", 0.0), ("var", 1.0)):
        for i, seed in enumerate((11, 12, 13)):
            write_lm_eval(tmp_path / arm, "arc_easy",
                          [lm_row(0, acc=shift), lm_row(1, acc=float(i % 2))],
                          date=f"2024-06-0{i + 1}T00-00-00.000001",
                          results={"model_name": f"org/{arm}",
                                   "config": {"random_seed": seed}})
    log = read_log(tmp_path / "base")
    assert log.runs == ("seed 11", "seed 12", "seed 13")
    arms = read_arms({"base": tmp_path / "base", "var": tmp_path / "var"})
    assert arms.scores.shape == (2, 3, 2)
    np.testing.assert_array_equal(arms.scores[1, :, 0] - arms.scores[0, :, 0], [1, 1, 1])


def test_fmt_override_reads_an_unusual_name(tmp_path):
    path = tmp_path / "my_samples.txt"
    path.write_text(json.dumps(lm_row(3, acc=1.0)) + "\n")
    with pytest.raises(ValueError, match="cannot tell the log format.*pass --log-format"):
        read_log(path)
    log = read_log(path, fmt="lm-eval")
    assert log.questions == ("3",) and log.format == "lm-eval"


# --- Inspect ----------------------------------------------------------------------------------

def test_inspect_epochs_are_runs_and_letters_are_scores(tmp_path):
    values = {("a", 1): "C", ("b", 1): "I", ("c", 1): "P", ("d", 1): "N",
              ("a", 2): True, ("b", 2): 0.25, ("c", 2): "yes", ("d", 2): "0.75"}
    samples = [inspect_sample(i, e, match=v) for (i, e), v in values.items()]
    log = read_log(write_inspect(tmp_path / "run.eval", samples, epochs=2))
    assert log.format == "inspect" and log.task == "arc_easy" and log.model == "openai/gpt-4o"
    assert log.runs == ("epoch 1", "epoch 2") and log.questions == ("a", "b", "c", "d")
    assert log.metric == "match"
    np.testing.assert_array_equal(log.scores, [[1.0, 0.0, 0.5, 0.0], [1.0, 0.25, 1.0, 0.75]])


def test_inspect_several_scorers_need_a_choice(tmp_path):
    samples = [inspect_sample(i, 1, choice="C", model_graded_qa="I") for i in (1, 2)]
    path = write_inspect(tmp_path / "run.eval", samples)
    with pytest.raises(ValueError, match=r"several scorers \(choice, model_graded_qa\); "
                                         r"pass --metric"):
        read_log(path)
    np.testing.assert_array_equal(read_log(path, metric="model_graded_qa").scores, [[0, 0]])


def test_inspect_epoch_count_must_match_the_header(tmp_path):
    path = write_inspect(tmp_path / "run.eval", [inspect_sample(1, 1, s="C")], epochs=3)
    with pytest.raises(ValueError, match=r"field 'eval.config.epochs' is 3 but the samples "
                                         r"hold 1 epoch"):
        read_log(path)


def test_inspect_missing_epoch_of_one_sample(tmp_path):
    samples = [inspect_sample(1, 1, s="C"), inspect_sample(1, 2, s="C"),
               inspect_sample(2, 1, s="I")]
    with pytest.raises(ValueError, match=r"id 2 has no 's' score in epoch 2"):
        read_log(write_inspect(tmp_path / "run.eval", samples))


def test_inspect_folder_picks_the_task(tmp_path):
    write_inspect(tmp_path / "logs" / "a.eval", [inspect_sample(1, 1, s="C")], task="gpqa")
    write_inspect(tmp_path / "logs" / "b.eval", [inspect_sample(1, 1, s="I")], task="mmlu")
    with pytest.raises(ValueError, match=r"several tasks \(gpqa, mmlu\)"):
        read_log(tmp_path / "logs")
    assert read_log(tmp_path / "logs", task="mmlu").scores[0, 0] == 0.0


# --- HELM -------------------------------------------------------------------------------------

def test_helm_trials_and_perturbations(tmp_path):
    entries = [helm_entry("id1", 0, exact_match=1.0, num_prompt_tokens=12.0),
               helm_entry("id2", 0, exact_match=0.0, num_prompt_tokens=9.0),
               helm_entry("id1", 1, exact_match=0.0, num_prompt_tokens=12.0),
               helm_entry("id2", 1, exact_match=1.0, num_prompt_tokens=9.0),
               helm_entry("id1", 0, perturbation="typos", exact_match=0.0),
               helm_entry("id2", 0, perturbation="typos", exact_match=0.0),
               helm_entry("id1", 1, perturbation="typos", exact_match=1.0),
               helm_entry("id2", 1, perturbation="typos", exact_match=0.0)]
    path = write_helm(tmp_path / "run", entries)
    with pytest.raises(ValueError, match=r"several stats \(exact_match, num_prompt_tokens\)"):
        read_log(path)
    log = read_log(path, metric="exact_match")
    assert log.format == "helm" and log.model == "openai/gpt2"
    assert log.task == "mmlu:subject=anatomy,model=openai_gpt2"
    assert log.runs == ("trial 0", "trial 1") and log.questions == ("id1", "id2")
    np.testing.assert_array_equal(log.scores, [[1.0, 0.0], [0.0, 1.0]])
    typos = read_log(path, metric="exact_match", filter="typos")
    np.testing.assert_array_equal(typos.scores, [[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match=r"perturbation 'dialect' \(--filter\) is absent; "
                                         r"perturbations present: typos"):
        read_log(path, metric="exact_match", filter="dialect")


def test_helm_mean_from_sum_and_count(tmp_path):
    entry = helm_entry("id7", exact_match=1.0)
    stat = entry["stats"][0]
    del stat["mean"]
    stat.update(sum=3.0, count=4)
    log = read_log(write_helm(tmp_path / "run", [entry]))
    assert log.scores[0, 0] == 0.75


def test_helm_folder_of_runs_picks_by_scenario(tmp_path):
    write_helm(tmp_path / "suite" / "r1", [helm_entry("id1", exact_match=1.0)],
               run_name="mmlu:subject=anatomy,model=openai_gpt2")
    write_helm(tmp_path / "suite" / "r2", [helm_entry("id1", exact_match=0.0)],
               run_name="boolq:model=openai_gpt2")
    with pytest.raises(ValueError, match="several HELM runs"):
        read_log(tmp_path / "suite")
    assert read_log(tmp_path / "suite", task="boolq").scores[0, 0] == 0.0
    with pytest.raises(ValueError, match="task 'gsm' \\(--task\\) is absent; tasks present: boolq"):
        read_log(tmp_path / "suite", task="gsm")


# --- CSV and Parquet --------------------------------------------------------------------------

TWO_ARM = """seed,arm,question,score
0,baseline,q1,1
0,baseline,q2,0
0,variant,q1,1
0,variant,q2,1
1,baseline,q1,0
1,baseline,q2,0
1,variant,q1,1
1,variant,q2,0
"""


def test_csv_two_arms_agree_with_results_io(tmp_path):
    """Consistency check against this project's other reader, ``evalcal_core.results_io``."""
    path = tmp_path / "runs.csv"
    path.write_text(TWO_ARM)
    with pytest.raises(ValueError, match=r"several arms \(baseline, variant\); pass --filter"):
        read_log(path)
    paired = _pair(read_log(path, filter="baseline"), read_log(path, filter="variant"))
    reference = read_results_arms(path)
    np.testing.assert_array_equal(paired.scores.scores, reference.scores)
    assert paired.run_pairs == (("seed 0", "seed 0"), ("seed 1", "seed 1"))
    assert paired.scores.question_ids == ("q1", "q2")


def test_csv_one_arm_with_and_without_run_column(tmp_path):
    with_runs = tmp_path / "a.csv"
    with_runs.write_text("question,score,run\n007,0.5,2\n007,1,10\n8,0,2\n8,0,10\n")
    log = read_log(with_runs)
    # Ids stay text ("007" is not "7"); numeric ids sort by value, so 007 before 8.
    assert log.questions == ("007", "8") and log.runs == ("run 2", "run 10")
    np.testing.assert_array_equal(log.scores, [[0.5, 0.0], [1.0, 0.0]])
    single = tmp_path / "b.csv"
    single.write_text("question,score\nx,1\ny,0\n")
    assert read_log(single).runs == ("run 0",) and read_log(single).metric == "score"


def test_parquet_without_engine_says_what_to_install(tmp_path, monkeypatch):
    """Without an engine (hidden here: the dev extra installs pyarrow) one line says what
    to install."""
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in (
        "pyarrow", "fastparquet") else find_spec(name, *a))
    path = tmp_path / "runs.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(ValueError, match=r"runs\.parquet: reading Parquet needs pyarrow "
                                         r"\(pip install pyarrow, or the \[parquet\] extra\)"):
        read_log(path)


@pytest.mark.skipif(not HAS_PARQUET, reason="needs pyarrow or fastparquet")
def test_parquet_reads_like_csv(tmp_path):
    import pandas as pd

    csv = tmp_path / "runs.csv"
    csv.write_text(TWO_ARM)
    parquet = tmp_path / "runs.parquet"
    pd.read_csv(csv).to_parquet(parquet)
    a, b = read_log(csv, filter="variant"), read_log(parquet, filter="variant")
    np.testing.assert_array_equal(a.scores, b.scores)
    assert b.format == "parquet" and a.questions == b.questions


# --- aligning a baseline and a variant ---------------------------------------------------------

def _pair(baseline, variant) -> LogAlignment:
    return align_logs({"baseline": baseline, "variant": variant})


def test_align_logs_drops_questions_on_either_side(tmp_path):
    base = read_log(write_inspect(tmp_path / "b.eval", [
        inspect_sample(q, e, s=v) for q, v in (("q1", "C"), ("q2", "I"), ("q3", "C"),
                                               ("q9", "C")) for e in (1, 2)]))
    variant = read_log(write_inspect(tmp_path / "v.eval", [
        inspect_sample(q, e, s=v) for q, v in (("q2", "C"), ("q1", "C"), ("q4", "I"))
        for e in (1, 2)], model="openai/gpt-4o-mini"))
    paired = _pair(base, variant)
    assert isinstance(paired, LogAlignment)
    assert paired.scores.question_ids == ("q1", "q2")
    assert paired.dropped == {"baseline": ("q3", "q9"), "variant": ("q4",)}
    np.testing.assert_array_equal(paired.scores.scores, [[[1, 0], [1, 0]], [[1, 1], [1, 1]]])
    assert (paired.scores.r, paired.scores.n) == (2, 2)
    lines = paired.summary_lines()
    assert lines[0] == ("2 questions matched; 2 only in the baseline (q3, q9); "
                        "1 only in the variant (q4)")
    assert lines[1].startswith("2 run(s) paired by label") and "epoch 1 with epoch 1" in lines[1]
    assert "model openai/gpt-4o-mini" in lines[3] and "mean 1 over the matched" in lines[3]


def test_align_logs_lists_only_the_first_dropped_ids(tmp_path):
    base = tmp_path / "b.csv"
    base.write_text("question,score\n" + "".join(f"q{i},1\n" for i in range(20)))
    var = tmp_path / "v.csv"
    var.write_text("question,score\nq0,0\n")
    line = _pair(read_log(base), read_log(var)).summary_lines()[0]
    assert line.startswith("1 questions matched; 19 only in the baseline (q1, q10, q11, q12, "
                           "q13, ... (14 more)); 0 only in the variant")


def _log(tmp_path, name, text, **kwargs):
    path = tmp_path / name
    path.write_text(text)
    return read_log(path, **kwargs)


@pytest.mark.parametrize("variant_csv, kwargs, words", [
    ("question,score,run\nq1,1,0\nq1,1,1\n", {}, r"paired by position, so both arms need the "
                                                r"same number: baseline .* has 1 \(run 0\), "
                                                r"variant .* has 2"),
    ("question,score,acc\nq1,1,1\n", {"metric": "acc"}, r"metric mismatch: baseline .*b\.csv "
                                                        r"scores 'score' but variant .*v\.csv "
                                                        r"scores 'acc'"),
    ("question,score\nz1,1\n", {}, r"no questions in common between baseline .*b\.csv "
                                   r"\(ids q1\) and variant .*v\.csv \(ids z1\)"),
])
def test_align_logs_errors(tmp_path, variant_csv, kwargs, words):
    base = _log(tmp_path, "b.csv", "question,score\nq1,1\n")
    variant = _log(tmp_path, "v.csv", variant_csv, **kwargs)
    with pytest.raises(ValueError, match=words):
        _pair(base, variant)


def test_results_are_frozen_and_read_only(tmp_path):
    log = _log(tmp_path, "a.csv", "question,score\nq1,1\n")
    with pytest.raises(FrozenInstanceError):
        log.metric = "acc"
    with pytest.raises(ValueError, match="read-only"):
        log.scores[0, 0] = 0.0
    assert log.score_range == (1.0, 1.0)


# --- one-line errors naming the file, the question and the field ------------------------------

def _lm_lines(*lines):
    return "".join(line + "\n" for line in lines)


LM_ERRORS = [
    # (id, samples file text, read_log kwargs, words the message must hold)
    ("non-numeric", _lm_lines(json.dumps(lm_row(16, acc=1.0)), json.dumps(lm_row(17, acc="abc"))),
     {}, r"line 2: doc_id 17: field 'acc' must be a number, got 'abc'"),
    ("malformed-json", _lm_lines(json.dumps(lm_row(0)), json.dumps(lm_row(1)), '{"doc_id": 2,'),
     {}, r"line 3: not valid JSON"),
    ("empty", "\n\n", {}, r"empty file"),
    ("metric-missing-on-a-line", _lm_lines(json.dumps(lm_row(0, acc=1.0, f1=0.5)),
                                           json.dumps(lm_row(1, acc=0.0))),
     {"metric": "f1"}, r"line 2: doc_id 1: field 'f1' is missing \(this line's metrics: acc\)"),
    ("metric-absent", _lm_lines(json.dumps(lm_row(0))), {"metric": "bleu"},
     r"metric 'bleu' \(--metric\) is absent; metrics present: acc"),
    ("corpus-metric", _lm_lines(json.dumps(lm_row(0, bleu=["ref", "pred"]))), {"metric": "bleu"},
     r"doc_id 0: field 'bleu' is \['ref', 'pred'\], not a number.*aggregates this metric over "
     r"the corpus"),
    ("duplicate", _lm_lines(json.dumps(lm_row(4)), json.dumps(lm_row(4))), {},
     r"line 2: doc_id 4: duplicate entry for filter 'none' \(first at line 1\)"),
    ("nan-with-range", _lm_lines(json.dumps(lm_row(0, acc=0.25)), json.dumps(lm_row(1, acc=1.0)),
                                 '{"doc_id": 2, "metrics": ["acc"], "acc": NaN}'),
     {}, r"doc_id 2 \(.*\): field 'acc' is nan; scores must be finite \(the other scores lie "
         r"in \[0\.25, 1\]\)"),
    ("no-doc-id", _lm_lines('{"acc": 1.0}'), {}, r"line 1: field 'doc_id' is missing"),
    ("task-absent", _lm_lines(json.dumps(lm_row(0))), {"task": "mmlu"},
     r"task 'mmlu' \(--task\) is absent; this file holds task 'arc_easy'"),
]


@pytest.mark.parametrize("text, kwargs, words", [case[1:] for case in LM_ERRORS],
                         ids=[case[0] for case in LM_ERRORS])
def test_lm_eval_errors_name_file_question_and_field(tmp_path, text, kwargs, words):
    path = write_lm_eval(tmp_path, "arc_easy", [], raw=text)
    with pytest.raises(ValueError, match=words) as info:
        read_log(path, **kwargs)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message


def _eval_with(tmp_path, samples, **kwargs):
    return write_inspect(tmp_path / "x.eval", samples, **kwargs)


OTHER_ERRORS = [
    ("inspect-no-header",
     lambda p: write_inspect(p / "x.eval", [inspect_sample(1, 1, s="C")], header=False),
     {}, r"x\.eval: the archive has no header\.json"),
    ("inspect-bad-letter",
     lambda p: _eval_with(p, [inspect_sample("q5", 1, s="X")]),
     {}, r"id 'q5' epoch 1: field 'scores\.s\.value' is 'X', not C, I, P, N or a number"),
    ("inspect-unscored",
     lambda p: _eval_with(p, [inspect_sample(1, 1, s="C"), inspect_sample(2, 1, s=None)]),
     {}, r"id 2 epoch 1: field 'scores\.s\.value' is null, an unscored sample"),
    ("inspect-no-scores",
     lambda p: _eval_with(p, [{"id": 3, "epoch": 1, "error": {"message": "boom"}}]),
     {}, r"id 3 epoch 1: field 'scores' is missing or empty \(the sample errored\)"),
    ("inspect-scorer-missing-on-one-sample",
     lambda p: _eval_with(p, [inspect_sample(1, 1, a="C", b="C"), inspect_sample(2, 1, a="I")]),
     {"metric": "b"}, r"id 2 epoch 1: field 'scores\.b\.value' is missing"),
    ("inspect-not-a-zip",
     lambda p: (p / "x.eval").write_text("hello") and p / "x.eval",
     {}, r"x\.eval: not a zip archive"),
    ("helm-not-a-list",
     lambda p: write_helm(p, {"instance_id": "id1"}), {}, r"expected a JSON list"),
    ("helm-empty", lambda p: write_helm(p, []), {}, r"empty file"),
    ("helm-stat-missing",
     lambda p: write_helm(p, [helm_entry("id1", exact_match=1.0, f1=1.0),
                              helm_entry("id2", exact_match=0.0)]),
     {"metric": "f1"}, r"entry 1: instance_id 'id2': stat 'f1' is missing"),
    ("helm-non-numeric-mean",
     lambda p: write_helm(p, [{"instance_id": "id3", "train_trial_index": 0,
                               "stats": [{"name": {"name": "exact_match"}, "mean": "abc"}]}]),
     {}, r"instance_id 'id3': field 'exact_match\.mean' must be a number, got 'abc'"),
    ("helm-all-perturbed",
     lambda p: write_helm(p, [helm_entry("id1", perturbation="typos", exact_match=1.0)]),
     {}, r"all 1 instances are perturbed; pass --filter with one of: typos"),
    ("csv-bad-score",
     lambda p: (p / "r.csv").write_text("question,score\nq1,1\nq2,abc\n") and p / "r.csv",
     {}, r"r\.csv: row 3: question 'q2': column 'score' must be a number, got 'abc'"),
    ("csv-missing-column",
     lambda p: (p / "r.csv").write_text("question,value\nq1,1\n") and p / "r.csv",
     {}, r"r\.csv: column 'score' is missing.*found question, value"),
    ("csv-inf",
     lambda p: (p / "r.csv").write_text("question,score\nq1,1\nq2,inf\n") and p / "r.csv",
     {}, r"question 'q2' \(run 0\): field 'score' is inf; scores must be finite"),
    ("csv-header-only",
     lambda p: (p / "r.csv").write_text("question,score\n") and p / "r.csv",
     {}, r"r\.csv: empty file"),
]


@pytest.mark.parametrize("make, kwargs, words", [case[1:] for case in OTHER_ERRORS],
                         ids=[case[0] for case in OTHER_ERRORS])
def test_other_format_errors(tmp_path, make, kwargs, words):
    path = make(tmp_path)
    with pytest.raises(ValueError, match=words) as info:
        read_log(path, **kwargs)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


@pytest.mark.parametrize("path_of, kwargs, words", [
    (lambda p: p / "missing.jsonl", {}, r"missing\.jsonl: does not exist"),
    (lambda p: p, {"fmt": "json"}, r"--log-format 'json' is not a known log format; known: csv, "
                                   r"helm, inspect, inspect-json, lm-eval, parquet"),
    (lambda p: p, {"metric": 3}, r"--metric: must be a non-empty name; got 3"),
    (lambda p: p, {}, r"found no harness logs in this folder"),
    (lambda p: p, {"fmt": "inspect"}, r"no inspect logs \(\*\.eval\) in this folder"),
    (lambda p: p, {"fmt": "csv"}, r"is a folder; --log-format csv reads one file"),
])
def test_read_log_argument_errors(tmp_path, path_of, kwargs, words):
    with pytest.raises(ValueError, match=words):
        read_log(path_of(tmp_path), **kwargs)


def test_align_logs_rejects_other_types():
    with pytest.raises(ValueError, match=r"arm 'baseline': expected a RunLog \(from read_log\), "
                                         r"got ndarray"):
        _pair(np.zeros((1, 2)), np.zeros((1, 2)))


# --- invariants -------------------------------------------------------------------------------

@settings(max_examples=20)
@given(scores=arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 6)),
                     elements=st.sampled_from([0.0, 0.25, 0.5, 1.0])),
       order=st.randoms(use_true_random=False))
def test_row_order_does_not_matter_and_a_log_pairs_with_itself(tmp_path_factory, scores, order):
    """Consistency only: the matrix follows the ids, not the order rows were written in."""
    k, n = scores.shape
    rows = [f"q{j},{scores[i, j]},{i}" for i in range(k) for j in range(n)]
    order.shuffle(rows)
    path = tmp_path_factory.mktemp("csv") / "runs.csv"
    path.write_text("question,score,run\n" + "\n".join(rows) + "\n")
    log = read_log(path)
    columns = [int(q[1:]) for q in log.questions]
    rows_ = [int(r.split()[-1]) for r in log.runs]
    np.testing.assert_array_equal(log.scores, scores[np.ix_(rows_, columns)])
    paired = _pair(log, log)
    assert paired.dropped == {"baseline": (), "variant": ()}
    np.testing.assert_array_equal(paired.scores.scores[0], paired.scores.scores[1])
