"""Whole leaderboards (:mod:`protocols.leaderboard`): false separations, simultaneous rank
intervals and the confidence set for the best.

Generator (design ``models``): ``m`` fixed systems answer the same ``n`` binary questions
once; system ``i`` answers question ``q`` right with probability ``expit(1 + a_i + u_q)``,
``u ~ N(0, 1)`` (shared difficulty, so the systems' answers are correlated as on a real
board). ``null``: every ``a_i = 0``; ``tiers``: four tiers of equal systems, ``a`` spaced by
``gap`` logits between tiers, so the true order has ties. A system's true accuracy (over the
population of questions) is increasing in ``a_i``: the true ranks and the true best follow.

Outcomes: ``any false separation`` (a pair shown ordered whose truth is tied or reversed:
judged against alpha), ``rank intervals`` (every system's interval holds every rank its
tie group allows: ``low <= 1 + #{better}`` and ``high >= m - #{worse}``: judged as a
coverage), ``best set`` (it holds a truly best system: coverage), and the share of truly
different pairs separated (power, reported).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from protocols import leaderboard as lb

NAME = "leaderboard"
DESIGN = "models"
ALPHA = 0.05

CELLS = [
    {"systems": 10, "n": 200, "scenario": "null", "gap": 0.0},
    {"systems": 10, "n": 200, "scenario": "tiers", "gap": 0.3},
    {"systems": 10, "n": 1000, "scenario": "tiers", "gap": 0.15},
    {"systems": 30, "n": 500, "scenario": "null", "gap": 0.0},
    {"systems": 30, "n": 500, "scenario": "tiers", "gap": 0.2},
]
QUICK_CELLS = [CELLS[1]]


def abilities(params: dict) -> np.ndarray:
    """The systems' logit abilities ``a`` (four tiers of equal systems, or all 0)."""
    m = params["systems"]
    if params["scenario"] == "null":
        return np.zeros(m)
    return params["gap"] * (np.arange(m) * 4 // m)


def _outcome(decision, measure, hits, sims):
    return {"decision": decision, "measure": measure, "hits": int(hits), "sims": int(sims),
            "alpha": ALPHA}


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Score the leaderboard decisions on ``sims`` boards (see the module docstring)."""
    a = abilities(params)
    m, n = params["systems"], params["n"]
    u = rng.standard_normal((sims, 1, n))
    x = (rng.random((sims, m, n)) < special.expit(1.0 + a[:, None] + u)).astype(np.float64)
    d = lb.simultaneous_pairs(x, ALPHA, rng=rng)
    better = a[:, None] > a[None, :]               # better[i, j]: i truly better than j
    false = (d.separated & ~better).any(axis=(-2, -1))
    n_better = better.sum(axis=0)                  # systems truly better than i
    n_worse = better.sum(axis=1)
    covered = ((d.rank_low <= 1 + n_better) & (d.rank_high >= m - n_worse)).all(axis=-1)
    best = (d.best_set & (a == a.max())).any(axis=-1)
    out = [_outcome("leaderboard any false separation", "rejection", false.sum(), sims),
           _outcome("leaderboard rank intervals", "coverage", covered.sum(), sims),
           _outcome("leaderboard best set", "coverage", best.sum(), sims)]
    if better.any():
        out.append(_outcome("leaderboard true pairs separated", "power",
                            (d.separated & better).sum(), sims * better.sum()))
    return out
