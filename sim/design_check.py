"""``python -m sim.design_check``: which protocol keeps its false-positive rate, by study design.

Example::

    python -m sim.design_check --out reports/output/design_check
    python -m sim.design_check --design models_clustered --questions 1000 --clusters 10 \\
        --icc 0 0.3 --repeats 1 --sims 500
    python -m sim.design_check --harness-defaults --design models --questions 100 1000 \\
        --repeats 1 --sims 2000

Each of the four design kinds (:data:`evalcal_core.designs.KINDS`) is simulated by its own
generator at effect 0, over a grid of benchmark shapes:

=======================  =========================================================================
``methods_paired``       ``seed_question`` with a seed effect (``sd_seed``), k paired seeds
``methods_independent``  ``unpaired_seeds`` (arm correlation 0; equal and unequal sds), k seeds
``models``               ``question_mixture`` (fixed models, r decoding repeats per question)
``models_clustered``     ``clustered_questions`` (n questions in G unequal clusters, icc, r)
=======================  =========================================================================

Every protocol that can run on a cell's data is evaluated on the same experiments (common
random numbers; seeds derived from the cell's names, :mod:`sim.grid.seeding`), thousands at a
time, by the calibration's engine (:func:`sim.grid.run_cells`: ``--jobs`` workers, finished
cells cached under ``OUT/cells`` so a rerun resumes). Each row gives the false-positive rate
with its Wilson 95% interval and Monte Carlo SE, the protocol's label for that design
(``reportable`` or why it is a pitfall, :meth:`protocols.Protocol.label`) and the verdict of
the project's one validity rule (:func:`sim.validity.settle`, Holm over the whole table):
``state`` valid (upper bound ``fpr_upper`` <= alpha + alpha / 5), invalid (shown above
alpha) or undecided; the reportable protocols' undecided cells get the rule's sequential
stop (simulations doubled, up to 16 times ``--sims``). Writes ``design_check.csv`` to
``--out`` and prints, per design and protocol, the worst cell (reportable protocols first).

Small benchmarks (15-200 questions) are cells like any other: ``--questions 15 30 60 100
200``; ``--min-cluster-size 1`` lets 10 clusters fit 15 questions. ``--llm-pools NAME``
adds, under ``models``, one A/A cell per model of a real per-item LLM pool
(:mod:`sim.generators.llm_items`: each model's attempts split at random into two halves,
effect 0 by construction) at every ``--questions`` value up to the pool's items and every
``--repeats`` value up to half its attempts. Each row also gives the Clopper-Pearson upper
bound of the rate (``rate_cp_high``, the upper end of the two-sided 95% interval), and the
summary the largest such bound of each protocol.

The protocols that reproduce what an evaluation harness prints (lm-eval's ``acc_stderr``,
Inspect's ``stderr()``, ...: a non-empty :attr:`protocols.Protocol.harness`) run only when
named in ``--protocols`` or, all of them, with ``--harness-defaults``: the "harness
defaults table", each default beside the protocols evalcal reports.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

import protocols
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.designs import (
    KINDS,
    METHODS_INDEPENDENT,
    METHODS_PAIRED,
    MODELS,
    MODELS_CLUSTERED,
    designs,
)
from evalcal_core.designs import get as get_design
from evalcal_core.keywords import option_flags
from evalcal_core.options import (
    ALPHA_FLOOR,
    Execution,
    add_options,
    alpha_option,
    config_from_args,
    jobs_option,
    option,
    out_option,
    seed_option,
    sims_option,
)
from evalcal_core.outdir import run_outputs
from evalcal_core.params import decode
from evalcal_core.pool_paths import resolve_pool
from evalcal_core.pools import as_option
from evalcal_core.validate import (
    InvalidParameterError,
    check_alpha,
    check_bool,
    check_int,
    check_number,
    fail,
)

from . import generators
from .generators.llm_items import pool_data
from .grid import DEFAULT_REPLICATES, CellRequest, check_memory
from .grid.runner import applicable_protocols, run_cells
from .outputs import write_csv
from .validity import INVALID, UNDECIDED, ValidityRule, settle

OWNER = "sim.design_check"
DEFAULT_OUT = "reports/output/design_check"

#: the generator and its fixed parameters that simulate each design kind (the registry's)
DESIGN_GENERATORS = {d.name: (d.generator, dict(d.generator_params)) for d in designs()}

#: variant-to-baseline sd ratios of the ``methods_independent`` cells
SD_RATIOS = (1.0, 3.0)

MAX_SIMS = 10**6
MAX_QUESTIONS = 10**5


@dataclass(frozen=True)
class CheckGrid:
    """The grid of :func:`design_check`.

    Attributes
    ----------
    kinds : tuple of str
        Design kinds to simulate (:data:`evalcal_core.designs.KINDS`).
    questions : tuple of int
        Questions per benchmark (question-level kinds).
    clusters : tuple of int
        Clusters per benchmark (``models_clustered``); a count above ``n / 2`` is skipped.
    icc : tuple of float
        Latent intra-cluster correlations (``models_clustered``).
    repeats : tuple of int
        Runs per question of each fixed model (``models``, ``models_clustered``).
    seeds : tuple of int
        Seeds per arm (``methods_*``).
    sims : int
        Experiments per cell.
    alpha : float
        Two-sided level.
    seed : int
        Root seed.
    protocols : tuple of str or None
        Protocols to evaluate (default: every registered one that can run, but the harness
        reproductions, :func:`default_protocols`).
    harness_defaults : bool
        Add every harness reproduction (:func:`harness_protocols`) to ``protocols``.
    llm_pools : tuple of str
        Real per-item LLM pools (``llm_items``'s ``pool``: a shipped name or a CSV path)
        whose models each add A/A cells to ``models``.
    complete_models : bool
        Read a ragged pool keeping its complete models (:func:`sim.generators.llm_items.
        pool_data`).
    min_cluster_size : int
        Smallest cluster of the ``models_clustered`` cells (2 by default; 1 lets G clusters
        fit fewer than 2G questions).
    """

    kinds: tuple[str, ...] = option("--design", KINDS, nargs="+", metavar="NAME",
                                    help="study designs to check (registered names: "
                                         f"{', '.join(KINDS)}; default all)")
    questions: tuple[int, ...] = option("--questions", (100, 1000, 5000), nargs="+", kind=int,
                                        help="questions per benchmark (question-level "
                                             "designs)")
    clusters: tuple[int, ...] = option("--clusters", (10, 20, 50), nargs="+", kind=int,
                                       help="clusters per benchmark (models_clustered)")
    icc: tuple[float, ...] = option("--icc", (0.0, 0.1, 0.3), nargs="+", kind=float,
                                    help="latent intra-cluster correlations "
                                         "(models_clustered)")
    repeats: tuple[int, ...] = option("--repeats", (1, 3, 8), nargs="+", kind=int,
                                      help="runs per question of a fixed model (models "
                                           "designs)")
    seeds: tuple[int, ...] = option("--seeds", (3, 8), nargs="+", kind=int,
                                    help="seeds per arm (methods designs)")
    sims: int = sims_option(2000, constraint=None)
    alpha: float = alpha_option(constraint=ALPHA_FLOOR)
    seed: int = seed_option(constraint=None)
    protocols: tuple[str, ...] | None = option(
        "--protocols", None, nargs="+",
        help="default: all that can run but the harness reproductions")
    harness_defaults: bool = option(
        "--harness-defaults", False, switch=True,
        help="add every protocol that reproduces an evaluation harness's printed default "
             "(lm-eval, Inspect, ...): the harness defaults table")
    llm_pools: tuple[str, ...] = option(
        "--llm-pools", (), nargs="+",
        help="real per-item LLM pools (sim/llm_pools names or CSV paths): one A/A cell per "
             "model under models, at the --questions and --repeats the pool holds")
    complete_models: bool = option(
        "--complete-models", False, switch=True,
        help="a pool with ragged attempts (Terminal-Bench) keeps its models that have every "
             "attempt of every item; a complete pool is read as it is")
    min_cluster_size: int = option("--min-cluster-size", 2, kind=int,
                                   help="smallest cluster of the models_clustered cells (1 "
                                        "lets G clusters fit fewer than 2G questions)")

    def __post_init__(self):
        _check_grid(self)

    def protocol_names(self) -> list[str]:
        """The protocols the grid asks for (each still runs only where it can)."""
        names = list(default_protocols() if self.protocols is None else self.protocols)
        if self.harness_defaults:
            names += [n for n in harness_protocols() if n not in names]
        return names


def default_protocols() -> list[str]:
    """Registered protocols but the harness reproductions (empty ``Protocol.harness``)."""
    return [n for n in protocols.names() if not protocols.protocol_class(n).harness]


def harness_protocols() -> list[str]:
    """Registered protocols that reproduce an evaluation harness's printed default."""
    return [n for n in protocols.names() if protocols.protocol_class(n).harness]


def _flag(field: str) -> str:
    """The option of :class:`CheckGrid` field ``field``: messages name what the command's user
    typed (the Python functions reword a flag as their keyword)."""
    return option_flags(CheckGrid)[field]


def _check_grid(grid: CheckGrid) -> None:
    # Every value is checked before anything is drawn; messages name the option.
    if not grid.kinds:
        raise fail("--design", "a non-empty list", list(grid.kinds), OWNER)
    for kind in grid.kinds:
        if kind not in KINDS:
            raise fail("--design", f"a list of {KINDS}", kind, OWNER)
    for name, low, high in (("questions", 4, MAX_QUESTIONS), ("clusters", 2, MAX_QUESTIONS),
                            ("repeats", 1, 1000), ("seeds", 2, 1000)):
        values = getattr(grid, name)
        if not values:
            raise fail(_flag(name), "a non-empty list", list(values), OWNER)
        for v in values:
            check_int(v, _flag(name), OWNER, low=low, high=high)
    for v in grid.icc:
        check_number(v, _flag("icc"), OWNER, low=0, high=1, high_open=True)
    if not grid.icc:
        raise fail(_flag("icc"), "a non-empty list", [], OWNER)
    check_int(grid.min_cluster_size, _flag("min_cluster_size"), OWNER, low=1)
    for kind in grid.kinds:
        _KIND_CHECKS.get(kind, _no_check)(grid)
    check_int(grid.sims, _flag("sims"), OWNER, low=1, high=MAX_SIMS)
    check_alpha(grid.alpha, _flag("alpha"), OWNER)
    check_int(grid.seed, _flag("seed"), OWNER, low=0)
    check_bool(grid.harness_defaults, _flag("harness_defaults"), OWNER)
    _check_llm_pools(grid)
    if grid.protocols is not None:
        known = protocols.names()
        for name in grid.protocols:
            if name not in known:
                raise fail(_flag("protocols"),
                           f"a list of registered protocols ({', '.join(known)})", name, OWNER)


def _no_check(grid: CheckGrid) -> None:
    return None


def _check_cluster_fit(grid: CheckGrid) -> None:
    # a cluster count that does not fit is skipped (:func:`_clustered_shapes`); when none
    # fits, the kind asked for would silently give no rows at all
    smallest = grid.min_cluster_size
    if not any(smallest * g <= n for n in grid.questions for g in grid.clusters):
        raise fail(_flag("clusters"), f"at most questions / {smallest} for some count of "
                   f"questions (each cluster holds >= {smallest} questions; largest "
                   f"questions {max(grid.questions)})", list(grid.clusters), OWNER)


def _check_llm_pools(grid: CheckGrid) -> None:
    if grid.llm_pools and not set(grid.kinds) & set(_REAL_SHAPES):
        raise fail(_flag("llm_pools"), f"given only with --design {' or '.join(_REAL_SHAPES)} "
                   "(the pools' A/A cells are cells of those designs)",
                   list(grid.llm_pools), OWNER)
    check_bool(grid.complete_models, _flag("complete_models"), OWNER)
    if grid.complete_models and not grid.llm_pools:
        raise fail("--complete-models", "given with --llm-pools (it keeps a ragged pool's "
                   "complete models)", got="no --llm-pools", owner=OWNER)
    for pool in grid.llm_pools:
        resolve_pool(pool, _flag("llm_pools"), OWNER)  # a name no pools folder has
        try:
            data = pool_data(pool, grid.complete_models)[0]
        except InvalidParameterError as exc:
            # the reader's refusal names its own parameter: say which typed pool it was
            raise InvalidParameterError(f"{_flag('llm_pools')} {pool}: {as_option(exc)}") from None
        items, runs = len(data.items), data.attempts // 2
        if runs == 0:
            raise fail(_flag("llm_pools"), "pools with >= 2 attempts per question (an A/A "
                       "cell splits each model's attempts in two)",
                       got=f"{pool} with {data.attempts} attempt", owner=OWNER)
        if not any(n <= items for n in grid.questions) or min(grid.repeats) > runs:
            raise fail(_flag("llm_pools"), f"pools with cells in the grid: {pool} has {items} "
                       f"items and {data.attempts} attempts (--questions <= {items} and "
                       f"--repeats <= {runs} needed)", pool, OWNER)


@dataclass(frozen=True)
class Cell:
    """One simulated benchmark shape: a generator and the runs (seeds or repeats) per arm."""

    kind: str
    generator: generators.Generator
    k: int


def grid_cells(grid: CheckGrid) -> list[Cell]:
    """The cells of ``grid``, in the order of :data:`KINDS` then the grid's axes."""
    out = []
    for kind in KINDS:
        if kind not in grid.kinds:
            continue
        name, fixed = DESIGN_GENERATORS[kind]
        shapes = _SHAPES[kind](grid)
        out.extend(Cell(kind, generators.get(name, **fixed, **params), k)
                   for params, k in shapes)
        out.extend(Cell(kind, generator, k)
                   for generator, k in _REAL_SHAPES.get(kind, _no_shapes)(grid))
    return out


def _no_shapes(grid) -> list:
    return []


def _llm_shapes(grid, clustered: bool):
    # One A/A pool per model: its attempts split in two halves (effect 0 by construction),
    # every question count and repeat count that the pool holds. The clustered design takes
    # the pools with clusters, at the counts where every cluster gets an item.
    out = []
    for pool in grid.llm_pools:
        data, extra = pool_data(pool, grid.complete_models)
        if clustered and (data.clusters is None or data.clusters.max() < 1):
            continue
        items = len(data.items)
        for model, n, r in itertools.product(data.models, grid.questions, grid.repeats):
            if n > items or 2 * r > data.attempts:
                continue
            params = {"pool": pool, "model": model, "n_items": None if n == items else n,
                      **extra}
            try:
                out.append((generators.get("llm_items", **params), r))
            except InvalidParameterError:
                # too few items for every cluster to get one (the generator's own rule)
                continue
    return out


#: each kind's real-pool cells (generator, runs per arm), from ``--llm-pools``
_REAL_SHAPES = {
    MODELS: lambda grid: _llm_shapes(grid, clustered=False),
    MODELS_CLUSTERED: lambda grid: _llm_shapes(grid, clustered=True),
}


def _clustered_shapes(grid):
    # a cluster count that does not fit n questions at the grid's minimum size is skipped
    smallest = grid.min_cluster_size
    return [({"n_questions": n, "n_clusters": g, "icc": icc, "min_size": smallest}, r)
            for n, g, icc, r in itertools.product(grid.questions, grid.clusters, grid.icc,
                                                  grid.repeats)
            if smallest * g <= n]


#: each kind's cells: (generator parameters, runs per arm) from the grid's axes
_SHAPES = {
    METHODS_PAIRED: lambda grid: [({"n_questions": n}, k) for n in grid.questions
                                    for k in grid.seeds],
    METHODS_INDEPENDENT: lambda grid: [({"sd_ratio": s}, k) for s in SD_RATIOS
                                         for k in grid.seeds],
    MODELS: lambda grid: [({"n_questions": n}, r) for n in grid.questions
                            for r in grid.repeats],
    MODELS_CLUSTERED: _clustered_shapes,
}

#: checks of the grid that only a kind asked for needs
_KIND_CHECKS = {MODELS_CLUSTERED: _check_cluster_fit}


def cluster_codes(generator) -> np.ndarray | None:
    """The generator's fixed cluster code per question, or ``None`` if it has none."""
    codes = generator.clusters()
    return None if codes is None else np.asarray(codes)


def cell_protocols(cell: Cell, names=None) -> dict[str, protocols.Protocol]:
    """Protocols that can run on ``cell``'s data (calibration's replicate summary for the
    z-bootstraps); a cluster-robust one only under a clustered design whose generator has
    clusters (a real pool's clusters under ``models`` are ignored, as evaluate does). ``names``
    defaults to :func:`default_protocols`."""
    g = cell.generator
    # a real pool's clusters are the clustered design's: under another design, evaluate runs
    # no cluster-robust protocol (it has no --cluster)
    clustered = get_design(cell.kind).clustered
    chosen = {}
    for name in (default_protocols() if names is None else names):
        params = ({"replicates": DEFAULT_REPLICATES}
                  if protocols.PROTOCOLS.accepts(name, "replicates") else {})
        protocol = protocols.get(name, **params)
        if protocol.needs_clusters and not clustered:
            continue
        if g.why_not(protocol, cell.k) is None:
            chosen[name] = protocol
    return chosen


@dataclass(frozen=True)
class CheckRow:
    """False-positive rate of one protocol on one cell (a row of ``design_check.csv``).

    ``rate``, ``rate_low``, ``rate_high``, ``rate_cp_high``, ``mc_se``, ``fpr_upper`` are
    fractions, over every look's simulations (``sims`` in all, ``looks`` looks);
    ``rate_low``/``rate_high`` the Wilson 95% interval, ``rate_cp_high`` the upper end of the
    two-sided 95% Clopper-Pearson interval (:func:`clopper_pearson_high`), ``mc_se`` the SE
    of the estimated rate, ``sqrt(rate (1 - rate) / sims)``; ``fpr_upper`` and ``state`` (valid,
    invalid, undecided) are :mod:`sim.validity`'s.
    """

    kind: str
    label: str
    reportable: bool
    protocol: str
    generator: str
    params: str
    n_questions: int
    n_clusters: int
    icc: float
    k: int
    sims: int
    alpha: float
    rejections: int
    rate: float
    rate_low: float
    rate_high: float
    rate_cp_high: float
    mc_se: float
    looks: int
    fpr_upper: float
    state: str


def cell_requests(cell: Cell, names, effect_pp: float = 0.0) -> list[CellRequest]:
    """The :class:`~sim.grid.CellRequest` of every protocol of ``names`` that can run on
    ``cell`` (:func:`cell_protocols`), at ``effect_pp``."""
    chosen = cell_protocols(cell, names)
    if not chosen:
        return []
    encoded = applicable_protocols(cell.generator, [cell.k], list(chosen))
    return [CellRequest(cell.generator, name, params, cell.k, effect_pp)
            for name, (_, params) in encoded.items()]


def first_look(grid: CheckGrid, run: Execution | None = None) -> pd.DataFrame:
    """The null rows of every cell at ``grid.sims`` experiments (a :func:`sim.grid.run_cells`
    frame): every protocol of a cell on the same experiments (common random numbers)."""
    cells = grid_cells(grid)
    for cell in cells:
        check_memory(cell.generator, cell.k, min(grid.sims, _chunk(cell)))
    run = run or Execution(sims=grid.sims, alpha=grid.alpha, seed=grid.seed, progress=False)
    requests = [r for cell in cells for r in cell_requests(cell, grid.protocol_names())]
    return run_cells(requests, run, desc="design check")


def clopper_pearson_high(count: int, sims: int, level: float = 0.95) -> float:
    """Upper end of the two-sided Clopper-Pearson interval of ``count / sims`` (fraction):
    the ``1 - (1 - level) / 2`` quantile of Beta(count + 1, sims - count); 1 if every
    experiment rejected."""
    if count >= sims:
        return 1.0
    return float(stats.beta.ppf(1 - (1 - level) / 2, count + 1, sims - count))


def design_check(grid: CheckGrid, run: Execution | None = None) -> pd.DataFrame:
    """False-positive rates of every applicable protocol on every cell of ``grid``, judged by
    the validity rule (:func:`sim.validity.settle`: the reportable protocols' undecided
    cells get the sequential stop's extra simulations).

    Parameters
    ----------
    grid : CheckGrid
    run : Execution or None
        Workers, cache folder and progress bar (its ``sims``, ``alpha`` and ``seed`` are the
        grid's); default: one process, no cache, no bar.

    Returns
    -------
    pandas.DataFrame
        One :class:`CheckRow` per (cell, protocol), sorted by design kind, reportable
        protocols first, then protocol and cell.
    """
    run = replace(run or Execution(progress=False), sims=grid.sims, alpha=grid.alpha,
                  seed=grid.seed)
    cells = {(c.generator.describe(), c.k): c for c in grid_cells(grid)}
    generators_by_params = {params: c.generator for (params, _), c in cells.items()}
    kind_of = {c.generator.name: c.kind for c in cells.values()}
    rule = ValidityRule.make(grid.alpha, grid.sims)
    null = settle(
        first_look(grid, run), rule, generator_of=generators_by_params.get,
        honest=lambda protocol, name: not protocols.protocol_class(protocol).label(
            kind_of[name]),
        run=lambda requests, sims, seed, pool_reps=0: run_cells(
            requests, replace(run, sims=sims, seed=seed), desc="more simulations"),
        seed=grid.seed)
    rows = [_row(cells[(r.generator_params, r.k)], r) for r in null.itertuples()]
    return sort_rows(pd.DataFrame([asdict(r) for r in rows], columns=_COLUMNS))


def _row(cell: Cell, r) -> CheckRow:
    g = cell.generator
    params = g.params()
    label = protocols.protocol_class(r.protocol).label(cell.kind)
    return CheckRow(
        kind=cell.kind, label=label or "reportable", reportable=not label, protocol=r.protocol,
        generator=g.name, params=g.describe(), n_questions=g.n,
        n_clusters=int(params.get("n_clusters", 0)), icc=float(params.get("icc", 0.0)),
        k=cell.k, sims=int(r.sims), alpha=float(r.alpha), rejections=int(r.rejections),
        rate=float(r.rate), rate_low=float(r.rate_low), rate_high=float(r.rate_high),
        rate_cp_high=clopper_pearson_high(int(r.rejections), int(r.sims)),
        mc_se=math.sqrt(r.rate * (1 - r.rate) / r.sims), looks=int(r.looks),
        fpr_upper=float(r.fpr_upper), state=str(r.state))


_COLUMNS = [f.name for f in CheckRow.__dataclass_fields__.values()]


def _chunk(cell):
    from .grid import chunk_size

    return chunk_size(cell.generator, cell.k)


def sort_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Design kind (in :data:`KINDS` order), reportable first, protocol, then the cell."""
    order = frame["kind"].map({k: i for i, k in enumerate(KINDS)})
    frame = frame.assign(_kind=order, _pit=~frame["reportable"].astype(bool))
    frame = frame.sort_values(["_kind", "_pit", "protocol", "n_questions", "n_clusters", "icc",
                               "k", "params"], kind="stable")
    return frame.drop(columns=["_kind", "_pit"]).reset_index(drop=True)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per design, generator and protocol: cells, cells over the level, the worst cell's
    rate, the largest Clopper-Pearson upper bound (``max_cp_high``) and whether the protocol
    is the one recommended for the design (:func:`protocols.recommended_for`)."""
    out = []
    for (kind, generator, protocol), part in frame.groupby(["kind", "generator", "protocol"],
                                                           sort=False):
        worst = part.loc[part["rate"].idxmax()]
        out.append({"kind": kind, "generator": generator, "protocol": protocol,
                    "label": worst["label"], "reportable": bool(worst["reportable"]),
                    "recommended": protocols.recommended_for(kind) == protocol,
                    "cells": len(part),
                    "over_level": int((part["state"] == INVALID).sum()),
                    "undecided": int((part["state"] == UNDECIDED).sum()),
                    "mean_rate": float(part["rate"].mean()), "worst_rate": worst["rate"],
                    "worst_low": worst["rate_low"], "worst_high": worst["rate_high"],
                    "max_cp_high": float(part["rate_cp_high"].max()),
                    "worst_cell": _cell_name(worst)})
    return pd.DataFrame(out)


def _cell_name(row) -> str:
    if row["kind"].startswith("methods"):
        extra = f"n={row['n_questions']}" if row["n_questions"] > 1 else row["params"]
        return f"k={row['k']} {extra}"
    cl = f" G={row['n_clusters']} icc={row['icc']:g}" if row["n_clusters"] else ""
    model = decode(row["params"]).get("model") if row["generator"] == "llm_items" else None
    return f"{model + ' ' if model else ''}n={row['n_questions']}{cl} r={row['k']}"


def format_summary(table: pd.DataFrame) -> str:
    """The printed table: one line per design and protocol."""
    # as wide as the longest protocol name (the harness reproductions have long ones)
    w = max([26, *(len(name) for name in table["protocol"])]) if len(table) else 26
    # a design simulated by another generator than its own (a real LLM pool) says which
    shown = [r["kind"] if r["generator"] == DESIGN_GENERATORS[r["kind"]][0]
              else f"{r['kind']} ({r['generator']})" for _, r in table.iterrows()]
    d = max([20, *(len(x) for x in shown)])
    c = max([26, *(len(x) for x in table["worst_cell"])]) if len(table) else 26
    head = (f"{'design':<{d}} {'protocol':<{w}} {'cells':>5} {'over':>4} {'undec':>5} "
            f"{'mean':>6} "
            f"{'worst FPR [95% Wilson]':>23} {'max CP':>6}  {'worst cell':<{c}} label")
    lines = [head, "-" * len(head)]
    for design, (_, r) in zip(shown, table.iterrows()):
        ci = f"{r['worst_rate']:.3f} [{r['worst_low']:.3f}, {r['worst_high']:.3f}]"
        label = r["label"] + (" (recommended)" if r["recommended"] else "")
        lines.append(f"{design:<{d}} {r['protocol']:<{w}} {r['cells']:>5} {r['over_level']:>4} "
                     f"{r['undecided']:>5} {r['mean_rate']:>6.3f} {ci:>23} "
                     f"{r['max_cp_high']:>6.3f}  {r['worst_cell']:<{c}} {label}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Command line


@dataclass(frozen=True)
class Output:
    """Where ``python -m sim.design_check`` writes and whether it talks (options that change
    no number)."""

    out: Path = out_option(Path(DEFAULT_OUT), help="folder for design_check.csv (finished "
                                                   "cells are cached under OUT/cells)")
    jobs: int = jobs_option()
    quiet: bool = option("--quiet", False, switch=True, in_argv=False,
                         help="no progress bar")


def build_parser() -> ArgumentParser:
    """The options of :class:`CheckGrid` and :class:`Output`, as declared there."""
    p = add_options(ArgumentParser(prog="python -m sim.design_check", description=__doc__),
                    CheckGrid)
    return add_options(p, Output)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    grid = config_from_args(CheckGrid, args)
    # locked and marked incomplete until design_check.csv is written (the grid was checked
    # when it was built)
    with run_outputs(args.out, "python -m sim.design_check") as outputs:
        out = outputs.path
        run = Execution(jobs=args.jobs, out=out / "cells", progress=not args.quiet)
        frame = design_check(grid, run)
        write_csv(frame, out / "design_check.csv")
    print(format_summary(summary(frame)))
    print(f"wrote {out / 'design_check.csv'} ({len(frame)} rows, {grid.sims} sims per cell at "
          "the first look)")
    return 0


if __name__ == "__main__":
    run_main(main, "python -m sim.design_check")
