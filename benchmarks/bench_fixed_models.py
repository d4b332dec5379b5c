"""Fixed-model calibration of the blog workload, end to end, against the blog's plain loop.

Usage::

    python benchmarks/bench_fixed_models.py [--sims 2000] [--loop-sims 2000] [--repeat 2]
                                            [--profile]

The workload ("Benchmaxxing" blog): ``question_mixture`` (fixed models, n = 4,000 questions,
a fresh benchmark per experiment), k = 8 runs per arm, its five methods (``mcnemar``,
``paired_t_questions``, ``question_bootstrap``, ``run_bootstrap``, ``run_bootstrap_sqrt_b``)
with B = 30, ``--sims`` experiments at 0 pp and as many at +1 pp, one job. Timed:

1. the command ``python -m sim.calibrate ... --jobs 1`` (start-up, imports, the seed-budget
   pass and the CSV included): wall time, best of ``--repeat``;
2. the same calibration in-process (``sim.calibrate_core.calibrate``, imports excluded);
3. the plain per-simulation loop of ``benchmarks/blog_loop.py``, as a command, on
   ``--loop-sims`` simulations per effect; below ``--sims`` the rest is extrapolated at the
   rate of its in-process part. Its in-process rate is reported too.

Ratios: command against loop command (end to end), in-process against the loop's
in-process time. ``--profile`` prints where the in-process calibration spends its time
(cProfile, by own time). The machine may be shared: read the load average printed first.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import best_time

ROOT = Path(__file__).resolve().parents[1]
BLOG_PROTOCOLS = ["mcnemar", "paired_t_questions", "question_bootstrap", "run_bootstrap",
                  "run_bootstrap_sqrt_b"]
K, B, EFFECTS = 8, 30, (0.0, 1.0)


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def calibrate_command(sims: int, out: str) -> list[str]:
    """The blog workload as a ``sim.calibrate`` command, one job."""
    return [sys.executable, "-m", "sim.calibrate", "--generator", "question_mixture", "--k",
            str(K), "--effects", *(f"{e:g}" for e in EFFECTS), "--sims", str(sims),
            "--protocols", *BLOG_PROTOCOLS, "--protocol-param", f"n_resamples={B}",
            "--jobs", "1", "--quiet", "--no-plot", "--out", out]


def time_command(sims: int, repeat: int) -> float:
    def go():
        with tempfile.TemporaryDirectory() as out:
            subprocess.run(calibrate_command(sims, out), cwd=ROOT, env=_env(), check=True,
                           capture_output=True)
    return best_time(go, repeat)[0]


def inprocess(sims: int):
    """A callable running the calibration in this process (a fresh output folder each call)."""
    from sim import generators
    from sim.calibrate_core import calibrate

    g = generators.get("question_mixture")

    def go():
        with tempfile.TemporaryDirectory() as out:
            return calibrate(g, [K], list(EFFECTS), protocol_names=BLOG_PROTOCOLS,
                             protocol_params={"n_resamples": B}, sims=sims, seed=0, jobs=1,
                             out=out, progress=False)
    return go


def time_loop(loop_sims: int, sims: int) -> tuple[float, float]:
    """(loop command at ``sims`` + ``sims``, extrapolated; loop's in-process s/simulation)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import blog_loop

    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "blog_loop.py"), "--sims",
                    str(loop_sims), "--k", str(K), "--B", str(B)], cwd=ROOT, env=_env(),
                   check=True, capture_output=True)
    wall = time.perf_counter() - t0
    n_small = min(loop_sims, 50)
    t0 = time.perf_counter()
    blog_loop.run(n_small, [1.0, 0.0], K, B)
    per_sim = (time.perf_counter() - t0) / (2 * n_small)
    return wall + 2 * max(sims - loop_sims, 0) * per_sim, per_sim


def profile(sims: int, top: int = 20) -> None:
    go = inprocess(sims)
    go()
    pr = cProfile.Profile()
    pr.enable()
    go()
    pr.disable()
    stats = pstats.Stats(pr)
    total = stats.total_tt
    print(f"\nprofile of the in-process calibration ({total:.2f} s under cProfile), "
          f"by own time:")
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    for (path, line, fn), (_, calls, own, cum, _) in rows:
        where = f"{Path(path).relative_to(ROOT) if path.startswith(str(ROOT)) else path}"
        print(f"  {own:6.3f} s own {cum:6.3f} s cum {own / total:6.1%}  {calls:>5}x  "
              f"{where}:{line}({fn})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000, help="simulations per effect")
    parser.add_argument("--loop-sims", type=int, default=2000,
                        help="simulations per effect of the plain loop (rest extrapolated)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)

    print(f"load average at start: {os.getloadavg()}; {os.cpu_count()} cores; best of "
          f"{args.repeat}")
    print(f"workload: question_mixture n = 4,000, k = {K}, B = {B}, five methods, "
          f"{args.sims:,} + {args.sims:,} simulations, one job")
    cmd = time_command(args.sims, args.repeat)
    inproc = best_time(inprocess(args.sims), args.repeat, warmup=True)[0]
    loop_cmd, loop_per_sim = time_loop(args.loop_sims, args.sims)
    loop_inproc = loop_per_sim * 2 * args.sims
    print(f"plain loop command: {loop_cmd:.1f} s"
          + (f" (extrapolated from {args.loop_sims} + {args.loop_sims})"
             if args.loop_sims < args.sims else "")
          + f"; in-process {loop_per_sim * 1e3:.2f} ms per simulation = {loop_inproc:.1f} s")
    print(f"sim.calibrate command, --jobs 1: {cmd:.2f} s: {loop_cmd / cmd:.1f}x the loop "
          f"command (end to end)")
    print(f"in-process calibrate, one job: {inproc:.2f} s: {loop_inproc / inproc:.1f}x the "
          f"loop in-process")
    if args.profile:
        profile(args.sims)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
