"""Fixed-model calibration of the blog workload, end to end, against the blog's plain loop.

Usage::

    python benchmarks/bench_fixed_models.py [--sims 2000] [--loop-sims 2000] [--repeat 2]
                                            [--profile]

The workload ("Benchmaxxing" blog): ``question_mixture`` (fixed models, n = 4,000 questions,
a fresh benchmark per experiment), k = 8 runs per arm, its five methods (``mcnemar``,
``paired_t_questions``, ``question_bootstrap``, ``run_bootstrap``, ``run_bootstrap_sqrt_b``)
with B = 30, ``--sims`` experiments at 0 pp and as many at +1 pp, one job. Timed:

1. the command ``python -m sim.calibrate ... --jobs 1`` (start-up, imports, the seed-budget
   pass and the CSV included): wall time and CPU time (user + system), best of ``--repeat``;
2. the same calibration in-process (``sim.grid.calibrate``, imports excluded):
   CPU time, best of ``--repeat``;
3. the plain per-simulation loop of ``benchmarks/blog_loop.py`` as a command on
   ``--loop-sims`` simulations per effect (scaled to ``--sims`` when fewer), and its
   in-process CPU time per simulation (on 50 + 50).

Ratios: command against loop command (end to end) by wall and by CPU time, in-process
against the loop's in-process time. On a shared machine the CPU-time ratio is the one to
read (other processes lengthen wall times, not CPU times, to first order); the load average
is printed first. ``--profile`` prints where the in-process calibration spends its time
(cProfile, by own time).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def _run_timed(cmd) -> tuple[float, float]:
    """(wall s, CPU s: user + system of the child) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=_env(), check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def time_command(sims: int, repeat: int) -> tuple[float, float]:
    """Best wall and best CPU seconds of the calibration command over ``repeat`` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            wall, cpu = _run_timed(calibrate_command(sims, out))
        walls.append(wall)
        cpus.append(cpu)
    return min(walls), min(cpus)


def inprocess(sims: int):
    """A callable running the calibration in this process (a fresh output folder each call)."""
    from sim import generators
    from sim.grid import calibrate

    g = generators.get("question_mixture")

    def go():
        with tempfile.TemporaryDirectory() as out:
            return calibrate(g, [K], list(EFFECTS), protocol_names=BLOG_PROTOCOLS,
                             protocol_params={"n_resamples": B}, sims=sims, seed=0, jobs=1,
                             out=out, progress=False)
    return go


def time_loop(loop_sims: int, sims: int) -> tuple[float, float, float]:
    """The loop command at ``sims`` + ``sims`` (wall s, CPU s; beyond ``loop_sims`` the rest
    extrapolated at the command's own rate after start-up) and the loop's in-process
    seconds per simulation (CPU time of this process)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import blog_loop

    n_small = min(loop_sims, 50)
    c0 = time.process_time()
    blog_loop.run(n_small, [1.0, 0.0], K, B)
    per_sim = (time.process_time() - c0) / (2 * n_small)
    wall, cpu = _run_timed([sys.executable, str(ROOT / "benchmarks" / "blog_loop.py"),
                            "--sims", str(loop_sims), "--k", str(K), "--B", str(B)])
    scale = 1 + max(sims - loop_sims, 0) / loop_sims
    return wall * scale, cpu * scale, per_sim


def _cpu_time(fn) -> float:
    c0 = time.process_time()
    fn()
    return time.process_time() - c0


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
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
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
    cmd_wall, cmd_cpu = time_command(args.sims, args.repeat)
    go = inprocess(args.sims)
    go()
    inproc = min(_cpu_time(go) for _ in range(args.repeat))
    loop_wall, loop_cpu, loop_per_sim = time_loop(args.loop_sims, args.sims)
    loop_inproc = loop_per_sim * 2 * args.sims
    print(f"plain loop command: {loop_wall:.1f} s wall, {loop_cpu:.1f} s CPU"
          + (f" (scaled from {args.loop_sims} + {args.loop_sims})"
             if args.loop_sims < args.sims else "")
          + f"; in-process {loop_per_sim * 1e3:.2f} ms CPU per simulation = "
            f"{loop_inproc:.1f} s")
    print(f"sim.calibrate command, --jobs 1: {cmd_wall:.2f} s wall, {cmd_cpu:.2f} s CPU: "
          f"{loop_wall / cmd_wall:.1f}x the loop command by wall time, "
          f"{loop_cpu / cmd_cpu:.1f}x by CPU time (end to end)")
    print(f"in-process calibrate, one job: {inproc:.2f} s CPU: {loop_inproc / inproc:.1f}x "
          f"the loop in-process")
    if args.profile:
        profile(args.sims)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
