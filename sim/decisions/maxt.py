"""Many arms on paired or independent seeds: simultaneous intervals, family-wise errors, claims.

Generator (``methods`` design): ``a`` arms on ``k`` seeds; the metric of arm ``i`` at seed
``s`` is ``mu_i + sqrt(rho) Z_s + sqrt(1 - rho) W_is`` with standard normal ``Z``, ``W`` and
``rho = 0.5``, scaled so that a per-seed delta has sd 1: effects and margins are in sd of a
per-seed delta. ``unpaired`` cells draw every arm's seeds independently (sd 1 per arm).

Decisions scored, each exactly as ``evaluate`` computes it (by the function its comparisons
call, :func:`protocols.analysis.arms.compare_batch`, on the drawn experiments):

* ``maxt interval`` — :func:`protocols.multiplicity.simultaneous_ci` over the joint sign
  flips (paired) and ``uncentred maxt interval (old)``, the critical value of the
  uncentred flips alone, kept to show what it did; ``bonferroni interval`` — the t
  intervals at ``alpha / C``; ``exact interval`` — Dunnett / Tukey for independent seeds;
* ``maxt any false rejection`` / ``holm any false rejection`` — the family-wise error over
  the comparisons whose true difference is 0;
* ``welch_t (unequal k)`` — Welch's test and interval on independent seeds of unequal
  counts and spreads (``--design methods_independent`` with ragged arms);
* ``unpaired_unequal`` cells — independent seeds whose arms' sds differ (one arm's variance
  ``ratio`` times the others', or sds 1, .5, .5, .5, 3): what ``--design
  methods_independent --correction maxt`` prints, ``maxt (welch, holm) any false
  rejection`` (Holm on each comparison's ``welch_t`` p) and ``maxt (welch) interval``
  (``welch_t`` at ``alpha / C``), and the pooled-variance Dunnett / Tukey it printed before, as
  ``(old)``: it is printed now only under ``--equal-variances``;
* claims at the margin (every comparison's true difference is exactly ``-margin``):
  ``non_inferiority, maxt`` (:func:`protocols.maxt_claims.maxt_claim`),
  ``non_inferiority, holm`` (the Bonferroni ``1 - 2 alpha / C`` t interval), and the old
  read-off of the uncentred max-T interval; the same for equivalence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import COMPARE_METHODS, METHODS_INDEPENDENT, METHODS_PAIRED, Design
from protocols import claims
from protocols import multiplicity as mt
from protocols.analysis.arms import compare_batch
from protocols.analysis.designs.methods_independent import exact_intervals
from protocols.analysis.primary import primary_name, primary_result
from protocols.claims import EXIT_STATUS
from sim.end_to_end import GATE, Sample, tidy

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


def _comparisons(family, arms):
    return mt.many_to_one(arms) if family == "many_to_one" else mt.all_pairs(arms)


@dataclass(frozen=True)
class _Draw:
    """One cell's experiments: per-seed metrics ``x`` (sims, arms, k) (``base`` and
    ``variant`` for ``welch``), each arm's true mean ``mu`` and every experiment's decisions
    (booleans per experiment; claim verdicts per comparison)."""

    x: np.ndarray | None
    mu: np.ndarray
    decisions: dict
    x0: np.ndarray | None = None
    decisions0: dict | None = None


def _paired(k: int) -> Design:
    """Paired seeds, one metric per seed, ``k`` seeds: the design ``evaluate`` reads from
    the paired cells' files."""
    return Design(compare=COMPARE_METHODS, paired=True, runs=int(k))


def _compare(x, design, comps, corrections, rng, **claim):
    """The comparisons of the arms' per-seed metrics ``x`` (sims, arms, k) under
    ``corrections`` as ``evaluate`` computes them (:func:`protocols.analysis.arms.
    compare_batch`: each seed's metric is its one score, ``x[..., None]``)."""
    return compare_batch(x[..., None], design, comps, primary=primary_name(design, False),
                         alpha=ALPHA, corrections=corrections, seed=rng, n_draws=N_FLIPS,
                         **claim)


def _intervals(p, sims, rng):
    arms, k = p["arms"], p["k"]
    mu = _means(arms, p["effect"], p["improved"])
    comps = _comparisons(p["family"], arms)
    truth = mt.contrast_matrix(comps, arms) @ mu
    x = _paired_scores(arms, k, mu, sims, rng)
    # max-T (joint sign flips of the per-seed deltas) and Holm on the same experiments
    batch = _compare(x, _paired(k), comps, ("maxt", "holm"), rng)
    joint = batch.maxt.joint
    old_c = mt.maxt_critical(joint.null, ALPHA, weights=joint.weights)
    old_lo = joint.estimate - old_c[:, None] * joint.se
    old_hi = joint.estimate + old_c[:, None] * joint.se
    null_cols = truth == 0
    decided = {"maxt covered": _covers(*batch.bounds["maxt"], truth),
               "old covered": _covers(old_lo, old_hi, truth),
               "holm covered": _covers(*batch.bounds["holm"], truth)}
    for name in ("maxt", "holm"):
        significant = batch.significant(name, ALPHA)
        if null_cols.any():
            decided[f"{name} false"] = significant[:, null_cols].any(axis=-1)
        if (~null_cols).any():
            decided[f"{name} true"] = significant[:, ~null_cols].any(axis=-1)
    return _Draw(x, mu, decided)


def _intervals_outcomes(p, d, sims):
    out = [_outcome("maxt interval", "coverage", d["maxt covered"].sum(), sims),
           _outcome("uncentred maxt interval (old)", "coverage", d["old covered"].sum(), sims),
           _outcome("bonferroni interval", "coverage", d["holm covered"].sum(), sims)]
    for word, measure in (("false", "rejection"), ("true", "power")):
        out += [_outcome(f"{name} any {word} rejection", measure, d[f"{name} {word}"].sum(),
                         sims) for name in ("maxt", "holm") if f"{name} {word}" in d]
    return out


def _claims(p, sims, rng):
    arms, k, margin, claim = p["arms"], p["k"], p["margin"], p["claim"]
    comps = mt.many_to_one(arms)
    mu = np.zeros(arms)
    mu[1:] = -margin                                   # every comparison at its margin
    x = _paired_scores(arms, k, mu, sims, rng)
    # max-T's exact one-sided claims and the Bonferroni read-off (holm, bonferroni, bh: the
    # t interval at 1 - 2 alpha / C) on the same experiments
    batch = _compare(x, _paired(k), comps, ("maxt", "holm"), rng, claim=claim,
                     margin=margin)
    joint = batch.maxt.joint
    old_c = mt.maxt_critical(joint.null, 2 * ALPHA, weights=joint.weights)
    lo = joint.estimate - old_c[:, None] * joint.se
    hi = joint.estimate + old_c[:, None] * joint.se
    old = claims.claim_verdict(claim, joint.estimate, lo, hi, margin)
    # power: every comparison truly 0 (inside the margin)
    x0 = _paired_scores(arms, k, np.zeros(arms), sims, rng)
    p0 = _compare(x0, _paired(k), comps, ("maxt",), rng, claim=claim, margin=margin)
    return _Draw(x, mu, {"maxt": batch.maxt.claim_verdicts, "holm": batch.claim_verdicts,
                         "old": np.asarray(old)},
                 x0=x0, decisions0={"maxt": p0.maxt.claim_verdicts})


def _claims_outcomes(p, d, sims):
    claim = p["claim"]
    return [_outcome(f"{claim}, maxt", "rejection", (d.decisions["maxt"] == "shown").any(-1)
                     .sum(), sims),
            _outcome(f"{claim}, holm", "rejection", (d.decisions["holm"] == "shown").any(-1)
                     .sum(), sims),
            _outcome(f"{claim}, uncentred maxt interval (old)", "rejection",
                     (d.decisions["old"] == "shown").any(-1).sum(), sims),
            _outcome(f"{claim}, maxt, all shown at delta 0", "power",
                     (d.decisions0["maxt"] == "shown").all(-1).sum(), sims)]


def _unpaired(p, sims, rng):
    arms, k = p["arms"], p["k"]
    comps = _comparisons(p["family"], arms)
    mu = _means(arms, p["effect"], "all") * np.sqrt(2.0)   # sd of a difference of means: 1
    truth = mt.contrast_matrix(comps, arms) @ mu
    x = rng.standard_normal((sims, arms, k)) + mu[:, None]
    # what --equal-variances --correction maxt prints (Dunnett / Tukey, batched)
    ci = exact_intervals(x, comps, ALPHA, p["family"])
    decided = {"exact covered": _covers(ci.low, ci.high, truth)}
    null_cols = truth == 0
    if null_cols.any():
        decided["exact false"] = ((ci.low[:, null_cols] > 0)
                                  | (ci.high[:, null_cols] < 0)).any(axis=-1)
    return _Draw(x, mu, decided)


def _unpaired_outcomes(p, d, sims):
    out = [_outcome("exact interval (dunnett/tukey)", "coverage", d["exact covered"].sum(),
                    sims)]
    if "exact false" in d:
        out.append(_outcome("exact any false rejection", "rejection", d["exact false"].sum(),
                            sims))
    return out


def _arm_sds(p):
    """Each arm's sd: ``p["sds"]``, or 1 with one arm at ``sqrt(ratio)`` (first or last)."""
    if "sds" in p:
        return np.asarray(p["sds"], dtype=float)
    sds = np.ones(p["arms"])
    sds[0 if p["noisy"] == "first" else -1] = np.sqrt(p["ratio"])
    return sds


def _independent(k: int) -> Design:
    """Independent seeds (declared), one metric per seed, ``k`` seeds per arm (the smallest
    arm's): the design ``evaluate`` reads from the cells' files."""
    return Design(compare=COMPARE_METHODS, paired=False, runs=int(k))


def _unpaired_unequal(p, sims, rng):
    """Independent seeds, unequal sds: ``--design methods_independent --correction maxt`` as
    ``evaluate`` computes it (``welch_t`` per comparison, Holm on its p, its interval at
    ``alpha / C``), against the pooled-variance Dunnett / Tukey (old). Effects are in sd of a
    difference of two sd-1 arms' means (as in the ``unpaired`` cells)."""
    arms, k = p["arms"], p["k"]
    comps = _comparisons(p["family"], arms)
    mu = _means(arms, p["effect"], "all") * np.sqrt(2.0)
    truth = mt.contrast_matrix(comps, arms) @ mu
    x = rng.standard_normal((sims, arms, k)) * _arm_sds(p)[:, None] + mu[:, None]
    # welch_t per comparison (k seeds of one per-seed metric each, as evaluate passes
    # them), Holm on its p and its interval at alpha / C
    batch = _compare(x, _independent(k), comps, ("maxt",), rng)
    reject = batch.significant("maxt", ALPHA)
    exact = exact_intervals(x, comps, ALPHA, p["family"])
    decided = {"welch covered": _covers(*batch.bounds["maxt"], truth),
               "old covered": _covers(exact.low, exact.high, truth)}
    null_cols = truth == 0
    if null_cols.any():
        decided["welch false"] = reject[:, null_cols].any(axis=-1)
        decided["old false"] = ((exact.low[:, null_cols] > 0)
                                | (exact.high[:, null_cols] < 0)).any(axis=-1)
    if (~null_cols).any():
        decided["welch true"] = reject[:, ~null_cols].any(axis=-1)
    return _Draw(x, mu, decided)


def _unpaired_unequal_outcomes(p, d, sims):
    out = [_outcome("maxt (welch) interval", "coverage", d["welch covered"].sum(), sims),
           _outcome("exact interval (dunnett/tukey) (old)", "coverage", d["old covered"].sum(),
                    sims)]
    if "welch false" in d:
        out.append(_outcome("maxt (welch, holm) any false rejection", "rejection",
                            d["welch false"].sum(), sims))
        out.append(_outcome("exact any false rejection (old)", "rejection",
                            d["old false"].sum(), sims))
    if "welch true" in d:
        out.append(_outcome("maxt (welch, holm) any true rejection", "power",
                            d["welch true"].sum(), sims))
    return out


def _welch(p, sims, rng):
    """Two arms of independent seeds, unequal counts and spreads: the base arm has sd 1,
    the variant ``sd_ratio``; the true difference ``effect`` (in sd of the base arm)."""
    base = rng.standard_normal((sims, p["k_base"]))
    variant = p["sd_ratio"] * rng.standard_normal((sims, p["k_variant"])) + p["effect"]
    r = primary_result(_independent(min(p["k_base"], p["k_variant"])), base[..., None],
                       variant[..., None], ALPHA, binary=False)
    pv, lo, hi = r.p_value, r.ci_low, r.ci_high
    # ragged arms as one array, the shorter padded with NaN (no seed), as a file has them
    k = max(p["k_base"], p["k_variant"])
    x = np.full((sims, 2, k), np.nan)
    x[:, 0, :p["k_base"]], x[:, 1, :p["k_variant"]] = base, variant
    return _Draw(x, np.array([0.0, p["effect"]]),
                 {"welch covered": (lo <= p["effect"]) & (p["effect"] <= hi),
                  "welch reject": pv < ALPHA})


def _welch_outcomes(p, d, sims):
    measure = "rejection" if p["effect"] == 0 else "power"
    return [_outcome("welch_t interval (unequal k)", "coverage", d["welch covered"].sum(),
                     sims),
            _outcome("welch_t (unequal k)", measure, d["welch reject"].sum(), sims)]


#: each kind of cell: its draw (data and per-experiment decisions) and its outcomes
_KINDS = {"intervals": (_intervals, _intervals_outcomes), "claims": (_claims, _claims_outcomes),
          "unpaired": (_unpaired, _unpaired_outcomes),
          "unpaired_unequal": (_unpaired_unequal, _unpaired_unequal_outcomes),
          "welch": (_welch, _welch_outcomes)}


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Score the decisions of one cell on ``sims`` experiments (see the module docstring)."""
    draw, outcomes = _KINDS[params["kind"]]
    drawn = draw(params, sims, rng)
    return outcomes(params, drawn if params["kind"] == "claims" else drawn.decisions, sims)


def _correction(params: dict) -> str:
    """The correction a sampled paired cell is run under: ``maxt`` and ``holm`` in turn
    over the cells' designs (the cell without its effect), so that both are checked on
    every kind of paired design; a file is run under one ``--correction``."""
    def design(cell):
        return {k: v for k, v in cell.items() if k != "effect"}

    designs = []
    for cell in CELLS:
        if cell["kind"] == params["kind"] and design(cell) not in designs:
            designs.append(design(cell))
    return ("maxt", "holm")[designs.index(design(params)) % 2]


def _names(arms):
    return [f"a{i}" for i in range(arms)]


def _read(body: dict, mu, names, keys) -> dict:
    """The decisions of ``keys`` read from one body: simultaneous intervals covering every
    true difference, any significant comparison whose true difference is 0 (false) or not
    (true), and each comparison's claim verdict."""
    mean = dict(zip(names, mu))
    rows = body["comparisons"]
    truth = [mean[r["variant"]] - mean[r["base"]] for r in rows]
    got = {}
    for key in keys:
        name, _, what = key.rpartition(" ")
        if what == "covered":
            got[key] = all(r["simultaneous_ci_low"] is not None
                           and r["simultaneous_ci_low"] <= t <= r["simultaneous_ci_high"]
                           for r, t in zip(rows, truth))
        elif what in ("false", "true", "reject"):
            null = what == "false"
            got[key] = any(r["significant"] and (t == 0) == null or
                           (what == "reject" and r["significant"]) for r, t in zip(rows, truth))
        elif key.startswith("claim "):
            got[key] = next(r["claim"] for r in rows if r["variant"] == key[len("claim "):])
        elif key == GATE:
            got[key] = body["claim"]["gate_exit_status"]
    return got


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` experiments of the cell as users' files (:mod:`sim.end_to_end`), the same
    draws and decisions as :func:`simulate`.

    Each arm ``a0``, ``a1``, ... is one per-seed metric (``seed,arm,metric``) in sd units
    (``metric_range``), ``a0`` the reference of many-to-one. Paired cells are run under
    ``--correction maxt`` or ``holm`` by turns (:func:`_correction`), the independent ones as
    ``--design methods_independent`` (``--correction maxt``, with ``--equal-variances`` for
    the Dunnett / Tukey cells). Compared: the simultaneous intervals' coverage, any false /
    true rejection, each claim's verdict and the gate (claims cells: the experiments at the margin,
    and under ``maxt`` those at delta 0 too). The ``(old)`` rules are not printed, so not compared.
    """
    kind = params["kind"]
    drawn = _KINDS[kind][0](params, sims, rng)
    arms = drawn.x.shape[1]
    names = _names(arms)
    options = {"metric_range": (-1e6, 1e6)}
    family = params.get("family", "many_to_one")
    if family == "many_to_one" and arms > 2:
        options["reference"] = names[0]
    xs = [drawn.x]
    if kind in ("intervals", "claims"):
        correction = _correction(params)
        options["correction"] = correction
    else:
        options["design"] = METHODS_INDEPENDENT
        correction = "welch" if kind == "welch" else "maxt"
        if kind != "welch":
            options["correction"] = "maxt"
        if kind == "unpaired":
            options["equal_variances"] = True
    if kind == "claims":
        options.update(claim=params["claim"].replace("_", "-"), margin=params["margin"])
        verdicts = drawn.decisions[correction]
        if correction == "maxt":
            # the experiments at delta 0 as well: the grid scores their maxt verdicts
            xs.append(drawn.x0)
            verdicts = np.concatenate([verdicts, drawn.decisions0["maxt"]])
        decided = {f"claim {v}": verdicts[:, j] for j, v in enumerate(names[1:])}
        decided[GATE] = np.where((verdicts == "refuted").any(-1), EXIT_STATUS["refuted"],
                                 np.where((verdicts == "shown").all(-1), EXIT_STATUS["shown"],
                                          EXIT_STATUS["inconclusive"]))
    else:
        prefix = {"intervals": correction, "unpaired": "exact"}.get(kind, "welch")
        decided = {k: v for k, v in drawn.decisions.items() if k.startswith(prefix + " ")}
    x = np.concatenate(xs)
    frames = [tidy(dict(zip(names, x[i])), per_question=False) for i in range(len(x))]
    keys = list(decided)
    return Sample(frames, options, decided, lambda body: _read(body, drawn.mu, names, keys))
