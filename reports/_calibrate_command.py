"""A ``python -m sim.calibrate`` command that the report also runs in-process.

The report prints the command and computes its numbers with :func:`sim.grid.calibrate`
from the *same* argument strings, parsed the way the command line parses them. That matters:
a cell's random stream is derived from the generator's ``describe()`` string, so ``rho=0``
(an int, as the command line reads it) and ``rho=0.0`` would give different numbers.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import pandas as pd

from evalcal_core.params import parse_key_values
from sim import generators
from sim.grid import calibrate

#: ``python -m sim.calibrate``'s default ``--alpha``
DEFAULT_ALPHA = 0.05


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
    """

    generator: str
    params: tuple[str, ...]
    k: tuple[int, ...]
    effects: tuple[float, ...] | None
    protocols: tuple[str, ...]
    sims: int
    seed: int
    alpha: float = DEFAULT_ALPHA

    @property
    def ks(self) -> list[int]:
        """Every k of the grid (``--k MIN MAX`` is the range MIN..MAX)."""
        return list(range(self.k[0], self.k[-1] + 1))

    def build_generator(self):
        """The generator, built from the parameter strings as the command line builds it."""
        return generators.get(self.generator, **parse_key_values(self.params, "--param"))

    def argv(self) -> list[str]:
        """Arguments for ``sim.calibrate.main`` (without ``--out``, ``--jobs``)."""
        args = ["--k", *map(str, self.k), "--generator", self.generator]
        if self.params:
            args += ["--param", *self.params]
        if self.effects is not None:
            args += ["--effects", *(f"{e:g}" for e in self.effects)]
        args += ["--protocols", *self.protocols, "--sims", str(self.sims),
                 "--seed", str(self.seed)]
        if self.alpha != DEFAULT_ALPHA:
            args += ["--alpha", f"{self.alpha:g}"]
        return args

    def shell(self) -> str:
        """The command as one shell line."""
        return "python -m sim.calibrate " + " ".join(shlex.quote(a) for a in self.argv())

    def run(self, *, jobs: int = 1, cache=None) -> pd.DataFrame:
        """The command's ``calibration.csv`` rows, computed in-process.

        Parameters
        ----------
        jobs : int
            Parallel workers (the result does not depend on it).
        cache : path or None
            Cell cache folder shared by the report's commands (equal cells are reused).
        """
        generator = self.build_generator()
        effects = self.effects
        if effects is None:
            effects = (100 * generator.fixed_effect(),)
        return calibrate(generator, self.ks, [float(e) for e in effects],
                         protocol_names=list(self.protocols), sims=self.sims, seed=self.seed,
                         alpha=self.alpha,
                         jobs=jobs, out=cache, progress=False)
