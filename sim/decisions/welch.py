"""``welch_t`` with a small arm: 4-5 independent seeds beside 4-40, unequal spreads.

Generator (``methods_independent`` design): the base arm's per-seed metrics are ``N(0, 1)``
on ``k_base`` seeds, the variant's ``N(delta, sd_ratio**2)`` on ``k_variant`` seeds, all
independent. ``effect`` is ``delta`` in standard errors of the difference of means,
``delta = effect * sqrt(1 / k_base + sd_ratio**2 / k_variant)``: at ``effect = 2.8`` a z
test with the true SE would have 80% power at alpha = 5%, whatever the cell.

Decisions scored on the same experiments:

* ``welch_t`` and ``welch_t interval`` — the design's primary protocol by the function
  ``evaluate``'s comparisons call (:func:`protocols.analysis.primary.primary_result`: Welch's
  statistic on :func:`protocols.methods.welch_t.welch_df`'s bounded df): a false rejection
  at ``effect = 0`` (judged), power otherwise (reported);
  the interval's coverage of ``delta`` (judged);
* ``welch_t plug-in df (old)`` — ``scipy.stats.ttest_ind(equal_var=False)``, the plain
  Welch–Satterthwaite df the protocol used before issue 45, shown for contrast (reported).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from evalcal_core.designs import COMPARE_METHODS, METHODS_INDEPENDENT, Design
from protocols.analysis.primary import primary_result
from sim.end_to_end import Sample, tidy

NAME = "welch"
DESIGN = METHODS_INDEPENDENT
ALPHA = 0.05
#: effect (standard errors of the difference) at which a z test with the true SE has 80% power
POWER_EFFECT = 2.8

#: (k_base, k_variant): the variant is the small arm
_SHAPES = [(4, 4), (10, 4), (15, 4), (20, 4), (40, 4), (10, 5), (20, 5)]
#: the small arm's sd over the large arm's (the issue's range 1/3-3 and its middle)
_RATIOS = [1 / 3, 1 / 2, 1.0, 2.0, 3.0]

CELLS = ([{"k_base": kb, "k_variant": kv, "sd_ratio": r, "effect": 0.0}
          for kb, kv in _SHAPES for r in _RATIOS]
         + [{"k_base": kb, "k_variant": kv, "sd_ratio": r, "effect": POWER_EFFECT}
            for kb, kv in ((10, 4), (20, 4)) for r in _RATIOS])
QUICK_CELLS = [{"k_base": 20, "k_variant": 4, "sd_ratio": 1.0, "effect": 0.0},
               {"k_base": 20, "k_variant": 4, "sd_ratio": 1.0, "effect": POWER_EFFECT}]


def _outcome(decision, measure, hits, sims):
    return {"decision": decision, "measure": measure, "hits": int(hits), "sims": int(sims),
            "alpha": ALPHA}


#: the valid range declared for the synthetic metrics (N(0, 1)-scale, not fractions)
METRIC_RANGE = (-1000.0, 1000.0)


def _draw(params: dict, sims: int, rng):
    """The cell's per-seed metrics ``(base (sims, k_base), variant (sims, k_variant))``, the
    true ``delta`` and each experiment's Welch decisions (:func:`welch_decision`, the rule
    ``evaluate`` prints for independent seeds)."""
    kb, kv, ratio = params["k_base"], params["k_variant"], params["sd_ratio"]
    delta = params["effect"] * np.sqrt(1.0 / kb + ratio**2 / kv)
    base = rng.standard_normal((sims, kb))
    variant = delta + ratio * rng.standard_normal((sims, kv))
    # each seed's metric as (sims, k, 1): what evaluate's comparison is called on
    r = primary_result(design(params), base[..., None], variant[..., None], ALPHA,
                       binary=False)
    return base, variant, delta, {
        "rejected": ~r.degenerate & (r.p_value < ALPHA),
        "covered": (r.ci_low <= delta) & (delta <= r.ci_high)}


def design(params: dict) -> Design:
    """The cell's design as ``evaluate`` reads its files: independent seeds (declared), one
    metric per seed, the smaller arm's seed count as the runs."""
    return Design(compare=COMPARE_METHODS, paired=False,
                  runs=min(int(params["k_base"]), int(params["k_variant"])))


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Score Welch's test on one cell (see the module docstring)."""
    base, variant, _, decided = _draw(params, sims, rng)
    p_old = stats.ttest_ind(variant, base, axis=-1, equal_var=False).pvalue
    measure = "rejection" if params["effect"] == 0 else "power"
    return [_outcome("welch_t", measure, decided["rejected"].sum(), sims),
            _outcome("welch_t interval", "coverage", decided["covered"].sum(), sims),
            _outcome("welch_t plug-in df (old)", measure,
                     (p_old < ALPHA).sum(), sims)]


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` experiments of the cell as users' files (:mod:`reports.end_to_end`): each
    arm's per-seed metrics on its own seeds (``--design methods_independent``; the shorter
    arm's missing seeds are absent rows), on the declared range :data:`METRIC_RANGE`."""
    base, variant, delta, decided = _draw(params, sims, rng)
    k = max(base.shape[1], variant.shape[1])

    def padded(x):
        return np.pad(x, (0, k - len(x)), constant_values=np.nan)

    frames = [tidy({"base": padded(base[i]), "variant": padded(variant[i])},
                   per_question=False) for i in range(sims)]

    def read(body: dict) -> dict:
        row = body["comparisons"][0]
        return {"rejected": bool(row["significant"]),
                "covered": row["ci_low"] <= delta <= row["ci_high"]}

    return Sample(frames, {"design": DESIGN, "metric_range": METRIC_RANGE}, decided, read)
