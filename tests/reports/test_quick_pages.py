"""Quick pages cannot be misread (issue 36, item 1).

A page shades, bolds or recommends only from cells with ``MIN_JUDGED_SIMS`` simulations or
more. Reference: the 95% Wilson interval of statsmodels' ``proportion_confint`` (``wilson``),
which shows that the quick build's 17 / 200 = 8.5% has its whole interval above 5% (the old
rule shaded it) although 200 simulations cannot place a rate within 3 pp.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from _chromium import assert_not_blank, needs_chromium, screenshot
from statsmodels.stats.proportion import proportion_confint

from reports import _front_page as F
from reports import _report_page as R
from reports._report_page import (
    MIN_JUDGED_SIMS,
    Section,
    page_html,
    page_markdown,
    quick_banner,
)
from reports.figure_styles import recommended_name

PARAMS = "mu=0.9;sigma=0.005;rho=0.5;noise=normal"


def _write_calibration(folder: Path, sims: int, hits: int) -> None:
    """One false-positive table of paired_t and the recommended protocol, k = 3..10."""
    low, high = proportion_confint(hits, sims, alpha=0.05, method="wilson")
    rows = [dict(generator_params=PARAMS, protocol=name, k=k, effect_pp=0.0, sims=sims,
                 alpha=0.05, rate=hits / sims, rate_low=low, rate_high=high)
            for name in ("paired_t", recommended_name()) for k in range(3, 11)]
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / "calibration.csv", index=False)
    budget = [dict(generator_params=PARAMS, protocol=recommended_name(), effect_pp=1.0,
                   max_fpr=hits / sims, k_power_80="not recommended",
                   k_power_90="not recommended", recommended="no",
                   why="undecided (cap reached)")]
    pd.DataFrame(budget).to_csv(folder / "seed_budget.csv", index=False)


@pytest.mark.parametrize("sims, hits, judged", [(200, 17, False), (2000, 170, True)])
def test_shading_and_bold_only_from_enough_simulations(tmp_path, sims, hits, judged):
    low, _ = proportion_confint(hits, sims, alpha=0.05, method="wilson")
    assert low > 0.05  # the whole interval above alpha: the old rule shaded both
    _write_calibration(tmp_path, sims, hits)
    html = F.calibration_tables(tmp_path, "calibrate/")
    assert ('class="high"' in html) == judged
    assert ('class="recommended"' in html) == judged
    assert (f"{recommended_name()} (recommended)" in html) == judged
    budget = F.budget_table(tmp_path, "calibrate/", F.judged(pd.read_csv(
        tmp_path / "calibration.csv")))
    assert ("undecided (cap reached)" in budget) == judged
    assert (F.NOT_JUDGED in budget) == (not judged)
    assert ("not recommended" in budget) == judged  # a quick run's k columns say nothing
    assert F.judged(pd.read_csv(tmp_path / "calibration.csv")) == (sims >= MIN_JUDGED_SIMS)


def test_quick_banner_on_both_pages():
    text = quick_banner("200")
    assert text.startswith("quick run: 200 simulations per cell — too few to judge; colours "
                           "and recommendations are off")
    assert f"{MIN_JUDGED_SIMS:,}" in text  # the rule is stated on the page
    s = Section(1, "t")
    assert f"<strong>{text}</strong>" in page_html("t", ["x"], [s], text)
    assert f"**{text}**" in page_markdown("t", ["x"], [s], text)
    assert "banner" not in page_html("t", ["x"], [s]).split("<style>")[1].split(
        "</style>")[1]


def test_tables_and_code_wrap_instead_of_scrolling():
    """No table cell forbids wrapping; code breaks anywhere (long Reproduce commands)."""
    for css in (F._CSS, R._CSS):
        assert "overflow-wrap: anywhere" in css
        rule = css.split("th, td {")[1].split("}")[0]
        assert "nowrap" not in rule


@pytest.mark.slow
@needs_chromium
def test_quick_front_page_renders_at_1300_px(tmp_path):
    """A front-page calibration section of a quick run, rendered headless at 1,300 px."""
    from PIL import Image

    _write_calibration(tmp_path / "calibrate", 200, 17)
    body = (F.banner_html(quick_banner("200"))
            + F.calibration_tables(tmp_path / "calibrate", "calibrate/"))
    page = tmp_path / "page.html"
    page.write_text(f"<html><head><style>{F._CSS}</style></head><body>{body}</body></html>",
                    encoding="utf-8")
    shot = tmp_path / "shot.png"
    screenshot(page, shot, tmp_path / "profile", size=(1300, 900))
    assert_not_blank(Image.open(shot).convert("RGB"))


@pytest.mark.parametrize("sims, recommended", [(200, False), (2000, True)])
def test_power_curves_name_no_recommended_protocol_on_quick_runs(tmp_path, monkeypatch, sims,
                                                                 recommended):
    """Below 1,000 simulations per cell the legend names no recommended protocol and no
    seed-budget k is marked; from 1,000 on both are drawn."""
    import matplotlib.pyplot as plt

    from reports import figures
    from sim.calibration import CalibrationConfig, run_calibration

    config = CalibrationConfig(k=(3, 6), sims=100, protocols=("paired_t", "paired_bca_perm"),
                               out=tmp_path / "c")
    grid = run_calibration(config).grid.assign(sims=sims)
    marks = []
    monkeypatch.setattr(figures, "_mark_crossing", lambda *a, **k: marks.append(a))
    fig = figures.power_curves_figure(grid)
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    plt.close(fig)
    assert any("(recommended)" in x for x in labels) == recommended
    assert bool(marks) == recommended


@pytest.mark.parametrize("sims", [200, MIN_JUDGED_SIMS])
def test_terminal_seed_budget_of_a_quick_run_judges_no_honest_protocol(tmp_path, sims):
    """The text ``sim.calibrate`` prints: a quick run lists the pitfalls' reasons (they do
    not depend on the simulations) and calls no honest protocol "not recommended"."""
    from reports.calibration_text import summary_table

    calibration = pd.DataFrame([dict(generator="seed_gaussian", generator_params=PARAMS,
                                     protocol=name, k=3, effect_pp=0.0, sims=sims, rate=0.05,
                                     rate_low=0.03, rate_high=0.08)
                                for name in ("paired_t", "welch_t")])
    budget = pd.DataFrame([dict(generator="seed_gaussian", generator_params=PARAMS,
                                protocol=name, effect_pp=1.0, target_power=0.8,
                                recommended="no", why=why, k_needed="not recommended",
                                k_needed_low=None, k_needed_high=None,
                                k_power_80="not recommended", k_power_90="not recommended")
                           for name, why in (("paired_t", "undecided (cap reached)"),
                                             ("welch_t", "a pitfall: unpaired"))])
    text = summary_table(calibration, budget)
    quick = sims < MIN_JUDGED_SIMS
    assert ("paired_t: undecided (cap reached)" in text) == (not quick)
    assert ("not judged: fewer than 1,000 simulations per cell" in text) == quick
    assert "welch_t: a pitfall: unpaired" in text
