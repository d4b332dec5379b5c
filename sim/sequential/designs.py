"""Stopping designs, one class each, found through a registry.

A design says at which of the looks it may stop (:meth:`Design.looks`) and, from the
statistics of one batch of experiments after each look (:class:`Draws`), whether it rejects
at each of them (:meth:`Design.decisions`). A new design is one class with ``@register``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from evalcal_core.validate import InvalidParameterError, fail

from .boundaries import e_tmix, t_boundaries


@dataclass(frozen=True)
class Draws:
    """What every design needs from one batch of experiments, for looks at 1..K seeds."""

    #: protocol decision and estimate after j seeds, for j = first..K (columns)
    significant: np.ndarray
    estimate: np.ndarray
    first: int
    #: paired t statistic and its df + 1 after j seeds, j = 1..K (column 0: NaN)
    t: np.ndarray
    mean: np.ndarray


class Design:
    """A stopping rule: subclasses set ``name`` and override :meth:`decisions`."""

    name: ClassVar[str] = ""

    def looks(self, looks):
        """The looks at which this design may stop (all of them by default)."""
        return looks

    def decisions(self, draws: Draws, looks: np.ndarray, alpha: float):
        """Reject flags and estimate signs, each of shape ``(sims, len(looks))``."""
        raise NotImplementedError


#: name -> design class, in registration (display) order
DESIGN_CLASSES: dict[str, type[Design]] = {}


def register(cls: type[Design]) -> type[Design]:
    """Class decorator: add a design to the registry under ``cls.name``."""
    if not cls.name or cls.name in DESIGN_CLASSES:
        raise InvalidParameterError(f"design name {cls.name!r} is empty or registered twice")
    DESIGN_CLASSES[cls.name] = cls
    return cls


def get_design(name: str) -> Design:
    """The design registered as ``name``."""
    if name not in DESIGN_CLASSES:
        raise fail("design", f"one of {tuple(DESIGN_CLASSES)}", name)
    return DESIGN_CLASSES[name]()


@register
class Peek(Design):
    """The protocol after every seed; stop at the first rejection (not valid)."""

    name = "peek"

    def decisions(self, draws, looks, alpha):
        cols = looks - draws.first
        return draws.significant[:, cols], np.sign(draws.estimate[:, cols])


@register
class Fixed(Design):
    """The protocol once, at ``k_max`` seeds."""

    name = "fixed"

    def looks(self, looks):
        return looks[-1:]

    def decisions(self, draws, looks, alpha):
        cols = (looks - draws.first)[-1:]
        return draws.significant[:, cols], np.sign(draws.estimate[:, cols])


class _GroupSequential(Design):
    """Group-sequential paired t-tests with Lan--DeMets spending of ``kind``."""

    kind: ClassVar[str] = ""

    def decisions(self, draws, looks, alpha):
        t = draws.t[:, looks - 1]
        sign = np.sign(draws.mean[:, looks - 1])
        return np.abs(t) >= t_boundaries(looks, alpha, self.kind)[None, :], sign


@register
class GsPocock(_GroupSequential):
    name = "gs_pocock"
    kind = "pocock"


@register
class GsObf(_GroupSequential):
    name = "gs_obf"
    kind = "obrien_fleming"


@register
class ETmix(Design):
    """Anytime-valid: reject when the t-mixture e-value reaches ``1 / alpha``."""

    name = "e_tmix"

    def decisions(self, draws, looks, alpha):
        t = draws.t[:, looks - 1]
        sign = np.sign(draws.mean[:, looks - 1])
        return e_tmix(t, looks[None, :]) >= 1.0 / alpha, sign


#: designs simulated by default, in display order
DESIGNS = tuple(DESIGN_CLASSES)
