"""``models_clustered``: fixed models on questions in correlated clusters; the clusters are
the units.

Max-T flips whole clusters jointly (each cluster's sum scaled so that the mean of the units
is the mean over questions); the leaderboard ranks on cluster means; a stream reads each
cluster once it is complete; d_z is read off the cluster-robust interval of the mean.
"""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import MODELS_CLUSTERED
from protocols import effect_sizes as es
from protocols import joint_null as jn
from protocols import multiplicity as mt

from ._base import N_FLIPS, DesignAnalysis, register


def _cluster_sums(q: np.ndarray, codes: np.ndarray):
    """``(sums, sizes)``: the sum of ``q`` ``(..., n)`` over each cluster's questions
    ``(..., G)`` and each cluster's size."""
    g = int(codes.max()) + 1
    sizes = np.bincount(codes, minlength=g)
    if q.ndim == 2:
        # one experiment (evaluate): each arm's sums in question order, as bincount adds
        return np.stack([np.bincount(codes, weights=row, minlength=g) for row in q]), sizes
    # a batch of experiments (the decision grid): one product with the cluster indicator
    return q @ np.eye(g)[codes], sizes


class ModelsClustered(DesignAnalysis):
    """Fixed checkpoints on questions grouped in correlated clusters."""

    kind = MODELS_CLUSTERED
    # Sign-flip intervals of clusters' sums covered 91-93% with 3-6 effective clusters at
    # real effects (sim.decisions.models_arms): the primary's at alpha / C instead
    sign_flip_intervals = False

    def unit_count(self, design, scores, k):
        """The clusters."""
        return design.n_clusters

    def board_units(self, scores, codes):
        """Each cluster's mean (a cluster is one unit)."""
        sums, sizes = _cluster_sums(scores.scores.mean(axis=1), codes)
        return sums / sizes, "clusters"

    def stream_units(self, scores):
        """The questions with their clusters: the clusters are streamed, each once its last
        question is in (:func:`protocols.analysis.stream.stream_units`)."""
        deltas, times, ids, what, _ = super().stream_units(scores)
        labels = None if scores.clusters is None else np.asarray(scores.clusters)
        return deltas, times, ids, what, labels

    def joint_null(self, x, comps, codes, rng, n_draws=N_FLIPS):
        """Joint sign flips of whole clusters (cluster sums scaled by ``G / n``)."""
        units, weights = self.flip_units(x, comps, codes)
        return jn.paired_signflip_null(units, n_draws, rng=rng, unit_weights=weights)

    def flip_units(self, x, comps, codes):
        """Clusters' sums of the per-question run means scaled by ``G / n``, each weighted
        ``n_g G / n``."""
        q = x.mean(axis=-2)
        sums, sizes = _cluster_sums(q, codes)
        g, n = sums.shape[-1], q.shape[-1]
        return mt.pair_deltas(sums * g / n, comps), sizes * g / n

    def effect_sizes(self, scores, pairs, raw, alpha):
        """d_z from the cluster-robust CI of the mean over the sd: never contradicts the
        verdict."""
        dz = es.cohens_dz_from_mean_ci(self._pair_unit_deltas(scores, pairs),
                                       np.array([r[1] for r in raw]),
                                       np.array([r[2] for r in raw]), alpha)
        return dz.estimate, dz.ci_low, dz.ci_high

    def relative_error_reduction(self, base, variant, estimate, sim_low, sim_high, err,
                                 alpha):
        """The primary's simultaneous interval over the base's error (no per-question
        delta method: the questions are not independent)."""
        return estimate / err, sim_low / err, sim_high / err, ""


DESIGN = register(ModelsClustered())
