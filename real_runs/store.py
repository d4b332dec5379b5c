"""The run store: one compact, versioned, pickle-free record per run.

Layout under a store root::

    <root>/<dataset>/<profile>/baseline/seed-00007.npz   (shared by every scenario)
    <root>/<dataset>/<profile>/<scenario>/seed-00007.npz (variant arm of that scenario)

Each record is an ``.npz`` (read with ``allow_pickle=False``) holding

=================  =======  ============================================================
key                dtype    meaning
=================  =======  ============================================================
format_version     int64    :data:`FORMAT_VERSION`
n_test             int64    number of test examples n
correct_packed     uint8    per-example correctness, ``np.packbits(bitorder="little")``
predictions        uint8    predicted class of each test example, shape (n,)
epoch_accuracy     float64  test accuracy (fraction) after each epoch
final_accuracy     float64  test accuracy (fraction) of the final model
meta               str      JSON: dataset, profile, scenario, arm, seed, config,
                            config_hash, base_config_hash, data_fingerprint,
                            environment, wall_time_s, train_time_s, train_examples,
                            created_utc, payload_sha256
=================  =======  ============================================================

``payload_sha256`` covers the arrays, so truncation or tampering is detected on read.
Writes go to a temporary file in the same folder and are renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evalcal_core import scenarios
from evalcal_core.atomic import atomic_path
from evalcal_core.validate import InvalidParameterError, fail

FORMAT_VERSION = 1
ARMS = ("baseline", "variant")
#: the pool committed with the project (``python -m real_runs.build_pool`` rebuilds it)
DEFAULT_POOL = Path(__file__).resolve().parent / "pool"
_KEYS = ("format_version", "n_test", "correct_packed", "predictions", "epoch_accuracy",
         "final_accuracy", "meta")
_META_KEYS = ("dataset", "profile", "scenario", "arm", "seed", "config", "config_hash",
              "base_config_hash", "data_fingerprint", "environment", "wall_time_s",
              "train_time_s", "train_examples", "created_utc", "payload_sha256")
#: largest array a record member may declare (a test set of 2**27 examples); a crafted
#: header declaring more is refused before numpy allocates it
MAX_MEMBER_BYTES = 2**27


def _check_headers(fh, path: Path) -> None:
    """Refuse members whose ``.npy`` header declares an array too large to be a record's."""
    with zipfile.ZipFile(fh) as archive:
        for info in archive.infolist():
            with archive.open(info) as member:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(member)
                else:
                    shape, _, dtype = np.lib.format.read_array_header_2_0(member)
            nbytes = dtype.itemsize * int(np.prod(shape, dtype=object))
            if nbytes > MAX_MEMBER_BYTES:
                raise CorruptRecordError(
                    f"corrupt run record {path}: member {info.filename} declares shape "
                    f"{tuple(int(d) for d in shape)} ({nbytes} bytes, limit "
                    f"{MAX_MEMBER_BYTES}); delete it to retrain that run")
    fh.seek(0)


class CorruptRecordError(InvalidParameterError):
    """A record file is truncated, malformed, inconsistent or not the record expected."""


@dataclass(frozen=True, eq=False)
class RunRecord:
    """Everything stored about one run.

    Attributes
    ----------
    dataset, profile : str
    scenario : str or None
        None for the baseline arm (shared by every scenario).
    arm : str
        ``"baseline"`` or ``"variant"``.
    seed : int
    correct : numpy.ndarray of bool, shape (n,)
        Whether each test example was classified correctly.
    predictions : numpy.ndarray of uint8, shape (n,)
    epoch_accuracy : numpy.ndarray of float64, shape (epochs,)
        Test accuracy (fraction) after each epoch.
    config : dict
        The full :class:`~real_runs.config.RunConfig` as a dict.
    config_hash, base_config_hash : str
        Hash of ``config`` and of the baseline config it was derived from (equal for a
        baseline).
    data_fingerprint : str
        SHA-256 of the loaded training and test arrays.
    environment : dict
        python, torch, device, threads, ...
    wall_time_s, train_time_s : float
        Seconds for the whole run and for the optimisation steps alone.
    train_examples : int
        Training examples processed (epochs x subset size).
    created_utc : str
    """

    dataset: str
    profile: str
    scenario: str | None
    arm: str
    seed: int
    correct: np.ndarray
    predictions: np.ndarray
    epoch_accuracy: np.ndarray
    config: dict
    config_hash: str
    base_config_hash: str
    data_fingerprint: str
    environment: dict = field(default_factory=dict)
    wall_time_s: float = 0.0
    train_time_s: float = 0.0
    train_examples: int = 0
    created_utc: str = ""

    @property
    def final_accuracy(self) -> float:
        """Test accuracy (fraction) of the final model."""
        return float(self.correct.mean()) if self.correct.size else float("nan")


def record_path(root, dataset: str, profile: str, arm: str, scenario: str | None,
                seed: int) -> Path:
    """Path of a record inside the store ``root`` (see the module docstring)."""
    if arm not in ARMS:
        raise InvalidParameterError(f"arm must be one of {ARMS}, got {arm!r}")
    if arm == "variant" and not scenario:
        raise InvalidParameterError(f"a variant record needs a scenario, got {scenario!r}")
    folder = "baseline" if arm == "baseline" else scenario
    return Path(root) / dataset / profile / folder / f"seed-{int(seed):05d}.npz"


def _payload_sha256(arrays: dict) -> str:
    digest = hashlib.sha256()
    for key in ("n_test", "correct_packed", "predictions", "epoch_accuracy", "final_accuracy"):
        arr = np.ascontiguousarray(arrays[key])
        digest.update(key.encode())
        digest.update(str(arr.dtype).encode())
        digest.update(str(arr.shape).encode())
        digest.update(arr.tobytes())
    return digest.hexdigest()


def write_record(path, record: RunRecord) -> Path:
    """Write ``record`` to ``path`` atomically (temporary file in the same folder, then rename).

    Returns
    -------
    pathlib.Path
        The path written.
    """
    path = Path(path)
    correct = np.asarray(record.correct, dtype=bool)
    predictions = np.asarray(record.predictions)
    if predictions.shape != correct.shape or correct.ndim != 1:
        raise InvalidParameterError(f"correct and predictions must be 1-D of equal length, got "
                                    f"{correct.shape} and {predictions.shape}")
    if predictions.size and (predictions.min() < 0 or predictions.max() > 255):
        raise InvalidParameterError("predictions must be class indices in 0..255")
    arrays = {
        "format_version": np.int64(FORMAT_VERSION),
        "n_test": np.int64(correct.size),
        "correct_packed": np.packbits(correct, bitorder="little"),
        "predictions": predictions.astype(np.uint8),
        "epoch_accuracy": np.asarray(record.epoch_accuracy, dtype=np.float64),
        "final_accuracy": np.float64(record.final_accuracy),
    }
    meta = {
        "dataset": record.dataset, "profile": record.profile, "scenario": record.scenario,
        "arm": record.arm, "seed": int(record.seed), "config": record.config,
        "config_hash": record.config_hash, "base_config_hash": record.base_config_hash,
        "data_fingerprint": record.data_fingerprint, "environment": record.environment,
        "wall_time_s": float(record.wall_time_s), "train_time_s": float(record.train_time_s),
        "train_examples": int(record.train_examples), "created_utc": record.created_utc,
        "payload_sha256": _payload_sha256(arrays),
    }
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    # The temporary name (.NAME.*.tmp.npz) never matches seed-*.npz.
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    return path


def read_record(path) -> RunRecord:
    """Read and verify one record.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    CorruptRecordError
        If the file is truncated, not a record, of another format version, or its
        checksum or internal consistency checks fail.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no run record at {path}")
    try:
        # Open the file ourselves: np.load leaks its handle when the zip is truncated.
        with open(path, "rb") as fh:
            _check_headers(fh, path)
            with np.load(fh, allow_pickle=False) as npz:
                missing = [k for k in _KEYS if k not in npz.files]
                if missing:
                    raise CorruptRecordError(f"corrupt run record {path}: missing {missing}")
                arrays = {k: npz[k] for k in _KEYS}
    except CorruptRecordError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError, MemoryError,
            TypeError, OverflowError) as exc:
        raise CorruptRecordError(f"corrupt run record {path}: cannot read it ({exc}); "
                                 "delete it to retrain that run") from exc
    try:
        version = int(arrays["format_version"])
        n = int(arrays["n_test"])
    except (TypeError, ValueError) as exc:
        raise CorruptRecordError(f"corrupt run record {path}: bad header values ({exc})"
                                 ) from None
    if version != FORMAT_VERSION:
        raise CorruptRecordError(f"run record {path} has format_version {version}; this "
                                 f"code reads version {FORMAT_VERSION}")
    try:
        meta = json.loads(str(arrays["meta"]))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise CorruptRecordError(f"corrupt run record {path}: bad meta JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise CorruptRecordError(f"corrupt run record {path}: meta is not a JSON object")
    missing = [k for k in _META_KEYS if k not in meta]
    if missing:
        raise CorruptRecordError(f"corrupt run record {path}: meta lacks "
                                 f"{', '.join(missing)}; delete it to retrain that run")
    if not 0 <= n <= 8 * arrays["correct_packed"].size or arrays["correct_packed"].ndim != 1:
        raise CorruptRecordError(f"corrupt run record {path}: n_test {n} does not match "
                                 f"correct_packed")
    try:
        payload = _payload_sha256(arrays)
    except (TypeError, ValueError) as exc:
        raise CorruptRecordError(f"corrupt run record {path}: bad arrays ({exc})") from None
    if meta.get("payload_sha256") != payload:
        raise CorruptRecordError(f"corrupt run record {path}: checksum mismatch; delete it to "
                                 "retrain that run")
    correct = np.unpackbits(arrays["correct_packed"], count=n, bitorder="little").astype(bool)
    predictions = arrays["predictions"]
    if predictions.shape != (n,) or not np.isclose(float(arrays["final_accuracy"]),
                                                   correct.mean() if n else np.nan,
                                                   equal_nan=True):
        raise CorruptRecordError(f"corrupt run record {path}: inconsistent arrays")
    return RunRecord(
        dataset=meta["dataset"], profile=meta["profile"], scenario=meta["scenario"],
        arm=meta["arm"], seed=int(meta["seed"]), correct=correct, predictions=predictions,
        epoch_accuracy=arrays["epoch_accuracy"], config=meta["config"],
        config_hash=meta["config_hash"], base_config_hash=meta["base_config_hash"],
        data_fingerprint=meta["data_fingerprint"], environment=meta["environment"],
        wall_time_s=meta["wall_time_s"], train_time_s=meta["train_time_s"],
        train_examples=meta["train_examples"], created_utc=meta["created_utc"],
    )


def read_expected(path, *, dataset: str, profile: str, arm: str, scenario: str | None,
                  seed: int) -> RunRecord:
    """Read a record and check it is the run its path says it is (not a misplaced file)."""
    record = read_record(path)
    expected = {"dataset": dataset, "profile": profile, "arm": arm,
                "scenario": scenario if arm == "variant" else None, "seed": int(seed)}
    found = {"dataset": record.dataset, "profile": record.profile, "arm": record.arm,
             "scenario": record.scenario, "seed": record.seed}
    if found != expected:
        raise CorruptRecordError(f"mismatched run record {path}: holds {found}, expected "
                                 f"{expected}")
    return record


def _seeds_in(folder: Path) -> set[int]:
    seeds = set()
    if folder.is_dir():
        for p in folder.glob("seed-*.npz"):
            stem = p.stem.removeprefix("seed-")
            if stem.isdigit():
                seeds.add(int(stem))
    return seeds


def list_cells(root=None) -> list[tuple[str, str, str]]:
    """``(dataset, profile, scenario)`` of every variant folder under the store ``root``.

    Parameters
    ----------
    root : path-like, optional
        Store root; default the committed pool :data:`DEFAULT_POOL`.

    Returns
    -------
    list of tuple
        Sorted; only profiles that have a ``baseline`` folder (variants need it to pair).
    """
    root = Path(root) if root is not None else DEFAULT_POOL
    cells = []
    if root.is_dir():
        for dataset_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            for profile_dir in sorted(p for p in dataset_dir.iterdir() if p.is_dir()):
                if not (profile_dir / "baseline").is_dir():
                    continue
                for scenario_dir in sorted(p for p in profile_dir.iterdir() if p.is_dir()):
                    if scenario_dir.name != "baseline":
                        cells.append((dataset_dir.name, profile_dir.name, scenario_dir.name))
    return cells


def pool_cells(root=None, profile: str | None = None, *,
               option: str = "--pool ROOT") -> list[tuple[str, str]]:
    """(dataset, scenario) pairs to calibrate on in the store at ``root`` (default: the
    committed pool); the identical-arms sanity scenario (``S0``) is left out.

    ``profile`` keeps only the cells trained under that profile (the store may hold the
    ``cpu`` and ``paper`` pools side by side, and the second may cover fewer datasets).
    ``option`` is how the caller's user names another store, for the message.

    Raises
    ------
    ValueError
        If the store has no such pool.
    """
    skip = {name for name, s in scenarios.SCENARIOS.items() if s.identical}
    cells = sorted({(d, s) for d, prof, s in list_cells(root)
                    if s not in skip and (profile is None or prof == profile)})
    if not cells:
        shown = root if root is not None else DEFAULT_POOL
        which = f"of profile {profile!r} " if profile is not None else ""
        raise InvalidParameterError(f"no real-run pool {which}under {shown}; build one with "
                                    f"'python -m real_runs.build_pool' or pass {option}")
    return cells


def check_store(root, option: str = "--pool") -> Path:
    """A run store the user named: a folder holding a real-run pool.

    Raises
    ------
    ValueError
        One line naming ``option``: ``root`` is missing, a file, or holds no pool.
    """
    root = Path(root)
    if not root.is_dir():
        what = "is a file" if root.exists() else "does not exist"
        raise fail(option, f"a run store folder ({root} {what})", str(root))
    if not pool_profiles(root):
        raise fail(option, "a run store holding a real-run pool (build one with 'python -m "
                   "real_runs.build_pool')", str(root))
    return root


def pool_profiles(root=None, datasets=None) -> list[str]:
    """The training profiles of the store's pools (of ``datasets`` only, if given)."""
    return sorted({prof for d, prof, _ in list_cells(root)
                   if datasets is None or d in datasets})


def available_profiles(root, dataset: str) -> list[str]:
    """Profiles with at least one record of ``dataset`` under ``root``."""
    folder = Path(root) / dataset
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def _resolve_profile(root, dataset: str, profile: str | None) -> str:
    if profile is not None:
        return profile
    found = available_profiles(root, dataset)
    if len(found) != 1:
        raise InvalidParameterError(f"profile must be given when {Path(root) / dataset} holds "
                                    f"{len(found)} profiles ({found}); pass one of them")
    return found[0]


def load_pair_records(root, dataset: str, scenario: str, profile: str | None = None,
                      seeds=None) -> list[tuple[RunRecord, RunRecord]]:
    """(baseline, variant) records for every seed that has both, sorted by seed.

    Checks that all baselines share one config, all variants share one config derived from
    it, and all records were trained on the same data; a mismatch raises
    :class:`CorruptRecordError`.
    """
    if not scenario or scenario == "baseline":
        raise InvalidParameterError(f"scenario must name a variant scenario such as 'S1', got "
                                    f"{scenario!r}")
    profile = _resolve_profile(root, dataset, profile)
    base_dir = record_path(root, dataset, profile, "baseline", None, 0).parent
    var_dir = record_path(root, dataset, profile, "variant", scenario, 0).parent
    if seeds is None:
        seeds = sorted(_seeds_in(base_dir) & _seeds_in(var_dir))
    else:
        from real_runs.seeding import check_seed

        seeds = sorted({check_seed(s) for s in seeds})
    pairs = []
    for seed in seeds:
        base = read_expected(base_dir / f"seed-{int(seed):05d}.npz", dataset=dataset,
                             profile=profile, arm="baseline", scenario=None, seed=seed)
        var = read_expected(var_dir / f"seed-{int(seed):05d}.npz", dataset=dataset,
                            profile=profile, arm="variant", scenario=scenario, seed=seed)
        pairs.append((base, var))
    if pairs:
        ref_base, ref_var = pairs[0]
        for base, var in pairs:
            problems = []
            if base.config_hash != ref_base.config_hash:
                problems.append("baseline config differs from seed "
                                f"{ref_base.seed}'s")
            if var.config_hash != ref_var.config_hash:
                problems.append(f"variant config differs from seed {ref_var.seed}'s")
            if var.base_config_hash != base.config_hash:
                problems.append("variant was not derived from this baseline's config")
            if {base.data_fingerprint, var.data_fingerprint} != {ref_base.data_fingerprint}:
                problems.append("trained on different data")
            if base.correct.size != var.correct.size:
                problems.append("different test-set sizes")
            if problems:
                raise CorruptRecordError(f"mismatched records for {dataset}/{profile}/"
                                         f"{scenario} seed {base.seed}: " + "; ".join(problems))
    return pairs


def load_pairs(root, dataset: str, scenario: str, profile: str | None = None,
               seeds=None) -> tuple[np.ndarray, np.ndarray]:
    """Per-example correctness of paired runs, aligned by seed.

    Parameters
    ----------
    root : path-like
        Store root (the ``--out`` of ``python -m real_runs.train``).
    dataset : str
        ``"cifar10"``, ``"cifar10n"`` or ``"ag_news"``.
    scenario : str
        ``"S0"``, ``"S0p"``, ``"S1"`` or ``"S2"``.
    profile : str, optional
        Needed only when the store holds several profiles of ``dataset``.
    seeds : iterable of int, optional
        Seeds to load (all must exist); default every seed with both arms present.

    Returns
    -------
    base, variant : numpy.ndarray of bool, shape (k, n)
        Row i is seed ``sorted(seeds)[i]``; column j is test example j. ``k = 0`` gives
        arrays of shape (0, 0).
    """
    pairs = load_pair_records(root, dataset, scenario, profile, seeds)
    if not pairs:
        empty = np.zeros((0, 0), dtype=bool)
        return empty, empty.copy()
    base = np.stack([b.correct for b, _ in pairs])
    variant = np.stack([v.correct for _, v in pairs])
    return base, variant
