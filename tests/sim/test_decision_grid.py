"""The decision grid's driver: judging rule, outputs, seeds and bad input."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest
from multitest_reference import multipletests
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evalcal_core.cli import call_main
from evalcal_core.options import config_from_args as options_from_args
from reports import decision_grid as rdg
from sim import decision_grid as dg
from sim import decisions
from sim.grid import cell_seed

PROG = "python -m sim.decision_grid"


def test_every_family_keeps_the_contract():
    found = decisions.families()
    assert {"maxt", "clusters", "models_margin", "models_arms", "planner", "effect_sizes",
            "mcnemar", "two_level"} <= set(found)
    for name, module in found.items():
        assert module.NAME == name
        assert module.CELLS and module.QUICK_CELLS
        assert all(isinstance(c, dict) for c in module.CELLS + list(module.QUICK_CELLS))


#: the grid's default schedule: 4,000 to 64,000 simulations per cell, five looks
LOOKS = 5


@pytest.mark.parametrize("measure,hits,verdict", [
    # Expected verdicts under the validity rule (one outcome, so Holm is one test), which
    # replaced a Wilson 95% interval compared with alpha + 1 pp / 1 - alpha - 1.5 pp; the
    # rule's bound is one-sided at 1 - 0.05 / 5 and "above" is tested against alpha itself,
    # so some cases moved (the old verdict in brackets where it differs):
    ("rejection", 200, "within level"),   # 5.0%: bound 5.86% <= 6%
    ("rejection", 210, "undecided"),      # 5.25%: bound 6.13% > 6%, p 1 [within: Wilson 5.99%]
    ("rejection", 225, "undecided"),      # 5.6%: bound 6.5%, p 0.20
    ("rejection", 260, "above level"),    # 6.5%: p 3e-5 [undecided: Wilson low 5.8% < 6%]
    ("rejection", 300, "above level"),    # 7.5%: p 4e-11
    ("coverage", 3800, "within level"),   # 95.0%: bound 94.1% >= 93.5%
    ("coverage", 3770, "undecided"),      # 94.25%: bound 93.3%, p 0.09
    ("coverage", 3740, "below level"),    # 93.5%: p 8e-5 [undecided: Wilson 92.7-94.2%]
    ("coverage", 3600, "below level"),    # 90.0%
    ("power", 10, "reported"),
])
def test_judge_applies_the_validity_rule(measure, hits, verdict):
    frame = pd.DataFrame([{"measure": measure, "hits": hits, "sims": 4000, "alpha": 0.05}])
    got = dg.judge(frame, sims=4000, max_sims=64_000).iloc[0]
    assert got.verdict == verdict
    ref = proportion_confint(hits, 4000, alpha=0.05, method="wilson")
    assert (got.low, got.high) == pytest.approx(ref, abs=1e-12)


def test_verdicts_follow_clopper_pearson_and_holm():
    """Reference: scipy's exact one-sided binomial test and exact (Clopper-Pearson)
    one-sided bound at 1 - 0.05 / 5, statsmodels' Holm at 0.001 over every judged row (old
    rules included), the tolerances 1 pp (rejection) and 1.5 pp (coverage, on the misses)."""
    rows = [("rejection", 200, 4000, 0.05), ("rejection", 262, 4000, 0.05),
            ("rejection", 254, 4000, 0.05), ("rejection", 30, 4000, 0.01),
            ("rejection", 60, 4000, 0.01), ("coverage", 3790, 4000, 0.05),
            ("coverage", 3720, 4000, 0.05), ("coverage", 1880, 2000, 0.05),
            ("rejection", 243, 4000, 0.05), ("power", 3000, 4000, 0.05)]
    frame = pd.DataFrame(rows, columns=["measure", "hits", "sims", "alpha"])
    frame["decision"] = [f"d{i}" for i in range(len(rows))]
    frame.loc[8, "decision"] = "d8 (old)"
    got = dg.judge(frame, sims=4000, max_sims=64_000)
    judged = frame.measure != "power"
    tol = frame.measure.map({"rejection": 0.01, "coverage": 0.015})
    x = np.where(frame.measure == "coverage", frame.sims - frame.hits, frame.hits)
    upper = np.array([stats.binomtest(int(a), int(n)).proportion_ci(
        1 - 2 * 0.05 / LOOKS, "exact").high for a, n in zip(x, frame.sims)])
    p = np.array([stats.binomtest(int(a), int(n), al, alternative="greater").pvalue
                  for a, n, al in zip(x, frame.sims, frame.alpha)])
    p = np.minimum(1, LOOKS * p)
    bound = np.where(frame.measure == "coverage", 1 - upper, upper)
    np.testing.assert_allclose(got.bound[judged], bound[judged], rtol=1e-9)
    np.testing.assert_allclose(got.p[judged], p[judged], rtol=1e-9)
    off = np.zeros(len(rows), bool)
    off[judged] = multipletests(p[judged], alpha=0.001, method="holm")[0]
    within = upper <= frame.alpha + tol + 1e-12
    expected = np.where(~judged, "reported", np.where(within, "within level", np.where(
        off, frame.measure.map({"rejection": "above level", "coverage": "below level"}),
        "undecided")))
    expected[8] = "old rule, " + expected[8]
    assert got.verdict.tolist() == expected.tolist()
    # the hand-made rows reach every verdict
    assert {"within level", "above level", "below level", "undecided"} <= set(expected)
    # Holm is over the whole family: row 2 (p 4.5e-4) is above level alone, not among 9
    assert got.verdict[2] == "undecided"
    assert dg.judge(frame.iloc[[2]], sims=4000, max_sims=64_000).verdict.item() == "above level"


def _fake_family(rates):
    """A family whose cell ``i`` rejects with probability ``rates[i]`` (and a power row)."""
    def simulate(params, sims, rng):
        return [{"decision": "test", "measure": "rejection", "alpha": 0.05, "sims": sims,
                 "hits": int(rng.binomial(sims, params["rate"]))},
                {"decision": "power", "measure": "power", "alpha": 0.05, "sims": sims,
                 "hits": int(rng.binomial(sims, 0.5))}]
    cells = [{"rate": r} for r in rates]
    return types.SimpleNamespace(NAME="fake", CELLS=cells, QUICK_CELLS=cells[:1],
                                 simulate=simulate)


def test_undecided_cells_follow_the_rules_schedule(monkeypatch):
    """The sequential stop: an undecided cell is doubled (400, 800, 1,600, 3,200) from
    streams named by the look, its counts pooled; a decided cell stops. Reference: the
    counts redrawn here from ``cell_seed`` directly, and :func:`judge` on the final counts
    for the cells that took one look."""
    rates = [0.01, 0.05, 0.055, 0.06, 0.2]
    monkeypatch.setattr(decisions, "families", lambda: {"fake": _fake_family(rates)})
    config = dg.GridConfig(sims=400, max_sims=3200, seed=7, jobs=1)
    got = dg.run_grid(config)
    schedule = (400, 800, 1600, 3200)
    tested = got[got.measure == "rejection"].reset_index(drop=True)
    for rate, r in zip(rates, tested.itertuples()):
        chunks = [int(c) for c in r.looks.split("+")]
        assert r.sims == sum(chunks) and r.sims in schedule
        assert list(np.cumsum(chunks)) == list(schedule[:len(chunks)])
        # a cell stops at the first look that decides it, or at the cap
        assert (r.verdict != "undecided") or r.sims == 3200
        redrawn = 0
        for look, chunk in enumerate(chunks):
            for b, start in enumerate(range(0, chunk, dg.BLOCK)):
                rng = np.random.default_rng(cell_seed(7, "decisions", "fake",
                                                      dg._cell_key({"rate": rate}), look, b))
                redrawn += rng.binomial(min(dg.BLOCK, chunk - start), rate)
        assert r.hits == redrawn
    # a power row rides along with its cell's looks
    power = got[got.measure == "power"].reset_index(drop=True)
    assert power.looks.tolist() == tested.looks.tolist()
    assert tested.verdict[0] == "within level" and tested.verdict[4] == "above level"
    assert tested.sims[1:4].max() > 400          # the borderline cells took more looks


def test_max_sims_below_sims_is_one_line(capsys):
    assert call_main(rdg.main, PROG, ["--sims", "400", "--max-sims", "200"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--max-sims" in err and "200" in err


def test_quick_takes_one_look():
    assert dg.GridConfig(quick=True).max_sims == dg.QUICK_SIMS
    assert dg.GridConfig().max_sims == 16 * dg.DEFAULT_SIMS


def test_quick_grid_writes_its_outputs_and_depends_only_on_seed(tmp_path, capsys):
    out = tmp_path / "grid"
    argv = ["--quick", "--families", "maxt", "clusters", "--out", str(out)]
    assert call_main(rdg.main, PROG, argv) == 0
    first = (out / "decision_grid.csv").read_bytes()
    frame = pd.read_csv(out / "decision_grid.csv")
    assert set(frame.family) == {"maxt", "clusters"}
    assert {"rate", "low", "high", "bound", "p", "verdict"} <= set(frame.columns)
    assert "judged outcomes" in (out / "decision_grid.md").read_text()
    assert call_main(rdg.main, PROG, argv) == 0
    assert (out / "decision_grid.csv").read_bytes() == first
    # an old rule kept for contrast is labelled, never counted as a reportable decision
    old = frame[frame.decision.str.endswith("(old)") & frame.measure.isin(["rejection"])]
    assert all(v.startswith("old rule") for v in old.verdict)
    capsys.readouterr()


def test_unknown_family_is_one_line(capsys):
    assert call_main(rdg.main, PROG, ["--families", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--families" in err and "nope" in err


def test_a_family_named_twice_runs_once_in_the_order_given(monkeypatch):
    """``--families b a b`` is ``--families b a``: each cell once (so each outcome enters
    Holm's family once), the families in the order first named. Reference: the grid of the
    deduplicated list, row for row."""
    monkeypatch.setattr(decisions, "families", lambda: {"a": _fake_family([0.01, 0.2]),
                                                         "b": _fake_family([0.05])})
    config = dg.GridConfig(families=("b", "a", "b"), sims=400, max_sims=400, seed=3, jobs=1)
    assert config.families == ("b", "a")
    parsed = options_from_args(dg.GridConfig, dg.build_parser().parse_args(
        ["--families", "b", "a", "b", "--sims", "400", "--max-sims", "400"]))
    assert parsed.families == ("b", "a")
    got = dg.run_grid(config)
    once = dg.run_grid(dg.GridConfig(families=("b", "a"), sims=400, max_sims=400, seed=3,
                                     jobs=1))
    pd.testing.assert_frame_equal(got, once)
    assert not got.duplicated(dg.KEY).any()
    assert list(dict.fromkeys(got.family)) == ["b", "a"]
    assert len(got[got.measure == "rejection"]) == 3
