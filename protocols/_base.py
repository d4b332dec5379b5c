"""Base class and registry of every protocol: input validation once, then one hook."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from evalcal_core.designs import KIND_WORDS
from evalcal_core.registry import Registry
from evalcal_core.validate import check_alpha

from ._batch import ScoreBatch
from ._result import ProtocolResult

PROTOCOLS = Registry("protocol", "name", "protocols.get")


@dataclass(frozen=True)
class Protocol:
    """An evaluation protocol: decides whether a variant beats a baseline.

    Subclasses set the class attributes, declare their tunable parameters as dataclass fields,
    and implement :meth:`_evaluate` on a validated :class:`~protocols._batch.ScoreBatch`.
    """

    name: ClassVar[str] = ""
    #: one-line description shown in tables
    summary: ClassVar[str] = ""
    #: fewest seeds the protocol can use
    min_k: ClassVar[int] = 1
    #: needs 0/1 per-question scores
    binary: ClassVar[bool] = False
    #: needs per-question scores (n > 1)
    needs_questions: ClassVar[bool] = False
    #: uses the pairing of seed i across arms
    paired: ClassVar[bool] = False
    #: draws random numbers (result depends on ``rng``)
    stochastic: ClassVar[bool] = False
    #: reads seed 0 only, ignoring the other k - 1 runs (results change if seed 0 moves)
    uses_first_seed_only: ClassVar[bool] = False
    #: the protocol the reports draw first and advise for per-seed metrics of paired seeds
    recommended: ClassVar[bool] = False
    #: the pitfall it illustrates; empty for an honest protocol
    pitfall: ClassVar[str] = ""
    #: old parameter names still accepted by ``protocols.get`` (old -> current)
    aliases: ClassVar[dict[str, str]] = {}
    #: the design kinds (:data:`evalcal_core.designs.KINDS`) the protocol is honest for
    valid_for: ClassVar[frozenset[str]] = frozenset({"methods_paired"})
    #: why it misleads under a design it is not valid for (kind -> reason); kinds missing
    #: here fall back to :attr:`pitfall` or a generic reason
    pitfall_for: ClassVar[dict[str, str]] = {}

    @classmethod
    def label(cls, kind: str) -> str:
        """Why the protocol is a pitfall under design ``kind``; ``""`` if it is reportable."""
        if kind in cls.valid_for:
            return ""
        return (cls.pitfall_for.get(kind) or cls.pitfall
                or f"not valid for {KIND_WORDS.get(kind, kind)}")

    def applicable(self, k: int, n: int, binary: bool) -> str | None:
        """Why the protocol cannot run on data of this kind, or ``None`` if it can."""
        if k < self.min_k:
            return f"needs k >= {self.min_k} seeds, got k = {k}"
        if self.needs_questions and n < 2:
            return f"needs per-question scores (n >= 2), got n = {n}"
        if self.binary and not binary:
            return "needs binary 0/1 per-question scores"
        return None

    def decision_note(self, batch: ScoreBatch) -> str:
        """A sentence the reader of this protocol's verdict on ``batch`` needs ("" if none)."""
        return ""

    def evaluate(self, base, variant=None, alpha: float = 0.05, *, rng=None) -> ProtocolResult:
        """Apply the protocol to a batch of experiments.

        Parameters
        ----------
        base, variant : array_like, shape (..., k, n) or (k,)
            Scores of the baseline and the variant: row ``i`` of both arms used seed ``i``;
            ``n`` questions per run (``n = 1``, or a 1-D array, for per-seed metrics).
            Accuracy is a fraction in [0, 1]. Leading axes are independent experiments.
            A :class:`~protocols._batch.ScoreBatch` may be passed as ``base`` alone (with
            ``variant=None``): it is validated already and its derived quantities are
            shared with the other protocols evaluated on it.
        alpha : float, default 0.05
            Two-sided significance level, in (0, 1).
        rng : numpy.random.Generator, int or None
            Source of randomness for resampling protocols.

        Returns
        -------
        ProtocolResult
            Arrays over the leading axes; estimates and CIs are fractions.
        """
        alpha = check_alpha(alpha)
        batch = ScoreBatch.from_arrays(base, variant)
        why = self.applicable(batch.k, batch.n, batch.binary)
        if why is not None:
            raise ValueError(f"protocol {self.name!r} cannot evaluate scores of shape "
                             f"{batch.base.shape}: it {why}")
        return self._evaluate(batch, alpha, np.random.default_rng(rng))

    def _evaluate(self, batch: ScoreBatch, alpha: float, rng) -> ProtocolResult:
        raise NotImplementedError
register = PROTOCOLS.register
