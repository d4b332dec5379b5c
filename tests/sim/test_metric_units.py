"""A ``--metric-range`` pool's effects and interval widths in the metric's own units.

The cells are keyed and cached by ``effect_pp`` and ``median_ci_width_pp`` (100 x the scores'
units: pp of a fraction); ``sim.calibration.state_units`` restates them as ``effect`` and
``median_ci_width`` with a ``unit`` column, and ``--effects`` on a metric pool is typed in
the metric's units. References: scipy's one-sample t interval of the experiments' per-seed
deltas (``scipy.stats.ttest_1samp(...).confidence_interval``), and the pool's mean delta,
which the pools below fix exactly (integers, or dyadic fractions).
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from reports.calibrate import build_parser
from sim import generators
from sim.calibrate import main
from sim.calibration import for_file, state_units
from sim.grid import cell_deltas

SEEDS = 30


def _pool(path, base, deltas):
    rows = ["seed,arm,metric"]
    for s, (b, d) in enumerate(zip(base, deltas)):
        rows += [f"{s},baseline,{b!r}", f"{s},variant,{b + d!r}"]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _noise():
    """30 integers in [-6, 6] that sum to 0 (so the pool's mean delta is exact)."""
    d = np.random.default_rng(0).integers(-6, 7, SEEDS)
    d[0] -= d.sum()
    return d


@pytest.fixture
def score_pool(tmp_path):
    """A metric in [0, 100] (integers): the variant is +20 units on average."""
    base = np.random.default_rng(1).integers(20, 60, SEEDS)
    return _pool(tmp_path / "scores.csv", [int(b) for b in base],
                 [int(20 + d) for d in _noise()])


@pytest.fixture
def fraction_pool(tmp_path):
    """Fractions in [0, 1] (multiples of 1/64, exact in binary): +1/64 = +1.5625 pp."""
    base = np.random.default_rng(1).integers(20, 40, SEEDS) / 64
    return _pool(tmp_path / "fractions.csv", [float(b) for b in base],
                 [float((1 + d / 6) / 64) for d in _noise()])


def _run(pool, out, *extra):
    args = ["--generator", "real_pool", "--param", f"csv={pool}", "null=false",
            "--protocols", "paired_t", "--sims", "400", "--out", str(out),
            "--no-plot", "--quiet", "--jobs", "1", *extra]
    assert main(args) == 0
    frame = pd.read_csv(out / "calibration.csv")
    return frame[~frame.searched], pd.read_csv(out / "seed_budget.csv")


def _scipy_median_width(generator, k, sims=400, seed=0):
    """Median width of the 95% t intervals of the cell's experiments (scores' units):
    ``2 t_{0.975, k-1} sd / sqrt(k)``, the interval ``scipy.stats.ttest_1samp`` gives.

    An experiment whose k deltas are all equal and not 0 has no variance estimate and so
    no interval (``paired_t`` reports NaN; all 0: the point 0, width 0): the median is over
    the others, as the calibration's. The test pools' discrete deltas make such draws
    possible (a value held by 4 of the 30 seeds), in some cells' streams and not others.
    """
    deltas = cell_deltas(generator, k, 100 * generator.fixed_effect(), sims, seed)
    sd = deltas.std(axis=1, ddof=1)
    has_interval = (sd > 0) | (np.abs(deltas).max(axis=1) == 0)
    # the t interval written out (scipy.stats.t quantile): scipy's ttest_1samp warns of
    # "catastrophic cancellation" on some builds when a few experiments' deltas nearly agree
    half = stats.t.ppf(0.975, k - 1) * sd[has_interval] / np.sqrt(k)
    return float(np.median(2.0 * half))


def test_metric_pool_widths_are_in_metric_units(score_pool, tmp_path):
    """The median CI width equals scipy's t intervals of the same experiments, in metric
    units (the audit found it 100 x too large, labelled pp); the pp columns are blank."""
    grid, budget = _run(score_pool, tmp_path / "o", "--metric-range", "0", "100", "--k", "4")
    g = generators.get("real_pool", csv=score_pool, null=False, metric_low=0.0,
                       metric_high=100.0)  # as --metric-range reads them: the same stream
    (row,) = grid.itertuples()
    assert row.unit == "metric units"
    assert row.median_ci_width == pytest.approx(_scipy_median_width(g, 4), rel=1e-9)
    assert np.isnan(row.median_ci_width_pp) and np.isnan(row.effect_pp)
    assert row.effect == pytest.approx(20.0, abs=1e-9)
    assert (budget.unit == "metric units").all() and budget.effect_pp.isna().all()


def test_metric_pool_width_at_the_whole_pool(score_pool, tmp_path):
    """With k = the whole pool every experiment holds all 30 seeds, so every interval is the
    t interval of the pool's own deltas: the median width needs no draw to check."""
    grid, _ = _run(score_pool, tmp_path / "o", "--metric-range", "0", "100", "--k",
                   str(SEEDS), "--allow-large-k")
    deltas = 20 + _noise()
    ci = stats.ttest_1samp(deltas, 0.0).confidence_interval(0.95)
    assert grid.median_ci_width.iloc[0] == pytest.approx(ci.high - ci.low, rel=1e-9)


def test_effects_on_a_metric_pool_are_metric_units(score_pool, tmp_path, capsys):
    """``--effects 20`` on a [0, 100] metric whose variant is +20 units is that effect (it
    was read as 0.2 units and refused); 0.2 is refused, stated in metric units."""
    grid, budget = _run(score_pool, tmp_path / "o", "--metric-range", "0", "100",
                        "--k", "3", "--effects", "20")
    assert grid.effect.tolist() == pytest.approx([20.0], abs=1e-9)
    assert budget.effect.tolist() == pytest.approx([20.0], abs=1e-9)
    with pytest.raises(ValueError, match=r"\+20\.0000 metric units\); got \+0\.2000 metric "
                                         r"units"):
        _run(score_pool, tmp_path / "p", "--metric-range", "0", "100", "--k", "3",
             "--effects", "0.2")
    main(["--generator", "real_pool", "--param", f"csv={score_pool}", "null=false",
          "--metric-range", "0", "100", "--k", "3", "--protocols", "paired_t", "--sims", "100",
          "--out", str(tmp_path / "q"), "--no-plot", "--jobs", "1"])
    printed = capsys.readouterr().out
    assert "effect +20 (score in [0, 100])" in printed
    assert " pp" not in printed.split("real pools:")[0]


def test_fraction_pool_unchanged(fraction_pool, tmp_path):
    """A fraction pool keeps pp: effect_pp = effect = 100 x the mean delta, and both width
    columns are 100 x scipy's median t-interval width; --effects is read in pp."""
    grid, budget = _run(fraction_pool, tmp_path / "o", "--k", "4", "--effects", "1.5625")
    g = generators.get("real_pool", csv=fraction_pool, null=False)
    (row,) = grid.itertuples()
    assert row.unit == "pp"
    assert row.effect_pp == row.effect == pytest.approx(1.5625, abs=1e-9)
    width = 100 * _scipy_median_width(g, 4)
    assert row.median_ci_width_pp == row.median_ci_width == pytest.approx(width, rel=1e-9)
    assert (budget.unit == "pp").all() and (budget.effect_pp == budget.effect).all()
    with pytest.raises(ValueError, match=r"\+1\.5625 pp\); got \+156\.2500 pp"):
        _run(fraction_pool, tmp_path / "p", "--k", "4", "--effects", "156.25")


def test_state_units_is_idempotent_and_the_files_hold_pp_only():
    """Synthetic and fraction rows are pp (unchanged); metric rows are divided by 100
    (exact arithmetic); a second pass changes nothing."""
    frame = pd.DataFrame({
        "generator_params": ["mu=0.9;sigma=0.005", "dataset=x;metric_low=0;metric_high=10"],
        "effect_pp": [1.0, 150.0], "median_ci_width_pp": [0.8, 40.0]})
    once = state_units(frame)
    assert once.unit.tolist() == ["pp", "metric units"]
    assert once.effect.tolist() == [1.0, 1.5]
    assert once.median_ci_width.tolist() == [0.8, 0.4]
    assert once.median_ci_width_pp.iloc[0] == 0.8 and np.isnan(once.median_ci_width_pp.iloc[1])
    pd.testing.assert_frame_equal(state_units(once), once)
    written = for_file(once)
    assert written.effect_pp.iloc[0] == 1.0 and np.isnan(written.effect_pp.iloc[1])
    assert once.effect_pp.tolist() == [1.0, 150.0]  # the in-memory key is kept


def test_help_states_the_units_of_effects():
    text = " ".join(build_parser().format_help().split())
    assert "20 on a [0, 100] metric is +20 units" in text
    assert "median_ci_width" in text
