"""Tiny on-disk datasets in every supported layout, written fresh into tmp_path."""

from __future__ import annotations

import csv
import pickle
from pathlib import Path

import numpy as np
import pytest

CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
           "truck")
N_TRAIN, N_TEST = 40, 20


@pytest.fixture(scope="session")
def cifar_arrays():
    """(train_x, train_y, test_x, test_y) of a tiny CIFAR-like set, labels not sorted."""
    rng = np.random.default_rng(1234)
    # Smooth-ish images so a tiny CNN can learn something from them.
    def images(labels):
        base = rng.integers(0, 256, size=(10, 1, 1, 3))
        noise = rng.integers(-30, 31, size=(len(labels), 32, 32, 3))
        return np.clip(base[labels] + noise, 0, 255).astype(np.uint8)

    train_y = rng.permutation(np.arange(N_TRAIN) % 10).astype(np.int64)
    test_y = rng.permutation(np.arange(N_TEST) % 10).astype(np.int64)
    return images(train_y), train_y, images(test_y), test_y


def write_image_folder(root: Path, arrays, ext: str = "png") -> Path:
    from PIL import Image

    train_x, train_y, test_x, test_y = arrays
    for split, xs, ys in (("train", train_x, train_y), ("test", test_x, test_y)):
        for i, (img, label) in enumerate(zip(xs, ys, strict=True)):
            folder = root / split / CLASSES[label]
            folder.mkdir(parents=True, exist_ok=True)
            Image.fromarray(img).save(folder / f"{i:05d}.{ext}")
    return root


def write_batches(root: Path, arrays) -> Path:
    train_x, train_y, test_x, test_y = arrays
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)

    def dump(name, xs, ys):
        entry = {"data": xs.transpose(0, 3, 1, 2).reshape(len(xs), -1), "labels": list(map(
            int, ys))}
        with open(folder / name, "wb") as fh:
            pickle.dump(entry, fh, protocol=2)

    for b, part in enumerate(np.array_split(np.arange(len(train_y)), 5), start=1):
        dump(f"data_batch_{b}", train_x[part], train_y[part])
    dump("test_batch", test_x, test_y)
    return root


def write_cifar10n(path: Path, clean: np.ndarray, seed: int = 7) -> Path:
    import torch

    rng = np.random.default_rng(seed)
    labels = {"clean_label": clean.astype(np.int64)}
    for key in ("aggre_label", "worse_label", "random_label1", "random_label2",
                "random_label3"):
        noisy = clean.copy()
        flip = rng.random(len(clean)) < 0.3
        noisy[flip] = rng.integers(0, 10, flip.sum())
        labels[key] = noisy.astype(np.int64)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(labels, path)
    return path


AG_ROWS = [
    ("1", "Talks resume in Geneva", "Diplomats met again on Monday to discuss the treaty."),
    ("2", "Yankees win again", "The Yankees beat the Red Sox 5-3 in a tense game."),
    ("3", "Stocks rally on earnings", "Shares rose as quarterly profits beat forecasts."),
    ("4", "New chip doubles speed", "A \\new processor from Intel doubles the speed.\\"),
]


def write_ag_news(root: Path, n_train: int = 64, n_test: int = 16) -> Path:
    rng = np.random.default_rng(3)
    root.mkdir(parents=True, exist_ok=True)
    for name, n in (("train.csv", n_train), ("test.csv", n_test)):
        with open(root / name, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, quoting=csv.QUOTE_ALL)
            for i in range(n):
                cls, title, desc = AG_ROWS[i % 4]
                extra = " ".join(f"w{int(v)}" for v in rng.integers(0, 30, 5))
                writer.writerow([cls, title, f"{desc} {extra}"])
    return root


@pytest.fixture
def cifar_folder(tmp_path, cifar_arrays):
    return write_image_folder(tmp_path / "cifar10-png", cifar_arrays)


@pytest.fixture
def cifar_batches(tmp_path, cifar_arrays):
    return write_batches(tmp_path / "cifar10-batches", cifar_arrays)


@pytest.fixture
def shared_like_root(tmp_path, cifar_arrays):
    """A parent root laid out like ../shared/data: cifar10-jpeg/, cifar10n/, ag_news-mini/."""
    root = tmp_path / "data"
    write_image_folder(root / "cifar10-jpeg", cifar_arrays, ext="jpg")
    write_cifar10n(root / "cifar10n" / "CIFAR-10_human.pt", cifar_arrays[1])
    write_ag_news(root / "ag_news-mini")
    return root


@pytest.fixture
def cifar10n_writer():
    """``write_cifar10n(path, clean_labels)``, for tests that rewrite the label file."""
    return write_cifar10n


@pytest.fixture
def ag_root(tmp_path):
    return write_ag_news(tmp_path / "ag")
