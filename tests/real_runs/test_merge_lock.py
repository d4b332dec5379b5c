"""Two merges into one run store at once: both are recorded, or the second fails cleanly.

The race being closed: each merge reads ``manifest.json``, appends its ``merges`` entry and
writes the file back; without a lock the second write drops the first entry while both
merges exit 0. No torch needed: the records are synthetic.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from evalcal_core.outdir import locked_out
from real_runs import manifest, merge_records
from real_runs.store import RunRecord, record_path, write_record

REPO = Path(__file__).resolve().parents[2]


def _source_store(root: Path, seeds) -> Path:
    """A store with baseline and S1 records of ``seeds`` (cifar10, profile ``fixture``)."""
    rng = np.random.default_rng(0)
    for seed in seeds:
        for arm, scenario in (("baseline", None), ("variant", "S1")):
            correct = rng.random(50) < 0.8
            record = RunRecord(
                dataset="cifar10", profile="fixture", scenario=scenario, arm=arm, seed=seed,
                correct=correct, predictions=correct.astype(np.uint8),
                epoch_accuracy=np.array([correct.mean()]), config={"arm": arm},
                config_hash=f"h-{scenario}", base_config_hash="h-None",
                data_fingerprint="synthetic", created_utc="2026-11-24T00:00:00Z")
            write_record(record_path(root, "cifar10", "fixture", arm, scenario, seed), record)
    return root


def _merges(pool: Path) -> list:
    return json.loads((pool / "manifest.json").read_text())["merges"]


@pytest.fixture
def sources(tmp_path):
    return (_source_store(tmp_path / "a", [0, 1, 2]), _source_store(tmp_path / "b", [3, 4, 5]))


def test_two_merges_in_threads_both_reach_the_history(sources, tmp_path, monkeypatch):
    """The manifest write is slowed down so that, without the lock, both merges read the
    old manifest before either writes it (checked: the unlocked code keeps one entry)."""
    write_manifest = manifest.write_manifest

    def slow_write_manifest(*args, **kwargs):
        time.sleep(0.5)
        return write_manifest(*args, **kwargs)

    monkeypatch.setattr(manifest, "write_manifest", slow_write_manifest)
    pool = tmp_path / "pool"
    start = threading.Barrier(2)
    results, errors = {}, []

    def run(name, source):
        try:
            start.wait()
            results[name] = merge_records.merge([source], pool, wait_s=30)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(name, src))
               for name, src in zip("ab", sources)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert all(len(r.added) == 6 and not r.refused for r in results.values())
    merges = _merges(pool)
    assert len(merges) == 2 and [m["added"] for m in merges] == [6, 6]
    assert len(json.loads((pool / "manifest.json").read_text())["records"]) == 12


def test_two_merge_processes_at_once_both_reach_the_history(sources, tmp_path):
    pool = tmp_path / "pool"
    procs = [subprocess.Popen([sys.executable, "-m", "real_runs.merge_records", str(src),
                               "--pool", str(pool)], cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for src in sources]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == "added 6, already present 0, refused 0"
        # the only stderr line allowed: the wait of the merge that came second
        assert all(line.startswith("merge_records: waiting for another merge")
                   for line in err.splitlines()), err
    assert [m["added"] for m in _merges(pool)] == [6, 6]


def test_the_same_records_merged_twice_at_once_are_added_once(sources, tmp_path):
    pool = tmp_path / "pool"
    results = []
    threads = [threading.Thread(target=lambda: results.append(
        merge_records.merge([sources[0]], pool, wait_s=30))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(len(r.added) for r in results) == [0, 6]
    assert sorted(len(r.skipped) for r in results) == [0, 6]
    assert [m["added"] for m in _merges(pool)] == [6]


def test_a_held_store_makes_the_merge_fail_in_one_line_writing_nothing(sources, tmp_path,
                                                                        capsys):
    """A training run holds the store's lock (``locked_out``); ``--wait`` runs out."""
    pool = tmp_path / "pool"
    with locked_out(pool):
        t0 = time.monotonic()
        code = merge_records.main([str(sources[0]), "--pool", str(pool), "--wait", "0.3"])
        elapsed = time.monotonic() - t0
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and 0.3 <= elapsed < 10
    assert err[0] == f"merge_records: waiting for another merge or training run writing to {pool}"
    assert len(err) == 2 and err[1].startswith(
        f"python -m real_runs.merge_records: error: another merge or training run is "
        f"writing to {pool}"), err
    assert sorted(p.name for p in pool.iterdir()) == [".lock"]


@pytest.mark.parametrize("wait", ["-1", "nan", "inf"])
def test_bad_wait_is_one_line(wait, sources, tmp_path, capsys):
    code = merge_records.main([str(sources[0]), "--pool", str(tmp_path / "pool"), "--wait", wait])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "'--wait'" in err[0], err
    assert not (tmp_path / "pool").exists()


def test_pool_that_is_a_file_is_one_line(sources, tmp_path, capsys):
    pool = tmp_path / "pool"
    pool.write_text("not a store\n")
    assert merge_records.main([str(sources[0]), "--pool", str(pool)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'--pool'" in err[0] and "is a file" in err[0], err
