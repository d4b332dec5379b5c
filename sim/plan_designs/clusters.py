"""``clusters``: the form ``models_clustered`` is searched as (not a ``--design`` choice).

G clusters of m questions of two fixed models read as the ``methods`` problem with clusters
for seeds (:meth:`sim.plan_designs.models_clustered.ModelsClusteredDesign.problem`): k = G
units, n = m questions each, ``sd_seed`` holding the cluster spread and ``sd_question`` 0; the
test is the t on the k unit-mean deltas (k - 1 df), not the two-level t.
"""

from __future__ import annotations

import math

from ._base import POPULATION, PlanDesign, register


class ClustersDesign(PlanDesign):
    """A nested design: units (clusters) of n questions."""

    def variance(self, comp, k, n, r, estimand):
        """``sa2/k + sc2/n + si2/(k n) + sr2/(k n r)`` (``sc2`` is 0 in this form)."""
        sa2, sc2, si2, sr2 = (comp.sd_seed**2, comp.sd_question**2, comp.sd_inter**2,
                              comp.sd_repeat**2)
        return sa2 / k + sc2 / n + si2 / (k * n) + sr2 / (k * n * r)

    def df(self, k, n, estimand):
        """The t on the k unit-mean deltas: k - 1."""
        return k - 1 + 0 * (k + n)

    def draw_normal(self, comp, sims, k, n, r, delta, rng, estimand):
        """Unit-mean deltas ``(sims, k)``: only the means the t reads are drawn
        (``sd_question`` is 0 here)."""
        within = math.sqrt(comp.sd_inter**2 + comp.sd_repeat**2 / r)
        return (delta + comp.sd_seed * rng.standard_normal((sims, k))
                + within / math.sqrt(n) * rng.standard_normal((sims, k)))


DESIGN = register(ClustersDesign(
    name="clusters", summary="the searched form of models_clustered", order=3, kind=None,
    choosable=False, seeds=False, seed_axis=True, estimands=(POPULATION,),
    default_costs={"question": 1.0}, paid=("question", "repeat"),
    noise=("sd_question", "sd_inter", "sd_repeat", "sd_cluster"),
    test="t on the k unit-mean deltas (k - 1 df)",
    cost_words="2 k (seed + n (question + r repeat)), seed 0",
))
