"""Training-time input transformations driven by explicit generators."""

from __future__ import annotations

import torch

CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2470, 0.2435, 0.2616)


def crop_flip(images: torch.Tensor, generator: torch.Generator, padding: int = 4) -> torch.Tensor:
    """Random ``padding``-pixel zero-padded crop and horizontal flip of a uint8 NCHW batch.

    Draws exactly 3 numbers per image from ``generator`` (row offset, column offset, flip),
    whatever the variant adds elsewhere.
    """
    n, c, h, w = images.shape
    padded = torch.nn.functional.pad(images, (padding,) * 4)
    dy = torch.randint(0, 2 * padding + 1, (n,), generator=generator)
    dx = torch.randint(0, 2 * padding + 1, (n,), generator=generator)
    flip = torch.rand(n, generator=generator) < 0.5
    rows = dy[:, None] + torch.arange(h)
    cols = dx[:, None] + torch.arange(w)
    cols = torch.where(flip[:, None], cols.flip(1), cols)
    return padded[torch.arange(n)[:, None, None, None], torch.arange(c)[None, :, None, None],
                  rows[:, None, :, None], cols[:, None, None, :]]


def trivial_augment(images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """TrivialAugmentWide (torchvision) applied independently to each image of a uint8 batch.

    torchvision draws its op and magnitude from the global RNG and takes no generator, so
    each batch runs inside ``torch.random.fork_rng`` seeded from one draw of ``generator``:
    the result depends only on ``generator`` and the caller's global RNG state is restored.
    """
    from torchvision.transforms import TrivialAugmentWide

    seed = int(torch.randint(0, 2**62, (1,), generator=generator))
    op = TrivialAugmentWide()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return torch.stack([op(img) for img in images])


def normalize(images: torch.Tensor) -> torch.Tensor:
    """uint8 NCHW -> float32, scaled to [0, 1] and standardised with CIFAR-10 statistics."""
    mean = torch.tensor(CIFAR_MEAN, device=images.device).view(1, 3, 1, 1)
    std = torch.tensor(CIFAR_STD, device=images.device).view(1, 3, 1, 1)
    return (images.float() / 255.0 - mean) / std


def word_dropout(tokens: torch.Tensor, p: float, generator: torch.Generator,
                 pad: int = 0) -> torch.Tensor:
    """Replace each non-PAD token by ``pad`` with probability ``p`` (training only)."""
    drop = torch.rand(tokens.shape, generator=generator) < p
    return torch.where(drop & (tokens != pad), torch.full_like(tokens, pad), tokens)
