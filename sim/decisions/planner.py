"""Decision-grid family: the study planner's recommended test and its planned power.

For ``methods`` designs (:mod:`sim.plan`) the planner recommends :func:`sim.plan.two_level_test`
for the population-of-questions estimand. Per cell (k seeds, n questions, r repeats, the four
variance components in pp) this scores, on normal draws with a new question set per
experiment: ``rejection`` -- the test's rejection rate at population effect 0 (judged against
alpha); ``power`` -- its simulated power at the cell's planned effect, beside the planner's
closed-form power in the decision label (reported, not judged).
"""

from __future__ import annotations

from evalcal_core.designs import METHODS_PAIRED
from sim import plan_model as plan

NAME = "planner"
DESIGN = METHODS_PAIRED
ALPHA = 0.05

#: the README example's components (pp): sd_seed, sd_question, sd_inter, sd_repeat
_README = {"sd_seed": 0.5, "sd_question": 8.0, "sd_inter": 10.0, "sd_repeat": 40.0}

CELLS = [
    {"k": 10, "n": 1481, "r": 8, **_README, "effect_pp": 1.0},   # the README's chosen design
    {"k": 9, "n": 598, "r": 10, **_README, "effect_pp": 1.0},    # the old planner's choice
    {"k": 9, "n": 2, "r": 10, **_README, "effect_pp": 10.0},     # two questions
    {"k": 20, "n": 2, "r": 10, **_README, "effect_pp": 10.0},
    {"k": 2, "n": 2, "r": 1, "sd_seed": 2.0, "sd_question": 1.0, "sd_inter": 5.0,
     "sd_repeat": 30.0, "effect_pp": 30.0},
    {"k": 2, "n": 5, "r": 1, "sd_seed": 5.0, "sd_question": 0.0, "sd_inter": 1.0,
     "sd_repeat": 1.0, "effect_pp": 10.0},
    {"k": 4, "n": 20, "r": 1, "sd_seed": 0.4, "sd_question": 3.0, "sd_inter": 0.0,
     "sd_repeat": 5.0, "effect_pp": 1.5},
]
QUICK_CELLS = [CELLS[1], CELLS[2]]


def simulate(params, sims, rng):
    """Score the planner's test at one cell (see the module docstring).

    Parameters
    ----------
    params : dict
        ``k``, ``n``, ``r`` (ints), ``sd_seed``, ``sd_question``, ``sd_inter``, ``sd_repeat``
        and ``effect_pp`` (pp).
    sims : int
        Experiments per outcome.
    rng : numpy.random.Generator

    Returns
    -------
    list of dict
        Two outcomes: ``rejection`` at effect 0, ``power`` at the planned effect.
    """
    comp = plan.Components(*(params[f"sd_{name}"] / 100 for name in
                             ("seed", "question", "inter", "repeat")))
    k, n, r, effect = params["k"], params["n"], params["r"], params["effect_pp"] / 100
    null = plan.simulate_power(comp, "methods", k, n, r, 0.0, sims=sims, alpha=ALPHA, rng=rng)
    alt = plan.simulate_power(comp, "methods", k, n, r, effect, sims=sims, alpha=ALPHA,
                              rng=rng)
    planned = float(plan.power(comp, "methods", k, n, r, effect, ALPHA))
    size = float(plan.power(comp, "methods", k, n, r, 0.0, ALPHA))
    test = "two-level t (population of questions)"
    return [
        {"decision": f"{test}, effect 0 (planned size {size:.3f})", "measure": "rejection",
         "hits": null.rejections, "sims": null.sims, "alpha": ALPHA},
        {"decision": f"{test}, power (planned {planned:.2f})", "measure": "power",
         "hits": alt.rejections, "sims": alt.sims, "alpha": ALPHA},
    ]
