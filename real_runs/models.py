"""Models: CIFAR ResNet-18, a small CPU CNN, TextCNN; explicit-generator initialisation."""

from __future__ import annotations

import math

import torch
from torch import nn

from evalcal_core.validate import InvalidParameterError


class SeededDropout(nn.Module):
    """Dropout whose masks come from an explicit ``torch.Generator``.

    ``nn.Dropout`` draws from the global RNG, which would make the paired arms share or not
    share masks by accident; the trainer sets :attr:`generator` to the run's dropout stream.
    """

    def __init__(self, p: float):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise InvalidParameterError(f"dropout must be in [0, 1), got {p!r}")
        self.p = p
        self.generator: torch.Generator | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        if self.generator is None:
            raise RuntimeError("SeededDropout needs .generator set before training")
        keep = torch.rand(x.shape, generator=self.generator) >= self.p
        return x * keep.to(x.device, x.dtype) / (1.0 - self.p)


def _conv_block(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
                         nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class GlobalMaxPool(nn.Module):
    """``AdaptiveMaxPool2d(1)``, with a CUDA backward that deterministic mode allows.

    On CUDA ``adaptive_max_pool2d`` has no deterministic backward (torch raises), so there
    the same maximum is taken with ``amax``; the CPU keeps the original op, so CPU results
    (and the committed ``cpu`` pool) are unchanged.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda:
            return x.amax(dim=(2, 3), keepdim=True)
        return nn.functional.adaptive_max_pool2d(x, 1)


class GlobalAvgPool(nn.Module):
    """Mean over height and width; replaces ``AdaptiveAvgPool2d(1)``, whose CUDA backward
    is not deterministic (torch raises in deterministic mode)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=(2, 3), keepdim=True)


class SmallCNN(nn.Sequential):
    """Four 3x3 conv-BN-ReLU stages (width, 2w, 4w, 8w channels), pooling, linear head.

    With ``width=16`` it has 99k parameters and trains at ~2,400 images/s on one CPU core.
    """

    def __init__(self, num_classes: int = 10, width: int = 16):
        w = width
        super().__init__(
            _conv_block(3, w), nn.MaxPool2d(2),
            _conv_block(w, 2 * w), nn.MaxPool2d(2),
            _conv_block(2 * w, 4 * w), nn.MaxPool2d(2),
            _conv_block(4 * w, 8 * w), GlobalMaxPool(), nn.Flatten(),
            nn.Linear(8 * w, num_classes),
        )


def resnet18_cifar(num_classes: int = 10) -> nn.Module:
    """torchvision's ResNet-18 with a 3x3 stride-1 stem and no max-pool (32x32 inputs).

    The final pooling is a plain mean (:class:`GlobalAvgPool`) so that training on CUDA
    works under ``torch.use_deterministic_algorithms(True)``.
    """
    import torchvision

    model = torchvision.models.resnet18(num_classes=num_classes)
    model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
    model.maxpool = nn.Identity()
    model.avgpool = GlobalAvgPool()
    return model


class TextCNN(nn.Module):
    """Kim (2014) TextCNN: embeddings, 1-D convs of widths 3/4/5, max-over-time, dropout.

    Parameters
    ----------
    vocab_size : int
        Number of token ids (id 0 is PAD).
    embed_dim, filters : int
        Embedding size and filters per kernel width.
    num_classes : int
    dropout : float
        Dropout probability before the linear layer.
    """

    kernel_sizes = (3, 4, 5)

    def __init__(self, vocab_size: int, embed_dim: int, filters: int, num_classes: int,
                 dropout: float):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(embed_dim, filters, k) for k in self.kernel_sizes)
        self.dropout = SeededDropout(dropout)
        self.fc = nn.Linear(filters * len(self.kernel_sizes), num_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embedding(tokens).transpose(1, 2)  # (batch, embed, time)
        pooled = [torch.relu(conv(x)).amax(dim=2) for conv in self.convs]
        return self.fc(self.dropout(torch.cat(pooled, dim=1)))


def build_model(config, num_classes: int, vocab_size: int | None = None) -> nn.Module:
    """The (uninitialised) model named by ``config.model``; call :func:`init_weights` next."""
    # Construction initialises with the global RNG; fork it so callers' state is untouched.
    # The weights are overwritten from the run's init stream by init_weights anyway.
    with torch.random.fork_rng(devices=[]):
        if config.model == "resnet18":
            return resnet18_cifar(num_classes)
        if config.model == "smallcnn":
            return SmallCNN(num_classes, config.width)
        if config.model == "textcnn":
            if vocab_size is None or config.max_len < max(TextCNN.kernel_sizes):
                raise InvalidParameterError(f"textcnn needs a vocabulary and max_len >= 5, got "
                                            f"vocab_size={vocab_size!r}, "
                                            f"max_len={config.max_len!r}")
            return TextCNN(vocab_size, config.embed_dim, config.width, num_classes,
                           config.dropout)
    raise InvalidParameterError("model must be 'resnet18', 'smallcnn' or 'textcnn', got "
                                f"{config.model!r}")


@torch.no_grad()
def init_weights(model: nn.Module, generator: torch.Generator) -> nn.Module:
    """(Re)initialise every parameter of ``model`` from ``generator`` alone.

    Convolutions get Kaiming-normal (fan-out, ReLU) weights as in torchvision's ResNet,
    linear layers PyTorch's default uniform, batch norm (1, 0), embeddings N(0, 1) with a
    zero PAD row. Raises TypeError if a parameterised module type is not covered, so no
    parameter silently keeps a global-RNG initialisation.
    """
    done = set()
    for module in model.modules():
        if isinstance(module, (nn.Conv1d, nn.Conv2d)):
            nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu",
                                    generator=generator)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Linear):
            nn.init.kaiming_uniform_(module.weight, a=math.sqrt(5), generator=generator)
            if module.bias is not None:
                bound = 1.0 / math.sqrt(module.in_features)
                nn.init.uniform_(module.bias, -bound, bound, generator=generator)
        elif isinstance(module, nn.BatchNorm2d):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)
            module.reset_running_stats()
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, generator=generator)
            if module.padding_idx is not None:
                module.weight[module.padding_idx].zero_()
        else:
            continue
        done.update(id(p) for p in module.parameters(recurse=False))
    missed = [name for name, p in model.named_parameters() if id(p) not in done]
    if missed:
        raise TypeError(f"init_weights does not cover parameters {missed}")
    return model


def set_dropout_generator(model: nn.Module, generator: torch.Generator) -> None:
    """Point every :class:`SeededDropout` of ``model`` at ``generator``."""
    for module in model.modules():
        if isinstance(module, SeededDropout):
            module.generator = generator
