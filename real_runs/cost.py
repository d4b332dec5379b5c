"""What an image run costs in floating-point operations, counted from the model itself.

The device plans are sized from these counts (see :mod:`real_runs.gpu_batch`): a lent GPU
has minutes, so how many paired seeds fit is estimated before the call, not found out
during it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: forward passes per test image at each test-time augmentation level (engine.tta_logits)
TTA_PASSES = {0: 1, 1: 2, 2: 6}
#: a training step costs the forward and two backward products (inputs and weights)
TRAIN_PER_FORWARD = 3


def forward_flop(model, input_shape: tuple[int, ...]) -> int:
    """Floating-point operations (2 per multiply-add) of one forward pass of one input.

    Counts the convolutions and linear layers, which are all but a fraction of a percent
    of these models' work (batch norm, activations and pooling are left out).

    Parameters
    ----------
    model : torch.nn.Module
    input_shape : tuple of int
        One input's shape without the batch axis, e.g. ``(3, 32, 32)``.
    """
    import torch

    total = 0

    def count(module, inputs, output):
        nonlocal total
        if isinstance(module, (torch.nn.Conv1d, torch.nn.Conv2d)):
            per_output = module.in_channels // module.groups
            for k in module.kernel_size:
                per_output *= k
            total += 2 * per_output * output.numel()
        elif isinstance(module, torch.nn.Linear):
            total += 2 * module.in_features * output.numel()

    hooks = [m.register_forward_hook(count) for m in model.modules()
             if isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Linear))]
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            model(torch.zeros((1, *input_shape)))
    finally:
        for hook in hooks:
            hook.remove()
        model.train(was_training)
    return total


@dataclass(frozen=True)
class RunCost:
    """Floating-point operations of one image run.

    Attributes
    ----------
    forward_flop : int
        One image, one forward pass.
    train_flop, eval_flop : float
        All training steps; every evaluation of the test set (plain after each epoch but
        the last, with the configured test-time augmentation after the last).
    """

    forward_flop: int
    train_flop: float
    eval_flop: float

    @property
    def total_flop(self) -> float:
        return self.train_flop + self.eval_flop


def run_cost(config, n_train: int = 50_000, n_test: int = 10_000,
             num_classes: int = 10) -> RunCost:
    """The cost of one run of the image ``config`` on ``n_train`` / ``n_test`` images.

    Training drops the ragged last batch, as :func:`real_runs.engine.train_run` does.
    """
    from real_runs.models import build_model

    model = build_model(config, num_classes)
    fwd = forward_flop(model, (3, 32, 32))
    n = n_train if config.n_train is None else min(config.n_train, n_train)
    batch = min(config.batch_size, n)
    examples = (n // batch) * batch * config.epochs
    evals = (config.epochs - 1) + TTA_PASSES[config.tta]
    return RunCost(forward_flop=fwd, train_flop=float(TRAIN_PER_FORWARD * fwd * examples),
                   eval_flop=float(fwd * n_test * evals))
