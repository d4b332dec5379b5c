"""Paired-seed sweeps: train the missing baseline and variant runs and store them.

The importable entry point is :func:`train_sweep`; ``python -m real_runs.train`` is its CLI.
A sweep checks every existing record before training anything, so a record trained under
another config or on other data is reported rather than silently mixed in or overwritten.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from evalcal_core.outdir import locked_out
from evalcal_core.validate import InvalidParameterError
from real_runs.config import PROFILES, RunConfig, config_hash, profile_config
from real_runs.scenarios import check_scenario, variant_config
from real_runs.seeding import check_seed
from real_runs.store import RunRecord, read_expected, record_path, write_record


@dataclass(frozen=True)
class RunKey:
    """Identity of one run in the store (``scenario`` is None for a baseline)."""

    dataset: str
    profile: str
    arm: str
    scenario: str | None
    seed: int

    def __str__(self) -> str:
        arm = "baseline" if self.arm == "baseline" else f"{self.scenario} variant"
        return f"{self.dataset}/{self.profile} {arm} seed {self.seed}"


@dataclass(frozen=True)
class PlannedRun:
    """A run to train: its key, config, the hash of its baseline config and record path."""

    key: RunKey
    config: RunConfig
    base_config_hash: str
    path: Path


@dataclass(frozen=True)
class PairSummary:
    """Final test accuracies (fractions) of one seed's pair in one scenario."""

    seed: int
    scenario: str
    baseline: float
    variant: float

    @property
    def delta(self) -> float:
        """Variant minus baseline accuracy (fraction)."""
        return self.variant - self.baseline


@dataclass(frozen=True)
class SweepResult:
    """What a sweep did: runs trained, runs found already stored, per-seed summaries."""

    trained: tuple[RunKey, ...]
    skipped: tuple[RunKey, ...]
    pairs: tuple[PairSummary, ...]


#: most seeds one sweep may name, and the largest seed (``seed-%05d.npz`` names, 32-bit
#: seed words): a typo such as 0-99999999999 is refused before anything is allocated
MAX_SEEDS = 10_000
MAX_SEED = 2**32 - 1


def parse_seeds(text: str, option: str = "--seeds") -> list[int]:
    """``"0-19"``, ``"3"`` or ``"0-4,10,12-13"`` -> sorted unique seeds."""
    seeds: set[int] = set()
    for part in str(text).split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not match:
            raise InvalidParameterError(f"seeds must look like '0-19' or '0,3,5-7', got {text!r}")
        lo = int(match.group(1))
        hi = int(match.group(2)) if match.group(2) is not None else lo
        if hi < lo:
            raise InvalidParameterError(f"seeds range {part.strip()!r} is empty (end < start)")
        if hi > MAX_SEED:
            raise InvalidParameterError(f"{option} {part.strip()!r}: seeds must be <= {MAX_SEED}")
        if hi - lo + 1 + len(seeds) > MAX_SEEDS:
            raise InvalidParameterError(f"{option} {text!r} names {hi - lo + 1 + len(seeds)} or "
                                        f"more seeds; the limit is {MAX_SEEDS} per sweep")
        seeds.update(range(lo, hi + 1))
    return sorted(seeds)


def parse_scenarios(text: str) -> list[str]:
    """``"S1"``, ``"S0,S1"`` or ``"all"`` -> list of scenario names."""
    from real_runs.scenarios import SCENARIOS

    if text.strip() == "all":
        return list(SCENARIOS)
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise InvalidParameterError(f"scenario must be one of {SCENARIOS}, a comma list or 'all', "
                                    f"got {text!r}")
    return [check_scenario(s) for s in names]


def default_threads(jobs: int) -> int:
    """Intra-op threads per process so that ``jobs`` processes do not oversubscribe cores."""
    return max(1, (os.cpu_count() or 1) // jobs)


def _check_existing(run: PlannedRun, fingerprint: str) -> bool:
    """True if the run's record exists and matches; raises if it exists but does not."""
    if not run.path.exists():
        return False
    key = run.key
    record = read_expected(run.path, dataset=key.dataset, profile=key.profile, arm=key.arm,
                           scenario=key.scenario, seed=key.seed)
    if record.config_hash != config_hash(run.config) or record.data_fingerprint != fingerprint:
        what = "config" if record.config_hash != config_hash(run.config) else "data"
        raise InvalidParameterError(f"existing record {run.path} was trained with a different "
                                    f"{what} than this sweep's; use another --out (or delete the "
                                    "record)")
    return True


def plan_sweep(dataset: str, scenarios, seeds, profile: str, out, label_set=None
               ) -> list[PlannedRun]:
    """Every run of the sweep (baselines first within each seed), stored or not."""
    if profile not in PROFILES:
        raise InvalidParameterError(f"profile must be one of {PROFILES}, got {profile!r}")
    base = profile_config(dataset, profile, label_set)
    base_hash = config_hash(base)
    runs = []
    for seed in seeds:
        seed = check_seed(seed)
        key = RunKey(dataset, profile, "baseline", None, seed)
        runs.append(PlannedRun(key, base, base_hash,
                               record_path(out, dataset, profile, "baseline", None, seed)))
        for scenario in scenarios:
            key = RunKey(dataset, profile, "variant", check_scenario(scenario), seed)
            runs.append(PlannedRun(key, variant_config(base, scenario), base_hash,
                                   record_path(out, dataset, profile, "variant", scenario,
                                               seed)))
    return runs


def run_and_store(run: PlannedRun, data, fingerprint: str, device: str,
                  deadline: float | None = None) -> RunKey:
    """Train one planned run and write its record (atomically).

    ``deadline`` (a ``time.monotonic()`` value) is passed to
    :func:`~real_runs.engine.train_run`: a run past it is abandoned, nothing is written.
    """
    from real_runs import engine
    from real_runs.runtime import environment

    kw = {} if deadline is None else {"deadline": deadline}
    result = engine.train_run(run.config, run.key.seed, data, device=device, **kw)
    record = RunRecord(
        dataset=run.key.dataset, profile=run.key.profile, scenario=run.key.scenario,
        arm=run.key.arm, seed=run.key.seed, correct=result.correct,
        predictions=result.predictions, epoch_accuracy=result.epoch_accuracy,
        config=run.config.to_dict(), config_hash=config_hash(run.config),
        base_config_hash=run.base_config_hash, data_fingerprint=fingerprint,
        environment=environment(device), wall_time_s=result.wall_time_s,
        train_time_s=result.train_time_s, train_examples=result.train_examples,
        created_utc=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    write_record(run.path, record)
    return run.key


# Worker-process state for --jobs > 1: each process loads the data once.
_WORKER: dict = {}


def _worker_init(config, data_root, cache_dir, threads, fingerprint) -> None:
    import torch

    from real_runs.data import load_for_config

    torch.set_num_threads(threads)  # also bounds the threads used while loading
    data = load_for_config(config, data_root, cache_dir=cache_dir)
    if data.fingerprint() != fingerprint:
        raise InvalidParameterError(f"data under {data_root} changed during the sweep")
    _WORKER.update(data=data, fingerprint=fingerprint, threads=threads)


def _worker_train(run: PlannedRun, device: str) -> RunKey:
    from real_runs.runtime import deterministic

    with deterministic(_WORKER["threads"]):
        return run_and_store(run, _WORKER["data"], _WORKER["fingerprint"], device)


def train_sweep(dataset: str, scenarios, seeds, profile: str = "cpu", data_root=None,
                out=None, jobs: int = 1, device: str = "auto", cache_dir=None,
                label_set: str | None = None, download: bool = False,
                progress: bool = False) -> SweepResult:
    """Train every missing run of a paired-seed sweep and summarise all its pairs.

    Parameters
    ----------
    dataset : str
        ``"cifar10"``, ``"cifar10n"`` or ``"ag_news"``.
    scenarios : str or sequence of str
        Scenario names (``"S0"``, ``"S0p"``, ``"S1"``, ``"S2"``). One baseline per seed
        serves all of them.
    seeds : iterable of int
    profile : str, default "cpu"
        ``"cpu"``, ``"paper"`` or ``"smoke"``.
    data_root : path-like
        See :mod:`real_runs.data`.
    out : path-like
        Store root; records go to ``<out>/<dataset>/<profile>/...``.
    jobs : int, default 1
        Seeds trained in parallel processes. Each process uses the profile's pinned thread
        count (1 for ``cpu``), or ``cores // jobs`` threads when the profile pins none, so
        on a 2-core machine ``jobs=2`` uses both cores with the ``cpu`` profile.
    device : str, default "auto"
        ``"auto"`` (CUDA when present), ``"cpu"`` or ``"cuda"``.
    cache_dir : path-like, optional
        Decoded-image cache; default ``<out>/.cache``.
    label_set : str, optional
        CIFAR-10N label set (default ``"aggre"``).
    download : bool, default False
        Let torchvision download CIFAR-10 if it is missing (needs internet).
    progress : bool, default False
        Show a progress bar on stderr.

    Returns
    -------
    SweepResult
    """
    from real_runs.runtime import resolve_device

    if data_root is None or out is None:
        raise InvalidParameterError(f"data_root and out are required, got data_root={data_root!r}, "
                                    f"out={out!r}")
    scenarios = [scenarios] if isinstance(scenarios, str) else list(scenarios)
    if not scenarios:
        raise InvalidParameterError("scenarios must name at least one scenario, got none")
    seeds = sorted({check_seed(s) for s in seeds})
    if not seeds:
        raise InvalidParameterError("seeds must contain at least one seed, got none")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InvalidParameterError(f"jobs must be a positive integer, got {jobs!r}")
    device = resolve_device(device)
    out = Path(out)
    cache_dir = out / ".cache" if cache_dir is None else Path(cache_dir)
    # Checked before the first run, held until the last: two sweeps never share a store.
    with locked_out(out):
        return _sweep(dataset, scenarios, seeds, profile, data_root, out, jobs, device,
                      cache_dir, label_set, download, progress)


def _sweep(dataset, scenarios, seeds, profile, data_root, out, jobs, device, cache_dir,
           label_set, download, progress) -> SweepResult:
    from real_runs.data import load_for_config
    from real_runs.runtime import deterministic

    runs = plan_sweep(dataset, scenarios, seeds, profile, out, label_set)
    threads = runs[0].config.threads or default_threads(jobs)
    data = load_for_config(runs[0].config, data_root, cache_dir=cache_dir, download=download)
    fingerprint = data.fingerprint()
    todo = [r for r in runs if not _check_existing(r, fingerprint)]
    skipped = tuple(r.key for r in runs if r not in todo)

    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc=f"{dataset} {profile}", unit="run")
    trained: list[RunKey] = []
    try:
        if jobs == 1 or len(todo) <= 1:
            with deterministic(threads):
                for run in todo:
                    if bar is not None:
                        bar.set_postfix_str(str(run.key))
                    trained.append(run_and_store(run, data, fingerprint, device))
                    if bar is not None:
                        bar.update(1)
        else:
            # spawn, not fork: forking a process that already runs torch threads can hang.
            # Runs are independent (a variant never reads its baseline), so each is a task.
            ctx = multiprocessing.get_context("spawn")
            with cf.ProcessPoolExecutor(
                    max_workers=min(jobs, len(todo)), mp_context=ctx,
                    initializer=_worker_init,
                    initargs=(runs[0].config, data_root, cache_dir, threads, fingerprint),
            ) as pool:
                futures = {pool.submit(_worker_train, run, device): run for run in todo}
                try:
                    for fut in cf.as_completed(futures):
                        trained.append(fut.result())
                        if bar is not None:
                            bar.set_postfix_str(str(futures[fut].key))
                            bar.update(1)
                except BaseException:
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
    finally:
        if bar is not None:
            bar.close()
    return SweepResult(trained=tuple(trained), skipped=skipped,
                       pairs=tuple(summarise(runs, fingerprint)))


def summarise(runs: list[PlannedRun], fingerprint: str) -> list[PairSummary]:
    """Baseline and variant final accuracy of every (seed, scenario) pair of ``runs``."""
    base_acc, pairs = {}, []
    for run in runs:
        key = run.key
        rec = read_expected(run.path, dataset=key.dataset, profile=key.profile, arm=key.arm,
                            scenario=key.scenario, seed=key.seed)
        if key.arm == "baseline":
            base_acc[key.seed] = rec.final_accuracy
        else:
            pairs.append(PairSummary(key.seed, key.scenario, base_acc[key.seed],
                                     rec.final_accuracy))
    return pairs
