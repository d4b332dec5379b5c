"""Pitfall "Questions are not the only noise": null rejection rates under ``seed_question``.

With per-question scores from several seeds, the one-level protocols that treat the
questions as the only randomness (``paired_t_questions``, ``paired_question_bootstrap``,
``mcnemar``) reject a true null far more often than alpha once seeds differ; ``paired_t``
on per-seed deltas and ``paired_two_level`` (seed and question variance components) keep
alpha. :func:`questions_noise_rates` measures this through :func:`sim.grid.calibrate`.
"""

from __future__ import annotations

import pandas as pd

import protocols
from sim import generators
from sim.grid import calibrate

#: the protocols compared: three that count only the questions, two honest ones
PROTOCOLS = ("paired_t_questions", "paired_question_bootstrap", "mcnemar", "paired_t",
             "paired_two_level")
#: seed-effect sd (logit units) of ``seed_question``; 0.05 is its default
SD_SEEDS = (0.0, 0.1, 0.3)
KS = (3, 5, 10)

#: three sentences for the report section
EXPLANATION = (
    "With per-question scores from several training seeds there are two sources of noise: "
    "which questions are in the benchmark, and which seed trained each model. "
    "Tests that pool the runs per question (paired_t_questions, the paired question "
    "bootstrap, McNemar) count only the first, so any seed-to-seed difference in the delta "
    "looks like a real effect and their false-positive rate climbs far above 5% as the "
    "seed effect grows, even with many seeds. "
    "paired_t on per-seed deltas and paired_two_level (seed and question variance "
    "components) count the seeds and stay at the nominal rate.")


def questions_noise_rates(*, sims: int = 2000, seed: int = 0, sd_seeds=SD_SEEDS, ks=KS,
                          protocol_names=PROTOCOLS, alpha: float = 0.05,
                          n_questions: int | None = None, jobs: int = 1, out=None,
                          progress: bool = False) -> pd.DataFrame:
    """False-positive rates under ``seed_question`` for each seed-effect sd and k.

    Parameters
    ----------
    sims : int
        Null experiments per (protocol, sd_seed, k) cell.
    seed : int
        Root seed of :func:`sim.grid.calibrate` (common random numbers: every
        protocol sees the same experiments of a cell).
    sd_seeds : sequence of float
        Seed-effect sd of ``seed_question`` (logit units).
    ks : sequence of int
        Seeds per arm.
    protocol_names : sequence of str
    alpha : float
    n_questions : int or None
        Questions per benchmark; ``None`` keeps the generator's default (2000).
    jobs : int
    out : path or None
        Cell cache directory (reused across calls).
    progress : bool

    Returns
    -------
    pandas.DataFrame
        Tidy, one row per (sd_seed, protocol, k): ``sd_seed``, ``protocol``, ``k``,
        ``sims``, ``rejections``, ``fpr`` (fraction), ``fpr_low``, ``fpr_high`` (its 95%
        Wilson interval), ``alpha``, ``pitfall`` (the protocol's declared pitfall, "" if
        honest) and ``generator`` (the generator's full parameter string).
    """
    frames = []
    for sd_seed in sd_seeds:
        params = {"sd_seed": float(sd_seed)}
        if n_questions is not None:
            params["n_questions"] = int(n_questions)
        generator = generators.get("seed_question", **params)
        cells = calibrate(generator, list(ks), [0.0], protocol_names=list(protocol_names),
                          sims=sims, alpha=alpha, seed=seed, jobs=jobs, out=out,
                          progress=progress)
        frames.append(pd.DataFrame({
            "sd_seed": float(sd_seed),
            "protocol": cells["protocol"],
            "k": cells["k"].astype(int),
            "sims": cells["sims"].astype(int),
            "rejections": cells["rejections"].astype(int),
            "fpr": cells["rate"],
            "fpr_low": cells["rate_low"],
            "fpr_high": cells["rate_high"],
            "alpha": float(alpha),
            "pitfall": [protocols.protocol_class(p).pitfall for p in cells["protocol"]],
            "generator": generator.describe(),
        }))
    frame = pd.concat(frames, ignore_index=True)
    return frame.sort_values(["sd_seed", "protocol", "k"], kind="stable", ignore_index=True)
