"""Decision-grid family: the study planner's promised power, for each estimand's test.

The planner (:mod:`sim.plan`) plans a ``methods`` study for one of two estimands
(:data:`sim.plan_model.ESTIMANDS`), each tested by what ``evaluate`` prints for it
(:data:`sim.plan_model.ESTIMAND_TESTS`): ``questions`` -- the effect on the n questions
scored, by the design's primary ``paired_t`` on the per-seed means (``evaluate``'s primary
comparison); ``population`` -- the effect over the population of questions, by
``paired_two_level`` (its table row). Per cell (estimand, k seeds, n questions, r repeats,
the four variance components in pp) this scores that registry test on normal draws
(:func:`sim.plan_model.draw_deltas`, a new draw of seeds and questions per experiment):
``rejection`` -- at the estimand's effect 0 (judged against alpha); ``power`` -- at the
cell's planned effect of the estimand, beside the planner's closed-form power in the
decision label (reported, not judged: for ``population`` the closed form is Hsu's
conservative t, below ``paired_two_level``'s power).

The two arms' scores are ``0.5 -+ SCALE D / 2`` for the cell-mean deltas ``D``: both tests
are scale-free, and :data:`SCALE` keeps every score inside [0, 1], so each experiment is also
a user's file (:func:`sample`).
"""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import METHODS_PAIRED
from protocols.analysis.protocol_table import row_result
from sim import plan_model as plan
from sim.end_to_end import Sample, tidy

NAME = "planner"
DESIGN = METHODS_PAIRED
ALPHA = 0.05
#: deltas drawn in pp are written as scores at this fraction of their size (the tests are
#: scale-free; |SCALE D / 2| < 0.5 for every draw of these cells)
SCALE = 0.1
#: (seed, question) cells drawn per chunk of experiments (bounds the memory)
_CELLS_PER_CHUNK = 2**21

#: the README example's components (pp): sd_seed, sd_question, sd_inter, sd_repeat
_README = {"sd_seed": 0.5, "sd_question": 8.0, "sd_inter": 10.0, "sd_repeat": 40.0}
_SMALL = [
    ({"k": 2, "n": 5, "r": 1, "sd_seed": 5.0, "sd_question": 0.0, "sd_inter": 1.0,
      "sd_repeat": 1.0}, 10.0),
    ({"k": 4, "n": 20, "r": 1, "sd_seed": 0.4, "sd_question": 3.0, "sd_inter": 0.0,
      "sd_repeat": 5.0}, 1.5),
]

CELLS = [
    # questions: the README's chosen design, the population plan's design, small ones
    {"estimand": plan.QUESTIONS, "k": 10, "n": 343, "r": 10, **_README, "effect_pp": 1.0},
    {"estimand": plan.QUESTIONS, "k": 10, "n": 1481, "r": 8, **_README, "effect_pp": 1.0},
    {"estimand": plan.QUESTIONS, "k": 9, "n": 4, "r": 10, **_README, "effect_pp": 10.0},
    *({"estimand": plan.QUESTIONS, **c, "effect_pp": e} for c, e in _SMALL),
    # population: the README's design for it, the old planner's, few questions (>= 4,
    # paired_two_level's least), small ones
    {"estimand": plan.POPULATION, "k": 10, "n": 1481, "r": 8, **_README, "effect_pp": 1.0},
    {"estimand": plan.POPULATION, "k": 9, "n": 598, "r": 10, **_README, "effect_pp": 1.0},
    {"estimand": plan.POPULATION, "k": 9, "n": 4, "r": 10, **_README, "effect_pp": 10.0},
    {"estimand": plan.POPULATION, "k": 20, "n": 4, "r": 10, **_README, "effect_pp": 10.0},
    *({"estimand": plan.POPULATION, **c, "effect_pp": e} for c, e in _SMALL),
]
QUICK_CELLS = [CELLS[0], CELLS[5]]


def _components(params: dict) -> plan.Components:
    return plan.Components(*(params[f"sd_{name}"] / 100 for name in
                             ("seed", "question", "inter", "repeat")))


def _experiments(params: dict, sims: int, rng, keep: bool = False):
    """``sims`` experiments at the estimand's effect 0, then ``sims`` at the planned effect:
    per effect ``(effect, significant, scores)`` with ``significant`` the registry test's
    flags (bool, ``(sims,)``) and ``scores`` the ``(base, variant)`` arrays ``(sims, k, n)``
    when ``keep`` (else ``None``). Drawn in chunks of :data:`_CELLS_PER_CHUNK` cells."""
    comp = _components(params)
    k, n, r, estimand = params["k"], params["n"], params["r"], params["estimand"]
    test = plan.ESTIMAND_TESTS[estimand]
    chunk = max(1, _CELLS_PER_CHUNK // (k * n))
    out = []
    for effect in (0.0, params["effect_pp"] / 100):
        flags, kept = [], []
        for start in range(0, sims, chunk):
            d = SCALE * plan.draw_deltas(comp, "methods", min(chunk, sims - start), k, n, r,
                                         effect, rng, estimand)
            base, variant = 0.5 - d / 2, 0.5 + d / 2
            # the test's row as evaluate's table runs it (deterministic: no resampling)
            flags.append(np.asarray(row_result(test, base, variant, alpha=ALPHA).significant))
            if keep:
                kept.append((base, variant))
        scores = None
        if keep:
            scores = tuple(np.concatenate([part[i] for part in kept]) for i in (0, 1))
        out.append((effect, np.concatenate(flags), scores))
    return out


def simulate(params, sims, rng):
    """Score the estimand's test at one cell (see the module docstring).

    Parameters
    ----------
    params : dict
        ``estimand`` (``questions`` or ``population``), ``k``, ``n``, ``r`` (ints),
        ``sd_seed``, ``sd_question``, ``sd_inter``, ``sd_repeat`` and ``effect_pp`` (pp).
    sims : int
        Experiments per outcome.
    rng : numpy.random.Generator

    Returns
    -------
    list of dict
        Two outcomes: ``rejection`` at the estimand's effect 0, ``power`` at the planned
        effect.
    """
    comp = _components(params)
    k, n, r, estimand = params["k"], params["n"], params["r"], params["estimand"]
    effect = params["effect_pp"] / 100
    (_, null, _), (_, alt, _) = _experiments(params, sims, rng)
    planned = float(plan.power(comp, "methods", k, n, r, effect, ALPHA, estimand))
    size = float(plan.power(comp, "methods", k, n, r, 0.0, ALPHA, estimand))
    test = f"{plan.ESTIMAND_TESTS[estimand]} ({estimand} estimand)"
    return [
        {"decision": f"{test}, effect 0 (planned size {size:.3f})", "measure": "rejection",
         "hits": int(null.sum()), "sims": int(sims), "alpha": ALPHA},
        {"decision": f"{test}, power (planned {planned:.2f})", "measure": "power",
         "hits": int(alt.sum()), "sims": int(sims), "alpha": ALPHA},
    ]


def sample(params: dict, sims: int, rng) -> Sample:
    """The cell's ``2 sims`` experiments (effect 0, then the planned effect) as users'
    files ``seed,arm,question,score`` (:mod:`sim.end_to_end`), with the same draws and
    decisions as :func:`simulate`. ``evaluate`` infers paired seeds; the decision read back
    is, for ``questions``, its primary comparison's ``significant`` (``paired_t``) and, for
    ``population``, that of its table row ``paired_two_level``."""
    name = plan.ESTIMAND_TESTS[params["estimand"]]
    frames, flags = [], []
    for _, significant, (base, variant) in _experiments(params, sims, rng, keep=True):
        frames += [tidy({"baseline": base[i], "variant": variant[i]})
                   for i in range(len(significant))]
        flags.append(significant)
    primary = params["estimand"] == plan.QUESTIONS

    def read(body: dict) -> dict:
        if primary:
            row = body["comparisons"][0]
            ok = row["protocol"] == name
        else:
            rows = [row for row in body["rows"] if row["protocol"] == name]
            ok, row = len(rows) == 1, rows[0] if rows else {}
        # a different protocol in the place read is a disagreement, not a verdict
        return {"significant": bool(row.get("significant")) if ok else None}

    return Sample(frames, {}, {"significant": np.concatenate(flags)}, read)
