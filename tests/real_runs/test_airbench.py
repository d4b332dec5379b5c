"""The ``paper`` CIFAR profile, airbench94: its units, layers, augmentation and pairing,
each checked against an independent rewrite (numpy, or airbench's own summed-loss recipe)."""

import dataclasses
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from real_runs import augment, engine, gpu_batch  # noqa: E402
from real_runs.config import profile_config  # noqa: E402
from real_runs.cost import run_cost  # noqa: E402
from real_runs.data import load_for_config  # noqa: E402
from real_runs.models import (  # noqa: E402
    Airbench94,
    build_model,
    init_weights,
    whitening_filters,
)
from real_runs.runtime import deterministic  # noqa: E402
from real_runs.scenarios import variant_config  # noqa: E402
from real_runs.seeding import make_generator  # noqa: E402

pytestmark = pytest.mark.torch

PAPER = profile_config("cifar10", "paper")


def tiny(config=PAPER, **changes):
    """The paper profile at width 4 on the test data, fp32, host path, one thread."""
    fields = dict(width=4, batch_size=16, epochs=3, eval_batch_size=64, precision="fp32",
                  data_path="host", threads=1, whiten_bias_epochs=2)
    return dataclasses.replace(config, **{**fields, **changes})


def _model(config, seed=0):
    return init_weights(build_model(config, 10), make_generator(seed, "init"))


def test_layers_parameters_and_flop_count_match_the_closed_forms():
    """Parameters and conv FLOP written out layer by layer (airbench94: 1.97 M parameters)."""
    w, k = 64, 9
    convs = [(3 * 4, 24, 31), (24 * k, w, 31), (w * k, w, 15), (w * k, 4 * w, 15),
             (4 * w * k, 4 * w, 7), (4 * w * k, 4 * w, 7), (4 * w * k, 4 * w, 3)]
    weights = sum(fan_in * c_out for fan_in, c_out, _ in convs) + 4 * w * 10
    biases = 24 + 2 * (w + 4 * w + 4 * w)  # whitening bias, BN biases (scales fixed at 1)
    scales = 2 * (w + 4 * w + 4 * w)
    model = build_model(PAPER, 10)
    assert sum(p.numel() for p in model.parameters()) == weights + biases + scales
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert trainable == weights - 24 * 12 + biases  # whitening weights are fixed
    fwd = sum(2 * fan_in * c_out * side * side for fan_in, c_out, side in convs) + 2 * 256 * 10
    cost = run_cost(PAPER)
    assert cost.forward_flop == fwd
    assert cost.train_flop == 3 * fwd * (50_000 // 1024) * 1024 * 10
    assert cost.eval_flop == fwd * 10_000 * (9 + 6)  # 9 plain evaluations, 6 TTA passes
    # the planning estimate printed in gpu_batch's documentation is this count
    stated = re.search(r"([0-9.]+)e14 FLOP per run", gpu_batch.__doc__)
    assert float(stated.group(1)) == pytest.approx(cost.total_flop / 1e14, abs=0.005)


def test_whitening_layer_whitens_the_patches():
    """Reference: numpy's eigh of the 2x2 patches' second moments. The first 12 filters map
    the moment matrix M to diag(lambda / (lambda + eps)), in decreasing order; the next 12
    are their negatives."""
    rng = np.random.default_rng(0)
    images = torch.from_numpy(rng.normal(size=(40, 3, 8, 8)) * [[[1.0]], [[2.0]], [[0.5]]])
    filters = whitening_filters(images, eps=5e-4)
    x = images.numpy()
    windows = np.lib.stride_tricks.sliding_window_view(x, (2, 2), axis=(2, 3))
    patches = windows.transpose(0, 2, 3, 1, 4, 5).reshape(-1, 12)
    moment = patches.T @ patches / len(patches)
    values = np.linalg.eigvalsh(moment)[::-1]
    w = filters.numpy().reshape(24, 12)
    np.testing.assert_allclose(w[:12] @ moment @ w[:12].T, np.diag(values / (values + 5e-4)),
                               atol=1e-5)
    np.testing.assert_array_equal(w[12:], -w[:12])


def test_one_optimiser_step_is_airbench_summed_loss_step():
    """Reference: airbench's own recipe rewritten here: a *summed* loss, lr 11.5 and weight
    decay 0.0153 over 1024 (1 + 1 / (1 - 0.85)), weight decay given as decay / lr per group,
    BN biases at 64x lr, its triangle and its lookahead state. Six steps of both must agree
    (at airbench's batch of 1,024, where its summed loss is 1,024 of our mean losses)."""
    config = tiny(batch_size=1024)
    ours, ref = _model(config), _model(config)
    gen = torch.Generator().manual_seed(5)
    data = [(torch.randn(1024, 3, 32, 32, generator=gen),
             torch.randint(0, 10, (1024,), generator=gen)) for _ in range(6)]
    steps = len(data)

    kilostep = 1024 * (1 + 1 / (1 - 0.85))
    lr, wd = 11.5 / kilostep, 0.0153 * 1024 / kilostep
    named = [(n, p) for n, p in ref.named_parameters() if p.requires_grad]
    norm = [p for n, p in named if "norm" in n]
    rest = [p for n, p in named if "norm" not in n]
    opt = torch.optim.SGD([dict(params=norm, lr=lr * 64, weight_decay=wd / (lr * 64)),
                           dict(params=rest, lr=lr, weight_decay=wd / lr)],
                          momentum=0.85, nesterov=True)
    peak = int(0.23 * steps)

    def triangle(i):
        return 0.2 + 0.8 * i / peak if i <= peak else 1.0 - 0.93 * (i - peak) / (steps - peak)

    sched = torch.optim.lr_scheduler.LambdaLR(opt, triangle)
    average = {k: v.clone() for k, v in ref.state_dict().items()}

    def lookahead(decay):
        for key, value in ref.state_dict().items():
            if value.dtype == torch.float32:
                average[key].lerp_(value, 1 - decay)
                value.copy_(average[key])

    optimisation = engine.Optimisation(config, ours, steps, "cpu")
    ours.train()
    ref.train()
    for i, (x, y) in enumerate(data, start=1):
        optimisation.step(x, y)
        loss = torch.nn.functional.cross_entropy(ref(x), y, reduction="none").sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        with torch.no_grad():
            if i % 5 == 0:
                lookahead(0.95 ** 5 * (i / steps) ** 3)
            if i == steps:
                lookahead(1.0)
    for (name, a), b in zip(ours.state_dict().items(), ref.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=2e-4, atol=2e-5, msg=name)


def test_flip_translate_and_tta_shifts_equal_numpy_reflect_padding():
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.integers(0, 256, (6, 3, 32, 32), dtype=np.uint8))
    dy, dx = (torch.from_numpy(rng.integers(0, 5, 6)) for _ in range(2))
    flip = torch.from_numpy(rng.random(6) < 0.5)
    out = augment.apply_flip_translate(x, dy, dx, flip).numpy()
    padded = np.pad(x.numpy(), ((0, 0), (0, 0), (2, 2), (2, 2)), mode="reflect")
    for i in range(6):
        ref = padded[i, :, dy[i]:dy[i] + 32, dx[i]:dx[i] + 32]
        np.testing.assert_array_equal(out[i], ref[:, :, ::-1] if flip[i] else ref)
    padded = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect")
    np.testing.assert_array_equal(augment.shift_reflect(x, 1).numpy(), padded[:, :, :32, :32])
    np.testing.assert_array_equal(augment.shift_reflect(x, -1).numpy(), padded[:, :, 2:, 2:])


def test_flips_alternate_by_epoch_and_offsets_are_uniform():
    """Each image is mirrored in exactly one of any two consecutive epochs; offsets are
    uniform on 0..4 (binomial bounds, 5 sd)."""
    n = 5000
    gen = make_generator(0, "augment")
    base = augment.flip_base_params(n, gen)
    epochs = [engine.epoch_shifts(PAPER, e, n, base, gen) for e in range(3)]
    assert torch.equal(epochs[0][2], base) and torch.equal(epochs[1][2], ~base)
    assert torch.equal(epochs[2][2], base)
    assert abs(base.float().mean().item() - 0.5) < 5 * np.sqrt(0.25 / n)
    for dy, dx, _ in epochs:
        for offsets in (dy, dx):
            counts = np.bincount(offsets.numpy(), minlength=5)
            assert len(counts) == 5
            assert np.all(np.abs(counts - n / 5) < 5 * np.sqrt(n * 0.2 * 0.8))
    assert not torch.equal(epochs[0][0], epochs[1][0])  # fresh translations every epoch
    assert engine.epoch_shifts(profile_config("cifar10", "cpu"), 0, n, base, gen) is None


def test_tta_level_2_is_the_weighted_mean_of_six_views():
    """Reference: the six views built with numpy's reflect padding, weights 1/4 for the
    plain and mirrored image and 1/8 for each shifted one."""
    model = _model(tiny()).eval()
    x = torch.randn(4, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    padded = torch.from_numpy(np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)),
                                     mode="reflect"))
    views = [x, padded[:, :, :32, :32], padded[:, :, 2:, 2:]]
    weights = [0.25, 0.125, 0.125]
    with torch.no_grad():
        ref = sum(w * (model(v) + model(v.flip(-1))) for w, v in zip(weights, views))
        torch.testing.assert_close(engine.tta_logits(model, x, 2), ref)
        torch.testing.assert_close(engine.tta_logits(model, x, 1),
                                   0.5 * (model(x) + model(x.flip(-1))))
        torch.testing.assert_close(engine.tta_logits(model, x, 0), model(x))


def test_paired_runs_share_weights_and_s0_is_exact(shared_like_root):
    """S0 repeats the baseline bit for bit; S0p starts from the baseline's weights (same
    init stream and whitening) but trains on other draws; the device path reproduces the
    host path."""
    base = tiny()
    data = load_for_config(base, shared_like_root)
    x = torch.from_numpy(np.ascontiguousarray(data.train_x.transpose(0, 3, 1, 2)))
    s0p = variant_config(base, "S0p")
    start = [engine.prepare_model(c, 4, data, x, "cpu").state_dict() for c in (base, s0p)]
    assert all(torch.equal(start[0][k], start[1][k]) for k in start[0])
    with deterministic(1):
        runs = {name: engine.train_run(c, 4, data) for name, c in (
            ("base", base), ("S0", variant_config(base, "S0")), ("S0p", s0p),
            ("S1 host", variant_config(base, "S1")),
            ("S1 device", dataclasses.replace(variant_config(base, "S1"), data_path="device")))}
    np.testing.assert_array_equal(runs["base"].predictions, runs["S0"].predictions)
    np.testing.assert_array_equal(runs["S1 host"].predictions, runs["S1 device"].predictions)
    np.testing.assert_array_equal(runs["S1 host"].epoch_accuracy,
                                  runs["S1 device"].epoch_accuracy)
    assert len(runs["base"].epoch_accuracy) == base.epochs
    assert runs["base"].epoch_accuracy[-1] == runs["base"].final_accuracy


def test_whitening_bias_trains_only_in_its_epochs(shared_like_root, monkeypatch):
    """With ``whiten_bias_epochs`` 0 the bias never leaves 0; with 3 of 3 it moves."""
    data = load_for_config(tiny(), shared_like_root)
    seen = []
    original = engine.Optimisation.step

    def spy(self, xb, yb):
        original(self, xb, yb)
        seen.append(self.model.whiten.bias.detach().abs().max().item())

    monkeypatch.setattr(engine.Optimisation, "step", spy)
    for epochs in (0, 3):
        seen.clear()
        with deterministic(1):
            engine.train_run(tiny(whiten_bias_epochs=epochs), 0, data)
        assert (seen[-1] > 0) == (epochs > 0), (epochs, seen[-1])


def test_airbench_model_is_built_for_its_name_only():
    assert isinstance(build_model(PAPER, 10), Airbench94)
    assert not isinstance(build_model(profile_config("cifar10", "cpu"), 10), Airbench94)


def test_gpu_checks_run_the_airbench_options(shared_like_root):
    """The device call's checks on this profile's code paths (whitening, shifts, lookahead,
    TTA timing), on the CPU at width 4: determinism holds and the speeds are positive."""
    from real_runs import gpu_check

    config = tiny(data_path="device")
    data = load_for_config(config, shared_like_root)
    with deterministic(1):
        det = gpu_check.check_determinism(config, data, "cpu")
        speed = gpu_check.measure_speed(config, data, "cpu", 2)
    assert det["s0_delta_is_zero"] and det["s2_repeatable"]
    assert speed["train_images_per_s_baseline"] > 0 and speed["eval_tta_s"] > 0
    assert speed["one_run_alone_s"] > 0


def test_prepare_model_whitens_with_the_filters_of_its_own_images(shared_like_root):
    """The per-process cache of filters is keyed by the images: each model gets the
    filters of the images it was given, in any order."""
    data = load_for_config(tiny(), shared_like_root)
    x = torch.from_numpy(np.ascontiguousarray(data.train_x.transpose(0, 3, 1, 2)))
    assert not torch.equal(whitening_filters(augment.normalize(x[:20])),
                           whitening_filters(augment.normalize(x[20:])))
    for images in (x[:20], x[20:], x[:20]):
        model = engine.prepare_model(tiny(), 0, data, images, "cpu")
        expected = whitening_filters(augment.normalize(images)).float()
        assert torch.equal(model.whiten.weight.detach(), expected)
