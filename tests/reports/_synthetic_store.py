"""A synthetic run store for the report tests: ``seed_question`` runs filed as real records."""

import numpy as np

from real_runs.store import RunRecord, record_path, write_record
from sim import generators


def store_with_seeds(root, seeds=21, n_test=300, profile="fixture"):
    """A run store like the fixture pool (``seed_question``, S0p and S1) with ``seeds`` seeds.

    The committed fixture has 12 seeds; ``k = 20`` (sampled sign flips) needs more.
    """
    g = generators.get("seed_question", n_questions=n_test, sd_seed=0.15, rho=0.6)
    base_all, variant_all = g.draw(1, 2 * seeds, 0.03, np.random.default_rng(7))
    arms = {None: base_all[0, :seeds], "S1": variant_all[0, :seeds],
            "S0p": base_all[0, seeds:]}
    for scenario, runs in arms.items():
        arm = "baseline" if scenario is None else "variant"
        for seed in range(seeds):
            correct = runs[seed].astype(bool)
            record = RunRecord(
                dataset="cifar10", profile=profile, scenario=scenario, arm=arm, seed=seed,
                correct=correct, predictions=correct.astype(np.uint8),
                epoch_accuracy=np.array([correct.mean()]), config={"arm": arm},
                config_hash=f"h-{scenario}", base_config_hash="h-None",
                data_fingerprint="synthetic", created_utc="2026-11-21T00:00:00Z")
            write_record(record_path(root, "cifar10", profile, arm, scenario, seed), record)
    return str(root)
