"""A calibration run as a value: :class:`CalibrationConfig` -> :func:`run_calibration`.

The config holds what ``python -m sim.calibrate`` was asked (every option, validated once in
its constructor); :func:`plan_calibration` builds the generators and checks everything that
needs them (protocols, memory, the k caps of real pools) before anything is drawn or any
output folder is locked; :func:`run_calibration` computes the grid, the seed budget and, with
``mde``, the minimum detectable effects, and returns them as a :class:`CalibrationResult`.
The command line only parses, calls these and writes the files (:mod:`sim.calibrate`); a
report builds the same config (:mod:`reports._calibrate_command`).
"""

from __future__ import annotations

import dataclasses
import functools
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core.log_options import (
    check_log_options,
    filter_option,
    log_format_option,
    log_read,
    metric_option,
    task_option,
)
from evalcal_core.options import (
    MAX_SIMS,
    Execution,
    alpha_option,
    backend_option,
    check_options,
    config_from_args,
    jobs_option,
    max_sims_option,
    option,
    out_option,
    pool_option,
    scheduler_option,
    seed_option,
    sims_option,
    to_argv,
)
from evalcal_core.outdir import check_complete
from evalcal_core.params import decode, parse_key_values
from evalcal_core.validate import (
    AllOf,
    AnyOf,
    Each,
    Interval,
    InvalidParameterError,
    Optional,
    Options,
    Requires,
    Rule,
    check_requires,
    fail,
)
from protocols import REPLICATE_MODES

from . import generators
from .budget import DEFAULT_K_MAX, search_budget, seed_budget
from .generators.real_pool import default_k_cap
from .grid import (
    DEFAULT_REPLICATES,
    DEFAULT_REPS,
    applicable_protocols,
    check_grid,
    check_memory,
    chunk_size,
    grid_requests,
    run_cells,
)
from .grid.runner import DEFAULT_POOL_METHOD, POOL_METHODS
from .mde import check_searchable, search_mde
from .pilot import PILOT_LOGS, generator_from_pilot, pilot_paths, pilot_source, reads_logs
from .pilot_budget import DEFAULT_ASSURANCE
from .pool_summary import fit_check, pool_summary

DEFAULT_EFFECTS = (0.0, 0.5, 1.0, 2.0)
#: the most --pool-reps: each replicate is one more pool's cells (halves) or one more fitted
#: pool (--check-fit), so the cost grows linearly; 1,000 already bounds a 95% interval's
#: Monte Carlo error far below its width
MAX_POOL_REPS = 1_000
DEFAULT_OUT = Path("reports") / "output" / "calibrate"
#: upper bounds checked before any work (a typo such as --sims 10^12 must not start a run)
MAX_K = 10**4


#: what ``--k`` may be
K_CONSTRAINT = AllOf(Rule(lambda k: len(k) in (1, 2), "one integer, or MIN MAX"),
                     Each(Interval("int", 1, MAX_K)),
                     Rule(lambda k: k[0] <= k[-1], "MIN MAX with MIN <= MAX"))
#: a fraction strictly between 0 and 1 (a power, an assurance)
_FRACTION = Interval("real", 0, 1, low_open=True, high_open=True)
_REAL_POOLS = "real pools"
_PILOTS = "pilots and CSV pools"


@dataclass(frozen=True)
class CalibrationConfig:
    """Everything ``python -m sim.calibrate`` was asked; validated once, when built.

    Each field is a command-line option, declared once here with its flag, default, help and
    constraint (:mod:`evalcal_core.options`): the parser, the checks and :meth:`to_argv` are
    derived from the declarations. ``k`` is ``(K,)`` or ``(MIN, MAX)`` as typed; ``params``
    and ``protocol_params`` the ``KEY=VALUE`` strings as typed, since a cell's random stream
    is named by the parsed values' text.
    """

    k: tuple[int, ...] = option(
        "--k", nargs="+", kind=int, metavar="K", always=True, constraint=K_CONSTRAINT,
        help="seeds per arm: one integer, or MIN MAX for the range MIN..MAX")
    generator: str = option(
        "--generator", "seed_gaussian", always=True,
        help="one of " + ", ".join(generators.names()) + "; or "
             + "; ".join(f"'{k}': {v}" for k, v in generators.SHORTHANDS.items()))
    params: tuple[str, ...] = option(
        "--param", (), nargs="+", metavar="KEY=VALUE",
        help="generator parameters, e.g. sigma=0.004 rho=0.3 (fractions)")
    pool: str | None = pool_option(
        group=_REAL_POOLS, help="real pools: run store (default: the committed pool)")
    effects: tuple[float, ...] | None = option(
        "--effects", None, nargs="+", kind=float, metavar="EFFECT",
        constraint=Optional(Rule(lambda e: len(set(e)) == len(e), "distinct values")),
        help="true effects in percentage points (default 0 0.5 1 2); a real pool has its "
             "own, which --effects may only restate, and a CSV pool with --metric-range "
             "states it in the metric's own units (20 on a [0, 100] metric is +20 units, "
             "not +0.2)")
    protocols: tuple[str, ...] | None = option(
        "--protocols", None, nargs="+", metavar="NAME",
        help="protocols to score (default: all applicable)")
    sims: int = sims_option(2000)
    seed: int = seed_option()
    alpha: float = alpha_option()
    from_pilot: str | None = option(
        "--from-pilot", None, metavar="RESULTS",
        help="fit the generator to your pilot runs: a protocols.evaluate CSV, or two harness "
             "logs as BASELINE_LOG,VARIANT_LOG (or give them with --arm)")
    arm: tuple = option(
        "--arm", (), action="append", metavar="NAME=PATH",
        help="instead of --from-pilot: one arm's pilot log (lm-eval samples_*.jsonl, Inspect "
             ".eval, HELM, a one-arm CSV, or a folder), as evaluate reads --arm; give it for "
             "both arms (the one named baseline, else the first, is the baseline)")
    metric: str | None = metric_option(group=_PILOTS)
    task: str | None = task_option(group=_PILOTS)
    filter: str | None = filter_option(group=_PILOTS)
    log_format: str | None = log_format_option(group=_PILOTS)
    protocol_params: tuple[str, ...] = option(
        "--protocol-param", (), nargs="+", metavar="KEY=VALUE",
        help="set on every selected protocol with that parameter, e.g. B=30")
    jobs: int = jobs_option()
    backend: str = backend_option()
    scheduler: str | None = scheduler_option()
    out: Path | None = out_option(DEFAULT_OUT)
    target_power: float = option(
        "--target-power", 0.8, kind=float, metavar="P", constraint=_FRACTION,
        help="power the seed budget and --mde answer for (0.8)")
    k_max: int = option(
        "--k-max", DEFAULT_K_MAX, kind=int, metavar="K",
        help=f"search the seed budget up to this k ({DEFAULT_K_MAX}); a real pool caps it at "
             f"a third of its seeds")
    fpr_tolerance: float | None = option(
        "--fpr-tolerance", None, kind=float, metavar="T",
        help="a protocol is recommended only if its false-positive rate's upper bound is <= "
             "alpha + T at every k (default alpha / 5)")
    max_sims: int | None = max_sims_option()
    assurance: float | None = option(
        "--assurance", None, kind=float, metavar="P", constraint=Optional(_FRACTION),
        group=_PILOTS,
        help=f"--from-pilot: the seed budget from the pilot's own deltas reaches the target "
             f"power with this probability over the pilot's luck ({DEFAULT_ASSURANCE})")
    metric_range: tuple[float, ...] | None = option(
        "--metric-range", None, nargs=2, kind=float, metavar=("LOW", "HIGH"), group=_PILOTS,
        constraint=Optional(AllOf(Rule(lambda r: len(r) == 2, "two numbers LOW HIGH"),
                                  Each(Interval("real")),
                                  Rule(lambda r: r[0] < r[-1], "LOW < HIGH"))),
        help="range of a CSV pool's metric (e.g. 0 1000 for RL returns); default [0, 1], or "
             "[0, 100] with --percent. Its effects (--effects, the effect column) and CI "
             "widths (median_ci_width) are then in the metric's units, with unit = 'metric "
             "units' in the CSV files; effect_pp and median_ci_width_pp are left blank")
    mde: bool = option(
        "--mde", False, switch=True,
        help="also search the minimum detectable effect of every k (mde.csv); generators "
             "with a continuous effect only")
    percent: bool = option(
        "--percent", False, switch=True, group=_PILOTS,
        help="--from-pilot: the pilot's scores are percentages (91.3 = 91.3%%)")
    allow_large_k: bool = option(
        "--allow-large-k", False, switch=True, group=_REAL_POOLS,
        help="real pools: allow k above a third of the pool (experiments then share most of "
             "their seeds)")
    pool_reps: int | None = option(
        "--pool-reps", None, kind=int, metavar="R", group=_REAL_POOLS,
        constraint=Optional(AnyOf(Options((0,), "0 (off)"), Interval("int", 2, MAX_POOL_REPS))),
        help=f"real pools: with --pool-method halves the half-sample replicates behind "
             f"pool_low/pool_high, and with --check-fit the pools a fitted model redraws to "
             f"judge its own fit ({DEFAULT_REPS}; 0 = off; at most {MAX_POOL_REPS:,}; "
             f"refused without either)")
    pool_method: str | None = option(
        "--pool-method", None, choices=POOL_METHODS, group=_REAL_POOLS,
        constraint=Optional(Options(POOL_METHODS)),
        help=f"real pools: how pool_low/pool_high get the pool-sampling error: 'jackknife' "
             f"(delete-one-seed jackknife over the seeds each experiment drew; no extra "
             f"cells), 'projection' (Hoeffding's first-order term), 'halves' (the older "
             f"--pool-reps half-sample replicates, 6x the cost); default {DEFAULT_POOL_METHOD}")
    replicates: str = option(
        "--replicates", DEFAULT_REPLICATES, choices=REPLICATE_MODES,
        help=f"z-bootstrap protocols: 'summary' draws the B replicates' mean and SD from "
             f"their exact-moment law (the same rates, far faster); 'drawn' resamples every "
             f"replicate ({DEFAULT_REPLICATES})")
    check_fit: bool = option(
        "--check-fit", False, switch=True, group=_REAL_POOLS,
        help="real pools: also calibrate seed_question fitted to each pool and write "
             "fit_check.csv, with where a correct model's difference would fall (null_mean, "
             "se_null; a parametric bootstrap of --pool-reps pools)")
    plot: bool = option("--no-plot", True, switch=True, in_argv=False,
                        help="skip power_curves.png")
    quiet: bool = option("--quiet", False, switch=True, in_argv=False,
                         help="no progress bar, no table")

    def __post_init__(self):
        _validate(self)

    @classmethod
    def from_args(cls, args) -> CalibrationConfig:
        """The config of parsed command-line arguments (an ``argparse.Namespace``)."""
        return config_from_args(cls, args)

    @property
    def ks(self) -> list[int]:
        """Every k of the grid (``--k MIN MAX`` is the range MIN..MAX)."""
        return list(range(self.k[0], self.k[-1] + 1))

    @property
    def pool_replicates(self) -> int:
        """``--pool-reps``, or its default where not given."""
        return DEFAULT_REPS if self.pool_reps is None else self.pool_reps

    @property
    def pool_interval_method(self) -> str:
        """``--pool-method``, or its default where not given."""
        return DEFAULT_POOL_METHOD if self.pool_method is None else self.pool_method

    @functools.cached_property
    def pilot(self) -> str | dict | None:
        """The pilot: ``--from-pilot``'s value, or ``{name: log}`` from ``--arm``
        (:func:`sim.pilot.pilot_source`); ``None`` without one."""
        return pilot_source(self.from_pilot, self.arm)

    @functools.cached_property
    def generator_params(self) -> dict:
        """``--param`` parsed (numbers as numbers), with ``--pool`` as the real generators'
        ``root``."""
        params = parse_key_values(self.params, "--param")
        if "root" in params:
            # one spelling of the run store in every command: --pool ROOT
            raise fail("--param", "free of root= (name the run store with --pool ROOT)",
                       f"root={params['root']}")
        if self.pool is not None:
            params["root"] = self.pool
        return params

    @functools.cached_property
    def protocol_param_values(self) -> dict:
        """``--protocol-param`` parsed."""
        return parse_key_values(self.protocol_params, "--protocol-param")

    def to_argv(self) -> list[str]:
        """Arguments of ``python -m sim.calibrate`` that ask for this config: ``--k``,
        ``--generator``, ``--sims`` and ``--seed`` always, other options where they differ
        from their defaults, in the order of the fields (``--jobs``, ``--out``,
        ``--backend``, ``--scheduler``, ``--no-plot``, ``--quiet`` never: they change no
        number)."""
        return to_argv(self)

    def shell(self) -> str:
        """:meth:`to_argv` as one shell line."""
        return "python -m sim.calibrate " + " ".join(shlex.quote(a) for a in self.to_argv())


#: options that only make sense with another
REQUIRES = (
    Requires("--scheduler", lambda c: c.scheduler, "--backend dask",
             lambda c: c.backend == "dask"),
    Requires("--percent", lambda c: c.percent,
             "--from-pilot, --arm or a CSV pool (--param csv=PATH)",
             lambda c: c.pilot is not None or "csv" in c.generator_params,
             why="describes a pilot's or a CSV pool's scores"),
    Requires("--assurance", lambda c: c.assurance is not None,
             "--from-pilot or --arm", lambda c: c.pilot is not None,
             why="sets the assurance of a pilot's seed budget"),
    Requires("--pool", lambda c: c.pool is not None, "--generator real or real_pool",
             lambda c: c.generator in ("real", "real_pool"), why="names the real pools' store"),
    # options of the real pools' intervals and fit check: a synthetic generator reads none
    *(Requires(flag, used, "--generator real or real_pool",
               lambda c: c.generator in ("real", "real_pool"), why="describes real pools")
      for flag, used in (("--pool-reps", lambda c: c.pool_reps is not None),
                         ("--pool-method", lambda c: c.pool_method is not None),
                         ("--check-fit", lambda c: c.check_fit),
                         ("--allow-large-k", lambda c: c.allow_large_k))),
    # read by the half-sample intervals and the fit check's parametric bootstrap only: the
    # default jackknife intervals draw no replicate, and a count given there did nothing
    Requires("--pool-reps", lambda c: c.pool_reps is not None,
             "--pool-method halves or --check-fit",
             lambda c: c.pool_method == "halves" or c.check_fit,
             why="sets the half-sample replicates and the fit check's redrawn pools"),
    Requires("--metric-range", lambda c: c.metric_range is not None,
             "a CSV pool (--param csv=PATH)", lambda c: "csv" in c.generator_params,
             why="describes a CSV pool's metric"),
)


def _constraints(c: CalibrationConfig) -> dict:
    """The bounds that depend on other options: --fpr-tolerance on --alpha, --k-max on --k
    (and at most the largest --k allowed), --max-sims on --sims."""
    return {"--fpr-tolerance": Optional(Interval("real", 0, 1 - c.alpha)),
            "--k-max": Interval("int", c.k[-1], MAX_K),
            "--max-sims": Optional(Interval("int", c.sims, MAX_SIMS))}


def _validate(c: CalibrationConfig) -> None:
    """Every check that needs no generator: each option's own constraint, the options that
    go together, then the bounds that depend on other options."""
    check_options(c)
    check_requires(c, REQUIRES)
    if c.k[-1] > c.k_max == DEFAULT_K_MAX:
        # the user typed a range past the search's default cap, not a --k-max: say what to give
        raise fail("--k-max", f">= {c.k[-1]}, the largest --k (the seed budget searches up to "
                   f"--k-max): give --k-max {c.k[-1]} or more",
                   got=f"{c.k_max} (its default)")
    check_options(c, _constraints(c), only_extra=True)
    c.generator_params  # noqa: B018  (parsed once here: a bad KEY=VALUE fails now)
    c.protocol_param_values  # noqa: B018
    check_log_options(c, reads_logs(c.pilot), PILOT_LOGS)
    if c.pilot is not None:
        # a pilot inside an output folder that a killed run left marked is not a result
        for part in pilot_paths(c.pilot):
            check_complete(part, "--arm" if c.arm else "--from-pilot")


@dataclass(frozen=True)
class CalibrationPlan:
    """The generators of a config and what each is calibrated on (all checked)."""

    config: CalibrationConfig
    generators: tuple
    #: ``describe()`` -> effects (pp) to calibrate
    effects: dict
    #: ``describe()`` -> largest k of the seed-budget search
    caps: dict
    #: ``describe()`` -> the protocols selected (:func:`sim.grid.applicable_protocols`)
    protocols: dict


def plan_calibration(config: CalibrationConfig) -> CalibrationPlan:
    """Build and check the generators of ``config`` (``ValueError`` before any work).

    Prints the pilot's fit (``from_pilot``) unless quiet, and notes/warnings on stderr.
    """
    if config.pool is not None:
        from real_runs.store import check_store

        check_store(config.pool)  # a file, a missing folder or one holding no pool, named
    chosen, observed = _generators(config)
    for generator in chosen:
        if config.mde:
            check_searchable(generator)
    for generator in chosen:
        k = max(config.ks)
        check_memory(generator, k, chunk_size(generator, k))
    caps = {g.describe(): _k_cap(g, config) for g in chosen}
    effects = {g.describe(): _effects(g, config.effects, observed) for g in chosen}
    selected = {}
    for generator in chosen:
        _check_effects(generator, effects[generator.describe()])
        check_grid(generator, config.ks, effects[generator.describe()])
        # the protocol selection and --protocol-param are checked here, before any lock
        selected[generator.describe()] = applicable_protocols(
            generator, config.ks, config.protocols, config.protocol_param_values,
            config.replicates)
    return CalibrationPlan(config, tuple(chosen), effects, caps, selected)


def _generators(c: CalibrationConfig):
    """The generators to calibrate, and the pilot's observed effect (pp) or ``None``."""
    if c.pilot is not None:
        if c.generator != "seed_gaussian":
            raise InvalidParameterError("a pilot (--from-pilot or --arm) chooses the generator "
                                        "itself; drop --generator")
        fit = generator_from_pilot(c.pilot, log_read=log_read(c), percent=c.percent,
                                   assurance=(DEFAULT_ASSURANCE if c.assurance is None
                                              else c.assurance),
                                   effects_pp=c.effects or (), alpha=c.alpha,
                                   power=c.target_power)
        for warning in fit.warnings:
            print(f"warning: {'--arm' if c.arm else '--from-pilot'}: {warning}",
                  file=sys.stderr)
        generator = generators.get(fit.generator.name,
                                   **{**fit.generator.params(), **c.generator_params})
        if not c.quiet:
            print(fit.text + " (calibrated alongside the requested effects)")
        return [generator], fit.observed_effect_pp
    params = dict(c.generator_params)
    if "csv" in params:
        # A CSV pool's metric, declared as for protocols.evaluate (--percent, --metric-range).
        if c.percent:
            params["percent"] = True
        if c.metric_range is not None:
            params["metric_low"], params["metric_high"] = c.metric_range
    return generators.expand(c.generator, params), None


def _effects(generator, requested, observed=None):
    """Effects to calibrate, as cell keys (``effect_pp``, 100 x the delta in the scores'
    units): the requested ones (or the pool's own), the null always (the seed budget's
    validity needs it), and a pilot's observed effect.

    ``requested`` is in the generator's unit: pp, or the metric's own units for a CSV pool
    with a declared metric range (``--effects 20`` on a [0, 100] metric is +20 units).
    """
    fixed = generator.fixed_effect()
    if fixed is not None:
        if requested is not None:
            _, factor = effect_unit(generator)
            for effect in requested:
                generator.check_effect(effect / factor)
        return [100 * fixed]
    effects = list(DEFAULT_EFFECTS if requested is None else requested)
    if 0.0 not in effects:
        effects.insert(0, 0.0)
    if observed is not None:
        observed = round(float(observed), 4)
        if observed not in effects:
            try:
                generator.check_effect(observed / 100)
            except ValueError:
                print(f"note: the pilot's own effect {observed:+.4g} pp cannot be simulated "
                      f"by {generator.name}; left out", file=sys.stderr)
            else:
                effects.append(observed)
    return effects


def _check_effects(generator, effects) -> None:
    """Refuse an effect the generator cannot simulate, named as typed (``--effects``, in its
    unit) with the generator's own bound, which is stated on a fraction of the score."""
    unit, factor = effect_unit(generator)
    for key in effects:
        if unit == "pp" and abs(key) > 100:
            raise InvalidParameterError(f"--effects {key:g} pp is outside [-100, 100] pp, the "
                                        "most two fractions of correct answers can differ")
        try:
            generator.check_effect(key / 100.0)
        except InvalidParameterError as exc:
            raise InvalidParameterError(
                f"--effects {key / 100 * factor:g} {unit} cannot be simulated by generator "
                f"{generator.name} (the effect as a fraction of the score: {exc})") from None


def effect_unit(generator) -> tuple[str, float]:
    """``(unit, factor)``: the unit ``generator``'s effects are stated and typed in, and the
    factor from its scores' units to it: ``("pp", 100.0)`` for a fraction (every synthetic
    generator), ``("metric units", 1.0)`` for a CSV pool with a declared metric range."""
    if hasattr(generator, "units"):
        _, unit, factor = generator.units()
        return unit, float(factor)
    return "pp", 100.0


#: ``unit`` of a calibration row whose scores are fractions, and of a metric-range pool's
PP, METRIC_UNITS = "pp", "metric units"


def state_units(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (calibration or seed-budget rows) with its effects and interval widths
    stated in each setting's own unit.

    Cells are keyed and cached by ``effect_pp`` and ``median_ci_width_pp``, which are 100
    times the scores' units: percentage points for a fraction, but nothing readable for a
    metric that is not one (a loss, a return in [0, 1000] declared with
    ``--metric-range``). Adds, for every row whose ``unit`` is not yet set:

    * ``unit``: ``"pp"``, or ``"metric units"`` for a setting with a declared metric range
      (``metric_low``/``metric_high`` in ``generator_params``);
    * ``effect``: the true effect in ``unit`` (equal to ``effect_pp`` for a fraction);
    * ``median_ci_width`` (where the frame has ``median_ci_width_pp``): the median width of
      the protocol's confidence interval in ``unit``.

    A metric-range row's ``median_ci_width_pp`` becomes NaN (a pp of such a metric does not
    exist); its ``effect_pp`` stays, as the cell's key (:func:`for_file` blanks it in the
    files written). Applying it twice changes nothing.
    """
    frame = frame.copy()
    if "unit" not in frame:
        frame["unit"] = pd.Series(np.nan, index=frame.index, dtype=object)
    todo = frame["unit"].isna()
    metric = todo & frame["generator_params"].map(
        lambda p: "metric_low" in decode(p) and "metric_high" in decode(p)).astype(bool)
    frame.loc[todo, "unit"] = np.where(metric[todo], METRIC_UNITS, PP)
    # 100 x score units -> pp (x 1) for a fraction, -> metric units (/ 100) otherwise
    scale = np.where(metric, 0.01, 1.0)
    if "effect" not in frame:
        frame["effect"] = np.nan
    frame.loc[todo, "effect"] = (frame["effect_pp"] * scale)[todo]
    if "median_ci_width_pp" in frame:
        if "median_ci_width" not in frame:
            frame["median_ci_width"] = np.nan
        frame.loc[todo, "median_ci_width"] = (frame["median_ci_width_pp"] * scale)[todo]
        frame.loc[metric, "median_ci_width_pp"] = np.nan
    return frame


def for_file(frame: pd.DataFrame) -> pd.DataFrame:
    """A :func:`state_units` frame as written to ``calibration.csv``/``seed_budget.csv``:
    the pp columns hold pp only, so a metric-range row's ``effect_pp`` (its cell key, 100 x
    the metric's units) is left blank; read ``effect`` and ``unit`` instead."""
    if "unit" not in frame:
        return frame
    return frame.assign(effect_pp=frame["effect_pp"].where(frame["unit"] == PP))


def _k_cap(generator, c: CalibrationConfig) -> int:
    """Largest k of the seed-budget search for ``generator`` (real pools: a third of the
    pool unless allow_large_k; ValueError if the requested k already exceed it)."""
    if not generator.from_pool:
        # a generator with a finite number of runs (llm_items: its attempts) caps the search
        return c.k_max if generator.max_k is None else min(c.k_max, generator.max_k)
    ks = c.ks
    size = generator.pool_size
    cap = default_k_cap(size)
    label = f"{generator.dataset} {generator.scenario}"
    if max(ks) > cap and not c.allow_large_k:
        raise InvalidParameterError(f"--k {max(ks)} is above a third of the {size}-seed pool "
                                    f"{label} (at most {cap}): experiments would share most of "
                                    "their seeds. Pass --allow-large-k to run it anyway")
    if c.allow_large_k:
        if max(ks) > cap:
            print(f"warning: --allow-large-k: k up to {max(ks)} draws more than a third of the "
                  f"{size}-seed pool {label}; experiments share most of their seeds, so its "
                  f"rates say less about fresh seeds", file=sys.stderr)
        cap = size
    return min(c.k_max, cap)


@dataclass(frozen=True)
class CalibrationResult:
    """What a calibration run computed (the frames its CSV files hold).

    Attributes
    ----------
    calibration : pandas.DataFrame
        Every cell measured (``calibration.csv``): the grid and the searched cells
        (``searched``), with ``unit``, ``effect`` and ``median_ci_width`` in the setting's
        own unit (:func:`state_units`: pp, or a metric-range pool's metric units).
    budget : pandas.DataFrame
        ``seed_budget.csv`` (:func:`sim.budget.seed_budget`), with ``unit`` and ``effect``.
    mde : pandas.DataFrame or None
        ``mde.csv`` when asked for.
    pools : pandas.DataFrame or None
        ``pool_summary.csv`` of the real pools calibrated.
    fits : pandas.DataFrame or None
        ``fit_check.csv`` (``check_fit`` on real pools).
    title : str
        The figure's title (the generator and its setting, or "real-run pools").
    """

    calibration: pd.DataFrame
    budget: pd.DataFrame
    mde: pd.DataFrame | None
    pools: pd.DataFrame | None
    fits: pd.DataFrame | None
    title: str

    @property
    def grid(self) -> pd.DataFrame:
        """The requested grid: the rows not added by a search."""
        return self.calibration[~self.calibration["searched"].astype(bool)]


def cells_runner(c: CalibrationConfig, desc: str):
    """``run(requests, sims=None, seed=None, pool_reps=None) -> frame``: the config's cells
    computed by :func:`sim.grid.run_cells`, with the overrides the validity rule's
    sequential stop asks for (its chunks' simulations, seed and no half-samples)."""
    execution = Execution.of(c)

    def run(requests, *, sims=None, seed=None, pool_reps=None):
        over = {name: value for name, value in (("sims", sims), ("seed", seed))
                if value is not None}
        return run_cells(requests, dataclasses.replace(execution, **over),
                         pool_reps=c.pool_replicates if pool_reps is None else pool_reps,
                         pool_method=c.pool_interval_method, desc=desc)
    return run


def calibrate_grid(plan: CalibrationPlan, generator) -> pd.DataFrame:
    """The requested (k, effect) grid of one generator of ``plan`` (rows of
    ``calibration.csv``, in the setting's units: :func:`state_units`)."""
    c, key = plan.config, generator.describe()
    requests = grid_requests(generator, c.ks, plan.effects[key], plan.protocols[key])
    return state_units(cells_runner(c, "calibrating")(requests))


def run_calibration(config: CalibrationConfig,
                    plan: CalibrationPlan | None = None) -> CalibrationResult:
    """Calibrate, search the seed budget and (``config.mde``) the minimum detectable effect.

    Parameters
    ----------
    config : CalibrationConfig
    plan : CalibrationPlan, optional
        ``plan_calibration(config)`` if already made (the command line makes it before it
        locks the output folder).
    """
    plan = plan_calibration(config) if plan is None else plan
    c = config
    frames, fits = [], []
    for generator in plan.generators:
        frame = calibrate_grid(plan, generator)
        frames.append(frame)
        if c.check_fit and generator.from_pool:
            fit_common = {**dataclasses.asdict(Execution.of(c)),
                          "protocol_params": c.protocol_param_values,
                          "replicates": c.replicates}
            fits.append(fit_check(generator, frame, c.ks, plan.effects[generator.describe()],
                                  fit_common, reps=c.pool_replicates))
    frame = pd.concat(frames, ignore_index=True)
    frame = search_budget(frame, list(plan.generators), caps=plan.caps,
                          target_power=c.target_power, tolerance=c.fpr_tolerance,
                          run=cells_runner(c, "seed budget search"),
                          max_sims=c.max_sims, seed=c.seed)
    budget = seed_budget(frame, target_power=c.target_power, caps=plan.caps,
                         tolerance=c.fpr_tolerance, max_sims=c.max_sims)
    mde = None
    if c.mde:
        mde, cells = search_mde(frame, list(plan.generators), c.ks,
                                target_power=c.target_power, tolerance=c.fpr_tolerance,
                                max_sims=c.max_sims,
                                run=cells_runner(c, "effect search"))
        frame = pd.concat([frame, cells], ignore_index=True)
    frame, budget = state_units(frame), state_units(budget)
    pools = [g for g in plan.generators if g.from_pool]
    grid = frame[~frame["searched"].astype(bool)]
    title = grid["generator"].iloc[0] + ": " + (
        grid["generator_params"].iloc[0] if len(frames) == 1 else "real-run pools")
    return CalibrationResult(frame, budget, mde, pool_summary(pools) if pools else None,
                             pd.concat(fits, ignore_index=True) if fits else None, title)
