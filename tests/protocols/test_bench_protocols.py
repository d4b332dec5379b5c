"""The protocol benchmark script runs end to end (smoke test through its CLI, as a user would)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import protocols

ROOT = Path(__file__).resolve().parents[2]


def test_bench_protocols_cli_emits_one_row_per_protocol():
    """``--json -`` prints machine-readable rows; every registered protocol has a reference."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_protocols.py"), "--sims", "12",
         "--loop-sims", "4", "--k", "3", "--n-questions", "50", "--json", "-"],
        capture_output=True, text=True, check=True, env=env, cwd=ROOT, timeout=120)
    rows = json.loads(out.stdout)
    assert sorted(r["protocol"] for r in rows) == protocols.names()
    for row in rows:
        assert row["k"] == 3 and row["sims"] == 12 and row["loop_sims"] == 4
        assert row["vectorized_s"] > 0 and row["loop_s"] > 0
        assert 0.0 <= row["agreement"] <= 1.0
