"""Process-level settings of a run: device, determinism, threads, environment fingerprint."""

from __future__ import annotations

import contextlib
import os
import platform
import sys

from evalcal_core.validate import InvalidParameterError, fail

DEVICES = ("auto", "cpu", "cuda")
#: CPU kernel sets a run may be pinned to: ``native`` (the best this CPU has) or ``avx2``
CPU_ISAS = ("native", "avx2")
#: the settings that pin ATen's vectorized kernels, oneDNN and MKL to AVX2
_AVX2_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2"}


def pin_cpu_isa(isa: str) -> None:
    """Pin torch's CPU kernels to one instruction set, for records comparable across CPUs.

    Results on CPU depend on the kernels torch picks for the CPU it runs on (AVX-512 and
    AVX2 convolutions sum in different orders). ``"avx2"`` makes an AVX-512 machine use the
    AVX2 kernels, as an AVX2-only machine does. It must be called before torch starts (it
    sets environment variables, also inherited by worker processes).

    Raises
    ------
    ValueError
        ``isa`` is unknown, or torch had already started with other kernels, or the CPU
        lacks AVX2.
    """
    if isa not in CPU_ISAS:
        raise fail("--cpu-isa", f"one of {', '.join(CPU_ISAS)}", isa)
    if isa == "native":
        return
    os.environ.update(_AVX2_ENV)
    try:
        import torch
    except ImportError:
        return  # real_runs.train.require_torch says how to install it

    found = torch.backends.cpu.get_cpu_capability()
    if found != "AVX2":
        raise InvalidParameterError(f"--cpu-isa avx2: torch runs {found} kernels (torch was "
                                    "started before the setting, or this CPU has no AVX2); start "
                                    "Python with "
                                    + " ".join(f"{k}={v}" for k, v in _AVX2_ENV.items()))


def resolve_device(device: str) -> str:
    """``"auto"`` -> ``"cuda"`` when a GPU is visible, else ``"cpu"``; others checked."""
    import torch

    if device not in DEVICES:
        raise InvalidParameterError(f"device must be one of {DEVICES}, got {device!r}")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise InvalidParameterError("device 'cuda' requested but torch sees no CUDA device")
    return device


@contextlib.contextmanager
def deterministic(threads: int | None = None):
    """Deterministic algorithms and a fixed intra-op thread count, restored on exit.

    CPU kernels are then bit-reproducible for a given thread count; CUDA also needs
    ``CUBLAS_WORKSPACE_CONFIG``, set here before any cuBLAS handle exists.
    """
    import torch

    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    previous = (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads(),
                torch.backends.cudnn.benchmark)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous[0])
        torch.set_num_threads(previous[1])
        torch.backends.cudnn.benchmark = previous[2]


def environment(device: str) -> dict:
    """Versions, device and thread count, stored with every record."""
    import numpy
    import torch
    import torchvision

    info = {
        "python": platform.python_version(), "torch": torch.__version__,
        "torchvision": torchvision.__version__, "numpy": numpy.__version__,
        "platform": platform.platform(), "machine": platform.machine(),
        "device": device, "threads": torch.get_num_threads(), "cpu_count": os.cpu_count(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "executable": sys.executable,
    }
    # CPU kernels are chosen by instruction set at run time (ATen's vectorized kernels,
    # oneDNN's convolutions), and different kernels sum in different orders: records from
    # machines whose capability differs may differ in the last bits, then in predictions.
    info["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    info["cpu_model"] = cpu_model()
    for name in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_CBWR"):
        if os.environ.get(name):
            info[name.lower()] = os.environ[name]
    if device == "cuda":
        info["cuda_device"] = torch.cuda.get_device_name()
        info["cuda"] = torch.version.cuda
    return info


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
