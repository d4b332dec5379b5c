"""One atomic writer: a unique temporary file in the target's folder, fsync, rename.

Readers never see a torn file, two writers never share a temporary name, and a crash leaves
at most a hidden ``.NAME.*.tmp`` file behind. Files are made readable by others (0644), as
results are meant to be shared.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from evalcal_core.validate import InvalidParameterError

#: permission bits of every file written (mkstemp alone would give 0600)
FILE_MODE = 0o644

#: what ``os.replace`` would destroy, by file type, in refusals
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"))


def check_target(path) -> Path:
    """Refuse a write target that exists and is not a regular file.

    ``os.replace`` swaps whatever ``path`` names for the new file: a device node, a FIFO,
    a socket or a symlink would be destroyed (a plot written "to /dev/null" would replace
    the device with a PNG). Only a regular file is replaced, or a new file created.

    Parameters
    ----------
    path : path-like
        The file about to be written.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ValueError
        One line naming ``path``, what it is, and what is allowed.
    """
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return path
    except NotADirectoryError:
        return path  # a parent is a file: mkdir below names it
    if stat.S_ISLNK(info.st_mode):
        raise InvalidParameterError(f"refusing to write {path}: it is a symlink; give the path of "
                                    "a regular file or of a new one")
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
        raise InvalidParameterError(f"refusing to write {path}: it is {kind}; give the path of a "
                                    "regular file or of a new one")
    return path


@contextlib.contextmanager
def atomic_path(path, *, mode: int = FILE_MODE):
    """Yield a temporary path beside ``path``; on success it is synced and renamed onto it.

    The temporary name keeps ``path``'s suffix, so writers that pick a format from the name
    (``savefig``) work. On an exception the temporary file is removed and ``path`` is
    untouched.

    Raises
    ------
    ValueError
        ``path`` exists and is not a regular file (see :func:`check_target`).
    """
    path = check_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                               suffix=f".tmp{path.suffix}")
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        # again just before the rename: a device or FIFO may have appeared while writing
        check_target(path)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename in (None, tmp, str(tmp)) and exc.errno:
            # A full disk surfaces from write() or fsync() with no file name, or with the
            # hidden temporary one: the user needs the file they asked for.
            raise OSError(exc.errno, exc.strerror or os.strerror(exc.errno), str(path)) from exc
        raise


def write_atomic(path, data: str | bytes, *, mode: int = FILE_MODE) -> Path:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` atomically; return ``path``."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path, mode=mode) as tmp:
        tmp.write_bytes(payload)
    return Path(path)
