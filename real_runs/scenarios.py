"""The scenarios' config changes, applied to a baseline config.

The scenarios themselves (name, description, whether the truth is zero, the fields they set)
are declared once in :mod:`evalcal_core.scenarios`. ``S0p`` changes no hyperparameter; it redraws
the variant's data-order, augmentation and dropout streams (``stream_replica=1``) while
keeping the baseline's initial weights. Keeping the weights gives ``S0p`` the same pairing
as the real scenarios (whose arms also start from the same weights and only diverge during
training), and because replica 0 and replica 1 streams have the same distribution the two
arms are exchangeable, so E[delta] = 0 exactly.
"""

from __future__ import annotations

import dataclasses

from evalcal_core import scenarios
from real_runs.config import RunConfig

SCENARIOS = tuple(scenarios.SCENARIOS)
DESCRIPTIONS = {name: s.description for name, s in scenarios.SCENARIOS.items()}
LABEL_SMOOTHING = scenarios.LABEL_SMOOTHING
WORD_DROPOUT = scenarios.WORD_DROPOUT


def check_scenario(scenario: str) -> str:
    """Return ``scenario`` or raise ValueError if it is not one of :data:`SCENARIOS`."""
    return scenarios.scenario(scenario).name


def variant_config(base: RunConfig, scenario: str) -> RunConfig:
    """The variant arm's config: ``base`` with the change of ``scenario`` applied."""
    modality = scenarios.dataset(base.dataset).modality
    changes = scenarios.scenario(scenario).config_changes(modality)
    return dataclasses.replace(base, **changes) if changes else base
