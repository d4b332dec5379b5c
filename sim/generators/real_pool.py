"""``real_pool``: experiments drawn from recorded real training runs."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalcal_core import scenarios
from evalcal_core.params import content_digest, encode
from evalcal_core.validate import InvalidParameterError, check_int, fail

from ._base import Generator, pool_rows, register

#: who the parameter errors name
OWNER = "generator real_pool"


def _default_pool() -> str:
    from real_runs.store import DEFAULT_POOL

    return str(DEFAULT_POOL)


@functools.lru_cache(maxsize=16)
def _load(root: str, dataset: str, scenario: str, profile: str | None, csv: str | None,
          percent: bool = False, metric_range: tuple | None = None):
    if csv is not None:
        from evalcal_core.results_io import ARMS, read_tidy_arms
        from evalcal_core.score_checks import check_arm_scores

        res = read_tidy_arms(csv, arms=ARMS, scale=0.01 if percent else 1.0)
        # A CSV pool's scores are checked like a results file's (protocols.evaluate): a
        # fraction in [0, 1] unless a percentage or another metric's range is declared.
        check_arm_scores(res, value_range=metric_range or (0.0, 1.0), percent=percent,
                         declared=metric_range is not None, partial=True)
        base, variant = res.scores
    else:
        from real_runs.store import load_pairs

        if not Path(root).is_dir():
            raise InvalidParameterError(f"real_pool: pool folder {root!r} does not exist; build it "
                                        "with 'python -m real_runs.build_pool' or name another "
                                        "store with --pool ROOT")
        base, variant = load_pairs(root, dataset, scenario, profile)
        if base.shape[0] == 0:
            raise InvalidParameterError(f"real_pool: no paired runs for dataset {dataset!r}, "
                                        f"scenario {scenario!r} under {root}")
    base = np.asarray(base, dtype=np.float64)
    variant = np.asarray(variant, dtype=np.float64)
    base.setflags(write=False)
    variant.setflags(write=False)
    return base, variant


def _null_flag(value) -> bool:
    """``null=`` of a CSV pool as a bool: true/false (any case), or a Python bool."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower() if value is not None else ""
    if text in ("true", "false"):
        return text == "true"
    raise fail("null", "true or false when csv is given (true: the pool is an A/A null, its "
               "rates are false-positive rates; false: its truth is its mean delta)", value,
               OWNER)


def default_k_cap(pool_size: int) -> int:
    """The largest k drawn from a pool of ``pool_size`` seeds unless ``--allow-large-k``: a
    third of the pool (at least 2). Beyond it two experiments share most of their seeds and
    the pool's rates stop telling about fresh seeds."""
    return max(2, int(pool_size) // 3)


@register
@dataclass(frozen=True)
class RealPool(Generator):
    """Each experiment draws k seeds without replacement from a pool of real paired runs.

    The pool's scores are per-test-example correctness of baseline and variant runs that
    share a seed (:func:`real_runs.store.load_pairs`), or a user's results CSV in the
    ``protocols.evaluate`` format. The true effect is fixed by the pool: 0 for the null
    scenarios ``S0``/``S0p`` (by construction), otherwise the pool's mean delta. Rates at
    that effect are false-positive rates or power for subsets of this finite pool.

    Parameters
    ----------
    dataset : str, default 'cifar10'
    scenario : str, default 'S0p'
    root : str or None
        Store folder; default the committed pool ``real_runs/pool``.
    profile : str or None
        Training profile, needed only when the store holds several.
    csv : str or None
        A results CSV to use as the pool instead of the store. Its label is ``label`` (default
        the file's name without suffix) and "null" or "effect" as declared by ``null``
        (``dataset`` and ``scenario`` hold them).
    null : bool or None
        Required with ``csv`` (and only then): ``True`` declares the pool a true null (its
        rates are false-positive rates, whatever its own mean delta), ``False`` makes its
        truth the pool's mean delta (its rates are power). There is no default: a pool
        with +0.7 pp silently scored as a null would pass for a false-positive rate.
    label : str or None
        With ``csv``: the pool's name in tables (default the file's stem; ``name`` is the
        generator's own, ``real_pool``).
    metric_low, metric_high : float or None
        With ``csv``: the range of a metric that is not a fraction in [0, 1] (RL returns,
        losses; ``--metric-range``): its effects and means are then stated in the metric's
        own units, not in percentage points.
    percent : bool or None
        With ``csv``: the scores are percentages (91.3 for 91.3%), read as fractions.
    """

    dataset: str | None = None
    scenario: str | None = None
    root: str | None = None
    profile: str | None = None
    csv: str | None = None
    null: bool | None = None
    label: str | None = None
    metric_low: float | None = None
    metric_high: float | None = None
    percent: bool | None = None

    name = "real_pool"
    from_pool = True

    def __post_init__(self):
        self._labels()
        for field in ("dataset", "scenario"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field):
                raise fail(field, "a non-empty string", getattr(self, field), OWNER)
        if self.csv is not None:
            object.__setattr__(self, "null", _null_flag(self.null))
        elif self.null is not None:
            raise fail("null", "given only with csv=PATH (a store pool's scenario says whether "
                       "it is a null)", self.null, OWNER)
        if self.csv is None:
            root = Path(self.root if self.root is not None else _default_pool())
            known = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
            if known and self.dataset not in known:
                raise fail("dataset", f"one of {', '.join(known)} (the datasets in {root})",
                           self.dataset, OWNER)
        self.pool()  # fail at construction, not in a worker

    def _labels(self) -> None:
        """Fill ``dataset``/``scenario``: the store's defaults, or a CSV pool's own name and
        its declaration; refuse the CSV-only parameters without ``csv``."""
        extra = {"label": self.label, "metric_low": self.metric_low,
                 "metric_high": self.metric_high, "percent": self.percent}
        if self.csv is None:
            for key, value in extra.items():
                if value is not None:
                    raise fail(key, "given only with csv=PATH (a store pool is accuracy, named "
                               "by its dataset and scenario)", value, OWNER)
            object.__setattr__(self, "dataset", self.dataset or "cifar10")
            object.__setattr__(self, "scenario", self.scenario or "S0p")
            return
        null = _null_flag(self.null)
        object.__setattr__(self, "dataset", self.label or self.dataset or Path(self.csv).stem)
        object.__setattr__(self, "scenario", self.scenario or ("null" if null else "effect"))
        if (self.metric_low is None) != (self.metric_high is None):
            raise fail("metric_low", "given together with 'metric_high' (--metric-range LOW "
                       "HIGH)", (self.metric_low, self.metric_high), OWNER)
        if self.metric_low is not None:
            if not float(self.metric_low) < float(self.metric_high):
                raise fail("metric_low", f"below 'metric_high' ({self.metric_high!r})",
                           self.metric_low, OWNER)
            if self.percent:
                raise fail("percent", "left out with 'metric_low'/'metric_high' (declare the "
                           "range in the file's own units)", self.percent, OWNER)
        if self.percent is not None:
            text = str(self.percent).strip().lower()
            if text not in ("true", "false", "1", "0"):
                raise fail("percent", "true or false", self.percent, OWNER)
            object.__setattr__(self, "percent", True if text in ("true", "1") else None)

    @property
    def metric_range(self) -> tuple[float, float] | None:
        """A CSV pool's declared metric range, ``None`` for a fraction in [0, 1]."""
        if self.metric_low is None:
            return None
        return float(self.metric_low), float(self.metric_high)

    def units(self) -> tuple[str, str, float]:
        """``(metric, unit, factor)``: what the pool's scores are, the unit its effects are
        stated in, and the factor from the scores' units to it (100 for pp of a fraction)."""
        if self.metric_range is not None:
            low, high = self.metric_range
            return f"score in [{low:g}, {high:g}]", "metric units", 1.0
        return ("accuracy" if self.binary else "fraction in [0, 1]"), "pp", 100.0

    def pool(self) -> tuple[np.ndarray, np.ndarray]:
        """The pool's ``(base, variant)`` scores, shape ``(k_pool, n)`` (read-only)."""
        root = str(self.root) if self.root is not None else _default_pool()
        return _load(root, self.dataset, self.scenario, self.profile,
                     None if self.csv is None else str(self.csv), bool(self.percent),
                     self.metric_range)

    def data_digest(self) -> str:
        """Fingerprint of the pool's scores: an edited store or CSV is a new cell key."""
        return content_digest(*self.pool())

    @property
    def pool_size(self) -> int:
        """Seeds in the pool."""
        return self.pool()[0].shape[0]

    @property
    def max_k(self) -> int:  # type: ignore[override]
        """The largest k that can be drawn: the pool's seeds (k distinct per experiment)."""
        return self.pool_size

    @property
    def n(self) -> int:
        return self.pool()[0].shape[1]

    @property
    def binary(self) -> bool:  # type: ignore[override]
        base, variant = self.pool()
        return bool(np.isin(base, (0, 1)).all() and np.isin(variant, (0, 1)).all())

    def pool_deltas(self) -> np.ndarray:
        """Per-seed deltas of the whole pool (fraction)."""
        base, variant = self.pool()
        return variant.mean(axis=1) - base.mean(axis=1)

    def fixed_effect(self) -> float:
        """The true effect (fraction): 0 for null scenarios (or a CSV declared ``null=true``),
        else the pool's mean delta."""
        if self.csv is not None:
            return 0.0 if self.null else float(self.pool_deltas().mean())
        known = scenarios.SCENARIOS.get(self.scenario)
        if known is not None and known.null:
            return 0.0
        return float(self.pool_deltas().mean())

    def declared_null(self) -> bool:
        """The pool is a true null by declaration: a null scenario, or a CSV with
        ``null=true``."""
        if self.csv is not None:
            return bool(self.null)
        known = scenarios.SCENARIOS.get(self.scenario)
        return known is not None and known.null

    def describe(self) -> str:
        return encode(self.params(), sort=False, skip_none=True)

    def null_setting(self) -> str | None:
        """The null pool of the same dataset (and store), whose rates validate this one's;
        ``None`` for a user's effect pool (``csv=``, ``null=false``), which has none."""
        if self.fixed_effect() == 0.0:
            return self.describe()
        if self.csv is not None:
            return None
        null = {**self.params(), "scenario": scenarios.null_scenario_for_pools()}
        return encode(null, sort=False, skip_none=True)

    def check_effect(self, delta):
        truth = self.fixed_effect()
        if abs(delta - truth) > 1e-9:
            _, unit, factor = self.units()
            raise InvalidParameterError("The 'effect' of generator real_pool is fixed by the pool "
                                        f"({self.dataset} {self.scenario}: {factor * truth:+.4f} "
                                        f"{unit}); got {factor * delta:+.4f} {unit}. Omit "
                                        "--effects.")

    def draw_seeds(self, sims: int, k: int, delta: float, rng) -> np.ndarray:
        """The pool seeds of ``sims`` experiments, shape ``(sims, k)``, without the scores.

        :meth:`draw` returns ``base[order], variant[order]`` for exactly this ``order`` (same
        arguments, same random numbers); :func:`sim.grid.draw_cell` keeps the index sets
        and reads the pool's precomputed per-seed metrics instead of copying scores.
        """
        sims = check_int(sims, "sims", self.owner, low=1)
        k = check_int(k, "k", self.owner, low=1, high=self.max_k)
        self.check_effect(delta)
        return self._order(sims, k, np.random.default_rng(rng))

    def _order(self, sims, k, rng):
        return pool_rows(rng, sims, self.pool_size, k)

    def _draw(self, sims, k, delta, rng):
        base, variant = self.pool()
        order = self._order(sims, k, rng)
        return base[order], variant[order]
