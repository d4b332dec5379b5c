"""benchmarks/bench_evaluate_arms.py times ``evaluate`` against a plain pandas + scipy +
statsmodels script; here, on a small file, the two agree: Holm p (statsmodels'
multipletests on scipy's ttest_rel), the Bonferroni-simultaneous t interval (scipy) and
d_z's noncentral-t interval (scipy brentq on nct.cdf), to 1e-8."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalcal_core.cli import call_main
from reports.evaluate import main

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_evaluate_arms
    import plain_evaluate_arms

    yield bench_evaluate_arms, plain_evaluate_arms
    for name in ("bench_evaluate_arms", "plain_evaluate_arms"):
        sys.modules.pop(name, None)


def test_plain_script_gives_evaluate_s_numbers(tmp_path, capsys, bench):
    bench_mod, plain = bench
    path = tmp_path / "results.csv"
    bench_mod.write_results(path, arms=4, seeds=6, questions=300, seed=3)
    assert call_main(main, "evaluate", [str(path), "--json"]) == 0
    ours = capsys.readouterr().out
    diffs = bench_mod.compare_outputs(ours, json.dumps(plain.plain_tests(path)))
    assert diffs["pairs"] == 6
    assert diffs["holm_p_rel"] < 1e-8
    assert diffs["dz_ci_abs"] < 1e-8
    assert diffs["simultaneous_ci_abs_pp"] < 1e-8
