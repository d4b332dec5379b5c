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

What else differs by design (the paired units of d_z, the joint null and the sign-flip
units of max-T, how a protocol is called, d or d_z, the claim's test) is asked of the
design's object, :func:`protocols.analysis.designs.of`.

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
and spread use its own seeds, Welch's t its own ``k`` per arm (:func:`.primary.primary_result`), and
``maxt`` with equal variances Tukey-Kramer / Dunnett for unequal groups (``scipy.stats.tukey_hsd``,
``scipy.stats.dunnett``). Every decision here is scored by ``python -m sim.decision_grid``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evalcal_core.designs import METHODS_INDEPENDENT, Design
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError
from protocols import ScoreBatch, get, protocol_class, ranking
from protocols import claims as claims_mod
from protocols import effect_sizes as es
from protocols import multiplicity as mt

from . import designs
from .arms import compare_batch
from .design import cluster_codes
from .designs import N_FLIPS
from .evidence import real_pitfall
from .primary import primary_name

#: the --correction choices
CORRECTIONS = ("holm", "maxt", "bh", "bonferroni", "none")
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
    #: the metric is a loss (``--lower-is-better``): claims and the ranking read a lower
    #: score as better; the differences stay ``variant - base``
    lower_is_better: bool = False
    #: why the primary protocol is a pitfall at this shape on a real pool (every
    #: comparison is then refused), or ``""``
    primary_pitfall: str = ""


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


def _maxt_p(c: int) -> str:
    """What max-T's p is: step-down adjusted over ``c > 1`` comparisons; with one, the
    test's own p (the max of one statistic is that statistic)."""
    return "step-down adjusted p" if c > 1 else "one comparison, so its p is unadjusted,"


def _real_pitfall(name: str, design: Design) -> str:
    """Why protocol ``name`` is a pitfall at the design's shape on a real pool
    (:func:`protocols.analysis.evidence.real_pitfall`), or ``""``."""
    return real_pitfall(design.kind, name, design.n_questions, design.runs, design.n_clusters)


def _refusal(name: str, base, variant, codes, design: Design) -> str:
    """Why protocol ``name`` refuses a verdict on these arms (``""``: no reason beyond a
    zero standard error): over its level on a real pool at this shape
    (:func:`_real_pitfall`), else the protocol's own ``refusal`` where it has one
    (:meth:`protocols.methods.cluster_robust.ClusterCR2.refusal`)."""
    pitfall = _real_pitfall(name, design)
    if pitfall:
        return f"it was {pitfall}"
    why = getattr(get(name), "refusal", None)
    if why is None:
        return ""
    extra = {"clusters": codes} if getattr(protocol_class(name), "needs_clusters", False) else {}
    return why(ScoreBatch.from_arrays(base, variant, **extra))


def compare_arms(scores: ArmScores, design: Design, *, alpha=0.05, correction="holm",
                 reference=None, claim=None, margin=None, fraction=True, seed=0,
                 binary=False, equal_variances=False, lower_is_better=False) -> Comparisons:
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
    lower_is_better : bool
        The metric is a loss or an error: a claim says the variant is lower (superiority:
        ``variant - base < -margin``; non-inferiority: not higher by the margin,
        ``variant - base < margin``), each read as the higher-is-better claim on the arms
        swapped (``base - variant``), which is the same test (max-T claims: on the units'
        deltas negated); the claim's interval is shown on ``variant - base``. No relative
        error reduction; the ranking puts the lowest first.
    """
    if correction not in CORRECTIONS:
        raise InvalidParameterError(f"--correction must be one of {', '.join(CORRECTIONS)}, "
                                    f"got {correction!r}")
    rules = designs.of(design)
    if equal_variances and not rules.equal_variances_ok:
        raise InvalidParameterError("--equal-variances must be used with independent seeds "
                                    f"(--design {METHODS_INDEPENDENT}), got the design "
                                    f"{design.kind}")
    if reference is None:
        check_pair_count(len(scores.arms))
    pairs = pairs_of(scores.arms, reference)
    c = len(pairs)
    primary = primary_name(design, binary)
    codes = cluster_codes(scores)
    index = {a: i for i, a in enumerate(scores.arms)}
    comps = [(index[v], index[b]) for b, v in pairs]
    # independent seeds of unequal variances: max-T is Holm's Welch (WELCH_MAXT_NOTE)
    welch_maxt = rules.maxt_is_holm(correction, equal_variances)
    bonf = correction in ("holm", "bonferroni", "bh") or welch_maxt
    sim_alpha = alpha / c if bonf else alpha
    claim_alpha = min(2 * alpha / c if bonf else 2 * alpha, 0.999)
    scored_at_margin = rules.scores_claim_at_margin(fraction, claim, margin)
    # each one-sided test of a score-tested claim (Bonferroni unless uncorrected)
    margin_alpha = alpha if correction == "none" else alpha / c
    notes = []
    # Dunnett's or Tukey's exact test where the variances are equal by declaration
    exact = (rules.exact_maxt(scores, comps, reference, alpha, claim_alpha if claim else None,
                              seed) if correction == "maxt" and not welch_maxt else None)
    batch = compare_batch(scores, design, comps, primary=primary, alpha=alpha,
                          corrections=(correction,) if exact is None else (), codes=codes,
                          seed=seed, claim=None if scored_at_margin else claim, margin=margin,
                          lower_is_better=lower_is_better, equal_variances=equal_variances)
    raw = list(zip(batch.estimate.tolist(), batch.ci_low.tolist(), batch.ci_high.tolist(),
                   batch.p_value.tolist(), batch.degenerate.tolist()))
    # per comparison: (verdict or None, low, high), the bounds shown on variant - base; a
    # None verdict is read off the bounds (on base - variant for a loss)
    cl = []
    decided_verdicts = None
    if claim is not None and scored_at_margin:
        for b, v in pairs:
            # a loss's claim is the higher-is-better claim on base - variant: the same tests
            base, var = scores.arm(b), scores.arm(v)
            claim_base, claim_var = (base, var) if not lower_is_better else (var, base)
            # score tests whose size holds at the margin (Tango's for one 0/1 run; the
            # interval beside it inverts the same test), Bonferroni over the comparisons
            # under every correction (max-T has no joint law for them); superiority at
            # margin 0 keeps the primary protocol's own (exact McNemar) test
            r = rules.margin_claim(claim_base, claim_var, claim, margin, margin_alpha,
                                   binary, design)
            lo, hi = float(r.ci_low), float(r.ci_high)
            cl.append((str(r.verdict),) + ((-hi, -lo) if lower_is_better else (lo, hi)))
        decided_verdicts = [x[0] for x in cl]
        notes.append("The claim is a score test at the margin (Tango's for one 0/1 run per "
                     "model, an empirical-likelihood score test for repeats or partial "
                     f"credit), each one-sided at {margin_alpha:g}; the interval inverts it.")
    elif claim is not None and batch.claim_verdicts is not None:
        cl = list(zip(batch.claim_verdicts.tolist(), batch.claim_low.tolist(),
                      batch.claim_high.tolist()))
    if exact is not None:
        p_adj, bounds, exact_cl, note = exact
        notes.append(note)
        if claim is not None and not scored_at_margin:
            cl = [(None, float(lo), float(hi)) for _, lo, hi in exact_cl]
    elif correction == "maxt" and not welch_maxt:
        mx = batch.maxt
        p_adj = batch.p_adjusted[correction]
        how = "every sign pattern (exact)" if mx.joint.exact else f"{N_FLIPS:,} resamples"
        if not rules.sign_flip_intervals:
            # the simultaneous intervals are the primary protocol's at alpha / C
            level = f"s are {primary}'s at alpha / {c} (Bonferroni)" if c > 1 else \
                f" is {primary}'s"
            notes.append(f"max-T: {_maxt_p(c)} from joint sign flips of the "
                         f"clusters ({how}); the interval{level}, since sign-flip "
                         "intervals of few clusters under-cover at real effects.")
        elif c > 1:
            notes.append(f"max-T: step-down adjusted p from the joint null of the "
                         f"{c} comparisons ({how}); simultaneous intervals estimate "
                         f"+- {float(np.max(mx.critical)):.3g} se.")
        else:
            notes.append(f"max-T: {_maxt_p(c)} from the resampling null of its "
                         f"t ({how}); "
                         f"interval estimate +- {float(np.max(mx.critical)):.3g} se.")
        bounds = list(zip(*batch.bounds[correction]))
        if mx.units is not None and mx.joint.exact:
            smallest = mt.smallest_signflip_p(mx.units.shape[-1])
            if smallest >= alpha:
                notes.append(f"max-T over {mx.units.shape[-1]} sign-flip units can never "
                             f"reject at alpha {alpha:g} (smallest p {smallest:.3g}); "
                             "use --correction holm for a test that can.")
        if claim is not None and not scored_at_margin:
            verdicts = (mx.claim_verdicts.tolist() if mx.claim_verdicts is not None
                        else [None] * c)
            cl = list(zip(verdicts, mx.claim_low.tolist(), mx.claim_high.tolist()))
            if mx.claim_verdicts is not None:
                decided_verdicts = verdicts
                how_claim = ("exact one-sided sign-flip max-T tests at the margin "
                             "(step-down over the comparisons)" if c > 1 else
                             "exact one-sided sign-flip t tests at the margin (max-T "
                             "of one comparison)")
                notes.append(f"max-T claims: {how_claim}; the interval beside them is "
                             "shown for reference and may disagree.")
    else:
        p_adj = batch.p_adjusted[correction]
        bounds = list(zip(*batch.bounds[correction]))
        if welch_maxt:
            name = "Dunnett" if reference is not None else "Tukey"
            notes.append(WELCH_MAXT_NOTE.format(c=c, name=name) if c > 1 else WELCH_ONE_NOTE)
    # a protocol that refuses its verdict on the design (not a zero SE) says why: the rows
    # point to this note, and no adjusted p stands beside a refusal
    refusals = [_refusal(primary, scores.arm(b), scores.arm(v), codes, design) if r[4] else ""
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
    d_est, d_low, d_high = rules.effect_sizes(scores, pairs, raw, alpha)
    out = []
    for i, (b, v) in enumerate(pairs):
        est, lo, hi, p_raw, degenerate = raw[i]
        # a refused comparison shows no interval, whichever null the bounds came from
        sim_lo, sim_hi = ((float("nan"), float("nan")) if refusals[i] else
                          (float(x) for x in bounds[i]))
        d, d_lo, d_hi = float(d_est[i]), float(d_low[i]), float(d_high[i])
        rer = rer_lo = rer_hi = None
        err = 1.0 - mean_of[b]
        if fraction and err > 0 and not lower_is_better:
            rer, rer_lo, rer_hi, note = rules.relative_error_reduction(
                scores.arm(b), scores.arm(v), est, sim_lo, sim_hi, err, rer_alpha)
            if note and note not in notes:
                notes.append(note)
        verdict, c_lo, c_hi = None, float("nan"), float("nan")
        if claim is not None:
            verdict, c_lo, c_hi = cl[i][0], float(cl[i][1]), float(cl[i][2])
            if verdict is None:
                # read on base - variant for a loss; shown on variant - base
                read = (-c_hi, -c_lo) if lower_is_better else (c_lo, c_hi)
                verdict = claims_mod.claim_verdict(claim.replace("-", "_"), est, *read,
                                                   margin if margin else None)
            if refusals[i]:
                # no verdict: a claim decided by a joint null or a score test is withheld too
                verdict, c_lo, c_hi = "inconclusive", float("nan"), float("nan")
        pa = float(p_adj[i])
        out.append(Comparison(
            base=b, variant=v, protocol=primary, estimate=float(est), ci_low=float(lo),
            ci_high=float(hi), sim_low=sim_lo, sim_high=sim_hi,
            p_value=float(p_raw), p_adjusted=pa,
            significant=bool(not np.isnan(pa) and pa < alpha and not degenerate),
            degenerate=degenerate, d=float(d), d_low=float(d_lo), d_high=float(d_hi),
            d_kind=rules.d_kind, claim_low=c_lo, claim_high=c_hi, rer=rer, rer_low=rer_lo,
            rer_high=rer_hi, claim=verdict, refusal=refusals[i] or None))
    # ragged (independent) seeds: the smallest arm's count
    k = min(scores.seed_counts) if scores.ragged else scores.r
    g = rules.unit_count(design, scores, k)
    # d_z (and d) are over seeds for methods, over questions for models
    g_d = rules.effect_count(scores, k)
    if g_d < DZ_FEW:
        notes.append(f"{rules.d_kind} from "
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
        ranking_ = ranking.compact_letter_display(
            matrix, alpha, names=scores.arms,
            estimates=[-m for m in means] if lower_is_better else means).as_dict()
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
                    p_method="holm" if welch_maxt and c > 1 else None,
                    lower_is_better=lower_is_better,
                    primary_pitfall=_real_pitfall(primary, design))
