"""Resource checks done before allocating: memory estimates and numba's cache folder."""

from __future__ import annotations

import os
import tempfile

from evalcal_core.validate import InvalidParameterError

GIB = 2**30


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``), or None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(nbytes: float, what: str, hint: str, available: int | None = None) -> None:
    """``ValueError`` if ``what`` needs more than the memory available (estimated first).

    Parameters
    ----------
    nbytes : float
        Estimated peak bytes.
    what : str
        What needs it ("one chunk of cell k=10").
    hint : str
        How to need less.
    available : int, optional
        Bytes available; default :func:`available_memory`.
    """
    free = available_memory() if available is None else available
    if free is not None and nbytes > free:
        raise InvalidParameterError(f"{what} needs about {nbytes / GIB:.3g} GiB of memory; "
                                    f"{free / GIB:.3g} GiB is available; {hint}")


def _writable(folder) -> bool:
    try:
        os.makedirs(folder, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".probe.")
        os.close(fd)
        os.unlink(probe)
        return True
    except OSError:
        return False


def ensure_numba_cache(package_dir) -> None:
    """Give numba a writable cache folder when neither ``package_dir`` nor ~/.cache is one.

    ``@njit(cache=True)`` raises at decoration time (so at ``import``) when it finds no
    writable place for its cache: the package's ``__pycache__`` (an installed, read-only
    site-packages) and the user's cache folder (a read-only or missing HOME). A temporary
    folder then holds the cache for this process. Call before numba compiles anything.
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    in_tree = os.path.join(package_dir, "__pycache__")
    home_cache = os.path.join(os.path.expanduser("~"), ".cache")
    if _writable(in_tree) or _writable(home_cache):
        return
    # One folder per user, reused by later processes (compiling takes seconds).
    folder = os.path.join(tempfile.gettempdir(), f"evalcal-numba-cache-{os.getuid()}")
    if not _writable(folder):
        folder = tempfile.mkdtemp(prefix="evalcal-numba-cache-")
    os.environ["NUMBA_CACHE_DIR"] = folder
    import sys

    config = sys.modules.get("numba.core.config")
    if config is not None:  # numba read its settings already
        config.CACHE_DIR = folder
