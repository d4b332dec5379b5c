"""``python -m real_runs.gpu_batch``: train a batch of runs on a lent GPU within a time budget.

The GPU machine gets the checkout plus a data pack (``python -m real_runs.pack_data``), runs
one command of at most 10 minutes and returns at most 8 files of 16 MiB from ``$OUT``::

    python -m real_runs.gpu_batch --pack data_pack --out $OUT --budget-s 540 --workers 4 \\
        --dataset cifar10 --scenarios S0p S1 S2 --seeds 0-49

It plans every (dataset, scenario, seed) run (baselines shared as in a sweep), skips those
already in ``--pool`` (the committed pool, verified), then keeps ``--workers`` processes
training one run each on the one GPU. A run is started only if its expected wall time (the
longest measured so far for runs of its kind, x1.1) fits before ``budget - reserve``; a run
that still overruns is abandoned at the next epoch end past the budget, never stored half
done. After every finished run the new records are re-bundled into ``$OUT/records-NNN.tar``
(at most 6 shards of ``--shard-mib``) and ``$OUT/gpu_batch.json`` (plan, timings,
accuracies, environment) is rewritten, so whatever the command leaves behind when it is cut
off is usable. ``python -m real_runs.merge_records $OUT/records-*.tar`` merges them here.

Runbook for a session with a lent GPU (commands run from the repository root; the
pack is ignored by git, so it must be named in the run tool's ``carry``)::

    # here, once: ~18.4 MiB, ignored by git; the checkout itself is ~3.5 MB
    python -m real_runs.pack_data --data-root ../shared/data --out data_pack/
    # on the GPU, one call (carry: ["data_pack"], timeout 600): verify, check (stops if
    # determinism fails), then as many runs as fit in what is left of 540 s
    python -m real_runs.device_run --pack data_pack --out $OUT --deadline-s 540 \\
        --plan real_runs/plans/paper_cifar10.json --workers 4 --cache-dir /tmp/evalcal-cache
    # here: verify and merge; the next batch skips what the pool holds
    python -m real_runs.merge_records FILES_AT/records-*.tar FILES_AT/gpu_batch.json \\
        --pool real_runs/pool --data-root DATA_ROOT

Time floor and expectation (written before any GPU measurement)
---------------------------------------------------------------
The ``paper`` CIFAR profile is airbench94 (Jordan 2024). Counted from the model
(:func:`real_runs.cost.run_cost`): 0.236 GFLOP per 32x32 image forward; 10 epochs of
48 steps of 1,024 images at 3 forwards each = 3.48e14 FLOP of training, plus 9 plain
evaluations of the 10,000 test images and a final one with test-time augmentation
(6 forwards) = 0.35e14: 3.84e14 FLOP per run.

airbench94 itself (9.9 epochs, float16 weights, cuDNN autotuning) takes 3.83 s on an A100:
94 TFLOP/s, 30 % of that card's 312 TFLOP/s bf16 peak. An H100 or H200 peaks at about
990 TFLOP/s. Our runs keep float32 weights under bf16 autocast, use deterministic
algorithms (no autotuning) and evaluate after every epoch, so we expect 12-25 % of peak in
aggregate with 4 runs in flight: 1.6-3.2 s of GPU time per run. The checks take about a
minute of a 540 s call, leaving ~480 s: 150-300 runs, i.e. 37-75 paired seeds of S0p, S1
and S2 (a baseline and three variants each). ``real_runs/plans/paper_cifar10.json`` asks for
seeds 0-99, seed by seed, so the batch trains as many as fit and the next call resumes.

Accuracy basis: airbench94 reaches 94.0 % mean on the lossless CIFAR-10 test set. Ours
departs from it in three ways (see :mod:`real_runs.config`): no label smoothing in the
baseline (airbench: 0.2), 10 whole epochs instead of 9.9, float32 weights; and our images
are JPEG re-encoded (quality ~75). We expect 93-94 %; the first batch measures it
(``gpu_batch.json``: accuracy per run).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import dataclasses
import json
import multiprocessing
import os
import tarfile
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from evalcal_core.atomic import atomic_path, write_atomic
from evalcal_core.cli import ArgumentParser, call_main
from evalcal_core.options import (
    add_options,
    check_options,
    config_from_args,
    option,
    out_option,
    pool_option,
)
from evalcal_core.outdir import locked_out
from evalcal_core.validate import Each, Interval, InvalidParameterError, Optional, Options, fail
from real_runs.config import DATASETS, PROFILES
from real_runs.scenarios import SCENARIOS
from real_runs.store import DEFAULT_POOL, record_path
from real_runs.sweep import PlannedRun, _check_existing, parse_seeds, plan_sweep

REPO = Path(__file__).resolve().parents[1]
#: how the command is run
PROG = "python -m real_runs.gpu_batch"
_DEVICES = ("auto", "cpu", "cuda")
SUMMARY = "gpu_batch.json"
MAX_SHARDS = 6  # + gpu_batch.json + a possible leftover temporary file = 8 files
ESTIMATE_MARGIN = 1.1


@dataclass(frozen=True)
class PlanEntry:
    """One line of a plan: a dataset, its variant scenarios and seeds (profile per entry)."""

    dataset: str
    scenarios: tuple[str, ...]
    seeds: tuple[int, ...]
    profile: str = "paper"
    label_set: str | None = None


def _plan_entry_iv(entry: dict) -> PlanEntry:
    if not isinstance(entry, dict) or "dataset" not in entry:
        raise InvalidParameterError("each plan entry must be an object with 'dataset', "
                                    f"'scenarios' and 'seeds', got {entry!r}")
    dataset = entry["dataset"]
    if dataset not in DATASETS:
        raise InvalidParameterError(f"plan dataset must be one of {DATASETS}, got {dataset!r}")
    scenarios = entry.get("scenarios", [])
    scenarios = [scenarios] if isinstance(scenarios, str) else list(scenarios)
    bad = [s for s in scenarios if s not in SCENARIOS]
    if not scenarios or bad:
        raise InvalidParameterError(f"plan scenarios must be a non-empty list of {SCENARIOS}, got "
                                    f"{entry.get('scenarios')!r}")
    seeds = entry.get("seeds")
    seeds = parse_seeds(seeds) if isinstance(seeds, str) else sorted(set(seeds or ()))
    if not seeds:
        raise InvalidParameterError(f"plan seeds must be like '0-49' or a list of integers, got "
                                    f"{entry.get('seeds')!r}")
    profile = entry.get("profile", "paper")
    if profile not in PROFILES:
        raise InvalidParameterError(f"plan profile must be one of {PROFILES}, got {profile!r}")
    return PlanEntry(dataset, tuple(scenarios), tuple(seeds), profile,
                     entry.get("label_set"))


#: largest --plan file read, in bytes (a plan is a few entries)
PLAN_CAP = 16 * 2**20


def read_plan(path) -> list[PlanEntry]:
    """A JSON plan: a list of ``{"dataset", "scenarios", "seeds", ["profile"]}`` objects."""
    from evalcal_core.readers import check_regular, read_json_file

    size = check_regular(Path(path)).st_size
    if size > PLAN_CAP:
        raise InvalidParameterError(f"--plan {path}: holds {size:,} bytes, past the cap of "
                                    f"{PLAN_CAP:,} bytes on a plan (a JSON list of entries)")
    # The readers' checked read: a FIFO or a device refused before opening (it would wait or
    # never end), the size capped, binary bytes and deep nesting one line, not a traceback.
    raw = read_json_file(Path(path), "a JSON plan (a list of entries)", cap=PLAN_CAP)
    if not isinstance(raw, list) or not raw:
        raise InvalidParameterError(f"plan {path} must be a non-empty JSON list of entries, got "
                                    f"{type(raw).__name__}")
    return [_plan_entry_iv(e) for e in raw]


def _kind(run: PlannedRun) -> tuple:
    """Runs of one kind cost about the same: dataset, profile, strong augmentation or not."""
    c = run.config
    return (c.dataset, c.profile, c.strong_augment != "none" or c.word_dropout > 0)


class RunTimeEstimator:
    """Expected seconds of a run, from the runs measured so far in this batch.

    A kind already measured: its longest run so far x :data:`ESTIMATE_MARGIN`; another
    kind: 1.5 x the longest run of any kind; nothing measured yet: 0 (the first
    ``workers`` runs start at once, while the whole budget is ahead).
    """

    def __init__(self):
        self.longest: dict[tuple, float] = {}

    def record(self, run: PlannedRun, seconds: float) -> None:
        kind = _kind(run)
        self.longest[kind] = max(self.longest.get(kind, 0.0), float(seconds))

    def expected(self, run: PlannedRun) -> float:
        if _kind(run) in self.longest:
            return self.longest[_kind(run)] * ESTIMATE_MARGIN
        return max(self.longest.values(), default=0.0) * 1.5

    def fits(self, run: PlannedRun, now: float, stop_at: float) -> bool:
        """Whether ``run``, started at ``now``, is expected to end by ``stop_at``."""
        return now + self.expected(run) <= stop_at


# ---------------------------------------------------------------- worker processes

_WORKER: dict = {}


def _worker_init(pack: str, cache_dir: str, threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    _WORKER.update(pack=pack, cache_dir=cache_dir, threads=threads, data={})


def _data_key(config) -> tuple:
    return (config.dataset, config.label_set, config.vocab_size, config.max_len)


def _load(config, pack, cache_dir):
    from real_runs.data import load_for_config

    key = _data_key(config)
    if key not in _WORKER.setdefault("data", {}):
        data = load_for_config(config, pack, cache_dir=cache_dir)
        _WORKER["data"][key] = (data, data.fingerprint())
    return _WORKER["data"][key]


def _worker_train(run: PlannedRun, device: str, fingerprint: str, deadline_unix: float
                  ) -> dict:
    """Train one run in a worker and store it; returns what the parent reports."""
    from real_runs.runtime import deterministic
    from real_runs.store import read_record
    from real_runs.sweep import run_and_store

    t0 = time.perf_counter()
    data, found = _load(run.config, _WORKER["pack"], _WORKER["cache_dir"])
    if found != fingerprint:
        raise InvalidParameterError(f"worker loaded other data than the parent ({found[:12]} vs "
                                    f"{fingerprint[:12]})")
    # monotonic clocks are not comparable across processes everywhere: the parent passes
    # wall-clock time, converted here once.
    deadline = time.monotonic() + (deadline_unix - time.time())
    with deterministic(_WORKER["threads"]):
        run_and_store(run, data, fingerprint, device, deadline=deadline)
    rec = read_record(run.path)
    return {"run": str(run.key), "path": run.path.as_posix(),
            "seconds": round(time.perf_counter() - t0, 2),
            "wall_time_s": round(rec.wall_time_s, 2), "train_time_s": round(rec.train_time_s, 2),
            "final_accuracy": rec.final_accuracy,
            "epoch_accuracy": [round(float(a), 4) for a in rec.epoch_accuracy],
            "pid": os.getpid(), "environment": rec.environment}


# ---------------------------------------------------------------- bundles for $OUT

def bundle_records(store: Path, out: Path, shard_bytes: int, max_shards: int = MAX_SHARDS
                   ) -> list[Path]:
    """Write every record under ``store`` into ``out/records-NNN.tar`` shards, atomically.

    Records are ordered by completion time, so earlier shards only change when a later
    record is finished; member names are store-relative paths (``cifar10/paper/S1/...``).
    """
    paths = sorted(store.glob("*/*/*/seed-*.npz"), key=lambda p: (p.stat().st_mtime_ns, p))
    shards: list[list[Path]] = [[]]
    size = 0
    for p in paths:
        need = p.stat().st_size + 1536  # header + padding
        if shards[-1] and size + need > shard_bytes - 10240:
            shards.append([])
            size = 0
        shards[-1].append(p)
        size += need
    if len(shards) > max_shards:
        raise InvalidParameterError(f"records need {len(shards)} shards of {shard_bytes} bytes; "
                                    f"at most {max_shards} fit the 8 files that come back")
    written = []
    for i, group in enumerate(shards):
        if not group:
            continue
        target = out / f"records-{i:03d}.tar"
        with (atomic_path(target) as tmp, open(tmp, "wb") as fh,
              tarfile.open(fileobj=fh, mode="w") as tar):
            for p in group:
                tar.add(p, arcname=p.relative_to(store).as_posix(), recursive=False)
        written.append(target)
    return written


def _write_json(path: Path, obj) -> None:
    write_atomic(path, json.dumps(obj, indent=1, sort_keys=True) + "\n")


# ---------------------------------------------------------------- the batch

@dataclass(frozen=True)
class BatchResult:
    """What :func:`run_batch` did (also written to ``gpu_batch.json``)."""

    finished: tuple[dict, ...]
    skipped_in_pool: int
    not_started: int
    abandoned: tuple[str, ...]
    error: str | None
    summary_path: Path


def plan_runs(entries: list[PlanEntry], pack, pool, cache_dir) -> tuple[list, dict, int]:
    """Runs to train (pool records verified and skipped), the data fingerprints, skip count.

    Runs are ordered seed by seed within each entry, baseline first, so pairs complete
    early. Raises ValueError if the pool holds a record of another config or data.
    """
    from real_runs.data import load_for_config

    todo, fingerprints, skipped = [], {}, 0
    for entry in entries:
        runs = plan_sweep(entry.dataset, list(entry.scenarios), entry.seeds, entry.profile,
                          pool if pool is not None else Path("."), entry.label_set)
        key = _data_key(runs[0].config)
        if key not in fingerprints:
            fingerprints[key] = load_for_config(runs[0].config, pack,
                                                cache_dir=cache_dir).fingerprint()
        for run in runs:
            if pool is not None and _check_existing(run, fingerprints[key]):
                skipped += 1
            elif run not in todo:
                todo.append(run)
    return todo, fingerprints, skipped


def run_batch(entries: list[PlanEntry], *, pack, out, budget_s: float, workers: int,
              pool=None, device: str = "auto", cache_dir=None, work_dir=None,
              reserve_s: float = 15.0, shard_mib: float = 15.0, log=print) -> BatchResult:
    """Train the planned runs with ``workers`` processes within ``budget_s`` seconds.

    Parameters
    ----------
    entries : list of PlanEntry
    pack : path-like
        A data pack folder (or any data root :func:`real_runs.data.load_dataset` reads).
    out : path-like
        Where the bundles and ``gpu_batch.json`` go (``$OUT``).
    budget_s : float
        Seconds from the call until everything must be written; no run is started whose
        expected duration does not fit before ``budget_s - reserve_s``.
    workers : int
        Training processes side by side on the one device.
    pool : path-like, optional
        A run store whose (verified) records are skipped.
    device : str
        ``"auto"``, ``"cuda"`` or ``"cpu"``.
    cache_dir, work_dir : path-like, optional
        Decoded-image cache and the staging store (default: temporary folders).
    """
    from real_runs.runtime import resolve_device

    start_unix = time.time()
    start = time.monotonic()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidParameterError(f"workers must be a positive integer, got {workers!r}")
    if budget_s <= reserve_s:
        raise InvalidParameterError(f"budget_s must exceed reserve_s ({reserve_s}), got "
                                    f"{budget_s!r}")
    # Before any CUDA context exists in this process or the (spawned) workers.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    # --out is checked and locked before anything is planned or trained. The lock is the
    # folder's own descriptor, not a .lock file: $OUT returns at most 8 files (MAX_SHARDS).
    # Every bundle is written atomically and gpu_batch.json says final: false until the
    # end, so a batch cut off by the command's time limit leaves whole, usable bundles.
    with locked_out(out, "--out", lock_file=False) as out:
        device = resolve_device(device)
        cache_dir = Path(cache_dir or tempfile.mkdtemp(prefix="evalcal-cache-"))
        work = Path(work_dir or tempfile.mkdtemp(prefix="evalcal-batch-"))
        store = work / "store"
        todo, fingerprints, skipped = plan_runs(entries, pack, pool, cache_dir)
        todo = [replace(r, path=record_path(store, r.key.dataset, r.key.profile, r.key.arm,
                                            r.key.scenario, r.key.seed)) for r in todo]
        already = [r for r in todo if r.path.exists()]  # a warm machine's earlier batch
        todo = [r for r in todo if not r.path.exists()]
        threads = max(1, (os.cpu_count() or 1) // workers)
        stop_at = start + budget_s - reserve_s
        deadline_unix = start_unix + budget_s - reserve_s
        summary_path = out / SUMMARY
        import torch

        info = {"device": device, "workers": workers, "threads_per_worker": threads,
                "budget_s": budget_s, "reserve_s": reserve_s, "torch": torch.__version__,
                "pack": str(pack), "pool": None if pool is None else str(pool),
                "planned": len(todo) + len(already), "skipped_in_pool": skipped,
                "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start_unix))}
        finished: list[dict] = []
        abandoned: list[str] = []
        error = None
        estimator = RunTimeEstimator()
        shard_bytes = int(shard_mib * 2**20)

        def report(final: bool) -> None:
            elapsed = time.monotonic() - start
            done = len(finished)
            info.update(finished=finished, abandoned=abandoned, error=error,
                        not_started=len(todo) if final else None, elapsed_s=round(elapsed, 1),
                        runs_per_30_min=round(done * 1800 / elapsed, 1) if done else 0.0,
                        gpu_seconds_per_run=round(elapsed / done, 1) if done else None,
                        final=final, code_version=_code_version(),
                        code_sha256=_code_sha256())
            bundle_records(store, out, shard_bytes)
            _write_json(summary_path, info)

        log(f"gpu_batch: {len(todo)} run(s) to train on {device} with {workers} worker(s), "
            f"{skipped} already in the pool, budget {budget_s:.0f} s")
        ctx = multiprocessing.get_context("spawn")
        pending: dict = {}
        try:
            with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                                        initializer=_worker_init,
                                        initargs=(str(pack), str(cache_dir), threads)) as ex:
                try:
                    while (todo and error is None) or pending:
                        while todo and error is None and len(pending) < workers:
                            run = todo[0]
                            if not estimator.fits(run, time.monotonic(), stop_at):
                                break
                            todo.pop(0)
                            fut = ex.submit(_worker_train, run, device,
                                            fingerprints[_data_key(run.config)], deadline_unix)
                            pending[fut] = run
                        if not pending:
                            break
                        done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                        for fut in done:
                            run = pending.pop(fut)
                            try:
                                res = fut.result()
                            except TimeoutError as exc:  # RunDeadlineError
                                abandoned.append(f"{run.key}: {exc}")
                                log(f"abandoned {run.key}: {exc}")
                                continue
                            except Exception as exc:  # stop: a bug would repeat on every run
                                error = f"{run.key}: {type(exc).__name__}: {exc}"
                                log(f"error {error}")
                                continue
                            res["path"] = Path(res["path"]).relative_to(store).as_posix()
                            info.setdefault("environment", res.pop("environment"))
                            res.pop("environment", None)
                            finished.append(res)
                            # the run's own wall time (+2 s to store it): the first run of a
                            # worker also paid for loading the data, which later runs do not
                            estimator.record(run, res["wall_time_s"] + 2.0)
                            log(f"done {res['run']}: acc {res['final_accuracy']:.4f}, "
                                f"{res['seconds']:.1f} s, {time.monotonic() - start:.0f} s elapsed")
                            report(final=False)
                except BaseException:
                    ex.shutdown(wait=False, cancel_futures=True)
                    raise
        finally:
            report(final=True)
        log(f"gpu_batch: {len(finished)} finished, {len(todo)} not started (budget), "
            f"{len(abandoned)} abandoned{', ERROR ' + error if error else ''}; "
            f"{info['runs_per_30_min']} runs per 30 min")
        return BatchResult(tuple(finished), skipped, len(todo), tuple(abandoned), error,
                           summary_path)


def _code_version() -> str:
    from real_runs.manifest import code_version

    return code_version(REPO)


def _code_sha256() -> str:
    from real_runs.manifest import code_sha256

    return code_sha256(REPO)


def device_option() -> dataclasses.Field:
    """``--device``: auto (CUDA when present), cpu or cuda (also ``device_run``'s)."""
    return option("--device", "auto", choices=_DEVICES, constraint=Options(_DEVICES),
                  help="auto (CUDA when present), cpu or cuda")


def reserve_option() -> dataclasses.Field:
    """``--reserve-s``: seconds kept free at the end (also ``device_run``'s)."""
    return option("--reserve-s", 15.0, kind=float, constraint=Interval("real", 0, 3600),
                  help="seconds kept free at the end for bundling and exit (15)")


def skip_pool_option() -> dataclasses.Field:
    """``--pool``: the run store whose records are skipped (also ``device_run``'s)."""
    return pool_option(help="run store whose records are skipped, or 'none' to skip nothing "
                            "(default: the committed pool)")


@dataclass(frozen=True)
class BatchOptions:
    """What ``python -m real_runs.gpu_batch`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`), every rule checked when built."""

    pack: str = option("--pack", help="data pack folder (python -m real_runs.pack_data) or a "
                                      "data root")
    out: Path = out_option(dataclasses.MISSING,
                           help=f"output folder ($OUT): records-NNN.tar, {SUMMARY}")
    budget_s: float = option("--budget-s", kind=float,
                             constraint=Interval("real", 0, 86_400, low_open=True),
                             help="seconds until everything must be written (e.g. 540 of 600)")
    workers: int = option("--workers", 4, kind=int, constraint=Interval("int", 1, 256),
                          help="runs side by side (4)")
    plan: str | None = option("--plan", None,
                              help="JSON list of {dataset, scenarios, seeds[, profile]}")
    dataset: str | None = option("--dataset", None, choices=DATASETS,
                                 constraint=Optional(Options(DATASETS)),
                                 help="dataset of a one-entry plan (without --plan)")
    scenarios: tuple[str, ...] | None = option(
        "--scenarios", None, nargs="+", choices=SCENARIOS,
        constraint=Optional(Each(Options(SCENARIOS))),
        help="variant scenarios of a one-entry plan (baselines shared)")
    seeds: str | None = option("--seeds", None, help="seeds of a one-entry plan, e.g. 0-49")
    profile: str = option("--profile", "paper", choices=PROFILES, constraint=Options(PROFILES),
                          help="training profile of a one-entry plan (paper)")
    pool: str | None = skip_pool_option()
    device: str = device_option()
    cache_dir: str | None = option("--cache-dir", None, in_argv=False,
                                   help="decoded-image cache (temporary)")
    work_dir: str | None = option("--work-dir", None, in_argv=False,
                                  help="staging store (temporary)")
    reserve_s: float = reserve_option()
    # a device returns files of at most 16 MiB: a larger bundle would not come back
    shard_mib: float = option("--shard-mib", 15.0, kind=float,
                              constraint=Interval("real", 0.1, 16),
                              help="size of one bundle (15)")

    def __post_init__(self):
        check_options(self)
        # a budget must leave a second of work after the reserve
        check_options(self, {"--budget-s": Interval("real", self.reserve_s + 1, 86_400)},
                      only_extra=True)
        given = [flag for flag, value in (("--dataset", self.dataset),
                                          ("--scenarios", self.scenarios),
                                          ("--seeds", self.seeds)) if value]
        if self.plan is None and len(given) < 3:
            raise fail("--plan", "given, or else --dataset, --scenarios and --seeds together",
                       got="only " + ", ".join(given) if given else "none of them")

    @property
    def entries(self) -> list[PlanEntry]:
        """The plan: ``--plan``'s file, or the one entry of --dataset/--scenarios/--seeds."""
        if self.plan:
            return read_plan(self.plan)
        return [_plan_entry_iv({"dataset": self.dataset, "scenarios": list(self.scenarios),
                                "seeds": self.seeds, "profile": self.profile})]

    @property
    def store(self) -> Path | None:
        """The run store whose records are skipped (``None``: skip nothing)."""
        if self.pool == "none":
            return None
        return DEFAULT_POOL if self.pool is None else Path(self.pool)


def build_parser() -> argparse.ArgumentParser:
    """The options of :class:`BatchOptions`, as declared there."""
    return add_options(ArgumentParser(prog=PROG, description=(__doc__ or "").split("\n\n")[0]),
                       BatchOptions)


def main(argv=None) -> int:
    """Run the CLI; 0 when every started run finished, 1 after a training error, 2 bad input."""
    return call_main(_main, PROG, argv)


def _main(argv) -> int:
    args = config_from_args(BatchOptions, build_parser().parse_args(argv))
    result = run_batch(args.entries, pack=args.pack, out=args.out, budget_s=args.budget_s,
                       workers=args.workers, pool=args.store, device=args.device,
                       cache_dir=args.cache_dir, work_dir=args.work_dir,
                       reserve_s=args.reserve_s, shard_mib=args.shard_mib,
                       log=lambda msg: print(msg, flush=True))
    return 1 if result.error else 0


if __name__ == "__main__":
    raise SystemExit(main())
