"""What every section of the pitfalls report shares: settings, the run context, real pools."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from real_runs.store import pool_cells
from sim import generators
from sim.outputs import write_csv

from .._calibrate_command import CalibrateCommand
from .._report_page import CsvCite

PROG = "python -m reports.pitfalls"
DEFAULT_OUT = Path("reports") / "output" / "pitfalls"
#: the command's default ``--alpha`` (the nominal level of every section and figure)
DEFAULT_ALPHA = 0.05
#: a single run "wins" at |delta| >= 1 pp (the ``single_run`` protocol's threshold)
THRESHOLD_PP = 1.0
#: real pools with fewer paired seeds are skipped (a correlation CI needs 4)
MIN_POOL_SEEDS = 4


@dataclass(frozen=True)
class Settings:
    """How much to simulate, and at which nominal level.

    Attributes
    ----------
    sims : int
        Experiments per calibrate cell on per-seed generators.
    sims_questions : int
        Experiments per cell of ``question_mixture`` (each is 2 x 8 x 4000 scores).
    sims_family : int
        Experiments per number of variants in section 7.
    seed : int
        Root seed of every command.
    jobs : int
        Parallel workers for ``calibrate`` (results do not depend on it).
    pool : str or None
        Real-run store; ``None`` is the committed pool (and is left out of the commands).
    profile : str or None
        Training profile of the real pools; needed only when the store holds several.
    quick : bool
    alpha : float
        Nominal two-sided level of every test, figure and sentence (a fraction).
    """

    sims: int
    sims_questions: int
    sims_family: int
    seed: int = 0
    jobs: int = 1
    pool: str | None = None
    profile: str | None = None
    quick: bool = False
    alpha: float = DEFAULT_ALPHA


FULL = dict(sims=2000, sims_questions=2000, sims_family=20000)
QUICK = dict(sims=200, sims_questions=40, sims_family=2000)


class Context:
    """Output folder, shared calibrate cache and settings of one report run."""

    def __init__(self, settings: Settings, out: Path, cache: Path):
        self.settings = settings
        self.out = out
        self.cache = cache

    @property
    def alpha(self) -> float:
        """The run's nominal level (fraction)."""
        return self.settings.alpha

    def run(self, command: CalibrateCommand) -> pd.DataFrame:
        """The rows ``command`` prints, computed in-process."""
        return command.run(jobs=self.settings.jobs, cache=self.cache)

    def command(self, generator, params, k, effects, protocols, sims=None):
        """A :class:`CalibrateCommand` with this run's seed, alpha and simulation count, and
        for a real pool this run's store (``--pool ROOT``)."""
        from_pool = generators.generator_class(generator).from_pool
        return CalibrateCommand(generator, tuple(params), tuple(k),
                                None if effects is None else tuple(effects), tuple(protocols),
                                sims or self.settings.sims, self.settings.seed,
                                self.settings.alpha,
                                pool=self.settings.pool if from_pool else None)

    def report_command(self) -> str:
        """The ``python -m reports.pitfalls`` line that rebuilds this run."""
        s = self.settings
        parts = [PROG, "--seed", str(s.seed)]
        if s.quick:
            parts.append("--quick")
        if s.alpha != DEFAULT_ALPHA:
            parts += ["--alpha", f"{s.alpha:g}"]
        return " ".join(parts)

    def save(self, name: str, frame: pd.DataFrame) -> CsvCite:
        """Write ``frame`` as ``name`` and cite the file as read back from disk."""
        write_csv(frame, self.out / name)
        return CsvCite(name, pd.read_csv(self.out / name))


# --------------------------------------------------------------------------------------------
# Real pools


@dataclass(frozen=True)
class PoolScan:
    """Real-run pools usable by the report, and a line for each one left out."""

    pools: tuple
    notes: tuple[str, ...]


def scan_pools(root, profile=None) -> PoolScan:
    """``real_pool`` generators of every (dataset, scenario) with >= MIN_POOL_SEEDS seeds.

    Parameters
    ----------
    root : str or None
        Store folder; ``None`` is the committed pool.
    profile : str or None
        Training profile of the pools; needed only when the store holds several.
    """
    shown = root if root is not None else "real_runs/pool"
    try:
        cells = pool_cells(root, profile)
    except ValueError:
        return PoolScan((), (f"No real-run pool under {shown}: the parts that use it are "
                             f"skipped.",))
    pools, notes = [], []
    for dataset, scenario in cells:
        params = {"dataset": dataset, "scenario": scenario}
        if root is not None:
            params["root"] = root
        if profile is not None:
            params["profile"] = profile
        try:
            pool = generators.get("real_pool", **params)
        except ValueError as exc:
            notes.append(f"Real pool {dataset} {scenario} skipped: {exc}")
            continue
        if pool.pool_size < MIN_POOL_SEEDS:
            notes.append(f"Real pool {dataset} {scenario} skipped: {pool.pool_size} paired "
                         f"seeds (needs {MIN_POOL_SEEDS}).")
            continue
        pools.append(pool)
    return PoolScan(tuple(pools), tuple(notes))


def pool_params(pool) -> tuple[str, ...]:
    """``--param`` strings that rebuild ``pool`` from its store (``profile`` only when set);
    the store itself is ``--pool ROOT`` (:meth:`Context.command`), never a parameter."""
    params = [f"dataset={pool.dataset}", f"scenario={pool.scenario}"]
    if pool.profile is not None:
        params.append(f"profile={pool.profile}")
    return tuple(params)


def _pool_kwargs(pool) -> str:
    """``pool``'s keyword arguments of ``sim.generators.get`` (``root`` only when set)."""
    items = [p.partition("=")[::2] for p in pool_params(pool)]
    if pool.root is not None:
        items.append(("root", str(pool.root)))
    return ", ".join(f"{key}={value!r}" for key, value in items)


def pool_summary_command(pools) -> str:
    """A shell line printing :func:`sim.pool_summary.pool_summary` of ``pools``."""
    gens = ", ".join(f"get('real_pool', {_pool_kwargs(pool)})" for pool in pools)
    code = ("from sim.generators import get; from sim.pool_summary import pool_summary; "
            f"print(pool_summary([{gens}]).to_string())")
    return f'python -c "{code}"'
