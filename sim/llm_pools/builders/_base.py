"""The pool builder: how one public source file becomes one item pool.

A :class:`PoolBuilder` states, as class attributes, where its source is published (repository,
pinned commit, path), the shared pool it produces (file name and the sha256 of its CSV) and
how many ``--input`` files it reads; its one hook, :meth:`PoolBuilder.frame`, turns the
source files into the pool's rows ``model, item, attempt, score, cluster``. Each source is
one module of :mod:`sim.llm_pools.builders` registering one subclass with ``@register``;
``python -m sim.llm_pools.build SOURCE`` finds it by name and never compares one.

The helpers here read a source file the same way for every builder: a regular, non-empty,
UTF-8 file, parsed as JSON where the source is JSON, each refusal one line naming
``--input``, the file and what was expected (:class:`InvalidParameterError`, exit 2).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pandas as pd

from evalcal_core.registry import Registry
from evalcal_core.validate import InvalidParameterError

#: the command that builds a pool, for messages
OWNER = "python -m sim.llm_pools.build"
#: the columns of every built pool, in order
POOL_COLUMNS = ("model", "item", "attempt", "score", "cluster")

BUILDERS = Registry("pool source", "SOURCE", OWNER)


@dataclass(frozen=True)
class PoolBuilder:
    """One public source of a shared pool (a subclass per module overrides :meth:`frame`).

    Attributes
    ----------
    name : str
        The ``SOURCE`` argument of the build command.
    title : str
        What the pool holds, in words (benchmark, release).
    repository : str
        The GitHub repository publishing the source, ``owner/name``.
    commit : str
        The pinned commit (40 hex digits) whose files reproduce the shared pool.
    paths : tuple of str
        The source file(s) in the repository at ``commit`` (``*`` where several are read).
    licence : str
        The source's licence, as its repository states it.
    pool : str
        The shared pool's file name in ``../shared/data/llm_pools``.
    sha256 : str
        sha256 of the shared pool's CSV (inflated): the build command's output, from the
        files at ``commit``, has exactly these bytes.
    newline : str
        The line ending of the shared CSV (``"\\r\\n"`` where it was written by Python's
        ``csv`` module), so that the rebuilt bytes equal it.
    min_inputs, max_inputs : int or None
        How many ``--input`` files the builder reads (``None``: no upper bound).
    ragged : bool
        Some models lack attempts on some items (the pool is read with
        ``complete_models=True``); ``False`` builds a rectangular pool or refuses.
    commands : str
        The shell lines that fetch the source at ``commit`` and build the pool (for the
        README and ``--help``).
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    repository: ClassVar[str] = ""
    commit: ClassVar[str] = ""
    paths: ClassVar[tuple] = ()
    licence: ClassVar[str] = ""
    pool: ClassVar[str] = ""
    sha256: ClassVar[str] = ""
    newline: ClassVar[str] = "\n"
    min_inputs: ClassVar[int] = 1
    max_inputs: ClassVar[int | None] = 1
    ragged: ClassVar[bool] = False
    commands: ClassVar[str] = ""

    def frame(self, inputs: tuple[Path, ...]) -> pd.DataFrame:
        """The pool's rows from the source files ``inputs`` (already checked to exist).

        Returns
        -------
        pandas.DataFrame
            Columns :data:`POOL_COLUMNS`, rows in the order the shared file has them.
        """
        raise NotImplementedError

    def check_inputs(self, inputs) -> tuple[Path, ...]:
        """``inputs`` as paths, refused in one line when their count is not the builder's
        or one is not a non-empty regular file."""
        paths = tuple(Path(p) for p in inputs or ())
        low, high = self.min_inputs, self.max_inputs
        if len(paths) < low or (high is not None and len(paths) > high):
            want = (f"exactly {low}" if low == high else
                    f"at least {low}" if high is None else f"{low} to {high}")
            raise InvalidParameterError(
                f"The '--input' option of {OWNER} {self.name} must be {want} file(s) "
                f"({self.source_words()}). Got {len(paths)} instead.")
        for path in paths:
            check_file(path)
        return paths

    def source_words(self) -> str:
        """``repository @ commit : path`` in words."""
        return f"{self.repository} @ {self.commit[:7]} : {', '.join(self.paths)}"


def register(cls: type) -> type:
    """Class decorator: add a :class:`PoolBuilder` subclass under its ``name``."""
    return BUILDERS.register(cls)


def get(name: str) -> PoolBuilder:
    """The builder registered as ``name``; one line listing the sources otherwise."""
    return BUILDERS.get(name)


def names() -> list[str]:
    """The registered sources, sorted."""
    return BUILDERS.names()


def doc_commands(doc: str | None) -> str:
    """The shell lines of a builder module's docstring: its literal block after the last
    ``::``, unindented (stated once there where a model list makes them long); empty when
    docstrings are stripped (``python -OO``)."""
    if not doc or "::\n\n" not in doc:
        return ""
    return doc.rsplit("::\n\n", 1)[1].replace("\n    ", "\n").strip() + "\n"


# --------------------------------------------------------------------------------------------
# Reading a source file


def refuse(path, what: str) -> InvalidParameterError:
    """The one-line refusal of ``--input`` file ``path``: ``what`` is wrong with it."""
    return InvalidParameterError(f"--input {str(path)!r} {what}")


#: largest source file read, in bytes
MAX_SOURCE_BYTES = 512 * 2**20


def check_file(path: Path) -> None:
    """Refuse a missing, non-regular or empty file without opening it (a FIFO would block)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise refuse(path, "does not exist") from None
    except OSError as exc:
        raise refuse(path, f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    if not stat.S_ISREG(info.st_mode):
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise refuse(path, f"is {what}; give the source file itself")
    if info.st_size == 0:
        raise refuse(path, "is empty")


def read_text(path: Path) -> str:
    """The file's UTF-8 text; a binary or otherwise encoded file is refused."""
    size = os.stat(path).st_size
    if size > MAX_SOURCE_BYTES:
        # read whole below: a 5 GiB (sparse) file took the machine's memory before any line
        raise refuse(path, f"holds {size:,} bytes, past the cap of {MAX_SOURCE_BYTES:,} bytes "
                           "on a source file (the public sources are far smaller)")
    data = Path(path).read_bytes()
    if b"\x00" in data:
        raise refuse(path, "is binary, not the source's text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise refuse(path, f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                           f"{exc.start})") from None


def read_json(path: Path, expected: str):
    """The file's JSON value; ``expected`` says in words what the source holds."""
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise refuse(path, f"is not JSON ({exc.msg}, line {exc.lineno}); expected "
                           f"{expected}") from None
    except RecursionError:
        raise refuse(path, f"is JSON nested too deeply to read (past Python's recursion "
                           f"limit); expected {expected}") from None


def need(container, key, path, expected: str, kind=None):
    """``container[key]``, refused in one line when missing or not of ``kind``."""
    if not isinstance(container, dict) or key not in container:
        raise refuse(path, f"has no key {key!r}; expected {expected}")
    value = container[key]
    if kind is not None and not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise refuse(path, f"has {key!r} of type {type(value).__name__}, not {names}; "
                           f"expected {expected}")
    return value


def records(items, path, keys: dict, expected: str) -> pd.DataFrame:
    """A list of JSON objects as a DataFrame of ``keys`` (key -> allowed types), each object
    checked: the first one lacking a key or holding a value of another type is refused by
    position."""
    if not isinstance(items, list) or not items:
        raise refuse(path, f"holds no records; expected {expected}")
    for i, obj in enumerate(items):
        for key, kind in keys.items():
            if not isinstance(obj, dict) or key not in obj:
                raise refuse(path, f"record {i} has no key {key!r}; expected {expected}")
            value = obj[key]
            # bool is an int in Python: a score of true is not a pass rate
            if not isinstance(value, kind) or (isinstance(value, bool) and bool not in
                                               (kind if isinstance(kind, tuple) else (kind,))):
                raise refuse(path, f"record {i} has {key!r} = {value!r}; expected {expected}")
    return pd.DataFrame({key: [obj[key] for obj in items] for key in keys})
