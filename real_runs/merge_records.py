"""``python -m real_runs.merge_records``: merge run records brought back from a GPU machine.

::

    python -m real_runs.merge_records gpu_out/records-*.tar gpu_out/gpu_batch.json \\
        --pool real_runs/pool

Accepts ``.tar`` bundles (from :mod:`real_runs.gpu_batch`), single ``seed-*.npz`` records
named by their store path inside a store folder, and store folders. Every record is
verified (:func:`real_runs.store.read_expected`: readable, checksum, consistent, and the
run its path names) and must match the pool's records of the same dataset and profile
(same baseline config, same data fingerprint). Then:

* not in the pool: copied in byte for byte, atomically;
* in the pool with the same bytes, or the same result (payload checksum, config and data)
  with other metadata (time stamps of a re-run): skipped;
* in the pool with a different result: refused.

A refused record is one line on stderr (``merge_records: refused <source>: <reason>``) and
the others are still merged (exit code 1). Merging is idempotent, so an interrupted merge
is resumed by running it again. The pool's ``manifest.json`` is rewritten at the end, with
a ``merges`` entry recording profiles, devices, torch versions and code versions
(``gpu_batch.json`` files among the inputs supply the GPU side's code version).

A merge holds the store's lock (``POOL/.lock``, the ``fcntl.flock`` of
:mod:`evalcal_core.outdir` that training runs into the store take too) from its first look
at the store to the rewritten manifest. A second merge into the same store waits for it
(saying so in one line on stderr), then sees the first one's records as already present,
so both end up in the manifest's ``merges``; after ``--wait`` seconds (600) it gives up
with one line and exit code 2, having written nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import re
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, call_main
from evalcal_core.options import add_options, check_options, config_from_args, option, pool_option
from evalcal_core.outdir import LOCK_NAME, check_out
from evalcal_core.validate import Interval, InvalidParameterError, fail
from real_runs.store import ARMS, CorruptRecordError, read_expected, read_record

REPO = Path(__file__).resolve().parents[1]
#: how the command is run
PROG = "python -m real_runs.merge_records"
_MEMBER = re.compile(r"^(cifar10|cifar10n|ag_news)/([a-z]+)/([A-Za-z0-9]+)/seed-(\d{5})\.npz$")
MAX_RECORD_BYTES = 4 * 2**20
#: seconds a merge waits for another process writing into the same store
LOCK_WAIT_S = 600.0

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, merges are not guarded
    fcntl = None


@dataclass
class MergeResult:
    """Counts and messages of one merge."""

    added: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    refused: list = field(default_factory=list)
    batches: list = field(default_factory=list)


def _identity(name: str) -> dict:
    """dataset/profile/arm/scenario/seed named by a store-relative path, or ValueError."""
    match = _MEMBER.match(name)
    if not match:
        raise InvalidParameterError("not a store record path "
                                    "<dataset>/<profile>/<baseline|scenario>/seed-NNNNN.npz")
    dataset, profile, folder, seed = match.groups()
    arm = "baseline" if folder == "baseline" else "variant"
    assert arm in ARMS
    return {"dataset": dataset, "profile": profile, "arm": arm,
            "scenario": None if arm == "baseline" else folder, "seed": int(seed)}


def _sources(paths) -> list[tuple[str, str, bytes]]:
    """(source label, store-relative name, bytes) of every record in the inputs."""
    out = []
    for path in map(Path, paths):
        if not path.exists():
            raise FileNotFoundError(f"no such input {path}")
        if path.is_dir():
            found = sorted(path.glob("*/*/*/seed-*.npz"))
            if not found:
                # a folder holding no record is a wrong path, not an empty merge
                raise InvalidParameterError(f"input folder {path} holds no run record "
                                            "(DATASET/PROFILE/ARM/seed-NNNNN.npz); give the "
                                            "store folder, .tar bundles or .npz records")
            for p in found:
                out.append((str(p), p.relative_to(path).as_posix(), p.read_bytes()))
        elif path.suffix == ".tar":
            try:
                with tarfile.open(path, mode="r:") as tar:
                    for member in tar:
                        label = f"{path}:{member.name}"
                        if not member.isfile() or member.size > MAX_RECORD_BYTES:
                            out.append((label, member.name, b""))  # refused below
                            continue
                        out.append((label, member.name, tar.extractfile(member).read()))
            except (tarfile.TarError, OSError, EOFError) as exc:
                # a bundle cut off mid-write: keep the members read so far
                out.append((f"{path}", "", b"corrupt bundle: " + str(exc).encode()))
        elif path.suffix == ".npz":
            parts = path.resolve().parts
            out.append((str(path), "/".join(parts[-4:]), path.read_bytes()))
        else:
            raise InvalidParameterError("inputs must be .tar bundles, .npz records, store "
                                        f"folders or gpu_batch.json, got {path}")
    return out


def _check_zip(path: Path) -> None:
    """CRC-32 of every member: ``payload_sha256`` covers the arrays, not the ``meta`` JSON,
    and numpy stops reading a member before zipfile checks its CRC."""
    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise CorruptRecordError(f"corrupt run record: not a readable zip ({exc})") from exc
    if bad is not None:
        raise CorruptRecordError(f"corrupt run record: member {bad} fails its CRC-32")


def _payload(rec_path: Path) -> str:
    import numpy as np

    with np.load(rec_path, allow_pickle=False) as z:
        return json.loads(str(z["meta"]))["payload_sha256"]


class _PoolFacts:
    """Baseline config hashes and data fingerprints already in the pool, per (dataset, profile)."""

    def __init__(self, pool: Path):
        self.pool = pool
        self.facts: dict[tuple, dict] = {}

    def get(self, dataset: str, profile: str) -> dict:
        key = (dataset, profile)
        if key not in self.facts:
            base, data = set(), set()
            for p in sorted((self.pool / dataset / profile).glob("*/seed-*.npz")):
                rec = read_record(p)
                base.add(rec.base_config_hash)
                data.add(rec.data_fingerprint)
            self.facts[key] = {"base": base, "data": data}
        return self.facts[key]


def _write_atomic(path: Path, blob: bytes) -> None:
    write_atomic(path, blob)


@contextlib.contextmanager
def store_lock(pool, *, wait_s: float = LOCK_WAIT_S, on_wait=None):
    """Hold the store's lock ``pool/.lock`` for the block, waiting up to ``wait_s`` seconds.

    The lock file and ``fcntl.flock`` are those of :func:`evalcal_core.outdir.locked_out`,
    so a merge also excludes a training run writing into the store. The kernel releases the
    lock when the process ends: a crashed merge leaves no stale lock.

    Parameters
    ----------
    pool : path-like
        The store (created if missing; must be a writable folder).
    wait_s : float
        Seconds to wait for the holder; 0 fails at once.
    on_wait : callable, optional
        Called once, with no argument, when the lock is held by another process.

    Raises
    ------
    ValueError
        ``pool`` is not a writable folder, or the lock was still held after ``wait_s``.
    """
    pool = check_out(pool, "--pool")
    if fcntl is None:  # pragma: no cover
        yield pool
        return
    with open(pool / LOCK_NAME, "a") as fh:
        deadline = time.monotonic() + wait_s
        waited = False
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise InvalidParameterError("another merge or training run is writing to "
                                                f"{pool} (still after {wait_s:g} s); run the merge "
                                                "again when it is done") from None
                if not waited and on_wait is not None:
                    on_wait()
                waited = True
                time.sleep(0.05)
        try:
            yield pool
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def merge(inputs, pool, *, data_root: str | None = None, write: bool = True,
          log=None, wait_s: float = LOCK_WAIT_S, on_wait=None) -> MergeResult:
    """Merge the records of ``inputs`` into the store ``pool`` (see the module docstring).

    Parameters
    ----------
    inputs : iterable of path-like
        ``.tar`` bundles, ``.npz`` records, store folders, ``gpu_batch.json`` summaries.
    pool : path-like
        The run store to merge into (created if missing).
    data_root : str, optional
        Recorded in the manifest (default: the manifest's previous value).
    write : bool, default True
        False only reports what would happen.
    log : callable, optional
        Receives one line per refused record.
    wait_s : float, default 600
        Seconds to wait for another process holding the store's lock (:func:`store_lock`;
        taken only when ``write``).
    on_wait : callable, optional
        Called once if the merge has to wait for the lock.

    Raises
    ------
    ValueError
        Bad inputs, ``pool`` not a writable folder, or the lock still held after ``wait_s``.
    """
    pool = Path(pool)
    if not (wait_s >= 0 and math.isfinite(wait_s)):
        raise fail("wait_s", "a finite number >= 0", wait_s, "merge")
    result = MergeResult()
    batches = [Path(p) for p in inputs if Path(p).suffix == ".json"]
    for b in batches:
        try:
            result.batches.append(json.loads(b.read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidParameterError(f"cannot read batch summary {b} ({exc})") from exc
    sources = _sources([p for p in inputs if Path(p).suffix != ".json"])
    lock = (store_lock(pool, wait_s=wait_s, on_wait=on_wait) if write
            else contextlib.nullcontext(pool))
    with lock, tempfile.TemporaryDirectory(prefix="merge-") as tmpdir:
        _merge_locked(sources, inputs, pool, tmpdir, result, data_root, write, log)
    return result


def _merge_locked(sources, inputs, pool: Path, tmpdir: str, result: MergeResult, data_root,
                  write, log) -> None:
    """The body of :func:`merge`, run while the store's lock is held (when ``write``)."""
    facts = _PoolFacts(pool)
    environments = []
    for i, (label, name, blob) in enumerate(sources):
        try:
            if blob.startswith(b"corrupt bundle: "):
                raise CorruptRecordError(blob.decode(errors="replace"))
            ident = _identity(name)
            if not blob:
                raise CorruptRecordError("not a regular file of record size")
            tmp = Path(tmpdir) / f"{i}.npz"
            tmp.write_bytes(blob)
            _check_zip(tmp)
            rec = read_expected(tmp, **ident)
            known = facts.get(ident["dataset"], ident["profile"])
            if known["base"] and rec.base_config_hash not in known["base"]:
                raise CorruptRecordError("trained with another baseline config than the "
                                         f"pool's {ident['dataset']}/{ident['profile']} records")
            if known["data"] and rec.data_fingerprint not in known["data"]:
                raise CorruptRecordError("trained on other data than the pool's "
                                         f"{ident['dataset']}/{ident['profile']} records")
            dest = pool / name
            if dest.exists():
                if dest.read_bytes() == blob:
                    result.skipped.append(name)
                    continue
                old = read_record(dest)
                if (_payload(dest) == _payload(tmp) and old.config_hash == rec.config_hash
                        and old.data_fingerprint == rec.data_fingerprint):
                    result.skipped.append(name)
                    continue
                raise CorruptRecordError(f"the pool already holds a different result at {name}")
            if name in result.added:
                continue  # the same record twice among the inputs
            if write:
                _write_atomic(dest, blob)
            known["base"].add(rec.base_config_hash)
            known["data"].add(rec.data_fingerprint)
            result.added.append(name)
            environments.append(rec.environment)
        except (CorruptRecordError, ValueError) as exc:
            msg = str(exc).replace(str(tmpdir), "").replace("\n", " ")
            result.refused.append(f"{label}: {msg}")
            if log is not None:
                log(f"merge_records: refused {label}: {msg}")
    if write and result.added:
        _rewrite_manifest(pool, data_root, result, environments, [str(p) for p in inputs])


def _rewrite_manifest(pool: Path, data_root, result: MergeResult, environments, inputs):
    from real_runs.manifest import code_sha256, code_version, write_manifest

    previous = {}
    if (pool / "manifest.json").is_file():
        previous = json.loads((pool / "manifest.json").read_text())
    profiles = sorted({p.relative_to(pool).parts[1]
                       for p in pool.glob("*/*/*/seed-*.npz")})
    merge_entry = {
        "added": len(result.added), "skipped": len(result.skipped),
        "refused": len(result.refused), "inputs": [Path(p).name for p in inputs],
        "profiles": sorted({name.split("/")[1] for name in result.added}),
        "devices": sorted({e.get("cuda_device") or e.get("device", "?") for e in environments}),
        "torch": sorted({e.get("torch", "?") for e in environments}),
        "code_version_of_runs": sorted({b.get("code_version", "?") for b in result.batches}),
        "code_version_of_merge": code_version(REPO),
        "code_sha256_of_runs": sorted({b.get("code_sha256", "?") for b in result.batches}),
        "code_sha256_of_merge": code_sha256(REPO),
        "added_sha256": hashlib.sha256("\n".join(sorted(result.added)).encode()).hexdigest(),
    }
    write_manifest(pool, profile=",".join(profiles),
                   data_root=data_root or previous.get("data_root", ""), repo=REPO,
                   merges=previous.get("merges", []) + [merge_entry])


@dataclass(frozen=True)
class MergeOptions:
    """What ``python -m real_runs.merge_records`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`) whose own rule is checked when built."""

    inputs: tuple[str, ...] = option("inputs", nargs="+",
                                     help=".tar bundles, .npz records, store folders, "
                                          "gpu_batch.json")
    pool: str = pool_option(dataclasses.MISSING, help="run store to merge into")
    data_root: str | None = option("--data-root", None, help="recorded in the manifest")
    dry_run: bool = option("--dry-run", False, switch=True, help="report only; write nothing")
    wait: float = option("--wait", LOCK_WAIT_S, kind=float, metavar="SECONDS", in_argv=False,
                         constraint=Interval("real", 0),
                         help="how long to wait for another merge or training run writing "
                              f"into the store ({LOCK_WAIT_S:g}); 0 fails at once")

    def __post_init__(self):
        check_options(self)


def build_parser() -> ArgumentParser:
    """The options of :class:`MergeOptions`, as declared there."""
    return add_options(ArgumentParser(prog=PROG, description=(__doc__ or "").split("\n\n")[0]),
                       MergeOptions)


def main(argv=None) -> int:
    """0: all merged or already present; 1: some refused; 2: bad input."""
    return call_main(_main, PROG, argv)


def _main(argv) -> int:
    args = config_from_args(MergeOptions, build_parser().parse_args(argv))

    def waiting():
        print(f"merge_records: waiting for another merge or training run writing to "
              f"{args.pool}", file=sys.stderr)

    result = merge(args.inputs, args.pool, data_root=args.data_root, write=not args.dry_run,
                   log=lambda m: print(m, file=sys.stderr), wait_s=args.wait,
                   on_wait=waiting)
    verb = "would add" if args.dry_run else "added"
    print(f"{verb} {len(result.added)}, already present {len(result.skipped)}, refused "
          f"{len(result.refused)}")
    return 1 if result.refused else 0


if __name__ == "__main__":
    raise SystemExit(main())
