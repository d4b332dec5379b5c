"""The harness defaults table (``python -m sim.harness_defaults``)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process
from item_pools import pool_frame, write_pool
from multitest_reference import multipletests
from scipy import stats

import protocols
from evalcal_core.designs import MODELS, MODELS_CLUSTERED
from evalcal_core.options import to_argv
from sim.design_check import CheckGrid, first_look, harness_protocols
from sim.harness_defaults import (
    DefaultsConfig,
    build_parser,
    check_config,
    harness_defaults,
    main,
    table_cells,
    table_pool,
)
from sim.harness_defaults_words import format_markdown, fpr_entry, sentence, summaries

#: a small table: every design group, one question count, few simulations; the default real
#: pools found here, 2 models each (the least and the most accurate), 1 or 2 runs per arm
SMALL = DefaultsConfig(questions=(200,), repeats=(2,), seeds=(3,), clusters=5, sims=300,
                       power_sims=100, effect_pp=10.0, jobs=1, out=None, pool_models=2,
                       pool_runs=(1, 2))


@pytest.fixture(scope="module")
def small():
    return harness_defaults(SMALL, progress=False)


def test_every_group_has_its_recommended_protocol_and_the_defaults(small):
    groups = {c.group: c.kind for c in table_cells(SMALL)}
    assert set(small["group"]) == set(groups)
    for group, kind in groups.items():
        part = small[small["group"] == group]
        assert protocols.recommended_for(kind) in set(part["protocol"])
        # exactly one recommended row per cell of the group
        per_cell = part.groupby(["generator_params", "k"])["recommended"].sum()
        assert (per_cell == 1).all()
        assert set(part["protocol"]) - {protocols.recommended_for(kind)} <= set(
            harness_protocols())
    # >= 10 harness defaults run somewhere
    assert small.loc[small["reproduces"] != "", "protocol"].nunique() >= 10


def test_rejections_equal_design_checks_first_look(small):
    """Consistency (one engine, :func:`sim.grid.run_cells`): the table's one-look counts
    equal ``design_check``'s first look on the same cell and root seed."""
    grid = CheckGrid(kinds=(MODELS_CLUSTERED,), questions=(200,), clusters=(5,), icc=(0.3,),
                     repeats=(1,), sims=SMALL.sims, harness_defaults=True)
    first = first_look(grid)
    expected = dict(zip(first["protocol"], first["rejections"]))
    # rows of one look (an extended row adds chunks of other streams)
    # (the synthetic cell: a real pool with clusters has models_clustered rows too)
    part = small[(small["kind"] == MODELS_CLUSTERED) & (small["looks"] == 1)
                 & (small["generator"] == "clustered_questions")]
    assert len(part) >= 8
    got = dict(zip(part["protocol"], part["rejections"]))
    assert got == {name: expected[name] for name in got}


def test_verdicts_follow_clopper_pearson_and_holm(small):
    """Reference: scipy's exact one-sided binomial test, statsmodels' Holm and the exact
    (Clopper-Pearson) one-sided 95% upper bound."""
    x, n = small["rejections"].to_numpy(), small["sims"].to_numpy()
    alpha = SMALL.alpha
    # the rule's looks: sims, 2 sims, ..., 16 sims
    looks = int(np.log2(16)) + 1
    upper = np.array([stats.binomtest(int(a), int(b)).proportion_ci(1 - 2 * 0.05 / looks,
                                                                    "exact").high
                      if a < b else 1.0 for a, b in zip(x, n)])
    np.testing.assert_allclose(small["fpr_upper"], upper, rtol=1e-7)
    p = [stats.binomtest(int(a), int(b), alpha, alternative="greater").pvalue
         for a, b in zip(x, n)]
    # one-look rows: p is the exact binomial p of their counts, Bonferroni over the looks
    # (an extended row keeps the smallest p over its looks, which its own counts cannot
    # show: its p enters Holm as computed)
    one = (small["looks"] == 1).to_numpy()
    np.testing.assert_allclose(small["fpr_p"][one], np.minimum(1, looks * np.array(p))[one],
                               rtol=1e-9)
    over = multipletests(small["fpr_p"], alpha=0.001, method="holm")[0]
    holds = upper <= alpha * 1.2 + 1e-12
    first = np.where(holds, "valid", np.where(over, "invalid", "undecided"))
    # a first-stage verdict is printed only if an independent confirmation batch repeats it
    # (sim.validity); otherwise the cell is undecided
    state = small["state"].to_numpy()
    assert ((state == first) | (state == "undecided")).all()


def test_power_cells_count_the_planted_effect(small):
    synthetic = small[small["generator"] != "llm_items"]
    assert synthetic["power"].notna().all()
    assert (synthetic["power_sims"] == SMALL.power_sims).all()
    # 10 pp on 200 questions: each recommended test rejects more often than under the null,
    # by more than 4 binomial SEs of the two rates
    rec = synthetic[synthetic["recommended"]]
    se = np.sqrt(rec["power"] * (1 - rec["power"]) / rec["power_sims"]
                 + rec["rate"] * (1 - rec["rate"]) / rec["sims"])
    assert (rec["power"] - rec["rate"] > 4 * se).all()
    assert small.loc[small["generator"] == "llm_items", "power"].isna().all()


def _frame(states_by_group):
    rows = []
    for group, (state, rate) in states_by_group.items():
        rows.append({"group": group, "kind": "models", "protocol": "harness_x",
                     "recommended": False, "reproduces": "tool x", "generator": "g",
                     "generator_params": group, "n_questions": 100, "k": 1, "sims": 4000,
                     "alpha": 0.05, "rejections": int(rate * 4000), "rate": rate,
                     "rate_low": rate, "rate_high": rate, "fpr_upper": rate + 0.005,
                     "fpr_p": 0.5, "state": state, "effect_pp": 3.0, "power_sims": 1000,
                     "power": 0.2, "power_low": 0.1, "power_high": 0.3})
        rows.append({**rows[-1], "protocol": "honest", "recommended": True,
                     "reproduces": "", "state": "valid", "rate": 0.05, "power": 0.6})
    return pd.DataFrame(rows)


def test_sentence_says_where_it_holds_and_where_it_is_over():
    frame = _frame({"A": ("valid", 0.01), "B": ("invalid", 0.183), "C": ("undecided", 0.055)})
    text = sentence("harness_x", frame, 3.0)
    assert "shown above the 5.0% level in: B, up to 18.3% (over at n = 100)." in text
    assert "Holds its level in A." in text
    assert "power at 3 pp averages 20.0% against 60.0%" in text
    assert "holds by being conservative" in text
    assert "Neither shown to hold nor shown above in C" in text
    assert text.endswith("can be trusted only in A.")
    frame = _frame({"A": ("valid", 0.01), "B": ("valid", 0.02)})
    assert sentence("harness_x", frame, 3.0).endswith("can be trusted in every design here.")
    frame = _frame({"B": ("invalid", 0.2)})
    assert sentence("harness_x", frame, 3.0).endswith("in any design here.")


def test_markdown_names_the_command_and_every_default(small):
    text = format_markdown(small, SMALL, "python -m sim.harness_defaults --quick")
    assert "`python -m sim.harness_defaults --quick`" in text
    for name in small.loc[small["reproduces"] != "", "protocol"].unique():
        assert f"- `{name}` (" in text


@pytest.mark.parametrize("argv, flag", [
    (["--questions", "2"], "--questions"),
    (["--clusters", "1"], "--clusters"),
    (["--seeds", "1"], "--seeds"),
    (["--effect", "0"], "--effect"),
    (["--llm-pools", "no_such_pool"], "--llm-pools"),
    (["--sims", "0"], "--sims"),
    (["--pool-runs", "0"], "--pool-runs"),
    (["--pool-models", "-1"], "--pool-models"),
])
def test_bad_options_are_one_line(argv, flag, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "sim.harness_defaults", *argv, "--out",
                           str(tmp_path / "out")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and flag in proc.stderr
    assert not (tmp_path / "out").exists()


def test_options_round_trip():
    config = DefaultsConfig(questions=(30, 60), seeds=(4,), sims=500, effect_pp=2.5,
                            llm_pools=())
    parsed = build_parser().parse_args(to_argv(config))
    from evalcal_core.options import config_from_args
    assert config_from_args(DefaultsConfig, parsed, out=config.out) == config
    check_config(config)


def test_command_writes_and_resumes_byte_identical(tmp_path):
    argv = [sys.executable, "-m", "sim.harness_defaults", "--questions", "40", "--repeats",
            "1", "--seeds", "3", "--clusters", "0", "--llm-pools", "--sims", "100",
            "--power-sims", "0", "--jobs", "1", "--quiet", "--out", str(tmp_path)]
    first = subprocess.run(argv, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    csv = (tmp_path / "harness_defaults.csv").read_bytes()
    assert (tmp_path / "harness_defaults.md").read_text().startswith("# Which harness")
    assert any((tmp_path / "cells").iterdir())
    # the sidecar: the command as typed, and the CSV's row count
    meta = json.loads((tmp_path / "harness_defaults.json").read_text())
    assert meta["command"] == " ".join(["python -m sim.harness_defaults", *argv[3:]])
    assert meta["rows"] == len(pd.read_csv(tmp_path / "harness_defaults.csv")) > 0
    assert meta["sims"] == 100 and meta["pools"] == [] and meta["code_version"]
    again = subprocess.run(argv, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "harness_defaults.csv").read_bytes() == csv


# ------------------------------------------------------------------------------------------
# Real pools: sampled models, ragged files, the worst model in the words


def _accuracy_pool(folder, name="acc.csv", accuracies=(0.9, 0.1, 0.5, 0.3, 0.7, 0.2),
                   items=10, attempts=4, drop=None):
    """A pool whose model ``m{i}`` answers ``round(accuracies[i] * items)`` items right in
    every attempt (so its mean accuracy is known exactly); ``drop=(model, item)`` removes
    that pair's last attempt (a ragged file)."""
    rows = []
    for i, acc in enumerate(accuracies):
        right = round(acc * items)
        for q in range(items):
            for a in range(attempts):
                if drop == (f"m{i}", q) and a == attempts - 1:
                    continue
                rows.append({"model": f"m{i}", "item": f"q{q}", "attempt": a,
                             "score": int(q < right)})
    path = Path(folder) / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_pool_sample_is_evenly_spaced_by_accuracy(tmp_path):
    """Ranks floor(i (M - 1) / (count - 1) + 1/2) of the models sorted by accuracy: with 6
    models (accuracy order m1 m5 m3 m2 m4 m0) and 3 wanted, ranks 0, 3 (2.5 rounds up) and 5."""
    path = str(_accuracy_pool(tmp_path))
    assert table_pool(path, 3).models == ("m1", "m2", "m0")
    assert table_pool(path, 2).models == ("m1", "m0")
    assert table_pool(path, 1).models == ("m1",)
    every = table_pool(path, 0)
    assert every.models == tuple(f"m{i}" for i in range(6)) == table_pool(path, 6).models
    assert not every.complete_models and every.line(0) is None
    assert "3 of its 6 models, evenly spaced by accuracy (--pool-models 3)" in table_pool(
        path, 3).line(3)


def test_ragged_pool_gets_its_complete_models_and_says_so(tmp_path):
    path = str(_accuracy_pool(tmp_path, drop=("m2", 4)))
    real = table_pool(path, 0)
    assert real.complete_models and real.data.dropped == ("m2",)
    assert real.models == ("m0", "m1", "m3", "m4", "m5") and real.total_models == 6
    assert "ragged (its 1 of 6 models with fewer than 4 attempts" in real.line(0)
    config = replace(SMALL, llm_pools=(path,), pool_models=0, pool_runs=(1, 2, 5))
    cells = [c for c in table_cells(config) if c.real]
    assert {c.group for c in cells} == {"acc A/A (10 items, 5 complete of 6 models, 1 run)",
                                        "acc A/A (10 items, 5 complete of 6 models, 2 runs)"}
    assert all(c.generator.complete_models for c in cells) and len(cells) == 10


def test_command_runs_a_ragged_pool_and_names_the_worst_model(tmp_path):
    """In process: the ragged line, the real column's header with its models, its entries
    naming the worst model with the Wilson interval, and the sampling paragraph."""
    frame = pool_frame(models=("a", "b", "c"), items=30, attempts=4, seed=5)
    short = (frame["model"] == "c") & (frame["item"] == "q003") & (frame["attempt"] == 3)
    path = tmp_path / "rag.csv"
    frame[~short].to_csv(path, index=False)
    out = tmp_path / "out"
    done = run_in_process(main, "python -m sim.harness_defaults", "--questions", "40",
                          "--repeats", "1", "--seeds", "3", "--clusters", "0", "--llm-pools",
                          str(path), "--pool-runs", "1", "--sims", "100", "--power-sims", "0",
                          "--jobs", "1", "--quiet", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "pool rag: ragged (its 1 of 3 models with fewer than 4 attempts" in done.stdout
    rows = pd.read_csv(out / "harness_defaults.csv")
    real = rows[rows["generator"] == "llm_items"]
    assert set(real["group"]) == {"rag A/A (30 items, 2 complete of 3 models, 1 run)"}
    assert real["generator_params"].str.endswith(";complete_models=True").all()
    text = (out / "harness_defaults.md").read_text()
    assert "Real columns (2 A/A cells, 1 columns)" in text
    assert "### rag A/A (30 items, 2 complete of 3 models, 1 run)" in text
    assert "Models: a, b." in text


def _real_frame():
    rows = []
    for model, rate, state in (("weak", 0.132, "invalid"), ("strong", 0.01, "valid")):
        rows.append({"group": "lcb A/A (400 items, 2 of 43 models, 1 run)", "kind": "models",
                     "protocol": "harness_x", "recommended": False, "reproduces": "tool x",
                     "generator": "llm_items",
                     "generator_params": f"pool=lcb;model={model}", "n_questions": 400,
                     "k": 1, "sims": 4000, "alpha": 0.05, "rejections": int(rate * 4000),
                     "rate": rate, "rate_low": rate - 0.01, "rate_high": rate + 0.011,
                     "fpr_upper": rate + 0.01, "fpr_p": 0.5, "state": state,
                     "effect_pp": float("nan"), "power_sims": 0, "power": float("nan"),
                     "power_low": float("nan"), "power_high": float("nan")})
    return pd.DataFrame(rows)


def test_real_entries_and_sentences_name_the_worst_model():
    frame = _real_frame()
    group = frame["group"].iloc[0]
    entry = fpr_entry(summaries(frame)[("harness_x", group)])
    assert entry == "1.0–13.2% (≤ 14.2%; **1 over**; worst weak 13.2% [12.2, 14.3])"
    text = sentence("harness_x", frame, 3.0)
    assert (f"shown above the 5.0% level in: {group}, up to 13.2% [12.2, 14.3] (weak; over "
            "for 1 of its 2 models).") in text


def test_pool_with_clusters_gives_a_clustered_group(tmp_path):
    """A real pool with clusters: its A/A cells also stand under models_clustered (the
    cluster-robust harness defaults and cluster_cr2 on the pool's own clusters), at the fewest
    runs; the rows shared with the models group are the same draws (equal counts)."""
    pool = write_pool(tmp_path, models=("a", "b"), items=30, attempts=4, clusters=(10, 10, 10))
    config = DefaultsConfig(questions=(30,), repeats=(1,), seeds=(3,), clusters=0, sims=60,
                            power_sims=0, jobs=1, out=None, pool_models=2, pool_runs=(1, 2),
                            llm_pools=(str(pool),))
    frame = harness_defaults(config, progress=False)
    real = frame[frame["generator"] == "llm_items"]
    clustered = real[real["kind"] == MODELS_CLUSTERED]
    assert set(clustered["group"]) == {"pool A/A in its 3 clusters (30 items, 2 models, 1 run)"}
    assert protocols.recommended_for(MODELS_CLUSTERED) in set(clustered["protocol"])
    assert "harness_inspect_stderr_cluster" in set(clustered["protocol"])
    plain = real[(real["kind"] == MODELS) & (real["k"] == 1)]
    assert not plain["protocol"].isin(["cluster_cr2", "harness_inspect_stderr_cluster"]).any()
    both = clustered.merge(plain, on=["generator_params", "protocol", "k"])
    assert len(both) and (both["rejections_x"] == both["rejections_y"]).all()
