"""Base class and registry of the synthetic experiment generators."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from evalcal_core.designs import METHODS_PAIRED
from evalcal_core.params import encode
from evalcal_core.registry import Registry
from evalcal_core.validate import check_int, check_number

GENERATORS = Registry("generator", "generator", "sim.generators.get")
register = GENERATORS.register
names = GENERATORS.names
generator_class = GENERATORS.cls
parameters = GENERATORS.parameters
get = GENERATORS.get


@dataclass(frozen=True)
class Generator:
    """Draws batches of simulated experiments ``(base, variant)`` of shape ``(sims, k, n)``.

    Subclasses declare parameters as dataclass fields with defaults and implement
    :meth:`_draw`. ``delta`` is the true effect as a fraction (0.01 = +1 pp; 0 = the null).
    """

    name: ClassVar[str] = ""
    #: scores are 0/1 per question
    binary: ClassVar[bool] = False
    #: :meth:`draw_counts` gives the per-question correct-run counts of :meth:`draw`'s
    #: experiments without drawing the runs (binary generators)
    draws_counts: ClassVar[bool] = False
    #: the largest k it can draw (None: any)
    max_k: ClassVar[int | None] = None
    #: draws from a finite pool of recorded runs (it has ``pool()`` and a fixed effect)
    from_pool: ClassVar[bool] = False
    #: the study design it simulates (:data:`evalcal_core.designs.KINDS`): which protocols
    #: are reportable on its cells and which are pitfalls
    design: ClassVar[str] = METHODS_PAIRED

    @property
    def owner(self) -> str:
        """How messages name this generator."""
        return f"generator {self.name}"

    @property
    def n(self) -> int:
        """Questions per run (1 for per-seed generators)."""
        return 1

    def params(self) -> dict[str, object]:
        """Parameter values, in declaration order."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def describe(self) -> str:
        """Parameters as ``key=value`` pairs joined by ``;`` (a stable, readable key).

        Declaration order; a whole number given for a float parameter is written as a
        float, so ``rho=0`` and ``rho=0.0`` name the same cell (and draw the same stream).
        """
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        return encode(self.params(), defaults, sort=False)

    def clusters(self) -> np.ndarray | None:
        """Cluster code of each question, int shape ``(n,)``, or ``None`` (independent
        questions). Passed to the protocols with each drawn batch."""
        return None

    def why_not(self, protocol, k: int) -> str | None:
        """Why ``protocol`` (a :class:`protocols.Protocol`) cannot run on this generator's
        experiments with ``k`` runs per arm, or ``None`` if it can (scores, question count,
        0/1 scores and question clusters as drawn)."""
        return protocol.applicable(k, self.n, self.binary, self.clusters())

    def data_digest(self) -> str:
        """Fingerprint of the data drawn from (:func:`evalcal_core.params.content_digest`); '' for a
        synthetic generator, whose parameters say everything. Part of a cell's cache key."""
        return ""

    def fixed_effect(self) -> float | None:
        """The true effect (fraction) when the generator fixes it, else ``None`` (any effect
        given to :meth:`draw` is simulated)."""
        return None

    def null_setting(self) -> str | None:
        """``describe()`` of the setting whose effect-0 cells validate this one's protocols.

        The same setting for generators that simulate any effect; a real pool's is the null
        pool of its dataset; ``None`` where there is none (validity then stays unknown, and
        nothing is recommended).
        """
        return self.describe()

    def check_effect(self, delta: float) -> None:
        """``ValueError`` if this generator cannot simulate a true effect ``delta``."""
        check_number(delta, "effect", self.owner, low=-1, high=1)

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
        sims = check_int(sims, "sims", self.owner, low=1)
        k = check_int(k, "k", self.owner, low=1, high=self.max_k)
        self.check_effect(delta)
        return self._draw(sims, k, float(delta), np.random.default_rng(rng))

    def draw_counts(self, sims: int, k: int, delta: float, rng) -> tuple[np.ndarray,
                                                                         np.ndarray]:
        """Each question's correct runs (of k) in the experiments :meth:`draw` would draw
        from the same ``rng``, without the runs (only where :attr:`draws_counts`).

        Parameters are :meth:`draw`'s.

        Returns
        -------
        base, variant : ndarray of int64, shape (sims, n)
            ``draw(...)[arm].sum(axis=1)`` of the same stream, value for value.
        """
        if not self.draws_counts:
            raise NotImplementedError(f"{self.owner} draws no per-question counts")
        sims = check_int(sims, "sims", self.owner, low=1)
        k = check_int(k, "k", self.owner, low=1, high=self.max_k)
        self.check_effect(delta)
        return self._draw_counts(sims, k, float(delta), np.random.default_rng(rng))

    def _draw(self, sims, k, delta, rng):
        raise NotImplementedError

    def _draw_counts(self, sims, k, delta, rng):
        raise NotImplementedError


def pool_rows(rng, sims: int, pool_size: int, k: int) -> np.ndarray:
    """k distinct rows of a pool of ``pool_size`` seeds per experiment, shape ``(sims, k)``:
    the first k of a random permutation (one stream use: ``sims x pool_size`` uniforms)."""
    return np.argsort(rng.random((sims, pool_size)), axis=1)[:, :k]


@dataclass(frozen=True)
class PoolView(Generator):
    """Experiments drawn from a pool that ``parent`` defines (part of a real pool, or a pool
    the parent simulates): the questions and the score type are the parent's.

    Parameters
    ----------
    parent : Generator
    """

    parent: Generator = None

    @property
    def n(self) -> int:
        return self.parent.n

    @property
    def binary(self) -> bool:  # type: ignore[override]
        return self.parent.binary
