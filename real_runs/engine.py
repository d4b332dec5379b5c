"""Training and evaluation of one run (one config, one seed)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from real_runs import augment
from real_runs.config import RunConfig
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


def _make_optimizer(config: RunConfig, model: torch.nn.Module, total_steps: int):
    if config.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=config.lr, momentum=config.momentum,
                              nesterov=config.nesterov, weight_decay=config.weight_decay)
    elif config.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=config.lr,
                               weight_decay=config.weight_decay)
    else:
        raise ValueError(f"optimizer must be 'sgd' or 'adam', got {config.optimizer!r}")
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda step: 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / total_steps)))
    return opt, sched


@torch.no_grad()
def predict(model: torch.nn.Module, data: Dataset, x: torch.Tensor, batch_size: int,
            device: str) -> np.ndarray:
    """Predicted class of every row of ``x`` (uint8 images or int64 tokens)."""
    model.eval()
    out = []
    for chunk in x.split(batch_size):
        chunk = chunk.to(device)
        if data.kind == "image":
            chunk = augment.normalize(chunk).contiguous(memory_format=torch.channels_last)
        out.append(model(chunk).argmax(dim=1).cpu())
    return torch.cat(out).numpy().astype(np.uint8)


def train_run(config: RunConfig, seed: int, data: Dataset, device: str = "cpu",
              progress=None) -> RunResult:
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

    Returns
    -------
    RunResult
    """
    seed = check_seed(seed)
    if data.name != config.dataset:
        raise ValueError(f"data is {data.name!r} but config is for {config.dataset!r}")
    if config.epochs < 1 or config.batch_size < 1:
        raise ValueError(f"epochs and batch_size must be >= 1, got {config.epochs!r} and "
                         f"{config.batch_size!r}")
    with deterministic(config.threads):
        return _train(config, seed, data, device, progress)


def _train(config: RunConfig, seed: int, data: Dataset, device: str, progress) -> RunResult:
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
    if data.kind == "image":
        # NHWC convolutions are ~1.6x faster on CPU (oneDNN) than NCHW for these sizes.
        model.to(memory_format=torch.channels_last)
    opt, sched = _make_optimizer(config, model, max(1, steps_per_epoch * config.epochs))
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=config.label_smoothing)
    epoch_acc, train_time = [], 0.0
    for epoch in range(config.epochs):
        t0 = time.perf_counter()
        model.train()
        order = torch.randperm(n, generator=gens["order"])
        for step in range(steps_per_epoch):
            sel = order[step * batch:(step + 1) * batch]
            xb, yb = train_x[sel], train_y[sel]
            if data.kind == "image":
                if config.augment == "crop_flip":
                    xb = augment.crop_flip(xb, gens["augment"])
                if config.strong_augment == "trivial_augment":
                    xb = augment.trivial_augment(xb, gens["strong_augment"])
                xb = augment.normalize(xb.to(device)).contiguous(
                    memory_format=torch.channels_last)
            else:
                if config.word_dropout > 0:
                    xb = augment.word_dropout(xb, config.word_dropout, gens["word_dropout"])
                xb = xb.to(device)
            loss = loss_fn(model(xb), yb.to(device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        train_time += time.perf_counter() - t0
        predictions = predict(model, data, test_x, config.eval_batch_size, device)
        correct = predictions == data.test_y
        epoch_acc.append(float(correct.mean()))
        if progress is not None:
            progress(epoch + 1, config.epochs, epoch_acc[-1])
    return RunResult(predictions=predictions, correct=correct,
                     epoch_accuracy=np.array(epoch_acc, dtype=np.float64),
                     wall_time_s=time.perf_counter() - start, train_time_s=train_time,
                     train_examples=steps_per_epoch * batch * config.epochs)
