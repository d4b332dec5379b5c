"""``clusters``: ``cluster_cr2``'s verdicts when one cluster of questions dominates.

Two fixed models on ``n = 500`` binary questions (3,000 for 30 clusters with a share of
0.95 or 0.98, which 500 cannot hold) in ``G`` clusters
(:class:`sim.generators.clustered_questions.ClusteredQuestions`), with either the
generator's broken-stick sizes (``share = None``) or one cluster forced to hold a share
``s`` of the questions and the rest split evenly (:func:`dominant_sizes`). The cells use a
strong cluster structure (``icc = 0.3`` on the logit scale, the variant's own effect spread
``sd_effect = 2`` logits), where the cluster effects dominate the variance of the mean: the
setting in which CR2 with one dominant cluster broke (without the dominance rule, 8.75%
false positives at alpha = 5% with s = 0.95 and 15.25% with s = 0.98, 10 clusters, 2,000
experiments each). The share 0.8 is the largest here that gets verdicts (G* = 1.55).

Scored per cell, on the experiments where ``cluster_cr2`` gives a verdict: its false
rejections (effect 0) or power (effect 0.1 = 10 pp), and the coverage of its CI of the
true effect; and the share it refuses (:func:`protocols.methods.cluster_robust.dominance_check`).
The refusal depends on the cluster sizes only, so a cell is refused entirely or not at
all; an outcome over no given verdict is left out rather than reported over 0 experiments.
Two cells put 3 clusters on 100 questions, the shape where the real pool's A/A cell is over
its level: ``evaluate`` refuses there (:func:`protocols.analysis.evidence.real_pitfall`,
inside :func:`protocols.analysis.primary.primary_result`, which both call), and the cells
report that refusal.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import COMPARE_MODELS, MODELS_CLUSTERED, Design
from evalcal_core.validate import check_int, check_number, fail
from protocols.analysis.primary import primary_result
from sim.end_to_end import Sample, tidy
from sim.generators.clustered_questions import ClusteredQuestions

NAME = "clusters"
DESIGN = MODELS_CLUSTERED

#: nominal two-sided level of every decision scored here
ALPHA = 0.05
#: the non-zero effect of the power cells (fraction: 0.1 = 10 pp of accuracy)
EFFECT = 0.1
#: shared settings of every cell: a strong cluster structure (see the module docstring)
_COMMON = {"n": 500, "icc": 0.3, "sd_effect": 2.0, "k": 1}

#: questions where 500 cannot give every small cluster one: 30 clusters with a dominant
#: share of 0.95 or 0.98 (3,000 leaves the 29 others 5 and 2 questions each)
_N_LARGE = 3000


def _n_for(g, share):
    return _N_LARGE if share is not None and round(share * 500) > 500 - (g - 1) else 500


CELLS = [
    {**_COMMON, "n": _n_for(g, share), "clusters": g, "share": share, "effect": effect}
    for g in (10, 30)
    for share in (None, 0.5, 0.8, 0.9, 0.95, 0.98)
    for effect in (0.0, EFFECT)
] + [{**_COMMON, "clusters": 20, "share": None, "effect": effect} for effect in (0.0, EFFECT)]
#: 3 clusters on 100 questions: the real pool's A/A cell of this shape (LiveCodeBench) is over
#: its level, so evaluate labels cluster_cr2 a pitfall there and refuses every verdict
#: (protocols.analysis.evidence.real_pitfall): the cells score that refusal
CELLS += [{**_COMMON, "n": 100, "clusters": 3, "share": None, "effect": effect}
          for effect in (0.0, EFFECT)]

QUICK_CELLS = [
    {**_COMMON, "clusters": 20, "share": None, "effect": 0.0},
    {**_COMMON, "clusters": 10, "share": 0.5, "effect": 0.0},
    {**_COMMON, "clusters": 10, "share": 0.98, "effect": 0.0},
    {**_COMMON, "n": 100, "clusters": 3, "share": None, "effect": 0.0},
]


def dominant_sizes(n: int, clusters: int, share: float) -> np.ndarray:
    """Cluster sizes with one cluster holding ``share`` of the ``n`` questions.

    The largest cluster gets ``round(share * n)`` questions; the other ``clusters - 1``
    split the rest as evenly as possible (sizes differing by at most 1).

    Parameters
    ----------
    n : int
        Questions.
    clusters : int
        Clusters, at least 2.
    share : float
        Fraction of the questions in the dominant cluster, in (0, 1).

    Returns
    -------
    ndarray of int, shape (clusters,)
        Sizes summing to ``n``, the dominant cluster first.

    Raises
    ------
    ValueError
        When a parameter is out of range or the others would get less than one question
        each.
    """
    n = check_int(n, "n", "dominant_sizes", low=2)
    clusters = check_int(clusters, "clusters", "dominant_sizes", low=2, high=n)
    share = check_number(share, "share", "dominant_sizes", low=0, high=1, low_open=True,
                         high_open=True)
    big = int(round(share * n))
    rest = n - big
    if rest < clusters - 1:
        raise fail("share", f"at most {(n - clusters + 1) / n:g} with {clusters} clusters of "
                            f"{n} questions (one question per other cluster)", share,
                   "dominant_sizes")
    small = np.full(clusters - 1, rest // (clusters - 1))
    small[: rest % (clusters - 1)] += 1
    return np.concatenate([[big], small]).astype(np.int64)


@dataclass(frozen=True)
class DominantClusters(ClusteredQuestions):
    """:class:`ClusteredQuestions` whose first cluster holds ``share`` of the questions
    (:func:`dominant_sizes`); everything else as the generator draws it."""

    share: float = 0.5

    @functools.cached_property
    def sizes(self) -> np.ndarray:
        return dominant_sizes(self.n, int(self.n_clusters), self.share)


def generator(params: dict) -> ClusteredQuestions:
    """The cell's generator: broken-stick sizes for ``share = None``, else dominant."""
    common = {"n_questions": params["n"], "n_clusters": params["clusters"],
              "icc": params["icc"], "sd_effect": params["sd_effect"]}
    if params["share"] is None:
        return ClusteredQuestions(**common)
    return DominantClusters(**common, share=params["share"])


def design(params: dict) -> Design:
    """The cell's study design as ``evaluate`` infers it from the cell's files: fixed
    models, ``k`` runs of ``n`` questions in ``clusters`` clusters (a ``topic`` column)."""
    return Design(compare=COMPARE_MODELS, runs=int(params["k"]), n_questions=int(params["n"]),
                  cluster="topic", n_clusters=int(params["clusters"]))


def _draw(params: dict, sims: int, rng):
    """The cell's generator, its ``sims`` experiments and the design's primary protocol
    (``cluster_cr2``) on them, by the function ``evaluate``'s comparisons call
    (:func:`protocols.analysis.primary.primary_result`)."""
    rng = np.random.default_rng(rng)
    gen = generator(params)
    base, variant = gen.draw(sims, int(params["k"]), float(params["effect"]), rng)
    result = primary_result(design(params), base, variant, ALPHA, binary=True,
                            clusters=gen.clusters())
    return gen, base, variant, result


def _decisions(params: dict, result) -> dict:
    """Each experiment's scored decisions: the verdict, the interval's coverage of the
    true effect (fractions) and the refusal (a dominant cluster, or a pitfall at the
    shape on a real pool)."""
    effect = float(params["effect"])
    given = ~result.degenerate
    return {"significant": result.significant & given,
            "covered": given & (result.ci_low <= effect) & (effect <= result.ci_high),
            "refused": ~given}


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Draw ``sims`` experiments of one cell and score ``cluster_cr2`` on them.

    Parameters
    ----------
    params : dict
        One of :data:`CELLS`: ``n``, ``clusters``, ``share`` (None: broken-stick sizes),
        ``effect`` (fraction), ``icc``, ``sd_effect`` (logits), ``k``.
    sims : int
        Experiments, drawn in one vectorized call.
    rng : numpy.random.Generator

    Returns
    -------
    list of dict
        Outcomes (see :mod:`sim.decisions`): ``"cluster_cr2"`` rejection (effect 0) or power,
        and ``"cluster_cr2 interval"`` coverage, both over the given verdicts (left out when
        none is given), and ``"cluster_cr2"`` refused over all ``sims``.
    """
    _, _, _, result = _draw(params, sims, rng)
    decided = _decisions(params, result)
    effect = float(params["effect"])
    n_given = int(sims - decided["refused"].sum())
    out = []
    if n_given:
        # The generator makes the expected gain over the population of questions exactly
        # ``effect``: the interval's target.
        out += [
            {"decision": "cluster_cr2", "measure": "rejection" if effect == 0 else "power",
             "hits": int(decided["significant"].sum()), "sims": n_given, "alpha": ALPHA},
            {"decision": "cluster_cr2 interval", "measure": "coverage",
             "hits": int(decided["covered"].sum()), "sims": n_given, "alpha": ALPHA},
        ]
    out.append({"decision": "cluster_cr2", "measure": "refused",
                "hits": int(decided["refused"].sum()), "sims": int(sims), "alpha": ALPHA})
    return out


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` experiments of the cell as users' files (:mod:`sim.end_to_end`): one run of
    0/1 scores per model on the cell's questions, each question's cluster in a ``topic``
    column, compared with ``--cluster topic``; the same draws and decisions as
    :func:`simulate`."""
    gen, base, variant, result = _draw(params, sims, rng)
    labels = np.array([f"c{c:03d}" for c in gen.clusters()])
    frames = [tidy({"base": base[i], "variant": variant[i]}, clusters=labels)
              for i in range(sims)]
    effect_pp = 100.0 * float(params["effect"])

    def read(body: dict) -> dict:
        row = body["comparisons"][0]
        refused = bool(row["degenerate"])
        return {"significant": bool(row["significant"]) and not refused,
                "covered": (not refused) and row["ci_low"] <= effect_pp <= row["ci_high"],
                "refused": refused}

    return Sample(frames, {"cluster": "topic"}, _decisions(params, result), read)
