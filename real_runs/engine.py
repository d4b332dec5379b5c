"""Training and evaluation of one run (one config, one seed).

Two data paths (``RunConfig.data_path``): ``"host"`` gathers and augments each batch on the
CPU and copies it to the device; ``"device"`` copies the whole training set to the device
once (uint8 images: 150 MB for CIFAR-10) and gathers, crops, flips and (S2) applies the
batched TrivialAugmentWide there. Both draw every random number from the run's CPU
generators; the device path draws a whole epoch's numbers at the start of the epoch (in
the same per-batch order as the host path, so crop/flip and data order are identical) and
copies them to the device once, so the training loop never waits on a host-to-device
copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from evalcal_core.validate import InvalidParameterError
from real_runs import augment
from real_runs.config import AUGMENTS, DATA_PATHS, LR_SCHEDULES, PRECISIONS, RunConfig
from real_runs.data import Dataset
from real_runs.models import (
    Airbench94,
    build_model,
    init_weights,
    set_dropout_generator,
    whitening_filters,
)
from real_runs.runtime import deterministic
from real_runs.seeding import check_seed, make_generator


@dataclass(frozen=True, eq=False)
class RunResult:
    """Outcome of :func:`train_run`.

    Attributes
    ----------
    predictions : numpy.ndarray of uint8, shape (n_test,)
    correct : numpy.ndarray of bool, shape (n_test,)
    epoch_accuracy : numpy.ndarray of float64, shape (epochs,)
        Test accuracy (fraction) after each epoch; the last entry is the final accuracy.
    wall_time_s : float
        Seconds for the whole run, evaluation included.
    train_time_s : float
        Seconds spent in optimisation steps (augmentation included, evaluation excluded).
    train_examples : int
        Training examples processed.
    """

    predictions: np.ndarray
    correct: np.ndarray
    epoch_accuracy: np.ndarray
    wall_time_s: float
    train_time_s: float
    train_examples: int

    @property
    def final_accuracy(self) -> float:
        return float(self.correct.mean())


def train_subset(labels: np.ndarray, n_train: int | None, subset_seed: int) -> np.ndarray:
    """Sorted indices of a fixed class-stratified subset of at most ``n_train`` examples.

    Stratified on the clean labels, so CIFAR-10 and CIFAR-10N train on the same images.
    """
    n = len(labels)
    if n_train is None or n_train >= n:
        return np.arange(n)
    rng = np.random.default_rng(np.random.SeedSequence([subset_seed, 0x5B5E7]))
    classes = np.unique(labels)
    per_class = n_train // len(classes)
    picks = [rng.permutation(np.flatnonzero(labels == c))[:per_class] for c in classes]
    chosen = np.concatenate(picks)
    rest = np.setdiff1d(np.arange(n), chosen)
    extra = rng.permutation(rest)[: n_train - len(chosen)]
    return np.sort(np.concatenate([chosen, extra]))


def _inputs(data: Dataset, x: np.ndarray) -> torch.Tensor:
    if data.kind == "image":
        return torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))  # uint8 NCHW
    return torch.from_numpy(x.astype(np.int64))


class RunDeadlineError(TimeoutError):
    """A run passed its deadline (checked after every epoch) and was abandoned unstored."""


#: airbench's triangle: the lr multiplier starts at 0.2, peaks at 1 after 23 % of the steps
#: and ends at 0.07
TRIANGLE = (0.2, 0.23, 0.07)


def lr_factor(config: RunConfig, total_steps: int):
    """Multiplier of the peak learning rate at each optimisation step (0-based).

    ``"cosine"``: from 1 to 0 at ``total_steps`` (the ``cpu`` pool's schedule).
    ``"triangle"``: piecewise linear through (0, 0.2), (``int(0.23 * total_steps)``, 1) and
    (``total_steps``, 0.07), airbench's.
    """
    if config.lr_schedule == "triangle":
        start, peak_at, end = TRIANGLE
        peak = int(peak_at * total_steps)
        return lambda step: float(np.interp(step, [0, peak, total_steps], [start, 1.0, end]))
    return lambda step: 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / total_steps))


def soft_cross_entropy(logits: torch.Tensor, target: torch.Tensor,
                       label_smoothing: float = 0.0) -> torch.Tensor:
    """Mean cross-entropy with label smoothing, written with dense ops only.

    Equal to ``torch.nn.CrossEntropyLoss(label_smoothing=...)``, whose NLL kernel raises
    on CUDA under ``torch.use_deterministic_algorithms(True)``. Computed in float32.
    """
    logp = torch.log_softmax(logits.float(), dim=1)
    k = logp.shape[1]
    # a comparison, not one_hot (a scatter on CUDA)
    hit = target[:, None] == torch.arange(k, device=logits.device)
    dist = hit.to(logp.dtype) * (1.0 - label_smoothing) + label_smoothing / k
    return -(dist * logp).sum(dim=1).mean()


def _loss_fn(config: RunConfig, device: str):
    if torch.device(device).type == "cuda":
        return lambda logits, y: soft_cross_entropy(logits, y, config.label_smoothing)
    return torch.nn.CrossEntropyLoss(label_smoothing=config.label_smoothing)


def _autocast(config: RunConfig, device: str):
    return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16,
                          enabled=config.precision == "bf16")


def _param_groups(config: RunConfig, model: torch.nn.Module):
    """All trainable parameters at ``lr``, or (``bias_lr_scale`` != 1) batch-norm biases
    in a group of their own at ``lr * bias_lr_scale`` and ``weight_decay / bias_lr_scale``
    (the same decay per step)."""
    if config.bias_lr_scale == 1.0:
        return model.parameters()
    norm_ids = {id(m.bias) for m in model.modules()
                if isinstance(m, torch.nn.BatchNorm2d) and m.bias is not None}
    trainable = [p for p in model.parameters() if p.requires_grad]
    norms = [p for p in trainable if id(p) in norm_ids]
    others = [p for p in trainable if id(p) not in norm_ids]
    scale = config.bias_lr_scale
    return [dict(params=norms, lr=config.lr * scale, weight_decay=config.weight_decay / scale),
            dict(params=others, lr=config.lr, weight_decay=config.weight_decay)]


def make_optimizer(config: RunConfig, model: torch.nn.Module, total_steps: int):
    """The optimizer and its per-step learning-rate schedule (:func:`lr_factor`)."""
    groups = _param_groups(config, model)
    if config.optimizer == "sgd":
        opt = torch.optim.SGD(groups, lr=config.lr, momentum=config.momentum,
                              nesterov=config.nesterov, weight_decay=config.weight_decay)
    elif config.optimizer == "adam":
        opt = torch.optim.Adam(groups, lr=config.lr, weight_decay=config.weight_decay)
    else:
        raise InvalidParameterError(f"optimizer must be 'sgd' or 'adam', got {config.optimizer!r}")
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor(config, total_steps))
    return opt, sched


#: airbench's lookahead: an update every 5 steps, with decay 0.95**5 * (step / steps)**3
LOOKAHEAD_EVERY = 5
LOOKAHEAD_DECAY = 0.95 ** 5


class Lookahead:
    """airbench's lookahead: every :data:`LOOKAHEAD_EVERY` steps, move an average of the
    model's floating-point state (weights and batch-norm statistics) toward the model by
    ``1 - decay`` and copy it back into the model; the last step ends on the average."""

    def __init__(self, model: torch.nn.Module, total_steps: int):
        self.total_steps = total_steps
        self.state = {k: v for k, v in model.state_dict().items() if v.is_floating_point()}
        self.average = {k: v.detach().clone() for k, v in self.state.items()}

    def decay(self, step: int) -> float:
        """Decay of the update after ``step`` optimisation steps."""
        return LOOKAHEAD_DECAY * (step / self.total_steps) ** 3

    @torch.no_grad()
    def update(self, decay: float) -> None:
        for key, value in self.state.items():
            self.average[key].lerp_(value, 1.0 - decay)
            value.copy_(self.average[key])

    def after_step(self, step: int) -> None:
        """Call after optimisation step ``step`` (1-based)."""
        if step % LOOKAHEAD_EVERY == 0:
            self.update(self.decay(step))
        if step >= self.total_steps:
            self.update(1.0)


class Optimisation:
    """One run's optimiser, schedule and (if configured) lookahead, stepped together."""

    def __init__(self, config: RunConfig, model: torch.nn.Module, total_steps: int,
                 device: str):
        self.model = model
        self.opt, self.sched = make_optimizer(config, model, total_steps)
        self.lookahead = Lookahead(model, total_steps) if config.lookahead else None
        self.loss_fn = _loss_fn(config, device)
        self.autocast = lambda: _autocast(config, device)
        self.steps = 0

    def step(self, xb: torch.Tensor, yb: torch.Tensor) -> None:
        with self.autocast():
            loss = self.loss_fn(self.model(xb), yb)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.sched.step()
        self.steps += 1
        if self.lookahead is not None:
            self.lookahead.after_step(self.steps)


#: airbench whitens with the second moments of the first 5,000 training images
WHITEN_IMAGES = 5000
#: whitening filters by the bytes of the images they came from: every run of a batch
#: whitens the same images, and computing the filters takes ~1 s of CPU per run
_WHITENING: dict[bytes, torch.Tensor] = {}


def prepare_model(config: RunConfig, seed: int, data: Dataset, train_x: torch.Tensor,
                  device: str) -> torch.nn.Module:
    """The run's model: built, initialised from the seed's ``init`` stream (the same for
    both arms), airbench94's whitening set from the first :data:`WHITEN_IMAGES` of
    ``train_x`` (uint8 NCHW on the CPU), on ``device`` (NHWC for images if configured)."""
    model = build_model(config, data.num_classes, len(data.vocab) if data.vocab else None)
    init_weights(model, make_generator(seed, "init", 0))
    if isinstance(model, Airbench94):
        images = train_x[:WHITEN_IMAGES]
        key = hashlib.blake2b(images.numpy().tobytes(), digest_size=32).digest()
        if key not in _WHITENING:
            _WHITENING.clear()  # one training set per process at a time
            _WHITENING[key] = whitening_filters(augment.normalize(images))
        with torch.no_grad():
            model.whiten.weight.copy_(_WHITENING[key])
    model.to(device)
    if data.kind == "image" and config.channels_last:
        # NHWC convolutions are ~1.6x faster on CPU (oneDNN) than NCHW for these sizes, and
        # what cuDNN's tensor-core kernels want on a GPU.
        model.to(memory_format=torch.channels_last)
    return model


def tta_logits(model: torch.nn.Module, x: torch.Tensor, level: int) -> torch.Tensor:
    """Logits of a normalised image batch under airbench's test-time augmentation.

    0: the model's; 1: the mean over the image and its mirror; 2: half of level 1 plus a
    quarter each of level 1 on the batch shifted one pixel down-right and up-left
    (reflection padding).
    """
    if level == 0:
        return model(x)

    def mirrored(t):
        return 0.5 * model(t) + 0.5 * model(t.flip(-1))

    logits = mirrored(x)
    if level == 1:
        return logits
    return (0.5 * logits + 0.25 * mirrored(augment.shift_reflect(x, 1))
            + 0.25 * mirrored(augment.shift_reflect(x, -1)))


@torch.no_grad()
def predict(model: torch.nn.Module, data: Dataset, x: torch.Tensor, batch_size: int,
            device: str, config: RunConfig | None = None, tta: int = 0) -> np.ndarray:
    """Predicted class of every row of ``x`` (uint8 images or int64 tokens).

    ``config`` supplies ``precision`` and ``channels_last`` (default: fp32, NHWC); ``tta``
    is the test-time augmentation level of images (:func:`tta_logits`).
    """
    model.eval()
    out = []
    nhwc = config is None or config.channels_last
    with (_autocast(config, device) if config is not None else contextlib.nullcontext()):
        for chunk in x.split(batch_size):
            chunk = chunk.to(device)
            if data.kind == "image":
                chunk = augment.normalize(chunk)
                if nhwc:
                    chunk = chunk.contiguous(memory_format=torch.channels_last)
                out.append(tta_logits(model, chunk, tta).argmax(dim=1))
            else:
                out.append(model(chunk).argmax(dim=1))
    return torch.cat(out).cpu().numpy().astype(np.uint8)


def train_run(config: RunConfig, seed: int, data: Dataset, device: str = "cpu",
              progress=None, deadline: float | None = None) -> RunResult:
    """Train ``config`` with ``seed`` on ``data`` and evaluate on its test set every epoch.

    Every random draw comes from generators derived from ``seed`` (see
    :mod:`real_runs.seeding`): ``init`` (weights), ``order`` (epoch permutations),
    ``augment`` (crop/flip), ``dropout``, and the variant-only ``strong_augment`` and
    ``word_dropout``. Runs with deterministic algorithms and, if the config pins one, its
    thread count, so the same (config, seed, data, device) gives bit-identical results.

    Parameters
    ----------
    config : RunConfig
    seed : int
    data : Dataset
        Must be the dataset ``config`` names.
    device : str
        ``"cpu"`` or ``"cuda"`` (already resolved).
    progress : callable, optional
        Called as ``progress(epoch, epochs, accuracy)`` after each epoch.
    deadline : float, optional
        A ``time.monotonic()`` value; a run still unfinished after an epoch that ends past
        it raises :class:`RunDeadlineError` (nothing is returned or stored).

    Returns
    -------
    RunResult
    """
    seed = check_seed(seed)
    if data.name != config.dataset:
        raise InvalidParameterError(f"data is {data.name!r} but config is for {config.dataset!r}")
    if config.epochs < 1 or config.batch_size < 1:
        raise InvalidParameterError(f"epochs and batch_size must be >= 1, got {config.epochs!r} "
                                    f"and {config.batch_size!r}")
    if config.precision not in PRECISIONS:
        raise InvalidParameterError(f"precision must be one of {PRECISIONS}, got "
                                    f"{config.precision!r}")
    if config.data_path not in DATA_PATHS:
        raise InvalidParameterError(f"data_path must be one of {DATA_PATHS}, got "
                                    f"{config.data_path!r}")
    if config.lr_schedule not in LR_SCHEDULES:
        raise InvalidParameterError(f"lr_schedule must be one of {LR_SCHEDULES}, got "
                                    f"{config.lr_schedule!r}")
    if config.augment not in AUGMENTS:
        raise InvalidParameterError(f"augment must be one of {AUGMENTS}, got {config.augment!r}")
    if config.tta not in (0, 1, 2):
        raise InvalidParameterError(f"tta must be 0, 1 or 2, got {config.tta!r}")
    if not config.bias_lr_scale > 0:
        raise InvalidParameterError(f"bias_lr_scale must be > 0, got {config.bias_lr_scale!r}")
    if not config.whiten_bias_epochs >= 0:
        raise InvalidParameterError(f"whiten_bias_epochs must be >= 0, got "
                                    f"{config.whiten_bias_epochs!r}")
    with deterministic(config.threads):
        return _train(config, seed, data, device, progress, deadline)


def epoch_shifts(config: RunConfig, epoch: int, n: int, flip_base, generator):
    """``flip_translate``'s (row offsets, column offsets, flips) of the ``n`` training images
    for ``epoch`` (drawn from ``generator`` now), or None for the other augmentations."""
    if config.augment != "flip_translate":
        return None
    dy, dx = augment.translate_params(n, generator, augment.TRANSLATE)
    return dy, dx, flip_base ^ bool(epoch % 2)


def _host_batches(config, data, train_x, train_y, order, gens, batch, steps, device,
                  shifts=None):
    """One epoch of (inputs, labels) gathered and augmented on the CPU (the ``cpu`` pool's
    path); ``shifts``: :func:`epoch_shifts`."""
    for step in range(steps):
        sel = order[step * batch:(step + 1) * batch]
        xb, yb = train_x[sel], train_y[sel]
        if data.kind == "image":
            if config.augment == "crop_flip":
                xb = augment.crop_flip(xb, gens["augment"])
            elif shifts is not None:
                xb = augment.apply_flip_translate(xb, *(t[sel] for t in shifts))
            if config.strong_augment == "trivial_augment":
                xb = augment.trivial_augment(xb, gens["strong_augment"])
            xb = augment.normalize(xb.to(device))
            if config.channels_last:
                xb = xb.contiguous(memory_format=torch.channels_last)
        else:
            if config.word_dropout > 0:
                xb = augment.word_dropout(xb, config.word_dropout, gens["word_dropout"])
            xb = xb.to(device)
        yield xb, yb.to(device)


def _device_batches(config, data, train_x, train_y, order, gens, batch, steps, device,
                    shifts=None):
    """One epoch of batches from a training set already on ``device``.

    All of the epoch's random numbers are drawn first, per batch in the host path's order,
    and copied to the device in one go each; ``shifts``: :func:`epoch_shifts`.
    """
    used = steps * batch
    order = order[:used].to(device)
    if shifts is not None:
        shifts = tuple(t.to(device) for t in shifts)
    if data.kind == "image" and config.augment == "crop_flip":
        draws = [augment.crop_flip_params(batch, gens["augment"]) for _ in range(steps)]
        dy, dx, flip = (torch.cat(parts).to(device) for parts in zip(*draws))
    plans = None
    if data.kind == "image" and config.strong_augment == "trivial_augment":
        op, magnitude = augment.trivial_augment_params(used, gens["strong_augment"])
        plans = augment.plan_trivial_augment(op, magnitude, batch, device,
                                             tuple(train_x.shape[-2:]))
    if data.kind == "text" and config.word_dropout > 0:
        drop = torch.cat([torch.rand((batch, train_x.shape[1]), generator=gens["word_dropout"])
                          < config.word_dropout for _ in range(steps)]).to(device)
    for step in range(steps):
        sl = slice(step * batch, (step + 1) * batch)
        sel = order[sl]
        xb, yb = train_x[sel], train_y[sel]
        if data.kind == "image":
            if config.augment == "crop_flip":
                xb = augment.apply_crop_flip(xb, dy[sl], dx[sl], flip[sl])
            elif shifts is not None:
                xb = augment.apply_flip_translate(xb, *(t[sel] for t in shifts))
            if plans is not None:
                xb = augment.apply_trivial_augment(xb, plans[step])
            xb = augment.normalize(xb)
            if config.channels_last:
                xb = xb.contiguous(memory_format=torch.channels_last)
        elif config.word_dropout > 0:
            xb = torch.where(drop[sl] & (xb != 0), torch.zeros_like(xb), xb)
        yield xb, yb


def _train(config: RunConfig, seed: int, data: Dataset, device: str, progress,
           deadline) -> RunResult:
    start = time.perf_counter()
    replica = config.stream_replica
    gens = {name: make_generator(seed, name, replica)
            for name in ("order", "augment", "dropout", "strong_augment", "word_dropout")}
    idx = train_subset(data.train_clean_y, config.n_train, config.subset_seed)
    train_x = _inputs(data, data.train_x[idx])
    train_y = torch.from_numpy(data.train_y[idx])
    test_x = _inputs(data, data.test_x)
    n = len(idx)
    batch = min(config.batch_size, n)
    steps_per_epoch = n // batch  # drop the ragged last batch: BatchNorm needs >1 example
    model = prepare_model(config, seed, data, train_x, device)
    set_dropout_generator(model, gens["dropout"])
    total_steps = max(1, steps_per_epoch * config.epochs)
    optimisation = Optimisation(config, model, total_steps, device)
    flip_base = (augment.flip_base_params(n, gens["augment"])
                 if config.augment == "flip_translate" else None)
    batches = _host_batches
    if config.data_path == "device":
        batches = _device_batches
        train_x, train_y, test_x = train_x.to(device), train_y.to(device), test_x.to(device)
    epoch_acc, train_time = [], 0.0
    for epoch in range(config.epochs):
        t0 = time.perf_counter()
        model.train()
        if isinstance(model, Airbench94):
            model.whiten.bias.requires_grad_(epoch < config.whiten_bias_epochs)
        order = torch.randperm(n, generator=gens["order"])
        shifts = epoch_shifts(config, epoch, n, flip_base, gens["augment"])
        for xb, yb in batches(config, data, train_x, train_y, order, gens, batch,
                              steps_per_epoch, device, shifts):
            optimisation.step(xb, yb)
        if torch.device(device).type == "cuda":
            torch.cuda.synchronize()  # count the queued steps as training, not evaluation
        train_time += time.perf_counter() - t0
        last = epoch + 1 == config.epochs
        predictions = predict(model, data, test_x, config.eval_batch_size, device, config,
                              tta=config.tta if last else 0)
        correct = predictions == data.test_y
        epoch_acc.append(float(correct.mean()))
        if progress is not None:
            progress(epoch + 1, config.epochs, epoch_acc[-1])
        if deadline is not None and not last and time.monotonic() > deadline:
            raise RunDeadlineError(f"run passed its deadline after epoch {epoch + 1} of "
                                   f"{config.epochs}")
    return RunResult(predictions=predictions, correct=correct,
                     epoch_accuracy=np.array(epoch_acc, dtype=np.float64),
                     wall_time_s=time.perf_counter() - start, train_time_s=train_time,
                     train_examples=steps_per_epoch * batch * config.epochs)
