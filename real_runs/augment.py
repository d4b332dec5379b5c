"""Training-time input transformations driven by explicit generators.

Two kinds of functions: ``*_params`` draw a batch's random choices from a (CPU)
``torch.Generator``; ``apply_*`` apply given choices to a uint8 NCHW batch on whatever device
it lives on. The CPU path and the GPU data path therefore draw the same numbers for the same
seed; only where the values are applied differs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from evalcal_core.validate import InvalidParameterError

CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2470, 0.2435, 0.2616)


def crop_flip_params(n: int, generator: torch.Generator, padding: int = 4):
    """Row offsets, column offsets (int64, ``0..2*padding``) and flips (bool) of ``n`` images.

    Draws exactly 3 numbers per image from ``generator``, in this order: ``n`` row offsets,
    ``n`` column offsets, ``n`` flips.
    """
    dy, dx = translate_params(n, generator, padding)
    flip = torch.rand(n, generator=generator) < 0.5
    return dy, dx, flip


def translate_params(n: int, generator: torch.Generator, padding: int):
    """Row and column offsets (int64, ``0..2*padding``) of ``n`` images.

    Draws ``n`` row offsets, then ``n`` column offsets from ``generator``.
    """
    dy = torch.randint(0, 2 * padding + 1, (n,), generator=generator)
    dx = torch.randint(0, 2 * padding + 1, (n,), generator=generator)
    return dy, dx


def gather_windows(images: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
                   flip: torch.Tensor) -> torch.Tensor:
    """Image ``i`` of an NCHW batch read at source ``rows[i]`` x ``cols[i]`` (each
    ``(n, size)``), columns reversed where ``flip[i]``: pure indexing, the same bytes on any
    device (all on the device of ``images``)."""
    n, c = images.shape[:2]
    dev = images.device
    cols = torch.where(flip[:, None], cols.flip(1), cols)
    return images[torch.arange(n, device=dev)[:, None, None, None],
                  torch.arange(c, device=dev)[None, :, None, None],
                  rows[:, None, :, None], cols[:, None, None, :]]


def apply_crop_flip(images: torch.Tensor, dy: torch.Tensor, dx: torch.Tensor,
                    flip: torch.Tensor, padding: int = 4) -> torch.Tensor:
    """Zero-pad a uint8 NCHW batch by ``padding``, crop at (``dy``, ``dx``), flip where ``flip``.

    Pure indexing, so it gives the same bytes on any device; ``dy``, ``dx`` and ``flip`` must
    be on the device of ``images``.
    """
    h, w = images.shape[-2:]
    padded = torch.nn.functional.pad(images, (padding,) * 4)
    rows = dy[:, None] + torch.arange(h, device=images.device)
    cols = dx[:, None] + torch.arange(w, device=images.device)
    return gather_windows(padded, rows, cols, flip)


def crop_flip(images: torch.Tensor, generator: torch.Generator, padding: int = 4) -> torch.Tensor:
    """Random ``padding``-pixel zero-padded crop and horizontal flip of a uint8 NCHW batch.

    Draws exactly 3 numbers per image from ``generator`` (row offset, column offset, flip),
    whatever the variant adds elsewhere (see :func:`crop_flip_params`).
    """
    dy, dx, flip = crop_flip_params(len(images), generator, padding)
    return apply_crop_flip(images, dy, dx, flip, padding)


#: airbench's translation: up to 2 pixels each way, reflection padding
TRANSLATE = 2


def flip_base_params(n: int, generator: torch.Generator) -> torch.Tensor:
    """Which of ``n`` images start mirrored (bool), drawn once per run before epoch 0.

    airbench's alternating flip: each image is mirrored at random once, then every image
    is mirrored again in every other epoch, so each image is seen both ways in any two
    consecutive epochs. Draws ``n`` numbers from ``generator``.
    """
    return torch.rand(n, generator=generator) < 0.5


def reflect_index(offset: torch.Tensor, size: int, padding: int) -> torch.Tensor:
    """Source positions of a ``size``-long window starting at ``offset`` of a signal
    reflection-padded by ``padding`` (``numpy.pad(mode="reflect")``: the edge itself is
    not repeated), shape ``offset.shape + (size,)``."""
    pos = offset[..., None] - padding + torch.arange(size, device=offset.device)
    pos = pos.abs()
    return torch.where(pos > size - 1, 2 * (size - 1) - pos, pos)


def apply_flip_translate(images: torch.Tensor, dy: torch.Tensor, dx: torch.Tensor,
                         flip: torch.Tensor, padding: int = TRANSLATE) -> torch.Tensor:
    """Translate an NCHW batch (any dtype) by (``dy - padding``, ``dx - padding``) pixels
    with reflection padding, mirror where ``flip``; pure indexing, the same on any device.

    ``dy``, ``dx`` and ``flip`` (one per image) must be on the device of ``images``.
    """
    h, w = images.shape[-2:]
    return gather_windows(images, reflect_index(dy, h, padding), reflect_index(dx, w, padding),
                          flip)


def shift_reflect(images: torch.Tensor, shift: int) -> torch.Tensor:
    """Every image of an NCHW batch moved by ``shift`` pixels down and right (negative: up
    and left), reflection padded: airbench's test-time translation."""
    n = len(images)
    offset = torch.full((n,), 1 - shift, dtype=torch.int64, device=images.device)
    return apply_flip_translate(images, offset, offset,
                                torch.zeros(n, dtype=torch.bool, device=images.device),
                                padding=1)


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


_STATS: dict = {}


def normalize(images: torch.Tensor) -> torch.Tensor:
    """uint8 NCHW -> float32, scaled to [0, 1] and standardised with CIFAR-10 statistics."""
    # Cached per device: building them every batch would be a blocking host-to-device copy.
    if images.device not in _STATS:
        _STATS[images.device] = (
            torch.tensor(CIFAR_MEAN, device=images.device).view(1, 3, 1, 1),
            torch.tensor(CIFAR_STD, device=images.device).view(1, 3, 1, 1))
    mean, std = _STATS[images.device]
    return (images.float() / 255.0 - mean) / std


def word_dropout(tokens: torch.Tensor, p: float, generator: torch.Generator,
                 pad: int = 0) -> torch.Tensor:
    """Replace each non-PAD token by ``pad`` with probability ``p`` (training only)."""
    drop = torch.rand(tokens.shape, generator=generator) < p
    return torch.where(drop & (tokens != pad), torch.full_like(tokens, pad), tokens)


# ---------------------------------------------------------------- batched TrivialAugmentWide
#
# torchvision's TrivialAugmentWide picks, per image, one op uniformly from 14, a magnitude
# bin uniformly from 31 and (for signed ops) a sign with probability 1/2, then applies the op
# with nearest interpolation and zero fill. The functions below draw the same choices for a
# whole batch from one generator (3 numbers per image: op, bin, sign; the bin and sign are
# drawn even where the op ignores them, which leaves the distribution unchanged) and apply
# each op to all images that drew it at once, with torchvision's own formulas written for a
# per-image parameter. tests/real_runs/test_gpu_path.py checks every (op, bin, sign) against
# ``torchvision.transforms.autoaugment._apply_op`` on the CPU.

TA_OPS = ("Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness",
          "Color", "Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast",
          "Equalize")
TA_BINS = 31
_AFFINE = ("ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate")
_BLEND = ("Brightness", "Color", "Contrast", "Sharpness")
#: ops applied together: the five geometric ops share one grid-sample call
_GROUPS = ("Identity", "affine", *_BLEND, "Posterize", "Solarize", "AutoContrast", "Equalize")
_GROUP_OF = np.array([_GROUPS.index("affine" if op in _AFFINE else op) for op in TA_OPS])


def _ta_table() -> tuple[np.ndarray, np.ndarray]:
    """(14, 31) float64 magnitudes and (14,) signed flags, read from torchvision itself."""
    from torchvision.transforms import TrivialAugmentWide

    space = TrivialAugmentWide()._augmentation_space(TA_BINS)
    if tuple(space) != TA_OPS:
        raise RuntimeError(f"torchvision's TrivialAugmentWide ops changed: {tuple(space)}")
    table = np.zeros((len(TA_OPS), TA_BINS))
    signed = np.zeros(len(TA_OPS), dtype=bool)
    for i, (mags, sign) in enumerate(space.values()):
        if mags.ndim > 0:
            table[i] = [float(m) for m in mags]  # float32 values, as torchvision reads them
        signed[i] = sign
    return table, signed


def all_ta_choices():
    """Every (op, magnitude) TrivialAugmentWide can draw: each op, bin and sign once.

    Returns
    -------
    ops : ndarray of int
        Indices into :data:`TA_OPS`.
    magnitudes : ndarray of float
    """
    table, signed = _ta_table()
    ops, mags = [], []
    for o in range(len(TA_OPS)):
        for b in range(TA_BINS):
            for sign in ((1, -1) if signed[o] else (1,)):
                ops.append(o)
                mags.append(sign * table[o, b])
    return np.array(ops), np.array(mags, dtype=float)


def trivial_augment_params(n: int, generator: torch.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per-image TrivialAugmentWide choices: op index into :data:`TA_OPS` and magnitude.

    Draws ``n`` ops, then ``n`` bins, then ``n`` signs from ``generator``.

    Returns
    -------
    op : numpy.ndarray of int64, shape (n,)
    magnitude : numpy.ndarray of float64, shape (n,)
        Signed magnitude, exactly the float torchvision would pass to ``_apply_op``.
    """
    op = torch.randint(len(TA_OPS), (n,), generator=generator).numpy()
    level = torch.randint(TA_BINS, (n,), generator=generator).numpy()
    negate = torch.randint(2, (n,), generator=generator).numpy().astype(bool)
    table, signed = _ta_table()
    magnitude = table[op, level]
    magnitude = np.where(signed[op] & negate, -magnitude, magnitude)
    return op.astype(np.int64), magnitude


def _affine_matrix(op: str, magnitude: float, h: int, w: int) -> list[float]:
    """torchvision's inverse affine matrix for one geometric op (as in ``_apply_op``)."""
    from torchvision.transforms.functional import _get_inverse_affine_matrix

    if op in ("ShearX", "ShearY"):  # center=[0, 0]: the top-left corner, not the middle
        shear = math.degrees(math.atan(magnitude))
        return _get_inverse_affine_matrix([-0.5 * w, -0.5 * h], 0.0, [0.0, 0.0], 1.0,
                                          [shear, 0.0] if op == "ShearX" else [0.0, shear])
    if op in ("TranslateX", "TranslateY"):
        t = float(int(magnitude))
        return _get_inverse_affine_matrix([0.0, 0.0], 0.0, [t, 0.0] if op == "TranslateX"
                                          else [0.0, t], 1.0, [0.0, 0.0])
    # F.rotate passes -angle to the same helper
    return _get_inverse_affine_matrix([0.0, 0.0], -magnitude, [0.0, 0.0], 1.0, [0.0, 0.0])


@dataclass(frozen=True, eq=False)
class TrivialAugmentPlan:
    """One batch's TrivialAugmentWide choices, laid out for grouped application on a device.

    Attributes
    ----------
    perm, inverse : torch.Tensor of int64, shape (n,)
        Batch order sorted by op group (stable) and its inverse permutation.
    counts : tuple of int
        Images per group of ``_GROUPS`` (Python ints, so no device synchronisation).
    factor : torch.Tensor of float32, shape (n, 2)
        Per image in sorted order: blend ratio and 1 - ratio (computed in float64, as
        torchvision does with Python floats), the posterize mask or the solarize threshold.
    theta : torch.Tensor of float32, shape (n, 2, 3)
        Inverse affine matrix of geometric ops (zeros elsewhere), sorted order.
    """

    perm: torch.Tensor
    inverse: torch.Tensor
    counts: tuple
    factor: torch.Tensor
    theta: torch.Tensor


def plan_trivial_augment(op: np.ndarray, magnitude: np.ndarray, batch: int, device,
                         size: tuple[int, int] = (32, 32)) -> list[TrivialAugmentPlan]:
    """Plans for consecutive batches of ``batch`` images (one host-to-device copy in all).

    ``op`` and ``magnitude`` come from :func:`trivial_augment_params`; their length must be
    a multiple of ``batch``.
    """
    n = len(op)
    if batch < 1 or n % batch:
        raise InvalidParameterError(f"the number of images ({n}) must be a multiple of batch "
                                    f"({batch})")
    h, w = size
    group = _GROUP_OF[op]
    perm = np.concatenate([np.argsort(group[s:s + batch], kind="stable") + s
                           for s in range(0, n, batch)]) if n else np.zeros(0, np.int64)
    inverse = np.empty_like(perm)
    for s in range(0, n, batch):
        inverse[s + perm[s:s + batch] - s] = np.arange(batch)
    names = np.array(TA_OPS)[op] if n else np.zeros(0, str)
    blend = np.isin(names, _BLEND)
    factor = np.zeros((n, 2))
    factor[blend, 0] = 1.0 + magnitude[blend]
    factor[blend, 1] = 1.0 - (1.0 + magnitude[blend])  # as torchvision's (1.0 - ratio)
    post = names == "Posterize"
    # torchvision: img & -(2 ** (8 - bits)), i.e. the uint8 mask 256 - 2 ** (8 - bits)
    factor[post, 0] = 256 - 2.0 ** (8 - magnitude[post].astype(int))
    sol = names == "Solarize"
    factor[sol, 0] = magnitude[sol]
    theta = np.zeros((n, 2, 3))
    geo = np.flatnonzero(np.isin(names, _AFFINE))
    # at most 5 ops x 31 bins x 2 signs distinct matrices: compute each once
    pairs, where = np.unique(np.stack([op[geo], magnitude[geo]], axis=1), axis=0,
                             return_inverse=True)
    mats = [_affine_matrix(TA_OPS[int(o)], float(m), h, w) for o, m in pairs]
    if len(geo):
        theta[geo] = np.reshape(mats, (-1, 2, 3))[np.ravel(where)]
    counts = np.stack([np.bincount(group[s:s + batch], minlength=len(_GROUPS))
                       for s in range(0, n, batch)]) if n else np.zeros((0, len(_GROUPS)))
    # theta is cast to float32 first, as torchvision builds it with torch.tensor(matrix,
    # dtype=float32); the blend ratios likewise become float32 inside its kernels.
    dev = torch.device(device)
    perm_t = torch.from_numpy(perm).to(dev)
    inv_t = torch.from_numpy(inverse).to(dev)
    factor_t = torch.from_numpy(factor[perm].astype(np.float32)).to(dev)
    theta_t = torch.from_numpy(theta[perm].astype(np.float32)).to(dev)
    return [TrivialAugmentPlan(perm_t[s:s + batch] - s, inv_t[s:s + batch],
                               tuple(int(c) for c in counts[s // batch]),
                               factor_t[s:s + batch], theta_t[s:s + batch])
            for s in range(0, n, batch)]


def _grid(theta: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """torchvision's ``_gen_affine_grid`` for a batch of matrices (one per image)."""
    d = 0.5
    base = torch.empty(1, h, w, 3, dtype=theta.dtype, device=theta.device)
    base[..., 0].copy_(torch.linspace(-w * 0.5 + d, w * 0.5 + d - 1, steps=w,
                                      device=theta.device))
    base[..., 1].copy_(torch.linspace(-h * 0.5 + d, h * 0.5 + d - 1, steps=h,
                                      device=theta.device).unsqueeze_(-1))
    base[..., 2].fill_(1)
    rescaled = theta.transpose(1, 2).clone()  # (n, 3, 2); columns x and y
    rescaled[..., 0] /= 0.5 * w  # Python scalars: no host-to-device copy per batch
    rescaled[..., 1] /= 0.5 * h
    return base.view(1, h * w, 3).expand(len(theta), h * w, 3).bmm(rescaled).view(-1, h, w, 2)


def _to_uint8(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(0, 255).to(torch.uint8)


def _blend(img: torch.Tensor, other: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    ratio, rest = factor[:, 0].view(-1, 1, 1, 1), factor[:, 1].view(-1, 1, 1, 1)
    return _to_uint8(ratio * img.float() + rest * other.float())


def _gray(img: torch.Tensor) -> torch.Tensor:
    r, g, b = img.float().unbind(dim=1)
    return (0.2989 * r + 0.587 * g + 0.114 * b).to(torch.uint8).unsqueeze(1)


def _sharp_degenerate(img: torch.Tensor) -> torch.Tensor:
    """torchvision's smoothed image for ``adjust_sharpness`` (3x3 kernel, centre 5, /13).

    Written as shifted sums instead of a depthwise convolution, so no cuDNN/TF32 choice
    enters: the sums are exact integers in float32 and k/13 is never halfway between two
    integers, so rounding gives torchvision's values on every device.
    """
    f = img.float()
    s = (f[..., :-2, :-2] + f[..., :-2, 1:-1] + f[..., :-2, 2:] + f[..., 1:-1, :-2]
         + f[..., 1:-1, 2:] + f[..., 2:, :-2] + f[..., 2:, 1:-1] + f[..., 2:, 2:])
    out = img.clone()
    out[..., 1:-1, 1:-1] = torch.round((s + 5.0 * f[..., 1:-1, 1:-1]) / 13.0).to(torch.uint8)
    return out


def _equalize(img: torch.Tensor) -> torch.Tensor:
    """torchvision's per-channel ``equalize`` for a batch, with deterministic integer ops.

    (torchvision uses ``torch.histc`` on CUDA, which deterministic mode forbids; a one-hot
    count is exact and deterministic.)
    """
    k, c, h, w = img.shape
    flat = img.reshape(k * c, h * w).long()
    levels = torch.arange(256, device=img.device)
    hist = (flat[:, :, None] == levels).sum(dim=1)  # (k*c, 256) int64
    last = hist.gather(1, flat.amax(dim=1, keepdim=True))  # count of the top level
    step = torch.div(h * w - last, 255, rounding_mode="floor")
    lut = torch.div(hist.cumsum(1) + torch.div(step, 2, rounding_mode="floor"),
                    step.clamp(min=1), rounding_mode="floor")
    lut = torch.nn.functional.pad(lut, [1, 0])[:, :-1].clamp(0, 255)
    out = torch.where(step == 0, flat, lut.gather(1, flat))
    return out.to(torch.uint8).reshape(k, c, h, w)


def _apply_group(name: str, x: torch.Tensor, factor: torch.Tensor,
                 theta: torch.Tensor) -> torch.Tensor:
    if name == "Identity":
        return x
    if name == "affine":
        grid = _grid(theta, x.shape[-2], x.shape[-1])
        out = torch.nn.functional.grid_sample(x.float(), grid, mode="nearest",
                                              padding_mode="zeros", align_corners=False)
        return torch.round(out).to(torch.uint8)
    if name == "Brightness":
        return _to_uint8(factor[:, 0].view(-1, 1, 1, 1) * x.float())  # blend with zeros
    if name == "Color":
        return _blend(x, _gray(x), factor)
    if name == "Contrast":
        mean = _gray(x).float().mean(dim=(-3, -2, -1), keepdim=True)
        return _blend(x, mean, factor)
    if name == "Sharpness":
        return _blend(x, _sharp_degenerate(x), factor)
    if name == "Posterize":
        return x & factor[:, 0].to(torch.uint8).view(-1, 1, 1, 1)
    if name == "Solarize":
        return torch.where(x >= factor[:, 0].view(-1, 1, 1, 1), 255 - x, x)
    if name == "AutoContrast":
        lo = x.amin(dim=(-2, -1), keepdim=True).float()
        hi = x.amax(dim=(-2, -1), keepdim=True).float()
        scale = 255.0 / (hi - lo)
        flat = ~torch.isfinite(scale)
        lo = torch.where(flat, 0.0, lo)
        scale = torch.where(flat, 1.0, scale)
        return _to_uint8((x - lo) * scale)
    return _equalize(x)


def apply_trivial_augment(images: torch.Tensor, plan: TrivialAugmentPlan) -> torch.Tensor:
    """Apply one batch's :class:`TrivialAugmentPlan` to a uint8 NCHW batch (same device)."""
    x = images[plan.perm]
    parts, start = [], 0
    for name, count in zip(_GROUPS, plan.counts):
        if count:
            sl = slice(start, start + count)
            parts.append(_apply_group(name, x[sl], plan.factor[sl], plan.theta[sl]))
            start += count
    return torch.cat(parts)[plan.inverse]


def trivial_augment_batched(images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """TrivialAugmentWide on a uint8 NCHW batch, drawn from ``generator``, on its device.

    The same distribution of ops and magnitudes as torchvision's per-image transform (which
    draws from the global RNG); 3 draws per image (see :func:`trivial_augment_params`).
    """
    op, magnitude = trivial_augment_params(len(images), generator)
    plan = plan_trivial_augment(op, magnitude, len(images), images.device,
                                tuple(images.shape[-2:]))
    return apply_trivial_augment(images, plan[0])
