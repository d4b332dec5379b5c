"""The GPU data path, batched TrivialAugmentWide, bf16 and schedules: all checked on the CPU."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from real_runs import augment, engine  # noqa: E402
from real_runs.config import LATER_FIELD_DEFAULTS, config_hash, profile_config  # noqa: E402
from real_runs.data import load_for_config  # noqa: E402
from real_runs.models import GlobalMaxPool  # noqa: E402
from real_runs.runtime import deterministic  # noqa: E402
from real_runs.scenarios import variant_config  # noqa: E402
from real_runs.seeding import make_generator  # noqa: E402

pytestmark = pytest.mark.torch
POOL = Path(__file__).resolve().parents[2] / "real_runs" / "pool"


def test_new_config_fields_leave_the_cpu_pool_hashes_unchanged():
    """The committed cpu records were hashed before precision/... existed."""
    manifest = json.loads((POOL / "manifest.json").read_text())
    stored = {r["config_hash"] for r in manifest["records"] if r["arm"] == "baseline"}
    for dataset in ("cifar10", "cifar10n", "ag_news"):
        config = profile_config(dataset, "cpu")
        assert not set(LATER_FIELD_DEFAULTS) & set(config.to_dict())
        assert config_hash(config) in stored
    paper = profile_config("cifar10", "paper").to_dict()
    assert (paper["precision"], paper["data_path"], paper["lr_schedule"]) == (
        "bf16", "device", "triangle")


def test_lr_factor_cosine_and_triangle():
    """Analytic values: the cpu pool's cosine, and airbench's triangle through (0, 0.2),
    (int(0.23 T), 1), (T, 0.07), linear between."""
    cpu = profile_config("cifar10", "cpu")
    f = engine.lr_factor(cpu, 100)
    assert [f(s) for s in (0, 25, 50, 100)] == pytest.approx(
        [1.0, 0.5 * (1 + np.cos(np.pi / 4)), 0.5, 0.0])
    g = engine.lr_factor(dataclasses.replace(cpu, lr_schedule="triangle"), 480)
    peak = 110  # int(0.23 * 480)
    assert [g(0), g(peak // 2), g(peak), g(480)] == pytest.approx([0.2, 0.6, 1.0, 0.07])
    assert g(295) == pytest.approx(1.0 + (0.07 - 1.0) * (295 - peak) / (480 - peak))


@pytest.mark.parametrize("smoothing", [0.0, 0.05])
def test_soft_cross_entropy_equals_torch_cross_entropy(smoothing):
    """Reference: torch.nn.CrossEntropyLoss(label_smoothing=...), value and gradient."""
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(32, 10, generator=gen, requires_grad=True)
    y = torch.randint(0, 10, (32,), generator=gen)
    ref = torch.nn.CrossEntropyLoss(label_smoothing=smoothing)(logits, y)
    (g_ref,) = torch.autograd.grad(ref, logits)
    ours = engine.soft_cross_entropy(logits, y, smoothing)
    (g_ours,) = torch.autograd.grad(ours, logits)
    torch.testing.assert_close(ours, ref)
    torch.testing.assert_close(g_ours, g_ref)


def test_cuda_safe_pooling_matches_torch_pooling():
    x = torch.randn(4, 8, 5, 5, generator=torch.Generator().manual_seed(1))
    assert torch.equal(GlobalMaxPool()(x), torch.nn.AdaptiveMaxPool2d(1)(x))


def test_batched_trivial_augment_equals_torchvision_for_every_op_and_magnitude():
    """Reference: torchvision.transforms.autoaugment._apply_op, applied image by image, for
    every (op, bin, sign); the same check ``real_runs.gpu_check`` runs on the GPU."""
    from real_runs.gpu_check import check_trivial_augment

    rates = check_trivial_augment("cpu")
    assert set(rates) == set(augment.TA_OPS)
    assert all(rate == 1.0 for rate in rates.values()), rates


def test_trivial_augment_draws_are_uniform_over_ops_and_signs():
    """Binomial anchors: each op has p = 1/14; a signed op is negated with p = 1/2."""
    n = 14_000
    op, mag = augment.trivial_augment_params(n, make_generator(0, "strong_augment"))
    counts = np.bincount(op, minlength=14)
    sd = np.sqrt(n * (1 / 14) * (13 / 14))
    assert np.all(np.abs(counts - n / 14) < 5 * sd)
    _, signed = augment._ta_table()
    nonzero = signed[op] & (mag != 0)
    frac = (mag[nonzero] < 0).mean()
    assert abs(frac - 0.5) < 5 * np.sqrt(0.25 / nonzero.sum())


def test_batched_trivial_augment_depends_only_on_its_generator():
    x = torch.randint(0, 256, (16, 3, 32, 32), dtype=torch.uint8)
    state = torch.random.get_rng_state()
    a, b = (augment.trivial_augment_batched(x, make_generator(4, "strong_augment"))
            for _ in range(2))
    assert torch.equal(a, b) and a.dtype == torch.uint8 and a.shape == x.shape
    assert torch.equal(state, torch.random.get_rng_state())


@pytest.mark.parametrize("dataset, scenario", [("cifar10", "S1"), ("ag_news", "S2")])
def test_device_data_path_reproduces_the_host_path(dataset, scenario, shared_like_root):
    """Same draws (order, crop/flip, word dropout) on both paths: identical predictions."""
    host = variant_config(profile_config(dataset, "smoke"), scenario)
    data = load_for_config(host, shared_like_root)
    with deterministic(1):
        a = engine.train_run(host, 2, data)
        b = engine.train_run(dataclasses.replace(host, data_path="device"), 2, data)
    np.testing.assert_array_equal(a.predictions, b.predictions)
    np.testing.assert_array_equal(a.epoch_accuracy, b.epoch_accuracy)


def test_gpu_options_are_deterministic_and_s0_delta_is_zero(shared_like_root):
    """The paper profile's options (device path, bf16, S2) on the smoke model."""
    base = dataclasses.replace(profile_config("cifar10", "smoke"), data_path="device",
                               precision="bf16")
    s2 = variant_config(base, "S2")
    data = load_for_config(base, shared_like_root)
    with deterministic(1):
        runs = [engine.train_run(c, 1, data) for c in (base, variant_config(base, "S0"), s2,
                                                       s2)]
    np.testing.assert_array_equal(runs[0].predictions, runs[1].predictions)  # S0: delta 0
    np.testing.assert_array_equal(runs[2].predictions, runs[3].predictions)


def test_deadline_abandons_a_run_after_an_epoch(shared_like_root):
    config = profile_config("ag_news", "smoke")
    data = load_for_config(config, shared_like_root)
    with pytest.raises(engine.RunDeadlineError, match="after epoch 1 of 2"):
        engine.train_run(config, 0, data, deadline=0.0)


@pytest.mark.parametrize("field, value, message", [
    ("precision", "fp16", "precision must be one of"),
    ("data_path", "gpu", "data_path must be one of"),
    ("lr_schedule", "linear", "lr_schedule must be one of"),
    ("augment", "crop", "augment must be one of"),
    ("tta", 3, "tta must be 0, 1 or 2"),
    ("bias_lr_scale", 0.0, "bias_lr_scale must be > 0"),
    ("whiten_bias_epochs", -1, "whiten_bias_epochs must be >= 0"),
])
def test_bad_gpu_options_are_rejected(shared_like_root, field, value, message):
    config = dataclasses.replace(profile_config("ag_news", "smoke"), **{field: value})
    with pytest.raises(ValueError, match=message):
        engine.train_run(config, 0, load_for_config(config, shared_like_root))
