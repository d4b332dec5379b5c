"""The scenarios: what the variant changes relative to the baseline.

Each scenario is defined once here as a function of the baseline config. ``S0p`` changes no
hyperparameter; it redraws the variant's data-order, augmentation and dropout streams
(``stream_replica=1``) while keeping the baseline's initial weights. Keeping the weights
gives ``S0p`` the same pairing as the real scenarios (whose arms also start from the same
weights and only diverge during training), and because replica 0 and replica 1 streams
have the same distribution the two arms are exchangeable, so E[delta] = 0 exactly.
"""

from __future__ import annotations

import dataclasses

from real_runs.config import RunConfig

SCENARIOS = ("S0", "S0p", "S1", "S2")

DESCRIPTIONS = {
    "S0": "variant identical to baseline (delta must be exactly 0)",
    "S0p": "true null with noise: same config and initial weights, other data-order/"
    "augmentation/dropout streams",
    "S1": "label smoothing 0.05",
    "S2": "label smoothing 0.05 + TrivialAugmentWide (images) or 10% word dropout (text)",
}

LABEL_SMOOTHING = 0.05
WORD_DROPOUT = 0.10


def check_scenario(scenario: str) -> str:
    """Return ``scenario`` or raise ValueError if it is not one of :data:`SCENARIOS`."""
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario must be one of {SCENARIOS}, got {scenario!r}")
    return scenario


def variant_config(base: RunConfig, scenario: str) -> RunConfig:
    """The variant arm's config: ``base`` with the change of ``scenario`` applied."""
    check_scenario(scenario)
    if scenario == "S0":
        return base
    if scenario == "S0p":
        return dataclasses.replace(base, stream_replica=1)
    if scenario == "S1":
        return dataclasses.replace(base, label_smoothing=LABEL_SMOOTHING)
    if base.dataset == "ag_news":
        return dataclasses.replace(base, label_smoothing=LABEL_SMOOTHING,
                                   word_dropout=WORD_DROPOUT)
    return dataclasses.replace(base, label_smoothing=LABEL_SMOOTHING,
                               strong_augment="trivial_augment")
