"""``models_clustered``: two fixed checkpoints on G clusters of m questions (``--cluster-size
m --sd-cluster``), r repeats per question.

Solved as the ``clusters`` problem (:meth:`ModelsClusteredDesign.problem`): G clusters of m
questions, the cluster means of the delta playing the seeds' part. A cluster's mean delta is
``mu + g + (question and interaction deltas of its m questions) + repeat noise``, so with
seeds -> clusters (k = G), n -> m (fixed), ``sd_seed -> sd_cluster``, ``sd_inter ->
sqrt(sd_question**2 + sd_inter**2)``, ``sd_question -> 0`` and a seed cost of 0::

    Var(mean D) = sd_cluster**2 / G + (sd_question**2 + sd_inter**2) / (G m)
                  + sd_repeat**2 / (G m r)

-- the design effect form ``Var_iid (1 + (m - 1) icc)`` with ``icc = sd_cluster**2 /
(sd_cluster**2 + sd_question**2 + sd_inter**2 + sd_repeat**2 / r)`` -- and the test is the t
on the G cluster-mean deltas (G - 1 df); the cost ``2 G m (question + r repeat)``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from evalcal_core.designs import MODELS_CLUSTERED
from evalcal_core.validate import check_int, fail

from . import clusters
from ._base import POPULATION, PlanDesign, choices, get, register


def _rows(table, m):
    # the problem's k are clusters; n is the total G m
    if table is None:
        return None
    out = table.rename(columns={"k": DESIGN.first_column})
    out["n"] = out[DESIGN.first_column] * m
    return out


class ModelsClusteredDesign(PlanDesign):
    """Clustered questions of two fixed models, searched as :attr:`solved_as`."""

    def inner_components(self, comp):
        """``comp`` (with ``sd_cluster``) in the terms of the problem solved: ``sd_seed`` the
        cluster spread, the question spread in the interaction, ``sd_question`` 0."""
        return dataclasses.replace(comp, sd_seed=comp.sd_cluster, sd_question=0.0,
                                   sd_inter=math.hypot(comp.sd_question, comp.sd_inter),
                                   sd_cluster=0.0)

    def variance(self, comp, k, n, r, estimand):
        """Of G = k clusters of m = n questions (module docstring)."""
        return get(self.solved_as).variance(self.inner_components(comp), k, n, r, estimand)

    def cost(self, costs, k, n, r):
        """``2 G m (question + r repeat)``: no seed paid."""
        return get(self.solved_as).cost(dataclasses.replace(costs, seed=0.0), k, n, r)

    def room(self, budget, costs, k):
        return get(self.solved_as).room(budget, dataclasses.replace(costs, seed=0.0), k)

    def draw_normal(self, comp, sims, k, n, r, delta, rng, estimand):
        """Cluster-mean deltas ``(sims, G)`` (as the problem solved draws them)."""
        return get(self.solved_as).draw_normal(self.inner_components(comp), sims, k, n, r,
                                               delta, rng, estimand)

    def grid_axes(self, problem, config, r, ks, ns):
        """Rows: repeats r; columns: the total questions G m of G = k_min .. k_max clusters
        (60 on a log scale)."""
        c, m = problem, config.cluster_size
        rs = np.arange(1, c.r_max + 1) if ks is None else np.asarray(ks)
        gs = (np.unique(np.geomspace(c.k_min, c.k_max, 60).round().astype(int))
              if ns is None else np.asarray(ns) // m)
        return rs, gs * m, (gs[None, :], m, rs[:, None])

    def validate(self, config, n_limit):
        """``--cluster-size`` in [1, ``n_limit``], room for ``--k-min`` clusters in
        ``--n-max``, and stated components (no generator or pilot model)."""
        check_int(config.cluster_size, "--cluster-size", low=1, high=n_limit)
        check_int(config.n_max, "--n-max", low=config.k_min * config.cluster_size,
                  high=n_limit)
        if config.model is not None:
            others = " or ".join(name for name in choices() if not get(name).clustered)
            raise fail("--design", f"{others} with --from-pilot or --param ({self.name} "
                       "takes stated components)", config.design)

    def problem(self, config):
        """The ``clusters`` problem of ``config``: seeds -> clusters, n -> m (fixed), the
        components of :meth:`inner_components`, a seed cost of 0, no model (module
        docstring); solved unvalidated."""
        m = config.cluster_size
        return dataclasses.replace(config, design=self.solved_as,
                                   components=self.inner_components(config.components),
                                   model=None, costs=dataclasses.replace(config.costs, seed=0.0),
                                   n_min=m, n_max=m, k_max=min(config.k_max, config.n_max // m))

    def plan_of(self, inner, config):
        """The problem's plan in clusters: column ``clusters`` for ``k``, ``n`` the total
        G m; the components are those stated."""
        m = config.cluster_size
        chosen = None
        if inner.chosen is not None:
            chosen = dict(inner.chosen, clusters=inner.chosen["k"], n=inner.chosen["k"] * m)
            del chosen["k"]
        return dataclasses.replace(inner, config=config, components=config.components,
                                   designs=_rows(inner.designs, m), chosen=chosen,
                                   checked=_rows(inner.checked, m), problem=inner.config)


DESIGN = register(ModelsClusteredDesign(
    name=MODELS_CLUSTERED, summary="questions in clusters of --cluster-size", order=2,
    kind=MODELS_CLUSTERED, seeds=False, seed_axis=True, clustered=True,
    estimands=(POPULATION,), n_min_low=1, solved_as=clusters.DESIGN.name,
    default_costs={"question": 1.0}, paid=("question", "repeat"),
    noise=("sd_question", "sd_inter", "sd_repeat", "sd_cluster"),
    test="t on the G cluster-mean deltas (G - 1 df)",
    cost_words="2 n (question + r repeat), n = G x cluster size",
    first_column="clusters", letter="G",
    chosen_head="G = {clusters} clusters of {m}, ", bounds_head="G in [{k_min}, {k_max}], ",
    estimand_words={
        POPULATION: "the two checkpoints' mean delta over the population of question "
                    "clusters the G are drawn from",
    },
    own_line=("clusters of {m} questions: design effect 1 + (m - 1) icc with icc = {icc:.4f} "
              "at r = 1"),
))
