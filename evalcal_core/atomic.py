"""One atomic writer: a unique temporary file in the target's folder, fsync, rename.

Readers never see a torn file, two writers never share a temporary name, and a crash leaves
at most a hidden ``.NAME.*.tmp`` file behind. Files are made readable by others (0644), as
results are meant to be shared.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

#: permission bits of every file written (mkstemp alone would give 0600)
FILE_MODE = 0o644


@contextlib.contextmanager
def atomic_path(path, *, mode: int = FILE_MODE):
    """Yield a temporary path beside ``path``; on success it is synced and renamed onto it.

    The temporary name keeps ``path``'s suffix, so writers that pick a format from the name
    (``savefig``) work. On an exception the temporary file is removed and ``path`` is
    untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                               suffix=f".tmp{path.suffix}")
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
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
