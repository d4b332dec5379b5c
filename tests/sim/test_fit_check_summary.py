"""``benchmarks/fit_check_summary.py`` on a hand-made fit_check.csv (values by hand)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fit_check_summary.py"

FRAME = pd.DataFrame({
    "dataset": ["a", "a", "a", "b"],
    "scenario": ["S1", "S1", "S1", "S0p"],
    "diff": [0.01, -0.05, 0.0, 0.2],
    "se": [0.02, 0.02, 0.0, 0.05],
})


def _load():
    import importlib.util

    spec = importlib.util.spec_from_file_location("fit_check_summary", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_summarize_by_hand():
    """Pool a: |diff| 1, 5, 0 pp against 2 SE = 4, 4, 0 pp: 2 of 3 within; mean 2 pp."""
    table = _load().summarize(FRAME).set_index("dataset")
    assert table.loc["a", "cells"] == 3
    assert table.loc["a", "within_2se_pct"] == pytest.approx(200 / 3)
    assert table.loc["a", "mean_abs_diff_pp"] == pytest.approx(2.0)
    assert table.loc["a", "max_abs_diff_pp"] == pytest.approx(5.0)
    assert table.loc["a", "noise_floor_pp"] == pytest.approx(100 * np.sqrt(2 / np.pi) * 0.04 / 3)
    assert table.loc["b", "within_2se_pct"] == 0
    assert table.loc["all", "cells"] == 4


def test_cli(tmp_path):
    path = tmp_path / "fit_check.csv"
    FRAME.to_csv(path, index=False)
    out = subprocess.run([sys.executable, str(SCRIPT), str(path), "--markdown"],
                         capture_output=True, text=True, check=True).stdout
    assert "| a | S1 | 3 | 67 | 2.0 | 5.0 |" in out
    assert "0 of 2" in out


def test_missing_columns():
    with pytest.raises(ValueError, match=r"lacks the columns \['se'\]"):
        _load().summarize(FRAME.drop(columns="se"))


def test_total_se_widens_by_the_pool_sd():
    """se_total = sqrt(se^2 + pool_sd^2): pool b's 20 pp diff against 2 x sqrt(5^2 + 12^2)
    = 26 pp is within; pool a (no pool_sd) has no total figures."""
    frame = FRAME.assign(pool_sd=[np.nan, np.nan, np.nan, 0.12])
    frame["se_total"] = np.sqrt(frame["se"] ** 2 + frame["pool_sd"] ** 2)
    table = _load().summarize(frame).set_index("dataset")
    assert table.loc["b", "within_2se_pct"] == 0
    assert table.loc["b", "within_2se_total_pct"] == 100
    assert table.loc["b", "floor_total_pp"] == pytest.approx(100 * np.sqrt(2 / np.pi) * 0.13)
    assert np.isnan(table.loc["a", "within_2se_total_pct"])


def test_correct_model_columns():
    """Pool a: diffs 1, -5, 0 pp against a correct model's mean -1 pp and se_null 2, 1, 0.5
    pp: |diff - mean| = 2, 4, 1 pp against 4, 2, 1 pp: 2 of 3 within. The correct model's
    mean |diff| is the folded-normal mean, checked against simulation (1e6 draws, 4 MC SE)."""
    frame = FRAME.assign(null_mean=[-0.01, -0.01, -0.01, np.nan],
                         se_null=[0.02, 0.01, 0.005, np.nan])
    module = _load()
    table = module.summarize(frame).set_index("dataset")
    assert table.loc["a", "within_2se_null_pct"] == pytest.approx(200 / 3)
    assert np.isnan(table.loc["b", "within_2se_null_pct"])
    draws = np.random.default_rng(0).normal(-0.01, 0.02, 1_000_000)
    mc = np.abs(draws).mean()
    assert module.folded_normal_mean(-0.01, 0.02) == pytest.approx(
        mc, abs=4 * np.abs(draws).std() / 1000)
    assert module.folded_normal_mean(0.03, 0.0) == pytest.approx(0.03)
