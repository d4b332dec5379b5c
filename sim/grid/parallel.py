"""Run tasks with joblib on the local ``loky`` backend or on a dask.distributed cluster."""

from __future__ import annotations

import contextlib
import logging

import joblib

from evalcal_core.validate import InvalidParameterError, fail

BACKENDS = ("loky", "dask")
#: seconds to wait for a dask scheduler before giving up with a clear error
CONNECT_TIMEOUT_S = 10


@contextlib.contextmanager
def backend_context(backend: str, jobs: int, scheduler: str | None = None):
    """Yield a ``joblib.Parallel`` factory for ``backend``.

    ``dask`` connects to ``scheduler`` (an address such as ``tcp://127.0.0.1:8786``) or, when
    none is given, starts a local cluster on loopback with ``jobs`` single-threaded workers.
    """
    if backend not in BACKENDS:
        raise fail("--backend", f"one of {BACKENDS}", backend)
    if backend == "loky":
        yield lambda: joblib.Parallel(n_jobs=jobs, backend="loky",
                                      return_as="generator_unordered")
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise InvalidParameterError("--backend dask needs dask.distributed: "
                                    "pip install '.[dask]'") from None
    with contextlib.ExitStack() as stack:
        if scheduler:
            try:
                client = stack.enter_context(Client(scheduler, timeout=CONNECT_TIMEOUT_S))
            except (OSError, TimeoutError, ValueError) as exc:
                reason = " ".join(str(exc).split())[:200] or type(exc).__name__
                raise InvalidParameterError(f"cannot reach the dask scheduler {scheduler!r} within "
                                            f"{CONNECT_TIMEOUT_S} s ({reason}); is it running, "
                                            "and is the address right?") from None
        else:
            # Only errors from the local cluster's processes: its nanny warns at shutdown
            # ("worker process still alive ... killing"), which is not the user's concern.
            cluster = stack.enter_context(LocalCluster(
                n_workers=jobs, threads_per_worker=1, host="127.0.0.1",
                dashboard_address=None, processes=True, silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))
        stack.enter_context(joblib.parallel_config(backend="dask"))
        del client
        yield lambda: joblib.Parallel(n_jobs=-1, return_as="generator_unordered")
