"""The harness defaults table (``python -m sim.harness_defaults``)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from multitest_reference import multipletests
from scipy import stats

import protocols
from evalcal_core.designs import MODELS_CLUSTERED
from evalcal_core.options import to_argv
from sim.design_check import CheckGrid, first_look, harness_protocols
from sim.harness_defaults import (
    DefaultsConfig,
    build_parser,
    check_config,
    harness_defaults,
    table_cells,
)
from sim.harness_defaults_words import format_markdown, sentence

#: a small table: every design group, one question count, few simulations
SMALL = DefaultsConfig(questions=(200,), repeats=(2,), seeds=(3,), clusters=5, sims=300,
                       power_sims=100, effect_pp=10.0, jobs=1, out=None)


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
    part = small[(small["kind"] == MODELS_CLUSTERED) & (small["looks"] == 1)]
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
    again = subprocess.run(argv, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "harness_defaults.csv").read_bytes() == csv
