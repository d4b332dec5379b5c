"""The validity rule of :mod:`sim.validity`: its parts against outside references, its
stated error rates, and its operating characteristics on simulated counts."""

import numpy as np
import pandas as pd
import pytest
from multitest_reference import multipletests
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from sim.validity import (
    INVALID,
    VALID,
    ValidityRule,
    chunk_seed,
    error_rates,
    holm,
    judge,
    simulate_decisions,
)

ALPHA = 0.05


def test_schedule_doubles_to_the_cap():
    assert ValidityRule.make(ALPHA, 2000).schedule == (2000, 4000, 8000, 16000, 32000)
    assert ValidityRule.make(ALPHA, 300, max_sims=1000).schedule == (300, 600, 1000)
    assert ValidityRule.make(ALPHA, 300, max_sims=300).looks == 1
    assert ValidityRule.make(ALPHA, 2000).tolerance == pytest.approx(ALPHA / 5)


def test_upper_bound_is_one_sided_clopper_pearson():
    """Reference: statsmodels' Clopper-Pearson ('beta') interval at twice the one-sided
    level; the pool sd widens it in quadrature."""
    rule = ValidityRule.make(ALPHA, 2000)  # 5 looks: one-sided 0.01
    for x in (0, 7, 100, 1999, 2000):
        _, high = proportion_confint(x, 2000, alpha=2 * 0.01, method="beta")
        high = 1.0 if x == 2000 else high
        assert rule.upper(x, 2000) == pytest.approx(high, abs=1e-12)
    cp = rule.upper(100, 2000)
    z = stats.norm.isf(0.01)
    assert rule.upper(100, 2000, 0.01) == pytest.approx(0.05 + np.hypot(cp - 0.05, z * 0.01))


def test_p_value_is_the_exact_one_sided_binomial_test():
    """Reference: scipy.stats.binomtest(alternative='greater')."""
    rule = ValidityRule.make(ALPHA, 2000)
    for x in (0, 100, 130, 2000):
        ref = stats.binomtest(x, 2000, ALPHA, alternative="greater").pvalue
        assert rule.p_above(x, 2000) == pytest.approx(ref, rel=1e-9)


def test_holm_matches_statsmodels():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.uniform(0, 0.1, rng.integers(1, 30)) ** 2
        ref = multipletests(p, alpha=0.05, method="holm")[0]
        assert (holm(p, 0.05) == ref).all()


def test_judge_states():
    rule = ValidityRule.make(ALPHA, 2000, max_sims=8000)
    cells = pd.DataFrame({"protocol": list("abcd"), "k": 3,
                          "sims": [32000, 2000, 2000, 8000],
                          "rejections": [1600, 400, 120, 440]})
    states = judge(cells, rule)["state"].tolist()
    assert states == [VALID, INVALID, "pending", "undecided"]


def test_chunk_seeds_are_named_by_seed_and_look():
    assert chunk_seed(0, 1) == chunk_seed(0, 1)
    assert len({chunk_seed(s, j) for s in range(3) for j in range(1, 5)}) == 12
    assert all(0 <= chunk_seed(s, 1) < 2**63 for s in range(5))


def test_stated_error_rates():
    """The error rates stated for the README (exact binomial sums, 2,000 simulations,
    alpha = 0.05, default tolerance and cap, 56 null cells: 7 protocols x k = 3..10)."""
    e = error_rates(ALPHA, 2000, cells=56)
    assert e["schedule"] == (2000, 4000, 8000, 16000, 32000)
    assert e["false_invalid"] < 0.002  # per exactly-alpha cell, Holm's strictest threshold
    assert e["valid_at_limit"] <= 0.05
    assert e["valid_at_2alpha"] < 1e-15
    assert e["undecided_at_alpha"] < 1e-7


def _default_grid():
    return pd.DataFrame([(p, k) for p in "ABCDEFG" for k in range(3, 11)],
                        columns=["protocol", "k"])


@pytest.mark.slow
def test_exact_alpha_is_recommended_and_2alpha_never():
    """Over 200 simulated default grids (7 protocols x k = 3..10, 2,000 simulations per first
    look; counts drawn as Binomial(n, rate), the rule run as in the calibration): four
    protocols exactly at alpha are shown valid at every k in >= 99% of grids; a protocol at
    2 alpha (with two pitfalls at 3 alpha) is never shown valid at every k. Binomial
    anchor: 200 grids x 4 protocols, 99% leaves ~1.4 SE of room at a true 99.5%."""
    rule = ValidityRule.make(ALPHA, 2000)
    null = _default_grid()
    rates = np.select([null.protocol.isin(list("ABCD")), null.protocol == "E"],
                      [ALPHA, 2 * ALPHA], 3 * ALPHA)
    honest = list("ABCDE")
    exact_ok, double_ok, invalid_exact = 0, 0, 0
    for g in range(200):
        j = simulate_decisions(null, rates, rule, honest=lambda p: p in honest, rng=g)
        for p in "ABCD":
            states = j[j.protocol == p].state
            exact_ok += (states == VALID).all()
            invalid_exact += (states == INVALID).any()
        double_ok += (j[j.protocol == "E"].state == VALID).all()
    print(f"exactly alpha valid at every k: {exact_ok / 800:.4f}; called invalid: "
          f"{invalid_exact / 800:.4f}; 2 alpha valid: {double_ok / 200:.3f}")
    assert exact_ok / 800 >= 0.99
    assert double_ok == 0


def test_sequential_stop_in_a_calibration(tmp_path):
    """End to end: borderline null cells of paired_t (400 simulations at the first look)
    get chunks until decided; the chunks are cached cells of their own seeds, so a second
    run in a fresh folder gives the same numbers, and the grid's own counts are kept."""
    from sim.calibrate import main

    frames = []
    for run in ("a", "b"):
        out = tmp_path / run
        assert main(["--k", "3", "4", "--effects", "0", "1", "--protocols", "paired_t",
                     "--sims", "400", "--seed", "5", "--out", str(out), "--no-plot",
                     "--quiet", "--jobs", "1", "--k-max", "6"]) == 0
        frames.append(pd.read_csv(out / "calibration.csv"))
    pd.testing.assert_frame_equal(frames[0], frames[1])
    null = frames[0][frames[0].effect_pp == 0]
    assert (null.sims == 400).all()
    extended = null[null.fpr_sims.notna()]
    assert not extended.empty
    assert (extended.fpr_sims > 400).all() and (extended.fpr_sims <= 16 * 400).all()
    assert (extended.fpr_rejections >= extended.rejections).all()
