"""Calibration of many-arm decisions and claim gates (:mod:`sim.multiarm`)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from multitest_reference import multipletests
from scipy import stats

from evalcal_core.cli import call_main
from sim import multiarm as MA

ALPHA = 0.05


def _rate(table, **where):
    sel = table
    for key, value in where.items():
        sel = sel[sel[key] == value]
    assert len(sel) == 1, where
    return sel.iloc[0]


SMALL = MA.MultiarmConfig(m=(2, 4), k=6, n=200, sims=300, n_draws=300, max_sims=300)


@pytest.fixture(scope="module")
def small():
    """One look (``max_sims = sims``): the states against their one-look references."""
    return MA.run_multiarm(SMALL)


@pytest.fixture(scope="module")
def sequential():
    """The same cells with the validity rule's sequential stop (up to 16 x 300)."""
    return MA.run_multiarm(replace(SMALL, max_sims=None))


def test_small_grid_shape_and_intervals(small):
    """Consistency: every rate lies in its Wilson interval; the grid is complete."""
    assert list(small.columns) == list(MA.COLUMNS)
    assert np.all((small.low <= small.rate) & (small.rate <= small.high))
    fam = small[small.kind == "family"]
    # 2 generators x 2 m x 2 families x 4 methods x (null fwer + alternative metrics)
    assert set(fam.method) == set(MA.DECISIONS)
    assert len(small[small.kind == "gate"]) == 2 * 5


def test_states_follow_clopper_pearson_and_holm(small):
    """Reference: scipy's exact one-sided binomial test and the exact (Clopper-Pearson)
    one-sided 95% upper bound (one look: no sequential stop), statsmodels' Holm at 0.001
    over the rows whose rate must be <= alpha; a rate valid when its bound is <= 1.2 alpha."""
    held = ((small.metric == "fwer")
            | ((small.kind == "gate") & (small.scenario != "delta=0"))).to_numpy()
    # per generator: the null's fwer (2 m x 2 families x 4 corrections), the alternative's
    # all-pairs fwer at m = 4 (true nulls among the improved arms), the gates at the margin
    # (non-inferiority at -margin, equivalence at -margin and +margin)
    assert held.sum() == 2 * (16 + 4 + 3)
    assert (small.state[~held] == "reported").all() and small.upper[~held].isna().all()
    rows = small[held]
    upper = np.array([stats.binomtest(int(c), int(n)).proportion_ci(0.90, "exact").high
                      if c < n else 1.0 for c, n in zip(rows["count"], rows.sims)])
    np.testing.assert_allclose(rows.upper, upper, rtol=1e-9)
    p = [stats.binomtest(int(c), int(n), ALPHA, alternative="greater").pvalue
         for c, n in zip(rows["count"], rows.sims)]
    over = multipletests(p, alpha=0.001, method="holm")[0]
    expected = np.where(upper <= 1.2 * ALPHA + 1e-12, "valid",
                        np.where(over, "invalid", "undecided"))
    assert rows.state.tolist() == expected.tolist()
    # this small run reaches every state (uncorrected FWER at m = 4 is invalid)
    assert set(expected) == {"valid", "invalid", "undecided"}
    text = MA.format_table(small)
    assert f"state of the {held.sum()} rates that must be <= alpha" in text
    counts = rows.state.value_counts()
    assert (f"{counts['valid']} valid, {counts['invalid']} invalid, "
            f"{counts['undecided']} undecided") in text


def test_sequential_stop_pools_nested_looks(small, sequential):
    """The sequential stop adds looks to the cells with an undecided corrected rate or gate:
    a cell's counts are its first look (the one-look run's, experiment for experiment) plus
    each later look's own draws (recomputed here, ``family_cell``/``gate_cell`` of look j),
    every row of a cell pooling the same looks."""
    key = ["kind", "generator", "family", "m", "scenario", "method", "metric"]
    one, seq = small.set_index(key), sequential.set_index(key)
    assert (seq["looks"] >= 1).all() and (seq["looks"] > 1).any()
    schedule = [300 * 2**j for j in range(5)]  # 300, 600, ..., 4800 experiments
    assert set(seq["sims"]) <= set(schedule)
    assert (seq["sims"] == [schedule[j - 1] for j in seq["looks"]]).all()
    # one extended family cell and one extended gate, recomputed look by look
    ext = sequential[(sequential.looks > 1)]
    fam = ext[ext.kind == "family"].iloc[0]
    cell = sequential[(sequential.kind == "family") & (sequential.generator == fam.generator)
                      & (sequential.m == fam.m) & (sequential.scenario == fam.scenario)]
    assert cell["looks"].nunique() == 1
    cfg = MA._config_iv(replace(SMALL, max_sims=None))
    looks = [MA.family_cell(fam.generator, int(fam.m), fam.scenario, cfg, n, j)
             for j, n in enumerate(np.diff([0] + schedule[:int(fam.looks)]))]
    for r in cell.itertuples():
        k = (r.family, r.method, r.metric)
        assert r.count == sum(c[k] for c in looks)
        assert looks[0][k] == one.loc[tuple(getattr(r, c) for c in key), "count"]
    gates = ext[ext.kind == "gate"]
    if len(gates):
        g = gates.iloc[0]
        truth = {"delta=-margin": -1, "delta=0": 0, "delta=+margin": 1}[g.scenario]
        counts = [MA.gate_cell(g.generator, g.method, truth, cfg, n, j)
                  for j, n in enumerate(np.diff([0] + schedule[:int(g.looks)]))]
        assert g["count"] == sum(counts)


def test_sequential_stop_decides_or_reaches_the_cap(sequential):
    """After the stop no corrected rate or gate is left with looks to spare: each is valid
    (its Clopper-Pearson bound at 1 - 0.05 / 5, Bonferroni over the rule's 5 looks, <= 6%,
    scipy's exact interval), invalid, or undecided at the cap of 4,800 experiments; a cell
    whose only open rates are uncorrected takes no more looks."""
    held = sequential[(sequential.metric == "fwer")
                      | ((sequential.kind == "gate") & (sequential.scenario != "delta=0"))]
    upper = np.array([stats.binomtest(int(c), int(n)).proportion_ci(1 - 2 * 0.05 / 5,
                                                                    "exact").high
                      if c < n else 1.0 for c, n in zip(held["count"], held.sims)])
    np.testing.assert_allclose(held.upper, upper, rtol=1e-9)
    assert ((held.state == "valid") == (upper <= 1.2 * ALPHA + 1e-12)).all()
    honest = held[held.method != "none"]
    assert (honest[honest.state == "undecided"].sims == 4800).all()
    assert set(held.state) <= {"valid", "invalid", "undecided"}
    # the uncorrected FWER at m = 4 is shown invalid without extra looks of its own
    none4 = held[(held.method == "none") & (held.m == 4) & (held.scenario == "null")]
    assert (none4.state == "invalid").all()


def test_corrections_nested_on_common_data(small):
    """Exact consistency from common random numbers: a Holm rejection is a raw rejection
    and a Bonferroni rejection is a Holm rejection, experiment by experiment, so the counts
    are ordered none >= holm >= bonferroni in every cell and metric."""
    fam = small[small.kind == "family"]
    keys = ["generator", "family", "m", "scenario", "metric"]
    for _, grp in fam.groupby(keys):
        c = grp.set_index("method")["count"]
        assert c["none"] >= c["holm"] >= c["bonferroni"]


def test_two_arms_families_agree(small):
    """At m = 2 both families are the one comparison."""
    two = small[(small.kind == "family") & (small.m == 2)]
    a = two[two.family == "many_to_one"].set_index(["generator", "scenario", "method",
                                                   "metric"])["count"]
    b = two[two.family == "all_pairs"].set_index(["generator", "scenario", "method",
                                                 "metric"])["count"]
    pd.testing.assert_series_equal(a.drop(index="maxt", level=2),
                                   b.drop(index="maxt", level=2))


def test_same_seed_same_table():
    cfg = MA.MultiarmConfig(m=(3,), k=5, n=100, sims=60, n_draws=200, gates=False)
    pd.testing.assert_frame_equal(MA.run_multiarm(cfg), MA.run_multiarm(cfg))


def test_fixed_model_margin_shift():
    """Reference: the fixed model's expected accuracy by Gauss-Hermite, checked against a
    Monte Carlo mean of 400,000 draws (4 SEs), and the shift solving for a difference."""
    rng = np.random.default_rng(0)
    x = MA.draw_fixed_model(rng, 400, 1, 1000, np.array([0.2]))
    se = np.sqrt(0.25 / x.size) * 2     # questions share difficulty: a generous SE
    assert abs(x.mean() - MA.fixed_accuracy(0.2)) < 4 * se
    s = MA.fixed_shift_for_difference(-0.04)
    assert MA.fixed_accuracy(s) - MA.fixed_accuracy(0.0) == pytest.approx(-0.04, abs=1e-12)


def test_cli_writes_csv(tmp_path):
    out = tmp_path / "o"
    proc = subprocess.run([sys.executable, "-m", "sim.multiarm", "--m", "2", "3", "--k", "4",
                           "--n", "50", "--sims", "40", "--draws", "100", "--out", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out / "multiarm.csv")
    assert list(table.columns) == list(MA.COLUMNS) and len(table) > 0
    assert "Wilson 95%" in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["--m", "1"], "The '--m' option must be an integer >= 2 and <= 20. Got 1 instead."),
    (["--sims", "0"], "The '--sims' option must be an integer >= 1 and <= 1000000. Got 0 "
                      "instead."),
    (["--alpha", "2"], "The '--alpha' option must be a number in (0, 1). Got 2.0 instead."),
    (["--generators", "other"], "The '--generators' option must be one of paired_seed, "
                                "fixed_model. Got 'other' instead."),
    (["--question-margin", "5"], "The '--question-margin' option must be a finite number "
                                 "> 0 and <= 0.3. Got 5.0 instead."),
])
def test_cli_messages(args, message, capsys):
    """In-process through call_main (what run_main exits with); one subprocess below."""
    assert call_main(MA.main, "python -m sim.multiarm", args) == 2
    assert capsys.readouterr().err.strip() == f"python -m sim.multiarm: error: {message}"


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """The default table (m = 2, 5, 10; k = 10; n = 1000; 2,000 experiments per cell), run
    by the command in a process of its own: its 0.5 GB peak is not added to the runner's."""
    out = tmp_path_factory.mktemp("multiarm")
    proc = subprocess.run([sys.executable, "-m", "sim.multiarm", "--m", "2", "5", "10", "--k",
                           "10", "--n", "1000", "--sims", "2000", "--out", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return pd.read_csv(out / "multiarm.csv")


def _se(rate, sims):
    return np.sqrt(max(rate * (1 - rate), ALPHA * (1 - ALPHA)) / sims)


@pytest.mark.slow
def test_fwer_held_by_holm_and_maxt(full):
    """Reference: the FWER target alpha. Holm and max-T stay <= alpha + 2 binomial SEs at
    m = 2, 5, 10 on both generators and both families (null and, for all pairs, the
    alternative's true nulls); no correction exceeds it by far from m = 5 on."""
    fwer = full[full.metric == "fwer"]
    se = _se(ALPHA, 2000)
    for r in fwer[fwer.method.isin(["holm", "maxt"])].itertuples():
        assert r.rate <= ALPHA + 2 * se, r
    for r in fwer[(fwer.method == "none") & (fwer.m >= 5)].itertuples():
        assert r.rate > ALPHA + 2 * se, r
    # the validity rule agrees: Holm and max-T never shown above alpha, uncorrected from
    # m = 5 on always
    assert not (fwer[fwer.method.isin(["holm", "maxt"])].state == "invalid").any()
    assert (fwer[(fwer.method == "none") & (fwer.m >= 5)].state == "invalid").all()


@pytest.mark.slow
def test_maxt_power_not_below_holm(full):
    """Consistency: max-T (which uses the correlation) has at least Holm's power within 2
    SEs of the difference (independent-sample SE: conservative under common data)."""
    fam = full[(full.kind == "family") & full.metric.isin(["any_power", "all_power"])]
    for _, grp in fam.groupby(["generator", "family", "m", "metric"]):
        r = grp.set_index("method")["rate"]
        se = np.sqrt((r["maxt"] * (1 - r["maxt"]) + r["holm"] * (1 - r["holm"])) / 2000)
        assert r["maxt"] >= r["holm"] - 2 * se, grp


@pytest.mark.slow
def test_gates_hold_alpha_at_the_margin(full):
    """Reference: alpha. A claim is shown at most alpha + 2 SEs of the time when the true
    difference is exactly at the margin; it has power > alpha at no difference."""
    gates = full[full.kind == "gate"]
    se = _se(ALPHA, 2000)
    for r in gates[gates.scenario != "delta=0"].itertuples():
        assert r.rate <= ALPHA + 2 * se, r
    for r in gates[gates.scenario == "delta=0"].itertuples():
        assert r.rate > 0.2, r
    assert not (gates.state == "invalid").any()
