"""Leaderboards at a public board's scale: error rates, time and memory (issue 37).

Usage::

    python benchmarks/bench_leaderboard.py [--boards 200] [--seed 0] [--skip-check]
                                           [--systems 135 500] [--items 500]

Prints the load average, then

(a) the public-board cells of ``sim.decisions.leaderboard`` (:data:`BOARD_CELLS`:
    135 systems x 500 binary items, all tied / every system different over 1 logit),
    ``--boards`` boards each: the family-wise error of any false separation (all-pairs
    max-T) and of the display tiers under the global null, and the coverage of the rank
    intervals and of the possibly-best set, with Wilson 95% intervals and the decision
    grid's verdict (``sim.decision_grid.judge``, one look, these rows one Holm family);
    targets: the rates <= 5% + 2 binomial SE, the best set >= 95%;
(b) for each ``--systems`` count, ``evalcal evaluate BOARD.csv --leaderboard --json`` on
    one board of that many systems x ``--items`` binary items, as a fresh process under
    ``/usr/bin/time -v``: wall time and peak memory (maximum resident set size) end to
    end; targets: 135 systems <= 15 s and <= 2 GB, 500 systems <= 5 min. (The progress
    bar is drawn only when stderr is a terminal, so not here.)
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.decision_grid import judge  # noqa: E402
from sim.decisions import leaderboard as family  # noqa: E402
from sim.grid import wilson  # noqa: E402


def write_board(path, systems: int, items: int, seed: int) -> None:
    """One board of ``family``'s generator (``spread`` over 1 logit), one 0/1 run each."""
    rng = np.random.default_rng(seed)
    a = family.abilities({"systems": systems, "scenario": "spread", "gap": 1.0})
    u = rng.standard_normal(items)
    x = (rng.random((systems, items)) < special.expit(1.0 + a[:, None] + u)).astype(np.int8)
    names = np.array([f"system_{i:03d}" for i in range(systems)])
    pd.DataFrame({"seed": 0, "arm": np.repeat(names, items),
                  "question": np.tile(np.arange(items), systems),
                  "score": x.ravel()}).to_csv(path, index=False)


def time_v(cmd) -> tuple[float, float]:
    """Wall seconds and peak resident memory (GiB) of ``cmd`` under ``/usr/bin/time -v``."""
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True,
                          check=True)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    hours, minutes, seconds = (float(g) if g else 0.0 for g in wall.groups())
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return 3600 * hours + 60 * minutes + seconds, int(rss.group(1)) / 2**20


def check(boards: int, seed: int) -> None:
    t0 = time.perf_counter()
    rows = family.board_check(boards, seed=seed)
    # one family for Holm: the verdicts of these rows judged together
    verdicts = judge(pd.DataFrame(rows).drop(columns="cell"))["verdict"]
    print(f"(a) public-board cells, {boards} boards each ({time.perf_counter() - t0:.0f} s):")
    for r, verdict in zip(rows, verdicts):
        low, high = wilson(r["hits"], r["sims"])
        rate = r["hits"] / r["sims"]
        cell = f"{r['cell']['systems']} x {r['cell']['n']} {r['cell']['scenario']}"
        target = ""
        if r["measure"] == "rejection":
            limit = r["alpha"] + 2 * math.sqrt(r["alpha"] * (1 - r["alpha"]) / r["sims"])
            target = f"target <= {100 * limit:.1f}%: {'met' if rate <= limit else 'NOT met'}"
        elif r["measure"] == "coverage":
            target = f"target >= 95%: {'met' if rate >= 0.95 else 'NOT met'}"
        print(f"    {cell:<20} {r['decision']:<36} {100 * rate:5.1f}% "
              f"[{100 * low:.1f}, {100 * high:.1f}] ({r['hits']}/{r['sims']}) {verdict}; "
              f"{target}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--boards", type=int, default=family.BOARD_SIMS)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-check", action="store_true", help="only (b)")
    p.add_argument("--systems", type=int, nargs="*", default=[135, 500])
    p.add_argument("--items", type=int, default=500)
    args = p.parse_args(argv)
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores")
    if not args.skip_check:
        check(args.boards, args.seed)
    print("(b) evalcal evaluate --leaderboard --json, one board, end to end:")
    with tempfile.TemporaryDirectory() as tmp:
        for m in args.systems:
            csv = Path(tmp) / f"board_{m}.csv"
            write_board(csv, m, args.items, args.seed)
            wall, gib = time_v([sys.executable, "-m", "evalcal_cli", "evaluate", str(csv),
                                "--leaderboard", "--json"])
            print(f"    {m} systems x {args.items} items ({m * (m - 1) // 2:,} pairs): "
                  f"{wall:.1f} s, {gib:.2f} GiB peak; load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
