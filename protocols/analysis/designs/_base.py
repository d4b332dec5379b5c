"""The base of every study design's analysis behaviour, and the registry that finds it.

:class:`DesignAnalysis` holds what the analysis of arms does differently by design; each
hook's default is the behaviour of fixed models on independent questions (the per-question
deltas are the paired units), and each design's module overrides what differs for it.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from evalcal_core.designs import KINDS, Design
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError, fail
from protocols import effect_sizes as es
from protocols import joint_null as jn

#: flips drawn for the max-T null
N_FLIPS = 10_000
#: protocols that take each seed's metric (the mean over its questions), whatever the design
PER_SEED_PROTOCOLS = ("paired_t", "welch_t")

_REGISTRY: dict[str, DesignAnalysis] = {}


class DesignAnalysis:
    """What the analysis of arms does under one study design (its units, nulls and tests).

    A subclass sets :attr:`kind` and overrides the hooks whose behaviour differs; one
    instance is registered per kind (:func:`register`) and found with :func:`of`.

    Attributes
    ----------
    kind : str
        The study design's name (one of :data:`evalcal_core.designs.KINDS`).
    d_kind : str
        The standardized effect size: ``"d_z"`` (paired units) or ``"d"`` (Cohen's d of two
        independent samples).
    equal_variances_ok : bool
        Whether the arms' variances may be declared equal (``--equal-variances``), which
        makes ``maxt`` Dunnett's or Tukey's pooled-variance test.
    sign_flip_intervals : bool
        Whether ``maxt``'s simultaneous intervals come from its joint null (else they are
        the primary protocol's at ``alpha / C``, Bonferroni).
    """

    kind: ClassVar[str] = ""
    d_kind: ClassVar[str] = "d_z"
    equal_variances_ok: ClassVar[bool] = False
    sign_flip_intervals: ClassVar[bool] = True

    # -- the paired units ----------------------------------------------------------------

    def unit_deltas(self, base: np.ndarray, variant: np.ndarray) -> np.ndarray:
        """The paired units' deltas ``variant - base`` (for d_z) of two arms' ``(runs, n)``
        scores: per question (each question's mean over the runs)."""
        return variant.mean(axis=0) - base.mean(axis=0)

    def unit_count(self, design: Design, scores: ArmScores, k: int) -> int:
        """The number of independent units the comparisons rest on (``k``: seeds per arm,
        the smallest arm's when ragged): the questions."""
        return scores.n

    def effect_count(self, scores: ArmScores, k: int) -> int:
        """The number of units the standardized effect size is computed over: the
        questions."""
        return scores.n

    def board_units(self, scores: ArmScores, codes) -> tuple[np.ndarray, str]:
        """``(x, unit)``: each system's score per paired unit ``(systems, units)`` for the
        leaderboard, and the units' name: each question's mean over the repeats."""
        return scores.scores.mean(axis=1), "questions"

    def stream_units(self, scores: ArmScores):
        """The paired units of two arms for ``--stream``, in the order stored.

        Returns
        -------
        deltas : ndarray, shape (units,)
            ``variant - base`` per unit (fractions).
        times : ndarray, shape (units,)
            Each unit's arrival time (positions when the input states none).
        ids : sequence of str
            The units' ids, to name two that tie.
        what : str
            The units' name.
        labels : ndarray or None
            Each unit's cluster (the clusters are then the streamed units), or ``None``.
        """
        base, variant = scores.arm(scores.arms[0]), scores.arm(scores.arms[1])
        arrival = scores.arrival
        times = np.arange(scores.n) if arrival is None else arrival.questions
        return (variant.mean(axis=0) - base.mean(axis=0), times, scores.question_ids,
                "questions", None)

    # -- the primary protocol ------------------------------------------------------------

    def run_inputs(self, name: str, base: np.ndarray, variant: np.ndarray):
        """The arrays protocol ``name`` is called on: the ``(..., runs, n)`` scores, or each
        run's metric ``(..., runs, 1)`` for the protocols that take per-seed metrics."""
        if name in PER_SEED_PROTOCOLS:
            return base.mean(axis=-1, keepdims=True), variant.mean(axis=-1, keepdims=True)
        return base, variant

    def maxt_is_holm(self, correction: str, equal_variances: bool) -> bool:
        """Whether ``correction`` ``maxt`` is Holm's adjustment of the primary p (no joint
        max-T law holds its level for the design): never, where a joint null exists."""
        return False

    # -- max-T -----------------------------------------------------------------------------

    def joint_null(self, x: np.ndarray, comps, codes, rng,
                   n_draws: int = N_FLIPS) -> jn.JointNull:
        """The joint null of all comparisons for max-T (:mod:`protocols.multiplicity`) of the
        arms' scores ``x`` ``(..., m, runs, n)`` (leading axes: experiments, as the decision
        grid draws them; ``evaluate`` passes one): the joint normal law of the
        per-question z statistics, ``n_draws`` draws."""
        return jn.gaussian_null(x.mean(axis=-2), comps, n_draws, rng=rng)

    def flip_units(self, x: np.ndarray, comps, codes):
        """``(deltas, weights)``: per-unit deltas ``(..., C, units)`` of the scores ``x``
        ``(..., m, runs, n)`` that max-T flips jointly and how each unit's expectation
        scales with the effect; ``(None, None)`` where the null is not a sign flip (as here:
        questions' z statistics are drawn jointly normal)."""
        return None, None

    def exact_maxt(self, scores: ArmScores, comps, reference, alpha, claim_alpha, seed):
        """``(p_adj, bounds, claim_bounds, note)`` of an exact single-step max-T test, or
        ``None`` where max-T resamples :meth:`joint_null` (as here)."""
        return None

    def maxt_p(self, p_adj: np.ndarray, p: np.ndarray, primary: str) -> np.ndarray:
        """The max-T adjusted p of the comparisons, given the primary protocol's own ``p``:
        the step-down p itself."""
        return p_adj

    # -- effect sizes and claims -----------------------------------------------------------

    def effect_sizes(self, scores: ArmScores, pairs, raw, alpha: float):
        """``(estimate, ci_low, ci_high)`` arrays of the standardized effect of each pair
        ``(base, variant)``: d_z of the paired units' deltas (``raw``: the primary
        protocol's ``(estimate, ci_low, ci_high, p, degenerate)`` per pair)."""
        return self.standardized(self._pair_unit_deltas(scores, pairs), alpha)

    def standardized(self, deltas: np.ndarray, alpha: float):
        """``(estimate, ci_low, ci_high)`` of d_z on paired units' deltas ``(..., units)``
        (:func:`protocols.effect_sizes.cohens_dz`, its noncentral t interval); leading axes
        are comparisons or experiments (the decision grid scores batches of them)."""
        dz = es.cohens_dz(deltas, alpha)
        return dz.estimate, dz.ci_low, dz.ci_high

    def _pair_unit_deltas(self, scores: ArmScores, pairs) -> np.ndarray:
        # one batched interval inversion for every comparison (not one root-finding each)
        return np.stack([self.unit_deltas(scores.arm(b), scores.arm(v)) for b, v in pairs])

    def relative_error_reduction(self, base, variant, estimate, sim_low, sim_high, err,
                                 alpha):
        """``(rer, low, high, note)``: the relative error reduction of ``variant`` over
        ``base`` (scores ``(runs, n)``) at the simultaneous level ``alpha``: the delta-method
        CI on the paired units (:func:`protocols.effect_sizes.relative_error_reduction`)."""
        r = es.relative_error_reduction(base.mean(axis=0), variant.mean(axis=0), alpha)
        return float(r.estimate), float(r.ci_low), float(r.ci_high), r.note

    def scores_claim_at_margin(self, fraction: bool, claim, margin) -> bool:
        """Whether the claim is decided by a score test at the margin (:meth:`margin_claim`)
        instead of read off the primary protocol's interval: no."""
        return False

    def margin_claim(self, base, variant, claim: str, margin, alpha: float, binary: bool,
                     design: Design):
        """The claim's score test at the margin (:meth:`scores_claim_at_margin`)."""
        raise NotImplementedError(f"design {self.kind!r} reads claims off an interval")

    # -- the two-arm table -----------------------------------------------------------------

    def table_notes(self, base, variant, alpha: float, factor: float, unit: str) -> list[str]:
        """The notes of the two-arm protocol table that depend on the design: none."""
        return []


def register(analysis: DesignAnalysis) -> DesignAnalysis:
    """Add ``analysis`` under its :attr:`~DesignAnalysis.kind`; returns it."""
    if analysis.kind not in KINDS:
        raise InvalidParameterError(f"a design's analysis names a registered study design "
                                    f"({', '.join(KINDS)}); got {analysis.kind!r}")
    if analysis.kind in _REGISTRY and _REGISTRY[analysis.kind] is not analysis:
        raise InvalidParameterError(f"the analysis of design {analysis.kind!r} is already "
                                    "registered")
    _REGISTRY[analysis.kind] = analysis
    return analysis


def get(kind: str) -> DesignAnalysis:
    """The analysis registered for the design ``kind``."""
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise fail("kind", f"one of {', '.join(sorted(_REGISTRY))}", kind,
                   "protocols.analysis.designs.get") from None


def of(design: Design) -> DesignAnalysis:
    """The analysis of ``design``'s kind."""
    return get(design.kind)


def kinds() -> list[str]:
    """The kinds with a registered analysis, sorted."""
    return sorted(_REGISTRY)
