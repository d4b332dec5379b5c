"""Issue 36, battery part 1: hostile inputs to the readers get one clean line or a correct accept.

Each case is a file an outside battery fed to ``python -m protocols.evaluate``: an integer past
the float range, a doc id that looks like a digit, ``count: Infinity``, a path-traversal zip
member, arm names pandas reads as missing, a ``task`` column used as the cluster, and side
files or sample lines far larger than the fields the reader needs. The files are built here,
in ``tmp_path``, small: size caps are tested with a lowered cap, never a large file.
"""

from __future__ import annotations

import json
import os
import tracemalloc
import zipfile

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process

from evalcal_core import readers
from evalcal_core.designs import MODELS_CLUSTERED
from evalcal_core.readers import _files
from evalcal_core.results_io import read_results_arms

HUGE = 10**400  # exact in JSON, past the float range (about 1.8e308)
LM_NAME = "samples_t_2024-01-01T00-00-00.000001.jsonl"
HEADER = {"version": 2, "status": "success",
          "eval": {"task": "t", "model": "m", "config": {"epochs": 1}}}


def _one_line(info, path) -> str:
    """The message of a ``pytest.raises`` block: one line, naming ``path``."""
    message = str(info.value)
    assert "\n" not in message and str(path) in message, message
    return message


# --- file builders ------------------------------------------------------------------------------

def _inspect_eval(path, values: dict, extra: dict | None = None):
    """An Inspect ``.eval`` (deflate zip): one epoch, scorer ``match``, ``{id: value}``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(HEADER))
        for qid, value in values.items():
            sample = {"id": qid, "epoch": 1, "scores": {"match": {"value": value}}}
            archive.writestr(f"samples/{qid}_epoch_1.json", json.dumps(sample))
        for name, text in (extra or {}).items():
            archive.writestr(name, text)
    return path


def _inspect_json(path, values: dict):
    samples = [{"id": q, "epoch": 1, "scores": {"match": {"value": v}}}
               for q, v in values.items()]
    path.write_text(json.dumps(HEADER | {"samples": samples}))
    return path


def _lm_eval(path, rows: list):
    """lm-eval samples: ``rows`` of ``(doc_id, acc)`` or whole dicts."""
    lines = [row if isinstance(row, dict) else
             {"doc_id": row[0], "filter": "none", "metrics": ["acc"], "acc": row[1]}
             for row in rows]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _helm(folder, stats: list, run_spec: dict | None = None):
    """HELM ``per_instance_stats.json``: one instance per ``stats`` entry (its stat dict)."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = [{"instance_id": f"id{i}", "train_trial_index": 0,
                "stats": [{"name": {"name": "exact_match"}} | stat]}
               for i, stat in enumerate(stats)]
    path = folder / "per_instance_stats.json"
    path.write_text(json.dumps(entries))  # json writes float("inf") as Infinity
    if run_spec is not None:
        (folder / "run_spec.json").write_text(json.dumps(run_spec))
    return path


def _cli(argv) -> tuple[int, str]:
    """Exit code and stderr of ``python -m protocols.evaluate argv``, run in this process."""
    from protocols.evaluate import main

    done = run_in_process(main, "protocols.evaluate", *argv)
    return done.returncode, done.stderr


# --- an integer past the float range: a traceback before --------------------------------------

def test_float_of_a_huge_json_integer_overflows():
    """The fault itself: ``float`` of an exact integer past 1.8e308 raises, not a ValueError."""
    with pytest.raises(OverflowError):
        float(HUGE)


@pytest.mark.parametrize("fmt", ["inspect", "inspect-json", "lm-eval", "helm-mean",
                                 "helm-sum", "helm-count"])
def test_integer_past_float_range_is_one_line_naming_the_field(tmp_path, fmt):
    if fmt == "inspect":
        path, field = _inspect_eval(tmp_path / "x.eval", {"a": 1, "b": HUGE}), "scores.match"
    elif fmt == "inspect-json":
        path, field = _inspect_json(tmp_path / "log.json", {"a": 1, "b": HUGE}), "scores.match"
    elif fmt == "lm-eval":
        path, field = _lm_eval(tmp_path / LM_NAME, [(0, 1), (1, HUGE)]), "'acc'"
    else:
        part = fmt.split("-")[1]
        stat = {"mean": HUGE} if part == "mean" else {"sum": 1, "count": 1} | {part: HUGE}
        path = _helm(tmp_path / "run", [{"mean": 1}, stat])
        field = f"exact_match.{part}"
    with pytest.raises(ValueError, match="beyond the range of a float") as info:
        readers.read_log(path)
    message = _one_line(info, path)
    assert field in message and "401 digits" in message, message


@pytest.mark.parametrize("fmt", ["inspect", "lm-eval"])
def test_integer_past_json_digit_limit_names_the_file(tmp_path, fmt):
    """Over 4,300 digits ``json`` itself refuses (Python's ``int_max_str_digits``), naming no
    file; the reader's line names it (and the line)."""
    digits = "7" * 5000
    if fmt == "inspect":
        path = _inspect_eval(tmp_path / "x.eval", {"a": 1},
                             {"samples/b_epoch_1.json": '{"id": "b", "epoch": 1, "scores": '
                                                        '{"match": {"value": ' + digits + '}}}'})
        where = "member samples/b_epoch_1.json"
    else:
        path = tmp_path / LM_NAME
        path.write_text('{"doc_id": 0, "metrics": ["acc"], "acc": 1}\n'
                        '{"doc_id": 1, "metrics": ["acc"], "acc": ' + digits + '}\n')
        where = "line 2"
    with pytest.raises(ValueError, match="not readable JSON") as info:
        readers.read_log(path)
    assert where in _one_line(info, path)


# --- lm-eval doc ids ----------------------------------------------------------------------------

def test_superscript_doc_id_is_read_as_text(tmp_path):
    """``"²".isdigit()`` is True but ``int("²")`` fails: such an id is text, sorted after the
    numbers (natural order 2 before 10), and read (a correct accept)."""
    assert "²".isdigit()
    with pytest.raises(ValueError):
        int("²")
    path = _lm_eval(tmp_path / LM_NAME, [("²", 1), (10, 0), (2, 1)])
    log = readers.read_log(path)
    assert log.questions == ("2", "10", "²")
    assert log.scores.tolist() == [[1.0, 0.0, 1.0]]


def test_document_as_doc_id_is_refused(tmp_path):
    path = _lm_eval(tmp_path / LM_NAME, [(0, 1), {"doc_id": {"text": "x" * 100},
                                                  "metrics": ["acc"], "acc": 1}])
    with pytest.raises(ValueError, match=r"line 2: field 'doc_id' must be an integer or "
                                         r"text") as info:
        readers.read_log(path)
    _one_line(info, path)


# --- HELM count: Infinity -----------------------------------------------------------------------

@pytest.mark.parametrize("count, shown", [(float("inf"), "inf"), (float("nan"), "nan"),
                                          (0, "0")])
def test_helm_count_not_finite_positive_is_refused(tmp_path, count, shown):
    """``sum / Infinity`` was read as a score of 0.0; a count must be finite and positive."""
    path = _helm(tmp_path / "run", [{"mean": 1}, {"sum": 3, "count": count}])
    with pytest.raises(ValueError, match=rf"'exact_match.count' is {shown}; a count must be "
                                         rf"a finite positive number") as info:
        readers.read_log(path)
    _one_line(info, path)


def test_helm_sum_over_count_is_read(tmp_path):
    """The accepted case beside it: mean = sum / count (3 / 4)."""
    log = readers.read_log(_helm(tmp_path / "run", [{"mean": 1}, {"sum": 3, "count": 4}]))
    assert log.scores.tolist() == [[1.0, 0.75]]


# --- path-traversal zip members -----------------------------------------------------------------

@pytest.mark.parametrize("name", ["samples/../../x_epoch_1.json", "/samples/x_epoch_1.json",
                                  "samples\\..\\..\\x_epoch_1.json", "C:/samples/x_epoch_1.json",
                                  "../header.json"])
def test_path_traversal_member_is_refused(tmp_path, name):
    sample = json.dumps({"id": "x", "epoch": 1, "scores": {"match": {"value": 1}}})
    path = _inspect_eval(tmp_path / "x.eval", {"a": 1}, {name: sample})
    with pytest.raises(ValueError, match="path-traversal name") as info:
        readers.read_log(path)
    assert repr(name) in _one_line(info, path)


def test_dots_inside_a_member_name_are_not_traversal(tmp_path):
    """``a..b`` is an id, not a ``..`` component: read."""
    path = _inspect_eval(tmp_path / "x.eval", {"a..b": 1, "c": 0})
    assert readers.read_log(path).questions == ("a..b", "c")


# --- the same refusals through the command line -------------------------------------------------

@pytest.mark.parametrize("case", ["inspect-huge", "lm-eval-huge", "helm-huge", "helm-count",
                                  "traversal"])
def test_command_line_gives_one_line_exit_2(tmp_path, case):
    if case == "inspect-huge":
        bad = _inspect_eval(tmp_path / "bad.eval", {"a": 1, "b": HUGE})
        good = _inspect_eval(tmp_path / "good.eval", {"a": 1, "b": 0})
    elif case == "lm-eval-huge":
        for folder in ("bad", "good"):
            (tmp_path / folder).mkdir()
        bad = _lm_eval(tmp_path / "bad" / LM_NAME, [(0, 1), (1, HUGE)])
        good = _lm_eval(tmp_path / "good" / LM_NAME, [(0, 1), (1, 0)])
    elif case in ("helm-huge", "helm-count"):
        stat = {"mean": HUGE} if case == "helm-huge" else {"sum": 1, "count": float("inf")}
        bad = _helm(tmp_path / "bad", [{"mean": 1}, stat])
        good = _helm(tmp_path / "good", [{"mean": 1}, {"mean": 0}])
    else:
        sample = json.dumps({"id": "x", "epoch": 1, "scores": {"match": {"value": 1}}})
        bad = _inspect_eval(tmp_path / "bad.eval", {"a": 1},
                            {"samples/../../x_epoch_1.json": sample})
        good = _inspect_eval(tmp_path / "good.eval", {"a": 1})
    code, err = _cli(["--baseline", bad, "--variant", good])
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "Traceback" not in err and str(bad) in err, err


# --- tidy CSVs: names pandas reads as missing, labels it merges ---------------------------------

def _tidy(path, arms, clusters=None, seeds=3, questions=4, seed=0):
    """Per-question tidy CSV written as text; returns it read back as text for reference."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(seeds):
        for arm in arms:
            for q in range(questions):
                row = {"seed": s, "arm": arm, "question": f"q{q}",
                       "score": int(rng.random() < 0.6)}
                if clusters is not None:
                    row["grp"] = clusters[q]
                rows.append(row)
    frame = pd.DataFrame(rows)
    frame.to_csv(path, index=False)
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("arms", [("NA", "null"), ("None", "nan"), ("1", "1.0"),
                                  ("baseline", "N/A")])
def test_arm_names_pandas_reads_as_missing_or_merges_are_kept(tmp_path, arms):
    """Per-arm sums checked against the file read as plain text (the reference)."""
    path = tmp_path / "r.csv"
    text = _tidy(path, arms)
    scores = read_results_arms(path)
    assert set(scores.arms) == set(arms)
    for arm in arms:
        want = text[text.arm == arm].score.astype(int).sum()
        assert scores.arm(arm).sum() == want


def test_cluster_labels_1_and_1_0_stay_distinct(tmp_path):
    path = tmp_path / "r.csv"
    _tidy(path, ("baseline", "variant"), clusters=["1", "1.0", "NA", "1"])
    scores = read_results_arms(path, cluster="grp")
    assert scores.clusters.tolist() == ["1", "1.0", "NA", "1"]


def test_empty_arm_is_still_refused(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("seed,arm,question,score\n0,baseline,q0,1\n0, ,q0,1\n")
    with pytest.raises(ValueError, match=r"row 3: column 'arm' is empty") as info:
        read_results_arms(path)
    _one_line(info, path)


def test_na_arms_with_cluster_through_the_command_line(tmp_path):
    """The ``--cluster`` pre-check (reports/evaluate/load.py) reads names as text too."""
    path = tmp_path / "r.csv"
    _tidy(path, ("NA", "null"), clusters=["a", "b", "a", "b"], seeds=4, questions=4)
    code, err = _cli([path, "--cluster", "grp", "--design", MODELS_CLUSTERED])
    assert code == 0, err


# --- a task column as the cluster ---------------------------------------------------------------

def _tasks_csv(path):
    rows = ["seed,question,task,score"]
    for s in range(2):
        for task in ("alpha", "beta"):
            rows += [f"{s},{q},{task},{(q + s) % 2}" for q in range(3)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_task_column_is_the_cluster_with_cluster_task(tmp_path):
    """Question 0 of task alpha and question 0 of task beta are two questions (harnesses
    number from 0 in each task), so ids are task/question, as for lm-eval folders."""
    path = _tasks_csv(tmp_path / "t.csv")
    with pytest.raises(ValueError, match="holds several tasks"):
        readers.read_log(path)
    log = readers.read_log(path, cluster="task")
    assert log.questions == tuple(f"{t}/{q}" for t in ("alpha", "beta") for q in range(3))
    assert log.clusters == ("alpha",) * 3 + ("beta",) * 3
    assert log.scores.tolist() == [[0, 1, 0, 0, 1, 0], [1, 0, 1, 1, 0, 1]]
    one = readers.read_log(path, cluster="task", task="beta")
    assert one.questions == ("0", "1", "2") and one.clusters == ("beta",) * 3


def test_task_cluster_through_the_command_line(tmp_path):
    base = _tasks_csv(tmp_path / "b.csv")
    variant = _tasks_csv(tmp_path / "v.csv")
    code, err = _cli(["--baseline", base, "--variant", variant, "--cluster", "task",
                      "--design", MODELS_CLUSTERED])
    assert code == 0, err


# --- side files read under a cap ----------------------------------------------------------------

def _lm_eval_run(folder, seed: int, pad: int = 0):
    folder.mkdir(parents=True, exist_ok=True)
    _lm_eval(folder / LM_NAME, [(0, 1), (1, 0)])
    results = {"config": {"random_seed": seed, "model": "hf"}, "pad": "x" * pad}
    side = folder / "results_2024-01-01T00-00-00.000001.json"
    side.write_text(json.dumps(results))
    return side


def test_lm_eval_results_side_file_past_the_cap_is_skipped_with_a_note(tmp_path,
                                                                        monkeypatch):
    """``results_*.json`` gives only the seed and model: past the cap it is not read."""
    small = _lm_eval_run(tmp_path / "small", seed=7)
    big = _lm_eval_run(tmp_path / "big", seed=7, pad=4096)
    monkeypatch.setattr(_files, "SIDE_FILE_CAP", 2048)
    assert small.stat().st_size < 2048 < big.stat().st_size
    read = readers.read_log(small.parent)
    assert read.model == "hf" and read.notes == ()
    skipped = readers.read_log(big.parent)
    assert skipped.model != "hf" and skipped.scores.tolist() == read.scores.tolist()
    (note,) = skipped.notes
    assert str(big) in note and "0.00195312 MiB" in note and "skipped" in note


def test_helm_run_spec_past_the_cap_is_skipped_with_a_note(tmp_path, monkeypatch):
    spec = {"name": "mmlu:subject=x,model=a_b", "adapter_spec": {"model": "a/b"}}
    small = _helm(tmp_path / "mmlu:subject=x,model=folder_m", [{"mean": 1}], spec)
    big = _helm(tmp_path / "big" / "mmlu:subject=x,model=folder_m", [{"mean": 1}],
                spec | {"pad": "x" * 4096})
    monkeypatch.setattr(_files, "SIDE_FILE_CAP", 2048)
    read = readers.read_log(small)
    assert (read.task, read.model, read.notes) == ("mmlu:subject=x,model=a_b", "a/b", ())
    skipped = readers.read_log(big)
    # from the folder name instead (HELM names the run folder after the run spec)
    assert (skipped.task, skipped.model) == ("mmlu:subject=x,model=folder_m", "folder_m")
    (note,) = skipped.notes
    assert "run_spec.json" in note and "skipped" in note


def test_sparse_4_gib_side_file_is_not_read(tmp_path):
    """The default 16 MiB cap on a (sparse) 4 GiB ``results_*.json``: no read at all."""
    side = _lm_eval_run(tmp_path / "run", seed=1)
    os.truncate(side, 4 * 2**30)
    tracemalloc.start()
    try:
        log = readers.read_log(side.parent)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "4096 MiB, more than the 16 MiB" in log.notes[0]
    assert peak < 2**20


# --- lm-eval samples: only (doc_id, score) is kept per line -------------------------------------

def test_lm_eval_reader_keeps_no_documents(tmp_path):
    """20 lines, each with a 1 MiB unused document and a 256 KiB corpus-metric value not
    read: the read peaks at a few line sizes and keeps well under one (keeping the lines
    would hold 25 MiB, keeping the metric values 5 MiB)."""
    mib = 2**20
    path = tmp_path / LM_NAME
    with path.open("w") as fh:
        for i in range(20):
            line = {"doc_id": i, "doc": {"text": "d" * mib}, "filter": "none",
                    "metrics": ["acc", "bleu"], "acc": i % 2,
                    "bleu": [["r" * (mib // 4)], ["p"]]}
            fh.write(json.dumps(line) + "\n")
    tracemalloc.start()
    try:
        log = readers.read_log(path, metric="acc")
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert log.scores.tolist() == [[i % 2 for i in range(20)]]
    assert peak < 5 * mib, peak
    assert kept < mib, kept
    with pytest.raises(ValueError, match=r"line 1: doc_id 0: field 'bleu' is \[\['rrr") as info:
        readers.read_log(path, metric="bleu")
    assert len(_one_line(info, path)) < 400  # the value is shown cut short, not whole
