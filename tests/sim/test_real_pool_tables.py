"""``benchmarks/real_pool_tables.py`` on a hand-made calibration.csv (cells written by hand)."""

import importlib.util
from pathlib import Path

import pandas as pd

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "real_pool_tables.py"


def _load():
    spec = importlib.util.spec_from_file_location("real_pool_tables", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(dataset, scenario, protocol, k, rate, low=None, high=None):
    return {"generator": "real_pool", "generator_params": f"dataset={dataset};scenario={scenario}",
            "protocol": protocol, "k": k, "rate": rate, "sims": 2000,
            "pool_low": low, "pool_high": high}


def test_tables_by_hand():
    rows = [_row("a", "S0p", "paired_t", 3, 0.031), _row("a", "S0p", "paired_t", 10, 0.018,
                                                           0.0, 0.054),
            _row("b", "S0p", "paired_t", 3, 0.5), _row("b", "S0p", "paired_t", 10, 0.25),
            _row("a", "S1", "paired_t", 3, 0.06), _row("a", "S1", "paired_t", 10, 0.841,
                                                       0.54, 1.0)]
    text = _load().tables(pd.DataFrame(rows), [3, 10], ["paired_t", "welch_t"])
    lines = text.splitlines()
    assert lines[0].startswith("**S0p: false-positive rate (%)**, k = 3 / 10, 2000 experiments")
    assert "| protocol | a | b |" in lines
    # the pool interval of the largest k, in whole percent; none where the CSV has none
    assert "| `paired_t` | 3.1 / 1.8 [0–5] | 50.0 / 25.0 |" in lines
    assert any(line.startswith("**S1: power (%)**") for line in lines)
    assert "| `paired_t` | 6.0 / 84.1 [54–100] |" in lines
    # a protocol with no rows is left out rather than printed empty
    assert not any("welch_t" in line for line in lines)
