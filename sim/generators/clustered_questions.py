"""``clustered_questions``: two fixed models on a benchmark whose questions come in clusters."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from evalcal_core.designs import MODELS_CLUSTERED
from evalcal_core.validate import check_int, check_number

from ._base import Generator, register
from .seed_question import _bernoulli_blocks, mean_sigmoid


def cluster_sizes(n: int, clusters: int, min_size: int, concentration: float,
                  rng) -> np.ndarray:
    """Unequal cluster sizes summing to ``n``: ``min_size`` each, the rest Dirichlet-multinomial.

    ``sizes = min_size + Multinomial(n - clusters * min_size, w)`` with cluster shares
    ``w ~ Dirichlet(concentration, ..., concentration)``. ``concentration = 1`` is uniform on
    the simplex (sizes as unequal as broken-stick pieces: the largest of 20 clusters holds
    about 18% of the questions); larger values give more equal sizes.
    """
    w = rng.dirichlet(np.full(clusters, float(concentration)))
    return min_size + rng.multinomial(n - clusters * min_size, w)


@register
@dataclass(frozen=True)
class ClusteredQuestions(Generator):
    """Binary scores of two fixed models on a benchmark of questions grouped in clusters.

    Design kind ``models_clustered``: the compared models are fixed checkpoints, the axis of
    length k holds ``r`` repeated runs of each model on every question (decoding repeats;
    ``k = 1`` is one greedy run), and the questions come in ``n_clusters`` clusters (tasks,
    passages) of unequal sizes. For question ``q`` in cluster ``c``::

        logit p_base[q]    = theta + b_q
        logit p_variant[q] = theta + b_q + beta + g_q
        b_q = sd_question (sqrt(icc) A_c + sqrt(1 - icc) E_q)      difficulty
        g_q = sd_effect   (sqrt(icc) G_c + sqrt(1 - icc) H_q)      the variant's own effect

    with ``A, E, G, H`` independent standard normals. ``icc`` is the intra-cluster
    correlation *on the latent logit scale*, the same for difficulty and for the variant's
    effect: two questions of one cluster have ``corr(b_q, b_q') = corr(g_q, g_q') = icc``;
    questions of different clusters are independent. Each of the k runs of an arm is an
    independent Bernoulli(p) draw per question. ``beta`` is set so that the expected gain in
    accuracy over the population of questions is the cell's effect ``delta`` exactly
    (``beta`` is not 0 at the null: the effect's spread ``sd_effect`` alone changes the mean
    accuracy). At ``delta = 0`` the variant is better on some clusters and worse on others,
    averaging to nothing: the per-question differences are correlated within a cluster
    whenever ``icc > 0``, which is what a test that treats questions as independent ignores.

    What is redrawn: every experiment draws a fresh benchmark from the population (new
    ``A, E, G, H``) and fresh runs. What is fixed: the cluster sizes and which question
    belongs to which cluster (:meth:`clusters`), drawn once from ``cluster_seed``. The sizes
    are the benchmark's design, like ``n_questions``: a cluster-robust test conditions on
    them (CR2's small-sample correction is a function of the sizes), so its false-positive
    rate is a property of one size configuration, reported with it. The clusters' *content*
    is what is sampled: redrawing it is what makes the clusters the independent units.

    Parameters
    ----------
    n_questions : int, default 1000
    n_clusters : int, default 20
    icc : float, default 0.1
        Intra-cluster correlation of difficulty and of the variant's effect, logit scale,
        in [0, 1).
    theta : float, default 1.0
        Logit intercept (baseline accuracy about 0.68 with the defaults).
    sd_question : float, default 2.0
        Spread of question difficulty (logit units).
    sd_effect : float, default 0.5
        Spread of the variant's per-question effect (logit units); 0: a uniform shift.
    min_size : int, default 2
        Smallest cluster.
    concentration : float, default 1.0
        Dirichlet concentration of the cluster shares (see :func:`cluster_sizes`).
    cluster_seed : int, default 0
        Seed of the cluster sizes (fixed for the generator instance).
    """

    n_questions: int = 1000
    n_clusters: int = 20
    icc: float = 0.1
    theta: float = 1.0
    sd_question: float = 2.0
    sd_effect: float = 0.5
    min_size: int = 2
    concentration: float = 1.0
    cluster_seed: int = 0

    name = "clustered_questions"
    binary = True
    #: the study design it simulates (:data:`evalcal_core.designs.KINDS`)
    design = MODELS_CLUSTERED

    def __post_init__(self):
        check_int(self.n_questions, "n_questions", self.owner, low=2, high=10**7)
        check_int(self.n_clusters, "n_clusters", self.owner, low=2, high=self.n_questions)
        check_int(self.min_size, "min_size", self.owner, low=1,
                  high=self.n_questions // self.n_clusters)
        check_number(self.icc, "icc", self.owner, low=0, high=1, high_open=True)
        check_number(self.theta, "theta", self.owner, low=-20, high=20)
        check_number(self.sd_question, "sd_question", self.owner, low=0, high=20)
        check_number(self.sd_effect, "sd_effect", self.owner, low=0, high=20)
        check_number(self.concentration, "concentration", self.owner, low=0, low_open=True,
                     high=1e6)
        check_int(self.cluster_seed, "cluster_seed", self.owner, low=0)

    @property
    def n(self) -> int:
        return int(self.n_questions)

    @functools.cached_property
    def sizes(self) -> np.ndarray:
        """Questions per cluster, shape ``(n_clusters,)``, fixed for this instance."""
        rng = np.random.default_rng(np.random.SeedSequence(
            int(self.cluster_seed), spawn_key=(0x636c75,)))
        return cluster_sizes(self.n, int(self.n_clusters), int(self.min_size),
                             self.concentration, rng)

    def clusters(self) -> np.ndarray:
        """Cluster code of each question, int shape ``(n,)``: cluster ``c`` is a contiguous
        block of ``sizes[c]`` questions (the order of questions carries no meaning)."""
        return np.repeat(np.arange(int(self.n_clusters)), self.sizes)

    def expected_accuracy(self, beta: float | None = None) -> float:
        """Expected accuracy (fraction) of the baseline (``beta=None``) or of the variant
        shifted by ``beta`` (logit), over the population of questions."""
        if beta is None:
            return float(mean_sigmoid(self.theta, self.sd_question**2))
        return float(mean_sigmoid(self.theta + beta, self.sd_question**2 + self.sd_effect**2))

    def check_effect(self, delta):
        base = self.expected_accuracy()
        check_number(delta, "effect", self.owner, low=-base, high=1 - base, low_open=True,
                     high_open=True)

    def beta_for(self, delta: float) -> float:
        """Logit shift whose expected accuracy gain is ``delta`` (fraction)."""
        if self.sd_effect == 0 and delta == 0:
            return 0.0
        target = self.expected_accuracy() + delta
        return optimize.brentq(lambda b: self.expected_accuracy(b) - target, -60.0, 60.0,
                               xtol=1e-12)

    def _draw(self, sims, k, delta, rng):
        n, g = self.n, int(self.n_clusters)
        codes = self.clusters()
        beta = self.beta_for(delta)
        s_c, s_q = np.sqrt(self.icc), np.sqrt(1 - self.icc)
        # Cluster components first (sims x G each), then question components: a changed
        # cluster count does not shift the question draws of an unchanged one by much, and
        # the order is fixed, so the draw is reproducible.
        cl = rng.standard_normal((sims, 2, g))
        latent = rng.standard_normal((sims, 2, n))
        latent *= s_q
        latent += s_c * cl[:, :, codes]
        base_logit = self.theta + self.sd_question * latent[:, 0]
        var_logit = base_logit + beta + self.sd_effect * latent[:, 1]
        del latent
        # Probabilities broadcast over the k runs; bool 0/1 scores drawn in blocks.
        p_b = np.broadcast_to(special.expit(base_logit)[:, None, :], (sims, k, n))
        p_v = np.broadcast_to(special.expit(var_logit)[:, None, :], (sims, k, n))
        return _bernoulli_blocks(p_b, rng), _bernoulli_blocks(p_v, rng)

