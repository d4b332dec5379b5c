"""Data loaders on tiny datasets written by the tests, in every supported layout."""

import os
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from real_runs import data as rd  # noqa: E402

pytestmark = pytest.mark.torch


def test_both_cifar_layouts_give_the_same_canonical_arrays(cifar_folder, cifar_batches,
                                                           cifar_arrays):
    a = rd.load_cifar10(cifar_folder)
    b = rd.load_cifar10(cifar_batches)
    for got in (a, b):
        np.testing.assert_array_equal(got.train_x, cifar_arrays[0])
        np.testing.assert_array_equal(got.train_y, cifar_arrays[1])
        np.testing.assert_array_equal(got.test_x, cifar_arrays[2])
        np.testing.assert_array_equal(got.test_y, cifar_arrays[3])
        assert got.train_x.dtype == np.uint8 and got.train_x.shape == (40, 32, 32, 3)
    assert a.fingerprint() == b.fingerprint()


def test_decoded_images_are_cached_as_npz_and_reused(cifar_folder, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = rd.load_cifar10(cifar_folder, cache_dir=cache)
    files = list(cache.glob("*.npz"))
    assert len(files) == 1
    with np.load(files[0], allow_pickle=False) as npz:  # no pickle inside
        assert set(npz.files) == {"train_x", "train_y", "test_x", "test_y"}

    def no_decode(*args, **kwargs):
        raise AssertionError("decoded again despite the cache")

    monkeypatch.setattr(rd, "_decode", no_decode)
    second = rd.load_cifar10(cifar_folder, cache_dir=cache)
    assert second.fingerprint() == first.fingerprint()


def test_parent_root_with_conventional_subfolders(shared_like_root):
    cifar = rd.load_cifar10(shared_like_root)
    assert cifar.train_x.shape == (40, 32, 32, 3)
    noisy = rd.load_cifar10n(shared_like_root, "worse")
    np.testing.assert_array_equal(noisy.train_clean_y, cifar.train_y)
    np.testing.assert_array_equal(noisy.test_y, cifar.test_y)  # evaluated on clean labels
    assert (noisy.train_y != noisy.train_clean_y).any()
    assert rd.load_ag_news(shared_like_root).name == "ag_news"


def test_cifar10n_label_sets_are_distinct_arrays(shared_like_root):
    sets = {s: rd.load_cifar10n(shared_like_root, s).train_y for s in ("aggre", "random1")}
    assert not np.array_equal(sets["aggre"], sets["random1"])
    with pytest.raises(ValueError, match="label_set must be one of"):
        rd.load_cifar10n(shared_like_root, "clean")


def test_cifar10n_rejects_wrong_length_and_other_order(shared_like_root, cifar_arrays,
                                                       cifar10n_writer):
    path = shared_like_root / "cifar10n" / "CIFAR-10_human.pt"
    cifar10n_writer(path, cifar_arrays[1][:-1])
    with pytest.raises(rd.DataRootError, match="lengths"):
        rd.load_cifar10n(shared_like_root)
    cifar10n_writer(path, np.roll(cifar_arrays[1], 1))
    with pytest.raises(rd.DataRootError, match="clean_label"):
        rd.load_cifar10n(shared_like_root)


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def test_cifar10n_loader_runs_no_pickled_code(shared_like_root, tmp_path):
    marker = tmp_path / "pwned"
    path = shared_like_root / "cifar10n" / "CIFAR-10_human.pt"
    torch.save({"clean_label": _Evil(str(marker))}, path)
    with pytest.raises(rd.DataRootError, match="safely"):
        rd.load_cifar10n(shared_like_root)
    assert not marker.exists()


def test_cifar_batches_loader_runs_no_pickled_code(cifar_batches, tmp_path):
    marker = tmp_path / "pwned"
    with open(cifar_batches / "cifar-10-batches-py" / "data_batch_1", "wb") as fh:
        pickle.dump({"data": _Evil(str(marker)), "labels": []}, fh)
    with pytest.raises(rd.DataRootError, match="data_batch_1"):
        rd.load_cifar10(cifar_batches)
    assert not marker.exists()


def test_ag_news_tokens_vocab_and_labels(ag_root):
    ds = rd.load_ag_news(ag_root, vocab_size=10, max_len=12)
    assert ds.kind == "text" and ds.train_x.shape == (64, 12) and ds.test_x.shape == (16, 12)
    assert ds.train_x.dtype == np.int32
    assert len(ds.vocab) == 12 and ds.vocab[:2] == ("<pad>", "<unk>")
    assert set(np.unique(ds.train_y)) == {0, 1, 2, 3}
    assert ds.train_x.max() < 12 and (ds.train_x == 1).any()  # rare words -> UNK
    assert rd.text.tokenize("A social\\network, after\\news #36;10") == [
        "a", "social", "network", "after", "news", "36", "10"]


def test_ag_news_malformed_row_names_file_and_row(ag_root):
    with open(ag_root / "test.csv", "a", encoding="utf-8") as fh:
        fh.write('"7","bad class","x"\n')
    with pytest.raises(rd.DataRootError, match=r"test\.csv at row 17"):
        rd.load_ag_news(ag_root)


@pytest.mark.parametrize("loader", [rd.load_cifar10, rd.load_cifar10n, rd.load_ag_news])
def test_missing_root_names_path_and_layout(tmp_path, loader):
    missing = tmp_path / "nope"
    with pytest.raises(FileNotFoundError, match="nope.*expected"):
        loader(missing)


@pytest.mark.parametrize("loader, layout", [(rd.load_cifar10, "cifar-10-batches-py"),
                                            (rd.load_cifar10n, "CIFAR-10_human.pt"),
                                            (rd.load_ag_news, "train.csv")])
def test_empty_root_names_expected_layout(tmp_path, loader, layout):
    with pytest.raises(rd.DataRootError, match=layout) as info:
        loader(tmp_path)
    assert str(tmp_path) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_image_folder_with_gap_in_indices_is_rejected(cifar_folder):
    victim = next((cifar_folder / "test").rglob("00003.png"))
    victim.rename(victim.with_name("00099.png"))
    with pytest.raises(rd.DataRootError, match="0..N-1"):
        rd.load_cifar10(cifar_folder)


def test_image_folder_with_stray_file_or_class_is_rejected(cifar_folder):
    (cifar_folder / "train" / "cat" / "notes.txt").write_text("hi")
    with pytest.raises(rd.DataRootError, match="notes.txt"):
        rd.load_cifar10(cifar_folder)
    (cifar_folder / "train" / "cat" / "notes.txt").unlink()
    (cifar_folder / "test" / "unicorn").mkdir()
    with pytest.raises(rd.DataRootError, match="unicorn"):
        rd.load_cifar10(cifar_folder)


def test_truncated_image_is_reported(cifar_folder):
    victim = next((cifar_folder / "train").rglob("00005.png"))
    victim.write_bytes(victim.read_bytes()[:20])
    with pytest.raises(rd.DataRootError, match="00005.png"):
        rd.load_cifar10(cifar_folder)


def test_load_dataset_rejects_unknown_name(tmp_path):
    with pytest.raises(ValueError, match="dataset must be one of"):
        rd.load_dataset("mnist", tmp_path)
