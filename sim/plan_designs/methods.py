"""``methods``: two training methods compared on k paired seeds per arm, each seed's runs
scored on the same n questions, r repeats per question (:mod:`sim.plan_model`'s docstring).

The only design with two estimands (``questions``, the default, and ``population``), each
tested by the registry protocol ``evaluate`` prints for it on the ``(k, n)`` cell-mean deltas.
"""

from __future__ import annotations

import math

import numpy as np

from evalcal_core.designs import METHODS_PAIRED

from ._base import (
    ESTIMAND_TESTS,
    ESTIMANDS,
    POPULATION,
    QUESTIONS,
    PlanDesign,
    register,
    where_printed,
)


class MethodsDesign(PlanDesign):
    """Crossed seeds and questions (the seed-question array exchangeable)."""

    def variance(self, comp, k, n, r, estimand):
        """``sa2/k + sc2/n + si2/(k n) + sr2/(k n r)`` for ``population``; without ``sc2/n``
        for ``questions`` (the questions are not resampled)."""
        sa2, sc2, si2, sr2 = (comp.sd_seed**2, comp.sd_question**2, comp.sd_inter**2,
                              comp.sd_repeat**2)
        if estimand == QUESTIONS:
            sc2 = 0.0
        return sa2 / k + sc2 / n + si2 / (k * n) + sr2 / (k * n * r)

    def df(self, k, n, estimand):
        """``paired_t`` on the k per-seed deltas (k - 1) for ``questions``; ``None`` for
        ``population`` (the two-level t's power is a quadrature over its mean squares)."""
        return k - 1 + 0 * (k + n) if estimand == QUESTIONS else None

    def draw_normal(self, comp, sims, k, n, r, delta, rng, estimand):
        """Cell-mean deltas ``(sims, k, n)``; for ``questions`` the question effects are
        centred on their mean (``delta`` is the effect on the drawn questions)."""
        within = math.sqrt(comp.sd_inter**2 + comp.sd_repeat**2 / r)
        questions = comp.sd_question * rng.standard_normal((sims, 1, n))
        if estimand == QUESTIONS:
            questions -= questions.mean(axis=-1, keepdims=True)
        return (delta + comp.sd_seed * rng.standard_normal((sims, k, 1)) + questions
                + within * rng.standard_normal((sims, k, n)))

    def grid_axes(self, problem, config, r, ks, ns):
        """Rows: seeds k in the bounds; columns: questions n (60 on a log scale); r the
        chosen design's."""
        c = problem
        if ns is None:
            ns = np.unique(np.geomspace(c.n_min, c.n_max, 60).round().astype(int))
        ks = np.arange(c.k_min, c.k_max + 1) if ks is None else np.asarray(ks)
        return ks, ns, (ks[:, None], ns[None, :], r)


DESIGN = register(MethodsDesign(
    name="methods", summary="k paired seeds", order=0, kind=METHODS_PAIRED,
    seeds=True, seed_axis=True, estimands=ESTIMANDS, registry_tested=True,
    default_costs={"seed": 1.0}, paid=("seed", "question", "repeat"),
    noise=("sd_seed", "sd_inter", "sd_repeat"),
    tests={
        QUESTIONS: (f"{ESTIMAND_TESTS[QUESTIONS]} on the k per-seed mean deltas (k - 1 df; "
                    "questions fixed)"),
        POPULATION: (f"{ESTIMAND_TESTS[POPULATION]} (seeds and questions random; at least 4 "
                     "questions)"),
    },
    cost_words="2 k (seed + n (question + r repeat))",
    first_column="k", letter="k",
    chosen_head="k = {k} seeds per arm, ", bounds_head="k in [{k_min}, {k_max}], ",
    estimand_words={
        QUESTIONS: "the effect on these n questions (fixed; training seeds random), "
                   f"tested by {ESTIMAND_TESTS[QUESTIONS]} on the k per-seed mean "
                   f"deltas -- {where_printed(QUESTIONS)}",
        POPULATION: "the population mean delta, over the population of questions "
                    "the benchmark's n are drawn from and of training seeds, tested "
                    f"by {ESTIMAND_TESTS[POPULATION]} -- {where_printed(POPULATION)}",
    },
    power_words={
        QUESTIONS: ("power: exact for paired_t under the normal model (noncentral t, k - 1 "
                    "df, variance sd_seed^2/k + sd_inter^2/(k n) + sd_repeat^2/(k n r): the "
                    "question spread does not enter), at the effect on the questions scored; "
                    "at effect 0 it is alpha"),
        POPULATION: ("power: of Hsu's two-level t (mean delta / sqrt(var(per-seed deltas) / k "
                     "+ var(per-question deltas) / n), min(k, n) - 1 df), exact under the "
                     "normal model and conservative: paired_two_level, which evaluate prints, "
                     "has at least this power in the cells checked (see the check column); at "
                     "effect 0 it is the size (<= alpha)"),
    },
    check_words={
        # two powers side by side read as two answers: say which one the plan stands on
        POPULATION: ("power column: the closed form (Hsu's t), the plan's answer; the check "
                     f"column simulates {ESTIMAND_TESTS[POPULATION]} as evaluate prints it at "
                     "each design (a different, less conservative test: its power at or above "
                     "the column's is the plan holding)"),
    },
))
