"""``mcnemar``: the exact McNemar verdict and the interval printed beside it.

Two fixed models answer the same ``n`` binary questions once each (design ``models``): the
baseline is right with probability ``base`` (0.7), the variant with ``base + delta``, and
the two indicators of one question have correlation ``rho`` (0.5; the phi coefficient), so
the 2x2 cell probabilities are

    pi_a = p1 p2 + rho sqrt(p1 (1 - p1) p2 (1 - p2)),  pi_b = p1 - pi_a,
    pi_c = p2 - pi_a,  pi_d = 1 - pi_a - pi_b - pi_c

(``p1 = base``, ``p2 = base + delta``) and the true difference is ``pi_c - pi_b = delta``.
The tables are drawn from the multinomial directly (one vectorized call per cell).

Further cells give the four cell probabilities directly (``cells``: both right, baseline
only, variant only, neither): discordance that runs one way (``pi_b = 0``, where Newcombe's
interval covered 88.5% at n = 100 by enumeration) at n = 20, 50, 100, and 100 identical
answers (no discordance: the interval must hold 0; Newcombe's printed [-1.92, +1.92] pp).

Scored per cell, as ``evaluate`` prints them (:func:`protocols.methods.mcnemar.mcnemar_tables`
with ``exact=True``, as the comparison does): the exact McNemar verdict's false rejections
(``delta = 0``) or power; the coverage of ``delta`` by the Bonferroni interval beside it
(``ci="bonferroni"``, guaranteed coverage); for contrast the former matched Newcombe
interval (``"mcnemar interval, matched (old)"``); and, reported only, the share of tables
where the verdict and the interval disagree (0 by construction) and where the verdict and
plain Newcombe's interval would have (the audit's 1-5%).
"""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import MODELS
from evalcal_core.validate import check_int, check_number, fail
from protocols.methods.mcnemar import mcnemar_tables

NAME = "mcnemar"
DESIGN = MODELS

#: nominal two-sided level of every decision scored here
ALPHA = 0.05
#: the baseline's accuracy and the per-question correlation of the arms (fractions)
_COMMON = {"base": 0.7, "rho": 0.5}
#: true differences of accuracy (fractions: 0.05 = 5 pp)
DELTAS = (0.0, 0.05, 0.1, -0.1)

#: one-way discordance (pi_b = 0, pi_c = 0.02 or 0.1; both right 0.5) and 100 identical
#: answers (fractions)
_ONE_WAY = ((0.5, 0.0, 0.02, 0.48), (0.5, 0.0, 0.1, 0.4))
_IDENTICAL = (0.7, 0.0, 0.0, 0.3)

CELLS = ([{**_COMMON, "n": n, "delta": delta} for n in (20, 50, 200) for delta in DELTAS]
         + [{"cells": list(cells), "n": n} for cells in _ONE_WAY for n in (20, 50, 100)]
         + [{"cells": list(_IDENTICAL), "n": 100}])

QUICK_CELLS = [{**_COMMON, "n": 20, "delta": 0.0}, {**_COMMON, "n": 200, "delta": 0.1},
               {"cells": list(_ONE_WAY[0]), "n": 100}]


def cell_probabilities(base: float, delta: float, rho: float) -> np.ndarray:
    """The 2x2 cell probabilities ``(pi_a, pi_b, pi_c, pi_d)`` (see the module docstring).

    Parameters
    ----------
    base : float
        Baseline accuracy, a fraction in (0, 1).
    delta : float
        Variant minus baseline accuracy, a fraction; ``base + delta`` in (0, 1).
    rho : float
        Correlation of the two arms' 0/1 scores on a question, in [-1, 1].

    Returns
    -------
    ndarray, shape (4,)
        Both right, baseline only, variant only, neither.

    Raises
    ------
    ValueError
        When a parameter is out of range or the cells would be negative.
    """
    owner = "cell_probabilities"
    base = check_number(base, "base", owner, low=0, high=1, low_open=True, high_open=True)
    delta = check_number(delta, "delta", owner, low=-base, high=1 - base, low_open=True,
                         high_open=True)
    rho = check_number(rho, "rho", owner, low=-1, high=1)
    p1, p2 = base, base + delta
    both = p1 * p2 + rho * np.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
    cells = np.array([both, p1 - both, p2 - both, 1 - p1 - p2 + both])
    if cells.min() < 0:
        raise fail("rho", f"a correlation that keeps every cell >= 0 with base = {base:g} "
                          f"and delta = {delta:g}", rho, owner)
    return cells


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Draw ``sims`` tables of one cell and score the exact McNemar verdict and interval.

    Parameters
    ----------
    params : dict
        One of :data:`CELLS`: ``n`` (questions) and either ``delta`` (fraction), ``base``,
        ``rho`` or ``cells`` (the four cell probabilities, fractions summing to 1).
    sims : int
        Experiments, drawn in one vectorized call.
    rng : numpy.random.Generator

    Returns
    -------
    list of dict
        Outcomes (see :mod:`sim.decisions`): ``"mcnemar exact"`` rejection (delta 0) or
        power; ``"mcnemar interval"`` and ``"mcnemar interval, matched (old)"`` coverage of
        delta; ``"verdict/interval disagree"``
        and ``"verdict/newcombe disagree"`` as power (reported, not judged).
    """
    rng = np.random.default_rng(rng)
    sims = check_int(sims, "sims", NAME, low=1)
    n = check_int(params["n"], "n", NAME, low=1)
    if "cells" in params:
        probs = np.asarray(params["cells"], dtype=float)
        delta = float(probs[2] - probs[1])
    else:
        delta = float(params["delta"])
        probs = cell_probabilities(params["base"], delta, params["rho"])
    a, b, c, d = rng.multinomial(n, probs, size=sims).T
    shown = mcnemar_tables(a, b, c, d, ALPHA, exact=True)
    matched = mcnemar_tables(a, b, c, d, ALPHA, exact=True, ci="matched")
    plain = mcnemar_tables(a, b, c, d, ALPHA, exact=True, ci="newcombe")
    significant = shown.p_value < ALPHA

    def disagree(t):
        return int((((t.ci_low > 0) | (t.ci_high < 0)) != significant).sum())

    # pi_c - pi_b = (p2 - both) - (p1 - both) = delta: the interval's target
    def covered(t):
        return int(((t.ci_low <= delta) & (delta <= t.ci_high)).sum())

    return [
        {"decision": "mcnemar exact", "measure": "rejection" if delta == 0 else "power",
         "hits": int(significant.sum()), "sims": sims, "alpha": ALPHA},
        {"decision": "mcnemar interval", "measure": "coverage", "hits": covered(shown),
         "sims": sims, "alpha": ALPHA},
        {"decision": "mcnemar interval, matched (old)", "measure": "coverage",
         "hits": covered(matched), "sims": sims, "alpha": ALPHA},
        {"decision": "verdict/interval disagree", "measure": "power",
         "hits": disagree(shown), "sims": sims, "alpha": ALPHA},
        {"decision": "verdict/newcombe disagree", "measure": "power",
         "hits": disagree(plain), "sims": sims, "alpha": ALPHA},
    ]
