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
import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from evalcal_core.validate import InvalidParameterError
from real_runs import augment
from real_runs.config import DATA_PATHS, PRECISIONS, RunConfig
from real_runs.data import Dataset
from real_runs.models import build_model, init_weights, set_dropout_generator
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


def lr_factor(config: RunConfig, total_steps: int, steps_per_epoch: int):
    """Multiplier of the peak learning rate at each optimisation step (0-based).

    Linear warm-up over ``warmup_epochs`` epochs (step ``i`` gets ``(i + 1) / warm``), then
    a cosine from 1 to 0 at ``total_steps``. Without warm-up this is exactly the cosine the
    ``cpu`` pool was trained with.
    """
    warm = min(config.warmup_epochs * steps_per_epoch, total_steps - 1)
    if warm <= 0:
        return lambda step: 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) /
                                                  total_steps))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        frac = min(step - warm, total_steps - warm) / (total_steps - warm)
        return 0.5 * (1.0 + math.cos(math.pi * frac))

    return factor


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


def _make_optimizer(config: RunConfig, model: torch.nn.Module, total_steps: int,
                    steps_per_epoch: int = 1):
    if config.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=config.lr, momentum=config.momentum,
                              nesterov=config.nesterov, weight_decay=config.weight_decay)
    elif config.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=config.lr,
                               weight_decay=config.weight_decay)
    else:
        raise InvalidParameterError(f"optimizer must be 'sgd' or 'adam', got {config.optimizer!r}")
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor(config, total_steps,
                                                             steps_per_epoch))
    return opt, sched


@torch.no_grad()
def predict(model: torch.nn.Module, data: Dataset, x: torch.Tensor, batch_size: int,
            device: str, config: RunConfig | None = None) -> np.ndarray:
    """Predicted class of every row of ``x`` (uint8 images or int64 tokens).

    ``config`` supplies ``precision`` and ``channels_last`` (default: fp32, NHWC).
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
    if config.warmup_epochs < 0 or config.warmup_epochs > config.epochs:
        raise InvalidParameterError(f"warmup_epochs must be in [0, epochs={config.epochs}], got "
                                    f"{config.warmup_epochs!r}")
    with deterministic(config.threads):
        return _train(config, seed, data, device, progress, deadline)


def _host_batches(config, data, train_x, train_y, order, gens, batch, steps, device):
    """One epoch of (inputs, labels) gathered and augmented on the CPU (the ``cpu`` pool's path)."""
    for step in range(steps):
        sel = order[step * batch:(step + 1) * batch]
        xb, yb = train_x[sel], train_y[sel]
        if data.kind == "image":
            if config.augment == "crop_flip":
                xb = augment.crop_flip(xb, gens["augment"])
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


def _device_batches(config, data, train_x, train_y, order, gens, batch, steps, device):
    """One epoch of batches from a training set already on ``device``.

    All of the epoch's random numbers are drawn first, per batch in the host path's order,
    and copied to the device in one go each.
    """
    used = steps * batch
    order = order[:used].to(device)
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
    model = build_model(config, data.num_classes, len(data.vocab) if data.vocab else None)
    init_weights(model, make_generator(seed, "init", 0))
    set_dropout_generator(model, gens["dropout"])
    model.to(device)
    if data.kind == "image" and config.channels_last:
        # NHWC convolutions are ~1.6x faster on CPU (oneDNN) than NCHW for these sizes, and
        # what cuDNN's tensor-core kernels want on a GPU.
        model.to(memory_format=torch.channels_last)
    total_steps = max(1, steps_per_epoch * config.epochs)
    opt, sched = _make_optimizer(config, model, total_steps, steps_per_epoch)
    loss_fn = _loss_fn(config, device)
    batches = _host_batches
    if config.data_path == "device":
        batches = _device_batches
        train_x, train_y, test_x = train_x.to(device), train_y.to(device), test_x.to(device)
    epoch_acc, train_time = [], 0.0
    for epoch in range(config.epochs):
        t0 = time.perf_counter()
        model.train()
        order = torch.randperm(n, generator=gens["order"])
        for xb, yb in batches(config, data, train_x, train_y, order, gens, batch,
                              steps_per_epoch, device):
            with _autocast(config, device):
                loss = loss_fn(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        if torch.device(device).type == "cuda":
            torch.cuda.synchronize()  # count the queued steps as training, not evaluation
        train_time += time.perf_counter() - t0
        predictions = predict(model, data, test_x, config.eval_batch_size, device, config)
        correct = predictions == data.test_y
        epoch_acc.append(float(correct.mean()))
        if progress is not None:
            progress(epoch + 1, config.epochs, epoch_acc[-1])
        if deadline is not None and epoch + 1 < config.epochs and time.monotonic() > deadline:
            raise RunDeadlineError(f"run passed its deadline after epoch {epoch + 1} of "
                                   f"{config.epochs}")
    return RunResult(predictions=predictions, correct=correct,
                     epoch_accuracy=np.array(epoch_acc, dtype=np.float64),
                     wall_time_s=time.perf_counter() - start, train_time_s=train_time,
                     train_examples=steps_per_epoch * batch * config.epochs)
