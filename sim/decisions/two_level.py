"""``paired_two_level`` (seeds x questions) at the edges: few questions, few seeds.

``evaluate`` lists ``paired_two_level`` as reportable for training methods scored per
question on several seeds; it targets the population-of-questions effect (its variance
adds the question component). Generator: the crossed normal model of :mod:`sim.plan`:
the per-question delta of seed ``s`` on question ``q`` is ``delta + a_s + c_q + e_sq`` with
``a ~ N(0, sd_seed**2)``, ``c ~ N(0, sd_question**2)`` (a new question set per experiment)
and ``e ~ N(0, sd_resid**2)``; the two arms' scores are ``0.5 -+ D / 2``. The test is
scale-free, so the components are given relative to ``sd_resid = 1`` and drawn at 1/100 of
that in fraction units (scores stay inside [0, 1]).

Outcomes: the false-rejection rate at ``delta = 0`` and the coverage of its interval
(judged), and the share of experiments with no verdict (reported).
"""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import METHODS_PAIRED
from protocols.analysis.protocol_table import row_result
from sim.end_to_end import Sample, tidy

NAME = "two_level"
DESIGN = METHODS_PAIRED
ALPHA = 0.05
#: fraction units of one sd_resid (keeps 0.5 +- D / 2 inside [0, 1])
_UNIT = 0.01

#: from n = 4 questions (the protocol refuses fewer: 11-13% false positives at n = 2); the
#: few-question, many-seed shapes (n = 4-6 beside 20-40 seeds) are where the plug-in
#: Satterthwaite df over-rejected (issue 45)
_SHAPES = [(3, 4), (9, 4), (20, 4), (40, 4), (40, 5), (20, 6), (40, 6), (3, 10), (5, 10),
           (20, 10), (3, 30), (10, 30), (3, 200), (10, 200)]
_COMPONENTS = [
    {"sd_seed": 0.05, "sd_question": 0.8},     # the README planner example, relative
    {"sd_seed": 1.0, "sd_question": 0.0},      # no question component
    {"sd_seed": 0.0, "sd_question": 1.0},      # no seed component
    # a question component that dominates beside a seed component (k sd_question**2 =
    # 20-40 residual variances, n sd_seed**2 = 4-10): the plug-in df's worst case
    {"sd_seed": 1.0, "sd_question": 1.0},
    # a question component near the residual's size (k sd_question**2 = 1.8-3.6): its
    # mean square, on n - 1 df, often falls below the residual's and is dropped
    {"sd_seed": 0.0, "sd_question": 0.3},
]

CELLS = [{"k": k, "n": n, **c} for k, n in _SHAPES for c in _COMPONENTS]
QUICK_CELLS = [{"k": 9, "n": 4, **_COMPONENTS[0]}, {"k": 10, "n": 200, **_COMPONENTS[0]},
               {"k": 40, "n": 4, **_COMPONENTS[3]}]


def _draw(params: dict, sims: int, rng):
    """The cell's per-question scores ``(base, variant)``, each ``(sims, k, n)``, and each
    experiment's decisions by ``paired_two_level`` (the row ``evaluate``'s table prints)."""
    k, n = params["k"], params["n"]
    a = rng.standard_normal((sims, k, 1)) * params["sd_seed"]
    c = rng.standard_normal((sims, 1, n)) * params["sd_question"]
    e = rng.standard_normal((sims, k, n))
    d = _UNIT * (a + c + e)
    base, variant = 0.5 - d / 2, 0.5 + d / 2
    result = row_result("paired_two_level", base, variant, alpha=ALPHA, rng=rng)
    given = ~np.asarray(result.degenerate) & np.isfinite(result.p_value)
    low, high = np.asarray(result.ci_low), np.asarray(result.ci_high)
    return base, variant, {"rejected": given & (np.asarray(result.p_value) < ALPHA),
                           "covered": given & (low <= 0.0) & (0.0 <= high),
                           "refused": ~given}


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Score ``paired_two_level`` on one cell (see the module docstring)."""
    _, _, decided = _draw(params, sims, rng)
    given = int(sims - decided["refused"].sum())
    out = [{"decision": "paired_two_level", "measure": "rejection",
            "hits": int(decided["rejected"].sum()), "sims": given, "alpha": ALPHA},
           {"decision": "paired_two_level interval", "measure": "coverage",
            "hits": int(decided["covered"].sum()), "sims": given, "alpha": ALPHA},
           {"decision": "paired_two_level no verdict", "measure": "refused",
            "hits": int(decided["refused"].sum()), "sims": sims, "alpha": ALPHA}]
    return [o for o in out if o["sims"] > 0]


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` experiments of the cell as users' files (:mod:`reports.end_to_end`): per-question
    scores of two methods on ``k`` paired seeds; the decisions are read from the table row
    ``paired_two_level`` of ``evaluate``'s ``--json`` (the test of the population-of-questions
    estimand; the primary line is ``paired_t``, the estimand of this question set)."""
    base, variant, decided = _draw(params, sims, rng)
    frames = [tidy({"base": base[i], "variant": variant[i]}) for i in range(sims)]

    def read(body: dict) -> dict:
        row = next(r for r in body["rows"] if r["protocol"] == "paired_two_level")
        refused = bool(row["degenerate"]) or row["p_value"] is None
        covered = (not refused) and row["ci_low"] <= 0.0 <= row["ci_high"]
        return {"rejected": (not refused) and bool(row["significant"]), "covered": covered,
                "refused": refused}

    return Sample(frames, {}, decided, read)
