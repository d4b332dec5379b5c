"""Whole leaderboards (:mod:`protocols.leaderboard`): false separations, simultaneous rank
intervals and the confidence set for the best.

Generator (design ``models``): ``m`` fixed systems answer the same ``n`` binary questions
once; system ``i`` answers question ``q`` right with probability ``expit(1 + a_i + u_q)``,
``u ~ N(0, 1)`` (shared difficulty, so the systems' answers are correlated as on a real
board). ``null``: every ``a_i = 0``; ``tiers``: four tiers of equal systems, ``a`` spaced by
``gap`` logits between tiers, so the true order has ties; ``spread``: every system
different, ``a`` evenly spaced over ``[0, gap]`` (one best, neighbours nearly tied). A
system's true accuracy (over the population of questions) is increasing in ``a_i``: the
true ranks and the true best follow.

Outcomes: ``any false separation`` (a pair shown ordered whose truth is tied or reversed:
judged against alpha), ``rank intervals`` (every system's interval holds every rank its
tie group allows: ``low <= 1 + #{better}`` and ``high >= m - #{worse}``: judged as a
coverage), ``best set`` (it holds a truly best system: coverage), and the share of truly
different pairs separated (power, reported). Under the global null also ``tiers`` (more
than one display tier, i.e. tied systems split: judged against alpha); with real
differences the greedy display tiers make no joint claim (see
:func:`protocols.leaderboard.tiers`) and are not scored.

:data:`BOARD_CELLS` are boards at a public leaderboard's scale (135 systems x 500 binary
items, 9,045 pairs); at about 0.2-0.4 s a board they are not grid cells (4,000 boards a
cell, more at a second look, would take the grid from minutes to hours):
:func:`board_check` runs them at :data:`BOARD_SIMS` boards each
(``benchmarks/bench_leaderboard.py`` prints them judged).
"""

from __future__ import annotations

import json

import numpy as np
from scipy import special

from evalcal_core.designs import MODELS
from protocols import leaderboard as lb

NAME = "leaderboard"
DESIGN = MODELS
ALPHA = 0.05

CELLS = [
    {"systems": 10, "n": 200, "scenario": "null", "gap": 0.0},
    {"systems": 10, "n": 200, "scenario": "tiers", "gap": 0.3},
    {"systems": 10, "n": 1000, "scenario": "tiers", "gap": 0.15},
    {"systems": 30, "n": 500, "scenario": "null", "gap": 0.0},
    {"systems": 30, "n": 500, "scenario": "tiers", "gap": 0.2},
]
QUICK_CELLS = [CELLS[1]]
#: public-board scale (issue 37): all tied, and every system different over 1 logit
BOARD_CELLS = [
    {"systems": 135, "n": 500, "scenario": "null", "gap": 0.0},
    {"systems": 135, "n": 500, "scenario": "spread", "gap": 1.0},
]
#: boards per public-board cell (the issue's 200: binomial SE 1.5 pp at 5%)
BOARD_SIMS = 200
#: boards simulated at once in :func:`board_check` (a block's x is 50 x 135 x 500 floats)
BLOCK_BOARDS = 50


def abilities(params: dict) -> np.ndarray:
    """The systems' logit abilities ``a`` (four tiers of equal systems, or all 0)."""
    m = params["systems"]
    if params["scenario"] == "null":
        return np.zeros(m)
    if params["scenario"] == "spread":
        return params["gap"] * np.arange(m) / (m - 1)
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
    if not better.any():
        out.append(_outcome("leaderboard tiers (more than one)", "rejection",
                            (d.tier.max(axis=-1) > 1).sum(), sims))
    if better.any():
        out.append(_outcome("leaderboard true pairs separated", "power",
                            (d.separated & better).sum(), sims * better.sum()))
    return out


def board_check(boards: int = BOARD_SIMS, *, seed: int = 0, cells=None) -> list[dict]:
    """The public-board cells, ``boards`` boards each, scored like the grid's cells.

    Block ``b`` of :data:`BLOCK_BOARDS` boards of a cell draws from
    ``sim.grid.cell_seed(seed, "decisions", NAME, cell, 0, b)``, the decision grid's
    naming of a first look's blocks: results depend only on ``seed``.

    Returns
    -------
    list of dict
        The outcomes of :func:`simulate` with ``cell`` (the parameters) added.
    """
    from sim.grid import cell_seed

    out = []
    for params in BOARD_CELLS if cells is None else cells:
        key = json.dumps(params, sort_keys=True, separators=(",", ":"))
        pooled: dict = {}
        for b, start in enumerate(range(0, boards, BLOCK_BOARDS)):
            rng = np.random.default_rng(cell_seed(seed, "decisions", NAME, key, 0, b))
            for o in simulate(params, min(BLOCK_BOARDS, boards - start), rng):
                row = pooled.setdefault(o["decision"], {**o, "hits": 0, "sims": 0,
                                                        "cell": params})
                row["hits"] += o["hits"]
                row["sims"] += o["sims"]
        out += list(pooled.values())
    return out
