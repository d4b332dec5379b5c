"""Run configurations and training profiles.

A :class:`RunConfig` is everything that determines a run apart from its seed and the data.
Its hash (:func:`config_hash`) identifies records in the store. A baseline's config has no
scenario field, so one baseline per (dataset, profile, seed) serves every scenario.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass

from evalcal_core.scenarios import DATASETS as _DATASETS
from evalcal_core.validate import InvalidParameterError, check_choice

DATASETS = tuple(_DATASETS)
PROFILES = ("smoke", "cpu", "paper")
LABEL_SETS = ("aggre", "worse", "random1", "random2", "random3")
#: ``aggre`` (majority vote of three annotators, 9.0 % noise) is the default: it is the
#: label set a practitioner who crowdsources labels actually ends up with, and it leaves
#: the small ``cpu`` models a useful accuracy; ``worse`` (40 % noise) is a stress test.
DEFAULT_LABEL_SET = "aggre"


@dataclass(frozen=True)
class RunConfig:
    """Hyperparameters of one training run (seed excluded).

    Attributes
    ----------
    dataset, profile : str
        Names from :data:`DATASETS` and :data:`PROFILES`.
    model : str
        ``"resnet18"``, ``"smallcnn"`` or ``"textcnn"``.
    width : int
        First-stage channels (``smallcnn``) or filters per kernel size (``textcnn``);
        ignored by ``resnet18``.
    n_train : int or None
        At most this many training examples (a fixed class-stratified subset drawn with
        ``subset_seed``, identical for every seed and arm); None uses all.
    epochs, batch_size : int
    optimizer : str
        ``"sgd"`` (with ``momentum``, ``nesterov``) or ``"adam"``.
    lr : float
        Peak learning rate, annealed to 0 by a per-step cosine schedule.
    weight_decay : float
    augment : str
        Base augmentation shared by both arms: ``"none"`` or ``"crop_flip"`` (4-pixel
        zero-padded random crop and horizontal flip).
    strong_augment : str
        ``"none"`` or ``"trivial_augment"`` (torchvision TrivialAugmentWide, per image).
    label_smoothing : float
        Fraction of the target mass spread uniformly over the classes.
    word_dropout : float
        Fraction of non-PAD training tokens replaced by PAD (text only).
    dropout : float
        Dropout probability before the classifier (``textcnn``).
    label_set : str or None
        CIFAR-10N label set (``cifar10n`` only).
    vocab_size, max_len, embed_dim : int or None
        Text vocabulary (most frequent training words), padded length in tokens and
        embedding size (``ag_news`` only).
    stream_replica : int
        Replica of the data-order, augmentation and dropout streams (0; 1 for the ``S0p``
        variant). Initial weights always use replica 0.
    subset_seed : int
        Seed of the fixed training subset.
    eval_batch_size : int
    threads : int or None
        Intra-op CPU threads of the training process. CPU results depend on it (parallel
        reductions split differently), so the CPU profiles pin it and it is hashed with the
        rest; None (``paper``, meant for a GPU) uses ``cores // jobs``.
    warmup_epochs : int
        Epochs of linear learning-rate warm-up from 0 before the cosine decay (per step).
    precision : str
        ``"fp32"`` or ``"bf16"`` (forward/backward under ``torch.autocast`` with bfloat16;
        weights, batch-norm statistics, optimizer and loss stay float32).
    channels_last : bool
        Image models and batches in NHWC memory format.
    data_path : str
        ``"host"``: batches gathered and augmented on the CPU (torchvision
        TrivialAugmentWide per image). ``"device"``: the whole training set lives on the
        training device as uint8 and crop/flip and a batched TrivialAugmentWide
        (:func:`real_runs.augment.trivial_augment_batched`) run there. Crop/flip draws the
        same numbers on both paths; the strong augmentation draws differently, so the
        field is hashed.

    Fields from ``warmup_epochs`` on were added after the ``cpu`` pool was trained; they
    are left out of :meth:`to_dict` (and so of the hash) while at their default, so the
    hashes of existing records stay valid.
    """

    dataset: str
    profile: str
    model: str
    width: int
    n_train: int | None
    epochs: int
    batch_size: int
    optimizer: str
    lr: float
    momentum: float
    nesterov: bool
    weight_decay: float
    augment: str
    strong_augment: str = "none"
    label_smoothing: float = 0.0
    word_dropout: float = 0.0
    dropout: float = 0.0
    label_set: str | None = None
    vocab_size: int | None = None
    max_len: int | None = None
    embed_dim: int | None = None
    stream_replica: int = 0
    subset_seed: int = 0
    eval_batch_size: int = 1000
    threads: int | None = 1
    warmup_epochs: int = 0
    precision: str = "fp32"
    channels_last: bool = True
    data_path: str = "host"

    def to_dict(self) -> dict:
        """Plain JSON-ready dict of the fields (later fields only when not at default)."""
        out = dataclasses.asdict(self)
        for name, default in LATER_FIELD_DEFAULTS.items():
            if out[name] == default:
                del out[name]
        return out


#: Fields added after records were first stored, with the default that keeps old hashes.
LATER_FIELD_DEFAULTS = {"warmup_epochs": 0, "precision": "fp32", "channels_last": True,
                        "data_path": "host"}
PRECISIONS = ("fp32", "bf16")
DATA_PATHS = ("host", "device")


def config_hash(config: RunConfig) -> str:
    """SHA-256 (hex) of the canonical JSON of ``config``."""
    blob = json.dumps(config.to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


#: Epochs of the ``paper`` CIFAR profile (see real_runs/gpu_batch.py for the choice).
PAPER_CIFAR_EPOCHS = 18


def _image_profiles(dataset: str, label_set: str | None) -> dict[str, RunConfig]:
    common = dict(dataset=dataset, optimizer="sgd", momentum=0.9, nesterov=True,
                  augment="crop_flip", label_set=label_set)
    return {
        "smoke": RunConfig(profile="smoke", model="smallcnn", width=4, n_train=64, epochs=2,
                           batch_size=16, lr=0.05, weight_decay=5e-4, eval_batch_size=64,
                           **common),
        "cpu": RunConfig(profile="cpu", model="smallcnn", width=16, n_train=12_500, epochs=5,
                         batch_size=128, lr=0.05, weight_decay=5e-4, **common),
        # 18 epochs, 1 warm-up + cosine: the short-schedule ResNet-18 recipe (see
        # real_runs/gpu_batch.py for the basis and the time floor per run).
        "paper": RunConfig(profile="paper", model="resnet18", width=64, n_train=None,
                           epochs=PAPER_CIFAR_EPOCHS, batch_size=128, lr=0.1,
                           weight_decay=5e-4, threads=None, warmup_epochs=1,
                           precision="bf16", channels_last=True, data_path="device",
                           **common),
    }


def _text_profiles() -> dict[str, RunConfig]:
    common = dict(dataset="ag_news", model="textcnn", optimizer="adam", momentum=0.0,
                  nesterov=False, weight_decay=0.0, augment="none", dropout=0.5,
                  vocab_size=20_000)
    return {
        "smoke": RunConfig(profile="smoke", width=4, n_train=64, epochs=2, batch_size=16,
                           lr=1e-3, max_len=16, embed_dim=8, eval_batch_size=64, **common),
        "cpu": RunConfig(profile="cpu", width=64, n_train=None, epochs=8, batch_size=64,
                         lr=1e-2, max_len=48, embed_dim=64, **common),
        "paper": RunConfig(profile="paper", width=100, n_train=None, epochs=10, batch_size=64,
                           lr=1e-3, max_len=128, embed_dim=300, threads=None,
                           data_path="device", **common),
    }


def profile_config(dataset: str, profile: str, label_set: str | None = None) -> RunConfig:
    """Baseline configuration of ``dataset`` under ``profile``.

    Parameters
    ----------
    dataset : str
        One of :data:`DATASETS`.
    profile : str
        ``"cpu"`` (small models sized for a 2-core CPU), ``"paper"`` (ResNet-18 on the
        full training set, meant for a GPU) or ``"smoke"`` (tiny, for tests).
    label_set : str, optional
        CIFAR-10N label set, default :data:`DEFAULT_LABEL_SET`; must be None for the other
        datasets.

    Returns
    -------
    RunConfig
    """
    check_choice(dataset, "dataset", DATASETS)
    check_choice(profile, "profile", PROFILES)
    if dataset == "cifar10n":
        label_set = DEFAULT_LABEL_SET if label_set is None else label_set
        check_choice(label_set, "label_set", LABEL_SETS)
    elif label_set is not None:
        raise InvalidParameterError(f"label_set applies to cifar10n only, got {label_set!r} for "
                                    f"{dataset!r}")
    if dataset == "ag_news":
        return _text_profiles()[profile]
    return _image_profiles(dataset, label_set)[profile]
