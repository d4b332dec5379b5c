"""``real_leaderboard``: ``evaluate --leaderboard`` on real boards with a tie planted by
splitting one model in two.

A board is ``systems`` systems of a real pool (:mod:`evalcal_core.pools`) answering ``n`` of
the pool's ``N`` items, drawn without replacement per board: the *tied pair* (``s00`` and
``s01``), two pseudo-models made of one model X, and the ``systems - 2`` models nearest X in
accuracy over the pool (``others``: the hardest neighbours to order). X is the model of
median accuracy. The tie is exact over the pool, the population the items are drawn from:

* ``split = "attempts"`` (a repeated-attempt pool, ``R >= 2``: LiveCodeBench): on each item
  the pair's two answers are two different attempts of X, drawn at random (exchangeable);
  every other system answers with one of its attempts drawn at random;
* ``split = "swap"`` (one attempt: MMLU-Pro, SWE-bench Verified): ``s00`` is X; ``s01`` is
  X with ``swaps`` right answers turned wrong and ``swaps`` wrong answers turned right, at
  items drawn per board over the whole pool, so the two have the same number right over
  the pool. ``swaps`` is half the median share of items on which X and one of its
  neighbours disagree, times ``N`` (a real pair's discordance).

Every system's truth is its accuracy over the pool (its count of right attempts): the tied
pair's two are equal, the others' differences are the pool's. Each board is decided by
:func:`sim.decisions.leaderboard.decide_boards` (``evaluate --leaderboard --seed SEED`` on
that board alone) and scored by :func:`sim.decisions.leaderboard.board_outcomes` (any false
separation, rank intervals, the best set, tiers misordered, power), plus the tied pair told
apart: separated, put in different tiers, given disjoint rank intervals (each a false
statement: disjoint intervals imply a false separation somewhere), and any of the three, each
judged against alpha; and, reported as a ``share`` (not judged), one of the two kept in the
possibly-best set and the other not: not a false statement (the set keeps every system no
rival is shown better than, and a truly better neighbour may be shown better than one twin
and not the other), but what a reader sees as the two told apart.

Pool-sampling facts: the cell names the pool, X (``tied``), the other models by name
(``others``), the items (``n`` of ``items``) and attempts (``dropped_ragged``: models
left out for ragged attempts); the rate is over this board's
models and this pool's items, and its Wilson interval is the Monte Carlo error only.
"""

from __future__ import annotations

import functools

import numpy as np

from evalcal_core.designs import MODELS
from evalcal_core.pool_paths import find_pool
from evalcal_core.validate import check_int, fail
from sim.end_to_end import Sample, tidy

from . import _real_pools
from .leaderboard import ALPHA, SEED_BOUND, board_outcomes, decide_boards, read_board

NAME = "real_leaderboard"
DESIGN = MODELS
OWNER = f"decision grid family {NAME}"
#: the boards of the default cells (skipped, with one line, where absent)
POOLS = ("lcb_codegen_20240417", "mmlupro_cot5", "swebench_verified_bash")
#: systems on a board (the tied pair and the nearest others)
SYSTEMS = 8
#: items per board: half the pool's, at most this many
MAX_N = 300
#: the tied pair told apart by a false statement: separated, in different tiers or with
#: disjoint rank intervals (judged against alpha)
TOLD_APART = "tied pair told apart (separated, tiers or rank intervals)"
#: one of the pair in the possibly-best set, the other not: no false statement (the set
#: keeps every system not shown beaten, and X's twin may be shown beaten by a truly better
#: neighbour while X is not), so reported, not judged
BEST_DIFFERS = "tied pair: one possibly best, the other not"


def _discordance(scores: np.ndarray, x: int, others: np.ndarray) -> float:
    """Median share of items on which model ``x`` and one of ``others`` disagree (first
    attempts)."""
    first = scores[:, :, 0]
    return float(np.median((first[others] != first[x]).mean(axis=1)))


def pool_cells(spec: str, *, quick: bool = False) -> list[dict]:
    """The board of one pool (a name or a path): see the module docstring. ``quick`` keeps
    it (one cell per pool).

    Raises
    ------
    InvalidParameterError
        A pool that is absent, not 0/1, or with fewer than 3 models or 6 items.
    """
    del quick  # one cell per pool either way
    pool = _real_pools.load(spec, OWNER)
    scores = _real_pools.binary_scores(pool, OWNER)
    models, items, attempts = scores.shape
    if models < 3 or items < 6:
        raise fail("pool", "a pool with >= 3 models and >= 6 items (a board of the tied pair "
                           f"and others, >= 3 items each; it has {models} x {items})",
                   str(spec), OWNER)
    right = scores.sum(axis=(1, 2))
    x = int(np.argsort(right, kind="stable")[(models - 1) // 2])
    rest = np.array([i for i in range(models) if i != x])
    others = rest[np.argsort(np.abs(right[rest] - right[x]), kind="stable")[:SYSTEMS - 2]]
    others = np.sort(others)
    cell = {"pool": _real_pools.label(spec), "tied": pool.models[x],
            "others": [pool.models[i] for i in others], "of": models,
            "n": min(MAX_N, items // 2), "items": items, "attempts": attempts,
            "split": "attempts" if attempts >= 2 else "swap"}
    if pool.dropped:
        # ragged models the reader left out: not among the pool's models drawn from
        cell["dropped_ragged"] = len(pool.dropped)
    if cell["split"] == "swap":
        own = int(right[x])
        cell["swaps"] = max(1, min(own, items - own,
                                   round(_discordance(scores, x, others) * items / 2)))
    return [cell]


@functools.cache
def _default_cells() -> list[dict]:
    # a default pool absent here stays a cell of its own name, skipped with one line
    return [cell for spec in POOLS
            for cell in (pool_cells(spec) if find_pool(spec) is not None else [{"pool": spec}])]


def __getattr__(name: str):
    # CELLS read the pools: built on first use, not when the grid imports its families
    if name == "CELLS":
        return _default_cells()
    if name == "QUICK_CELLS":
        return _default_cells()[:1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def missing(params: dict) -> str | None:
    """One line when the cell's pool is absent here (the grid skips the cell), else None."""
    return _real_pools.missing(params, NAME)


def draw(params: dict, sims: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``(a, x)``: each system's truth (its right attempts over the pool, a count: only the
    order matters) and ``sims`` boards of 0/1 answers, shape ``(sims, systems, n)``, the
    tied pair first."""
    pool = _real_pools.load(params["pool"], OWNER)
    scores = _real_pools.binary_scores(pool, OWNER)
    _, items, attempts = scores.shape
    n = check_int(params["n"], "n", OWNER, low=3, high=items)
    x = pool.models.index(params["tied"])
    others = np.array([pool.models.index(m) for m in params["others"]])
    right = scores.sum(axis=(1, 2)).astype(float)
    a = np.concatenate([[right[x], right[x]], right[others]])
    chosen = _real_pools.draw_items(rng, sims, items, n)                          # (sims, n)
    if params["split"] == "attempts":
        # two different attempts of X per item, drawn at random: the tied pair
        order = np.argsort(rng.random((sims, n, attempts)), axis=-1)[..., :2]
        pair = np.take_along_axis(scores[x][chosen], order, axis=-1)  # (sims, n, 2)
        pair = pair.transpose(0, 2, 1)
    else:
        whole = np.broadcast_to(scores[x, :, 0], (sims, items))
        twin = whole.copy()
        swaps = int(params["swaps"])
        down = _real_pools.pick(rng.random((sims, items)), whole, swaps)
        up = _real_pools.pick(rng.random((sims, items)), ~whole, swaps)
        np.put_along_axis(twin, down, False, axis=1)
        np.put_along_axis(twin, up, True, axis=1)
        rows = np.arange(sims)[:, None]
        pair = np.stack([whole[rows, chosen], twin[rows, chosen]], axis=1)
    # every other system: one of its attempts per item, drawn at random
    pick = rng.integers(attempts, size=(sims, others.size, n))
    rest = scores[others[None, :, None], chosen[:, None, :], pick]
    return a, np.concatenate([pair, rest], axis=1).astype(np.float64)


def tied_outcomes(d: dict) -> dict:
    """Per board, the tied pair (systems 0 and 1) told apart by each printed decision.

    Parameters
    ----------
    d : dict
        ``separated`` (boards, m, m), ``tier``, ``best_set``, ``rank_low``, ``rank_high``
        (boards, m): :func:`sim.decisions.leaderboard.decide_boards`.

    Returns
    -------
    dict of str to ndarray of bool, shape (boards,)
    """
    out = {"tied pair separated": d["separated"][:, 0, 1] | d["separated"][:, 1, 0],
           "tied pair in different tiers": d["tier"][:, 0] != d["tier"][:, 1],
           "tied pair rank intervals disjoint": (d["rank_high"][:, 0] < d["rank_low"][:, 1])
           | (d["rank_high"][:, 1] < d["rank_low"][:, 0])}
    out[TOLD_APART] = np.logical_or.reduce(list(out.values()))
    out[BEST_DIFFERS] = d["best_set"][:, 0] != d["best_set"][:, 1]
    return out


def _seeds(rng, sims: int) -> np.ndarray:
    """One ``--seed`` per board, from a stream spawned after the boards were drawn (so the
    boards do not depend on how the seeds are used)."""
    return rng.spawn(1)[0].integers(0, SEED_BOUND, size=sims)


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Score ``sims`` boards (see the module docstring).

    Returns
    -------
    list of dict
        Outcomes (see :mod:`sim.decisions`).
    """
    a, x = draw(params, sims, rng)
    d = decide_boards(x, _seeds(rng, sims))
    board = board_outcomes(a, **d)
    m = a.size
    better = a[:, None] > a[None, :]

    def row(decision, measure, hits, total=sims):
        return {"decision": decision, "measure": measure, "hits": int(np.sum(hits)),
                "sims": int(total), "alpha": ALPHA}

    out = [row(name, "share" if name == BEST_DIFFERS else "rejection", hits)
           for name, hits in tied_outcomes(d).items()]
    out += [row("leaderboard any false separation", "rejection", board["false separation"]),
            row("leaderboard rank intervals", "coverage", board["rank intervals cover"]),
            row("leaderboard best set", "coverage", board["best set covers"]),
            row("leaderboard best set: systems kept", "refused", board["best set size"],
                sims * m),
            row("leaderboard tiers misordered", "rejection", board["tiers misordered"])]
    if better.any():
        out.append(row("leaderboard true pairs separated", "power",
                       board["true pairs separated"], sims * better.sum()))
    return out


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` boards as users' files (:mod:`sim.end_to_end`): one run of 0/1 scores per
    system (``s00``, ``s01`` the tied pair, then the others in the cell's order), compared
    with ``--leaderboard --seed SEED``, every board with the one seed drawn for the cell;
    the same draws and decisions as :func:`simulate`, read back from the ``--json`` body's
    separated pairs, tiers, rank intervals and ``possibly_best``."""
    a, x = draw(params, sims, rng)
    seed = int(_seeds(rng, 1)[0])
    d = decide_boards(x, np.full(sims, seed))
    names = [f"s{i:02d}" for i in range(a.size)]
    frames = [tidy({name: board[i][None] for i, name in enumerate(names)}) for board in x]
    decided = {**board_outcomes(a, **d), **tied_outcomes(d)}

    def read(body: dict) -> dict:
        got = read_board(body, names)
        both = {**board_outcomes(a, **got), **tied_outcomes(got)}
        return {k: v[0].item() for k, v in both.items()}

    return Sample(frames, {"leaderboard": True, "seed": seed}, decided, read)
