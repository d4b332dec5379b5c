"""CSV pools described truly: their own name, "null" or "effect" as declared, their metric
and its units (``--metric-range``, ``--percent``)."""

import numpy as np
import pandas as pd
import pytest

from sim import generators
from sim.calibrate import main
from sim.pool_summary import pool_summary


def _pool(path, base, deltas):
    rows = ["seed,arm,metric"]
    for s, (b, d) in enumerate(zip(base, deltas)):
        rows += [f"{s},baseline,{b:.6f}", f"{s},variant,{b + d:.6f}"]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.fixture
def rl_pool(tmp_path):
    rng = np.random.default_rng(0)
    return _pool(tmp_path / "hopper_returns.csv", 1000 + 80 * rng.standard_normal(24),
                 1.32 + 0.6 * rng.standard_normal(24))


def test_csv_pool_is_named_by_its_file_and_declaration(tmp_path):
    path = _pool(tmp_path / "cifar_resnet.csv", 0.9 + 0.004 * np.arange(12) / 12, [0.0] * 12)
    null = generators.get("real_pool", csv=path, null=True)
    assert (null.dataset, null.scenario) == ("cifar_resnet", "null")
    effect = generators.get("real_pool", csv=path, null=False, label="my runs")
    assert (effect.dataset, effect.scenario) == ("my runs", "effect")
    assert null.units() == ("fraction in [0, 1]", "pp", 100.0)
    with pytest.raises(ValueError, match="'label' parameter of generator real_pool must be "
                                         "given only with csv=PATH"):
        generators.get("real_pool", label="x")


def test_metric_range_states_the_metric_units(rl_pool):
    with pytest.raises(ValueError, match="outside \\[0.0, 1.0\\].*--metric-range LOW HIGH"):
        generators.get("real_pool", csv=rl_pool, null=False)
    g = generators.get("real_pool", csv=rl_pool, null=False, metric_low=0, metric_high=2000)
    assert g.units() == ("score in [0, 2000]", "metric units", 1.0)
    row = pool_summary([g]).iloc[0]
    base, variant = g.pool()
    assert row.mean_delta == pytest.approx((variant - base).mean())
    assert row.base_mean == pytest.approx(base.mean())
    assert np.isnan(row.base_acc_pct) and np.isnan(row.mean_delta_pp)
    assert row.unit == "metric units" and row.dataset == "hopper_returns"
    with pytest.raises(ValueError, match="'metric_low' parameter .* must be given together "
                                         "with 'metric_high'.*Got \\[0, None\\]"):
        generators.get("real_pool", csv=rl_pool, null=False, metric_low=0)


def test_calibrate_prints_the_pool_in_its_units(rl_pool, tmp_path, capsys):
    assert main(["--k", "3", "--generator", "real_pool", "--param", f"csv={rl_pool}",
                 "null=false", "--metric-range", "0", "2000", "--protocols", "paired_t",
                 "--sims", "100", "--out", str(tmp_path / "o"),
                 "--no-plot", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "real_pool: hopper_returns effect" in out
    assert "effect +1.472 (score in [0, 2000])" in out  # the pool's mean delta
    assert " pp" not in out.split("real pools:")[0]
    assert "base_acc_pct" not in out and "base_mean" in out
    summary = pd.read_csv(tmp_path / "o" / "pool_summary.csv")
    assert summary.unit.tolist() == ["metric units"]
    with pytest.raises(ValueError, match="--metric-range describes a CSV pool's metric; it "
                                         "goes with a CSV pool"):
        main(["--k", "3", "--metric-range", "0", "2", "--out", str(tmp_path / "p"),
              "--quiet", "--no-plot"])


def test_percent_csv_pool(tmp_path):
    path = _pool(tmp_path / "pct.csv", 90 + 0.4 * np.sin(np.arange(12)), [0.5] * 12)
    with pytest.raises(ValueError, match="outside"):
        generators.get("real_pool", csv=path, null=False)
    g = generators.get("real_pool", csv=path, null=False, percent=True)
    assert g.fixed_effect() == pytest.approx(0.005)
    assert pool_summary([g]).iloc[0].mean_delta_pp == pytest.approx(0.5)
