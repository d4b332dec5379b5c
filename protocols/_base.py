"""Base class and registry of every protocol: input validation once, then one hook."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from evalcal_core.designs import KIND_WORDS, METHODS_PAIRED, designs
from evalcal_core.registry import Registry
from evalcal_core.validate import InvalidParameterError, check_alpha, check_int, fail

from ._batch import ScoreBatch
from ._result import ProtocolResult

PROTOCOLS = Registry("protocol", "name", "protocols.get")


class _PrimaryFor:
    """``Protocol.recommended_for``: the design kinds whose primary protocol this one is,
    read from the design registry (:attr:`evalcal_core.designs.StudyDesign.primary`), so the
    choice is written once, in the design's module."""

    def __get__(self, obj, owner) -> frozenset[str]:
        return frozenset(d.name for d in designs() if d.primary == owner.name)

# Reasons shared by several protocols' ``pitfall_for`` (one line each, shown in tables).
#: a per-seed test applied where the seeds are not paired
UNPAIRED_SEEDS = "pairs seeds that share nothing: the verdict depends on an arbitrary matching"
#: a per-seed (per-run) test applied to repeats of fixed models
REPEATS_NOT_SEEDS = ("tests the repeats of fixed models on these questions only: the "
                     "sampling of the questions is ignored")
#: a question-level test applied across training seeds
SEEDS_IGNORED = "questions as the only noise, seeds ignored"
#: a test that treats clustered questions as independent
CLUSTERS_IGNORED = "treats clustered questions as independent: its SE is too small"
#: a cluster-level test where no clusters are declared
NEEDS_CLUSTERS = "for clustered questions; with independent questions use paired_t_questions"

#: most resamples or permutations a protocol draws per experiment: beyond it the draws of
#: even one experiment (8 bytes each, times k or n) no longer fit in memory or in an hour
MAX_DRAWS = 10_000_000


def check_draws(value, name: str, owner: str, low: int = 1) -> int:
    """A number of resamples or permutations: an integer in ``[low, MAX_DRAWS]``.

    Refused before anything is allocated; the message names the parameter.
    """
    number = check_int(value, name, owner, low=low)
    if number > MAX_DRAWS:
        raise fail(name, f"an integer <= {MAX_DRAWS:,} (a bound on memory and time)", value,
                   owner)
    return number


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
    #: fewest questions a protocol that needs them can use
    min_n: ClassVar[int] = 2
    #: uses the pairing of seed i across arms
    paired: ClassVar[bool] = False
    #: draws random numbers (result depends on ``rng``)
    stochastic: ClassVar[bool] = False
    #: reads seed 0 only, ignoring the other k - 1 runs (results change if seed 0 moves)
    uses_first_seed_only: ClassVar[bool] = False
    #: the design kinds it is the primary protocol of (reported per comparison, drawn first,
    #: advised in words), read from :attr:`evalcal_core.designs.StudyDesign.primary`
    recommended_for: ClassVar[frozenset[str]] = _PrimaryFor()
    #: the pitfall it illustrates; empty for an honest protocol
    pitfall: ClassVar[str] = ""
    #: old parameter names still accepted by ``protocols.get`` (old -> current)
    aliases: ClassVar[dict[str, str]] = {}
    #: the design kinds (:data:`evalcal_core.designs.KINDS`) the protocol is honest for
    valid_for: ClassVar[frozenset[str]] = frozenset({METHODS_PAIRED})
    #: why it misleads under a design it is not valid for (kind -> reason); kinds missing
    #: here fall back to :attr:`pitfall` or a generic reason
    pitfall_for: ClassVar[dict[str, str]] = {}
    #: reads the runs' scores or per-seed metrics; ``False``: on 0/1 scores it reads only
    #: each question's correct runs and what derives from them (a batch of counts,
    #: ``ScoreBatch.from_counts``, serves it)
    reads_runs: ClassVar[bool] = True
    #: needs the cluster of each question (``evaluate(..., clusters=codes)``)
    needs_clusters: ClassVar[bool] = False
    #: the evaluation harness and function whose printed output the protocol reproduces
    #: (e.g. "lm-eval acc_stderr, interval overlap"); empty for evalcal's own protocols.
    #: Harness protocols are left out of the default protocol lists (calibration,
    #: ``sim.design_check``, ``evaluate``) and run only when named.
    harness: ClassVar[str] = ""

    @classmethod
    def label(cls, kind: str) -> str:
        """Why the protocol is a pitfall under design ``kind``; ``""`` if it is reportable."""
        if kind in cls.valid_for:
            return ""
        return (cls.pitfall_for.get(kind) or cls.pitfall
                or f"not valid for {KIND_WORDS.get(kind, kind)}")

    def applicable(self, k: int, n: int, binary: bool, clusters=None) -> str | None:
        """Why the protocol cannot run on data of this kind, or ``None`` if it can.

        ``clusters`` is the cluster code of each question (shape ``(n,)``) or ``None``; only
        protocols with :attr:`needs_clusters` read it.
        """
        if k < self.min_k:
            return f"needs k >= {self.min_k} seeds, got k = {k}"
        if self.needs_questions and n < self.min_n:
            return f"needs per-question scores (n >= {self.min_n}), got n = {n}"
        if self.binary and not binary:
            return "needs binary 0/1 per-question scores"
        if self.needs_clusters:
            if clusters is None:
                return ("needs the cluster of each question (evaluate(..., clusters=codes), "
                        "codes of shape (n,))")
            if len(np.unique(clusters)) < 2:
                return "needs at least 2 clusters of questions, got 1"
        return None

    def decision_note(self, batch: ScoreBatch) -> str:
        """A sentence the reader of this protocol's verdict on ``batch`` needs ("" if none)."""
        return ""

    def evaluate(self, base, variant=None, alpha: float = 0.05, *, rng=None,
                 clusters=None) -> ProtocolResult:
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
        clusters : array_like of int, shape (n,), optional
            Cluster code of each question (questions with the same code are correlated: a
            task, a category, a passage). Carried in the batch; read only by protocols with
            :attr:`needs_clusters`, which cannot run without it.

        Returns
        -------
        ProtocolResult
            Arrays over the leading axes; estimates and CIs are fractions.
        """
        alpha = check_alpha(alpha)
        batch = ScoreBatch.from_arrays(base, variant, clusters=clusters)
        why = self.applicable(batch.k, batch.n, batch.binary, batch.clusters)
        if why is not None:
            raise InvalidParameterError(f"protocol {self.name!r} cannot evaluate scores of shape "
                                        f"{batch.shape}: it {why}")
        return self._evaluate(batch, alpha, np.random.default_rng(rng))

    def _evaluate(self, batch: ScoreBatch, alpha: float, rng) -> ProtocolResult:
        raise NotImplementedError


register = PROTOCOLS.register
