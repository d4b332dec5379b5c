"""Whole leaderboards (:mod:`protocols.leaderboard`): false separations, simultaneous rank
intervals, tiers and the confidence set for the best.

Generator (design ``models``): ``m`` fixed systems answer the same ``n`` binary questions
once; system ``i`` answers question ``q`` right with probability ``expit(1 + a_i + u_q)``,
``u ~ N(0, 1)`` (shared difficulty, so the systems' answers are correlated as on a real
board). ``null``: every ``a_i = 0``; ``tiers``: four tiers of equal systems, ``a`` spaced by
``gap`` logits between tiers, so the true order has ties; ``spread``: every system
different, ``a`` evenly spaced over ``[0, gap]`` (one best, neighbours nearly tied);
``coin``: every system answers every question right with probability 0.5, independently (no
shared difficulty: half the questions of a pair discordant, at zero effect); ``constant``:
system 0 answers every question wrong and system 1 every question right (``a = -inf,
+inf``), the others tied at ``a = 0``. A system's true accuracy (over the population of
questions) is increasing in ``a_i``: the true ranks and the true best follow.

Outcomes: ``any false separation`` (a pair shown ordered whose truth is tied or reversed:
judged against alpha), ``rank intervals`` (every system's interval holds every rank its
tie group allows: ``low <= 1 + #{better}`` and ``high >= m - #{worse}``: judged as a
coverage), ``best set`` (it holds a truly best system: coverage) and its size (the share of
the ``m`` systems kept: reported as ``refused``, systems on which the set gives no
verdict), ``tiers misordered`` (two systems in different tiers, the higher one not truly
better: judged against alpha), the share of truly different pairs separated (power,
reported), and on ``constant`` boards the all-1 system separated above the all-0 one
(power). The ``(old)`` rows are the rules ``evaluate`` used before issue 45 on the same
boards: one max-T critical value from multivariate-t draws shared by all boards of a block
(2,000 draws), no separation of a pair with a constant delta, the best set as "no system
separated above", greedy tiers cut at the current tier's leader.

Each board is decided as ``evaluate --leaderboard --seed SEED`` decides it
(:func:`decide_boards`): alone, its sign flips drawn from ``numpy.random.default_rng(SEED)``
with a seed of its own, so that the grid's decision on a board is the one a user with that
board and that seed is shown (:func:`sample`, checked by :mod:`reports.end_to_end`).

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
from protocols.analysis.board import rank_units
from sim.end_to_end import Sample, tidy

from . import OLD_SUFFIX

NAME = "leaderboard"
DESIGN = MODELS
ALPHA = 0.05

CELLS = [
    {"systems": 10, "n": 200, "scenario": "null", "gap": 0.0},
    {"systems": 10, "n": 200, "scenario": "tiers", "gap": 0.3},
    {"systems": 10, "n": 1000, "scenario": "tiers", "gap": 0.15},
    {"systems": 30, "n": 500, "scenario": "null", "gap": 0.0},
    {"systems": 30, "n": 500, "scenario": "tiers", "gap": 0.2},
    # issue 45: half the questions discordant at zero effect, constant systems, one best
    {"systems": 10, "n": 200, "scenario": "coin", "gap": 0.0},
    {"systems": 10, "n": 300, "scenario": "coin", "gap": 0.0},
    {"systems": 10, "n": 500, "scenario": "coin", "gap": 0.0},
    {"systems": 10, "n": 200, "scenario": "constant", "gap": 0.0},
    {"systems": 10, "n": 500, "scenario": "spread", "gap": 0.5},
]
QUICK_CELLS = [CELLS[1], CELLS[8]]
#: public-board scale (issue 37): all tied, and every system different over 1 logit
BOARD_CELLS = [
    {"systems": 135, "n": 500, "scenario": "null", "gap": 0.0},
    {"systems": 135, "n": 500, "scenario": "spread", "gap": 1.0},
]
#: boards per public-board cell (the issue's 200: binomial SE 1.5 pp at 5%)
BOARD_SIMS = 200
#: boards simulated at once in :func:`board_check` (a block's x is 50 x 135 x 500 floats)
BLOCK_BOARDS = 50
#: (intercept, sd of the shared difficulty) of the answers' logit, by scenario
LOGIT = {"coin": (0.0, 0.0)}
DEFAULT_LOGIT = (1.0, 1.0)
#: the old rule's multivariate-t draws, one set per block of boards
OLD_DRAWS = 2_000
#: the old rule's "no variance estimate": an SE at most this fraction of the data's scale
#: (the protocols' SE_RTOL when the rule was replaced)
OLD_SE_RTOL = 1e-12


def abilities(params: dict) -> np.ndarray:
    """The systems' logit abilities ``a`` (see the module docstring)."""
    m = params["systems"]
    if params["scenario"] in ("null", "coin"):
        return np.zeros(m)
    if params["scenario"] == "constant":
        return np.concatenate([[-np.inf, np.inf], np.zeros(m - 2)])
    if params["scenario"] == "spread":
        return params["gap"] * np.arange(m) / (m - 1)
    return params["gap"] * (np.arange(m) * 4 // m)


def _outcome(decision, measure, hits, sims):
    return {"decision": decision, "measure": measure, "hits": int(hits), "sims": int(sims),
            "alpha": ALPHA}


def _greedy_tiers(means, separated):
    """The old display tiers: a new tier starts at the first system (by mean) that the
    current tier's leader is separated from."""
    m = means.shape[-1]
    order = np.argsort(-means, axis=-1, kind="stable")
    boards = np.arange(order.shape[0])
    tier = np.empty_like(order)
    current = np.ones(boards.size, dtype=int)
    leader = order[:, 0].copy()
    for pos in range(m):                 # m steps, every board at once
        i = order[:, pos]
        new = separated[boards, leader, i]
        current += new
        leader = np.where(new, i, leader)
        tier[boards, i] = current
    return tier


def old_rule(x, rng):
    """The leaderboard before issue 45 on boards ``x`` (sims, m, n): ``(separated,
    best_set, tier)``. Max-T over all pairs' t statistics with one critical value per
    board from :data:`OLD_DRAWS` multivariate-t draws (``N(0, V / n)`` over one
    ``sqrt(chi2_{n-1} / (n - 1))``) shared by every board; pairs without a variance
    estimate never separated."""
    b, m, n = x.shape
    means, diff, se = lb.pair_se(x)
    scale = np.abs(x).max(axis=(-2, -1))[:, None, None]
    degenerate = (se <= OLD_SE_RTOL * np.maximum(np.abs(diff), scale)) | np.eye(m, dtype=bool)
    centred = x - means[..., None]
    lam, vec = np.linalg.eigh(centred @ np.swapaxes(centred, -1, -2) / ((n - 1) * n))
    root = vec * np.sqrt(np.maximum(lam, 0.0))[:, None, :]
    inv_se = np.where(degenerate, 0.0, 1.0 / np.where(se > 0, se, 1.0))
    z_all = rng.standard_normal((OLD_DRAWS, m))
    chi = np.sqrt(rng.chisquare(n - 1, size=OLD_DRAWS) / (n - 1))
    maxima = np.empty((b, OLD_DRAWS))
    step = max(1, 2**23 // (m * m * OLD_DRAWS))
    for lo in range(0, b, step):         # blocks of boards: bounded memory
        z = np.einsum("pk,bmk->bpm", z_all, root[lo:lo + step]) / chi[None, :, None]
        t = np.abs(z[..., :, None] - z[..., None, :]) * inv_se[lo:lo + step, None]
        maxima[lo:lo + step] = t.reshape(t.shape[0], OLD_DRAWS, -1).max(axis=-1)
    rank = min(int(np.ceil((1.0 - ALPHA) * (OLD_DRAWS + 1))), OLD_DRAWS)
    critical = np.sort(maxima, axis=-1)[:, rank - 1]
    separated = (diff - critical[:, None, None] * se > 0) & ~degenerate
    return separated, separated.sum(axis=-2) == 0, _greedy_tiers(means, separated)


def rank_bounds(separated):
    """Simultaneous rank intervals from separations (1 = best): ``(1 + #{shown better},
    m - #{shown worse})``, shape (..., m) each (:mod:`protocols.leaderboard`)."""
    m = separated.shape[-1]
    return 1 + separated.sum(axis=-2), m - separated.sum(axis=-1)


def board_outcomes(a, separated, best_set, tier, rank_low, rank_high) -> dict:
    """Each board's scored decisions, arrays over the boards (axis 0): a false separation,
    the rank intervals covering, the best set holding a truly best system, the systems it
    keeps (count), tiers misordered, the truly different pairs separated (count) and the
    all-1 system separated above the all-0 one (``constant`` boards: ``a[0] = -inf``,
    ``a[1] = +inf``; else False).

    Parameters
    ----------
    a : ndarray, shape (m,)
        True abilities (logits): only their order matters.
    separated : ndarray of bool, shape (boards, m, m)
    best_set : ndarray of bool, shape (boards, m)
    tier, rank_low, rank_high : ndarray of int, shape (boards, m)
    """
    m = a.size
    better = a[:, None] > a[None, :]               # better[i, j]: i truly better than j
    n_better = better.sum(axis=0)                  # systems truly better than i
    n_worse = better.sum(axis=1)
    constant = bool(np.isneginf(a[0]) and np.isposinf(a[1]))
    return {"false separation": (separated & ~better).any(axis=(-2, -1)),
            # every rank the system's tie group allows: 1 + #better ... m - #worse
            "rank intervals cover": ((rank_low <= 1 + n_better)
                                     & (rank_high >= m - n_worse)).all(axis=-1),
            "best set covers": (best_set & (a == a.max())).any(axis=-1),
            "best set size": best_set.sum(axis=-1),
            "tiers misordered": ((tier[:, :, None] < tier[:, None, :])
                                 & ~better).any(axis=(-2, -1)),
            "true pairs separated": (separated & better).sum(axis=(-2, -1)),
            "all-1 over all-0": separated[:, 1, 0] if constant
            else np.zeros(len(separated), dtype=bool)}


def _scores(name, per_board, a, sims):
    """The outcomes of one rule's decisions (:func:`board_outcomes`) on ``sims`` boards."""
    m = a.size
    better = a[:, None] > a[None, :]
    out = [_outcome(f"leaderboard any false separation{name}", "rejection",
                    per_board["false separation"].sum(), sims),
           _outcome(f"leaderboard rank intervals{name}", "coverage",
                    per_board["rank intervals cover"].sum(), sims),
           _outcome(f"leaderboard best set{name}", "coverage",
                    per_board["best set covers"].sum(), sims),
           _outcome(f"leaderboard best set: systems kept{name}", "refused",
                    per_board["best set size"].sum(), sims * m),
           _outcome(f"leaderboard tiers misordered{name}", "rejection",
                    per_board["tiers misordered"].sum(), sims)]
    if better.any():
        out.append(_outcome(f"leaderboard true pairs separated{name}", "power",
                            per_board["true pairs separated"].sum(), sims * better.sum()))
    if np.isneginf(a[0]) and np.isposinf(a[1]):       # the constant systems' board
        out.append(_outcome(f"leaderboard all-1 over all-0 separated{name}", "power",
                            per_board["all-1 over all-0"].sum(), sims))
    return out


def draw(params: dict, sims: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``(a, x)``: the systems' abilities and ``sims`` boards of 0/1 answers, shape
    ``(sims, systems, n)`` (see the module docstring)."""
    a = abilities(params)
    m, n = params["systems"], params["n"]
    intercept, sd = LOGIT.get(params["scenario"], DEFAULT_LOGIT)
    u = sd * rng.standard_normal((sims, 1, n))
    # a = -inf / +inf: probability 0 / 1, and rng.random() < 1 always
    p = special.expit(intercept + a[:, None] + u)
    return a, (rng.random((sims, m, n)) < p).astype(np.float64)


def decide_boards(x, seeds) -> dict:
    """The current rule on each board as ``evaluate --leaderboard --seed SEED`` decides it:
    :func:`protocols.analysis.board.rank_units` (the function ``evaluate`` ranks with) on
    that board alone with its sign flips from ``numpy.random.default_rng(seed)``; ``{"separated",
    "best_set", "tier", "rank_low", "rank_high"}``, stacked over the boards.

    One board at a time, not one batched call: a batch draws its boards' signs one after
    another from one stream, which no seed a user types reproduces. (It costs nothing:
    about 9 ms a board of 10 systems x 200 questions either way.)"""
    fields = ("separated", "best_set", "tier", "rank_low", "rank_high")
    out = {f: [] for f in fields}
    for board, seed in zip(x, seeds):
        d = rank_units(board, alpha=ALPHA, seed=int(seed))
        for f in fields:
            out[f].append(getattr(d, f))
    return {f: np.stack(v) for f, v in out.items()}


#: boards' seeds are drawn below this: ``--seed`` takes 0 to 2^63 - 1, but
#: ``evalcal.compare`` refuses an int above 2^53 that a float cannot hold exactly (its
#: integer check compares ``float(value)`` with ``int(value)``)
SEED_BOUND = 2**32


def _seeds(rng, sims: int) -> np.ndarray:
    """One ``--seed`` per board, below :data:`SEED_BOUND`."""
    return rng.integers(0, SEED_BOUND, size=sims)


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Score the leaderboard decisions on ``sims`` boards (see the module docstring).

    The boards are drawn from ``rng`` first; the current rule's seeds (one per board, as a
    user's ``--seed``: :func:`decide_boards`) and the old rule's draws then come from two streams
    spawned from it, so that either rule's decisions do not depend on whether the other
    ran."""
    a, x = draw(params, sims, rng)
    current_rng, old_rng = rng.spawn(2)
    d = decide_boards(x, _seeds(current_rng, sims))
    separated, best_set, tier = old_rule(x, old_rng)
    old = board_outcomes(a, separated, best_set, tier, *rank_bounds(separated))
    return _scores("", board_outcomes(a, **d), a, sims) + _scores(f" {OLD_SUFFIX}", old, a,
                                                                   sims)


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` boards of the cell as users' files (:mod:`sim.end_to_end`): one run of 0/1
    scores per system (``s00``, ``s01``, ... in ability order) on the cell's questions,
    compared with ``--leaderboard --seed SEED``; the same draws and the same decisions as
    :func:`simulate` (:func:`decide_boards`, :func:`board_outcomes`), every board with the one
    seed the user types for the cell (``SEED`` drawn from the stream :func:`simulate` draws
    the boards' seeds from). The old rule is not printed: not compared.

    The decisions read back from the ``--json`` body: its separated pairs, each system's
    tier, rank interval and ``possibly_best``, scored by the same :func:`board_outcomes`."""
    a, x = draw(params, sims, rng)
    current_rng, _ = rng.spawn(2)
    seed = int(_seeds(current_rng, 1)[0])
    names = [f"s{i:02d}" for i in range(a.size)]
    frames = [tidy({name: board[i][None] for i, name in enumerate(names)}) for board in x]
    decided = board_outcomes(a, **decide_boards(x, np.full(sims, seed)))

    def read(body: dict) -> dict:
        got = board_outcomes(a, **read_board(body, names))
        return {k: v[0].item() for k, v in got.items()}

    return Sample(frames, {"leaderboard": True, "seed": seed}, decided, read)


def read_board(body: dict, names: list[str]) -> dict:
    """A ``--leaderboard --json`` body as the decisions of one board (the keywords of
    :func:`board_outcomes`: ``separated`` (1, m, m), ``best_set``, ``tier``, ``rank_low``,
    ``rank_high`` (1, m)), systems in the order of ``names``."""
    board = body["leaderboard"]
    index = {name: i for i, name in enumerate(names)}
    m = len(names)
    separated = np.zeros((1, m, m), dtype=bool)
    for above, below in board["separated"]:
        separated[0, index[above], index[below]] = True
    rows = sorted(board["rows"], key=lambda r: index[r["system"]])

    def column(key, dtype):
        return np.array([[r[key] for r in rows]], dtype=dtype)

    return {"separated": separated, "best_set": column("possibly_best", bool),
            "tier": column("tier", int), "rank_low": column("rank_low", int),
            "rank_high": column("rank_high", int)}


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
