"""``python -m sim.evidence``: the table behind the evidence line evaluate prints after a verdict.

The shipped table (``protocols/evidence/evidence.csv``, read by
:mod:`protocols.analysis.evidence`) is computed by ONE command, run from the repository root
with the shared real pools given by path::

    python -m sim.evidence --out protocols/evidence --cache reports/output/evidence_cells \\
        --llm-pools ../shared/data/llm_pools/lcb_codegen_20240417.csv.gz \\
                    ../shared/data/llm_pools/matharena_aime_2025_i.csv.gz

(``evidence.json`` beside it records the command, seed, simulations, date, code version and
build time.) ``--quick`` is a small grid for tests.

For every design kind (:data:`evalcal_core.designs.KINDS`) and the protocol(s) ``evaluate``
reports under it (:func:`reported_protocols`: the design's ``primary``, and McNemar for one
binary run of fixed models), each row is the false-positive rate at effect 0 or the power at a
stated effect, with its Wilson 95% interval, on one benchmark shape:

* synthetic, the design's own generator (:data:`sim.design_check.DESIGN_GENERATORS`):
  ``models`` questions 30 ... 3000 x repeats 1, 2, 4; ``models_clustered`` questions 100,
  300, 1000 x clusters 3, 5, 10, 30 x icc 0.05, 0.2 x repeats 1, 2; ``methods_paired`` and
  ``methods_independent`` (sd ratio 1 and 3) seeds 3, 5, 10, 20; effects
  :data:`EFFECTS_PP`, in percentage points of the metric (accuracy for the question-level
  generators, the per-seed metric for the seed generators). The noise a power cell faced is
  stated as the generator's parameters and the protocol's median 95% CI width
  (``median_ci_width_pp``);
* real, each ``--llm-pools`` pool (:mod:`sim.generators.llm_items`): A/A cells, one per model
  (its attempts split at random in two halves: effect 0 by construction) at n = 30, 100,
  300, 1000, 3000 (those below the pool's items) and the pool's items (subsampled per
  experiment, stratified by the pool's clusters), and 1 ... attempts / 2 attempts per arm;
  ``models`` rows ignore the pool's clusters, ``models_clustered`` rows (pools with clusters)
  use them. The models' cells are pooled into one row (``pool_models`` models, ``model_sims``
  experiments each: the rate of a model drawn at random), with the worst model's rate,
  interval and name. A/B cells (``pair``: model A as baseline, B as variant) between the two
  models whose whole-pool difference is nearest each of the ``models`` effects give power at
  the pool's own difference (``effect_pp``: B's minus A's accuracy over the drawn items).

Null rows are judged by the project's validity rule (:func:`sim.validity.judge`, one look,
Holm over the table's null rows): ``state`` valid, invalid or undecided.

Cells go through the calibration's engine (:func:`sim.grid.run_cells`: streams named by the
cell, finished cells cached under ``OUT/cells``), built as :mod:`sim.design_check` builds its
cells (:class:`sim.design_check.Cell`, :func:`sim.design_check.cell_requests`).
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import json
import math
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.designs import (
    KINDS,
    METHODS_INDEPENDENT,
    METHODS_PAIRED,
    MODELS,
    MODELS_CLUSTERED,
    Design,
)
from evalcal_core.designs import get as get_design
from evalcal_core.options import (
    Execution,
    add_options,
    config_from_args,
    jobs_option,
    option,
    out_option,
    seed_option,
    sims_option,
)
from evalcal_core.outdir import check_out, run_outputs
from evalcal_core.pool_paths import resolve_pool
from evalcal_core.pools import as_option
from evalcal_core.validate import InvalidParameterError, check_int, fail
from protocols.analysis.evidence import LEVEL

from . import generators
from .design_check import DESIGN_GENERATORS, Cell, cell_requests
from .generators.llm_items import pool_data
from .grid import run_cells, wilson
from .outputs import write_csv
from .validity import PENDING, UNDECIDED, ValidityRule, judge

OWNER = "sim.evidence"
DEFAULT_OUT = "reports/output/evidence"
#: the shipped table's folder (package data of ``protocols``)
SHIPPED = Path(__file__).resolve().parent.parent / "protocols" / "evidence"

#: the non-zero effects of each kind's power cells, percentage points of the metric
EFFECTS_PP = {
    MODELS: (2.0, 5.0),
    MODELS_CLUSTERED: (2.0, 5.0),
    # seed_question at sd_seed 0.3: paired_t's 95% CI is ~8 pp wide at 5 seeds
    METHODS_PAIRED: (3.0, 6.0),
    # unpaired_seeds' sigma is 0.5 pp: welch_t's 95% CI is ~1.5 pp wide at 5 seeds
    METHODS_INDEPENDENT: (0.5, 1.0),
}


@dataclass(frozen=True)
class EvidenceGrid:
    """The shapes of the table (:func:`full_grid`, :func:`quick_grid`)."""

    model_questions: tuple = (30, 100, 300, 1000, 3000)
    model_repeats: tuple = (1, 2, 4)
    clustered_questions: tuple = (100, 300, 1000)
    clusters: tuple = (3, 5, 10, 30)
    iccs: tuple = (0.05, 0.2)
    clustered_repeats: tuple = (1, 2)
    seeds: tuple = (3, 5, 10, 20)
    sd_ratios: tuple = (1.0, 3.0)
    #: questions of the methods_paired generator (its seeds' metric is their mean)
    paired_questions: int = 1000
    #: real pools: question counts tried (each below the pool's items; the items too)
    pool_questions: tuple = (30, 100, 300, 1000, 3000)
    #: real pools: largest attempts per arm (None: attempts / 2)
    pool_max_runs: int | None = None


def full_grid() -> EvidenceGrid:
    return EvidenceGrid()


def quick_grid() -> EvidenceGrid:
    """A few cells of every kind (tests)."""
    return EvidenceGrid(model_questions=(30, 300), model_repeats=(1, 2),
                        clustered_questions=(100,), clusters=(5,), iccs=(0.2,),
                        clustered_repeats=(1,), seeds=(3, 10), sd_ratios=(1.0, 3.0),
                        paired_questions=200, pool_questions=(30,), pool_max_runs=2)


@dataclass(frozen=True)
class EvidenceConfig:
    """Options of ``python -m sim.evidence`` that change the numbers."""

    sims: int = sims_option(2000, constraint=None)
    model_sims: int = option("--model-sims", 400, kind=int,
                             help="real pools: experiments per model in each A/A cell (400)")
    seed: int = seed_option(constraint=None)
    llm_pools: tuple = option("--llm-pools", (), nargs="+", metavar="PATH",
                              help="real per-item LLM pools (paths; see "
                                   "sim/generators/llm_items.py)")
    complete_models: bool = option(
        "--complete-models", False, switch=True,
        help="a pool with ragged attempts (Terminal-Bench) keeps its models that have every "
             "attempt of every item, the others dropped and named in the table's sidecar; a "
             "complete pool is read as it is")
    quick: bool = option("--quick", False, switch=True, help="a small grid (tests)")

    def __post_init__(self):
        # messages name the options typed (the same rule as sim.design_check)
        check_int(self.sims, "--sims", OWNER, low=20, high=10**6)
        check_int(self.model_sims, "--model-sims", OWNER, low=10, high=10**6)
        check_int(self.seed, "--seed", OWNER, low=0)
        for pool in self.llm_pools:
            resolve_pool(pool, "--llm-pools", OWNER)  # a name no pools folder has
            try:
                data = pool_data(pool, self.complete_models)[0]
            except InvalidParameterError as exc:
                # the reader's refusal names its own parameter: say which typed pool it was
                raise InvalidParameterError(f"--llm-pools {pool}: {as_option(exc)}") from None
            if data.attempts < 2:
                raise fail("--llm-pools", "pools with >= 2 attempts per question (an A/A "
                           "cell splits each model's attempts in two)",
                           got=f"{pool} with {data.attempts} attempt", owner=OWNER)

    @property
    def grid(self) -> EvidenceGrid:
        return quick_grid() if self.quick else full_grid()


#: the level of every cell (the one the evidence lookup states)
ALPHA = LEVEL

#: columns of the table, in order
COLUMNS = ["source", "kind", "protocol", "n_questions", "runs", "clusters", "icc", "sd_ratio",
           "effect_pp", "effect_units", "generator_params", "median_ci_width_pp", "sims",
           "rejections", "rate", "rate_low", "rate_high", "state", "pool_models", "model_sims",
           "worst_model", "worst_rate", "worst_low", "worst_high", "pair"]


def reported_protocols(kind: str, runs: int, binary: bool) -> list[str]:
    """The protocol ``evaluate`` reports under ``kind`` for ``runs`` runs per arm
    (:meth:`evalcal_core.designs.StudyDesign.primary_for`)."""
    study = get_design(kind)
    return [study.primary_for(Design(compare=study.compare, runs=runs), binary)]


# --------------------------------------------------------------------------------------------
# Synthetic cells


@dataclass(frozen=True)
class Shape:
    """One synthetic cell: its kind, the design generator's parameters, runs per arm."""

    kind: str
    params: dict
    runs: int

    def cell(self) -> Cell:
        name, fixed = DESIGN_GENERATORS[self.kind]
        return Cell(self.kind, generators.get(name, **fixed, **self.params), self.runs)


def _models(g: EvidenceGrid):
    return [Shape(MODELS, {"n_questions": n}, r)
            for n, r in itertools.product(g.model_questions, g.model_repeats)]


def _clustered(g: EvidenceGrid):
    return [Shape(MODELS_CLUSTERED, {"n_questions": n, "n_clusters": c, "icc": icc}, r)
            for n, c, icc, r in itertools.product(g.clustered_questions, g.clusters, g.iccs,
                                                  g.clustered_repeats) if 2 * c <= n]


#: each kind's synthetic shapes from the grid's axes
_SHAPES = {
    MODELS: _models,
    MODELS_CLUSTERED: _clustered,
    METHODS_PAIRED: lambda g: [Shape(METHODS_PAIRED, {"n_questions": g.paired_questions}, k)
                               for k in g.seeds],
    METHODS_INDEPENDENT: lambda g: [Shape(METHODS_INDEPENDENT, {"sd_ratio": s}, k)
                                    for s in g.sd_ratios for k in g.seeds],
}


def synthetic_requests(grid: EvidenceGrid):
    """``(request, shape)`` of every synthetic cell: each kind's reported protocol at effect
    0 and at :data:`EFFECTS_PP`."""
    out = []
    for kind in KINDS:
        for shape in _SHAPES[kind](grid):
            cell = shape.cell()
            names = reported_protocols(kind, shape.runs, cell.generator.binary)
            for effect in (0.0, *EFFECTS_PP[kind]):
                if not _can_draw(cell.generator, effect):
                    continue
                out.extend((req, shape) for req in cell_requests(cell, names, effect))
    return out


def _can_draw(generator, effect_pp: float) -> bool:
    # question_mixture promotes hard questions: at n = 30 it has too few to promote reliably,
    # so that shape has no power cells (its null cell stays)
    try:
        generator.check_effect(effect_pp / 100)
    except InvalidParameterError:
        return False
    return True


def _synthetic_rows(frame: pd.DataFrame, shapes: dict) -> list[dict]:
    rows = []
    for r in frame.itertuples():
        shape = shapes[(r.generator_params, r.k)]
        p = shape.params
        rows.append(_row(
            source=r.generator, kind=shape.kind, protocol=r.protocol,
            n_questions=int(p.get("n_questions", 1)), runs=int(r.k),
            clusters=int(p.get("n_clusters", 0)), icc=float(p.get("icc", math.nan)),
            sd_ratio=float(p.get("sd_ratio", math.nan)), effect_pp=float(r.effect_pp),
            generator_params=r.generator_params, median_ci_width_pp=r.median_ci_width_pp,
            sims=int(r.sims), rejections=int(r.rejections)))
    return rows


def _row(**fields) -> dict:
    low, high = wilson(fields["rejections"], fields["sims"])
    units = {MODELS: "pp of accuracy", MODELS_CLUSTERED: "pp of accuracy",
             METHODS_PAIRED: "pp of the per-seed metric",
             METHODS_INDEPENDENT: "pp of the per-seed metric"}[fields["kind"]]
    base = {c: "" for c in COLUMNS}
    base.update(pool_models=0, model_sims=0, worst_rate=math.nan, worst_low=math.nan,
                worst_high=math.nan, effect_units=units,
                rate=fields["rejections"] / fields["sims"], rate_low=low, rate_high=high)
    base.update(fields)
    return base


# --------------------------------------------------------------------------------------------
# Real pools


def pool_source(path) -> str:
    """``NAME@SHA``: the pool file's name and the first 16 hex digits of its sha256."""
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    return f"{Path(path).name}@{digest}"


def pool_questions(grid: EvidenceGrid, items: int) -> list[int | None]:
    """Item counts of a pool's cells: the grid's below ``items``, and every item (None)."""
    return [n for n in grid.pool_questions if n < items] + [None]


def best_pairs(data, effects_pp) -> list[tuple[str, str]]:
    """For each effect, the (A, B) pair of models whose whole-pool accuracy difference
    B - A (pp) is nearest it (first in model order on ties); each pair once."""
    acc = np.asarray(data.scores, dtype=float).mean(axis=(1, 2)) * 100
    diffs = acc[None, :] - acc[:, None]  # [a, b] = B - A
    out = []
    for effect in effects_pp:
        a, b = np.unravel_index(np.argmin(np.abs(diffs - effect)), diffs.shape)
        pair = (data.models[a], data.models[b])
        if a != b and pair not in out:
            out.append(pair)
    return out


def _pool_kinds(data) -> list[tuple[str, bool]]:
    # (kind, whether its protocol reads the clusters): a pool with clusters also gives the
    # clustered design's rows (same draws)
    return [(MODELS, False)] + ([(MODELS_CLUSTERED, True)] if data.clusters is not None else [])


def pool_requests(pool: str, grid: EvidenceGrid, complete_models: bool = False):
    """``(request, meta)`` of every cell of one real pool: A/A per model, A/B per pair
    (``complete_models``: :func:`pool_data`)."""
    data, extra = pool_data(pool, complete_models)
    max_runs = data.attempts // 2
    if grid.pool_max_runs is not None:
        max_runs = min(max_runs, grid.pool_max_runs)
    out = []
    designs_ = [(kind, clustered, r) for kind, clustered in _pool_kinds(data)
                for r in range(1, max_runs + 1)]
    for n in pool_questions(grid, len(data.items)):
        for model in data.models:
            g = generators.get("llm_items", pool=str(pool), model=model, n_items=n, **extra)
            for kind, clustered, r in designs_:
                names = reported_protocols(kind, r, g.binary)
                out.extend((req, {"kind": kind, "model": model, "pair": "",
                                  "clustered": clustered})
                           for req in cell_requests(Cell(kind, g, r), names))
        for a, b in best_pairs(data, EFFECTS_PP[MODELS]):
            g = generators.get("llm_items", pool=str(pool), pair=f"{a},{b}", n_items=n,
                               **extra)
            for kind, clustered, r in designs_:
                names = reported_protocols(kind, r, g.binary)
                out.extend((req, {"kind": kind, "model": "", "pair": f"{a},{b}",
                                  "clustered": clustered})
                           for req in cell_requests(Cell(kind, g, r), names,
                                                    100 * g.fixed_effect()))
    return out


def _pool_rows(frame: pd.DataFrame, metas: dict, pool: str, model_sims: int,
               complete_models: bool = False) -> list[dict]:
    data = pool_data(pool, complete_models)[0]
    source = pool_source(pool)
    keys = list(zip(frame.protocol, frame.generator_params, frame.k, frame.effect_pp))
    frame = frame.assign(**{f: [metas[key][f] for key in keys]
                            for f in ("kind", "model", "pair", "clustered")},
                         n=[_n_items(g, len(data.items)) for g in frame.generator_params])
    rows = []
    clusters = 0 if data.clusters is None else int(data.clusters.max()) + 1
    for (kind, protocol, n, k, pair, clustered), part in frame.groupby(
            ["kind", "protocol", "n", "k", "pair", "clustered"], sort=False):
        common = dict(source=source, kind=kind, protocol=protocol, n_questions=int(n),
                      runs=int(k), clusters=clusters if clustered else 0,
                      rejections=int(part["rejections"].sum()), sims=int(part["sims"].sum()),
                      median_ci_width_pp=float(part["median_ci_width_pp"].median()))
        if pair:
            r = part.iloc[0]
            rows.append(_row(**common, effect_pp=float(r.effect_pp), pair=pair, pool_models=2,
                             generator_params=f"A/B {pair}"))
            continue
        worst = part.loc[part["rate"].idxmax()]
        lo, hi = wilson(int(worst.rejections), int(worst.sims))
        rows.append(_row(**common, effect_pp=0.0, pool_models=len(part), model_sims=model_sims,
                         worst_model=worst.model, worst_rate=float(worst.rate),
                         worst_low=lo, worst_high=hi,
                         generator_params=f"A/A over {len(part)} models"))
    return rows


def _n_items(params: str, items: int) -> int:
    for part in params.split(";"):
        if part.startswith("n_items="):
            return int(part.split("=", 1)[1])
    return items


# --------------------------------------------------------------------------------------------
# The table


def build_table(config: EvidenceConfig, run: Execution | None = None) -> pd.DataFrame:
    """Every row of the evidence table (:data:`COLUMNS`), synthetic then real, judged.

    Parameters
    ----------
    config : EvidenceConfig
    run : Execution or None
        Workers, cache folder, progress (its ``sims``, ``alpha``, ``seed`` are set here).
    """
    run = replace(run or Execution(progress=False), alpha=ALPHA, seed=config.seed)
    grid = config.grid
    pairs = synthetic_requests(grid)
    shapes = {(req.generator.describe(), req.k): shape for req, shape in pairs}
    frame = run_cells([req for req, _ in pairs], replace(run, sims=config.sims),
                      desc="evidence: synthetic")
    rows = _synthetic_rows(frame, shapes)
    for pool in config.llm_pools:
        cells = pool_requests(pool, grid, config.complete_models)
        metas = {(req.protocol, req.generator.describe(), req.k, req.effect_pp): meta
                 for req, meta in cells}
        aa = [req for req, meta in cells if not meta["pair"]]
        ab = [req for req, meta in cells if meta["pair"]]
        found = pd.concat([run_cells(aa, replace(run, sims=config.model_sims),
                                     desc=f"evidence: {Path(pool).name} A/A"),
                           run_cells(ab, replace(run, sims=config.sims),
                                     desc=f"evidence: {Path(pool).name} A/B")],
                          ignore_index=True)
        rows.extend(_pool_rows(found, metas, pool, config.model_sims, config.complete_models))
    table = pd.DataFrame(rows, columns=COLUMNS)
    return judge_nulls(sort_table(table), config.sims)


def sort_table(table: pd.DataFrame) -> pd.DataFrame:
    """Kind (in :data:`KINDS` order), protocol, synthetic before real, then the shape."""
    order = table["kind"].map({k: i for i, k in enumerate(KINDS)})
    real = table["pool_models"] > 0
    table = table.assign(_kind=order, _real=real)
    table = table.sort_values(["_kind", "protocol", "_real", "source", "n_questions", "runs",
                               "clusters", "icc", "sd_ratio", "pair", "effect_pp"],
                              kind="stable", na_position="first")
    return table.drop(columns=["_kind", "_real"]).reset_index(drop=True)


def judge_nulls(table: pd.DataFrame, sims: int) -> pd.DataFrame:
    """``state`` of each null row by the validity rule (one look; Holm over the null rows);
    power rows get ''."""
    null = table["effect_pp"] == 0
    judged = judge(table.loc[null, ["rejections", "sims"]],
                   ValidityRule.make(ALPHA, sims, max_sims=sims))
    state = pd.Series("", index=table.index, dtype=object)
    # one look and no confirmation stage here: a verdict the rule would still extend or
    # confirm ("pending") is reported undecided, as sim.validity.settle reports a cell it
    # does not extend
    state[null] = [UNDECIDED if s == PENDING else s for s in judged["state"]]
    return table.assign(state=state)


def code_version() -> str:
    """``git describe`` of the checkout (``unknown`` outside one)."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                              text=True, check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def command_line(argv) -> str:
    return " ".join(["python -m sim.evidence", *argv])


# --------------------------------------------------------------------------------------------
# Command line


@dataclass(frozen=True)
class Output:
    out: Path = out_option(Path(DEFAULT_OUT), help="folder for evidence.csv and evidence.json "
                                                   "(cells cached under OUT/cells)")
    cache: Path | None = option("--cache", None, kind=Path, in_argv=False,
                                help="folder of the finished cells (default OUT/cells)")
    jobs: int = jobs_option()
    quiet: bool = option("--quiet", False, switch=True, in_argv=False, help="no progress bar")


def build_parser() -> ArgumentParser:
    p = add_options(ArgumentParser(prog="python -m sim.evidence", description=__doc__),
                    EvidenceConfig)
    return add_options(p, Output)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    config = config_from_args(EvidenceConfig, args)
    start = time.perf_counter()
    # before the table is written: a table written into the checkout would mark it dirty
    version = code_version()
    with run_outputs(args.out, "python -m sim.evidence",
                     known=("evidence.csv", "evidence.json", "cells")) as outputs:
        out = outputs.path
        cache = args.cache if args.cache is not None else out / "cells"
        if args.cache is not None:
            # before any worker starts: a --cache that is a file or not writable failed
            # inside the workers, its line followed by joblib's warnings
            check_out(args.cache, "--cache")
        run = Execution(jobs=args.jobs, out=cache, progress=not args.quiet)
        table = build_table(config, run)
        write_csv(table, out / "evidence.csv")
        outputs.wrote("evidence.csv")
        meta = {"command": command_line(argv), "seed": config.seed, "sims": config.sims,
                "model_sims": config.model_sims, "quick": config.quick,
                "pools": [pool_source(p) for p in config.llm_pools],
                "complete_models": config.complete_models,
                "dropped_models": {pool_source(p): list(pool_data(p, config.complete_models)[0]
                                                        .dropped) for p in config.llm_pools},
                "date": datetime.date.today().isoformat(), "code_version": version,
                "build_seconds": round(time.perf_counter() - start, 1), "jobs": args.jobs,
                "rows": len(table)}
        (out / "evidence.json").write_text(json.dumps(meta, indent=2) + "\n")
        outputs.wrote("evidence.json")
        if args.cache is None:
            outputs.wrote("cells")
    print(f"wrote {out / 'evidence.csv'} ({len(table)} rows) in {meta['build_seconds']} s")
    return 0


if __name__ == "__main__":
    run_main(main, "python -m sim.evidence")
