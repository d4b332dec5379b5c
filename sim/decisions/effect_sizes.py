"""Decision-grid family ``effect_sizes``: the d_z interval and ``paired_two_level``'s interval.

Two kinds of cell, both under paired training seeds (``methods_paired``):

* ``"dz"``: normal per-seed deltas with true standardized effect ``dz`` (mean ``dz``, sd 1),
  k seeds: the coverage of :func:`protocols.effect_sizes.cohens_dz`'s noncentral t interval
  (exact for normal deltas, so it should hold at every k and ``dz``, including
  ``dz = 3e4`` and ``1e6`` where it is solved from the large-t expansion), and the share
  it refuses (should be 0 here).
* ``"dz_rounding"``: deltas equal on paper (scores rounded to 2 digits, the variant 1 pp
  above the baseline on every seed) whose floating-point differences are not equal: the
  share of experiments where d_z says "no variance estimate" (should be 1).
* ``"two_level"``: binary per-question scores of the ``seed_question`` generator with k
  seeds: the coverage of ``paired_two_level``'s interval of the expected accuracy gain
  ``delta`` (fraction) among the experiments where it gives a verdict, and the share it
  refuses (per-seed deltas equal up to rounding).
"""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import METHODS_PAIRED
from protocols.analysis import designs
from protocols.analysis.protocol_table import row_result
from sim.end_to_end import Sample, tidy
from sim.generators import get as get_generator

#: what the analysis does for paired seeds (the design evaluate infers from the files)
_STUDY = designs.get(METHODS_PAIRED)

NAME = "effect_sizes"
DESIGN = METHODS_PAIRED
ALPHA = 0.05

#: questions per run in the ``two_level`` cells: enough for a real question component,
#: few enough that 4,000 experiments of k = 5 stay well under 10 s
TWO_LEVEL_N = 200

CELLS = (
    [{"kind": "dz", "k": k, "dz": dz} for k in (3, 5, 10) for dz in (0.0, 0.5, 1.0, 2.0)]
    # huge effects: scipy's nct.cdf fails there (NaN from d_z ~ 3e4 at k = 10), so the
    # interval is solved from the large-t expansion
    + [{"kind": "dz", "k": k, "dz": dz} for k in (3, 10) for dz in (3e4, 1e6)]
    + [{"kind": "dz_rounding", "k": k} for k in (3, 10)]
    + [{"kind": "two_level", "k": k, "delta": delta, "sd_seed": sd_seed}
       for k in (3, 5) for delta in (0.0, 0.03) for sd_seed in (0.05, 0.3)]
)
QUICK_CELLS = [{"kind": "dz", "k": 3, "dz": 1.0}, {"kind": "dz_rounding", "k": 3},
               {"kind": "two_level", "k": 3, "delta": 0.03, "sd_seed": 0.05}]


def _outcome(decision, measure, hits, sims):
    return {"decision": decision, "measure": measure, "hits": int(hits), "sims": int(sims),
            "alpha": ALPHA}


def _dz_draw(params, sims, rng):
    """Normal per-seed deltas (mean ``dz``, sd 1) as a baseline at 0 and a variant at the
    delta, so that the file's ``variant - base`` is the drawn delta exactly; d_z as
    ``evaluate`` computes it (the design's hook its comparisons call,
    :meth:`protocols.analysis.designs.DesignAnalysis.standardized`: d_z of the per-seed
    deltas)."""
    k, dz = params["k"], params["dz"]
    deltas = rng.normal(dz, 1.0, size=(sims, k))
    _, low, high = _STUDY.standardized(deltas, ALPHA)
    decided = {"refused": np.isnan(low), "covered": (low <= dz) & (dz <= high)}
    return {"base": np.zeros_like(deltas), "variant": deltas}, decided


def _dz_rounding_draw(params, sims, rng):
    k = params["k"]
    # Scores with 2 decimals, the variant 0.01 above on every seed: deltas equal on paper,
    # unequal by rounding (e.g. 0.82 - 0.81 and 0.84 - 0.83 differ in the last bits).
    base = np.round(rng.uniform(0.5, 0.9, size=(sims, k)), 2)
    variant = np.round(base + 0.01, 2)
    # without ``scale``, as evaluate calls it: the deltas' own magnitude (0.01) must tell
    # rounding from variance
    estimate, _, _ = _STUDY.standardized(variant - base, ALPHA)
    return {"base": base, "variant": variant}, {"refused": np.isnan(estimate)}


def _two_level_draw(params, sims, rng):
    generator = get_generator("seed_question", n_questions=TWO_LEVEL_N,
                              sd_seed=params["sd_seed"])
    delta = params["delta"]
    base, variant = generator.draw(sims, params["k"], delta, rng)
    # deterministic (no resampling): the stream is the table's default seed
    r = row_result("paired_two_level", base, variant, alpha=ALPHA)
    verdict = ~np.isnan(r.ci_low)
    return ({"base": base, "variant": variant},
            {"covered": verdict & (r.ci_low <= delta) & (delta <= r.ci_high),
             "refused": ~verdict})


_DRAWS = {"dz": _dz_draw, "dz_rounding": _dz_rounding_draw, "two_level": _two_level_draw}


def _draw(params, sims, rng):
    """The cell's ``sims`` experiments, ``({"base", "variant"} scores, decisions)``: each
    experiment's decisions as booleans (see the module docstring)."""
    return _DRAWS[params["kind"]](params, sims, np.random.default_rng(rng))


def simulate(params, sims, rng):
    """Draw ``sims`` experiments of one cell and score its decisions (see the module doc).

    Parameters
    ----------
    params : dict
        One of :data:`CELLS`.
    sims : int
        Experiments.
    rng : numpy.random.Generator

    Returns
    -------
    list of dict
        Outcomes ``{decision, measure, hits, sims, alpha}``; a coverage's ``sims`` is the
        number of experiments with a verdict.
    """
    _, decided = _draw(params, sims, rng)
    refused = decided["refused"]
    if params["kind"] == "dz":
        return [_outcome("d_z interval", "coverage", decided["covered"].sum(), sims),
                _outcome("d_z interval", "refused", refused.sum(), sims)]
    if params["kind"] == "dz_rounding":
        return [_outcome("d_z interval", "refused", refused.sum(), sims)]
    return [_outcome("paired_two_level interval", "coverage", decided["covered"].sum(),
                     (~refused).sum()),
            _outcome("paired_two_level interval", "refused", refused.sum(), sims)]


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` experiments of the cell as users' files (:mod:`sim.end_to_end`), the same
    draws and decisions as :func:`simulate`.

    ``dz`` cells are per-seed metrics (``seed,arm,metric``) of a baseline at 0 and a variant
    at the drawn delta, on an arbitrary scale (``metric_range``); the decisions are read
    from the comparison's ``d_z_ci``. ``dz_rounding`` cells are fractions; ``two_level``
    cells are 0/1 scores per seed and question, read from the ``paired_two_level`` row of
    the protocols' table (printed for two arms).
    """
    arms, decided = _draw(params, sims, rng)
    kind = params["kind"]
    per_question = kind == "two_level"
    frames = [tidy({name: values[i] for name, values in arms.items()},
                   per_question=per_question) for i in range(sims)]
    options = {}
    if kind == "dz":
        # deltas of sd 1 around dz (up to 1e6): a range well beyond any drawn value
        options["metric_range"] = (-1e9, 1e9)
        truth = float(params["dz"])
    else:
        truth = 100.0 * float(params.get("delta", 0.0))    # the JSON's pp

    def read(body: dict) -> dict:
        if kind == "two_level":
            row = next(r for r in body["rows"] if r["protocol"] == "paired_two_level")
            low, high = row["ci_low"], row["ci_high"]
        else:
            low, high = body["comparisons"][0]["d_z_ci"]
        refused = low is None
        got = {"refused": refused}
        if "covered" in decided:
            got["covered"] = (not refused) and low <= truth <= high
        return got

    return Sample(frames, options, decided, read)
