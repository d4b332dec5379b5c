"""Many fixed models at once: simultaneous intervals and family-wise errors per correction.

Generator (designs ``models`` and ``models_clustered``): ``a`` fixed models answer the same
``n`` questions once (0/1), or ``runs`` times (decoding repeats, independent given the
question). Question ``q`` in cluster ``g`` has logit difficulty ``u_q +
c_g`` with ``u ~ N(0, 1)`` and ``c ~ N(0, sd_cluster**2)`` (no clusters: ``sd_cluster = 0``
and one question per cluster); model ``i`` answers ``Bernoulli(expit(1 + s_i + u_q +
c_g))``. The shifts ``s_i`` are solved so that the expected accuracies over the question
population differ from model 0's by exactly ``effect`` (a fraction) for every other
model: the truth each comparison's interval must hold.

Decisions scored, as ``evaluate`` computes them:

* ``maxt interval`` — :func:`protocols.multiplicity.simultaneous_ci` on the joint
  multivariate-t law of the per-question t (``models``); with clusters ``evaluate`` prints
  ``cluster_cr2``'s Bonferroni intervals under max-T too (``holm and maxt interval``), and
  the sign-flip intervals of the clusters' scaled sums are kept as ``(old)``: they covered
  91-93% with 3-6 effective clusters;
* ``holm interval`` — the primary protocol's interval at ``alpha / C`` (exact
  ``mcnemar``'s for one run; with repeats ``t_signflip_questions``'s, the per-question t
  interval of the run means; or ``cluster_cr2``'s), and ``holm any false rejection`` from
  its raw p (with repeats the larger of the t's and the sign-flip test's);
* with repeats, ``maxt any ... rejection`` needs the primary's own p to agree, as in
  ``evaluate``;
* the family-wise errors at effect 0 and the power otherwise;
* a dominant cluster (``sizes="dominant"``: one cluster holds ``share`` of the questions,
  3 models): ``cluster_cr2`` refuses its verdict, and ``evaluate`` prints no adjusted p
  beside the refusal under either correction: ``holm no verdict`` and ``maxt no verdict``
  (``refused``), the rates over the experiments given a verdict (none).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

import protocols
from evalcal_core.designs import COMPARE_MODELS, MODELS, MODELS_CLUSTERED, Design
from protocols import multiplicity as mt
from protocols.analysis import designs
from protocols.analysis.primary import primary_name, primary_result
from sim.end_to_end import Sample, tidy

from .clusters import dominant_sizes

NAME = "models_arms"
DESIGN = MODELS

ALPHA = 0.05
ARMS = 5
INTERCEPT = 1.0
N_DRAWS = 2_000
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(80)

CELLS = (
    [{"clusters": 0, "n": n, "effect": e, "sd_cluster": 0.0, "sizes": "equal"}
     for n in (100, 1000) for e in (0.0, 0.02, 0.05, 0.1)]
    + [{"clusters": g, "n": 500, "effect": e, "sd_cluster": 0.7, "sizes": sizes}
       for g in (10, 30) for sizes in ("equal", "unequal") for e in (0.0, 0.05)]
    # repeats: the primary is t_signflip_questions, on small benchmarks too
    + [{"clusters": 0, "n": n, "effect": e, "sd_cluster": 0.0, "sizes": "equal", "runs": r}
       for n in (30, 200) for r in (2, 4) for e in (0.0, 0.1)]
)
#: one cluster of 10 holds 95% of 500 questions (G* = 1.11 < 1.5): cluster_cr2 refuses
_DOMINANT = {"clusters": 10, "n": 500, "sd_cluster": 0.7, "sizes": "dominant", "share": 0.95,
             "arms": 3}
CELLS += [{**_DOMINANT, "effect": e} for e in (0.0, 0.05)]
QUICK_CELLS = [CELLS[1], {"clusters": 10, "n": 500, "effect": 0.05, "sd_cluster": 0.7,
                          "sizes": "unequal"}, {**_DOMINANT, "effect": 0.0}]


def expected_accuracy(shift: float, sd: float) -> float:
    """Expected accuracy (fraction) of a model with logit ``shift`` when the difficulty is
    ``N(0, sd**2)`` (Gauss-Hermite, 80 nodes)."""
    return float(special.expit(INTERCEPT + shift + sd * _GH_X) @ _GH_W / math.sqrt(2 * math.pi))


def shift_for(effect: float, sd: float) -> float:
    """The logit shift whose expected accuracy exceeds model 0's by ``effect``."""
    base = expected_accuracy(0.0, sd)
    return float(optimize.brentq(lambda s: expected_accuracy(s, sd) - base - effect,
                                 -10.0, 10.0, xtol=1e-14))


def _codes(p, rng):
    n, g = p["n"], p["clusters"]
    if g == 0:
        return np.arange(n)
    if p["sizes"] == "equal":
        return np.repeat(np.arange(g), n // g)[:n] if n % g == 0 else np.arange(n) % g
    if p["sizes"] == "dominant":
        return np.repeat(np.arange(g), dominant_sizes(n, g, p["share"]))
    sizes = 1 + rng.multinomial(n - g, rng.dirichlet(np.ones(g)))
    return np.repeat(np.arange(g), sizes)


def _outcome(decision, measure, hits, sims):
    return {"decision": decision, "measure": measure, "hits": int(hits), "sims": int(sims),
            "alpha": ALPHA}


@dataclass(frozen=True)
class _Draw:
    """One cell's experiments: the scores, the cluster of each question, and every
    experiment's decisions (booleans of shape (sims,); ``maxt refused`` is the cell's)."""

    x: np.ndarray
    draws: np.ndarray | None
    codes: np.ndarray
    decisions: dict
    maxt_refused: bool


def _draw(params: dict, sims: int, rng) -> _Draw:
    """Draw ``sims`` experiments of one cell and decide each as ``evaluate`` does (see the
    module docstring)."""
    n, g = params["n"], params["clusters"]
    arms = int(params.get("arms", ARMS))
    sd_total = math.hypot(1.0, params["sd_cluster"])
    shifts = np.r_[0.0, np.full(arms - 1, shift_for(params["effect"], sd_total))]
    codes = _codes(params, rng)          # one cluster layout per block of experiments
    groups = int(codes.max()) + 1
    u = rng.standard_normal((sims, 1, n))
    if g:
        u = u + params["sd_cluster"] * rng.standard_normal((sims, 1, groups))[..., codes]
    prob = special.expit(INTERCEPT + shifts[:, None] + u)
    runs = int(params.get("runs", 1))
    if runs > 1:
        # r decoding runs per question: each arm's (runs, n) scores; the joint null and the
        # simultaneous intervals read the per-question run means, as evaluate does
        draws = (rng.random((sims, arms, runs, n)) < prob[:, :, None, :]).astype(np.float64)
        x = draws.mean(axis=2)
    else:
        draws = None
        x = (rng.random((sims, arms, n)) < prob).astype(np.float64)
    comps = mt.many_to_one(arms)
    c = len(comps)
    truth = np.full(c, params["effect"])
    design = Design(compare=COMPARE_MODELS, runs=runs, n_questions=n,
                    cluster="topic" if g else None, n_clusters=g)
    clusters = codes if g else None
    # the design's joint null as evaluate's max-T builds it (the hook it calls): joint sign
    # flips of the clusters' scaled sums, or the per-question z statistics' normal law
    scores = draws if draws is not None else x[:, :, None, :]
    joint = designs.of(design).joint_null(scores, comps, clusters, rng, n_draws=N_DRAWS)
    # the design's primary protocol (cluster_cr2, t_signflip_questions, or exact McNemar on
    # one 0/1 run), called by the function evaluate's comparisons call
    name = primary_name(design, binary=runs == 1)
    ci = mt.simultaneous_ci(joint, ALPHA)
    covered = ((ci.low <= truth) & (truth <= ci.high)).all(axis=-1)
    # the primary protocol per comparison: raw p (Holm) and its interval at alpha / C
    raw_p = np.empty((sims, c))
    low = np.empty((sims, c))
    high = np.empty((sims, c))
    refused = np.zeros(sims, dtype=bool)
    for j, (i, b) in enumerate(comps):
        if draws is not None:
            base, var = draws[:, b], draws[:, i]
            # its p does not depend on the level and its interval is the per-question t's:
            # the sign-flip law is drawn once per comparison
            r0 = primary_result(design, base, var, ALPHA, name=name, clusters=clusters,
                                rng=rng)
            raw_p[:, j] = r0.p_value
            # t_signflip_questions' interval is paired_t_questions' (no second sign-flip law)
            r = protocols.get("paired_t_questions").evaluate(base, var, ALPHA / c, rng=rng)
            refused |= np.asarray(r0.degenerate)
        else:
            base, var = x[:, b, None, :], x[:, i, None, :]
            raw_p[:, j] = primary_result(design, base, var, ALPHA, name=name,
                                         clusters=clusters, rng=rng).p_value
            r = primary_result(design, base, var, ALPHA / c, name=name, clusters=clusters,
                               rng=rng)
        low[:, j], high[:, j] = r.ci_low, r.ci_high
        refused |= np.asarray(r.degenerate)
    given = ~refused
    holm = mt.adjust(np.where(np.isnan(raw_p), 1.0, raw_p), "holm")
    p_maxt = mt.maxt_adjust(joint)
    # a refusal of the design (not a zero SE) leaves no adjusted p under max-T either
    why = getattr(protocols.get(name), "refusal", None)
    maxt_refused = bool(why is not None and why(protocols.ScoreBatch.from_arrays(
        x[0, 0, None], x[0, 1, None], clusters=codes)))
    if runs > 1 and not g:
        # evaluate's max-T for fixed models with repeats: the primary's own p must agree
        p_maxt = np.fmax(p_maxt, np.where(np.isnan(raw_p), 1.0, raw_p))
    decided = {"maxt covered": covered,
               "holm covered": ((low <= truth) & (truth <= high)).all(axis=-1) & given,
               "refused": refused,
               "maxt rejection": (p_maxt < ALPHA).any(axis=-1) & ~maxt_refused,
               "holm rejection": ((holm < ALPHA) & given[:, None]).any(axis=-1)}
    return _Draw(x, draws, codes, decided, maxt_refused)


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Score the decisions of one cell on ``sims`` experiments (see the module docstring)."""
    drawn = _draw(params, sims, rng)
    d = drawn.decisions
    g = params["clusters"]
    given = ~d["refused"]
    # evaluate prints the sign-flip intervals for questions only; with clusters it prints
    # the primary protocol's at alpha / C (the "holm interval" below): the sign-flip ones
    # are kept for contrast
    maxt_name = "maxt sign-flip interval (old)" if g else "maxt interval"
    out = [_outcome(maxt_name, "coverage", d["maxt covered"].sum(), sims),
           _outcome("holm interval" if not g else "holm and maxt interval", "coverage",
                    d["holm covered"].sum(), given.sum()),
           _outcome("holm no verdict", "refused", d["refused"].sum(), sims)]
    if drawn.maxt_refused:
        out.append(_outcome("maxt no verdict", "refused", sims, sims))
    measure = "rejection" if params["effect"] == 0 else "power"
    word = "false" if params["effect"] == 0 else "true"
    out.append(_outcome(f"maxt any {word} rejection", measure,
                        d["maxt rejection"].sum(), 0 if drawn.maxt_refused else sims))
    out.append(_outcome(f"holm any {word} rejection", measure, d["holm rejection"].sum(),
                        given.sum()))
    return [o for o in out if o["sims"] > 0]


def _correction(params: dict) -> str:
    """The correction a sampled cell is run under: ``maxt`` and ``holm`` in turn over the
    cells' designs (the cell without its effect), so that both are checked on questions,
    clusters and repeats; a file is run under one ``--correction``."""
    designs = []
    for cell in CELLS:
        design = {k: v for k, v in cell.items() if k != "effect"}
        if design not in designs:
            designs.append(design)
    return ("maxt", "holm")[designs.index({k: v for k, v in params.items()
                                          if k != "effect"}) % 2]


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` experiments of the cell as users' files (:mod:`sim.end_to_end`), the same
    draws and decisions as :func:`simulate`: models ``a0``, ``a1``, ... with one row per
    run and question (0/1 scores), each question's cluster in a ``topic`` column, compared
    with ``--design models --reference a0`` (``--design models_clustered --cluster topic``
    with clusters) under ``maxt`` or ``holm`` by turns (:func:`_correction`).

    Compared: the printed simultaneous intervals' coverage of the true difference (with
    clusters, ``cluster_cr2``'s at ``alpha / C`` under either correction; the sign-flip
    intervals ``(old)`` are not printed), any significant comparison, and the refusal.
    """
    drawn = _draw(params, sims, rng)
    correction = _correction(params)
    g = params["clusters"]
    arms = drawn.x.shape[1]
    names = [f"a{i}" for i in range(arms)]
    scores = drawn.draws if drawn.draws is not None else drawn.x[:, :, None, :]
    labels = np.array([f"c{c:03d}" for c in drawn.codes]) if g else None
    frames = [tidy(dict(zip(names, scores[i])), clusters=labels) for i in range(sims)]
    options = {"design": MODELS_CLUSTERED if g else MODELS, "reference": names[0],
               "correction": correction}
    if g:
        options["cluster"] = "topic"
    d = drawn.decisions
    covered = "holm covered" if g or correction == "holm" else "maxt covered"
    decided = {"covered": d[covered], "refused": d["refused"],
               "rejection": d[f"{correction} rejection"]}
    truth = 100.0 * float(params["effect"])      # the JSON's pp

    def read(body: dict) -> dict:
        rows = body["comparisons"]
        return {"covered": all(r["simultaneous_ci_low"] is not None
                               and r["simultaneous_ci_low"] <= truth
                               <= r["simultaneous_ci_high"] for r in rows),
                "refused": any(r["degenerate"] for r in rows),
                "rejection": any(r["significant"] for r in rows)}

    return Sample(frames, options, decided, read)
