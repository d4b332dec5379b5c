"""Nothing stale, nothing lost: the cell cache is keyed by content and validated when read;
one run at a time writes an output folder; stale outputs of other settings are removed."""

from __future__ import annotations

import json
import stat
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcal_core.outdir import locked_out
from sim import generators
from sim.calibrate import main
from sim.grid import CacheWarning, CellCache, CellResult, CellSpec


def _pool_csv(path: Path, shift: float) -> str:
    rng = np.random.default_rng(1)
    rows = ["seed,arm,question,score"]
    for s in range(6):
        for arm, p in (("baseline", 0.6), ("variant", 0.6 + shift)):
            rows += [f"{s},{arm},{q},{int(rng.random() < p)}" for q in range(30)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _argv(out, *extra):
    return ["--k", "3", "--sims", "20", "--protocols", "paired_t", "--jobs", "1",
            "--out", str(out), "--quiet", "--no-plot", *extra]


def test_real_pool_digest_changes_with_the_data(tmp_path):
    """Same path, other scores: another data_digest, so another cache key."""
    from sim.generators import real_pool

    path = tmp_path / "pool.csv"
    _pool_csv(path, 0.0)
    first = generators.get("real_pool", csv=str(path), scenario="S1", null=False).data_digest()
    _pool_csv(path, 0.3)
    real_pool._load.cache_clear()
    second = generators.get("real_pool", csv=str(path), scenario="S1", null=False).data_digest()
    assert first != second and len(first) == 16
    assert generators.get("seed_gaussian").data_digest() == ""


def test_edited_csv_pool_does_not_bring_back_old_rows(tmp_path, capsys):
    from sim.generators import real_pool

    path = tmp_path / "pool.csv"
    out = tmp_path / "out"
    params = ["--generator", "real_pool", "--param", f"csv={_pool_csv(path, 0.0)}",
              "scenario=S1", "null=false", "--allow-large-k"]
    assert main(_argv(out, *params)) == 0
    before = pd.read_csv(out / "calibration.csv")
    _pool_csv(path, 0.3)
    real_pool._load.cache_clear()
    assert main(_argv(out, *params)) == 0
    after = pd.read_csv(out / "calibration.csv")
    assert (before["data_digest"] != after["data_digest"]).all()
    assert not np.allclose(before["effect_pp"], after["effect_pp"])
    assert len(list((out / "cells").glob("*.json"))) == 2


def _spec(**kw):
    base = dict(generator="g", generator_params="", protocol="paired_t", protocol_params="",
                k=3, effect_pp=0.0, sims=10, alpha=0.05, seed=0, chunk=10, data_digest="")
    return CellSpec(**{**base, **kw})


def _row(spec, **kw):
    base = dict(rejections=1, rate=0.1, rate_low=0.01, rate_high=0.4, wrong_sign=0,
                median_ci_width_pp=1.0)
    return CellResult(**asdict(spec), **{**base, **kw})


@pytest.mark.parametrize("edit", [
    lambda d: {**d, "rejections": 11, "rate": 1.1},
    lambda d: {**d, "rejections": -1},
    lambda d: {**d, "rate_low": float("inf")},
    lambda d: {k: v for k, v in d.items() if k != "wrong_sign"},
    lambda d: {**d, "extra": 1},
    lambda d: {**d, "k": "3"},
    lambda d: [1, 2],
    lambda d: {**d, "rate": 0.5},
])
def test_invalid_cached_row_is_recomputed_with_a_warning(tmp_path, edit):
    cache = CellCache(tmp_path)
    spec = _spec()
    cache.put(_row(spec))
    assert cache.get(spec) == _row(spec)
    path = cache.path(spec)
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    with pytest.warns(CacheWarning, match=path.name):
        assert cache.get(spec) is None


def test_truncated_and_foreign_rows_are_not_trusted(tmp_path):
    cache = CellCache(tmp_path)
    spec = _spec()
    cache.put(_row(spec))
    path = cache.path(spec)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.warns(CacheWarning, match="not JSON"):
        assert cache.get(spec) is None
    other = replace(spec, k=4)
    path.write_text(json.dumps(asdict(_row(other))))
    with pytest.warns(CacheWarning, match="another cell"):
        assert cache.get(spec) is None
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.warns(CacheWarning):
        assert cache.get(spec) is None


def test_a_cell_that_is_a_directory_is_a_clear_error(tmp_path):
    cache = CellCache(tmp_path)
    spec = _spec()
    cache.path(spec).mkdir(parents=True)
    with pytest.raises(ValueError, match="is a directory"):
        cache.get(spec)


def test_stale_outputs_of_other_settings_are_removed(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "fit_check.csv").write_text("old\n")
    (out / "pool_summary.csv").write_text("old\n")
    (out / "notes.txt").write_text("mine\n")
    assert main(_argv(out)[:-2] + ["--no-plot"]) == 0
    text = capsys.readouterr().out
    assert "removed pool_summary.csv, fit_check.csv" in text
    assert not (out / "fit_check.csv").exists() and (out / "notes.txt").exists()
    for name in ("calibration.csv", "seed_budget.csv", "command.json"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o644
    assert not list(out.glob(".*.tmp*"))


def test_a_locked_out_is_refused_and_released(tmp_path):
    out = tmp_path / "out"
    with locked_out(out), pytest.raises(ValueError, match="another run is writing"):
        main(_argv(out))
    assert main(_argv(out)) == 0


def test_a_run_without_mde_removes_a_stale_mde_csv(tmp_path, capsys):
    """mde.csv is a known output: a run without --mde must not leave an earlier one."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "mde.csv").write_text("old\n")
    assert main(_argv(out)[:-2] + ["--no-plot"]) == 0
    assert "removed mde.csv" in capsys.readouterr().out
    assert not (out / "mde.csv").exists()


def test_bad_arguments_are_reported_before_the_lock(tmp_path):
    """A bad --protocol-param is named as such even while another run holds --out."""
    out = tmp_path / "out"
    with locked_out(out), pytest.raises(ValueError, match="not a parameter of any selected"):
        main(_argv(out) + ["--protocol-param", "no_such=1"])
