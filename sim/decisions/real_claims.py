"""``real_claims``: non-inferiority and equivalence claims (and ``--gate``) on real LLM pools,
with the truth planted at the margin.

A repeated-attempt pool (:mod:`evalcal_core.pools`: LiveCodeBench's
``lcb_codegen_20240417``, MathArena's ``matharena_aime_2025_i`` by name, or a user's pool by
path with ``--llm-pools``) holds, for each model and item, ``R`` attempts scored 0/1. One
experiment takes one model (drawn per experiment among the cell's models, or the cell's named
model), ``n`` of the pool's ``N`` items drawn without replacement, and splits each item's
attempts at random: the first ``runs`` of a permutation are the baseline's runs, the next
``runs`` the variant's (an A/A pair, zero effect). The variant is then shifted by a known
amount: before the split, ``F`` of the model's ``N x R`` attempts, drawn at random among its
right ones, are turned wrong (or ``F`` wrong ones right), so the variant's accuracy over the
pool is the model's minus exactly ``F / (N R)``, whichever attempts were turned. The
experiment's population is the pool's items (the design ``models``: the questions are the
sample), so the true difference is ``-F / (N R)`` exactly, in every experiment.

Each cell has a margin of ``flips / (N R)`` (the cell's ``flips``, even) and five true
differences, in units of the margin: ``-2`` (outside: non-inferiority must not be shown),
``-1`` (at the margin: non-inferiority and equivalence shown at most alpha of the time),
``-1/2`` (inside: power), ``0`` (power of both claims) and ``+1`` (equivalence's upper
margin: shown at most alpha). Every verdict is :func:`sim.decisions.models_margin.claim_verdict`,
the call ``evaluate --design models --claim C --margin M`` makes (Tango's test with one run,
the bounded score test with repeats); the gate's exit status is 0 exactly when the claim is
shown, so its false passes are the claim's false claims.

Pool-sampling facts: each cell's parameters name the pool, the models drawn (``model``: one
model's name, or ``all``: every model with at least ``2 flips`` right and ``flips`` wrong
attempts, ``eligible`` of ``of``, the others listed in ``left_out``), the items (``n`` of
``items``) and the attempts (``runs`` per arm of ``attempts``); ``dropped_ragged``
counts the models left out for ragged attempts (:func:`evalcal_core.pools.read_pool`). The
rate is over this pool's models and items: the Wilson interval beside it is the Monte Carlo
error only.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from evalcal_core.designs import MODELS
from evalcal_core.pool_paths import find_pool
from evalcal_core.validate import check_int, fail
from sim.end_to_end import Sample, tidy

from . import _real_pools
from .models_margin import ALPHA, claim_sample, claim_verdict

NAME = "real_claims"
DESIGN = MODELS
OWNER = f"decision grid family {NAME}"
#: the pools of the default cells (skipped, with one line, where absent)
POOLS = ("lcb_codegen_20240417", "matharena_aime_2025_i")
#: experiments drawn at once (memory: a chunk holds CHUNK x N x R attempts of each arm)
CHUNK = 1000
#: the true differences of every cell, in units of its margin, and their labels
SHIFTS = (("outside", -2.0), ("margin", -1.0), ("inside", -0.5), ("zero", 0.0),
          ("upper", 1.0))
#: the items of a pool's first cell: every item up to this many
FIRST_N = 100


def target_margin(n: int) -> float:
    """The margin a pool's cell aims at with ``n`` items per experiment (fraction): about
    the standard error of an A/A pair's difference there, 0.2 / sqrt(n), within 1-10 pp."""
    return min(0.10, max(0.01, 0.2 / math.sqrt(n)))


def eligible(scores: np.ndarray, flips: int) -> np.ndarray:
    """Models that can be shifted by ``2 flips`` down and ``flips`` up: indices into the
    pool's models (at least ``2 flips`` right and ``flips`` wrong attempts)."""
    right = scores.sum(axis=(1, 2))
    return np.flatnonzero((right >= 2 * flips) & (scores[0].size - right >= flips))


def _most_mixed(scores: np.ndarray, among: np.ndarray) -> int:
    """The model (index) whose attempts disagree most within items: largest mean p (1 - p)
    over items, p its share of right attempts on the item (the noisiest A/A split)."""
    p = scores.mean(axis=2)
    return int(among[np.argmax((p * (1 - p)).mean(axis=1)[among])])


def pool_cells(spec: str, *, quick: bool = False) -> list[dict]:
    """The cells of one pool (a name or a path): every eligible model drawn per experiment
    at ``min(N, 100)`` items with one run per arm and (when ``N > 100``) at every item with
    ``min(2, R // 2)`` runs; the most mixed model at every item with ``R // 2`` runs. The
    margin: :func:`target_margin` at the cell's items, rounded to an even number of flips
    >= 2. ``quick``: the first cell.

    Raises
    ------
    InvalidParameterError
        A pool that is absent, not 0/1, with fewer than 2 attempts, or without an
        eligible model.
    """
    pool = _real_pools.load(spec, OWNER)
    scores = _real_pools.binary_scores(pool, OWNER)
    models, items, attempts = scores.shape
    if attempts < 2:
        raise fail("pool", "a pool with >= 2 attempts per (model, item) (an A/A pair splits "
                           f"one model's attempts; it has {attempts})", str(spec), OWNER)
    label = _real_pools.label(spec)
    out = []
    shapes = [(min(items, FIRST_N), 1, False), (items, min(2, attempts // 2), False),
              (items, attempts // 2, True)]
    if items <= FIRST_N:
        # the first cell already has every item: the second would differ in runs only
        del shapes[1]
    for n, runs, one in shapes:
        flips = max(2, 2 * round(target_margin(n) * items * attempts / 2))
        ok = eligible(scores, flips)
        if ok.size == 0:
            raise fail("pool", f"a pool with a model of >= {2 * flips} right and >= {flips} "
                               "wrong attempts (to shift it by twice the margin)",
                       str(spec), OWNER)
        cell = {"pool": label, "model": "all", "eligible": int(ok.size), "of": models,
                "left_out": [pool.models[i] for i in range(models) if i not in ok],
                "n": n, "items": items, "runs": runs, "attempts": attempts, "flips": flips,
                "margin": flips / (items * attempts)}
        if pool.dropped:
            # ragged models the reader left out: not among the pool's models drawn from
            cell["dropped_ragged"] = len(pool.dropped)
        if one:
            cell.update(model=pool.models[_most_mixed(scores, ok)], eligible=1, left_out=[])
        out.append(cell)
    return out[:1] if quick else out


@functools.cache
def _default_cells(quick: bool) -> list[dict]:
    # a default pool absent here stays a cell of its own name, skipped with one line
    # (missing), so the family keeps its cells wherever it is imported
    return [cell for spec in POOLS
            for cell in (pool_cells(spec, quick=quick) if find_pool(spec) is not None
                         else [{"pool": spec}])]


def __getattr__(name: str):
    # CELLS read the pools: built on first use, not when the grid imports its families
    if name == "CELLS":
        return _default_cells(False)
    if name == "QUICK_CELLS":
        return _default_cells(True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def missing(params: dict) -> str | None:
    """One line when the cell's pool is absent here (the grid skips the cell), else None."""
    return _real_pools.missing(params, NAME)


def _models(pool, params: dict) -> np.ndarray:
    """Indices of the models an experiment of the cell draws from."""
    scores = _real_pools.binary_scores(pool, OWNER)
    if params["model"] == "all":
        return eligible(scores, params["flips"])
    return np.array([pool.models.index(params["model"])])


def shifted(matrix: np.ndarray, flips: int, rng) -> np.ndarray:
    """Each experiment's model with ``|flips|`` attempts turned: right ones wrong when
    ``flips < 0``, wrong ones right when ``> 0``, drawn uniformly per experiment.

    Parameters
    ----------
    matrix : ndarray of bool, shape (experiments, N, R)
        Each experiment's model, every item and attempt of the pool.
    flips : int
        Signed count of attempts turned (its sum over the matrix changes by exactly this).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of bool, shape (experiments, N, R)
        A copy; the variant's accuracy over the pool is the model's plus ``flips / (N R)``.
    """
    out = matrix.copy()
    if flips == 0:
        return out
    flat = out.reshape(len(out), -1)
    keys = rng.random(flat.shape)
    chosen = _real_pools.pick(keys, flat if flips < 0 else ~flat, abs(int(flips)))
    np.put_along_axis(flat, chosen, flips > 0, axis=1)
    return out


def draw(params: dict, sims: int, shift: float, rng):
    """``sims`` experiments of the cell with the variant shifted by ``shift`` margins.

    Parameters
    ----------
    params : dict
        One of the cells (:func:`pool_cells`).
    sims : int
        Experiments.
    shift : float
        True difference in units of the margin (one of :data:`SHIFTS`): the variant's
        ``round(shift * flips)`` attempts are turned (:func:`shifted`).
    rng : numpy.random.Generator

    Returns
    -------
    base, variant : ndarray of float, shape (sims, runs, n)
        0/1 scores of each arm's runs on the drawn items.
    truth : float
        The variant's minus the baseline's accuracy over the pool (fraction): exactly
        ``round(shift * flips) / (N R)``.
    """
    pool = _real_pools.load(params["pool"], OWNER)
    scores = _real_pools.binary_scores(pool, OWNER)
    _, items, attempts = scores.shape
    n = check_int(params["n"], "n", OWNER, low=2, high=items)
    runs = check_int(params["runs"], "runs", OWNER, low=1, high=attempts // 2)
    flips = int(round(shift * params["flips"]))
    choices = _models(pool, params)
    model = choices[rng.integers(choices.size, size=sims)]
    whole = scores[model]                                        # (sims, N, R)
    turned = shifted(whole, flips, rng)
    chosen = (np.broadcast_to(np.arange(items), (sims, items)) if n == items
              else _real_pools.draw_items(rng, sims, items, n))
    rows = np.arange(sims)[:, None]
    # one permutation of each item's attempts: the first runs are the baseline's, the next
    # runs the variant's (exchangeable halves of one model's attempts: an A/A pair)
    order = np.argsort(rng.random((sims, n, attempts)), axis=-1)
    base = np.take_along_axis(whole[rows, chosen], order[..., :runs], axis=-1)
    variant = np.take_along_axis(turned[rows, chosen], order[..., runs:2 * runs], axis=-1)
    return (base.transpose(0, 2, 1).astype(float), variant.transpose(0, 2, 1).astype(float),
            flips / (items * attempts))


def _verdicts(params: dict, sims: int, rng, wanted=None):
    """Per shift and chunk: ``(label, base, variant, {claim: verdicts})``, for the claims
    ``wanted(label)`` (default: those :data:`ROWS` score at that shift). The draws do not
    depend on the claims decided."""
    for label, shift in SHIFTS:
        names = (wanted or _scored)(label)
        for start in range(0, sims, CHUNK):
            base, variant, _ = draw(params, min(CHUNK, sims - start), shift, rng)
            yield label, base, variant, {
                claim: claim_verdict(base, variant, claim, params["margin"])
                for claim in names}


def _test(params: dict) -> str:
    return "tango" if params["runs"] == 1 else "bounded score"


#: (decision, measure, claim, shift label) of every outcome; a false claim's rate is judged
ROWS = (("non_inferiority shown, truth -2 x margin", "rejection", "non_inferiority", "outside"),
        ("non_inferiority shown, truth at -margin", "rejection", "non_inferiority", "margin"),
        ("equivalence shown, truth at -margin", "rejection", "equivalence", "margin"),
        ("equivalence shown, truth at +margin", "rejection", "equivalence", "upper"),
        ("non_inferiority shown, truth -margin / 2", "power", "non_inferiority", "inside"),
        ("non_inferiority shown, truth 0", "power", "non_inferiority", "zero"),
        ("equivalence shown, truth 0", "power", "equivalence", "zero"))


def _scored(label: str) -> tuple:
    # the claims ROWS read at this shift (a claim's test costs more than the draw)
    return tuple(dict.fromkeys(claim for _, _, claim, at in ROWS if at == label))


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """``sims`` experiments at each true difference of :data:`SHIFTS`, every claim scored
    on the same data (:data:`ROWS`); the gate passes (exit 0) exactly when shown.

    Returns
    -------
    list of dict
        Outcomes (see :mod:`sim.decisions`).
    """
    counts: dict = {}
    for label, _, _, verdicts in _verdicts(params, sims, rng):
        for claim, verdict in verdicts.items():
            counts[(claim, label)] = counts.get((claim, label), 0) + int(
                np.sum(verdict == "shown"))
    test = _test(params)
    return [{"decision": f"{decision}, {test}", "measure": measure,
             "hits": counts[(claim, label)], "sims": int(sims), "alpha": ALPHA}
            for decision, measure, claim, label in ROWS]


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` experiments as users' files (:mod:`sim.end_to_end`): a fifth at each true
    difference (the draws and verdicts of :func:`simulate` with ``ceil(sims / 5)`` per
    shift), each the two arms' 0/1 scores per run and item, run with ``--design models
    --claim C --margin M --gate``; ``C`` is non-inferiority, or equivalence for a cell of
    one named model. Compared: the verdict and the exit status."""
    claim = "non_inferiority" if params["model"] == "all" else "equivalence"
    frames, verdicts = [], []
    for _, base, variant, decided in _verdicts(params, -(-sims // len(SHIFTS)), rng,
                                               lambda label: (claim,)):
        verdicts.append(decided[claim])
        frames += [tidy({"base": base[i], "variant": variant[i]}) for i in range(len(base))]
    return claim_sample(frames, np.concatenate(verdicts), claim, float(params["margin"]))
