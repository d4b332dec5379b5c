"""``models``: two fixed checkpoints scored on n questions, r repeats per question
(:mod:`sim.plan_model`'s docstring).

No seeds (k is fixed at 1, ``sd_seed`` does not enter), a question's interaction is part of
its effect; the test is the paired t on the n per-question deltas (n - 1 df).
"""

from __future__ import annotations

import math

import numpy as np

from evalcal_core.designs import MODELS

from ._base import POPULATION, PlanDesign, register


class ModelsDesign(PlanDesign):
    """Independent questions of two fixed models."""

    def units(self, k, n):
        """The n questions (one draw per question: no seeds)."""
        return n

    def variance(self, comp, k, n, r, estimand):
        """``(sc2 + si2)/n + sr2/(n r)`` (k is ignored: no seeds)."""
        sc2, si2, sr2 = comp.sd_question**2, comp.sd_inter**2, comp.sd_repeat**2
        return (sc2 + si2) / n + sr2 / (n * r) + 0 * k

    def df(self, k, n, estimand):
        """The paired t on the n per-question deltas: n - 1."""
        return n - 1 + 0 * (k + n)

    def cost(self, costs, k, n, r):
        """``2 n (question + r repeat)``: no seeds trained."""
        return 2 * n * (costs.question + r * costs.repeat) + 0 * k

    def room(self, budget, costs, k):
        """Half the budget (both arms), no seed paid."""
        return budget / 2

    def largest_k(self, config):
        return 1

    def draw_normal(self, comp, sims, k, n, r, delta, rng, estimand):
        """Per-question deltas ``(sims, n)`` (each the mean of r repeats)."""
        sd = math.sqrt(comp.sd_question**2 + comp.sd_inter**2 + comp.sd_repeat**2 / r)
        return delta + sd * rng.standard_normal((sims, n))

    def grid_axes(self, problem, config, r, ks, ns):
        """Rows: repeats r in the bounds; columns: questions n (60 on a log scale)."""
        c = problem
        if ns is None:
            ns = np.unique(np.geomspace(c.n_min, c.n_max, 60).round().astype(int))
        rs = np.arange(1, c.r_max + 1) if ks is None else np.asarray(ks)
        return rs, ns, (1, ns[None, :], rs[:, None])


DESIGN = register(ModelsDesign(
    name=MODELS, summary="two fixed checkpoints", order=1, kind=MODELS,
    seeds=False, seed_axis=False, estimands=(POPULATION,), registry_tested=False,
    default_costs={"question": 1.0}, paid=("question", "repeat"),
    noise=("sd_question", "sd_inter", "sd_repeat", "sd_cluster"),
    test="paired t on the n per-question deltas (n - 1 df)",
    cost_words="2 n (question + r repeat)",
    first_column="k", letter="k",
    estimand_words={
        POPULATION: "the two checkpoints' mean delta over the population of questions "
                    "the n are drawn from (not only these n questions)",
    },
))
