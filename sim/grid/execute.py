"""Compute a set of cells: duplicates once, finished ones from the cache, the rest in parallel."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from joblib import delayed
from tqdm import tqdm

from evalcal_core.options import ALL_CORES, Execution, workers

from .cache import CellCache, CellSpec
from .cells import chunk_size
from .parallel import backend_context
from .task import run_task


@dataclass(frozen=True)
class CellRequest:
    """One protocol (name and encoded parameters) on one (generator, k, effect) cell."""

    generator: object
    protocol: str
    protocol_params: str
    k: int
    effect_pp: float


#: estimated work (drawn scores x protocols) below which loky runs at most ``jobs`` cells in
#: this process: about 1 s on this project's machine, less than two workers take to start
IN_PROCESS_WORK = 1e9
#: whether this process has started loky workers (they stay up between calls)
_loky_started = False


def _work(tasks, sims) -> float:
    """Drawn scores times protocols evaluated on them, summed over the tasks."""
    return float(sum(sims * k * g.n * len(specs) for g, k, _, specs in tasks))


def execute(requests, run: Execution, desc: str = "calibrating"):
    """``CellResult`` of every request (duplicates once), in parallel, through the cache.

    ``run`` says how: simulations per cell, level and root seed (the numbers), and workers,
    backend, cache folder and progress bar (not the numbers).
    """
    sims, alpha, seed, jobs = run.sims, run.alpha, run.seed, run.jobs
    backend, scheduler, out, progress = run.backend, run.scheduler, run.out, run.progress
    cache = CellCache(out) if out is not None else None
    groups, results, seen = {}, [], set()
    for req in requests:
        g = req.generator
        spec = CellSpec(generator=g.name, generator_params=g.describe(),
                        protocol=req.protocol, protocol_params=req.protocol_params,
                        k=int(req.k), effect_pp=float(req.effect_pp), sims=int(sims),
                        alpha=float(alpha), seed=int(seed), chunk=chunk_size(g, req.k),
                        data_digest=g.data_digest())
        if spec in seen:
            continue
        seen.add(spec)
        cached = cache.get(spec) if cache else None
        if cached is not None and g.from_pool and not cached.seed_counts:
            cached = None  # a real-pool row cached before its seed tallies were kept
        if cached is not None:
            results.append(cached)
        else:
            key = (g.describe(), int(req.k), float(req.effect_pp))
            groups.setdefault(key, (g, int(req.k), float(req.effect_pp), []))[3].append(spec)
    tasks = list(groups.values())
    global _loky_started
    requested = jobs
    if backend == "loky" and jobs != 1:
        if (not _loky_started and len(tasks) <= jobs
                and _work(tasks, sims) <= IN_PROCESS_WORK):
            # A few light cells: starting worker processes (each imports numpy, scipy,
            # pandas) would take longer than the cells. Results do not depend on jobs.
            jobs = 1
        else:
            # No more workers than cells or cores: an idle worker only costs its start and
            # its memory.
            jobs = workers(jobs, len(tasks))
            # loky keeps its workers between calls: later rounds (the seed-budget search)
            # reuse them at no start-up cost.
            _loky_started = _loky_started or jobs > 1
    elif backend == "dask":
        # a local cluster starts --jobs worker processes (a given scheduler ignores jobs)
        jobs = workers(jobs, len(tasks))
    # A cell run in this process may use every core it was given; one in a worker, one.
    in_process = backend == "loky" and jobs == 1
    threads = min(requested, ALL_CORES) if in_process else 1
    names = sorted({g.name for g, *_ in tasks})
    bar = tqdm(total=len(tasks), desc=f"{desc} {', '.join(names)}", unit="cell",
               file=sys.stderr, disable=not progress or not tasks)
    with bar, backend_context(backend, jobs, scheduler) as parallel:
        work = parallel()(delayed(run_task)(g, k, effect, specs, seed, threads)
                          for g, k, effect, specs in tasks)
        for rows in work:
            for row in rows:
                if cache:
                    cache.put(row)
                results.append(row)
            bar.update()
    return results
