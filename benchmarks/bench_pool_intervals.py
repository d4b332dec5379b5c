"""Pool-sampling intervals of real pools: do they cover, and what do they cost?

Usage::

    python benchmarks/bench_pool_intervals.py [--sims 2000] [--splits 4] [--jobs 2]
        [--method jackknife] [--skip-cost]

1. Coverage. Each pool (the committed ``real_runs/pool``: every dataset and scenario, 30
   seeds; and a user CSV pool of 40 seeds with heavy-tailed t3 per-seed deltas) is split
   ``--splits`` times at random into two disjoint halves A and B. Every protocol is
   calibrated on each half at k = 3..N/6 (k <= a third of the half) with ``--method``'s
   interval. A cell is *covered* when the two halves' rates differ by at most
   ``1.96 sqrt(v_A + v_B)``, ``v`` = pool variance + Monte Carlo variance of each half:
   two independent pools of the same size agree within their intervals. Printed: the
   fraction covered per k (target >= 0.9), over all (pool, split, protocol) cells.
2. Cost. The real grid ``--generator real --k 3 10`` (every dataset and scenario, default
   protocols, ``--sims``): wall time with the seed-tally interval (``jackknife``), without
   any interval (``halves`` with ``--pool-reps 0``), and with the old 30 half-sample
   replicates. Each in a fresh cache folder.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sim import generators
from sim.calibration import CalibrationConfig, calibrate_grid, plan_calibration
from sim.generators.real_pool import RealPool
from sim.grid import calibrate


@dataclasses.dataclass(frozen=True)
class SubPool(RealPool):
    """A real pool restricted to some of its seeds (one half of a split)."""

    subset: tuple = ()

    def pool(self):
        base, variant = super().pool()
        rows = np.asarray(self.subset)
        return base[rows], variant[rows]

    def describe(self) -> str:
        return super().describe() + ";subset=" + "-".join(map(str, self.subset))


def _user_csv(folder: Path) -> str:
    rng = np.random.default_rng(7)
    size = 40
    base = 0.9 + 0.004 * rng.standard_normal(size)
    deltas = 0.004 * rng.standard_t(3, size)
    rows = ["seed,arm,metric"]
    for s in range(size):
        rows += [f"{s},baseline,{base[s]:.8f}", f"{s},variant,{base[s] + deltas[s]:.8f}"]
    path = folder / "user_pool.csv"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _variance(row):
    tilde = (row.rejections + 2) / (row.sims + 4)
    return row.pool_sd**2 + tilde * (1 - tilde) / (row.sims + 4)


def coverage(sims: int, splits: int, jobs: int, method: str, folder: Path) -> pd.DataFrame:
    pools = generators.expand("real", {})
    pools.append(generators.get("real_pool", csv=_user_csv(folder), null=True))
    rng = np.random.default_rng(0)
    rows = []
    for g in pools:
        size = g.pool_size
        ks = list(range(3, max(3, size // 2 // 3) + 1))
        params = {f.name: getattr(g, f.name) for f in dataclasses.fields(RealPool)}
        for split in range(splits):
            order = rng.permutation(size)
            halves = [tuple(sorted(int(i) for i in order[: size // 2])),
                      tuple(sorted(int(i) for i in order[size // 2:]))]
            frames = []
            for half in halves:
                sub = SubPool(**params, subset=half)
                frames.append(calibrate(sub, ks, [100 * sub.fixed_effect()], sims=sims,
                                        seed=split, jobs=jobs, progress=False,
                                        pool_method=method))
            a, b = (f.set_index(["protocol", "k"]) for f in frames)
            for key in a.index.intersection(b.index):
                ra, rb = a.loc[key], b.loc[key]
                bound = 1.96 * np.sqrt(_variance(ra) + _variance(rb))
                rows.append({"pool": f"{g.dataset} {g.scenario}", "split": split,
                             "protocol": key[0], "k": key[1],
                             "covered": abs(ra.rate - rb.rate) <= bound,
                             "width_pp": 100 * bound})
    return pd.DataFrame(rows)


def cost(sims: int, jobs: int) -> pd.DataFrame:
    rows = []
    for label, method, reps in (("seed tallies (jackknife)", "jackknife", 0),
                                ("no interval", "halves", 0),
                                ("30 half-samples (old)", "halves", 30)):
        with tempfile.TemporaryDirectory() as out:
            config = CalibrationConfig(k=(3, 10), generator="real", sims=sims, jobs=jobs,
                                       out=Path(out), pool_method=method, pool_reps=reps,
                                       plot=False, quiet=True)
            plan = plan_calibration(config)
            start = time.perf_counter()
            for g in plan.generators:
                calibrate_grid(plan, g)
            rows.append({"interval": label, "seconds": time.perf_counter() - start})
    frame = pd.DataFrame(rows)
    base = float(frame.loc[frame.interval == "no interval", "seconds"].iloc[0])
    return frame.assign(ratio=frame.seconds / base)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--sims", type=int, default=2000)
    p.add_argument("--splits", type=int, default=4)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--method", default="jackknife", choices=("jackknife", "projection"))
    p.add_argument("--skip-cost", action="store_true")
    args = p.parse_args(argv)
    pd.set_option("display.width", 160)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        cov = coverage(args.sims, args.splits, args.jobs, args.method, Path(folder))
    print(f"1. coverage ({args.method}, {args.sims} simulations, {args.splits} splits per "
          f"pool; {time.perf_counter() - start:.0f} s): fraction of cells whose halves "
          f"agree within their combined 95% interval")
    by_k = cov.groupby("k").agg(cells=("covered", "size"), covered=("covered", "mean"),
                                median_width_pp=("width_pp", "median"))
    print(by_k.to_string(float_format=lambda x: f"{x:.3f}"))
    user = cov[cov.pool.str.startswith("user_pool")]
    print("   user CSV pool only:")
    print(user.groupby("k").agg(cells=("covered", "size"), covered=("covered", "mean"))
          .to_string(float_format=lambda x: f"{x:.3f}"))
    print("   by pool:")
    print(cov.groupby("pool").covered.mean().to_string(float_format=lambda x: f"{x:.3f}"))
    if not args.skip_cost:
        print(f"\n2. cost of the real grid (--generator real --k 3 10, {args.sims} "
              f"simulations, --jobs {args.jobs})")
        print(cost(args.sims, args.jobs).to_string(index=False,
                                                   float_format=lambda x: f"{x:.2f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
