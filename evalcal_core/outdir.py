"""Output folders: checked before any work, locked while a run writes, stale files removed.

A long run learns that its ``--out`` is a file or read-only before its first cell or first
training run, not after hours. Two runs into one folder never mix their files: the second
is refused while the first holds ``OUT/.lock`` (``fcntl.flock``, released by the kernel when
the process ends, so a crash leaves no stale lock).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, runs are not guarded
    fcntl = None

LOCK_NAME = ".lock"


def check_out(path, option: str = "--out") -> Path:
    """Create ``path`` if needed and check that files can be written in it.

    Raises
    ------
    ValueError
        ``path`` or one of its parents is a file, or the folder cannot be written.
    """
    path = Path(path)
    for parent in [path, *path.parents]:
        if parent.exists() and not parent.is_dir():
            where = "is a file" if parent == path else f"is under the file {parent}"
            raise ValueError(f"The {option!r} option must be a folder; {path} {where}")
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-test.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(f"The {option!r} folder {path} is not writable ({reason})") from None
    return path


@contextlib.contextmanager
def locked_out(path, option: str = "--out"):
    """Hold an exclusive lock on ``path/.lock`` (after :func:`check_out`) for the block.

    Raises
    ------
    ValueError
        Another process holds the lock.
    """
    path = check_out(path, option)
    if fcntl is None:  # pragma: no cover
        yield path
        return
    with open(path / LOCK_NAME, "a") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"another run is writing to {path}; wait for it to finish or "
                             f"use another {option}") from None
        try:
            yield path
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def remove_stale(path, known, written) -> list[str]:
    """Delete the ``known`` output names in ``path`` that this run did not write.

    Returns
    -------
    list of str
        The names removed (an earlier run with other settings left them).
    """
    removed = []
    for name in known:
        target = Path(path) / name
        if name not in written and target.is_file():
            target.unlink()
            removed.append(name)
    return removed
