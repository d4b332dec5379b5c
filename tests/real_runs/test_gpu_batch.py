"""Data pack, GPU batch command and merging its records: all on the CPU, smoke profile."""

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from real_runs import gpu_batch, merge_records, pack_data, store  # noqa: E402
from real_runs.config import profile_config  # noqa: E402
from real_runs.data import load_dataset  # noqa: E402
from real_runs.sweep import plan_sweep  # noqa: E402

pytestmark = pytest.mark.torch
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def pack(shared_like_root, tmp_path):
    pack_data.build_pack(shared_like_root, tmp_path / "data_pack")
    return tmp_path / "data_pack"


def test_pack_command_leaves_a_whole_pack_and_a_marked_one_is_refused(shared_like_root,
                                                                      tmp_path, capsys):
    """The pack and its checksums are written under the incomplete marker; a pack folder
    still marked (a build cut off between the two files) is refused in one line."""
    out = tmp_path / "data_pack"
    assert pack_data.main(["--data-root", str(shared_like_root), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        ".lock", pack_data.SUMS_NAME, pack_data.PACK_NAME]
    assert pack_data.main(["--verify", str(out)]) == 0
    capsys.readouterr()
    (out / "INCOMPLETE").write_text("python -m real_runs.pack_data started then\n")
    assert pack_data.main(["--verify", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is marked incomplete" in err[0], err


@pytest.mark.parametrize("name", ["cifar10", "cifar10n", "ag_news"])
def test_pack_loads_the_same_arrays_as_the_folder(name, pack, shared_like_root, tmp_path):
    """Same data fingerprint from the pack (decoded with Pillow) as from the JPEG folder."""
    kw = {"max_len": 16} if name == "ag_news" else {}
    from_pack = load_dataset(name, pack, cache_dir=tmp_path / "cache", **kw)
    from_folder = load_dataset(name, shared_like_root, **kw)
    assert from_pack.fingerprint() == from_folder.fingerprint()
    if name != "ag_news":  # the second load reads the decoded cache
        again = load_dataset(name, pack, cache_dir=tmp_path / "cache")
        assert again.fingerprint() == from_pack.fingerprint() and "cache" in again.source


def test_a_corrupt_pack_is_refused_naming_the_checksum(pack):
    path = pack / pack_data.PACK_NAME
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    path.write_bytes(bytes(blob))
    with pytest.raises(pack_data.PackError, match="fails its checksum"):
        load_dataset("cifar10", pack)
    assert pack_data.main(["--verify", str(pack)]) == 2


def test_plan_file_and_its_validation(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"dataset": "cifar10", "scenarios": ["S0p", "S2"],
                                 "seeds": "0-2", "profile": "smoke"}]))
    (entry,) = gpu_batch.read_plan(plan)
    assert (entry.scenarios, entry.seeds, entry.profile) == (("S0p", "S2"), (0, 1, 2), "smoke")
    plan.write_text(json.dumps([{"dataset": "mnist", "scenarios": ["S1"], "seeds": "0"}]))
    with pytest.raises(ValueError, match="plan dataset must be one of"):
        gpu_batch.read_plan(plan)
    plan.write_text(json.dumps([{"dataset": "cifar10", "scenarios": [], "seeds": "0"}]))
    with pytest.raises(ValueError, match="plan scenarios must be a non-empty list"):
        gpu_batch.read_plan(plan)


@pytest.mark.parametrize("plan", sorted((REPO / "real_runs" / "plans").glob("*.json")),
                         ids=lambda p: p.name)
def test_committed_plans_are_valid(plan):
    entries = gpu_batch.read_plan(plan)
    assert entries and all(e.profile == "paper" for e in entries)


def test_estimator_never_plans_a_run_past_the_budget():
    runs = plan_sweep("cifar10", ["S1", "S2"], [0], "smoke", Path("."))
    base, s1, s2 = runs
    est = gpu_batch.RunTimeEstimator()
    assert est.fits(base, now=0.0, stop_at=1.0)  # nothing measured: the first runs start
    est.record(base, 10.0)
    assert est.expected(s1) == pytest.approx(11.0)  # same kind: longest x 1.1
    assert est.expected(s2) == pytest.approx(15.0)  # unmeasured kind (S2): x 1.5
    assert est.fits(s1, now=89.0, stop_at=100.0) and not est.fits(s1, now=89.1, stop_at=100.0)


def test_bundles_respect_shard_size(tmp_path):
    store_root = tmp_path / "store"
    for seed in range(5):
        p = store.record_path(store_root, "cifar10", "smoke", "baseline", None, seed)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(bytes(30_000))
    out = tmp_path / "out"
    out.mkdir()
    shards = gpu_batch.bundle_records(store_root, out, shard_bytes=80_000)
    assert len(shards) == 3 and all(s.stat().st_size <= 80_000 for s in shards)
    with pytest.raises(ValueError, match="at most 2 fit"):
        gpu_batch.bundle_records(store_root, out, shard_bytes=80_000, max_shards=2)


def _names(tar_paths):
    names = []
    for t in tar_paths:
        with tarfile.open(t) as tar:
            names += tar.getnames()
    return sorted(names)


def test_batch_then_merge_then_rerun_skips_everything(pack, tmp_path):
    """Two workers, S0 delta exactly 0 after the merge, idempotent merge, pool skipped."""
    out, pool = tmp_path / "out", tmp_path / "pool"
    entries = [gpu_batch.PlanEntry("cifar10", ("S0", "S2"), (0, 1), "smoke")]
    res = gpu_batch.run_batch(entries, pack=pack, out=out, budget_s=300, workers=2,
                              device="cpu", cache_dir=tmp_path / "cache", log=lambda m: None)
    assert res.error is None and len(res.finished) == 6 and res.not_started == 0
    tars = sorted(out.glob("records-*.tar"))
    assert len(_names(tars)) == 6 and "cifar10/smoke/S2/seed-00001.npz" in _names(tars)
    summary = json.loads((out / gpu_batch.SUMMARY).read_text())
    assert summary["final"] and summary["environment"]["device"] == "cpu"

    merged = merge_records.merge([*tars, out / gpu_batch.SUMMARY], pool)
    assert len(merged.added) == 6 and not merged.refused
    base, variant = store.load_pairs(pool, "cifar10", "S0")
    np.testing.assert_array_equal(base, variant)
    manifest = json.loads((pool / "manifest.json").read_text())
    assert len(manifest["records"]) == 6 and manifest["merges"][-1]["devices"] == ["cpu"]
    assert manifest["merges"][-1]["code_version_of_runs"] == [summary["code_version"]]

    again = merge_records.merge(tars, pool)
    assert (len(again.added), len(again.skipped)) == (0, 6)
    rerun = gpu_batch.run_batch(entries, pack=pack, out=tmp_path / "out2", budget_s=300,
                                workers=2, pool=pool, device="cpu",
                                cache_dir=tmp_path / "cache", log=lambda m: None)
    assert rerun.skipped_in_pool == 6 and rerun.finished == ()


def _record_bytes(tmp_path, seed=0, lr=None, **kw):
    rec = store.RunRecord(dataset="cifar10", profile="smoke", scenario=None, arm="baseline",
                          seed=seed, correct=np.array([True, False, True]),
                          predictions=np.array([1, 2, 3], np.uint8),
                          epoch_accuracy=np.array([2 / 3]), config={"lr": lr},
                          config_hash=kw.get("config_hash", "c0"),
                          base_config_hash=kw.get("config_hash", "c0"),
                          data_fingerprint=kw.get("data", "d0"))
    path = store.write_record(tmp_path / f"tmp-{seed}-{lr}.npz", rec)
    return path.read_bytes()


def _tar(path, members):
    import io

    with tarfile.open(path, "w") as tar:
        for name, blob in members:
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    return path


def test_merge_refuses_corrupt_misplaced_and_conflicting_records(tmp_path, capsys):
    good = _record_bytes(tmp_path, seed=0)
    corrupt = bytearray(_record_bytes(tmp_path, seed=1))
    # inside the compressed meta JSON (the last member), which payload_sha256 does not cover
    corrupt[corrupt.rfind(b"PK\x01\x02") - 3] ^= 0xFF
    bundle = _tar(tmp_path / "b.tar", [
        ("cifar10/smoke/baseline/seed-00000.npz", good),
        ("cifar10/smoke/baseline/seed-00001.npz", bytes(corrupt)),
        ("cifar10/smoke/baseline/seed-00002.npz", good),  # holds seed 0: misplaced
        ("../evil.npz", good),
    ])
    pool = tmp_path / "pool"
    code = merge_records.main([str(bundle), "--pool", str(pool)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 3
    assert all(line.startswith("merge_records: refused ") for line in err)
    assert "seed-00001" in err[0] and "mismatched" in err[1] and "evil" in err[2]
    assert (pool / "cifar10/smoke/baseline/seed-00000.npz").read_bytes() == good
    other = _tar(tmp_path / "c.tar", [
        ("cifar10/smoke/baseline/seed-00000.npz", _record_bytes(tmp_path, 0, lr=0.5)),
        ("cifar10/smoke/baseline/seed-00003.npz",
         _record_bytes(tmp_path, 3, config_hash="c9")),
    ])
    assert merge_records.main([str(other), "--pool", str(pool)]) == 1
    err = capsys.readouterr().err
    assert "different result" not in err  # same payload, other config field: same result
    assert "another baseline config" in err


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "real_runs.gpu_batch", "--pack",
                           str(tmp_path), "--out", str(tmp_path / "o"), "--budget-s", "60"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert ("The '--plan' option must be given, or else --dataset, --scenarios and --seeds "
            "together. Got none of them instead.") in proc.stderr
    assert profile_config("cifar10", "paper").data_path == "device"


def test_gpu_check_runs_on_the_cpu_and_reports(pack, tmp_path, capsys):
    """Consistency only: on the CPU the checks must pass and torchvision's bytes match."""
    from real_runs import gpu_check

    code = gpu_check.main(["--pack", str(pack), "--out", str(tmp_path), "--profile", "smoke",
                           "--steps", "2", "--subset", "32", "--device", "cpu"])
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and line["s0_delta_is_zero"] and line["s2_repeatable"]
    assert line["trivial_augment_min_identical"] == 1.0
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["speed_one_process"]["train_images_per_s_baseline"] > 0


def test_merge_of_a_folder_without_records_is_refused(tmp_path, capsys):
    """An empty or wrong folder is a wrong path, not 'would add 0' with exit 0."""
    (tmp_path / "empty").mkdir()
    code = merge_records.main([str(tmp_path / "empty"), "--dry-run", "--pool",
                               str(tmp_path / "pool")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "holds no run record" in err
