"""Where the real datasets live and how their raw files are read, before any loading.

The finders accept a dataset's own folder or a parent holding it under a conventional name
(the layout of a data root such as ``../shared/data`` beside the checkout:
:data:`CIFAR10_LAYOUT`, :data:`CIFAR10N_LAYOUT`, :data:`AG_NEWS_LAYOUT`). Both the loaders
(:mod:`real_runs.data`) and the data pack (:mod:`real_runs.pack_data`) build on this module,
which imports neither.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from evalcal_core.atomic import atomic_path
from evalcal_core.validate import InvalidParameterError

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse",
                   "ship", "truck")
AG_NEWS_CLASSES = ("World", "Sports", "Business", "Sci/Tech")
CIFAR10_TRAIN_SIZE = 50_000

CIFAR10_LAYOUT = (
    "either torchvision's 'cifar-10-batches-py/' (data_batch_1..5, test_batch) or an "
    "ImageFolder tree 'train/<class>/<index>.jpg|png' and 'test/<class>/<index>.jpg|png' "
    "with <index> the canonical position, in the root or in its 'cifar10-jpeg/' or "
    "'cifar10/' subfolder"
)
CIFAR10N_LAYOUT = (
    "'CIFAR-10_human.pt' in the root or in its 'cifar10n/' subfolder, next to CIFAR-10 "
    "images laid out as " + CIFAR10_LAYOUT
)
AG_NEWS_LAYOUT = (
    "'train.csv' and 'test.csv' in the original AG News format (no header; class 1-4, "
    "title, description) in the root or in its 'ag_news-mini/' or 'ag_news/' subfolder"
)

CIFAR_SUBDIRS = ("", "cifar10-jpeg", "cifar10")
_AG_SUBDIRS = ("", "ag_news-mini", "ag_news", "ag_news_csv")
_IMAGE_NAME = re.compile(r"^(\d+)\.(jpg|jpeg|png)$", re.IGNORECASE)
LABEL_KEYS = {"aggre": "aggre_label", "worse": "worse_label", "random1": "random_label1",
               "random2": "random_label2", "random3": "random_label3"}
N_KEYS = ("clean_label",) + tuple(LABEL_KEYS.values())


class DataRootError(InvalidParameterError):
    """A data root exists but does not have the expected layout or content."""


def missing_root(root: Path, layout: str) -> FileNotFoundError:
    """The error for a data root that does not exist, naming the layout expected."""
    return FileNotFoundError(f"data root {root} does not exist; expected {layout}")


def _find(root, subdirs, ok, layout: str) -> Path:
    root = Path(root)
    if not root.is_dir():
        raise missing_root(root, layout)
    for sub in subdirs:
        candidate = root / sub if sub else root
        if candidate.is_dir() and ok(candidate):
            return candidate
    raise DataRootError(f"data root {root} does not have the expected layout: {layout}")


def scan_image_split(split_dir: Path) -> list[tuple[int, int, str, int]]:
    """(index, class, relative path, size in bytes) of every image of one ImageFolder split."""
    entries = []
    for class_dir in sorted(split_dir.iterdir()):
        if class_dir.name.startswith("."):
            continue
        if not class_dir.is_dir() or class_dir.name not in CIFAR10_CLASSES:
            raise DataRootError(f"unexpected entry {class_dir}: the folders of {split_dir} "
                                f"must be CIFAR-10 class names {CIFAR10_CLASSES}")
        label = CIFAR10_CLASSES.index(class_dir.name)
        with os.scandir(class_dir) as it:
            for item in it:
                if item.name.startswith("."):
                    continue
                match = _IMAGE_NAME.match(item.name)
                if not match or not item.is_file():
                    raise DataRootError(f"unexpected file {item.path}: expected "
                                        "<index>.jpg|png with <index> the canonical position")
                entries.append((int(match.group(1)), label,
                                f"{split_dir.name}/{class_dir.name}/{item.name}",
                                item.stat().st_size))
    entries.sort()
    indices = [e[0] for e in entries]
    if indices != list(range(len(indices))):
        dup = len(indices) - len(set(indices))
        span = f"{indices[0]}..{indices[-1]}" if indices else "empty"
        raise DataRootError(f"the image indices under {split_dir} must be 0..N-1 exactly once "
                            f"(canonical positions); found {len(indices)} files, {dup} "
                            f"duplicates, range {span}")
    return entries


def save_npz_atomic(path: Path, **arrays) -> None:
    """Write ``arrays`` to the ``.npz`` file ``path``: all of it or, after a crash, nothing."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)


def is_cifar_root(path: Path) -> bool:
    """Whether ``path`` itself holds CIFAR-10 (python batches or train/ and test/)."""
    return (path / "cifar-10-batches-py").is_dir() or (
        (path / "train").is_dir() and (path / "test").is_dir())


def find_cifar10_root(data_root) -> Path:
    """The folder holding CIFAR-10 in one of the accepted layouts (see CIFAR10_LAYOUT)."""
    return _find(data_root, CIFAR_SUBDIRS, is_cifar_root, CIFAR10_LAYOUT)


def find_cifar10n_file(data_root) -> Path:
    """Path of ``CIFAR-10_human.pt`` under ``data_root`` (see CIFAR10N_LAYOUT)."""
    root = Path(data_root)
    if not root.is_dir():
        raise missing_root(root, CIFAR10N_LAYOUT)
    for candidate in (root / "CIFAR-10_human.pt", root / "cifar10n" / "CIFAR-10_human.pt"):
        if candidate.is_file():
            return candidate
    raise DataRootError(f"data root {root} has no CIFAR-10N label file: expected "
                        f"{CIFAR10N_LAYOUT}")


def read_cifar10n_labels(path) -> dict[str, np.ndarray]:
    """The label arrays of an official ``CIFAR-10_human.pt``, without running pickled code.

    Only numpy's array-reconstruction globals are allow-listed for ``torch.load(...,
    weights_only=True)``; a file that needs anything else is rejected.
    """
    path = Path(path)
    try:
        import torch
    except ImportError as exc:
        # torch is an optional extra: its absence is a missing install, not a bug
        raise DataRootError(f"reading the CIFAR-10N labels {path} needs torch, an optional "
                            "extra: pip install 'evalcal[real]'") from exc
    from numpy._core.multiarray import _reconstruct

    # numpy >= 1.25 pickles a dtype through its DType class, so the integer ones are needed.
    int_dtypes = [type(np.dtype(t)) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                              np.uint16, np.uint32, np.uint64)]
    allowed = [(_reconstruct, "numpy.core.multiarray._reconstruct"),
               (_reconstruct, "numpy._core.multiarray._reconstruct"), np.ndarray, np.dtype,
               *int_dtypes]
    try:
        with torch.serialization.safe_globals(allowed):
            raw = torch.load(path, weights_only=True, map_location="cpu")
    except FileNotFoundError:
        raise
    except Exception as exc:  # torch raises UnpicklingError, RuntimeError, zip errors...
        raise DataRootError(f"cannot read CIFAR-10N labels {path} safely ({exc})") from exc
    if not isinstance(raw, dict) or any(k not in raw for k in N_KEYS):
        keys = sorted(raw) if isinstance(raw, dict) else type(raw).__name__
        raise DataRootError(f"CIFAR-10N file {path} must be a dict with keys {N_KEYS}, got "
                            f"{keys}")
    labels = {}
    for key in N_KEYS:
        arr = np.asarray(raw[key])
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer) or (
                arr.size and (arr.min() < 0 or arr.max() > 9)):
            raise DataRootError(f"CIFAR-10N file {path}: {key} must be a 1-D integer array "
                                "of classes 0..9")
        labels[key] = arr.astype(np.int64)
    return labels


def find_ag_news_root(data_root) -> Path:
    """The folder holding AG News ``train.csv``/``test.csv`` (see AG_NEWS_LAYOUT)."""
    return _find(data_root, _AG_SUBDIRS,
                 lambda p: (p / "train.csv").is_file() and (p / "test.csv").is_file(),
                 AG_NEWS_LAYOUT)
