"""Issue 11: question-level and real-pool calibration speed, before and after, with memory.

Usage::

    python benchmarks/bench_speed.py [--before 679e496] [--repeat 3] [--real] [--commands]
                                     [--memory] [--loop-sims 100] [--jobs 2]

Prints, for the code at ``--before`` (extracted with ``git archive`` into a temporary
folder) and for the working tree:

1. ms per experiment of single protocols on one cell's batches (best of ``--repeat``):
   ``paired_t`` on per-seed metrics alone, on a question_mixture batch (k = 8, n = 4,000)
   and on a real_pool cifar10 batch (k = 10, n = 10,000); the question and run bootstraps
   on both question-level batches;
2. the blog workload in-process (question_mixture, k = 8, B = 30; mcnemar,
   paired_t_questions, question_bootstrap, run_bootstrap, run_bootstrap_sqrt_b; 1,000 sims
   at +1 pp and 1,000 at 0, one process: the cells as ``sim.grid.run_task`` computes them)
   against the plain per-simulation loop of ``benchmarks/blog_loop.py`` on ``--loop-sims``
   simulations per effect, extrapolated;
3. with ``--commands``: wall time and peak RSS of the commands, start-up included: the blog
   workload at 2,000 + 2,000 sims, ``--k 8 --generator question_mixture --effects 0 1``,
   and the plain loop as a command (its time extrapolated from ``--loop-sims``);
4. with ``--real``: ``python -m sim.calibrate --generator real --k 3 10`` (long before);
5. with ``--memory``: peak RSS of one-job cells with n = 100,000 questions at two --sims.

The machine may be shared: every timing is the best of ``--repeat`` runs; read the load
average printed at the start.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _timing import best_time

ROOT = Path(__file__).resolve().parents[1]
BLOG_PROTOCOLS = ["mcnemar", "paired_t_questions", "question_bootstrap", "run_bootstrap",
                  "run_bootstrap_sqrt_b"]


# --------------------------------------------------------------------------------------------
# In-process part (runs against whichever tree is first on PYTHONPATH)


def _batches(generator, k, effect_pp, sims):
    from sim.grid import draw_cell

    return list(draw_cell(generator, k, effect_pp, sims, 0))


def _fresh(batch):
    # The same experiments without the derived quantities cached on them: a protocol then
    # pays for what it derives, as the first protocol of a cell does.
    from protocols import ScoreBatch

    # getattr: the batches of trees before the public ``order`` (``--before``) have none
    if getattr(batch, "order", None) is not None:
        return ScoreBatch.from_pool(batch.pool, batch.order)
    return ScoreBatch(batch.base, batch.variant, batch.binary)


def _calibration_params(name: str) -> dict:
    """What ``sim.calibrate`` sets on a protocol in the tree under test: the z-bootstraps'
    ``replicates`` default of calibration where the tree has one (none before it)."""
    import protocols

    try:
        from sim.grid import DEFAULT_REPLICATES
    except ImportError:
        return {}
    return ({"replicates": DEFAULT_REPLICATES}
            if "replicates" in protocols.parameters(name) else {})


def per_protocol(repeat: int, sims: int = 200) -> dict:
    """ms per experiment of single protocols on one cell's batches (drawn once, untimed)."""
    import protocols
    from protocols import ScoreBatch
    from sim import generators

    out = {}
    cells = {"question_mixture k=8 n=4000": (generators.get("question_mixture"), 8, 0.0),
             "real_pool cifar10 S0p k=10 n=10000": (
                 generators.get("real_pool", dataset="cifar10", scenario="S0p"), 10, 0.0)}
    for label, (g, k, eff) in cells.items():
        drawn = _batches(g, k, eff, sims)
        for name in ("paired_t", "question_bootstrap", "run_bootstrap"):
            proto = protocols.get(name, **_calibration_params(name))
            proto.evaluate(_fresh(drawn[0]), rng=0)

            def go(proto=proto, drawn=drawn):
                for batch in drawn:
                    proto.evaluate(_fresh(batch), rng=0)
            out[f"{name} on {label}"] = best_time(go, repeat)[0] / sims * 1e3
        if label.startswith("real"):
            seed = [(b.seed_base, b.seed_variant) for b in drawn]
            proto = protocols.get("paired_t")

            def alone(seed=seed, proto=proto):
                for sb, sv in seed:
                    proto.evaluate(ScoreBatch.from_arrays(sb, sv), rng=0)
            seconds = best_time(alone, repeat)[0]
            out["paired_t on per-seed metrics alone (k=10)"] = seconds / sims * 1e3
    return out


def blog_inproc(repeat: int, sims: int = 1000) -> dict:
    """Seconds and peak RSS of the blog workload as run_task computes it, one process."""
    import resource

    import protocols
    from evalcal_core.params import encode
    from sim import generators
    from sim.grid import CellSpec, chunk_size, run_task

    g = generators.get("question_mixture")
    k = 8

    def go():
        for effect in (1.0, 0.0):
            specs = []
            for name in BLOG_PROTOCOLS:
                own = {"n_resamples": 30} if "bootstrap" in name else {}
                own.update(_calibration_params(name))
                params = encode(own, protocols.parameters(name))
                # Trees before the data digest (issue 10) have no such field.
                extra = ({"data_digest": g.data_digest()}
                         if "data_digest" in CellSpec.__dataclass_fields__ else {})
                specs.append(CellSpec("question_mixture", g.describe(), name, params, k,
                                      effect, sims, 0.05, 0, chunk_size(g, k), **extra))
            run_task(g, k, effect, specs, 0)
    seconds = best_time(go, repeat)[0]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "sims": 2 * sims, "peak_rss_mb": rss}


def inproc_main(repeat: int) -> int:
    print(json.dumps({"per_protocol_ms": per_protocol(repeat), "blog": blog_inproc(repeat)}))
    return 0


# --------------------------------------------------------------------------------------------
# Driver


def _extract(rev: str, dest: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def _env(tree: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(tree)}


def _timed(cmd, tree: Path, repeat: int):
    """Best wall seconds and the peak RSS (MiB, largest process) of a command."""
    best, rss = np.inf, 0.0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            full = [c.replace("{OUT}", out) for c in cmd]
            t0 = time.perf_counter()
            res = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M", *full], cwd=tree,
                                 env=_env(tree), capture_output=True, text=True)
            wall = time.perf_counter() - t0
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(full)} failed:\n{res.stderr[-2000:]}")
        best = min(best, wall)
        rss = max(rss, int(re.findall(r"MAXRSS (\d+)", res.stderr)[-1]) / 1024)
    return best, rss


def _calibrate(*args, jobs):
    return [sys.executable, "-m", "sim.calibrate", *args, "--jobs", str(jobs), "--quiet",
            "--no-plot", "--out", "{OUT}"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="679e496", help="git revision of 'before'")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--loop-sims", type=int, default=100,
                        help="simulations per effect of the plain loop (extrapolated)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--commands", action="store_true", help="time the commands too")
    parser.add_argument("--real", action="store_true",
                        help="time --generator real --k 3 10 (about 13 min before)")
    parser.add_argument("--memory", action="store_true",
                        help="peak RSS of one-job cells with n = 100,000 questions")
    parser.add_argument("--inproc", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inproc:
        return inproc_main(args.repeat)

    print(f"load average at start: {os.getloadavg()}; best of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"before": _extract(args.before, Path(tmp)), "after": ROOT}
        res = {}
        for label, tree in trees.items():
            run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_speed.py"),
                                  "--inproc", "--repeat", str(args.repeat)], cwd=tree,
                                 env=_env(tree), capture_output=True, text=True, check=True)
            res[label] = json.loads(run.stdout.strip().splitlines()[-1])

        print("\n1. ms per experiment (one protocol; data drawn once, derived quantities not "
              "cached)")
        print(f"{'':<58} {'before':>8} {'after':>8} {'speed-up':>8}")
        for key, after in res["after"]["per_protocol_ms"].items():
            before = res["before"]["per_protocol_ms"].get(key, float("nan"))
            print(f"{key:<58} {before:>8.3f} {after:>8.3f} {before / after:>7.1f}x")

        sys.path.insert(0, str(ROOT / "benchmarks"))
        import blog_loop

        t0 = time.perf_counter()
        blog_loop.run(args.loop_sims, [1.0, 0.0], 8, 30)
        loop_per_sim = (time.perf_counter() - t0) / (2 * args.loop_sims)
        print("\n2. blog workload in-process (2,000 sims, one process)")
        loop_s = loop_per_sim * 2000
        print(f"plain per-simulation loop: {loop_s:.1f} s (extrapolated from "
              f"{2 * args.loop_sims} sims, {loop_per_sim * 1e3:.2f} ms each)")
        for label in trees:
            b = res[label]["blog"]
            print(f"{label:<7}: {b['seconds']:.2f} s, peak RSS {b['peak_rss_mb']:.0f} MiB, "
                  f"{loop_s / b['seconds']:.1f}x the loop")

        if args.commands:
            print(f"\n3. commands, start-up included (--jobs {args.jobs}); wall s / peak RSS "
                  f"MiB of the largest process")
            blog = _calibrate("--generator", "question_mixture", "--k", "8", "--effects", "0",
                              "1", "--sims", "2000", "--protocols", *BLOG_PROTOCOLS,
                              "--protocol-param", "n_resamples=30", jobs=args.jobs)
            qm = _calibrate("--k", "8", "--generator", "question_mixture", "--effects", "0",
                            "1", jobs=args.jobs)
            loop_cmd = [sys.executable, str(ROOT / "benchmarks" / "blog_loop.py"), "--sims",
                        str(args.loop_sims)]
            loop_wall, loop_rss = _timed(loop_cmd, ROOT, 1)
            # start-up once, simulations extrapolated at the in-process rate measured above
            loop_4000 = loop_wall + (4000 - 2 * args.loop_sims) * loop_per_sim
            print(f"plain loop command at 2,000 + 2,000 sims: {loop_4000:.1f} s "
                  f"(its {args.loop_sims} + {args.loop_sims} run took {loop_wall:.1f} s; "
                  f"the rest at {loop_per_sim * 1e3:.2f} ms per simulation), "
                  f"{loop_rss:.0f} MiB")
            for name, cmd in (("blog workload 2,000 + 2,000", blog),
                              ("--k 8 --generator question_mixture --effects 0 1", qm)):
                for label, tree in trees.items():
                    wall, rss = _timed(cmd, tree, args.repeat)
                    extra = f", {loop_4000 / wall:.1f}x the loop" if name.startswith("blog") \
                        else ""
                    print(f"{name:<50} {label:<7} {wall:7.1f} s {rss:6.0f} MiB{extra}")
        if args.memory:
            print("\n5. peak RSS of a cell, --jobs 1 (MiB, whole process), n = 100,000, k = 10")
            for gen in ("question_mixture", "seed_question"):
                for sims in (50, 400):
                    cmd = _calibrate("--generator", gen, "--param", "n_questions=100000",
                                     "--k", "10", "--effects", "0", "--sims", str(sims),
                                     "--protocol-param", "n_resamples=100", jobs=1)
                    for label, tree in trees.items():
                        wall, rss = _timed(cmd, tree, 1)
                        print(f"{gen:<18} sims {sims:>4} {label:<7} {rss:6.0f} MiB "
                              f"({wall:.0f} s)")
        if args.real:
            real = _calibrate("--generator", "real", "--k", "3", "10", jobs=args.jobs)
            for label, tree in trees.items():
                wall, rss = _timed(real, tree, 1)
                print(f"{'--generator real --k 3 10':<50} {label:<7} {wall:7.1f} s "
                      f"{rss:6.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
