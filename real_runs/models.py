"""Models: airbench94, a small CPU CNN, TextCNN; explicit-generator initialisation."""

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


class AirbenchConv(nn.Conv2d):
    """airbench's 3x3 'same' convolution without bias; :func:`init_weights` gives it
    PyTorch's default uniform weights with its first ``in_channels`` filters set to the
    identity (Dirac)."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__(c_in, c_out, kernel_size=3, padding="same", bias=False)


class AirbenchBatchNorm(nn.BatchNorm2d):
    """Batch norm with a fixed scale of 1 (only the bias trains), eps 1e-12 and running
    statistics that keep 0.6 of their old value per step (PyTorch ``momentum`` 0.4)."""

    def __init__(self, channels: int):
        super().__init__(channels, eps=1e-12, momentum=0.4)
        self.weight.requires_grad_(False)


class AirbenchBlock(nn.Module):
    """conv, 2x2 max-pool, BN, GELU, conv, BN, GELU."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.conv1 = AirbenchConv(c_in, c_out)
        self.pool = nn.MaxPool2d(2)
        self.norm1 = AirbenchBatchNorm(c_out)
        self.conv2 = AirbenchConv(c_out, c_out)
        self.norm2 = AirbenchBatchNorm(c_out)
        self.activ = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.activ(self.norm1(self.pool(self.conv1(x))))
        return self.activ(self.norm2(self.conv2(x)))


class Scale(nn.Module):
    """Multiply by a constant (airbench's logit scale 1/9)."""

    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.factor


#: airbench94's first layer: 2x2 patches of 3 channels, each of their 12 whitening
#: directions taken with both signs
WHITEN_KERNEL = 2
WHITEN_WIDTH = 2 * 3 * WHITEN_KERNEL ** 2


class Airbench94(nn.Sequential):
    """airbench94 (Jordan 2024): a fixed 2x2 whitening convolution (24 channels, trained
    bias), GELU, three :class:`AirbenchBlock` of ``width``, ``4 width``, ``4 width``
    channels, 3x3 max-pool, a linear head without bias, logits x 1/9.

    With ``width=64`` (the paper's) it has 1.97 M parameters and costs 0.236 GFLOP per
    32x32 image forward. Its first layer is set from training images
    (:func:`whitening_filters`, by :func:`real_runs.engine.prepare_model`).
    """

    def __init__(self, num_classes: int = 10, width: int = 64):
        whiten = nn.Conv2d(3, WHITEN_WIDTH, WHITEN_KERNEL, padding=0, bias=True)
        whiten.weight.requires_grad_(False)
        super().__init__(
            whiten, nn.GELU(),
            AirbenchBlock(WHITEN_WIDTH, width),
            AirbenchBlock(width, 4 * width),
            AirbenchBlock(4 * width, 4 * width),
            nn.MaxPool2d(3), nn.Flatten(),
            nn.Linear(4 * width, num_classes, bias=False),
            Scale(1.0 / 9.0),
        )

    @property
    def whiten(self) -> nn.Conv2d:
        return self[0]


@torch.no_grad()
def whitening_filters(images: torch.Tensor, eps: float = 5e-4) -> torch.Tensor:
    """airbench94's whitening filters from the 2x2 patches of ``images``.

    The eigenvectors of the patches' uncentred second-moment matrix, each divided by
    sqrt(eigenvalue + ``eps``), in decreasing eigenvalue order, then the same with the
    opposite sign. Computed on the CPU in float64 whatever the images' device, so both
    arms and every device get the same layer.

    Parameters
    ----------
    images : torch.Tensor of float, shape (n, 3, h, w)
        Normalised training images (airbench: the first 5,000).

    Returns
    -------
    torch.Tensor of float64, shape (24, 3, 2, 2)
    """
    x = images.detach().to("cpu", torch.float64)
    k = WHITEN_KERNEL
    patches = x.unfold(2, k, 1).unfold(3, k, 1)              # n, c, h', w', k, k
    patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(-1, 3 * k * k)
    moment = patches.T @ patches / len(patches)
    values, vectors = torch.linalg.eigh(moment)              # ascending
    values, vectors = values.flip(0), vectors.flip(1)
    filters = (vectors / torch.sqrt(values + eps)).T.reshape(3 * k * k, 3, k, k)
    return torch.cat([filters, -filters])


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
        if config.model == "airbench94":
            return Airbench94(num_classes, config.width)
        if config.model == "smallcnn":
            return SmallCNN(num_classes, config.width)
        if config.model == "textcnn":
            if vocab_size is None or config.max_len < max(TextCNN.kernel_sizes):
                raise InvalidParameterError(f"textcnn needs a vocabulary and max_len >= 5, got "
                                            f"vocab_size={vocab_size!r}, "
                                            f"max_len={config.max_len!r}")
            return TextCNN(vocab_size, config.embed_dim, config.width, num_classes,
                           config.dropout)
    raise InvalidParameterError("model must be 'airbench94', 'smallcnn' or 'textcnn', got "
                                f"{config.model!r}")


@torch.no_grad()
def init_weights(model: nn.Module, generator: torch.Generator) -> nn.Module:
    """(Re)initialise every parameter of ``model`` from ``generator`` alone.

    Convolutions get Kaiming-normal (fan-out, ReLU) weights, except
    :class:`AirbenchConv`: PyTorch's default uniform with its first ``in_channels`` filters
    the identity (airbench's rule); linear layers PyTorch's default uniform, batch norm
    (1, 0), embeddings N(0, 1) with a zero PAD row. Raises TypeError if a parameterised
    module type is not covered, so no parameter silently keeps a global-RNG initialisation.
    """
    done = set()
    for module in model.modules():
        if isinstance(module, AirbenchConv):
            nn.init.kaiming_uniform_(module.weight, a=math.sqrt(5), generator=generator)
            nn.init.dirac_(module.weight[:module.in_channels])
        elif isinstance(module, (nn.Conv1d, nn.Conv2d)):
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
