"""The validity rule's confirmation stage (:mod:`sim.validity`): a first-stage verdict is
printed only when an independent batch says the same, so a false verdict's probability is
the product of the two stages'."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from sim.validity import (
    INVALID,
    PENDING,
    UNDECIDED,
    VALID,
    ValidityRule,
    chunk_seed,
    confirm_seed,
    error_rates,
    extend_null_cells,
    invalid_threshold,
    judge,
    simulate_decisions,
)

ALPHA = 0.05


def _cell(x1, x2=None, n=2000, n2=None):
    """A one-cell family: first stage x1 of n, confirmation x2 of n2 (None: not drawn)."""
    return pd.DataFrame({"protocol": ["A"], "k": [3], "sims": [n], "rejections": [x1],
                         "fpr_sims": [np.nan], "fpr_rejections": [np.nan],
                         "fpr_looks": [np.nan], "fpr_p_min": [np.nan],
                         "confirm_sims": [np.nan if x2 is None else (n2 or n)],
                         "confirm_rejections": [np.nan if x2 is None else x2],
                         "confirm_looks": [np.nan if x2 is None else 1],
                         "confirm_p_min": [np.nan]})


@pytest.mark.parametrize("x1, x2, state", [
    (400, None, PENDING),     # shown invalid, not yet confirmed
    (400, 400, INVALID),      # both stages: invalid
    (400, 80, UNDECIDED),     # they disagree
    (80, None, PENDING),      # shown valid, not yet confirmed
    (80, 85, VALID),
    (80, 400, UNDECIDED),
    (120, None, PENDING),     # borderline: the first stage goes on
])
def test_printed_state_needs_both_stages(x1, x2, state):
    rule = ValidityRule.make(ALPHA, 2000)
    assert judge(_cell(x1, x2), rule)["state"].iloc[0] == state


def test_frames_without_the_stage_keep_the_first_stage_rule():
    """A frame without the confirmation columns (an older calibration.csv) is judged as
    before: 400 of 2,000 is invalid at once."""
    cells = pd.DataFrame({"protocol": ["A"], "k": [3], "sims": [2000], "rejections": [400]})
    assert judge(cells, ValidityRule.make(ALPHA, 2000))["state"].iloc[0] == INVALID


def test_invalid_threshold_is_scipys_binomial_test():
    """Reference: scipy.stats.binomtest(alternative='greater'), the smallest count whose p
    times the looks is <= the threshold."""
    for sims, max_sims, level in ((200, 200, 0.001), (2000, 32000, 0.001 / 56),
                                  (400, 1600, 0.3)):
        rule = ValidityRule.make(ALPHA, sims, max_sims=max_sims)
        got = invalid_threshold(rule, sims, level)
        ref = next(x for x in range(sims + 1) if rule.looks * stats.binomtest(
            x, sims, ALPHA, alternative="greater").pvalue <= level)
        assert got == ref


def test_false_invalid_probability_is_the_product_of_two_binomial_tails():
    """A valid protocol (rate exactly alpha), one cell, one look of 200 simulations per
    stage. Reference: both independent Binomial(200, 0.05) batches reach the count that
    scipy's exact test puts above alpha at 0.001, ``sf(c - 1) ** 2``; valid needs both
    below the count whose Clopper-Pearson bound (statsmodels) is <= alpha + tolerance.
    Implementation: :func:`judge` on every pair of counts of the two stages, weighted by the
    binomial probabilities (counts 0..45: the rest has mass < 1e-12), and
    :func:`error_rates`."""
    n = 200
    rule = ValidityRule.make(ALPHA, n, max_sims=n)
    c = next(x for x in range(n + 1)
             if stats.binomtest(x, n, ALPHA, alternative="greater").pvalue <= 0.001)
    v = max(x for x in range(n + 1) if proportion_confint(x, n, alpha=2 * 0.05,
                                                          method="beta")[1] <= 0.06)
    tail, ok = stats.binom.sf(c - 1, n, ALPHA), stats.binom.cdf(v, n, ALPHA)
    support = np.arange(46)
    pmf = stats.binom.pmf(support, n, ALPHA)
    states = np.array([[judge(_cell(int(a), int(b), n=n), rule)["state"].iloc[0]
                        for b in support] for a in support])
    weight = np.outer(pmf, pmf)
    assert weight[states == INVALID].sum() == pytest.approx(tail**2, rel=1e-9)
    assert weight[states == VALID].sum() == pytest.approx(ok**2, rel=1e-9)
    e = error_rates(ALPHA, n, max_sims=n)
    assert e["false_invalid_confirmed"] == pytest.approx(tail**2, rel=1e-9)
    assert e["false_invalid"] == pytest.approx(tail, rel=1e-9)


def test_default_rule_error_rates_are_the_stated_products():
    """The figures of the module docstring (2,000 simulations, five looks, 56 cells)."""
    e = error_rates(ALPHA, 2000, cells=56)
    assert e["false_invalid_confirmed"] == pytest.approx(e["false_invalid"] ** 2)
    assert e["false_invalid_confirmed"] < 3e-10
    assert e["valid_at_limit_confirmed"] < 0.0023
    assert e["undecided_at_alpha_confirmed"] < 3e-8


def test_confirmation_batch_is_fresh_named_and_the_same_size():
    """Through :func:`extend_null_cells` with a recording runner: a cell shown invalid at the
    first look (400 of 2,000) gets one batch of 2,000 from ``confirm_seed(seed, 1)``, a seed
    apart from the grid's and the first stage's chunks; its verdict is then printed."""
    calls = []

    class G:
        name = "g"

    def run(requests, *, sims, seed, pool_reps=0):
        calls.append((sims, seed))
        return pd.DataFrame({"generator_params": ["p"], "protocol": ["A"],
                             "protocol_params": [""], "k": [3], "sims": [sims],
                             "rejections": [sims // 5]})

    frame = pd.DataFrame({"generator_params": ["p"], "protocol": ["A"],
                          "protocol_params": [""], "k": [3], "effect_pp": [0.0],
                          "alpha": [ALPHA], "sims": [2000], "rejections": [400]})
    rule = ValidityRule.make(ALPHA, 2000)
    out = extend_null_cells(frame, rule_of=lambda a: rule, generator_of=lambda p: G(),
                            honest=lambda p, g: True, run=run, seed=4)
    assert calls == [(2000, confirm_seed(4, 1))]
    assert len({4, confirm_seed(4, 1), chunk_seed(4, 1), confirm_seed(4, 2),
                confirm_seed(5, 1)}) == 5
    row = out.iloc[0]
    assert row.confirm_sims == 2000 and row.confirm_rejections == 400
    assert judge(out, rule)["state"].iloc[0] == INVALID


@pytest.mark.slow
def test_simulated_rule_calls_a_valid_protocol_invalid_at_the_product_rate():
    """The whole stop on simulated counts (:func:`simulate_decisions`), one cell at exactly
    alpha, one look of 200, Holm level 0.3 so that the event is common: the rate of printed
    "invalid" over 800 runs is the product of the two tails (0.0414, scipy's binomial sf)
    within 4 binomial SE (0.028); one stage alone would give 0.20."""
    n, level = 200, 0.3
    rule = ValidityRule.make(ALPHA, n, max_sims=n, invalid_level=level)
    tail = stats.binom.sf(invalid_threshold(rule, n, level) - 1, n, ALPHA)
    null = pd.DataFrame({"protocol": ["A"], "k": [3]})
    runs = 800
    hits = sum(simulate_decisions(null, [ALPHA], rule, honest=lambda p: True, rng=child
                                  ).state.iloc[0] == INVALID
               for child in np.random.SeedSequence(11).spawn(runs))
    se = np.sqrt(tail**2 * (1 - tail**2) / runs)
    assert abs(hits / runs - tail**2) < 4 * se, (hits, tail**2)
