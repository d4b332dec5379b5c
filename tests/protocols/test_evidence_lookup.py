"""The evidence lookup (:mod:`protocols.analysis.evidence`): the nearest cell of a table the
test writes (exact choice, ties, nothing found) and the shipped table's intervals against
statsmodels."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from evalcal_core.designs import METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED
from protocols.analysis import evidence
from sim.evidence import COLUMNS


def _row(kind, protocol, n, runs, rejections, sims=1000, clusters=0, effect=0.0, pool_models=0,
         source="question_mixture", **extra):
    low, high = proportion_confint(rejections, sims, method="wilson")
    row = {c: "" for c in COLUMNS}
    row.update(source=source, kind=kind, protocol=protocol, n_questions=n, runs=runs,
               clusters=clusters, icc=math.nan, sd_ratio=math.nan, effect_pp=effect,
               effect_units="pp of accuracy", generator_params="x", median_ci_width_pp=3.0,
               sims=sims, rejections=rejections, rate=rejections / sims, rate_low=low,
               rate_high=high, state="valid" if effect == 0 else "", pool_models=pool_models,
               model_sims=0, worst_model="m1" if pool_models else "",
               worst_rate=0.08 if pool_models else math.nan, worst_low=math.nan,
               worst_high=math.nan, pair="")
    row.update(extra)
    return row


@pytest.fixture
def table(tmp_path):
    rows = [
        _row(MODELS, "t_signflip_questions", 100, 1, 40),
        _row(MODELS, "t_signflip_questions", 300, 2, 50),
        _row(MODELS, "t_signflip_questions", 300, 2, 800, effect=5.0),
        _row(MODELS, "t_signflip_questions", 1000, 2, 45),
        _row(MODELS, "t_signflip_questions", 400, 2, 38, pool_models=43,
             source="lcb.csv.gz@0123456789abcdef"),
        _row(MODELS_CLUSTERED, "cluster_cr2", 300, 1, 30, clusters=3),
        _row(MODELS_CLUSTERED, "cluster_cr2", 300, 1, 60, clusters=30),
        _row(METHODS_INDEPENDENT, "welch_t", 1, 5, 40, sd_ratio=1.0),
        _row(METHODS_INDEPENDENT, "welch_t", 1, 5, 55, sd_ratio=3.0),
    ]
    path = tmp_path / "evidence.csv"
    pd.DataFrame(rows, columns=COLUMNS).to_csv(path, index=False)
    evidence.load_table.cache_clear()
    return path


def test_nearest_picks_the_cell_at_the_smallest_distance(table):
    # ln(250) is 0.18 from ln(300) and 1.39 from ln(1000): n = 300, r = 2
    ev = evidence.nearest(MODELS, "t_signflip_questions", 250, 2, path=table)
    assert (ev.synthetic.n_questions, ev.synthetic.runs) == (300, 2)
    assert ev.synthetic.distance == pytest.approx(abs(math.log(250) - math.log(300)))
    assert [p.effect_pp for p in ev.synthetic.power] == [5.0]
    assert ev.synthetic.power[0].rate == pytest.approx(0.8)
    assert ev.real.source.startswith("lcb.csv.gz") and ev.real.pool_models == 43
    line = ev.describe()
    assert "(nearest; yours: 250 questions)" in line and "power 80% at +5 pp" in line
    assert "lcb.csv.gz A/A, 43 models (per model: worst m1 8.0%)" in line
    assert evidence.RECOMPUTE_POOL in line
    # runs weigh one unit per run: n = 100, r = 1 is farther from (300, 1) than (300, 2) is
    ev = evidence.nearest(MODELS, "t_signflip_questions", 300, 1, path=table)
    assert (ev.synthetic.n_questions, ev.synthetic.runs) == (300, 2)


def test_ties_take_the_conservative_cell(table):
    # 10 clusters: ln 10 - ln 3 = 1.20 and ln 30 - ln 10 = 1.10, so 30 is nearer ...
    ev = evidence.nearest(MODELS_CLUSTERED, "cluster_cr2", 300, 1, 10, path=table)
    assert ev.synthetic.clusters == 30
    # the per-seed design's two sd ratios are at distance 0: the higher rate is shown
    ev = evidence.nearest(METHODS_INDEPENDENT, "welch_t", 1, 5, path=table)
    assert ev.synthetic.rate == pytest.approx(0.055) and ev.synthetic.distance == 0


def test_exact_tie_on_clusters(tmp_path):
    rows = [_row(MODELS_CLUSTERED, "cluster_cr2", 300, 1, 30, clusters=4),
            _row(MODELS_CLUSTERED, "cluster_cr2", 300, 1, 70, clusters=16),
            _row(MODELS_CLUSTERED, "cluster_cr2", 300, 1, 50, clusters=16)]
    path = tmp_path / "t.csv"
    pd.DataFrame(rows, columns=COLUMNS).to_csv(path, index=False)
    # 8 clusters: ln 8 - ln 4 = ln 16 - ln 8 exactly; the highest rate of the three is taken
    ev = evidence.nearest(MODELS_CLUSTERED, "cluster_cr2", 300, 1, 8, path=path)
    assert (ev.synthetic.clusters, ev.synthetic.rejections) == (16, 70)
    assert "16 clusters" in ev.describe() and "yours: 8 clusters" in ev.describe()


def test_no_cell_says_so_without_a_number(table):
    ev = evidence.nearest(MODELS, "mcnemar", 300, 1, path=table)
    assert not ev.found and ev.synthetic is None and ev.real is None
    assert "no calibrated cell" in ev.describe() and "%" not in ev.describe()
    ev = evidence.nearest(MODELS_CLUSTERED, "cluster_cr2", 300, 1, 3, path=table)
    assert ev.real is None and not any(x.strip().startswith("real:") for x in ev.lines())
    assert ev.to_dict()["real"] is None


def test_shipped_table_intervals_are_wilson():
    table = evidence.load_table()
    if not len(table):
        pytest.skip("no shipped evidence table")
    low, high = proportion_confint(table["rejections"], table["sims"], method="wilson")
    assert (table["rate_low"] - low).abs().max() < 1e-9
    assert (table["rate_high"] - high).abs().max() < 1e-9
    # the CSV keeps 10 significant digits
    assert (table["rate"] - table["rejections"] / table["sims"]).abs().max() < 1e-9
    real = table[table["pool_models"] > 2]
    worst_n = real["model_sims"]
    worst_x = (real["worst_rate"] * worst_n).round()
    wl, wh = proportion_confint(worst_x, worst_n, method="wilson")
    assert (real["worst_low"] - wl).abs().max() < 1e-9
    assert (real["worst_high"] - wh).abs().max() < 1e-9
