"""Output folders: checked before any work, locked while a run writes, marked until whole.

A long run learns that its ``--out`` is a file or read-only before its first cell or first
training run, not after hours. Two runs into one folder never mix their files: the second
is refused while the first holds ``OUT/.lock`` (``fcntl.flock``, released by the kernel when
the process ends, so a crash leaves no stale lock).

A run killed half-way (``kill -9``, a full disk, an exception) must not leave a folder whose
files come from two runs and look finished. :func:`run_outputs` writes the one-line marker
``OUT/INCOMPLETE`` right after it takes the lock, before the run touches any output, and
removes it only when the block ends normally, after every output is written and the outputs
of an earlier run that this one did not write are removed. At any instant the folder is
therefore either the previous run's complete output (no marker) or marked incomplete; the
two steps that decide it (writing the marker atomically, ``unlink`` at the end) are each
atomic, and nothing about the kill needs to be known or cleaned up afterwards.

Why a marker and not a staging folder renamed into place: the simplest scheme that is
robust. A rename would need the outputs and the resumable caches that live inside ``OUT``
(``OUT/cells/`` of ``sim.calibrate``) to be split apart, swapping a folder is not atomic
when ``OUT`` already exists, and a reader holding a path into the old folder would lose it.
The marker costs one file, needs no cooperation from the writers beyond using
:func:`run_outputs`, and is written at lock time rather than before the first write so that
no writer can forget it. Caches are not outputs: they are written atomically cell by cell,
so a rerun after a kill resumes from them and then removes the marker. Readers of an
output folder call :func:`check_complete`, which refuses a marked one.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from evalcal_core.validate import InvalidParameterError, fail

from .atomic import write_atomic

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, runs are not guarded
    fcntl = None

LOCK_NAME = ".lock"
#: the marker of a folder whose run has not finished (see the module docstring)
MARKER_NAME = "INCOMPLETE"
#: the marker's text after the command and its start
MARKER_TEXT = "outputs in this folder are from an unfinished run"


def check_out_path(path, option: str = "--out") -> Path:
    """Refuse ``path`` as an output folder if it or one of its parents is a file, creating
    nothing (a command whose input is still to be checked leaves no empty folder behind).

    Raises
    ------
    ValueError
        ``path`` or one of its parents is a file.
    """
    path = Path(path)
    for parent in [path, *path.parents]:
        if parent.exists() and not parent.is_dir():
            where = "is a file" if parent == path else f"is under the file {parent}"
            raise fail(option, f"a folder ({path} {where})", str(path))
    return path


def check_out(path, option: str = "--out") -> Path:
    """Create ``path`` if needed and check that files can be written in it.

    Raises
    ------
    ValueError
        ``path`` or one of its parents is a file, or the folder cannot be written.
    """
    path = check_out_path(path, option)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-test.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InvalidParameterError(f"The {option!r} folder {path} is not writable "
                                    f"({reason})") from None
    return path


def _open_lock(lock: Path, option: str) -> int:
    """Open (or create) the lock file ``lock`` without following a symlink.

    A plain ``O_CREAT`` follows a dangling ``OUT/.lock`` symlink and creates its target
    wherever it points, outside the output folder; ``O_NOFOLLOW`` makes the open fail on
    any symlink instead, and anything but a regular file (a FIFO would block the open,
    a device would be written) is refused before it is opened.
    """
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        info = os.lstat(lock)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        what = "a symlink" if stat.S_ISLNK(info.st_mode) else "not a regular file"
        raise InvalidParameterError(f"The {option!r} folder's lock {lock} is {what}; delete it (a "
                                    "run creates a regular file there)")
    try:
        return os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_APPEND | nofollow
                       | getattr(os, "O_NONBLOCK", 0), 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink appeared between the check and the open
            raise InvalidParameterError(f"The {option!r} folder's lock {lock} is a symlink; "
                                        "delete it (a run creates a regular file there)") from None
        raise


@contextlib.contextmanager
def locked_out(path, option: str = "--out", *, lock_file: bool = True):
    """Hold an exclusive lock on ``path/.lock`` (after :func:`check_out`) for the block.

    Parameters
    ----------
    path : path-like
        The output folder.
    option : str, optional
        The option that named ``path``, for messages.
    lock_file : bool, optional
        False locks the folder's own descriptor instead and leaves no file in it: for a
        device's ``$OUT``, whose every file counts against the few that come back. The two
        kinds of lock do not exclude each other, so a command uses one kind only.

    Raises
    ------
    ValueError
        Another process holds the lock.
    """
    path = check_out(path, option)
    if fcntl is None:  # pragma: no cover
        yield path
        return
    fd = _open_lock(path / LOCK_NAME, option) if lock_file else os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InvalidParameterError(f"another run is writing to {path}; wait for it to finish "
                                        f"or use another {option}") from None
        try:
            yield path
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


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


@dataclass
class OutputRun:
    """The output folder of one run, handed out by :func:`run_outputs`.

    Attributes
    ----------
    path : pathlib.Path
        The folder (checked, locked and marked incomplete).
    written : list of str
        Names of the outputs this run wrote (:meth:`wrote`); with ``known`` they decide
        which files of an earlier run are stale.
    removed : list of str
        Set when the block ends normally: the stale outputs removed.
    """

    path: Path
    written: list = field(default_factory=list)
    removed: list = field(default_factory=list)

    def wrote(self, *names: str) -> None:
        """Record output names (relative to :attr:`path`) as written by this run."""
        self.written.extend(names)


def local_time() -> str:
    """Now, in local time with its offset (ISO 8601, seconds): when a marker was written."""
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def marker_line(command: str) -> str:
    """The marker's one line: which command, started when (local time, ISO 8601), and what
    it means."""
    return f"{command} started {local_time()} (pid {os.getpid()}): {MARKER_TEXT}\n"


def mark_incomplete(folder, line: str) -> None:
    """Mark ``folder`` incomplete with ``line`` (what left it so), written atomically; a
    later :func:`run_outputs` of its command removes the mark when it finishes."""
    write_atomic(Path(folder) / MARKER_NAME, line.rstrip("\n") + "\n")


@contextlib.contextmanager
def run_outputs(path, command: str, *, known=(), option: str = "--out"):
    """Lock ``path``, mark it incomplete, run the block, then remove stale files and the mark.

    Check the arguments before entering: the folder is marked incomplete from entry on.

    Parameters
    ----------
    path : path-like
        The output folder (created; see :func:`check_out`).
    command : str
        The command that writes it, named in the marker (``python -m sim.calibrate``).
    known : iterable of str, optional
        Every output name the command may write; those an earlier run left that this run did
        not record with :meth:`OutputRun.wrote` are removed before the mark is.
    option : str, optional
        The option that named ``path``, for messages.

    Yields
    ------
    OutputRun

    Raises
    ------
    ValueError
        ``path`` is not a writable folder, or another run holds its lock.

    Notes
    -----
    Only a normal end removes the marker: an exception (or a kill) leaves it, so the folder
    reads as incomplete until a run of the command finishes.
    """
    with locked_out(path, option) as out:
        mark_incomplete(out, marker_line(command))
        run = OutputRun(out)
        yield run
        run.removed = remove_stale(out, known, run.written)
        (out / MARKER_NAME).unlink()


def incomplete_reason(folder) -> str | None:
    """The marker's line when ``folder`` is marked incomplete, else ``None``."""
    marker = Path(folder) / MARKER_NAME
    try:
        with open(marker, encoding="utf-8", errors="replace") as fh:
            line = fh.readline(500).strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:  # unreadable or a directory: still a marker
        line = ""
    return line or MARKER_TEXT


def check_complete(path, option: str) -> Path:
    """Refuse an output folder, or a file in one, that is marked incomplete.

    Parameters
    ----------
    path : path-like
        A folder, or a file whose folder is checked.
    option : str
        The option that named ``path``, for the message.

    Raises
    ------
    ValueError
        The folder holds :data:`MARKER_NAME`; one line naming it and the run that left it.
    """
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    reason = incomplete_reason(folder)
    if reason is not None:
        raise InvalidParameterError(f"The {option!r} folder {folder} is marked incomplete "
                                    f"({reason}); rerun that command, or delete "
                                    f"{folder / MARKER_NAME} if you know the files are whole")
    return path
