"""Where a pool named by name is found: ``$EVALCAL_POOLS``, else ``../shared/data/llm_pools``.

The project ships no pool data (the real pools' terms are their owners'). A pool is read
from a path; a bare name (``matharena_aime_2025_i``) is looked up as ``NAME.csv.gz``,
``NAME.csv`` or ``NAME`` in the pools folder: ``$EVALCAL_POOLS`` when set, else
``shared/data/llm_pools`` beside the checkout the package was imported from (an editable
install), else ``../shared/data/llm_pools`` from the working folder (an installed package run
from its checkout), whichever exists first. tox sets ``$EVALCAL_POOLS`` to the folder beside
its checkout: its package is installed elsewhere and the tests run in temporary folders.
Commands whose default pools are missing run without them and say so in one line
(:func:`missing_line`); a pool the user named and that is missing is refused in one line
(:func:`resolve_pool`).
"""

from __future__ import annotations

import os
from pathlib import Path

from evalcal_core.validate import InvalidParameterError

#: the environment variable naming the pools folder
POOLS_ENV = "EVALCAL_POOLS"
#: the shared data folder beside the checkout (``../shared/data/llm_pools``)
SHARED_POOLS = Path(__file__).resolve().parents[2] / "shared" / "data" / "llm_pools"
#: the same folder named from the working folder (an installed package lives elsewhere)
SHARED_FROM_CWD = Path("..") / "shared" / "data" / "llm_pools"


def shared_candidates() -> tuple[Path, ...]:
    """The shared pools folders tried after ``$EVALCAL_POOLS``, in order (absolute)."""
    return tuple(dict.fromkeys((SHARED_POOLS, SHARED_FROM_CWD.resolve())))
#: what a name may be completed with, in the order tried
SUFFIXES = (".csv.gz", ".csv", "")
#: suffixes that mark a pool argument as a path rather than a name
PATH_SUFFIXES = (".csv", ".gz", ".tsv", ".txt")


def pools_dir() -> tuple[Path | None, str]:
    """The pools folder and how it was chosen (words for messages).

    Returns
    -------
    (Path or None, str)
        ``$EVALCAL_POOLS`` when set; else the first shared folder that exists
        (:func:`shared_candidates`); else ``None``.
    """
    env = os.environ.get(POOLS_ENV)
    if env:
        return Path(env), f"${POOLS_ENV} ({env})"
    candidates = shared_candidates()
    for folder in candidates:
        if folder.is_dir():
            return folder, f"the shared pools folder ({folder})"
    tried = " or ".join(str(f) for f in candidates)
    return None, f"neither ${POOLS_ENV} (unset) nor a shared pools folder ({tried}, absent)"


def is_path(spec: str) -> bool:
    """Whether a pool argument is a path (a folder separator or a file suffix) not a name."""
    text = str(spec)
    return (os.sep in text or "/" in text or text.lower().endswith(PATH_SUFFIXES)
            or Path(text).exists())


def find_pool(spec) -> Path | None:
    """The file of ``spec`` (a path, returned as is; or a name found in :func:`pools_dir`),
    or ``None`` for a name that no pools folder has."""
    if is_path(spec):
        return Path(spec)
    folder, _ = pools_dir()
    if folder is None:
        return None
    for suffix in SUFFIXES:
        candidate = folder / f"{spec}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def resolve_pool(spec, option: str = "pool", owner: str = "") -> Path:
    """The file of a pool the user named; refuses a name no pools folder has, in one line.

    Parameters
    ----------
    spec : str or path-like
        A path, or a pool's name.
    option, owner : str
        The option that named it and the command, for the message.

    Returns
    -------
    pathlib.Path
        The path (existence of a path is checked by the reader).
    """
    found = find_pool(spec)
    if found is not None:
        return found
    _, where = pools_dir()
    owner = f" of {owner}" if owner else ""
    kind = "option" if option.startswith("--") else "parameter"
    raise InvalidParameterError(
        f"The {option!r} {kind}{owner}: no pool named {str(spec)!r} in {where}; give a "
        f"pool file's path, or set ${POOLS_ENV} to a folder holding {spec}.csv[.gz]")


def present(names) -> tuple[str, ...]:
    """The default pools among ``names`` that resolve here (order kept)."""
    return tuple(n for n in names if find_pool(n) is not None)


def missing_line(names, command: str) -> str | None:
    """One line saying which default pools are missing and that ``command`` runs without
    them, or ``None`` when all are present."""
    missing = [n for n in names if find_pool(n) is None]
    if not missing:
        return None
    _, where = pools_dir()
    return (f"{command}: default pool(s) {', '.join(missing)} not found in {where}; running "
            f"without their real cells (set ${POOLS_ENV} to include them)")
