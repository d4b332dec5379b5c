"""Speed of the many-arm statistics: calibration of max-T and one 10-arm evaluation.

Usage::

    python benchmarks/bench_multiarm.py [--repeat 3] [--sims 2000]

Prints the best of ``--repeat`` wall times (``_timing.best_time``) of

(a) calibrating max-T with m = 10 arms, k = 10 seeds, ``--sims`` simulations
    (``sim.multiarm.family_cell`` on ``paired_seed`` under the global null: the exact
    joint sign flip, 512 patterns, for many-to-one (9 comparisons) and all pairs (45)),
    then the same cell with every correction (none, bonferroni, holm, maxt); target < 60 s;
(b) the statistics of one evaluation of 10 arms x 10 seeds x 10,000 questions (0/1
    scores, in memory) with all 45 pairs: per-seed accuracies, paired t, Holm, max-T
    step-down (exact sign flip), max-T and Bonferroni simultaneous CIs, the compact
    letter display, d_z with its noncentral-t CI, non-inferiority claims, and the
    question-level max-T of the seed-averaged scores (normal joint null, 10,000 draws);
    target < 15 s end to end.

The machine may be shared with other jobs: read the load average printed first.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
from _timing import best_time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocols import claims, effect_sizes, multiplicity, ranking  # noqa: E402
from protocols import joint_null as jn  # noqa: E402
from sim import multiarm  # noqa: E402


def calibrate_maxt(sims: int, methods=("maxt",)):
    cfg = multiarm.MultiarmConfig(m=(10,), k=10, sims=sims, methods=tuple(methods),
                                  generators=("paired_seed",), gates=False)
    return multiarm.family_cell("paired_seed", 10, "null", cfg)


def evaluate_ten_arms(scores, rng):
    """All statistics of a 10-arm evaluation; ``scores`` (arms, seeds, questions) of 0/1."""
    n_arms = scores.shape[0]
    per_seed = scores.mean(axis=-1)                          # (arms, seeds), fractions
    comps = multiplicity.all_pairs(n_arms)
    deltas = multiplicity.pair_deltas(per_seed, comps)      # (45, seeds)
    joint = jn.paired_signflip_null(deltas, rng=rng)
    raw = claims.claim_from_estimate(joint.estimate, joint.se, joint.df, "superiority")
    raw_two_sided = np.minimum(1.0, 2.0 * np.minimum(raw.p_value, 1.0 - raw.p_value))
    holm = multiplicity.adjust(raw_two_sided, "holm")
    maxt = multiplicity.maxt_adjust(joint)
    ci_maxt = multiplicity.simultaneous_ci(joint, 0.05)
    ci_bonf = multiplicity.simultaneous_ci(joint, 0.05, method="bonferroni")
    cld = ranking.compact_letter_display(ranking.pairwise_matrix(maxt, comps, n_arms),
                                         estimates=per_seed.mean(axis=-1))
    dz = effect_sizes.cohens_dz(deltas)
    ni = claims.paired_claim(deltas, "non_inferiority", 0.005)
    question_level = scores.mean(axis=1)                      # (arms, questions)
    q_joint = jn.gaussian_null(question_level, comps, 10_000, rng=rng)
    q_maxt = multiplicity.maxt_adjust(q_joint)
    return holm, maxt, ci_maxt, ci_bonf, cld, dz, ni, q_maxt


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--sims", type=int, default=2000)
    args = p.parse_args(argv)
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores")

    t, _ = best_time(lambda: calibrate_maxt(args.sims), args.repeat, warmup=True)
    print(f"(a) max-T calibration, m = 10, k = 10, {args.sims} sims, both families: "
          f"{t:.2f} s (target < 60 s)")
    t, _ = best_time(lambda: calibrate_maxt(args.sims, multiarm.DECISIONS), args.repeat)
    print(f"    the same cell with none, bonferroni, holm and maxt: {t:.2f} s")

    rng = np.random.default_rng(0)
    ability = rng.normal(0.7, 0.02, size=(10, 1, 1))
    scores = (rng.random((10, 10, 10_000)) < ability).astype(np.float64)
    t, out = best_time(lambda: evaluate_ten_arms(scores, np.random.default_rng(1)),
                       args.repeat, warmup=True)
    print(f"(b) 10 arms x 10 seeds x 10,000 questions, 45 pairs, all statistics: {t:.2f} s "
          f"(target < 15 s); letters {out[4].letters}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
