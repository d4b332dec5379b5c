"""Base class and registry of the synthetic experiment generators."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from protocols._registry import Registry

GENERATORS = Registry("generator", "generator", "sim.generators.get")
register = GENERATORS.register
names = GENERATORS.names
generator_class = GENERATORS.cls
parameters = GENERATORS.parameters
get = GENERATORS.get


def check_number(owner: str, field: str, value, *, low=None, high=None,
                 low_open=False, high_open=False, integer=False) -> None:
    """``ValueError`` naming ``field`` unless ``value`` is a number in the given range."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    ok = ok and np.isfinite(value) and (not integer or float(value).is_integer())
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        lo = "" if low is None else f"{'>' if low_open else '>='} {low}"
        hi = "" if high is None else f"{'<' if high_open else '<='} {high}"
        rule = " and ".join(r for r in (lo, hi) if r) or "finite"
        kind = "an integer" if integer else "a number"
        raise ValueError(f"The {field!r} parameter of generator {owner} must be {kind} "
                         f"{rule}. Got {value!r} instead.")


@dataclass(frozen=True)
class Generator:
    """Draws batches of simulated experiments ``(base, variant)`` of shape ``(sims, k, n)``.

    Subclasses declare parameters as dataclass fields with defaults and implement
    :meth:`_draw`. ``delta`` is the true effect as a fraction (0.01 = +1 pp; 0 = the null).
    """

    name: ClassVar[str] = ""
    #: scores are 0/1 per question
    binary: ClassVar[bool] = False

    @property
    def n(self) -> int:
        """Questions per run (1 for per-seed generators)."""
        return 1

    def params(self) -> dict[str, object]:
        """Parameter values, in declaration order."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def describe(self) -> str:
        """Parameters as ``key=value`` pairs joined by ``;`` (a stable, readable key).

        A whole number given for a float parameter is written as a float, so ``rho=0`` and
        ``rho=0.0`` name the same cell (and so draw the same random stream).
        """
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        parts = []
        for key, value in self.params().items():
            if (isinstance(defaults[key], float) and isinstance(value, (int, np.integer))
                    and not isinstance(value, bool)):
                value = float(value)
            parts.append(f"{key}={value}")
        return ";".join(parts)

    def check_effect(self, delta: float) -> None:
        """``ValueError`` if this generator cannot simulate a true effect ``delta``."""
        check_number(self.name, "effect", delta, low=-1, high=1)

    def draw(self, sims: int, k: int, delta: float, rng) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``sims`` independent experiments with ``k`` paired seeds each.

        Parameters
        ----------
        sims : int
            Number of experiments (>= 1).
        k : int
            Seeds per arm (>= 1).
        delta : float
            True effect, variant minus baseline, as a fraction.
        rng : numpy.random.Generator or int

        Returns
        -------
        base, variant : ndarray, shape (sims, k, n)
        """
        check_number(self.name, "sims", sims, low=1, integer=True)
        check_number(self.name, "k", k, low=1, integer=True)
        self.check_effect(delta)
        return self._draw(int(sims), int(k), float(delta), np.random.default_rng(rng))

    def _draw(self, sims, k, delta, rng):
        raise NotImplementedError
