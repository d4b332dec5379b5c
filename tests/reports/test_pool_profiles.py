"""``python -m reports.pool_profiles``: the pools of each profile side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from tests_paths import FIXTURE_POOL

from evalcal_core.outdir import incomplete_reason
from real_runs.store import load_pairs, pool_cells
from reports import pool_profiles


@pytest.fixture(scope="module")
def frame():
    return pool_profiles.pool_profiles_table(FIXTURE_POOL, ks=(3,), sims=400, seed=1)


def test_every_cell_of_the_store_has_its_rows(frame):
    # the fixture store holds profile 'fixture' only: cpu and paper, shown by default, have
    # no rows
    assert pool_profiles.shown_profiles(None, ["fixture"]) == ["cpu", "paper", "fixture"]
    cells = pool_cells(FIXTURE_POOL, "fixture")
    assert set(zip(frame["dataset"], frame["scenario"])) == set(cells)
    assert set(frame["profile"]) == {"fixture"}


def test_pool_quantities_equal_their_definitions(frame):
    """Accuracy, sd of delta, rho and the mean delta's t interval, from the records
    themselves (numpy and scipy), not from the code under test."""
    for dataset, scenario in pool_cells(FIXTURE_POOL, "fixture"):
        base, variant = load_pairs(FIXTURE_POOL, dataset, scenario, "fixture")
        acc_b, acc_v = base.mean(axis=1), variant.mean(axis=1)
        d = 100 * (acc_v - acc_b)
        rows = frame[(frame["dataset"] == dataset) & (frame["scenario"] == scenario)]
        got = rows.set_index("quantity")
        mean = got.loc["mean delta"]
        half = stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)
        assert mean["value"] == pytest.approx(d.mean(), abs=1e-9)
        assert mean["low"] == pytest.approx(d.mean() - half, abs=1e-9)
        assert mean["seeds"] == d.size
        if "baseline accuracy" in got.index:
            assert got.loc["baseline accuracy", "value"] == pytest.approx(100 * acc_b.mean())
            assert got.loc["sd of the per-seed delta", "value"] == pytest.approx(
                d.std(ddof=1))
            rho = got.loc["rho of the arms' per-seed accuracies", "value"]
            assert rho == pytest.approx(stats.pearsonr(acc_b, acc_v)[0], abs=1e-9)


def test_single_run_rate_matches_exact_enumeration(frame):
    """The one-run rule compares one seed's pair: over many draws its rate is the fraction
    of the pool's seeds whose |delta| >= 1 pp (exact), within Monte Carlo error."""
    for dataset, scenario in pool_cells(FIXTURE_POOL, "fixture"):
        rows = frame[(frame["dataset"] == dataset) & (frame["scenario"] == scenario)
                     & (frame["protocol"] == "single_run")]
        if rows.empty:
            continue
        base, variant = load_pairs(FIXTURE_POOL, dataset, scenario, "fixture")
        exact = np.mean(np.abs(variant.mean(axis=1) - base.mean(axis=1)) >= 0.01 - 1e-12)
        row = rows.iloc[0]
        se = np.sqrt(max(exact * (1 - exact), 1e-4) / row["sims"])
        assert abs(row["value"] / 100 - exact) < 4 * se, (dataset, row["value"], exact)


def test_markdown_sets_profiles_side_by_side(frame):
    text = pool_profiles.to_markdown(frame, ["fixture", "cpu", "paper"])
    header = next(line for line in text.splitlines() if line.startswith("| quantity"))
    assert "fixture (" in header and "cpu (not trained yet)" in header
    assert "paper (not trained yet)" in header
    line = next(line for line in text.splitlines()
                if line.startswith("| S1 mean delta"))
    assert line.rstrip(" |").endswith("–")  # the missing profiles' cells
    assert any(word in line for word in (": helps", ": hurts", ": unclear"))


def test_command_writes_whole_files(tmp_path, capsys):
    out = tmp_path / "o"
    argv = ["--pool", str(FIXTURE_POOL), "--out", str(out), "--ks", "3", "--sims", "100"]
    assert pool_profiles.main(argv) == 0
    assert incomplete_reason(out) is None
    frame = pd.read_csv(out / "pool_profiles.csv")
    assert list(frame.columns) == pool_profiles.COLUMNS
    assert (out / "pool_profiles.md").read_text() in capsys.readouterr().out
    first = (out / "pool_profiles.csv").read_bytes()
    assert pool_profiles.main(argv) == 0
    assert (out / "pool_profiles.csv").read_bytes() == first  # depends only on --seed


@pytest.mark.parametrize(("argv", "words"), [
    (["--profiles", "nope"], ["--profiles", "nope", "fixture"]),
    (["--ks", "0"], ["--ks"]),
    (["--sims", "5"], ["--sims"]),
    (["--alpha", "1.5"], ["--alpha"]),
])
def test_bad_options_are_one_line(argv, words, tmp_path, capsys):
    from evalcal_core.cli import call_main

    code = call_main(pool_profiles.main, pool_profiles.PROG,
                     ["--pool", str(FIXTURE_POOL), "--out", str(tmp_path / "o"), *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    for word in words:
        assert word in err[0], err
    assert not (tmp_path / "o").exists()


def test_k_above_a_third_of_the_pool_is_left_out():
    """As ``sim.calibrate`` refuses it: the 12-seed fixture pools get k = 3, never k = 5."""
    rows = pool_profiles.profile_rows(FIXTURE_POOL, "fixture", ks=(3, 5), sims=50)
    ks = {r["k"] for r in rows if r["protocol"] in pool_profiles.PAIRED}
    assert ks == {3} and all(r["seeds"] == 12 for r in rows)
