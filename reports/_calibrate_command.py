"""A ``python -m sim.calibrate`` command that the report also runs in-process.

The report builds the command's :class:`sim.calibration.CalibrationConfig` (the object the
command line builds from its arguments), prints :meth:`~CalibrationConfig.to_argv` and
computes the requested grid with :func:`sim.calibration.calibrate_grid`. The generator
parameters stay the strings typed: a cell's random stream is derived from the generator's
``describe()`` string, so ``rho=0`` (an int, as the command line reads it) and ``rho=0.0``
would give different numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from sim import generators
from sim.calibration import CalibrationConfig, calibrate_grid, plan_calibration

#: ``python -m sim.calibrate``'s default ``--alpha``
DEFAULT_ALPHA = CalibrationConfig.__dataclass_fields__["alpha"].default


@dataclass(frozen=True)
class CalibrateCommand:
    """One ``python -m sim.calibrate`` invocation.

    Parameters
    ----------
    generator : str
        Generator name (``--generator``).
    params : tuple of str
        ``KEY=VALUE`` generator parameters exactly as typed (``--param``).
    k : tuple of int
        ``(k,)`` or ``(k_min, k_max)`` (``--k``; seeds per arm).
    effects : tuple of float or None
        True effects in percentage points (``--effects``); ``None`` for a real pool, whose
        effect is fixed.
    protocols : tuple of str
        ``--protocols``.
    sims : int
        Experiments per cell (``--sims``).
    seed : int
        Root seed (``--seed``).
    alpha : float
        Nominal two-sided level (``--alpha``; left out of the command line at its default).
    pool : str or None
        Run store of a real pool (``--pool ROOT``); ``None`` is the committed pool.
    """

    generator: str
    params: tuple[str, ...]
    k: tuple[int, ...]
    effects: tuple[float, ...] | None
    protocols: tuple[str, ...]
    sims: int
    seed: int
    alpha: float = DEFAULT_ALPHA
    pool: str | None = None

    def config(self, *, jobs: int = 1, cache=None) -> CalibrationConfig:
        """The command's config; ``jobs`` and ``cache`` (``--out``) change no number."""
        return CalibrationConfig(
            k=tuple(self.k), generator=self.generator, params=tuple(self.params),
            effects=self.effects, protocols=tuple(self.protocols), sims=self.sims,
            seed=self.seed, alpha=self.alpha, pool=self.pool, jobs=jobs, out=cache,
            plot=False, quiet=True)

    @property
    def ks(self) -> list[int]:
        """Every k of the grid (``--k MIN MAX`` is the range MIN..MAX)."""
        return self.config().ks

    def build_generator(self):
        """The generator, built from the parameter strings as the command line builds it."""
        return generators.get(self.generator, **self.config().generator_params)

    def argv(self) -> list[str]:
        """Arguments for ``sim.calibrate.main`` (without ``--out``, ``--jobs``)."""
        return self.config().to_argv()

    def shell(self) -> str:
        """The command as one shell line."""
        return self.config().shell()

    def run(self, *, jobs: int = 1, cache=None) -> pd.DataFrame:
        """The command's requested grid (its ``calibration.csv`` rows of the requested
        effects), computed in-process.

        Parameters
        ----------
        jobs : int
            Parallel workers (the result does not depend on it).
        cache : path or None
            Cell cache folder shared by the report's commands (equal cells are reused).
        """
        plan = plan_calibration(self.config(jobs=jobs, cache=cache))
        (generator,) = plan.generators
        frame = calibrate_grid(plan, generator)
        if self.effects is not None:
            frame = frame[frame["effect_pp"].isin([float(e) for e in self.effects])]
        return frame.reset_index(drop=True)
