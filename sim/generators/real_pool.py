"""``real_pool``: experiments drawn from recorded real training runs."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalcal_core import scenarios
from evalcal_core.params import content_digest, encode
from evalcal_core.validate import check_int

from ._base import Generator, pool_rows, register


def _default_pool() -> str:
    from real_runs.store import DEFAULT_POOL

    return str(DEFAULT_POOL)


@functools.lru_cache(maxsize=16)
def _load(root: str, dataset: str, scenario: str, profile: str | None, csv: str | None):
    if csv is not None:
        from evalcal_core.results_io import read_any

        res = read_any(csv)
        base, variant = res.base, res.variant
    else:
        from real_runs.store import load_pairs

        if not Path(root).is_dir():
            raise ValueError(f"real_pool: pool folder {root!r} does not exist; build it with "
                             f"'python -m real_runs.build_pool' or pass root=PATH")
        base, variant = load_pairs(root, dataset, scenario, profile)
        if base.shape[0] == 0:
            raise ValueError(f"real_pool: no paired runs for dataset {dataset!r}, scenario "
                             f"{scenario!r} under {root}")
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
    raise ValueError(f"The 'null' parameter of generator real_pool must be true or false when "
                     f"csv is given (true: the pool is an A/A null, its rates are "
                     f"false-positive rates; false: its truth is its mean delta). "
                     f"Got {value!r} instead.")


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
        A results CSV to use as the pool instead of the store (``dataset`` and ``scenario``
        are then labels only).
    null : bool or None
        Required with ``csv`` (and only then): ``True`` declares the pool a true null (its
        rates are false-positive rates, whatever its own mean delta), ``False`` makes its
        truth the pool's mean delta (its rates are power). There is no default: a pool
        with +0.7 pp silently scored as a null would pass for a false-positive rate.
    """

    dataset: str = "cifar10"
    scenario: str = "S0p"
    root: str | None = None
    profile: str | None = None
    csv: str | None = None
    null: bool | None = None

    name = "real_pool"
    from_pool = True

    def __post_init__(self):
        for field in ("dataset", "scenario"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field):
                raise ValueError(f"The {field!r} parameter of generator real_pool must be a "
                                 f"non-empty string. Got {getattr(self, field)!r} instead.")
        if self.csv is not None:
            object.__setattr__(self, "null", _null_flag(self.null))
        elif self.null is not None:
            raise ValueError(f"The 'null' parameter of generator real_pool goes with csv=PATH "
                             f"only (a store pool's scenario says whether it is a null). "
                             f"Got {self.null!r} instead.")
        if self.csv is None:
            root = Path(self.root if self.root is not None else _default_pool())
            known = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
            if known and self.dataset not in known:
                raise ValueError(f"The 'dataset' parameter of generator real_pool must be one "
                                 f"of {', '.join(known)} (the datasets in {root}). Got "
                                 f"{self.dataset!r} instead.")
        self.pool()  # fail at construction, not in a worker

    def pool(self) -> tuple[np.ndarray, np.ndarray]:
        """The pool's ``(base, variant)`` scores, shape ``(k_pool, n)`` (read-only)."""
        root = str(self.root) if self.root is not None else _default_pool()
        return _load(root, self.dataset, self.scenario, self.profile,
                     None if self.csv is None else str(self.csv))

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
            raise ValueError(f"The 'effect' of generator real_pool is fixed by the pool "
                             f"({self.dataset} {self.scenario}: {100 * truth:+.4f} pp); "
                             f"got {100 * delta:+.4f} pp. Omit --effects.")

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
