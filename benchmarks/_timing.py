"""Best-of-N wall time, shared by the benchmark scripts (imported from their folder)."""

from __future__ import annotations

import time


def best_time(fn, repeat: int, *, warmup: bool = False):
    """Seconds of the fastest of ``repeat`` calls of ``fn``, and the last call's result.

    The minimum is the time least disturbed by other load (``timeit``'s advice).
    ``warmup`` makes one untimed call first, so one-off set-up (numba loading or compiling
    its kernels) is not timed.
    """
    if warmup:
        fn()
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out
