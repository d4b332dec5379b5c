"""Many fixed models at once: simultaneous intervals and family-wise errors per correction.

Generator (designs ``models`` and ``models_clustered``): ``a`` fixed models answer the same
``n`` questions once (0/1), or ``runs`` times (decoding repeats, independent given the
question). Question ``q`` in cluster ``g`` has logit difficulty ``u_q +
c_g`` with ``u ~ N(0, 1)`` and ``c ~ N(0, sd_cluster**2)`` (no clusters: ``sd_cluster = 0``
and one question per cluster); model ``i`` answers ``Bernoulli(expit(1 + s_i + u_q +
c_g))``. The shifts ``s_i`` are solved so that the expected accuracies over the question
population differ from model 0's by exactly ``effect`` (a fraction) for every other
model: the truth each comparison's interval must hold.

Decisions scored, as ``evaluate`` computes them (by the function its comparisons call,
:func:`protocols.analysis.arms.compare_batch`, on the drawn experiments):

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
from evalcal_core.options import DEFAULT_SEED
from protocols import multiplicity as mt
from protocols.analysis.arms import compare_batch
from protocols.analysis.designs import N_FLIPS
from protocols.analysis.primary import primary_name
from sim.end_to_end import Sample, tidy

from .clusters import dominant_sizes

NAME = "models_arms"
DESIGN = MODELS

ALPHA = 0.05
ARMS = 5
INTERCEPT = 1.0
#: experiments decided at once: a joint normal null of 10,000 draws holds
#: chunk x 10,000 x comparisons floats (160 MB for 500 experiments of 4 comparisons)
CHUNK = 500
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


def _decide(scores, design, comps, name, clusters) -> dict:
    """The comparisons of ``scores`` (sims, arms, runs, n) under max-T and Holm, decided as
    ``evaluate`` decides each experiment by default: its ``--seed`` (every resampling step
    starts from it) and its 10,000 draws of a sampled null (the clusters' sign flips beyond
    16 clusters, the questions' joint normal law, the sign-flip law of repeats), so that a
    verdict resting on a sampled null is the command's, not another draw's. The draws are
    shared by the experiments (one set per call, as one experiment gets them), in chunks of
    :data:`CHUNK` experiments.

    Returns
    -------
    dict of ndarray, shape (sims, C)
        ``maxt low``/``maxt high`` (the joint null's simultaneous intervals), ``holm
        low``/``holm high`` (the primary's at ``alpha / C``), ``degenerate`` and each
        correction's ``significant``.
    """
    parts = []
    for i in range(0, len(scores), CHUNK):
        b = compare_batch(scores[i:i + CHUNK], design, comps, primary=name, alpha=ALPHA,
                          corrections=("maxt", "holm"), codes=clusters, seed=DEFAULT_SEED,
                          n_draws=N_FLIPS)
        parts.append({"maxt low": b.maxt.low, "maxt high": b.maxt.high,
                      "holm low": b.bounds["holm"][0], "holm high": b.bounds["holm"][1],
                      "degenerate": b.degenerate,
                      "maxt significant": b.significant("maxt", ALPHA),
                      "holm significant": b.significant("holm", ALPHA)})
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


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
    # the design's primary protocol (cluster_cr2, t_signflip_questions, or exact McNemar on
    # one 0/1 run) per comparison and max-T over the design's joint null (joint sign flips
    # of the clusters' scaled sums, or the per-question z statistics' normal law), under
    # max-T and Holm on the same experiments, by the function evaluate's comparisons call
    scores = draws if draws is not None else x[:, :, None, :]
    name = primary_name(design, binary=runs == 1)
    got = _decide(scores, design, comps, name, clusters)
    # the joint null's simultaneous intervals (printed for questions; with clusters evaluate
    # prints cluster_cr2's at alpha / C under max-T too, and these are kept as "(old)")
    covered = ((got["maxt low"] <= truth) & (truth <= got["maxt high"])).all(axis=-1)
    low, high = got["holm low"], got["holm high"]
    refused = got["degenerate"].any(axis=-1)
    given = ~refused
    # a refusal of the design (not a zero SE) leaves no adjusted p under max-T either
    why = getattr(protocols.get(name), "refusal", None)
    maxt_refused = bool(why is not None and why(protocols.ScoreBatch.from_arrays(
        x[0, 0, None], x[0, 1, None], clusters=codes)))
    decided = {"maxt covered": covered,
               "holm covered": ((low <= truth) & (truth <= high)).all(axis=-1) & given,
               "refused": refused,
               "maxt rejection": got["maxt significant"].any(axis=-1) & ~maxt_refused,
               "holm rejection": (got["holm significant"] & given[:, None]).any(axis=-1)}
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
