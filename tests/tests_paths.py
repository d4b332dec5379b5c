"""Paths of the committed test fixtures, and the snapshot that keeps tests out of the checkout."""

from __future__ import annotations

import os
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: synthetic run store written by ``tests/fixtures/make_fixture_pool.py``
FIXTURE_POOL = str(FIXTURES / "pool")
#: the checkout the tests belong to
REPO = FIXTURES.parents[1]

#: folders a test run may create or change inside the checkout: caches of Python, numba
#: (``__pycache__/*.nbi``, ``*.nbc``), pytest, hypothesis, ruff, and the environments and
#: metadata of tox and ``pip install -e``
CACHE_DIRS = frozenset({".git", ".tox", "__pycache__", ".pytest_cache", ".hypothesis",
                        ".ruff_cache", ".venv", "venv"})
CACHE_SUFFIXES = (".pyc", ".nbi", ".nbc", ".egg-info")
#: the user's output folders (ignored by git): the commands' default output root and the
#: data caches. A user may run ``reports.build`` or a calibration in the checkout while the
#: suite runs; what lands there is theirs (the tests write under a temporary working folder,
#: ``conftest._cwd_outside_the_checkout``), so the snapshot leaves these folders out
USER_OUTPUT_DIRS = ("reports/output", "data_cache", "data_pack", "real_runs/pool/.cache")


def _is_cache(name: str) -> bool:
    return name in CACHE_DIRS or name.endswith(CACHE_SUFFIXES)


def checkout_snapshot(root=REPO) -> dict[str, tuple]:
    """Every file and folder under ``root`` but the caches and the user's output folders
    (:data:`USER_OUTPUT_DIRS`), with what a write changes.

    Returns
    -------
    dict
        ``relative/path -> ("dir",)`` for a folder, ``("file", size, mtime_ns)`` for a
        file (a folder's own mtime is left out: a cache created inside it changes it).
    """
    root = Path(root)
    out = {}
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root)
        dirs[:] = sorted(d for d in dirs if not _is_cache(d)
                         and (rel / d).as_posix() not in USER_OUTPUT_DIRS)
        for d in dirs:
            out[(rel / d).as_posix()] = ("dir",)
        for f in files:
            if _is_cache(f):
                continue
            try:
                st = os.lstat(os.path.join(folder, f))
            except FileNotFoundError:  # removed while walking
                continue
            out[(rel / f).as_posix()] = ("file", st.st_size, st.st_mtime_ns)
    return out


def checkout_changes(before: dict, after: dict) -> list[str]:
    """``created PATH``, ``changed PATH``, ``removed PATH`` lines between two snapshots."""
    lines = [f"created {p}" for p in sorted(after.keys() - before.keys())]
    lines += [f"changed {p}" for p in sorted(after.keys() & before.keys())
              if after[p] != before[p]]
    lines += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    return lines
