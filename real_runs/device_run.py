"""``python -m real_runs.device_run``: the one prepared command of a session with a lent GPU.

A device session has 15 minutes of device time in all and one command of at most 10, so its
single call must verify, check and train without a second look::

    python -m real_runs.device_run --pack data_pack --out $OUT --deadline-s 540 \\
        --plan real_runs/plans/paper_cifar10.json --workers 4 --cache-dir /tmp/evalcal-cache

In that one process, against one clock started when it starts:

1. the data pack's checksums (``python -m real_runs.pack_data --verify``); a bad pack stops
   here;
2. the one-minute checks (``python -m real_runs.gpu_check``: determinism of the paired runs,
   the batched augmentation against torchvision, one process's speed) into ``$OUT/check``;
   a failed determinism check stops here, before any run is trained on a broken pairing;
3. as many of the plan's paired runs as fit in what is left of ``--deadline-s``
   (``python -m real_runs.gpu_batch``, which starts a run only if its expected time fits and
   keeps ``--reserve-s`` for bundling), records re-bundled after every run.

``$OUT/device_run.json`` is rewritten after every step (steps, exit codes, seconds, the
device, torch and the code version; at the end the runs finished per minute of the call),
so a call cut off at any point leaves a usable account;
its ``final`` is true once the last step returned. Exit code: 0 when every step succeeded,
1 when a step failed or no time was left to train, 2 for bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import time
from dataclasses import dataclass
from pathlib import Path

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, call_main
from evalcal_core.options import add_options, check_options, config_from_args, option, out_option
from evalcal_core.validate import Interval, Options
from real_runs import gpu_batch, gpu_check, pack_data
from real_runs.manifest import code_version
from real_runs.train import require_torch

#: how the command is run
PROG = "python -m real_runs.device_run"
#: the account of the call, beside gpu_batch's summary
SUMMARY = "device_run.json"
_CHECK_PROFILES = ("paper", "smoke")


@dataclass(frozen=True)
class DeviceRunOptions:
    """What ``python -m real_runs.device_run`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`), every rule checked when built."""

    pack: str = option("--pack", help="data pack folder (python -m real_runs.pack_data)")
    out: Path = out_option(dataclasses.MISSING,
                           help=f"output folder ($OUT): {SUMMARY}, check/, records-NNN.tar")
    deadline_s: float = option("--deadline-s", kind=float,
                               constraint=Interval("real", 0, 86_400, low_open=True),
                               help="seconds from the start until everything is written "
                                    "(e.g. 540 of a 600-second call)")
    plan: str = option("--plan", help="JSON list of {dataset, scenarios, seeds[, profile]}")
    workers: int = option("--workers", 4, kind=int, constraint=Interval("int", 1, 256),
                          help="runs side by side (4)")
    check_profile: str = option("--check-profile", "paper", choices=_CHECK_PROFILES,
                                constraint=Options(_CHECK_PROFILES),
                                help="profile of the determinism check (paper)")
    check_steps: int = option("--check-steps", 60, kind=int,
                              constraint=Interval("int", 1, 100_000),
                              help="training steps of the speed check (60)")
    check_subset: int = option("--check-subset", 2560, kind=int,
                               constraint=Interval("int", 1, 1_000_000),
                               help="images of the determinism check (2560)")
    device: str = gpu_batch.device_option()
    pool: str | None = gpu_batch.skip_pool_option()
    cache_dir: str | None = option("--cache-dir", None,
                                   help="decoded-image cache (temporary)")
    reserve_s: float = gpu_batch.reserve_option()

    def __post_init__(self):
        check_options(self)
        gpu_batch.read_plan(self.plan)  # a bad plan is refused before any work


def build_parser() -> argparse.ArgumentParser:
    """The options of :class:`DeviceRunOptions`, as declared there."""
    return add_options(ArgumentParser(prog=PROG, description=(__doc__ or "").split("\n\n")[0]),
                       DeviceRunOptions)


def _environment(device: str) -> dict:
    """The device, library versions and the code version, for the account
    (:func:`real_runs.runtime.environment`, what every record stores)."""
    from real_runs.runtime import environment, resolve_device

    return {"code_version": code_version(gpu_batch.REPO),
            **environment(resolve_device(device))}


def _step(name: str, main, argv: list[str]) -> dict:
    """Run one command's ``main(argv)`` in this process; its exit code, seconds and the last
    lines it printed."""
    t0 = time.perf_counter()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = int(main(argv))
        except SystemExit as exc:  # argparse's usage errors
            code = int(exc.code or 0)
    seconds = round(time.perf_counter() - t0, 2)
    tail = (out.getvalue() + err.getvalue()).strip().splitlines()[-5:]
    print(f"{name}: exit {code} after {seconds:g} s", flush=True)
    return {"step": name, "exit": code, "seconds": seconds, "argv": argv, "tail": tail}


def run_device(opts: DeviceRunOptions, *, clock=time.monotonic) -> dict:
    """Verify the pack, check the device, then train until the deadline.

    Parameters
    ----------
    opts : DeviceRunOptions
    clock : callable
        Seconds, monotonic (the tests pass a fake one to spend the deadline).

    Returns
    -------
    dict
        The account written to ``$OUT/device_run.json``.
    """
    start = clock()
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    account = {"command": PROG, "deadline_s": opts.deadline_s, "plan": opts.plan,
               "environment": _environment(opts.device), "steps": [], "final": False}

    def write():
        account["elapsed_s"] = round(clock() - start, 2)
        write_atomic(out / SUMMARY, json.dumps(account, indent=1, sort_keys=True) + "\n")

    def left() -> float:
        return opts.deadline_s - (clock() - start)

    write()
    steps = [
        ("verify pack", pack_data.main, ["--verify", str(opts.pack)]),
        ("gpu check", gpu_check.main,
         ["--pack", str(opts.pack), "--out", str(out / "check"), "--profile",
          opts.check_profile, "--steps", str(opts.check_steps), "--subset",
          str(opts.check_subset), "--device", opts.device]
         + (["--cache-dir", str(opts.cache_dir)] if opts.cache_dir else [])),
    ]
    for name, main, argv in steps:
        done = _step(name, main, argv)
        account["steps"].append(done)
        write()
        if done["exit"] != 0:
            account.update(final=True, stopped=f"{name} failed (exit {done['exit']})")
            write()
            return account
    budget = left()
    if budget < opts.reserve_s + 1:
        account.update(final=True, stopped=f"no time left to train: {budget:.0f} s of "
                                            f"{opts.deadline_s:g} after the checks")
        write()
        return account
    argv = ["--pack", str(opts.pack), "--out", str(out), "--budget-s", f"{budget:.1f}",
            "--plan", str(opts.plan), "--workers", str(opts.workers), "--device", opts.device,
            "--reserve-s", str(opts.reserve_s)]
    argv += ["--pool", opts.pool] if opts.pool else []
    argv += ["--cache-dir", str(opts.cache_dir)] if opts.cache_dir else []
    done = _step("gpu batch", gpu_batch.main, argv)
    account["steps"].append(done)
    account["throughput"] = _throughput(out, clock() - start)
    account.update(final=True, stopped=None if done["exit"] == 0 else
                   f"gpu batch failed (exit {done['exit']})")
    write()
    return account


def _throughput(out: Path, elapsed_s: float) -> dict:
    """Runs the batch finished, per minute of this call (checks and start-up included;
    the machine's own start, outside the call, is not)."""
    try:
        finished = len(json.loads((out / gpu_batch.SUMMARY).read_text())["finished"])
    except (OSError, ValueError, KeyError, TypeError):
        finished = 0
    return {"runs_finished": finished, "call_s": round(elapsed_s, 1),
            "runs_per_minute_of_call": round(60.0 * finished / elapsed_s, 2)
            if elapsed_s > 0 else None}


def main(argv=None) -> int:
    """Run the CLI; 0 when every step succeeded, 1 when one failed or no time was left,
    2 for bad input."""
    return call_main(_main, PROG, argv)


def _main(argv) -> int:
    opts = config_from_args(DeviceRunOptions, build_parser().parse_args(argv))
    require_torch()  # one line naming the extra, before the output folder is made
    account = run_device(opts)
    return 0 if account.get("stopped") is None else 1


if __name__ == "__main__":
    raise SystemExit(main())
