"""``python -m real_runs.gpu_check``: one-minute checks on a lent GPU before spending its budget.

::

    python -m real_runs.gpu_check --pack data_pack --out $OUT

1. determinism: a shortened ``paper`` run (1 epoch on ``--subset`` images; all the paper
   options: device data path, bf16 autocast, channels_last, deterministic algorithms)
   trained twice per arm: baseline == baseline (so S0 gives delta = 0 exactly) and S2 == S2;
2. the batched TrivialAugmentWide on the device against torchvision on the CPU, for every
   (op, bin, sign): fraction of images with identical bytes, per op;
3. speed of one process: images/s of ``--steps`` training steps (baseline and S2) and of
   evaluation, and the seconds one full ``paper`` run would take alone.

Writes ``$OUT/gpu_check.json``; exit code 1 if a determinism check fails.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, call_main
from evalcal_core.options import add_options, check_options, config_from_args, option, out_option
from evalcal_core.outdir import locked_out
from evalcal_core.validate import Interval, Options, fail

#: how the command is run
PROG = "python -m real_runs.gpu_check"
_PROFILES = ("paper", "smoke")
_DEVICES = ("auto", "cpu", "cuda")


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def check_determinism(config, data, device: str) -> dict:
    """Train baseline, S0 and S2 (twice) of a shortened config; compare predictions."""
    from real_runs.engine import train_run
    from real_runs.scenarios import variant_config

    runs = {}
    for name, cfg in (("baseline", config), ("S0", variant_config(config, "S0")),
                      ("S2", variant_config(config, "S2")), ("S2 again",
                                                             variant_config(config, "S2"))):
        t0 = time.perf_counter()
        res = train_run(cfg, 0, data, device=device)
        runs[name] = {"predictions": res.predictions, "accuracy": res.final_accuracy,
                      "seconds": round(time.perf_counter() - t0, 2)}
    return {
        "s0_delta_is_zero": bool(np.array_equal(runs["baseline"]["predictions"],
                                                runs["S0"]["predictions"])),
        "s2_repeatable": bool(np.array_equal(runs["S2"]["predictions"],
                                             runs["S2 again"]["predictions"])),
        "runs": {k: {"accuracy": v["accuracy"], "seconds": v["seconds"]}
                 for k, v in runs.items()},
    }


def check_trivial_augment(device: str) -> dict:
    """Fraction of images with torchvision's exact bytes, per op, for every (op, bin, sign)."""
    import torch
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms.autoaugment import _apply_op

    from real_runs import augment

    ops, mags = augment.all_ta_choices()
    batch = 128
    pad = -len(ops) % batch
    ops, mags = np.concatenate([ops, np.zeros(pad, int)]), np.concatenate([mags, np.zeros(pad)])
    gen = torch.Generator().manual_seed(3)
    # smooth images with a bright blob, so geometric ops and histograms are not trivial
    imgs = torch.randint(0, 256, (len(ops), 3, 32, 32), dtype=torch.uint8, generator=gen)
    imgs = torch.nn.functional.avg_pool2d(imgs.float(), 5, 1, 2).to(torch.uint8)
    imgs[:, :, 4:12, 20:28] = 250
    plans = augment.plan_trivial_augment(ops, mags, batch, device)
    dev_imgs = imgs.to(device)
    out = torch.cat([augment.apply_trivial_augment(dev_imgs[i * batch:(i + 1) * batch], p)
                     for i, p in enumerate(plans)]).cpu()
    same: dict[str, list] = {}
    for j in range(len(ops)):
        ref = _apply_op(imgs[j], augment.TA_OPS[ops[j]], float(mags[j]),
                        InterpolationMode.NEAREST, None)
        same.setdefault(augment.TA_OPS[ops[j]], []).append(bool(torch.equal(out[j], ref)))
    return {op: round(float(np.mean(v)), 4) for op, v in same.items()}


def measure_speed(config, data, device: str, steps: int) -> dict:
    """Images/s of ``steps`` training steps (after 5 warm-up steps) and of evaluation."""
    import torch

    from real_runs import augment, engine
    from real_runs.seeding import make_generator

    out = {}
    for label, cfg in (("baseline", config),
                       ("S2", dataclasses.replace(config, strong_augment="trivial_augment"))):
        n = (steps + 5) * cfg.batch_size
        idx = np.arange(n) % len(data.train_x)
        x = torch.from_numpy(np.ascontiguousarray(data.train_x[idx].transpose(0, 3, 1, 2)))
        y = torch.from_numpy(data.train_y[idx])
        model = engine.prepare_model(cfg, 0, data, x, device)
        gens = {k: make_generator(0, k) for k in ("augment", "strong_augment")}
        shifts = engine.epoch_shifts(cfg, 0, n, augment.flip_base_params(n, gens["augment"]),
                                     gens["augment"])
        optimisation = engine.Optimisation(cfg, model, steps + 5, device)
        batches = engine._device_batches(cfg, data, x.to(device), y.to(device),
                                         torch.arange(n), gens, cfg.batch_size, steps + 5,
                                         device, shifts)
        model.train()
        for i, (xb, yb) in enumerate(batches):
            if i == 5:
                _sync(device)
                t0 = time.perf_counter()
            optimisation.step(xb, yb)
        _sync(device)
        seconds = time.perf_counter() - t0
        out[f"train_images_per_s_{label}"] = round(steps * cfg.batch_size / seconds, 1)
    test_x = torch.from_numpy(np.ascontiguousarray(data.test_x.transpose(0, 3, 1, 2)))
    _sync(device)
    t0 = time.perf_counter()
    engine.predict(model, data, test_x.to(device), config.eval_batch_size, device, config)
    out["eval_s"] = round(time.perf_counter() - t0, 3)
    _sync(device)
    t0 = time.perf_counter()
    engine.predict(model, data, test_x.to(device), config.eval_batch_size, device, config,
                   tta=config.tta)
    out["eval_tta_s"] = round(time.perf_counter() - t0, 3)
    steps_per_epoch = len(data.train_x) // config.batch_size
    epoch_s = steps_per_epoch * config.batch_size / out["train_images_per_s_baseline"]
    out["one_run_alone_s"] = round(config.epochs * (epoch_s + out["eval_s"])
                                   + out["eval_tta_s"] - out["eval_s"], 1)
    return out


@dataclass(frozen=True)
class CheckOptions:
    """What ``python -m real_runs.gpu_check`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`) whose own rule is checked when built."""

    pack: str = option("--pack", help="data pack folder or data root")
    out: Path = out_option(dataclasses.MISSING, help="folder for gpu_check.json")
    profile: str = option("--profile", "paper", choices=_PROFILES, constraint=Options(_PROFILES),
                          help="training profile checked: paper, or smoke for tests (paper)")
    subset: int = option("--subset", 2560, kind=int, constraint=Interval("int", 1, 1_000_000),
                         help="training images of the determinism runs (2560)")
    steps: int = option("--steps", 60, kind=int, constraint=Interval("int", 1, 100_000),
                        help="timed training steps (60)")
    device: str = option("--device", "auto", choices=_DEVICES, constraint=Options(_DEVICES),
                         help="auto (CUDA when present), cpu or cuda")
    cache_dir: str | None = option("--cache-dir", None, in_argv=False,
                                   help="decoded-image cache (default: none)")

    def __post_init__(self):
        check_options(self)


def build_parser() -> ArgumentParser:
    """The options of :class:`CheckOptions`, as declared there."""
    return add_options(ArgumentParser(prog=PROG, description=(__doc__ or "").split("\n\n")[0]),
                       CheckOptions)


def main(argv=None) -> int:
    """Run the CLI; 0 when the determinism checks pass, 1 when one fails, 2 for bad input."""
    return call_main(_main, PROG, argv)


def _main(argv) -> int:
    args = config_from_args(CheckOptions, build_parser().parse_args(argv))
    if not Path(args.pack).exists():
        raise fail("--pack", "an existing data pack (python -m real_runs.pack_data) or data "
                   "root", args.pack)
    # --out is checked and locked before a minute of GPU time is spent; the lock is the
    # folder's own (no .lock file: a device's $OUT returns only a few files), and the one
    # output is written atomically, so the folder never holds half a report.
    with locked_out(args.out, "--out", lock_file=False) as out:
        # without torch the checks cannot run: one line (a traceback before), once --out
        # is known to be writable
        from real_runs.train import require_torch

        require_torch()
        report, code = _check(args)
        write_atomic(out / "gpu_check.json", json.dumps(report, indent=1, sort_keys=True)
                     + "\n")
    det = report["determinism"]
    print(json.dumps({"device": report["environment"].get("cuda_device", report["device"]),
                      "s0_delta_is_zero": det["s0_delta_is_zero"],
                      "s2_repeatable": det["s2_repeatable"],
                      "trivial_augment_min_identical": min(
                          report["trivial_augment_identical_fraction"].values()),
                      **report["speed_one_process"]}, sort_keys=True))
    return code


def _check(args) -> tuple[dict, int]:
    """The report of every check, and the exit code (1 when a determinism check fails)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch

    from real_runs.config import profile_config
    from real_runs.data import load_for_config
    from real_runs.runtime import deterministic, environment, resolve_device

    device = resolve_device(args.device)
    config = profile_config("cifar10", args.profile)
    data = load_for_config(config, args.pack, cache_dir=args.cache_dir)
    short = dataclasses.replace(config, epochs=1, n_train=min(args.subset, len(data.train_y)))
    report: dict = {"environment": environment(device), "device": device}
    if device == "cuda":
        report["environment"].update(cudnn=torch.backends.cudnn.version(),
                                     capability=list(torch.cuda.get_device_capability()))
    with deterministic(config.threads):
        t0 = time.perf_counter()
        report["determinism"] = check_determinism(short, data, device)
        report["trivial_augment_identical_fraction"] = check_trivial_augment(device)
        report["speed_one_process"] = measure_speed(config, data, device, args.steps)
        report["check_s"] = round(time.perf_counter() - t0, 1)
    det = report["determinism"]
    return report, 0 if det["s0_delta_is_zero"] and det["s2_repeatable"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
