"""Time the default calibration grid and compare with a naive per-simulation scipy loop;
with ``--commands``, time the default commands as a user runs them.

Usage::

    python benchmarks/bench_calibrate.py [--jobs N] [--loop-sims 30]
    python benchmarks/bench_calibrate.py --commands [--repeat 3] [--plot]

``--commands`` runs each command of :data:`COMMANDS` (the validity rule's sequential stop and
the seed-budget search included) ``--repeat`` times as a whole process, each in a fresh
output folder (no cell cache), and prints the median wall time beside its target on an idle
2-core machine (issue 36), the CPU time of the process and its workers, and the load
average before each run (``--plot`` draws the figure too). Compare before and after on the
same machine at the same load: the times follow the load; the CPU time much less.

Part 1 runs the default ``python -m sim.calibrate --k 3 10`` grid (seed_gaussian, effects
0 0.5 1 2 pp, 2000 simulations per cell, every applicable protocol) in a fresh folder and
reports the wall time. Part 2 draws experiments one at a time on a subset of the same cells
(k = 3, 6, 10 at 1 pp) and decides each with scipy/statsmodels calls in a Python loop, the
way a script without vectorization would; it reports seconds per simulated experiment for
both and their ratio.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy import stats

from sim import generators
from sim.grid import calibrate

KS = list(range(3, 11))
EFFECTS = [0, 0.5, 1, 2]
#: the default commands and their targets (s, idle 2-core machine)
COMMANDS = {
    "python -m sim.calibrate --k 3 10": (["--k", "3", "10"], 15.0),
    "python -m sim.calibrate --generator question_mixture --k 8": (
        ["--generator", "question_mixture", "--k", "8"], 10.0),
}


def _loadavg() -> str:
    """The 1-minute load average (the machine may be shared: read the times beside it)."""
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


def time_commands(repeat: int, plot: bool = False) -> None:
    """Median wall time of each of :data:`COMMANDS`, whole process, fresh output folder,
    with the CPU time of the process and its workers and the load average before each run."""
    for shown, (argv, target) in COMMANDS.items():
        times, cpus, loads = [], [], []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as out:
                loads.append(_loadavg())
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-m", "sim.calibrate", *argv, "--out", out,
                                "--quiet", *([] if plot else ["--no-plot"])], check=True)
                times.append(time.perf_counter() - t0)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus.append(after.ru_utime + after.ru_stime
                            - before.ru_utime - before.ru_stime)
        print(f"{shown}{'' if plot else ' --no-plot'}: median {statistics.median(times):.1f} s "
              f"of {repeat} (min {min(times):.1f}, max {max(times):.1f}; target <= {target:g} s "
              f"idle); CPU {statistics.median(cpus):.1f} s (process and the workers it "
              f"reaped); load average before each run {', '.join(loads)}")


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def naive_decisions(base, variant, alpha, rng):
    """Every seed-level protocol's decision on one experiment, via scipy one call at a time."""
    b, v = base[:, 0], variant[:, 0]
    d = v - b
    out = {"single_run": abs(d[0]) >= 0.01}
    out["welch_t"] = stats.ttest_ind(v, b, equal_var=False).pvalue < alpha
    out["paired_t"] = stats.ttest_rel(v, b).pvalue < alpha
    out["wilcoxon"] = stats.wilcoxon(d).pvalue < alpha
    perm = stats.permutation_test((d,), _mean, permutation_type="samples",
                                  n_resamples=np.inf).pvalue
    out["sign_flip"] = perm < alpha
    ci = stats.bootstrap((d,), _mean, method="BCa", n_resamples=10_000,
                         rng=rng).confidence_interval
    excludes = ci.low > 0 or ci.high < 0
    out["bca"] = excludes
    out["paired_bca_perm"] = excludes and perm < alpha
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--sims", type=int, default=2000)
    parser.add_argument("--loop-sims", type=int, default=30,
                        help="experiments per subset cell in the naive loop")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--commands", action="store_true",
                        help="time the default commands as whole processes instead")
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (--commands)")
    parser.add_argument("--plot", action="store_true",
                        help="--commands: draw power_curves.png too, as the command does "
                             "by default")
    args = parser.parse_args(argv)
    if args.commands:
        time_commands(args.repeat, args.plot)
        return 0

    g = generators.get("seed_gaussian")
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        frame = calibrate(g, KS, EFFECTS, sims=args.sims, seed=args.seed, jobs=args.jobs,
                          out=out, progress=False)
        grid = time.perf_counter() - t0
    n_experiments = len(KS) * len(EFFECTS) * args.sims
    n_protocols = frame["protocol"].nunique()
    print(f"default grid: {len(KS)} k x {len(EFFECTS)} effects x {args.sims} sims, "
          f"{n_protocols} protocols, --jobs {args.jobs}: {grid:.1f} s wall")
    vec_per = grid / n_experiments

    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    count = 0
    for k in (3, 6, 10):
        for _ in range(args.loop_sims):
            base, variant = g.draw(1, k, 0.01, rng)
            naive_decisions(base[0], variant[0], 0.05, rng)
            count += 1
    naive_per = (time.perf_counter() - t0) / count
    print(f"naive scipy loop (1 process): {naive_per * 1e3:.2f} ms per simulated experiment "
          f"(all {n_protocols} protocols; k = 3, 6, 10 at 1 pp; {count} experiments)")
    print(f"vectorized grid: {vec_per * 1e3:.3f} ms per simulated experiment (wall, "
          f"{args.jobs} jobs); {vec_per * 1e3 * args.jobs:.3f} ms per experiment per core")
    print(f"speed-up: {naive_per / vec_per:.0f}x wall, "
          f"{naive_per / (vec_per * args.jobs):.0f}x per core")
    print(f"naive loop extrapolated to the whole grid: {naive_per * n_experiments / 60:.0f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
