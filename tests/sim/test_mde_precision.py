"""The minimum detectable effect to 2%: the effect grid's steps, and paired_t against the
exact noncentral-t value (statsmodels TTestPower)."""

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.power import TTestPower

from sim import generators
from sim.calibrate import main
from sim.solve import GRID_MAX_PP, grid_cap, grid_effect


def test_effect_grid_steps_are_at_most_two_percent():
    g = generators.get("seed_gaussian")
    effects = np.array([grid_effect(j) for j in range(grid_cap(g) + 1)])
    ratio = effects[1:] / effects[:-1]
    assert (ratio > 1).all() and ratio.max() <= 1.02
    assert effects[-1] <= GRID_MAX_PP


@pytest.mark.slow
def test_mde_within_two_percent_of_the_noncentral_t(tmp_path):
    """paired_t on seed_gaussian (delta sd 0.5 pp), 20,000 simulations per cell: the
    searched MDE at k = 3..10 is within 2% of the exact one (TTestPower's effect size for
    power 0.8 times the delta sd), and inside its own Monte Carlo bracket. At 20,000
    simulations the power's sd near 0.8 is 0.0028, about 0.4% of the effect."""
    assert main(["--k", "3", "10", "--effects", "0", "1", "--protocols", "paired_t",
                 "--sims", "20000", "--seed", "1", "--out", str(tmp_path), "--no-plot",
                 "--quiet", "--mde", "--k-max", "10"]) == 0
    mde = pd.read_csv(tmp_path / "mde.csv")
    sd = generators.get("seed_gaussian").delta_sd()
    assert list(mde.k) == list(range(3, 11))
    for row in mde.itertuples():
        exact = 100 * sd * TTestPower().solve_power(nobs=row.k, power=0.8, alpha=0.05)
        print(f"k = {row.k}: MDE {row.mde_pp:.4g} pp [{row.mde_low_pp:.4g}, "
              f"{row.mde_high_pp:.4g}], exact {exact:.4g} pp ({row.mde_pp / exact - 1:+.2%})")
        assert abs(row.mde_pp / exact - 1) <= 0.02
        assert row.mde_low_pp <= exact <= row.mde_high_pp
