"""A real pool's null cell that no number of simulations can decide stops at once and says
so (references: scipy.stats.beta / norm written out here, the rule's documented formulas)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from sim import validity
from sim.validity import ValidityRule

RULE = ValidityRule.make(0.05, 2000)


def _reference(x, n, sd, rule=RULE):
    tail = rule.level / rule.looks
    low = stats.beta.ppf(tail, x, n - x + 1) if x > 0 else 0.0
    high = stats.beta.isf(tail, x + 1, n - x) if x < n else 1.0
    z = stats.norm.isf(tail)
    never_valid = low + z * sd > rule.alpha + rule.tolerance
    never_invalid = rule.looks * stats.norm.sf((high - rule.alpha) / sd) > rule.invalid_level
    return bool(never_valid and never_invalid)


def test_pool_limited_follows_its_formula():
    for x, sd in [(104, 0.02), (104, 0.001), (100, 0.008), (160, 0.01), (60, 0.03)]:
        got = bool(validity.pool_limited([x], [2000], [sd], RULE)[0])
        assert got == _reference(x, 2000, sd), (x, sd)
    # a 2 pp pool error at a rate near alpha: out of reach; 0.1 pp: more simulations help
    assert validity.pool_limited([104], [2000], [0.02], RULE)[0]
    assert not validity.pool_limited([104], [2000], [0.001], RULE)[0]
    assert not validity.pool_limited([104], [2000], [np.nan], RULE)[0]


def test_judge_stops_a_pool_limited_cell_at_the_first_look():
    null = pd.DataFrame({"rejections": [104, 104], "sims": [2000, 2000],
                         "pool_sd": [0.02, 0.001], "protocol": ["a", "b"], "k": [3, 3]})
    judged = validity.judge(null, RULE)
    assert list(judged["state"]) == [validity.UNDECIDED, validity.PENDING]
    assert list(judged["pool_limited"]) == [True, False]
