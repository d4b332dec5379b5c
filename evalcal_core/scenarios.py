"""The datasets and scenarios of the real runs, declared once (torch-free).

The training code applies a scenario's config change; the store, the generators and the
reports read its name, description and whether its true effect is zero from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

from .validate import check_choice


@dataclass(frozen=True)
class Dataset:
    """A dataset the real runs train on.

    Attributes
    ----------
    name : str
    modality : {'image', 'text'}
        Decides which augmentation a scenario adds.
    description : str
    """

    name: str
    modality: str
    description: str


@dataclass(frozen=True)
class Scenario:
    """What the variant changes relative to the baseline.

    Attributes
    ----------
    name : str
    description : str
    null : bool
        The true effect is zero by construction (rates on it are false-positive rates).
    changes : mapping
        Modality -> the ``RunConfig`` fields the variant sets (empty: same config).
    identical : bool
        The variant is the baseline itself: Δ = 0 exactly on every seed (a sanity check, not
        a pool to calibrate on).
    """

    name: str
    description: str
    null: bool
    changes: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    identical: bool = False

    def config_changes(self, modality: str) -> dict:
        """``RunConfig`` fields this scenario sets for a dataset of ``modality``."""
        return dict(self.changes.get(modality, self.changes.get("any", {})))


LABEL_SMOOTHING = 0.05
WORD_DROPOUT = 0.10


def _frozen(**by_modality):
    return MappingProxyType({k: MappingProxyType(v) for k, v in by_modality.items()})


DATASETS = {d.name: d for d in (
    Dataset("cifar10", "image", "CIFAR-10 (JPEG re-encoded), clean labels"),
    Dataset("cifar10n", "image", "CIFAR-10 images with CIFAR-10N 'aggre' crowd labels"),
    Dataset("ag_news", "text", "AG News, 7,600 test articles split 5,600 / 2,000"),
)}

SCENARIOS = {s.name: s for s in (
    Scenario("S0", "variant identical to baseline (delta must be exactly 0)", null=True,
             identical=True),
    Scenario("S0p", "true null with noise: same config and initial weights, other data-order/"
             "augmentation/dropout streams", null=True,
             changes=_frozen(any={"stream_replica": 1})),
    Scenario("S1", "label smoothing 0.05", null=False,
             changes=_frozen(any={"label_smoothing": LABEL_SMOOTHING})),
    Scenario("S2", "label smoothing 0.05 + TrivialAugmentWide (images) or 10% word dropout "
             "(text)", null=False,
             changes=_frozen(image={"label_smoothing": LABEL_SMOOTHING,
                                    "strong_augment": "trivial_augment"},
                             text={"label_smoothing": LABEL_SMOOTHING,
                                   "word_dropout": WORD_DROPOUT})),
)}


def dataset(name: str) -> Dataset:
    """The dataset called ``name``; ``ValueError`` listing the known ones otherwise."""
    return DATASETS[check_choice(name, "dataset", DATASETS)]


def scenario(name: str) -> Scenario:
    """The scenario called ``name``; ``ValueError`` listing the known ones otherwise."""
    return SCENARIOS[check_choice(name, "scenario", SCENARIOS)]


def null_scenario_for_pools() -> str:
    """The null scenario whose pools validate the others' (noise, not identity)."""
    return next(s.name for s in SCENARIOS.values() if s.null and not s.identical)


def pool_scenarios() -> list[str]:
    """Scenarios that make calibration pools (all but the identical sanity check)."""
    return [s.name for s in SCENARIOS.values() if not s.identical]
