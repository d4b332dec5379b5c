"""Many arms on paired or independent seeds: simultaneous intervals, family-wise errors, claims.

Generator (``methods`` design): ``a`` arms on ``k`` seeds; the metric of arm ``i`` at seed
``s`` is ``mu_i + sqrt(rho) Z_s + sqrt(1 - rho) W_is`` with standard normal ``Z``, ``W`` and
``rho = 0.5``, scaled so that a per-seed delta has sd 1: effects and margins are in sd of a
per-seed delta. ``unpaired`` cells draw every arm's seeds independently (sd 1 per arm).

Decisions scored, each exactly as ``evaluate`` computes it (the functions of
:mod:`protocols.multiplicity` and :mod:`protocols.claims` it calls):

* ``maxt interval`` — :func:`protocols.multiplicity.simultaneous_ci` over the joint sign
  flips (paired) and ``uncentred maxt interval (old)``, the critical value of the
  uncentred flips alone, kept to show what it did; ``bonferroni interval`` — the t
  intervals at ``alpha / C``; ``exact interval`` — Dunnett / Tukey for independent seeds;
* ``maxt any false rejection`` / ``holm any false rejection`` — the family-wise error over
  the comparisons whose true difference is 0;
* ``welch_t (unequal k)`` — Welch's test and interval on independent seeds of unequal
  counts and spreads (``--unpaired`` with ragged arms);
* ``unpaired_unequal`` cells — independent seeds whose arms' sds differ (one arm's variance
  ``ratio`` times the others', or sds 1, .5, .5, .5, 3): what ``--unpaired --correction
  maxt`` prints, ``maxt (welch, holm) any false rejection`` (Holm on each comparison's
  ``welch_t`` p) and ``maxt (welch) interval`` (``welch_t`` at ``alpha / C``), and the
  pooled-variance Dunnett / Tukey it printed before, as ``(old)``: it is printed now only
  under ``--equal-variances``;
* claims at the margin (every comparison's true difference is exactly ``-margin``):
  ``non_inferiority, maxt`` (:func:`protocols.maxt_claims.maxt_claim`),
  ``non_inferiority, holm`` (the Bonferroni ``1 - 2 alpha / C`` t interval), and the old
  read-off of the uncentred max-T interval; the same for equivalence.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

import protocols
from evalcal_core.designs import METHODS_PAIRED
from protocols import claims
from protocols import dunnett_tukey as dtk
from protocols import joint_null as jn
from protocols import maxt_claims as mxc
from protocols import multiplicity as mt
from protocols.methods.welch_t import welch_decision

NAME = "maxt"
DESIGN = METHODS_PAIRED

ALPHA = 0.05
RHO = 0.5
#: sign patterns drawn beyond 16 seeds (the exact enumeration covers every cell here)
N_FLIPS = 2_000

_EFFECTS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)

CELLS = (
    [{"kind": "intervals", "family": "many_to_one", "arms": 5, "k": k, "effect": e,
      "improved": "all"} for k in (3, 6, 10, 12) for e in _EFFECTS]
    + [{"kind": "intervals", "family": "all_pairs", "arms": 10, "k": 10, "effect": 3.0,
        "improved": "half"},
       {"kind": "intervals", "family": "all_pairs", "arms": 10, "k": 10, "effect": 0.0,
        "improved": "half"},
       {"kind": "intervals", "family": "many_to_one", "arms": 2, "k": 6, "effect": 8.0,
        "improved": "all"}]
    + [{"kind": "claims", "claim": c, "arms": a, "k": k, "margin": m}
       for c in ("non_inferiority", "equivalence") for a in (2, 4) for k in (3, 5, 8, 10)
       for m in (0.25, 0.5, 2.0)]
    + [{"kind": "unpaired", "family": f, "arms": a, "k": k, "effect": e}
       for f, a in (("many_to_one", 4), ("all_pairs", 4)) for k in (2, 3, 10)
       for e in (0.0, 8.0)]
)

CELLS += [{"kind": "welch", "k_base": kb, "k_variant": kv, "sd_ratio": r, "effect": e}
          for kb, kv in ((5, 3), (10, 3), (3, 2), (20, 5)) for r in (1.0, 3.0)
          for e in (0.0, 2.0)]

#: one noisy arm (variance ``ratio`` times the others'), first (the control of many-to-one)
#: or last; and the audit's sds 1, .5, .5, .5, 3 (variance ratio 36)
_UNEQUAL_SDS = (1.0, 0.5, 0.5, 0.5, 3.0)
CELLS += ([{"kind": "unpaired_unequal", "family": f, "arms": 5, "k": k, "sds": list(sds),
            "effect": e}
           for sds in (_UNEQUAL_SDS, _UNEQUAL_SDS[::-1]) for f in ("many_to_one", "all_pairs")
           for k in (2, 3) for e in (0.0, 2.0)]
          + [{"kind": "unpaired_unequal", "family": f, "arms": a, "k": k, "ratio": r,
              "noisy": n, "effect": 0.0}
             for a in (2, 3, 5, 10) for k in (2, 3, 5, 10)
             for f in (("many_to_one",) if a == 2 else ("many_to_one", "all_pairs"))
             for r, n in ((1.0, "first"), (10.0, "first"), (10.0, "last"))
             if not (n == "last" and f == "all_pairs")])

QUICK_CELLS = [
    {"kind": "intervals", "family": "many_to_one", "arms": 5, "k": 6, "effect": 8.0,
     "improved": "all"},
    {"kind": "claims", "claim": "non_inferiority", "arms": 2, "k": 3, "margin": 0.25},
    {"kind": "unpaired", "family": "many_to_one", "arms": 4, "k": 3, "effect": 0.0},
    {"kind": "unpaired_unequal", "family": "many_to_one", "arms": 5, "k": 3,
     "sds": list(_UNEQUAL_SDS), "effect": 0.0},
]


def _paired_scores(arms, k, mu, sims, rng):
    """Per-seed metrics, shape (sims, arms, k); a per-seed delta has sd 1."""
    scale = 1.0 / np.sqrt(2.0 * (1.0 - RHO))
    z = rng.standard_normal((sims, 1, k))
    w = rng.standard_normal((sims, arms, k))
    return scale * (np.sqrt(RHO) * z + np.sqrt(1.0 - RHO) * w) + np.asarray(mu)[:, None]


def _means(arms, effect, improved):
    mu = np.zeros(arms)
    if improved == "all":
        mu[1:] = effect
    else:
        mu[arms // 2:] = effect
    return mu


def _outcome(decision, measure, hits, sims, alpha=ALPHA):
    return {"decision": decision, "measure": measure, "hits": int(hits), "sims": int(sims),
            "alpha": float(alpha)}


def _covers(low, high, truth):
    return ((low <= truth) & (truth <= high)).all(axis=-1)


def _intervals(p, sims, rng):
    arms, k = p["arms"], p["k"]
    mu = _means(arms, p["effect"], p["improved"])
    comps = mt.many_to_one(arms) if p["family"] == "many_to_one" else mt.all_pairs(arms)
    truth = mt.contrast_matrix(comps, arms) @ mu
    x = _paired_scores(arms, k, mu, sims, rng)
    d = mt.pair_deltas(x, comps)
    joint = jn.paired_signflip_null(d, N_FLIPS, rng=rng)
    ci = mt.simultaneous_ci(joint, ALPHA)
    old_c = mt.maxt_critical(joint.null, ALPHA, weights=joint.weights)
    old_lo = joint.estimate - old_c[:, None] * joint.se
    old_hi = joint.estimate + old_c[:, None] * joint.se
    bonf = mt.simultaneous_ci(joint, ALPHA, method="bonferroni")
    null_cols = truth == 0
    p_maxt = mt.maxt_adjust(joint)
    p_raw = 2.0 * stats.t.sf(np.abs(joint.observed), k - 1)
    p_holm = mt.adjust(p_raw, "holm")
    out = [
        _outcome("maxt interval", "coverage", _covers(ci.low, ci.high, truth).sum(), sims),
        _outcome("uncentred maxt interval (old)", "coverage",
                 _covers(old_lo, old_hi, truth).sum(), sims),
        _outcome("bonferroni interval", "coverage",
                 _covers(bonf.low, bonf.high, truth).sum(), sims),
    ]
    if null_cols.any():
        for name, padj in (("maxt", p_maxt), ("holm", p_holm)):
            false = (padj[:, null_cols] < ALPHA).any(axis=-1)
            out.append(_outcome(f"{name} any false rejection", "rejection", false.sum(), sims))
    if (~null_cols).any():
        for name, padj in (("maxt", p_maxt), ("holm", p_holm)):
            hit = (padj[:, ~null_cols] < ALPHA).any(axis=-1)
            out.append(_outcome(f"{name} any true rejection", "power", hit.sum(), sims))
    return out


def _claims(p, sims, rng):
    arms, k, margin, claim = p["arms"], p["k"], p["margin"], p["claim"]
    comps = mt.many_to_one(arms)
    c = len(comps)
    mu = np.zeros(arms)
    mu[1:] = -margin                                   # every comparison at its margin
    x = _paired_scores(arms, k, mu, sims, rng)
    d = mt.pair_deltas(x, comps)
    new = mxc.maxt_claim(d, claim, margin, ALPHA, n_flips=N_FLIPS, rng=rng)
    out = [_outcome(f"{claim}, maxt", "rejection", (new.verdict == "shown").any(-1).sum(),
                    sims)]
    # the Bonferroni read-off (holm, bonferroni, bh): t interval at 1 - 2 alpha / C
    bonf = claims.paired_claim(d, claim, margin, ALPHA / c)
    out.append(_outcome(f"{claim}, holm", "rejection", bonf.shown.any(-1).sum(), sims))
    joint = jn.paired_signflip_null(d, N_FLIPS, rng=rng)
    old_c = mt.maxt_critical(joint.null, 2 * ALPHA, weights=joint.weights)
    lo = joint.estimate - old_c[:, None] * joint.se
    hi = joint.estimate + old_c[:, None] * joint.se
    old = claims.claim_verdict(claim, joint.estimate, lo, hi, margin) == "shown"
    out.append(_outcome(f"{claim}, uncentred maxt interval (old)", "rejection",
                        old.any(-1).sum(), sims))
    # power: every comparison truly 0 (inside the margin)
    x0 = _paired_scores(arms, k, np.zeros(arms), sims, rng)
    p0 = mxc.maxt_claim(mt.pair_deltas(x0, comps), claim, margin, ALPHA, n_flips=N_FLIPS,
                       rng=rng)
    out.append(_outcome(f"{claim}, maxt, all shown at delta 0", "power",
                        (p0.verdict == "shown").all(-1).sum(), sims))
    return out


def _unpaired(p, sims, rng):
    arms, k = p["arms"], p["k"]
    comps = mt.many_to_one(arms) if p["family"] == "many_to_one" else mt.all_pairs(arms)
    mu = _means(arms, p["effect"], "all") * np.sqrt(2.0)   # sd of a difference of means: 1
    truth = mt.contrast_matrix(comps, arms) @ mu
    x = rng.standard_normal((sims, arms, k)) + mu[:, None]
    ci = dtk.unpaired_exact_ci(x, comps, ALPHA, p["family"])
    out = [_outcome("exact interval (dunnett/tukey)", "coverage",
                    _covers(ci.low, ci.high, truth).sum(), sims)]
    null_cols = truth == 0
    if null_cols.any():
        false = ((ci.low[:, null_cols] > 0) | (ci.high[:, null_cols] < 0)).any(axis=-1)
        out.append(_outcome("exact any false rejection", "rejection", false.sum(), sims))
    return out


def _arm_sds(p):
    """Each arm's sd: ``p["sds"]``, or 1 with one arm at ``sqrt(ratio)`` (first or last)."""
    if "sds" in p:
        return np.asarray(p["sds"], dtype=float)
    sds = np.ones(p["arms"])
    sds[0 if p["noisy"] == "first" else -1] = np.sqrt(p["ratio"])
    return sds


def _unpaired_unequal(p, sims, rng):
    """Independent seeds, unequal sds: ``--unpaired --correction maxt`` as ``evaluate``
    computes it (``welch_t`` per comparison, Holm on its p, its interval at ``alpha / C``),
    against the pooled-variance Dunnett / Tukey (old). Effects are in sd of a difference
    of two sd-1 arms' means (as in the ``unpaired`` cells)."""
    arms, k = p["arms"], p["k"]
    comps = mt.many_to_one(arms) if p["family"] == "many_to_one" else mt.all_pairs(arms)
    c = len(comps)
    mu = _means(arms, p["effect"], "all") * np.sqrt(2.0)
    truth = mt.contrast_matrix(comps, arms) @ mu
    x = rng.standard_normal((sims, arms, k)) * _arm_sds(p)[:, None] + mu[:, None]
    welch = protocols.get("welch_t")
    raw = np.empty((sims, c))
    low, high = np.empty((sims, c)), np.empty((sims, c))
    degenerate = np.zeros((sims, c), dtype=bool)
    for col, (i, j) in enumerate(comps):
        # (sims, k, 1): k seeds of one per-seed metric each, as evaluate passes them
        base, variant = x[:, j, :, None], x[:, i, :, None]
        r = welch.evaluate(base, variant, ALPHA)
        raw[:, col], degenerate[:, col] = r.p_value, r.degenerate
        r_sim = welch.evaluate(base, variant, ALPHA / c) if c > 1 else r
        low[:, col], high[:, col] = r_sim.ci_low, r_sim.ci_high
    p_adj = mt.adjust(raw, "holm") if c > 1 else raw
    reject = (p_adj < ALPHA) & ~degenerate
    exact = dtk.unpaired_exact_ci(x, comps, ALPHA, p["family"])
    out = [_outcome("maxt (welch) interval", "coverage", _covers(low, high, truth).sum(), sims),
           _outcome("exact interval (dunnett/tukey) (old)", "coverage",
                    _covers(exact.low, exact.high, truth).sum(), sims)]
    null_cols = truth == 0
    if null_cols.any():
        out.append(_outcome("maxt (welch, holm) any false rejection", "rejection",
                            reject[:, null_cols].any(axis=-1).sum(), sims))
        old = (exact.low[:, null_cols] > 0) | (exact.high[:, null_cols] < 0)
        out.append(_outcome("exact any false rejection (old)", "rejection",
                            old.any(axis=-1).sum(), sims))
    if (~null_cols).any():
        out.append(_outcome("maxt (welch, holm) any true rejection", "power",
                            reject[:, ~null_cols].any(axis=-1).sum(), sims))
    return out


def _welch(p, sims, rng):
    """Two arms of independent seeds, unequal counts and spreads: the base arm has sd 1,
    the variant ``sd_ratio``; the true difference ``effect`` (in sd of the base arm)."""
    base = rng.standard_normal((sims, p["k_base"]))
    variant = p["sd_ratio"] * rng.standard_normal((sims, p["k_variant"])) + p["effect"]
    pv, lo, hi, _, _ = welch_decision(base, variant, ALPHA)
    out = [_outcome("welch_t interval (unequal k)", "coverage",
                    ((lo <= p["effect"]) & (p["effect"] <= hi)).sum(), sims)]
    measure = "rejection" if p["effect"] == 0 else "power"
    out.append(_outcome("welch_t (unequal k)", measure, (pv < ALPHA).sum(), sims))
    return out


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Score the decisions of one cell on ``sims`` experiments (see the module docstring)."""
    kind = params["kind"]
    if kind == "intervals":
        return _intervals(params, sims, rng)
    if kind == "claims":
        return _claims(params, sims, rng)
    if kind == "welch":
        return _welch(params, sims, rng)
    if kind == "unpaired_unequal":
        return _unpaired_unequal(params, sims, rng)
    return _unpaired(params, sims, rng)
