"""The decision grid's driver: judging rule, outputs, seeds and bad input."""

from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from evalcal_core.cli import call_main
from sim import decision_grid as dg
from sim import decisions

PROG = "python -m sim.decision_grid"


def test_every_family_keeps_the_contract():
    found = decisions.families()
    assert {"maxt", "clusters", "models_margin", "models_arms", "planner", "effect_sizes",
            "mcnemar", "two_level"} <= set(found)
    for name, module in found.items():
        assert module.NAME == name
        assert module.CELLS and module.QUICK_CELLS
        assert all(isinstance(c, dict) for c in module.CELLS + list(module.QUICK_CELLS))


@pytest.mark.parametrize("measure,hits,sims,verdict", [
    ("rejection", 200, 4000, "within level"),      # 5.0%: upper bound 5.7% <= 6%
    ("rejection", 300, 4000, "above level"),       # 7.5%: lower bound 6.7% > 6%
    ("rejection", 225, 4000, "undecided"),         # 5.6%: upper 6.4%, lower 4.9%
    ("coverage", 3800, 4000, "within level"),
    ("coverage", 3600, 4000, "below level"),
    ("power", 10, 4000, "reported"),
])
def test_judge_reads_the_wilson_interval(measure, hits, sims, verdict):
    got, low, high = dg.judge(measure, hits, sims, 0.05)
    ref = proportion_confint(hits, sims, alpha=0.05, method="wilson")
    assert (low, high) == pytest.approx(ref, abs=1e-12)
    assert got == verdict


def test_quick_grid_writes_its_outputs_and_depends_only_on_seed(tmp_path, capsys):
    out = tmp_path / "grid"
    argv = ["--quick", "--families", "maxt", "clusters", "--out", str(out)]
    assert call_main(dg.main, PROG, argv) == 0
    first = (out / "decision_grid.csv").read_bytes()
    frame = pd.read_csv(out / "decision_grid.csv")
    assert set(frame.family) == {"maxt", "clusters"}
    assert {"rate", "low", "high", "verdict"} <= set(frame.columns)
    assert "judged outcomes" in (out / "decision_grid.md").read_text()
    assert call_main(dg.main, PROG, argv) == 0
    assert (out / "decision_grid.csv").read_bytes() == first
    # an old rule kept for contrast is labelled, never counted as a reportable decision
    old = frame[frame.decision.str.endswith("(old)") & frame.measure.isin(["rejection"])]
    assert all(v.startswith("old rule") for v in old.verdict)
    capsys.readouterr()


def test_unknown_family_is_one_line(capsys):
    assert call_main(dg.main, PROG, ["--families", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--families" in err and "nope" in err
