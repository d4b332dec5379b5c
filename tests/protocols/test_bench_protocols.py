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
    """``--json -`` prints machine-readable rows; every registered protocol that runs without
    question clusters has a reference (the benchmark draws no clusters). The harness
    reproductions are checked against their tools' formulas in their own test files."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    names = [n for n in protocols.names() if not protocols.protocol_class(n).needs_clusters
             and not protocols.protocol_class(n).harness]
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_protocols.py"), "--sims", "12",
         "--loop-sims", "4", "--k", "3", "--n-questions", "50", "--json", "-",
         "--protocols", *names],
        capture_output=True, text=True, check=True, env=env, cwd=ROOT, timeout=120)
    rows = json.loads(out.stdout)
    assert sorted(r["protocol"] for r in rows) == names
    for row in rows:
        assert row["k"] == 3 and row["sims"] == 12 and row["loop_sims"] == 4
        assert row["vectorized_s"] > 0 and row["loop_s"] > 0
        assert 0.0 <= row["agreement"] <= 1.0


def test_bench_bca_kernel_cli_prints_every_part():
    """``benchmarks/bench_bca_kernel.py`` runs end to end and times each named part."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_bca_kernel.py"), "--sims", "8",
         "--k", "5", "--repeat", "1"],
        capture_output=True, text=True, check=True, env=env, cwd=ROOT, timeout=120)
    for part in ("fill, one at a time", "fill, four at a time", "BCa kernel",
                 "sign flip, enumerated", "sign flip, kernel"):
        line = next(x for x in out.stdout.splitlines() if x.startswith(part))
        assert float(line.split()[-1]) > 0
