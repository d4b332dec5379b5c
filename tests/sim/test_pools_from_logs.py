"""``evalcal pools from-logs``: multi-epoch Inspect and multi-run lm-eval logs written by the
tests become a pool; round trip from-logs -> describe -> llm_items A/A draws."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process

from evalcal_cli import main as evalcal
from sim import generators
from sim.calibrate import main as calibrate

#: a real lm-eval output folder (lm-eval 0.4.13, its dummy model on a 6-document task, seeds
#: 1 and 2: tests/fixtures/logs/README.md), whose lines the multi-run logs below reuse
LM_EVAL = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "lm_eval" / "dummy"


def _inspect(path, table: np.ndarray, groups=None):
    """An Inspect ``.eval`` with ``table[e, q]`` the score of question q at epoch e + 1."""
    epochs, n = table.shape
    header = {"version": 2, "status": "success",
              "eval": {"task": "t", "model": "m", "config": {"epochs": epochs}}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        for e in range(epochs):
            for q in range(n):
                sample = {"id": f"q{q}", "epoch": e + 1,
                          "scores": {"match": {"value": "C" if table[e, q] else "I"}}}
                if groups is not None:
                    sample["metadata"] = {"topic": groups[q]}
                archive.writestr(f"samples/q{q}_epoch_{e + 1}.json", json.dumps(sample))
    return path


def test_inspect_epochs_become_a_pool_and_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    tables = {"base": rng.random((4, 9)) < 0.5, "new": rng.random((4, 9)) < 0.6}
    groups = [f"g{q % 3}" for q in range(9)]
    args = []
    for name, table in tables.items():
        args += ["--arm", f"{name}={_inspect(tmp_path / f'{name}.eval', table, groups)}"]
    out = tmp_path / "pools" / "mine.csv.gz"
    res = run_in_process(evalcal, "evalcal", "pools", "from-logs", *args, "--cluster", "topic",
                         "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert "2 model(s) x 9 items x 4 attempts" in res.stdout
    frame = pd.read_csv(out)
    for name, table in tables.items():
        part = frame[frame["model"] == name].pivot(index="attempt", columns="item",
                                                   values="score")
        np.testing.assert_array_equal(part[[f"q{q}" for q in range(9)]].to_numpy(), table)
    assert frame.groupby("cluster")["item"].nunique().to_dict() == {"g0": 3, "g1": 3, "g2": 3}
    desc = json.loads(run_in_process(evalcal, "evalcal", "pools", "describe", str(out),
                                     "--json").stdout)
    assert desc["models"] == 2 and desc["attempts"] == 4 and desc["clusters"] == 3
    g = generators.get("llm_items", pool=str(out), model="new")
    b, v = g.draw(50, 2, 0.0, np.random.default_rng(1))
    # the two halves hold each item's 4 attempts: their sum is the item's correct count
    counts = dict(zip([f"q{q}" for q in range(9)], tables["new"].sum(axis=0)))
    expect = [counts[i] for i in g.data().items]
    np.testing.assert_array_equal(b.sum(axis=1) + v.sum(axis=1),
                                  np.broadcast_to(expect, (50, 9)))


@pytest.mark.parametrize(("epochs", "words"), [
    # a pool's A/A cells split each model's attempts in two: one run per log gives none
    ((1, 1), ("The '--arm' option must be logs with several epochs or runs each",
              "Got logs of one run per question instead.")),
    ((3, 2), ("ragged attempts",)),
])
def test_logs_without_a_pools_runs_are_refused_before_writing(epochs, words, tmp_path):
    rng = np.random.default_rng(2)
    a, b = (_inspect(tmp_path / f"{name}.eval", rng.random((count, 5)) < 0.5)
            for name, count in zip("ab", epochs))
    out = tmp_path / "pool.csv"
    res = run_in_process(evalcal, "evalcal", "pools", "from-logs", "--arm", f"a={a}",
                         "--arm", f"b={b}", "--out", str(out))
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert all(word in res.stderr for word in words) and not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".pool.csv")]


def test_an_arm_without_a_log_is_named(tmp_path):
    bad = run_in_process(evalcal, "evalcal", "pools", "from-logs", "--arm", "x",
                         "--out", str(tmp_path / "pool.csv"))
    assert bad.returncode == 2 and "NAME=LOG" in bad.stderr


def _lm_eval_runs(folder, table: np.ndarray, model: str):
    """lm-eval ``--log_samples`` output of ``table.shape[0]`` runs (seeds 1, 2, ...) of one
    task: ``samples_tiny_qa_<date>.jsonl`` with ``results_<date>.json`` beside it, as lm-eval
    writes them (the real fixture's lines and results, with ``acc`` of document q in run r
    set to ``table[r, q]``)."""
    sample = sorted(LM_EVAL.glob("samples_*.jsonl"))[0]
    lines = [json.loads(line) for line in sample.read_text().splitlines()]
    results = json.loads(sorted(LM_EVAL.glob("results_*.json"))[0].read_text())
    folder.mkdir(parents=True)
    for r, row in enumerate(table):
        date = f"2026-11-24T18-{r:02d}-01.000001"
        with open(folder / f"samples_tiny_qa_{date}.jsonl", "w") as f:
            for line in lines:
                f.write(json.dumps({**line, "acc": float(row[line["doc_id"]])}) + "\n")
        meta = {**results, "model_name": model,
                "config": {**results["config"], "random_seed": r + 1}}
        (folder / f"results_{date}.json").write_text(json.dumps(meta))
    return folder


def test_lm_eval_runs_become_a_pool_that_calibrate_accepts(tmp_path):
    """Several lm-eval sample files of one task per arm (runs by seed) -> a pool whose
    attempts are the runs in seed order -> ``sim.calibrate --generator llm_items`` A/A rows
    (effect 0, k = 1 and 2)."""
    rng = np.random.default_rng(3)
    n = len(sorted(LM_EVAL.glob("samples_*.jsonl"))[0].read_text().splitlines())
    tables = {"org/base": rng.random((4, n)) < 0.5, "org/new": rng.random((4, n)) < 0.7}
    args = []
    for i, (name, table) in enumerate(tables.items()):
        args += ["--arm", f"{name}={_lm_eval_runs(tmp_path / f'arm{i}', table, name)}"]
    out = tmp_path / "pools" / "lm.csv"
    res = run_in_process(evalcal, "evalcal", "pools", "from-logs", *args, "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert f"2 model(s) x {n} items x 4 attempts" in res.stdout
    # no temporary file left; the empty lock stays, as every writer's does (outdir.locked_out)
    assert sorted(p.name for p in out.parent.iterdir()) == [".lock", "lm.csv"]
    frame = pd.read_csv(out)
    for name, table in tables.items():
        part = frame[frame["model"] == name].pivot(index="attempt", columns="item",
                                                   values="score")
        np.testing.assert_array_equal(part[list(range(n))].to_numpy(), table)
    cal = tmp_path / "cal"
    done = run_in_process(calibrate, "python -m sim.calibrate", "--generator", "llm_items",
                          "--param", f"pool={out}", "model=org/new", "--k", "1", "2",
                          "--sims", "40", "--protocols", "paired_t_questions", "--out",
                          str(cal), "--no-plot", "--quiet")
    assert done.returncode == 0, done.stderr
    rows = pd.read_csv(cal / "calibration.csv")
    assert set(rows["k"]) == {1, 2} and set(rows["effect_pp"]) == {0.0}
    assert rows["sims"].eq(40).all()


@pytest.mark.parametrize("name", ["pool.txt", "pool.csv.bak", "pool"])
def test_a_pool_under_a_name_no_reader_takes_is_refused(tmp_path, name):
    """``--out`` must end in .csv or .csv.gz (what --llm-pools and describe read): one
    line, exit 2, nothing written."""
    out = tmp_path / name
    res = run_in_process(evalcal, "evalcal", "pools", "from-logs", "--arm",
                         f"a={tmp_path / 'missing'}", "--out", str(out))
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "'--out' option must be a pool file name ending in .csv or .csv.gz" in res.stderr
    assert not out.exists()
