"""``evalcal pools describe``: every figure against pandas on pools written here."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from in_process import run_in_process
from item_pools import pool_frame, shared_pool

from evalcal_cli import main as evalcal


def test_describe_json_matches_pandas(tmp_path):
    frame = pool_frame(models=("a", "b", "c", "d"), items=12, attempts=4, clusters=(5, 7),
                       seed=3)
    # ragged: model d has 2 attempts on one item, so it is dropped
    frame = frame[~((frame["model"] == "d") & (frame["item"] == "q004")
                    & (frame["attempt"] >= 2))]
    path = tmp_path / "p.csv"
    frame.to_csv(path, index=False)
    res = run_in_process(evalcal, "evalcal", "pools", "describe", str(path), "--json")
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    counts = frame.groupby(["model", "item"]).size()
    keep = frame[frame["model"].isin(["a", "b", "c"])]
    acc = keep.groupby("model")["score"].mean()
    per = keep.groupby(["model", "item"])["score"].agg(["min", "max"])
    mixed = (per["min"] != per["max"]).groupby("model").sum()
    assert (got["models"], got["items"], got["attempts"]) == (3, 12, 4)
    assert (got["attempts_min"], got["attempts_max"]) == (counts.min(), counts.max())
    assert got["dropped_models"] == ["d"] and got["complete_models"] == ["a", "b", "c"]
    assert got["cluster_sizes"] == frame.groupby("cluster")["item"].nunique().to_dict()
    assert got["accuracy_min"] == pytest.approx(acc.min())
    assert got["accuracy_max_model"] == acc.idxmax()
    assert got["mixed"] == mixed.to_dict()
    assert got["mixed_median"] == mixed.median() and got["aa_splits"] is True


def test_describe_text_single_attempt_and_errors(tmp_path):
    path = tmp_path / "one.csv"
    pool_frame(models=("a", "b"), items=5, attempts=1).to_csv(path, index=False)
    res = run_in_process(evalcal, "evalcal", "pools", "describe", str(path))
    assert res.returncode == 0 and "A/A splits: not possible" in res.stdout
    assert "clusters: none" in res.stdout
    bad = run_in_process(evalcal, "evalcal", "pools", "describe", str(tmp_path / "no.csv"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "does not exist" in bad.stderr
    assert run_in_process(evalcal, "evalcal", "pools", "nope").returncode == 2


def test_describe_real_terminal_bench():
    """Terminal-Bench (shared): 4 complete systems of 9, 80 tasks, 1 to 5 trials."""
    path = shared_pool("tbench_core011")
    res = run_in_process(evalcal, "evalcal", "pools", "describe", str(path), "--json")
    got = json.loads(res.stdout)
    frame = pd.read_csv(path)
    counts = frame.groupby(["model", "item"]).size()
    full = counts.groupby("model").min() == counts.max()
    assert got["complete_models"] == sorted(full.index[full])
    assert (got["items"], got["attempts_min"]) == (80, counts.min())
