"""Comparisons between arms: one reportable protocol per comparison, adjusted for multiplicity.

Which protocol (the design's *primary* protocol, reported for every comparison; each design's
module in :mod:`evalcal_core.designs` names it, :meth:`~evalcal_core.designs.StudyDesign.
primary_for`):

==================== ====================================================================
design               primary protocol
==================== ====================================================================
methods_paired       ``paired_t`` on the per-seed deltas (its CI is exact under normality
                     at any level, which the simultaneous intervals need; with k >= 6
                     ``paired_bca_perm`` is also reportable and shown in the 2-arm table)
methods_independent  ``welch_t`` on the per-seed metrics
models               ``mcnemar`` (exact) for one run of 0/1 scores; otherwise
                     ``t_signflip_questions``: the t interval on the per-question deltas of
                     the run means, significant only if the exact sign-flip test agrees
models_clustered     ``cluster_cr2`` (CR2 with Imbens-Kolesar df; holds its level with few clusters
                     where CR1 over-rejects)
==================== ====================================================================

Multiplicity (``--correction``): Holm (default), Bonferroni and Benjamini-Hochberg adjust the
primary protocol's p-values; their intervals are Bonferroni-simultaneous (the protocol's CI at
level ``alpha / C`` for ``C`` comparisons; BH adjusts p only). ``maxt``: Westfall-Young
step-down max-T over joint sign flips of the paired units (seeds or clusters; the joint normal
law for questions), with intervals ``estimate +- q * se`` from the max-|t| quantile ``q`` of
the uncentred and the centred flips, whichever is larger (:func:`protocols.multiplicity.
simultaneous_ci`); claims under ``maxt`` are exact one-sided max-T tests at the margin
(:func:`protocols.maxt_claims.maxt_claim`). Independent seeds under ``maxt`` get Holm's
adjustment of the Welch p and Bonferroni Welch intervals (:data:`WELCH_MAXT_NOTE`): no max-T
law held its level with unequal variances and 2-3 seeds per arm. Where the arms' variances
are declared equal (``equal_variances``, ``--equal-variances``) they get Dunnett's
(many-to-one) or Tukey's (all pairs) exact single-step tests and intervals, which hold with 2
or 3 seeds per arm where a bootstrap of 3 values is degenerate. ``none``: raw p and intervals
(a warning is printed).

Independent seeds may be unequally many per arm (ragged :class:`ArmScores`): every arm's mean
and spread use its own seeds, Welch's t its own ``k`` per arm (:func:`_welch_unequal`), and
``maxt`` with equal variances Tukey-Kramer / Dunnett for unequal groups (``scipy.stats.tukey_hsd``,
``scipy.stats.dunnett``). Every decision here is scored by ``python -m sim.decision_grid``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from evalcal_core.designs import (
    COMPARE_METHODS,
    METHODS_INDEPENDENT,
    METHODS_PAIRED,
    MODELS,
    MODELS_CLUSTERED,
    Design,
)
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError
from protocols import ScoreBatch, get, protocol_class, ranking
from protocols import claims as claims_mod
from protocols import dunnett_tukey as dtk
from protocols import effect_sizes as es
from protocols import joint_null as jn
from protocols import maxt_claims as mxc
from protocols import multiplicity as mt
from protocols.methods.welch_t import welch_decision

from .design import cluster_codes

#: the --correction choices
CORRECTIONS = ("holm", "maxt", "bh", "bonferroni", "none")
#: flips drawn for the max-T null
N_FLIPS = 10_000
#: fewer units than this get a note with d_z
DZ_FEW = es.DZ_MIN_K

#: why independent seeds under ``maxt`` get Holm's Welch p and Bonferroni Welch intervals:
#: with one arm's sd 3 (others 1, .5, .5, .5) at 3 seeds, Dunnett's pooled variance falsely
#: rejected in 14% of null experiments and Games-Howell's studentized range with Welch df
#: in 7-15% at 2-3 seeds; a parametric bootstrap of the max Welch |t| in up to 6.6% (variance
#: ratio 100); Holm's Welch held 5% at variance ratios up to 10 (``python -m
#: sim.decision_grid --families maxt``, cells ``unpaired_unequal``)
WELCH_MAXT_NOTE = ("max-T for independent seeds: Holm-adjusted Welch p and Bonferroni Welch "
                   "intervals (alpha / {c}), since no joint max-T law holds its level with "
                   "unequal variances and few seeds; --equal-variances (declared by design) "
                   "gives {name}'s exact single-step test on the pooled variance.")
#: the same for one comparison: max-T of one test is that test
WELCH_ONE_NOTE = ("max-T with one comparison is Welch's t itself (p not adjusted); "
                  "--equal-variances (declared by design) gives the pooled-variance t.")


@dataclass(frozen=True)
class Comparison:
    """One comparison ``variant - base`` (fractions for accuracies, else metric units)."""

    base: str
    variant: str
    protocol: str
    estimate: float
    ci_low: float
    ci_high: float
    sim_low: float
    sim_high: float
    p_value: float
    p_adjusted: float
    significant: bool
    degenerate: bool
    d: float
    d_low: float
    d_high: float
    d_kind: str
    claim_low: float = float("nan")
    claim_high: float = float("nan")
    rer: float | None = None
    rer_low: float | None = None
    rer_high: float | None = None
    claim: str | None = None
    refusal: str | None = None


@dataclass(frozen=True)
class Comparisons:
    """The comparisons of the arms, their multiplicity, claim and gate."""

    design: Design
    arms: tuple
    means: tuple
    comparisons: tuple
    mode: str
    reference: str | None
    correction: str
    primary: str
    alpha: float
    sim_level: float
    units: int
    ranking: dict = field(default_factory=dict)
    claim: str | None = None
    margin: float | None = None
    gate: int | None = None
    notes: tuple = ()
    p_method: str | None = None


#: most comparisons of all pairs computed one by one (63 arms make 1,953). Each pair runs
#: the primary protocol twice (minutes for 500 arms' 124,750 pairs, with no output);
#: ``--leaderboard`` decides every pair in one joint computation
MAX_PAIRS = 2000


def check_pair_count(m: int) -> None:
    """Refuse all pairs of ``m`` arms when they exceed :data:`MAX_PAIRS` comparisons.

    Raises
    ------
    ValueError
        One line with the number of pairs and the two ways that scale.
    """
    pairs = m * (m - 1) // 2
    if pairs > MAX_PAIRS:
        raise InvalidParameterError(f"{m} arms make {pairs:,} pairs (more than {MAX_PAIRS:,} "
                                    "compared one by one): use --leaderboard (every pair at once, "
                                    "tiers and rank intervals) or --reference ARM")


def pairs_of(arms, reference: str | None) -> list[tuple[str, str]]:
    """(base, variant) pairs: many-to-one against ``reference``, else all pairs."""
    if reference is not None:
        if reference not in arms:
            raise InvalidParameterError(f"--reference {reference!r} is not an arm; the arms are "
                                        f"{', '.join(arms)}")
        return [(reference, a) for a in arms if a != reference]
    return [(arms[i], arms[j]) for i in range(len(arms)) for j in range(i + 1, len(arms))]


def _units(base: np.ndarray, variant: np.ndarray, design: Design) -> np.ndarray:
    """The paired units' deltas for d_z: per seed (methods) or per question (models)."""
    if design.kind == METHODS_PAIRED:
        return variant.mean(axis=1) - base.mean(axis=1)
    return variant.mean(axis=0) - base.mean(axis=0)


def joint_null(scores: ArmScores, design: Design, comps, codes, rng) -> jn.JointNull:
    """The joint null of all comparisons for max-T (:mod:`protocols.multiplicity`).

    Paired seeds: joint sign flips of the per-seed deltas; independent seeds: a bootstrap of
    each arm's centred seeds; models: the joint normal law of the per-question z statistics;
    clustered questions: joint sign flips of whole clusters (cluster sums scaled so that
    their mean is the mean over questions).
    """
    x = scores.scores
    if design.kind == METHODS_PAIRED:
        return jn.paired_signflip_null(mt.pair_deltas(x.mean(axis=2), comps), N_FLIPS, rng=rng)
    if design.kind == METHODS_INDEPENDENT:
        return jn.unpaired_bootstrap_null(x.mean(axis=2), comps, N_FLIPS, rng=rng)
    if design.kind == MODELS_CLUSTERED:
        units, weights = _flip_units(scores, design, comps, codes)
        return jn.paired_signflip_null(units, N_FLIPS, rng=rng, unit_weights=weights)
    return jn.gaussian_null(x.mean(axis=1), comps, N_FLIPS, rng=rng)


def _flip_units(scores: ArmScores, design: Design, comps, codes):
    """``(deltas, weights)``: per-unit deltas ``(m, units)`` that max-T flips jointly and
    how each unit's expectation scales with the effect (seeds: 1; clusters' sums scaled by
    ``G / n``: ``n_g G / n``); ``(None, None)`` for designs whose null is not a sign flip."""
    x = scores.scores
    if design.kind == METHODS_PAIRED:
        return mt.pair_deltas(x.mean(axis=2), comps), None
    if design.kind == MODELS_CLUSTERED:
        q = x.mean(axis=1)
        g = int(codes.max()) + 1
        n = q.shape[1]
        sums = np.stack([np.bincount(codes, weights=row, minlength=g) for row in q])
        sizes = np.bincount(codes, minlength=g)
        return mt.pair_deltas(sums * g / n, comps), sizes * g / n
    return None, None


def _unpaired_exact(scores: ArmScores, comps, reference, alpha, claim_alpha, seed):
    """Dunnett (many-to-one) or Tukey (all pairs) single-step p, intervals and claim
    intervals for independent seeds: exact for normal arms with a common variance."""
    if scores.ragged:
        return _unpaired_exact_unequal(scores, comps, reference, alpha, claim_alpha, seed)
    x = scores.scores.mean(axis=2)
    family = "many_to_one" if reference is not None else "all_pairs"
    if family == "many_to_one":
        control = comps[0][1]
        res = stats.dunnett(*[x[i] for i, _ in comps], control=x[control],
                            rng=np.random.default_rng(seed))
        p_adj = np.asarray(res.pvalue, dtype=float)
    else:
        res = stats.tukey_hsd(*x)
        p_adj = np.array([res.pvalue[i, j] for i, j in comps], dtype=float)
    ci = dtk.unpaired_exact_ci(x, comps, alpha, family)
    cl = []
    if claim_alpha is not None:
        ci2 = dtk.unpaired_exact_ci(x, comps, claim_alpha, family)
        cl = [(None, lo, hi) for lo, hi in zip(ci2.low, ci2.high)]
    name = "Dunnett" if family == "many_to_one" else "Tukey"
    note = (f"max-T for independent seeds: {name}'s exact single-step test and intervals "
            f"(normal arms, variance pooled over the {x.shape[0]} arms, "
            f"{x.shape[0] * (x.shape[1] - 1)} df).")
    return p_adj, list(zip(ci.low, ci.high)), cl, note


def _unpaired_exact_unequal(scores: ArmScores, comps, reference, alpha, claim_alpha, seed):
    """:func:`_unpaired_exact` for arms of unequal seed counts: Dunnett's or Tukey-Kramer's
    single-step p and intervals as ``scipy.stats.dunnett`` / ``tukey_hsd`` give them
    (``confidence_interval(1 - alpha)``); no variance at all gives NaN p and intervals."""
    x = [scores.arm(a).mean(axis=1) for a in scores.arms]
    family = "many_to_one" if reference is not None else "all_pairs"
    levels = [1 - alpha] + ([1 - claim_alpha] if claim_alpha is not None else [])
    p_adj, cis = dtk.unpaired_exact_unequal(x, comps, levels, family, rng=seed)
    df = sum(len(v) for v in x) - len(x)
    bounds = list(zip(*cis[0]))
    cl = [(None, lo, hi) for lo, hi in zip(*cis[1])] if claim_alpha is not None else []
    name = "Dunnett" if family == "many_to_one" else "Tukey-Kramer"
    note = (f"max-T for independent seeds: {name}'s single-step test and intervals for "
            f"unequal seed counts (normal arms, variance pooled over the {len(x)} arms, {df} df).")
    return p_adj, bounds, cl, note


def _maxt_p(c: int) -> str:
    """What max-T's p is: step-down adjusted over ``c > 1`` comparisons; with one, the
    test's own p (the max of one statistic is that statistic)."""
    return "step-down adjusted p" if c > 1 else "one comparison, so its p is unadjusted,"


def _refusal(name: str, base, variant, codes) -> str:
    """Why protocol ``name`` refuses a verdict on these arms (``""``: no reason beyond a
    zero standard error), from the protocol's own ``refusal`` where it has one
    (:meth:`protocols.methods.cluster_robust.ClusterCR2.refusal`)."""
    why = getattr(get(name), "refusal", None)
    if why is None:
        return ""
    extra = {"clusters": codes} if getattr(protocol_class(name), "needs_clusters", False) else {}
    return why(ScoreBatch.from_arrays(base, variant, **extra))


def _welch_unequal(base, variant, alpha):
    """(estimate, ci_low, ci_high, p, degenerate) of Welch's t on per-seed metrics of
    unequal counts ``(k_b,)`` and ``(k_v,)`` (:func:`protocols.methods.welch_t.welch_decision`)."""
    p, lo, hi, _, estimate = welch_decision(base, variant, alpha)
    return float(estimate), float(lo), float(hi), float(p), bool(np.isnan(p))


def _run(name: str, base, variant, alpha, seed, codes, design):
    """(estimate, ci_low, ci_high, p, degenerate) of protocol ``name`` at level ``alpha``."""
    kwargs = {"exact": True} if name == "mcnemar" else {}
    protocol = get(name, **kwargs)
    extra = {"clusters": codes} if getattr(protocol_class(name), "needs_clusters", False) else {}
    if design.kind == METHODS_INDEPENDENT or name in ("paired_t", "welch_t"):
        base, variant = base.mean(axis=1), variant.mean(axis=1)
    if base.shape != variant.shape:
        # independent seeds of unequal counts: the protocols take equal shapes
        return _welch_unequal(base, variant, alpha)
    r = protocol.evaluate(base, variant, alpha, rng=np.random.default_rng(seed), **extra)
    return (float(r.estimate), float(r.ci_low), float(r.ci_high), float(r.p_value),
            bool(r.degenerate))


def _cohen_d(a: np.ndarray, b: np.ndarray, alpha: float):
    """Cohen's d (pooled sd) of two independent samples, with a normal-approximation CI."""
    na, nb = a.size, b.size
    pooled = np.sqrt(((na - 1) * a.var(ddof=1) + (nb - 1) * b.var(ddof=1)) / (na + nb - 2))
    if pooled == 0:
        return np.nan, np.nan, np.nan
    d = (b.mean() - a.mean()) / pooled
    se = np.sqrt((na + nb) / (na * nb) + d**2 / (2 * (na + nb)))
    z = stats.norm.ppf(1 - alpha / 2)
    return d, d - z * se, d + z * se


def compare_arms(scores: ArmScores, design: Design, *, alpha=0.05, correction="holm",
                 reference=None, claim=None, margin=None, fraction=True, seed=0,
                 binary=False, equal_variances=False) -> Comparisons:
    """Compare the arms of ``scores`` under ``design``.

    Parameters
    ----------
    scores : ArmScores
    design : Design
    alpha : float
        Family-wise (holm, bonferroni, maxt) or false-discovery (bh) level.
    correction : {"holm", "maxt", "bh", "bonferroni", "none"}
    reference : str or None
        Many-to-one comparisons against this arm; all pairs when ``None``.
    claim : {"superiority", "non-inferiority", "equivalence"} or None
        Read off the two-sided ``1 - 2 alpha`` interval (:mod:`protocols.claims`), made
        simultaneous over the comparisons like the others.
    margin : float or None
        In the scores' units (fractions for accuracies).
    fraction : bool
        Whether the metric is a fraction (accuracy): relative error reduction is given.
    seed : int
        Seed of the resampling (protocols and the max-T null).
    binary : bool
        Whether the scores are 0/1 per question.
    equal_variances : bool
        Independent seeds only: the arms' variances are equal by design, so ``maxt`` is
        Dunnett's or Tukey's exact test on the pooled variance; otherwise ``maxt`` on
        independent seeds is Holm's Welch (:data:`WELCH_MAXT_NOTE`).
    """
    if correction not in CORRECTIONS:
        raise InvalidParameterError(f"--correction must be one of {', '.join(CORRECTIONS)}, "
                                    f"got {correction!r}")
    if equal_variances and design.kind != METHODS_INDEPENDENT:
        raise InvalidParameterError("--equal-variances must be used with independent seeds "
                                    f"(--unpaired), got the design {design.kind}")
    if reference is None:
        check_pair_count(len(scores.arms))
    pairs = pairs_of(scores.arms, reference)
    c = len(pairs)
    primary = design.study.primary_for(design, binary)
    codes = cluster_codes(scores)
    # independent seeds of unequal variances: max-T is Holm's Welch (WELCH_MAXT_NOTE)
    welch_maxt = (correction == "maxt" and design.kind == METHODS_INDEPENDENT
                  and not equal_variances)
    bonf = correction in ("holm", "bonferroni", "bh") or welch_maxt
    sim_alpha = alpha / c if bonf else alpha
    claim_alpha = min(2 * alpha / c if bonf else 2 * alpha, 0.999)
    raw, sim, cl = [], [], []
    scored_at_margin = bool(design.kind == MODELS and fraction and claim is not None
                            and (claim != "superiority" or margin))
    # each one-sided test of a score-tested claim (Bonferroni unless uncorrected)
    margin_alpha = alpha if correction == "none" else alpha / c
    decided_verdicts = None
    for b, v in pairs:
        base, var = scores.arm(b), scores.arm(v)
        raw.append(_run(primary, base, var, alpha, seed, codes, design))
        sim.append(_run(primary, base, var, sim_alpha, seed, codes, design)
                   if sim_alpha != alpha else raw[-1])
        if scored_at_margin:
            # score tests whose size holds at the margin (Tango's for one 0/1 run; the
            # interval beside it inverts the same test), Bonferroni over the comparisons
            # under every correction (max-T has no joint law for them); superiority at
            # margin 0 keeps the primary protocol's own (exact McNemar) test
            r = claims_mod.models_claim(base, var, claim.replace("-", "_"),
                                        margin or None, margin_alpha,
                                        binary_one_run=bool(binary and design.runs == 1))
            cl.append((str(r.verdict), float(r.ci_low), float(r.ci_high)))
        elif claim is not None and (correction != "maxt" or welch_maxt):
            cl.append(_run(primary, base, var, claim_alpha, seed, codes, design))
    p = np.array([r[3] for r in raw])
    notes = []
    if cl and scored_at_margin:
        decided_verdicts = [x[0] for x in cl]
        notes.append("The claim is a score test at the margin (Tango's for one 0/1 run per "
                     "model, an empirical-likelihood score test for repeats or partial "
                     f"credit), each one-sided at {margin_alpha:g}; the interval inverts it.")
    if correction == "maxt" and not welch_maxt:
        index = {a: i for i, a in enumerate(scores.arms)}
        comps = [(index[v], index[b]) for b, v in pairs]
        if design.kind == METHODS_INDEPENDENT:
            p_adj, bounds, cl, note = _unpaired_exact(scores, comps, reference, alpha,
                                                      claim_alpha if claim else None, seed)
            notes.append(note)
        else:
            joint = joint_null(scores, design, comps, codes, np.random.default_rng(seed))
            p_adj = mt.maxt_adjust(joint)
            if primary != "mcnemar" and design.kind == MODELS:
                # the max-T of the per-question t statistics decides, and the primary's own
                # p (the larger of the t's and the exact sign-flip test's) must agree: the
                # t alone over-rejects where few questions differ; an extra condition can
                # only lower the family-wise error
                p_adj = np.fmax(p_adj, p)
            ci = mt.simultaneous_ci(joint, alpha, method="maxt")
            how = "every sign pattern (exact)" if joint.exact else f"{N_FLIPS:,} resamples"
            if design.kind == MODELS_CLUSTERED:
                # Sign-flip intervals of clusters' sums covered 91-93% with 3-6 effective
                # clusters at real effects (sim.decisions.models_arms): the simultaneous
                # intervals are the primary protocol's at alpha / C instead.
                bounds = [(_run(primary, scores.arm(b), scores.arm(v), alpha / c, seed,
                                codes, design)[1:3]) for b, v in pairs]
                level = f"s are {primary}'s at alpha / {c} (Bonferroni)" if c > 1 else \
                    f" is {primary}'s"
                notes.append(f"max-T: {_maxt_p(c)} from joint sign flips of the "
                             f"clusters ({how}); the interval{level}, since sign-flip "
                             "intervals of few clusters under-cover at real effects.")
            else:
                bounds = list(zip(ci.low, ci.high))
                if c > 1:
                    notes.append(f"max-T: step-down adjusted p from the joint null of the "
                                 f"{c} comparisons ({how}); simultaneous intervals estimate "
                                 f"+- {float(np.max(ci.critical)):.3g} se.")
                else:
                    notes.append(f"max-T: {_maxt_p(c)} from the resampling null of its "
                                 f"t ({how}); "
                                 f"interval estimate +- {float(np.max(ci.critical)):.3g} se.")
            units, unit_weights = _flip_units(scores, design, comps, codes)
            if units is not None and joint.exact:
                smallest = mt.smallest_signflip_p(units.shape[-1])
                if smallest >= alpha:
                    notes.append(f"max-T over {units.shape[-1]} sign-flip units can never "
                                 f"reject at alpha {alpha:g} (smallest p {smallest:.3g}); "
                                 "use --correction holm for a test that can.")
            if claim is not None and not scored_at_margin:
                ci2 = mt.simultaneous_ci(joint, claim_alpha, method="maxt")
                cl = [(None, lo, hi) for lo, hi in zip(ci2.low, ci2.high)]
                if units is not None:
                    mc = mxc.maxt_claim(units, claim.replace("-", "_"), margin or None, alpha,
                                       n_flips=N_FLIPS, rng=np.random.default_rng(seed),
                                       unit_weights=unit_weights)
                    decided_verdicts = [str(v) for v in mc.verdict]
                    how_claim = ("exact one-sided sign-flip max-T tests at the margin "
                                 "(step-down over the comparisons)" if c > 1 else
                                 "exact one-sided sign-flip t tests at the margin (max-T "
                                 "of one comparison)")
                    notes.append(f"max-T claims: {how_claim}; the interval beside them is "
                                 "shown for reference and may disagree.")
    else:
        p_adj = mt.adjust(p, "holm" if welch_maxt else correction) if c > 1 else p.copy()
        bounds = [(s_[1], s_[2]) for s_ in sim]
        if welch_maxt:
            name = "Dunnett" if reference is not None else "Tukey"
            notes.append(WELCH_MAXT_NOTE.format(c=c, name=name) if c > 1 else WELCH_ONE_NOTE)
    # a protocol that refuses its verdict on the design (not a zero SE) says why: the rows
    # point to this note, and no adjusted p stands beside a refusal
    refusals = [_refusal(primary, scores.arm(b), scores.arm(v), codes) if r[4] else ""
                for (b, v), r in zip(pairs, raw)]
    for reason in dict.fromkeys(filter(None, refusals)):
        which = [f"{v} - {b}" for (b, v), r in zip(pairs, refusals) if r == reason]
        notes.append(f"{primary} gives no verdict on "
                     f"{'any comparison' if len(which) == c else ', '.join(which)}: "
                     f"{reason}.")
    p_adj = np.where([bool(r) for r in refusals], np.nan, p_adj)
    # Bonferroni-simultaneous relative error reductions (max-T has no joint law for them)
    rer_alpha = alpha if correction == "none" else alpha / c
    means = tuple(float(scores.arm(a).mean()) for a in scores.arms)
    mean_of = dict(zip(scores.arms, means))
    if design.kind != METHODS_INDEPENDENT:
        # one batched interval inversion for every comparison (not one root-finding each)
        unit_deltas = np.stack([_units(scores.arm(b), scores.arm(v), design) for b, v in pairs])
        if design.kind == MODELS_CLUSTERED:
            # the cluster-robust CI of the mean over the sd: never contradicts the verdict
            dz = es.cohens_dz_from_mean_ci(unit_deltas, np.array([r[1] for r in raw]),
                                           np.array([r[2] for r in raw]), alpha)
        else:
            dz = es.cohens_dz(unit_deltas, alpha)
    out = []
    for i, (b, v) in enumerate(pairs):
        est, lo, hi, p_raw, degenerate = raw[i]
        sim_lo, sim_hi = (float(x) for x in bounds[i])
        if design.kind == METHODS_INDEPENDENT:
            d, d_lo, d_hi = _cohen_d(scores.arm(b).mean(axis=1), scores.arm(v).mean(axis=1),
                                     alpha)
            d_kind = "d"
        else:
            d, d_lo, d_hi = (float(dz.estimate[i]), float(dz.ci_low[i]), float(dz.ci_high[i]))
            d_kind = "d_z"
        rer = rer_lo = rer_hi = None
        err = 1.0 - mean_of[b]
        if fraction and err > 0:
            if design.kind in (METHODS_PAIRED, MODELS):
                # paired units (seeds, or questions of fixed models): the delta-method CI
                # of protocols.effect_sizes, at the simultaneous level
                axis = 1 if design.kind == METHODS_PAIRED else 0
                r = es.relative_error_reduction(scores.arm(b).mean(axis=axis),
                                                scores.arm(v).mean(axis=axis), rer_alpha)
                rer, rer_lo, rer_hi = (float(r.estimate), float(r.ci_low), float(r.ci_high))
                if r.note and r.note not in notes:
                    notes.append(r.note)
            else:
                rer, rer_lo, rer_hi = est / err, sim_lo / err, sim_hi / err
        verdict, c_lo, c_hi = None, float("nan"), float("nan")
        if claim is not None:
            c_lo, c_hi = float(cl[i][1]), float(cl[i][2])
            verdict = (decided_verdicts[i] if decided_verdicts is not None else
                       claims_mod.claim_verdict(claim.replace("-", "_"), est, c_lo, c_hi,
                                                margin if margin else None))
        pa = float(p_adj[i])
        out.append(Comparison(
            base=b, variant=v, protocol=primary, estimate=float(est), ci_low=float(lo),
            ci_high=float(hi), sim_low=sim_lo, sim_high=sim_hi,
            p_value=float(p_raw), p_adjusted=pa,
            significant=bool(not np.isnan(pa) and pa < alpha and not degenerate),
            degenerate=degenerate, d=float(d), d_low=float(d_lo), d_high=float(d_hi),
            d_kind=d_kind, claim_low=c_lo, claim_high=c_hi, rer=rer, rer_low=rer_lo,
            rer_high=rer_hi, claim=verdict, refusal=refusals[i] or None))
    # ragged (independent) seeds: the smallest arm's count
    k = min(scores.seed_counts) if scores.ragged else scores.r
    g = (k if design.compare == COMPARE_METHODS
         else design.n_clusters if design.kind == MODELS_CLUSTERED else scores.n)
    # d_z (and d) are over seeds for methods, over questions for models
    g_d = k if design.compare == COMPARE_METHODS else scores.n
    if g_d < DZ_FEW:
        notes.append(f"{'d' if design.kind == METHODS_INDEPENDENT else 'd_z'} from "
                     f"{g_d} units (fewer than {DZ_FEW}): its interval is wide and the point "
                     f"value unstable.")
    if scores.ragged and scores.m == 2:
        notes.append("Arms of unequal seed counts: the table of every protocol on the two "
                     "arms is not shown (the others pair seeds or need equal counts).")
    if correction == "bh" and c > 1:
        notes.append("bh controls the false discovery rate of the p-values; the intervals "
                     "shown are Bonferroni-simultaneous.")
    if claim is not None and decided_verdicts is None:
        notes.append(f"The claim reads the two-sided {100 * (1 - claim_alpha):g}% interval "
                     f"(1 - 2 alpha{', simultaneous over the comparisons' if c > 1 else ''}; "
                     f"TOST for equivalence).")
    ranking_ = {}
    mode = "many-to-one" if reference is not None else "all pairs"
    if reference is None and len(scores.arms) > 2:
        index = {a: i for i, a in enumerate(scores.arms)}
        p_sep = [x.p_adjusted if not x.degenerate else np.nan for x in out]
        matrix = ranking.pairwise_matrix(p_sep, [(index[x.variant], index[x.base])
                                                 for x in out], len(scores.arms))
        ranking_ = ranking.compact_letter_display(matrix, alpha, names=scores.arms,
                                                  estimates=means).as_dict()
    gate = None
    if claim is not None:
        verdicts = [x.claim for x in out]
        gate = (claims_mod.EXIT_STATUS["refuted"] if "refuted" in verdicts
                else claims_mod.EXIT_STATUS["shown"] if all(v == "shown" for v in verdicts)
                else claims_mod.EXIT_STATUS["inconclusive"])
    return Comparisons(design=design, arms=tuple(scores.arms), means=means,
                    comparisons=tuple(out), mode=mode, reference=reference,
                    correction=correction, primary=primary, alpha=alpha,
                    sim_level=1 - sim_alpha, units=g, ranking=ranking_, claim=claim,
                    margin=margin, gate=gate, notes=tuple(notes),
                    p_method="holm" if welch_maxt and c > 1 else None)
