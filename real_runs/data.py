"""Loaders for the real datasets: CIFAR-10, CIFAR-10N and AG News.

All loaders return a :class:`Dataset` of numpy arrays in canonical order. A data root may
be the dataset's own folder or a parent holding it under a conventional name (the layout of
``../shared/data`` beside the checkout): see :data:`CIFAR10_LAYOUT`, :data:`CIFAR10N_LAYOUT` and
:data:`AG_NEWS_LAYOUT`, found and read by :mod:`real_runs.sources` and named here too.
"""

from __future__ import annotations

import csv
import hashlib
import io
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalcal_core.validate import InvalidParameterError
from real_runs import pack_data, text
from real_runs.config import DEFAULT_LABEL_SET, LABEL_SETS
from real_runs.sources import (
    AG_NEWS_CLASSES,
    AG_NEWS_LAYOUT,  # noqa: F401 - part of this module's documented names
    CIFAR10_CLASSES,
    CIFAR10_LAYOUT,
    CIFAR10_TRAIN_SIZE,
    CIFAR10N_LAYOUT,  # noqa: F401 - part of this module's documented names
    CIFAR_SUBDIRS,
    LABEL_KEYS,
    DataRootError,
    find_ag_news_root,
    find_cifar10_root,
    find_cifar10n_file,
    is_cifar_root,
    read_cifar10n_labels,
    save_npz_atomic,
    scan_image_split,
)


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded dataset in canonical order.

    Attributes
    ----------
    name : str
        ``"cifar10"``, ``"cifar10n"`` or ``"ag_news"``.
    kind : str
        ``"image"`` (``*_x`` uint8, shape (N, 32, 32, 3)) or ``"text"`` (``*_x`` int32 token
        ids, shape (N, max_len), 0 = PAD).
    train_x, train_y, test_x, test_y : numpy.ndarray
        Labels are int64 class indices; ``train_y`` are the labels trained on (noisy for
        CIFAR-10N), ``test_y`` are always clean.
    train_clean_y : numpy.ndarray
        Clean training labels (equal to ``train_y`` except for CIFAR-10N).
    classes : tuple of str
    vocab : tuple of str or None
        Token strings by id (text only).
    source : str
        Where the data was read from.
    """

    name: str
    kind: str
    train_x: np.ndarray
    train_y: np.ndarray
    train_clean_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    classes: tuple
    vocab: tuple | None = None
    source: str = ""

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def fingerprint(self) -> str:
        """SHA-256 (hex) over all arrays: identifies the exact data a run was trained on."""
        digest = hashlib.sha256()
        for arr in (self.train_x, self.train_y, self.train_clean_y, self.test_x, self.test_y):
            arr = np.ascontiguousarray(arr)
            digest.update(f"{arr.dtype}{arr.shape}".encode())
            digest.update(arr.tobytes())
        return digest.hexdigest()


# ---------------------------------------------------------------- CIFAR-10, python batches

class _NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickler that can rebuild numpy arrays and nothing else (no arbitrary code)."""

    # _codecs.encode is how python 3 protocol-2 pickles store bytes; it only encodes text.
    _ALLOWED = {("_codecs", "encode"), ("numpy.core.multiarray", "_reconstruct"),
                ("numpy._core.multiarray", "_reconstruct"),
                ("numpy", "ndarray"), ("numpy", "dtype")}

    def find_class(self, module, name):
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed")
        import codecs

        from numpy._core.multiarray import _reconstruct

        return {"_reconstruct": _reconstruct, "ndarray": np.ndarray, "dtype": np.dtype,
                "encode": codecs.encode}[name]


def _read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        with open(path, "rb") as fh:
            entry = _NumpyOnlyUnpickler(fh, encoding="latin1").load()
        entry = {k.decode() if isinstance(k, bytes) else k: v for k, v in entry.items()}
        data = np.asarray(entry["data"], dtype=np.uint8)
        labels = np.asarray(entry.get("labels", entry.get("fine_labels")), dtype=np.int64)
        images = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    except FileNotFoundError:
        raise DataRootError(f"missing CIFAR-10 batch {path}; expected {CIFAR10_LAYOUT}"
                            ) from None
    except (pickle.UnpicklingError, EOFError, AttributeError, KeyError, TypeError,
            ValueError) as exc:
        raise DataRootError(f"malformed CIFAR-10 batch {path} ({exc}); expected "
                            f"{CIFAR10_LAYOUT}") from exc
    if len(labels) != len(images):
        raise DataRootError(f"malformed CIFAR-10 batch {path}: {len(images)} images, "
                            f"{len(labels)} labels")
    return np.ascontiguousarray(images), labels


def _read_batches(folder: Path):
    parts = [_read_batch(folder / f"data_batch_{i}") for i in range(1, 6)]
    train_x = np.concatenate([p[0] for p in parts])
    train_y = np.concatenate([p[1] for p in parts])
    test_x, test_y = _read_batch(folder / "test_batch")
    return train_x, train_y, test_x, test_y


# ---------------------------------------------------------------- CIFAR-10, ImageFolder

def _decode(root: Path, entries) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    out = np.empty((len(entries), 32, 32, 3), dtype=np.uint8)
    for i, (_, _, rel, _) in enumerate(entries):
        try:
            with Image.open(root / rel) as img:
                arr = np.asarray(img.convert("RGB"))
        except (OSError, UnidentifiedImageError) as exc:
            raise DataRootError(f"cannot decode image {root / rel} ({exc})") from exc
        if arr.shape != (32, 32, 3):
            raise DataRootError(f"image {root / rel} is {arr.shape[1]}x{arr.shape[0]}, "
                                "expected 32x32 RGB")
        out[i] = arr
    return out


def _read_image_folder(root: Path, cache_dir):
    train, test = scan_image_split(root / "train"), scan_image_split(root / "test")
    # The cache key covers every file's name, class and size, so an edited tree is
    # re-decoded; decoding 60,000 JPEGs takes ~20 s, reading the cache well under 1 s.
    key = hashlib.sha256(repr((train, test)).encode()).hexdigest()[:20]
    cache = Path(cache_dir) / f"cifar10-images-{key}.npz" if cache_dir is not None else None
    if cache is not None and cache.is_file():
        try:
            with open(cache, "rb") as fh, np.load(fh, allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in ("train_x", "train_y", "test_x", "test_y")}
            if len(arrays["train_x"]) == len(train) and len(arrays["test_x"]) == len(test):
                return arrays["train_x"], arrays["train_y"], arrays["test_x"], arrays["test_y"]
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            pass  # a damaged cache is derived data: rebuild it below
    arrays = {
        "train_x": _decode(root, train), "train_y": np.array([e[1] for e in train], np.int64),
        "test_x": _decode(root, test), "test_y": np.array([e[1] for e in test], np.int64),
    }
    if cache is not None:
        save_npz_atomic(cache, **arrays)
    return arrays["train_x"], arrays["train_y"], arrays["test_x"], arrays["test_y"]


def load_cifar10(data_root, cache_dir=None, download: bool = False) -> Dataset:
    """CIFAR-10 as uint8 images in canonical order.

    Parameters
    ----------
    data_root : path-like
        See :data:`CIFAR10_LAYOUT`.
    cache_dir : path-like, optional
        Where decoded ImageFolder trees are cached as ``.npz``; None decodes every time.
    download : bool, default False
        If no CIFAR-10 is found, download the python batches into ``data_root`` with
        torchvision (needs internet).

    Returns
    -------
    Dataset
        ``kind="image"``; 50,000 training and 10,000 test images for the full release.
    """
    root = Path(data_root)
    if download and not (root.is_dir() and any(is_cifar_root(root / s if s else root)
                                               for s in CIFAR_SUBDIRS)):
        import torchvision

        root.mkdir(parents=True, exist_ok=True)
        torchvision.datasets.CIFAR10(str(root), train=True, download=True)
        torchvision.datasets.CIFAR10(str(root), train=False, download=True)
    folder = find_cifar10_root(root)
    if (folder / "cifar-10-batches-py").is_dir():
        train_x, train_y, test_x, test_y = _read_batches(folder / "cifar-10-batches-py")
        source = str(folder / "cifar-10-batches-py")
    else:
        train_x, train_y, test_x, test_y = _read_image_folder(folder, cache_dir)
        source = str(folder)
    for name, labels in (("training", train_y), ("test", test_y)):
        if len(labels) == 0 or labels.min() < 0 or labels.max() > 9:
            raise DataRootError(f"CIFAR-10 under {folder} has no {name} images or labels "
                                "outside 0..9")
    return Dataset(name="cifar10", kind="image", train_x=train_x, train_y=train_y,
                   train_clean_y=train_y, test_x=test_x, test_y=test_y,
                   classes=CIFAR10_CLASSES, source=source)


# ---------------------------------------------------------------- CIFAR-10N

def load_cifar10n(data_root, label_set: str = DEFAULT_LABEL_SET, cache_dir=None,
                  download: bool = False) -> Dataset:
    """CIFAR-10 images with CIFAR-10N human training labels and clean test labels.

    Parameters
    ----------
    data_root : path-like
        See :data:`CIFAR10N_LAYOUT`.
    label_set : {"aggre", "worse", "random1", "random2", "random3"}
        Which human labels to train on (noise 9.0 %, 40.2 %, 17.2 %, 18.1 %, 17.6 %).
    cache_dir, download
        As for :func:`load_cifar10`.

    Notes
    -----
    The label file must have one entry per CIFAR-10 training image (50,000 for the real
    release) and its ``clean_label`` must equal the CIFAR-10 training labels, which proves
    both are in the same (canonical) order.
    """
    if label_set not in LABEL_SETS:
        raise InvalidParameterError(f"label_set must be one of {LABEL_SETS}, got {label_set!r}")
    label_file = find_cifar10n_file(data_root)
    labels = read_cifar10n_labels(label_file)
    images = load_cifar10(data_root, cache_dir=cache_dir, download=download)
    n = len(images.train_y)
    lengths = {k: len(v) for k, v in labels.items()}
    if set(lengths.values()) != {n}:
        raise DataRootError(f"CIFAR-10N file {label_file} has label arrays of lengths "
                            f"{lengths}; expected {n} (the CIFAR-10 training set, "
                            f"{CIFAR10_TRAIN_SIZE} for the real release)")
    if not np.array_equal(labels["clean_label"], images.train_y):
        bad = int((labels["clean_label"] != images.train_y).sum())
        raise DataRootError(f"CIFAR-10N clean_label of {label_file} differs from the CIFAR-10 "
                            f"training labels at {bad} of {n} positions: the files are not "
                            "in the same canonical order")
    return Dataset(name="cifar10n", kind="image", train_x=images.train_x,
                   train_y=labels[LABEL_KEYS[label_set]], train_clean_y=images.train_y,
                   test_x=images.test_x, test_y=images.test_y, classes=CIFAR10_CLASSES,
                   source=f"{images.source} + {label_file} ({label_set})")


# ---------------------------------------------------------------- AG News

def _read_ag_csv(path: Path, content: str | None = None
                 ) -> tuple[list[list[str]], np.ndarray]:
    """Documents and labels of an AG News CSV file (or of its ``content``, named ``path``)."""
    docs, labels = [], []
    with (open(path, newline="", encoding="utf-8") if content is None
          else io.StringIO(content, newline="")) as fh:
        for line_no, row in enumerate(csv.reader(fh), start=1):
            if len(row) != 3 or row[0].strip() not in ("1", "2", "3", "4"):
                raise DataRootError(f"malformed AG News file {path} at row {line_no}: expected "
                                    f"3 fields (class 1-4, title, description), got {row[:3]!r}")
            labels.append(int(row[0]) - 1)
            docs.append(text.tokenize(row[1] + " " + row[2]))
    if not docs:
        raise DataRootError(f"AG News file {path} is empty")
    return docs, np.array(labels, dtype=np.int64)


def load_ag_news(data_root, vocab_size: int = 20_000, max_len: int = 64) -> Dataset:
    """AG News as padded token ids.

    Parameters
    ----------
    data_root : path-like
        See :data:`AG_NEWS_LAYOUT`.
    vocab_size : int, default 20000
        Number of most frequent training words kept; others map to UNK (id 1).
    max_len : int, default 64
        Padded/truncated length in tokens of title + description.

    Returns
    -------
    Dataset
        ``kind="text"``; ``vocab`` has ``vocab_size + 2`` entries (PAD, UNK first).
    """
    folder = find_ag_news_root(data_root)
    try:
        train_docs, train_y = _read_ag_csv(folder / "train.csv")
        test_docs, test_y = _read_ag_csv(folder / "test.csv")
    except UnicodeDecodeError as exc:
        raise DataRootError(f"AG News files under {folder} are not UTF-8 text ({exc})") from exc
    return _ag_dataset(train_docs, train_y, test_docs, test_y, vocab_size, max_len,
                       str(folder))


def _ag_dataset(train_docs, train_y, test_docs, test_y, vocab_size, max_len, source):
    vocab = text.build_vocab(train_docs, vocab_size)
    return Dataset(name="ag_news", kind="text",
                   train_x=text.encode(train_docs, vocab, max_len), train_y=train_y,
                   train_clean_y=train_y, test_x=text.encode(test_docs, vocab, max_len),
                   test_y=test_y, classes=AG_NEWS_CLASSES, vocab=vocab, source=source)


# ---------------------------------------------------------------- data pack

def load_from_pack(name: str, pack, *, label_set: str | None = None,
                   vocab_size: int | None = None, max_len: int | None = None,
                   cache_dir=None) -> Dataset:
    """Load dataset ``name`` from a data pack (see :mod:`real_runs.pack_data`).

    Gives the same arrays (and :meth:`Dataset.fingerprint`) as loading the folder the pack
    was built from; the label checks of :func:`load_cifar10n` apply.
    """
    if name == "ag_news":
        train_csv, test_csv = pack_data.ag_news_csv_from_pack(pack)
        train_docs, train_y = _read_ag_csv(Path(f"{pack}:train.csv"), train_csv)
        test_docs, test_y = _read_ag_csv(Path(f"{pack}:test.csv"), test_csv)
        return _ag_dataset(train_docs, train_y, test_docs, test_y, vocab_size or 20_000,
                           max_len or 64, f"{pack}:ag_news")
    if name not in ("cifar10", "cifar10n"):
        raise InvalidParameterError("dataset must be one of ('cifar10', 'cifar10n', 'ag_news'), "
                                    f"got {name!r}")
    arrays, source = pack_data.load_cifar_from_pack(pack, cache_dir)
    train_y = arrays["train_y"]
    common = dict(kind="image", train_x=arrays["train_x"], train_clean_y=train_y,
                  test_x=arrays["test_x"], test_y=arrays["test_y"], classes=CIFAR10_CLASSES)
    if name == "cifar10":
        return Dataset(name="cifar10", train_y=train_y, source=source, **common)
    label_set = label_set or DEFAULT_LABEL_SET
    if label_set not in LABEL_SETS:
        raise InvalidParameterError(f"label_set must be one of {LABEL_SETS}, got {label_set!r}")
    if not np.array_equal(arrays["n_clean_label"], train_y):
        raise DataRootError(f"CIFAR-10N clean_label in pack {pack} differs from its CIFAR-10 "
                            "training labels")
    return Dataset(name="cifar10n", train_y=arrays["n_" + LABEL_KEYS[label_set]],
                   source=f"{source} ({label_set})", **common)


def load_dataset(name: str, data_root, *, label_set: str | None = None,
                 vocab_size: int | None = None, max_len: int | None = None, cache_dir=None,
                 download: bool = False) -> Dataset:
    """Load dataset ``name`` (``cifar10``, ``cifar10n`` or ``ag_news``) from ``data_root``.

    ``data_root`` may also be a data-pack folder (:mod:`real_runs.pack_data`).
    """
    pack = pack_data.find_pack(data_root) if Path(data_root).exists() else None
    if pack is not None:
        return load_from_pack(name, pack, label_set=label_set, vocab_size=vocab_size,
                              max_len=max_len, cache_dir=cache_dir)
    if name == "cifar10":
        return load_cifar10(data_root, cache_dir=cache_dir, download=download)
    if name == "cifar10n":
        return load_cifar10n(data_root, label_set or DEFAULT_LABEL_SET, cache_dir=cache_dir,
                             download=download)
    if name == "ag_news":
        return load_ag_news(data_root, vocab_size=vocab_size or 20_000, max_len=max_len or 64)
    raise InvalidParameterError("dataset must be one of ('cifar10', 'cifar10n', 'ag_news'), got "
                                f"{name!r}")


def load_for_config(config, data_root, cache_dir=None, download: bool = False) -> Dataset:
    """Load the data a :class:`~real_runs.config.RunConfig` trains on."""
    return load_dataset(config.dataset, data_root, label_set=config.label_set,
                        vocab_size=config.vocab_size, max_len=config.max_len,
                        cache_dir=cache_dir, download=download)
