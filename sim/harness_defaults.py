"""``python -m sim.harness_defaults``: which statistics that evaluation harnesses print by
default can be trusted, for which study design.

Example::

    python -m sim.harness_defaults --out /tmp/harness_defaults          # the full table
    python -m sim.harness_defaults --quick --out /tmp/harness_defaults  # a small one

Every registered harness reproduction (a protocol with a non-empty
:attr:`protocols.Protocol.harness`: lm-eval's ``acc_stderr`` overlap and comparator z,
Inspect's ``stderr()``, clustered ``stderr``, ``bootstrap_stderr`` and ``ci_wilson``, OpenAI
evals' ``bootstrap_std``, rliable's interval and probability of improvement, deepsig's ASO at
0.5 and 0.2, a Beta-binomial P(A > B)) is run beside the protocol ``evaluate`` reports for the
design (:func:`protocols.recommended_for`) on the same simulated experiments (common random
numbers, seeds derived from the cells' names), on the design's own generator:

=====================  ===========================================================
models, r runs         ``question_mixture``: two fixed models, r decoding runs per
                       question (``--repeats``), n questions (``--questions``)
models, G clusters     ``clustered_questions``: n questions in G unequal clusters
                       (``--clusters``, latent ``--icc``), one run
methods, k seeds       ``seed_question``: k paired training seeds per arm
                       (``--seeds``), n questions
real LLM A/A pool      ``llm_items``: each model of a real per-item pool
                       (``--llm-pools``) with its attempts split at random in two
                       halves (effect 0 by construction), r attempts per arm
                       (``--pool-runs``, those half its attempts allow); at the pool's
                       own size
=====================  ===========================================================

The real pools by default are LiveCodeBench (``lcb_codegen_20240417``, 43 models x 400
problems x 10 attempts), Terminal-Bench (``tbench_core011``, ragged: its 4 systems with 5
trials on every task, ``complete_models``) and MathArena (``matharena_aime_2025_i``), found
by name in the pools folder (:mod:`evalcal_core.pool_paths`); a missing one is left out with
one printed line. A pool with more models than ``--pool-models`` (8) is sampled: that many
of its models, evenly spaced by accuracy (the least and the most accurate included), so the
real cells take minutes; each real column names how many of the pool's models it holds and
which one is worst, with that cell's Monte Carlo interval.

Each null cell (effect 0, ``--sims`` experiments) gives the false-positive rate with its
Wilson 95% interval and the verdict of the project's validity rule (:mod:`sim.validity`,
with its defaults): **holds** when the one-sided Clopper-Pearson upper bound (at
``1 - 0.05 / looks``) is <= alpha + alpha / 5 (6% at alpha = 5%), **over** when the exact
binomial test of "rate <= alpha" (Bonferroni over the looks) is rejected by Holm over every
null cell of the table at family-wise level 0.001, else **undecided**. The recommended
protocols' undecided cells get the rule's sequential stop (simulations doubled up to 16
times ``--sims``); the harness defaults are judged on their first look. Each synthetic
cell also runs at ``--effect`` pp (``--power-sims`` experiments): the power, counted as
significant in the right direction.

Writes ``harness_defaults.csv`` (one row per protocol and cell), ``harness_defaults.md``
(the table by design, and one sentence per default saying where it may be trusted, computed
from the rows) and ``harness_defaults.json`` (its provenance: the command, the code version,
the date, the pools' hashes, the row count and the wall time) to ``--out``; finished cells are
cached under ``OUT/cells`` so an interrupted run resumes. The CSV and its JSON are what
``evaluate --html`` reads for the measured error of the logs' harness default
(``protocols/evidence/``, :mod:`reports.evaluate.harness`).
"""

from __future__ import annotations

import datetime
import json
import sys
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

import protocols
from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.designs import METHODS_PAIRED, MODELS, MODELS_CLUSTERED
from evalcal_core.options import (
    Execution,
    add_options,
    alpha_option,
    backend_option,
    check_options,
    config_from_args,
    jobs_option,
    option,
    out_option,
    scheduler_option,
    seed_option,
    sims_option,
    to_argv,
)
from evalcal_core.outdir import run_outputs
from evalcal_core.pool_paths import find_pool, missing_line, present
from evalcal_core.pools import ItemPool
from evalcal_core.validate import Interval, InvalidParameterError, fail

from . import generators
from .design_check import CheckGrid, grid_cells, harness_protocols
from .design_check import cell_requests as check_requests
from .evidence import code_version, pool_source
from .generators.llm_items import load_pool
from .grid import check_memory, chunk_size
from .grid.execute import CellRequest
from .grid.runner import run_cells
from .outputs import write_csv
from .validity import ValidityRule, settle

PROG = "python -m sim.harness_defaults"
DEFAULT_OUT = Path("reports") / "output" / "harness_defaults"
#: the real LLM pools read by default (by name: evalcal_core.pool_paths), and those found:
#: LiveCodeBench, Terminal-Bench (ragged: its complete systems) and MathArena
WANTED_POOLS = ("lcb_codegen_20240417", "tbench_core011", "matharena_aime_2025_i")
DEFAULT_POOLS = present(WANTED_POOLS)
#: what ``--quick`` sets (a test-sized table; its rates are too rough to judge most cells)
QUICK = dict(sims=200, power_sims=100, questions=(30, 200), repeats=(1, 4), seeds=(3,),
             pool_models=4, pool_runs=(1, 2))
MAX_QUESTIONS = 10**5


@dataclass(frozen=True)
class DefaultsConfig:
    """The harness defaults table: its grid, its sizes and how it runs.

    Attributes
    ----------
    questions : tuple of int
        Questions per benchmark of the synthetic cells.
    repeats : tuple of int
        Runs per question of each fixed model (the ``models`` cells).
    clusters : int
        Clusters of the ``models_clustered`` cells (0: none).
    icc : float
        Their latent intra-cluster correlation.
    seeds : tuple of int
        Paired seeds per arm (the ``methods`` cells).
    effect_pp : float
        True effect of the power cells, in percentage points of accuracy.
    sims : int
        Experiments per null cell.
    power_sims : int
        Experiments per power cell (0: no power cells).
    llm_pools : tuple of str
        Real per-item LLM pools whose models each add A/A cells.
    pool_models : int
        Models of each real pool (a pool with more is sampled evenly by accuracy; 0: all).
    pool_runs : tuple of int
        Attempts per arm of the real A/A cells (those above half a pool's attempts are left
        out for that pool).
    """

    questions: tuple[int, ...] = option(
        "--questions", (30, 100, 200, 500, 1000), nargs="+", kind=int, group="grid",
        help="questions per benchmark (30 100 200 500 1000)")
    repeats: tuple[int, ...] = option("--repeats", (1, 4), nargs="+", kind=int, group="grid",
                                      help="runs per question of each fixed model (1 4)")
    clusters: int = option("--clusters", 10, kind=int, group="grid",
                           constraint=Interval("int", 0, MAX_QUESTIONS),
                           help="clusters of the clustered fixed-model cells (10; 0: none)")
    icc: float = option("--icc", 0.3, kind=float, group="grid",
                        constraint=Interval("real", 0, 1, high_open=True),
                        help="their latent intra-cluster correlation (0.3)")
    seeds: tuple[int, ...] = option("--seeds", (3, 5, 10), nargs="+", kind=int, group="grid",
                                    help="paired seeds per arm of the methods cells (3 5 10)")
    llm_pools: tuple[str, ...] = option(
        "--llm-pools", DEFAULT_POOLS, nargs="*", group="grid",
        help="real per-item LLM pools (names in $EVALCAL_POOLS or ../shared/data/llm_pools, "
             "or CSV paths) whose models add A/A cells (default: "
             f"{' '.join(WANTED_POOLS)}, those found; none: no pool cells)")
    pool_models: int = option(
        "--pool-models", 8, kind=int, group="grid", constraint=Interval("int", 0, 10**4),
        help="models of each real pool: a pool with more is sampled, evenly spaced by "
             "accuracy (8; 0: every model, minutes per pool even with --quick)")
    pool_runs: tuple[int, ...] = option(
        "--pool-runs", (1, 2, 5), nargs="+", kind=int, group="grid",
        help="attempts per arm of the real A/A cells (1 2 5; those above half a pool's "
             "attempts are left out for it)")
    effect_pp: float = option("--effect", 3.0, kind=float, metavar="PP",
                              constraint=Interval("real", 0, 50, low_open=True),
                              help="true effect of the power cells, percentage points (3)")
    sims: int = sims_option(4000, help="experiments per null cell (4000)")
    power_sims: int = option("--power-sims", 1000, kind=int, always=True,
                             constraint=Interval("int", 0, 10**6),
                             help="experiments per power cell (1000; 0: no power)")
    alpha: float = alpha_option()
    seed: int = seed_option()
    jobs: int = jobs_option()
    backend: str = backend_option()
    scheduler: str | None = scheduler_option()
    out: Path = out_option(DEFAULT_OUT)
    quick: bool = option("--quick", False, switch=True, in_argv=False,
                         help="a small table for tests: " + ", ".join(
                             f"{k.replace('_', '-')} {v}" for k, v in QUICK.items()))
    quiet: bool = option("--quiet", False, switch=True, in_argv=False,
                         help="no progress bar")

    def sized(self) -> DefaultsConfig:
        """The config ``--quick`` asks for: :data:`QUICK`'s sizes where an option was left at
        its default (itself without ``--quick``)."""
        if not self.quick:
            return self
        defaults = {f.name: f.default for f in fields(self)}
        return replace(self, quick=False, **{k: v for k, v in QUICK.items()
                                             if getattr(self, k) == defaults[k]})


def check_config(config: DefaultsConfig) -> None:
    """Every value checked before anything is drawn; a one-line error names the option."""
    check_options(config)
    for flag, values, low, high in (("--questions", config.questions, 4, MAX_QUESTIONS),
                                    ("--repeats", config.repeats, 1, 1000),
                                    ("--seeds", config.seeds, 2, 1000),
                                    ("--pool-runs", config.pool_runs, 1, 1000)):
        if not values:
            raise fail(flag, "a non-empty list", [], PROG)
        for v in values:
            if not low <= v <= high:
                raise fail(flag, f"a list of integers in [{low}, {high}]", v, PROG)
    if config.clusters == 1 or (config.clusters and 2 * config.clusters > max(config.questions)):
        raise fail("--clusters", f"0 or an integer in [2, {max(config.questions) // 2}] (each "
                   "cluster holds >= 2 questions)", config.clusters, PROG)
    for pool in config.llm_pools:
        try:
            data = table_pool(pool, config.pool_models).data
        except InvalidParameterError as exc:
            raise fail("--llm-pools", f"a list of LLM pools ({exc})", pool, PROG) from None
        if data.attempts < 2:
            raise fail("--llm-pools", "a list of pools with >= 2 attempts per (model, item) "
                       f"(an A/A cell splits them; {Path(str(pool)).name} has "
                       f"{data.attempts})", pool, PROG)
        if min(config.pool_runs) > data.attempts // 2:
            raise fail("--pool-runs", "a list holding a value <= half the attempts of every "
                       f"pool ({Path(str(pool)).name}: {data.attempts} attempts, so <= "
                       f"{data.attempts // 2})", list(config.pool_runs), PROG)


# --------------------------------------------------------------------------------------------
# The real pools


@dataclass(frozen=True)
class TablePool:
    """A real pool as the table reads it.

    Attributes
    ----------
    spec : str
        As given to ``--llm-pools`` (a name or a path).
    name : str
        The file's name without its suffixes (the column's name).
    data : evalcal_core.pools.ItemPool
        The pool; a ragged file's complete models only (``complete_models``).
    complete_models : bool
        Whether the file is ragged, read keeping its complete models.
    models : tuple of str
        The models whose A/A cells the table holds (all, or a sample evenly spaced by
        accuracy, least accurate first).
    """

    spec: str
    name: str
    data: ItemPool
    complete_models: bool
    models: tuple[str, ...]

    @property
    def total_models(self) -> int:
        """The file's models, those a ragged file drops included."""
        return len(self.data.models) + len(self.data.dropped)

    def runs(self, wanted) -> list[int]:
        """The attempts per arm of ``wanted`` that the pool holds (<= half its attempts)."""
        return [r for r in sorted(set(wanted)) if 2 * r <= self.data.attempts]

    def line(self, count: int) -> str | None:
        """One line saying how the pool was read and sampled (``None`` when every model of a
        complete file is used)."""
        parts = []
        if self.complete_models:
            parts.append(f"ragged (its {len(self.data.dropped)} of {self.total_models} models "
                         f"with fewer than {self.data.attempts} attempts on some item are "
                         f"dropped: read with complete_models=True, {len(self.data.models)} "
                         "models)")
        if len(self.models) < len(self.data.models):
            parts.append(f"{len(self.models)} of its {len(self.data.models)} models, evenly "
                         f"spaced by accuracy (--pool-models {count})")
        return f"{PROG}: pool {self.name}: " + "; ".join(parts) if parts else None


def table_pool(pool, count: int) -> TablePool:
    """Read ``pool`` for the table: a ragged file with ``complete_models`` (its complete
    models), and ``count`` of its models when it has more (0: all).

    The sample is deterministic: the models sorted by mean accuracy (ties by name) at the
    ranks ``floor(i (M - 1) / (count - 1) + 1/2)``, so the least and the most accurate are in
    it and the rest spread over the range between (a pool's worst cell is usually at one end
    of the accuracy range, where few items have mixed outcomes).
    """
    spec = str(pool)
    # A complete file reads the same either way; a ragged one is refused by the strict
    # read, so its complete models are what an A/A cell can split.
    data = load_pool(spec, complete_models=True)
    models = tuple(data.models)
    if count and len(models) > count:
        accuracy = np.asarray(data.scores, dtype=float).mean(axis=(1, 2))
        order = sorted(range(len(models)), key=lambda i: (accuracy[i], models[i]))
        step = (len(models) - 1) / (count - 1) if count > 1 else 0.0
        ranks = np.floor(np.arange(count) * step + 0.5).astype(int)
        models = tuple(models[order[i]] for i in ranks)
    name = Path(spec).name
    for suffix in (".gz", ".csv"):
        name = name.removesuffix(suffix)
    return TablePool(spec, name, data, bool(data.dropped), models)


# --------------------------------------------------------------------------------------------
# The cells


@dataclass(frozen=True)
class TableCell:
    """A cell of the table: the generator and runs per arm, and the design group it shows."""

    kind: str
    group: str
    generator: generators.Generator
    k: int
    real: bool = False


def table_cells(config: DefaultsConfig) -> list[TableCell]:
    """The table's cells, design by design (the order of the markdown table)."""
    out = []
    for r in config.repeats:
        grid = CheckGrid(kinds=(MODELS,), questions=config.questions, repeats=(r,))
        out += [TableCell(MODELS, f"models ({_runs(r)})", c.generator, c.k)
                for c in grid_cells(grid)]
    if config.clusters:
        fits = tuple(n for n in config.questions if 2 * config.clusters <= n)
        grid = CheckGrid(kinds=(MODELS_CLUSTERED,), questions=fits, clusters=(config.clusters,),
                         icc=(config.icc,), repeats=(1,))
        out += [TableCell(MODELS_CLUSTERED, f"models in {config.clusters} clusters "
                          f"(icc {config.icc:g}, 1 run)", c.generator, c.k)
                for c in grid_cells(grid)]
    for k in config.seeds:
        grid = CheckGrid(kinds=(METHODS_PAIRED,), questions=config.questions, seeds=(k,))
        out += [TableCell(METHODS_PAIRED, f"methods ({k} paired seeds)", c.generator, c.k)
                for c in grid_cells(grid)]
    for pool in config.llm_pools:
        real = table_pool(pool, config.pool_models)
        used = len(real.models)
        of = f"{used}" if used == real.total_models else (
            f"{used} complete of {real.total_models}" if used == len(real.data.models)
            else f"{used} of {real.total_models}")
        extra = {"complete_models": True} if real.complete_models else {}
        runs = real.runs(config.pool_runs)
        for r in runs:
            group = f"{real.name} A/A ({len(real.data.items)} items, {of} models, {_runs(r)})"
            out += [TableCell(MODELS, group, generators.get("llm_items", pool=real.spec,
                                                            model=m, **extra), r, real=True)
                    for m in real.models]
        clusters = 0 if real.data.clusters is None else int(real.data.clusters.max()) + 1
        if clusters >= 2 and runs:
            # the pool's own clusters: the clustered design's harness defaults (Inspect's
            # stderr(cluster=...)) and cluster_cr2, at the fewest runs only (the cells' cost)
            r = min(runs)
            group = (f"{real.name} A/A in its {clusters} clusters ({len(real.data.items)} "
                     f"items, {of} models, {_runs(r)})")
            out += [TableCell(MODELS_CLUSTERED, group,
                              generators.get("llm_items", pool=real.spec, model=m, **extra),
                              r, real=True)
                    for m in real.models]
    return out


def _runs(r: int) -> str:
    return f"{r} run" + ("s" if r > 1 else "")


def cell_requests(cell: TableCell, effect_pp: float) -> list[CellRequest]:
    """Every harness default and the design's recommended protocol that can run on ``cell``."""
    wanted = [*harness_protocols(), protocols.recommended_for(cell.kind)]
    return check_requests(cell, wanted, effect_pp)


def _plants(cell: TableCell, effect_pp: float) -> bool:
    """Whether the cell's generator can plant ``effect_pp`` (``question_mixture`` promotes
    hard questions, and 30 questions hold too few for a few pp)."""
    try:
        cell.generator.check_effect(effect_pp / 100.0)
    except InvalidParameterError:
        return False
    return True


# --------------------------------------------------------------------------------------------
# The table


#: columns of harness_defaults.csv
COLUMNS = ["group", "kind", "protocol", "recommended", "reproduces", "generator",
           "generator_params", "n_questions", "k", "sims", "alpha", "rejections", "rate",
           "rate_low", "rate_high", "looks", "fpr_upper", "fpr_p", "state", "effect_pp",
           "power_sims", "power", "power_low", "power_high"]


def harness_defaults(config: DefaultsConfig, *, progress: bool = True) -> pd.DataFrame:
    """The table's rows: false-positive rate and verdict of every protocol on every null
    cell, and its power at ``config.effect_pp`` on every synthetic cell.

    Returns
    -------
    pandas.DataFrame
        One row per (cell, protocol) with :data:`COLUMNS`; rates are fractions.
    """
    config = config.sized()
    cells = table_cells(config)
    for cell in cells:
        check_memory(cell.generator, cell.k, min(config.sims, chunk_size(cell.generator,
                                                                        cell.k)))
    cache = None if config.out is None else Path(config.out) / "cells"
    run = Execution.of(config, out=cache, progress=progress)
    null_requests = _unique([r for c in cells for r in cell_requests(c, 0.0)])
    null = run_cells(null_requests, run, desc="null cells")
    rule = ValidityRule.make(config.alpha, config.sims)
    # the sequential stop of sim.validity for the recommended protocols' borderline cells
    # (each added chunk its own stream, named by the root seed and the look)
    kinds = {c.generator.describe(): c for c in cells}
    null = settle(null, rule, generator_of=lambda params: kinds[params].generator,
                  honest=_recommended_in(cells),
                  run=lambda requests, sims, seed, pool_reps=0: run_cells(
                      requests, replace(run, sims=sims, seed=seed), desc="more simulations"),
                  seed=config.seed)
    power = None
    if config.power_sims:
        power_requests = _unique([r for c in cells if not c.real and _plants(c, config.effect_pp)
                                  for r in cell_requests(c, config.effect_pp)])
        power = run_cells(power_requests, replace(run, sims=config.power_sims),
                          desc="power cells")
    return _rows(cells, null, power, config)


def _unique(requests) -> list:
    """``requests`` without repeats: a real pool's cell under two designs asks for the
    protocols both run once (order kept)."""
    seen = {}
    for r in requests:
        seen.setdefault((r.generator.describe(), r.protocol, r.k, r.effect_pp), r)
    return list(seen.values())


def _recommended_in(cells):
    """``honest(protocol, generator_name)`` for the sequential stop: a recommended protocol
    of a design the generator serves (a real pool serves models and models_clustered; the
    harness defaults are judged on their first look only)."""
    by_generator = {}
    for c in cells:
        by_generator.setdefault(c.generator.name, set()).add(protocols.recommended_for(c.kind))

    def honest(protocol: str, generator_name: str) -> bool:
        return protocol in by_generator[generator_name]

    return honest


def _rows(cells, null, power, config) -> pd.DataFrame:
    # a generator and run count may stand in two designs' groups (a real pool with clusters):
    # each row goes to every group whose design asked for its protocol
    where = {}
    for c in cells:
        asked = {req.protocol for req in cell_requests(c, 0.0)}
        where.setdefault((c.generator.describe(), c.k), []).append((c, asked))
    by_cell = {}
    if power is not None:
        by_cell = {(r.generator_params, r.protocol, r.k): r for r in power.itertuples()}
    rows = []
    for r in null.itertuples():
        for cell, asked in where[(r.generator_params, r.k)]:
            if r.protocol in asked:
                rows.append(_row(r, cell, by_cell.get((r.generator_params, r.protocol, r.k)),
                                 config))
    order = {c.group: i for i, c in enumerate(cells)}
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame = frame.assign(_g=frame["group"].map(order), _h=~frame["recommended"])
    frame = frame.sort_values(["_g", "_h", "protocol", "n_questions", "generator_params"],
                              kind="stable")
    return frame.drop(columns=["_g", "_h"]).reset_index(drop=True)


def _row(r, cell, p, config) -> dict:
    """One table row: the null row ``r`` of ``cell`` and its power row ``p`` (or None)."""
    return {
            "group": cell.group, "kind": cell.kind, "protocol": r.protocol,
            "recommended": protocols.recommended_for(cell.kind) == r.protocol,
            "reproduces": protocols.protocol_class(r.protocol).harness,
            "generator": r.generator, "generator_params": r.generator_params,
            "n_questions": cell.generator.n, "k": r.k, "sims": r.sims, "alpha": r.alpha,
            "rejections": r.rejections, "rate": r.rate, "rate_low": r.rate_low,
            "rate_high": r.rate_high, "looks": r.looks, "fpr_upper": r.fpr_upper,
            "fpr_p": r.fpr_p,
            "state": r.state, "effect_pp": config.effect_pp if p is not None else float("nan"),
            "power_sims": p.sims if p is not None else 0,
            "power": p.rate if p is not None else float("nan"),
            "power_low": p.rate_low if p is not None else float("nan"),
            "power_high": p.rate_high if p is not None else float("nan")}


# --------------------------------------------------------------------------------------------
# Command line


def build_parser() -> ArgumentParser:
    """The options of :class:`DefaultsConfig`, as declared there."""
    return add_options(ArgumentParser(prog=PROG, description=__doc__), DefaultsConfig)


def provenance(config: DefaultsConfig, command: str, expanded: str, version: str, rows: int,
               seconds: float) -> dict:
    """The sidecar ``harness_defaults.json``: how the CSV beside it was made.

    Parameters
    ----------
    config : DefaultsConfig
        As sized (``--quick`` applied).
    command : str
        The command line as typed.
    expanded : str
        The same with every option written out (as the markdown names it).
    version : str
        ``git describe --always --dirty`` of the checkout when the run began.
    rows : int
        Rows of the CSV.
    seconds : float
        Wall time of the run, in seconds.
    """
    return {"command": command, "expanded": expanded, "code_version": version,
            "date": datetime.date.today().isoformat(), "rows": rows, "seed": config.seed,
            "sims": config.sims, "power_sims": config.power_sims, "alpha": config.alpha,
            "pools": [pool_source(find_pool(p)) for p in config.llm_pools],
            "pool_models": config.pool_models, "jobs": config.jobs,
            "build_seconds": round(seconds, 1)}


def main(argv=None) -> int:
    from .harness_defaults_words import format_markdown, format_terminal

    start = time.perf_counter()
    argv = list(sys.argv[1:] if argv is None else argv)
    config = config_from_args(DefaultsConfig, build_parser().parse_args(argv))
    check_config(config)
    # before anything is written: an output folder inside the checkout would mark it dirty
    version = code_version()
    if config.llm_pools == DEFAULT_POOLS and (line := missing_line(WANTED_POOLS, PROG)):
        print(line)
    sized = config.sized()
    for pool in sized.llm_pools:
        if line := table_pool(pool, sized.pool_models).line(sized.pool_models):
            print(line)
    command = " ".join([PROG, *to_argv(config), *(["--quick"] if config.quick else [])])
    with run_outputs(config.out, PROG) as outputs:
        frame = harness_defaults(replace(config, out=outputs.path),
                                 progress=not config.quiet)
        write_csv(frame, outputs.path / "harness_defaults.csv")
        text = format_markdown(frame, sized, command)
        write_atomic(outputs.path / "harness_defaults.md", text)
        meta = provenance(sized, " ".join([PROG, *map(str, argv)]), command, version,
                          len(frame), time.perf_counter() - start)
        write_atomic(outputs.path / "harness_defaults.json", json.dumps(meta, indent=2) + "\n")
    print(format_terminal(frame, sized))
    print(f"wrote {outputs.path / 'harness_defaults.csv'} ({len(frame)} rows), "
          f"harness_defaults.md and harness_defaults.json in {meta['build_seconds']} s")
    return 0


if __name__ == "__main__":
    run_main(main, PROG)
