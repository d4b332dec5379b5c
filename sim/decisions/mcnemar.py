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

from evalcal_core.designs import COMPARE_MODELS, MODELS, Design
from evalcal_core.validate import check_int, check_number, fail
from protocols.analysis.primary import primary_result
from protocols.methods.mcnemar import mcnemar_tables
from sim.end_to_end import Sample, tidy

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


def _draw(params: dict, sims: int, rng):
    """``(delta, (a, b, c, d))``: the cell's true difference (fraction) and ``sims`` tables
    drawn from it (counts of questions both right, baseline only, variant only, neither)."""
    rng = np.random.default_rng(rng)
    sims = check_int(sims, "sims", NAME, low=1)
    n = check_int(params["n"], "n", NAME, low=1)
    if "cells" in params:
        probs = np.asarray(params["cells"], dtype=float)
        delta = float(probs[2] - probs[1])
    else:
        delta = float(params["delta"])
        probs = cell_probabilities(params["base"], delta, params["rho"])
    return delta, tuple(rng.multinomial(n, probs, size=sims).T)


def tables_as_scores(tables) -> tuple[np.ndarray, np.ndarray]:
    """One 0/1 run per model ``(sims, 1, n)`` with the given 2x2 tables: the first ``a``
    questions right for both, the next ``b`` for the baseline only, then ``c`` for the
    variant only, the rest for neither (the order does not change McNemar's verdict)."""
    a, b, c, d = (np.asarray(t)[:, None] for t in tables)
    pos = np.arange(int((a + b + c + d)[0, 0]))
    base = pos < a + b
    variant = (pos < a) | ((pos >= a + b) & (pos < a + b + c))
    return base[:, None, :].astype(float), variant[:, None, :].astype(float)


def _printed(tables):
    """The verdict and interval ``evaluate`` prints for these tables: the design's primary
    protocol (exact McNemar for one 0/1 run) by the function its comparisons call
    (:func:`protocols.analysis.primary.primary_result`), on the tables' questions."""
    base, variant = tables_as_scores(tables)
    design = Design(compare=COMPARE_MODELS, runs=1, n_questions=base.shape[-1])
    return primary_result(design, base, variant, ALPHA, binary=True)


def _decisions(delta: float, tables) -> dict:
    """Each table's scored decisions, as ``evaluate`` prints them (:func:`_printed`): the
    verdict, the interval's coverage of ``delta``, the verdict and the interval
    disagreeing; and, not printed, the matched interval's coverage
    and plain Newcombe's disagreeing with the verdict."""
    shown = _printed(tables)
    matched = mcnemar_tables(*tables, ALPHA, exact=True, ci="matched")
    plain = mcnemar_tables(*tables, ALPHA, exact=True, ci="newcombe")
    significant = shown.p_value < ALPHA

    def disagree(t):
        return ((t.ci_low > 0) | (t.ci_high < 0)) != significant

    # pi_c - pi_b = (p2 - both) - (p1 - both) = delta: the interval's target
    def covered(t):
        return (t.ci_low <= delta) & (delta <= t.ci_high)

    return {"significant": significant, "covered": covered(shown),
            "disagree": disagree(shown), "covered (old)": covered(matched),
            "newcombe disagree": disagree(plain)}


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
    delta, tables = _draw(params, sims, rng)
    sims = len(tables[0])
    decided = _decisions(delta, tables)

    def row(decision, measure, name):
        return {"decision": decision, "measure": measure, "hits": int(decided[name].sum()),
                "sims": sims, "alpha": ALPHA}

    return [row("mcnemar exact", "rejection" if delta == 0 else "power", "significant"),
            row("mcnemar interval", "coverage", "covered"),
            row("mcnemar interval, matched (old)", "coverage", "covered (old)"),
            row("verdict/interval disagree", "power", "disagree"),
            row("verdict/newcombe disagree", "power", "newcombe disagree")]


#: the decisions of :func:`_decisions` that ``evaluate`` prints (the matched interval is
#: no longer printed, and plain Newcombe's never was)
PRINTED = ("significant", "covered", "disagree")


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` tables of the cell as users' files (:mod:`sim.end_to_end`): one run of 0/1
    scores per model, the questions of each table written as ``a`` rows both right, ``b``
    baseline only, ``c`` variant only and ``d`` neither (McNemar reads the counts only),
    compared with the default options; the same draws and decisions as :func:`simulate`
    (those in :data:`PRINTED`: the verdict, the interval's coverage, and whether the two
    disagree, ``interval_agrees`` in the ``--json`` body)."""
    delta, tables = _draw(params, sims, rng)
    counts = np.stack(tables, axis=-1)
    base_of, variant_of = np.array([1.0, 1.0, 0.0, 0.0]), np.array([1.0, 0.0, 1.0, 0.0])
    frames = []
    for row in counts:
        kind = np.repeat(np.arange(4), row)
        frames.append(tidy({"base": base_of[kind][None], "variant": variant_of[kind][None]}))
    decided = _decisions(delta, tables)
    delta_pp = 100.0 * delta

    def read(body: dict) -> dict:
        row = body["comparisons"][0]
        return {"significant": bool(row["significant"]),
                "covered": bool(row["ci_low"] <= delta_pp <= row["ci_high"]),
                "disagree": not row["interval_agrees"]}

    return Sample(frames, {}, {k: decided[k] for k in PRINTED}, read)
