"""The run store: round trip, compactness, atomic writes, corruption and mismatch detection."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from real_runs import store  # noqa: E402

pytestmark = pytest.mark.torch

N = 21  # not a multiple of 8, to exercise the bit packing tail


def make_record(seed=0, arm="baseline", scenario=None, dataset="cifar10", profile="cpu",
                config_hash="c0", base_config_hash="c0", fingerprint="d0", n=N):
    rng = np.random.default_rng(seed)
    pred = rng.integers(0, 10, n).astype(np.uint8)
    correct = rng.random(n) < 0.7
    return store.RunRecord(
        dataset=dataset, profile=profile, scenario=scenario, arm=arm, seed=seed,
        correct=correct, predictions=pred, epoch_accuracy=np.array([0.5, correct.mean()]),
        config={"lr": 0.1}, config_hash=config_hash, base_config_hash=base_config_hash,
        data_fingerprint=fingerprint, environment={"torch": torch.__version__},
        wall_time_s=1.5, train_time_s=1.0, train_examples=100, created_utc="now")


def put(root, rec):
    path = store.record_path(root, rec.dataset, rec.profile, rec.arm, rec.scenario, rec.seed)
    return store.write_record(path, rec)


def test_round_trip_keeps_everything(tmp_path):
    rec = make_record(seed=3, arm="variant", scenario="S1", base_config_hash="c0",
                      config_hash="c1")
    path = put(tmp_path, rec)
    assert path == tmp_path / "cifar10" / "cpu" / "S1" / "seed-00003.npz"
    got = store.read_record(path)
    np.testing.assert_array_equal(got.correct, rec.correct)
    np.testing.assert_array_equal(got.predictions, rec.predictions)
    np.testing.assert_array_equal(got.epoch_accuracy, rec.epoch_accuracy)
    assert got.final_accuracy == pytest.approx(rec.correct.mean())
    assert (got.config, got.config_hash, got.base_config_hash, got.seed, got.scenario) == (
        {"lr": 0.1}, "c1", "c0", 3, "S1")
    assert got.predictions.dtype == np.uint8
    assert not list(path.parent.glob(".*tmp"))  # no temporary file left behind


def test_record_is_compact_and_pickle_free(tmp_path):
    path = put(tmp_path, make_record(n=10_000))
    assert path.stat().st_size < 20_000  # 10,000 bits + 10,000 labels + metadata
    with np.load(path, allow_pickle=False) as npz:
        assert npz["correct_packed"].dtype == np.uint8 and npz["correct_packed"].size == 1250
        assert int(npz["format_version"]) == store.FORMAT_VERSION
        assert json.loads(str(npz["meta"]))["arm"] == "baseline"


def test_truncated_record_is_reported(tmp_path):
    path = put(tmp_path, make_record())
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(store.CorruptRecordError, match=str(path)):
        store.read_record(path)


def test_tampered_payload_fails_the_checksum(tmp_path):
    path = put(tmp_path, make_record())
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["predictions"] = (arrays["predictions"] + 1).astype(np.uint8)
    np.savez_compressed(path, **arrays)
    with pytest.raises(store.CorruptRecordError, match="checksum"):
        store.read_record(path)


def test_other_format_version_is_refused(tmp_path):
    path = put(tmp_path, make_record())
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["format_version"] = np.int64(99)
    np.savez_compressed(path, **arrays)
    with pytest.raises(store.CorruptRecordError, match="format_version 99"):
        store.read_record(path)


def test_misplaced_record_is_a_mismatch(tmp_path):
    src = put(tmp_path, make_record(seed=1))
    dst = store.record_path(tmp_path, "cifar10", "cpu", "baseline", None, 2)
    dst.write_bytes(src.read_bytes())
    with pytest.raises(store.CorruptRecordError, match="mismatched"):
        store.read_expected(dst, dataset="cifar10", profile="cpu", arm="baseline",
                            scenario=None, seed=2)


def test_failed_write_leaves_no_record(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(store.np, "savez_compressed", boom)
    path = store.record_path(tmp_path, "cifar10", "cpu", "baseline", None, 0)
    with pytest.raises(OSError, match="disk full"):
        store.write_record(path, make_record())
    assert not path.exists() and not list(path.parent.iterdir())


def test_load_pairs_aligns_by_seed_and_skips_unpaired(tmp_path):
    for seed in (4, 0, 2):
        put(tmp_path, make_record(seed=seed))
    for seed in (2, 0, 9):  # seed 9 has no baseline, seed 4 no variant
        put(tmp_path, make_record(seed=seed, arm="variant", scenario="S1", config_hash="c1"))
    base, var = store.load_pairs(tmp_path, "cifar10", "S1")
    assert base.shape == var.shape == (2, N) and base.dtype == bool
    np.testing.assert_array_equal(base[1], store.read_record(
        store.record_path(tmp_path, "cifar10", "cpu", "baseline", None, 2)).correct)
    np.testing.assert_array_equal(var[0], make_record(seed=0).correct)
    empty = store.load_pairs(tmp_path, "cifar10", "S2")
    assert empty[0].shape == (0, 0)


def test_load_pairs_detects_config_and_data_mismatch(tmp_path):
    put(tmp_path, make_record(seed=0))
    put(tmp_path, make_record(seed=1, config_hash="other", base_config_hash="other"))
    for seed in (0, 1):
        put(tmp_path, make_record(seed=seed, arm="variant", scenario="S1", config_hash="c1"))
    with pytest.raises(store.CorruptRecordError, match="baseline config differs"):
        store.load_pairs(tmp_path, "cifar10", "S1")
    put(tmp_path, make_record(seed=1))
    put(tmp_path, make_record(seed=1, arm="variant", scenario="S1", config_hash="c1",
                              fingerprint="d9"))
    with pytest.raises(store.CorruptRecordError, match="different data"):
        store.load_pairs(tmp_path, "cifar10", "S1")


def test_load_pairs_needs_profile_when_ambiguous(tmp_path):
    put(tmp_path, make_record(profile="cpu"))
    put(tmp_path, make_record(profile="paper"))
    with pytest.raises(ValueError, match="profile must be given"):
        store.load_pairs(tmp_path, "cifar10", "S1")
    base, _ = store.load_pairs(tmp_path, "cifar10", "S1", profile="paper")
    assert base.shape == (0, 0)


def test_load_pairs_with_explicit_missing_seed_fails(tmp_path):
    put(tmp_path, make_record(seed=0))
    with pytest.raises(FileNotFoundError, match="seed-00000"):
        store.load_pairs(tmp_path, "cifar10", "S1", seeds=[0])
