"""The comparisons of many arms, on one experiment or a batch: the p-values, adjusted p,
simultaneous intervals and claims that ``evaluate`` prints for every correction.

:func:`compare_batch` is the one computation behind the comparisons of
:func:`protocols.analysis.compare.compare_arms` (one experiment, a fresh stream per draw of
its ``seed``) and behind the decision grid's many-arm families (:mod:`sim.decisions.maxt`,
:mod:`sim.decisions.models_arms`: thousands of experiments on leading axes, one shared
stream). It runs, in this order:

1. under ``maxt`` where the design has a joint null: the max-T claims at the margin
   (:func:`protocols.maxt_claims.maxt_claim` on the design's sign-flip units), then the
   joint null of all comparisons (:meth:`~protocols.analysis.designs.DesignAnalysis.
   joint_null`), its step-down adjusted p and simultaneous intervals
   (:func:`protocols.multiplicity.simultaneous_ci`);
2. per comparison: the design's primary protocol at ``alpha``
   (:func:`protocols.analysis.primary.primary_result`), its interval at ``alpha / C`` (the
   Bonferroni-simultaneous interval of holm, bonferroni and bh; of ``maxt`` where the
   design's sign-flip intervals under-cover) and the claim's interval at ``2 alpha / C``;
3. the adjusted p of every correction asked for.

What is not here: Dunnett's and Tukey's exact tests for independent seeds of declared equal
variances (:meth:`~protocols.analysis.designs.DesignAnalysis.exact_maxt`, one experiment,
and their batched intervals :func:`protocols.analysis.designs.methods_independent.
exact_intervals`), the
score tests of claims at a margin (:meth:`~protocols.analysis.designs.DesignAnalysis.
margin_claim`), and what the report prints beside them (notes, effect sizes, rankings).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import Design
from evalcal_core.scores import ArmScores
from protocols import claims as claims_mod
from protocols import maxt_claims as mxc
from protocols import multiplicity as mt
from protocols.joint_null import JointNull

from . import designs
from .designs import N_FLIPS
from .primary import primary_result

#: corrections whose intervals are the primary protocol's at ``alpha / C`` (Bonferroni)
BONFERRONI_INTERVALS = ("holm", "bonferroni", "bh")


def seed_stream(seed) -> Callable[[], np.random.Generator]:
    """The generator each resampling step draws from: a fresh ``default_rng(seed)`` per
    step for an integer ``seed`` (``evaluate``: every step's result depends on ``seed``
    alone, whichever steps ran before it), or the one shared ``Generator`` given (the
    decision grid: one stream per cell, drawn in order)."""
    if isinstance(seed, np.random.Generator):
        return lambda: seed
    return lambda: np.random.default_rng(seed)


@dataclass(frozen=True)
class MaxT:
    """The joint max-T decisions of the comparisons (arrays of shape (..., C)).

    Attributes
    ----------
    joint : JointNull
        The joint null drawn (its ``exact``: every sign pattern enumerated).
    p_stepdown : ndarray
        Westfall-Young step-down adjusted p (before the design's :meth:`~protocols.analysis.
        designs.DesignAnalysis.maxt_p`).
    low, high : ndarray
        The simultaneous ``1 - alpha`` intervals from the joint null.
    critical : ndarray, shape (...)
        Their multiplier of the standard error.
    units : ndarray or None, shape (..., C, units)
        The sign-flip units' deltas (``None``: the null is not a sign flip).
    claim_low, claim_high : ndarray or None
        The simultaneous ``1 - claim_alpha`` intervals (``variant - base``) beside a claim.
    claim_verdicts : ndarray of str or None
        The exact one-sided max-T claims at the margin (read on ``base - variant`` for a
        loss), where the null is a sign flip.
    """

    joint: JointNull
    p_stepdown: np.ndarray
    low: np.ndarray
    high: np.ndarray
    critical: np.ndarray
    units: np.ndarray | None
    claim_low: np.ndarray | None = None
    claim_high: np.ndarray | None = None
    claim_verdicts: np.ndarray | None = None


@dataclass(frozen=True)
class ArmsBatch:
    """The comparisons of the arms, one row per comparison on the last axis (..., C).

    Attributes
    ----------
    protocol : str
        The primary protocol.
    estimate, ci_low, ci_high, p_value : ndarray
        The primary protocol at ``alpha`` (``variant - base``).
    degenerate : ndarray of bool
        No verdict (a zero standard error, a refusal or a real-pool pitfall).
    bounds : dict
        Per correction asked for: the ``(low, high)`` simultaneous intervals it prints (the
        primary protocol's at ``alpha / C``, Bonferroni, for holm, bonferroni, bh and Holm's
        Welch, and for ``maxt`` where the design's sign-flip intervals under-cover; the
        joint null's under ``maxt`` otherwise; the raw ones under ``none``).
    claim_low, claim_high : ndarray or None
        The primary protocol's interval at ``2 alpha / C`` (``variant - base``), where a
        claim is read off it.
    claim_verdicts : ndarray of str or None
        Those claims' verdicts (read on ``base - variant`` for a loss).
    p_adjusted : dict
        Per correction asked for: the adjusted p (``maxt``: the design's max-T p, or
        Holm's Welch for independent seeds).
    maxt : MaxT or None
        The joint max-T decisions, where ``maxt`` was asked for and the design has a joint
        null.
    """

    protocol: str
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    p_value: np.ndarray
    degenerate: np.ndarray
    bounds: dict
    claim_low: np.ndarray | None
    claim_high: np.ndarray | None
    claim_verdicts: np.ndarray | None
    p_adjusted: dict
    maxt: MaxT | None

    def significant(self, correction: str, alpha: float) -> np.ndarray:
        """Each comparison's verdict under ``correction``: adjusted p below ``alpha`` and a
        verdict given."""
        p = self.p_adjusted[correction]
        return ~np.isnan(p) & (p < alpha) & ~self.degenerate


def _arm_reader(scores):
    """``arm(i)``: arm ``i``'s ``(..., runs, n)`` scores, and the ``(..., m, runs, n)``
    array of all of them (``None`` for arms of unequal seed counts)."""
    if isinstance(scores, ArmScores):
        return (lambda i: scores.arm(scores.arms[i])), (None if scores.ragged
                                                         else scores.scores)
    x = np.asarray(scores, dtype=float)
    return (lambda i: x[..., i, :, :]), x


def _stack(rows, field):
    return np.stack([np.asarray(getattr(r, field)) for r in rows], axis=-1)


def compare_batch(scores, design: Design, comps, *, primary: str, alpha: float = 0.05,
                  corrections=("holm",), codes=None, seed=0, claim=None, margin=None,
                  lower_is_better: bool = False, equal_variances: bool = False,
                  n_draws: int = N_FLIPS) -> ArmsBatch:
    """The comparisons ``comps`` of the arms of ``scores`` under ``design``.

    Parameters
    ----------
    scores : ArmScores or ndarray, shape (..., m, runs, n)
        The arms' scores (fractions or metric units); leading axes are experiments.
    design : Design
    comps : sequence of (int, int)
        ``(i, j)``: arm ``i`` (the variant) minus arm ``j`` (the base).
    primary : str
        The design's primary protocol (:func:`protocols.analysis.primary.primary_name`).
    alpha : float
        Family-wise level (false-discovery for ``bh``).
    corrections : sequence of str
        The corrections whose adjusted p are wanted (of
        :data:`protocols.analysis.compare.CORRECTIONS`); the grid asks for two on the same
        experiments.
    codes : ndarray of int or None
        Cluster code per question.
    seed : int or numpy.random.Generator
        The resampling stream (:func:`seed_stream`).
    claim : {"superiority", "non-inferiority", "equivalence"} or None
        A claim read off intervals (Bonferroni corrections, Holm's Welch) or decided by
        exact max-T tests at the margin (``maxt`` on sign-flip units).
    margin : float or None
        The claim's margin, in the scores' units.
    lower_is_better : bool
        The claim is read on ``base - variant``.
    equal_variances : bool
        Independent seeds whose variances are equal by declaration (their ``maxt`` is
        Dunnett's or Tukey's exact test, not computed here: refused).
    n_draws : int
        Draws of a sampled joint null and of the max-T claims' sign flips.

    Returns
    -------
    ArmsBatch
    """
    rules = designs.of(design)
    arm, x = _arm_reader(scores)
    draw = seed_stream(seed)
    c = len(comps)
    claim_name = claim.replace("-", "_") if claim is not None else None
    holm_maxt = rules.maxt_is_holm("maxt", equal_variances)
    joint_maxt = "maxt" in corrections and not holm_maxt
    if joint_maxt and equal_variances:
        raise ValueError("compare_batch: maxt with equal variances is the design's exact test "
                         "(exact_maxt), not a joint null")
    maxt = None
    if joint_maxt:
        maxt = _maxt(rules, x, comps, codes, alpha, draw, claim_name, margin,
                     lower_is_better, n_draws)
    bonf = bool(set(corrections) & set(BONFERRONI_INTERVALS)) or (
        "maxt" in corrections and (holm_maxt or not rules.sign_flip_intervals))
    # the claim read off the primary's interval: under every correction but a joint max-T
    interval_corrections = [k for k in corrections if k != "maxt" or holm_maxt]
    if claim is not None and len(interval_corrections) > 1:
        raise ValueError("compare_batch: a claim is read under one correction off intervals, "
                         f"got {interval_corrections}")
    interval_claim = claim is not None and bool(interval_corrections)
    claim_alpha = min(2 * alpha if interval_corrections == ["none"] else 2 * alpha / c, 0.999)
    raw, sim, claimed = [], [], []
    for i, j in comps:
        base, variant = arm(j), arm(i)
        raw.append(primary_result(design, base, variant, alpha, name=primary,
                                  clusters=codes, rng=draw()))
        if bonf and c > 1:
            # only the interval is read: the protocol's interval-only twin draws no law
            sim.append(primary_result(design, base, variant, alpha / c, name=primary,
                                      clusters=codes, rng=draw(), interval_only=True))
        if interval_claim:
            lo_arm, hi_arm = (base, variant) if not lower_is_better else (variant, base)
            claimed.append(primary_result(design, lo_arm, hi_arm, claim_alpha, name=primary,
                                          clusters=codes, rng=draw()))
    p = _stack(raw, "p_value")
    ci_low, ci_high = _stack(raw, "ci_low"), _stack(raw, "ci_high")
    bounds = {}
    for correction in corrections:
        if correction == "none":
            bounds[correction] = ci_low, ci_high
        elif correction == "maxt" and maxt is not None and rules.sign_flip_intervals:
            bounds[correction] = maxt.low, maxt.high
        else:
            bounds[correction] = ((_stack(sim, "ci_low"), _stack(sim, "ci_high")) if c > 1
                                  else (ci_low, ci_high))
    claim_low = claim_high = claim_verdicts = None
    if claimed:
        lo, hi = _stack(claimed, "ci_low"), _stack(claimed, "ci_high")
        # read on base - variant for a loss; shown on variant - base
        claim_verdicts = np.asarray(claims_mod.claim_verdict(
            claim_name, _stack(claimed, "estimate"), lo, hi, margin if margin else None))
        claim_low, claim_high = (lo, hi) if not lower_is_better else (-hi, -lo)
    adjusted = {}
    for correction in corrections:
        if correction == "maxt" and not holm_maxt:
            adjusted[correction] = rules.maxt_p(maxt.p_stepdown, p, primary)
        else:
            how = "holm" if correction == "maxt" else correction
            adjusted[correction] = mt.adjust(p, how) if c > 1 and how != "none" else p.copy()
    return ArmsBatch(primary, _stack(raw, "estimate"), ci_low, ci_high, p,
                     _stack(raw, "degenerate"), bounds, claim_low, claim_high, claim_verdicts,
                     adjusted, maxt)


def _maxt(rules, x, comps, codes, alpha, draw, claim, margin, lower_is_better,
          n_draws) -> MaxT:
    """The joint max-T decisions (step 1 of :func:`compare_batch`): the claims at the
    margin first, then the joint null."""
    if x is None:
        raise ValueError("compare_batch: maxt over a joint null needs arms of equal shapes")
    units, unit_weights = rules.flip_units(x, comps, codes)
    verdicts = None
    if claim is not None and units is not None:
        mc = mxc.maxt_claim(-units if lower_is_better else units, claim, margin or None,
                            alpha, n_flips=n_draws, rng=draw(), unit_weights=unit_weights)
        verdicts = np.asarray(mc.verdict)
    joint = rules.joint_null(x, comps, codes, draw(), n_draws=n_draws)
    ci = mt.simultaneous_ci(joint, alpha, method="maxt")
    claim_low = claim_high = None
    if claim is not None:
        ci2 = mt.simultaneous_ci(joint, min(2 * alpha, 0.999), method="maxt")
        # shown on variant - base whichever way the claim reads
        claim_low, claim_high = ci2.low, ci2.high
    return MaxT(joint, mt.maxt_adjust(joint), ci.low, ci.high, np.asarray(ci.critical), units,
                claim_low, claim_high, verdicts)
