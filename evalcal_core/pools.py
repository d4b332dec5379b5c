"""Read an item pool: a long CSV of fixed LLMs' per-item results with repeated attempts.

A *pool* is one table ``model, item, attempt, score[, cluster]``: for every model and every
item, ``R`` attempts, each scored 0/1 or a fraction in [0, 1], and optionally the cluster
(source, repository, category) each item belongs to. :func:`read_pool` reads one from any
path, plain or gzip (told by the magic bytes, not the suffix), checks it and returns a frozen
:class:`ItemPool`; every pool user (``sim.generators.llm_items``, ``sim.design_check``,
``sim.harness_defaults``, ``evalcal pools``) reads through it. Bad input is refused in one
line naming the file and the first offence (:class:`InvalidParameterError`, exit 2).

The reader never opens what is not a regular file (a FIFO would block, a device would be
read forever), and inflates gzip in bounded chunks up to a cap, so an archive bomb costs at
most the cap.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalcal_core.validate import InvalidParameterError, plain

#: columns every pool has (``cluster`` is optional)
COLUMNS = ("model", "item", "attempt", "score")
#: the optional column naming each item's cluster
CLUSTER = "cluster"
#: the most bytes a pool may hold once inflated (a gzip past it is refused: archive bombs);
#: the largest shared pool inflates to 12 MB, and parsing 256 MiB of CSV already takes
#: gigabytes
DEFAULT_MAX_BYTES = 256 * 2**20
#: gzip's magic bytes
GZIP_MAGIC = b"\x1f\x8b"
#: bytes inflated per read (the bound on one step of decompression)
_CHUNK = 2**20

#: what a non-regular file is, by ``stat`` test, for refusals
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


@dataclass(frozen=True)
class ItemPool:
    """A rectangular result matrix: every model, every item, the same number of attempts.

    Attributes
    ----------
    models : tuple of str
        Model names, sorted.
    items : tuple of str
        Item names, sorted by cluster then name.
    scores : ndarray, shape (models, items, attempts)
        Read-only; bool when every score is 0 or 1, else float64 fractions in [0, 1].
        Attempts in file order within each (model, item).
    clusters : ndarray of int, shape (items,), or None
        Cluster code of each item, indexing :attr:`cluster_names` (``None`` when the file
        has no ``cluster`` column or one cluster only).
    cluster_names : tuple of str
        The clusters' names in code order (empty without a ``cluster`` column; one name for
        a single-cluster pool).
    dropped : tuple of str
        Models left out because some item had fewer attempts than the pool's full count
        (``complete_models=True``); empty otherwise.
    source : str
        The file read.
    attempts_range : tuple of int
        Fewest and most attempts of any (model, item) in the file, dropped models included
        (equal unless the file is ragged).
    """

    models: tuple
    items: tuple
    scores: np.ndarray
    clusters: np.ndarray | None
    cluster_names: tuple = ()
    dropped: tuple = ()
    source: str = ""
    attempts_range: tuple = ()

    @property
    def attempts(self) -> int:
        """Attempts per model and item (R)."""
        return self.scores.shape[2]


# --------------------------------------------------------------------------------------------
# Bytes


def as_option(exc: Exception) -> str:
    """A reader's refusal as a command says it: the ``complete_models`` it suggests for
    ragged attempts is the command's ``--complete-models`` switch (the generators and the
    Python functions take the parameter, whose name the reader states)."""
    return str(exc).replace("(complete_models keeps", "(--complete-models keeps")


def _refuse(where: str, what: str) -> InvalidParameterError:
    return InvalidParameterError(f"{where} {what}")


def _check_file(path: Path, where: str) -> os.stat_result:
    """``stat`` the path (following links) and refuse anything but a non-empty regular file,
    without opening it."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise _refuse(where, "does not exist") from None
    except NotADirectoryError:
        raise _refuse(where, "does not exist (a parent is a file)") from None
    except OSError as exc:
        raise _refuse(where, f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
        raise _refuse(where, f"is {kind}, not a pool file (a CSV, plain or gzip)")
    if info.st_size == 0:
        raise _refuse(where, "is empty (a pool has the header model,item,attempt,score and "
                      "one row per attempt)")
    return info


def _inflate(fh, where: str, max_bytes: int) -> bytes:
    """Decompress a gzip stream in bounded chunks, refusing past ``max_bytes``."""
    out = io.BytesIO()
    lines = 0
    try:
        with gzip.GzipFile(fileobj=fh, mode="rb") as z:
            while True:
                # GzipFile.read(n) inflates at most about n bytes per call: bomb-safe
                chunk = z.read(_CHUNK)
                if not chunk:
                    break
                # binary content refused at its first chunk, not after inflating up to the
                # cap (a gzip of zeros once held 1.5 GB before decode() saw the NUL)
                nul = chunk.find(b"\x00")
                if nul >= 0:
                    line = lines + chunk.count(b"\n", 0, nul) + 1
                    raise _refuse(where, f"is binary, not a CSV (a NUL byte on line {line})")
                lines += chunk.count(b"\n")
                if out.tell() + len(chunk) > max_bytes:
                    raise _refuse(where, f"inflates past {max_bytes:,} bytes (the cap on a "
                                  "pool's size; a gzip that large is refused as unsafe)")
                out.write(chunk)
    except EOFError:
        raise _refuse(where, "is a truncated gzip (it ends before its end-of-stream "
                      "marker)") from None
    except (gzip.BadGzipFile, zlib.error, OSError) as exc:
        raise _refuse(where, f"is a corrupt gzip ({exc})") from None
    return out.getvalue()


def read_bytes(path, *, max_bytes: int = DEFAULT_MAX_BYTES, where: str | None = None) -> bytes:
    """The pool file's content, inflated when it is a gzip (magic bytes ``1f 8b``).

    Parameters
    ----------
    path : path-like
        A regular file.
    max_bytes : int
        Largest content accepted, in bytes (inflated size for a gzip).
    where : str, optional
        How messages name the file (default ``pool 'PATH'``).

    Returns
    -------
    bytes
    """
    path = Path(path)
    where = where or f"pool {str(path)!r}"
    info = _check_file(path, where)
    with open(path, "rb") as fh:
        magic = fh.read(2)
        fh.seek(0)
        if magic == GZIP_MAGIC:
            return _inflate(fh, where, max_bytes)
        if info.st_size > max_bytes:
            raise _refuse(where, f"holds {info.st_size:,} bytes, past the cap of "
                          f"{max_bytes:,} bytes on a pool's size")
        # read(n) allocates n bytes up front: the size stat gave (read(max_bytes + 1) took
        # the whole cap of address space for a 4 KiB file), then on to the cap if it grew
        data = fh.read(info.st_size + 1)
        if len(data) > info.st_size:
            data += fh.read(max_bytes + 1 - len(data))
        return data


def decode(data: bytes, where: str) -> str:
    """UTF-8 text of ``data``; refuses binary content (NUL bytes) and other encodings,
    naming the line."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise _refuse(where, f"is binary, not a CSV (a NUL byte on line {line})")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _refuse(where, f"is not UTF-8 text (byte 0x{data[exc.start]:02x} on line "
                      f"{line}); save it as UTF-8") from None


# --------------------------------------------------------------------------------------------
# Table


def parse_table(text: str, where: str):
    """The CSV as a DataFrame of strings (every cell as written, none empty)."""
    import pandas as pd

    if not text.strip():
        raise _refuse(where, "is empty (no header, no rows)")
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise _refuse(where, f"is not a well-formed CSV ({exc})") from None
    lines = [i + 1 for i, row in enumerate(rows) if row]  # file lines of the non-blank rows
    rows = [row for row in rows if row]
    header, body = rows[0], rows[1:]
    for line, row in zip(lines[1:], body):
        if len(row) != len(header):
            raise _refuse(where, f"is not a well-formed CSV: line {line} has {len(row)} "
                          f"fields, the header {len(header)}")
    frame = pd.DataFrame(body, columns=header, dtype=str)
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise _refuse(where, f"lacks the column(s) {', '.join(missing)} (a pool has "
                      f"{', '.join(COLUMNS)} and optionally {CLUSTER})")
    if frame.empty:
        raise _refuse(where, "has a header but no rows")
    used = [c for c in (*COLUMNS, CLUSTER) if c in frame.columns]
    frame = frame[used].apply(lambda s: s.str.strip())
    empty = (frame == "").to_numpy()
    if empty.any():
        row, col = np.argwhere(empty)[0]
        raise _refuse(where, f"has an empty cell: line {row + 2}, column {used[col]!r}")
    return frame


def check_frame(frame, where: str, *, complete_models: bool = False,
                source: str = "") -> ItemPool:
    """Check a pool's rows (strings or numbers) and build the :class:`ItemPool`.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``model, item, attempt, score`` and optionally ``cluster``; row ``i`` is
        line ``i + 2`` of the file in messages.
    where : str
        How messages name the pool.
    complete_models : bool
        Keep only the models with every item at the pool's full attempt count (the largest
        count of any (model, item)) and list the others in :attr:`ItemPool.dropped`;
        ``False`` refuses ragged attempts.
    source : str
        Stored in :attr:`ItemPool.source`.

    Returns
    -------
    ItemPool
    """
    import pandas as pd

    frame = frame.reset_index(drop=True)
    for column in ("model", "item", "attempt", *([CLUSTER] if CLUSTER in frame else [])):
        frame[column] = frame[column].astype(str)
    raw = frame["score"]
    score = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(score) | (score < 0) | (score > 1)
    if bad.any():
        row = int(np.argmax(bad))
        raise _refuse(where, f"has a score that is not a number in [0, 1]: line {row + 2} has "
                      f"{plain(raw.iloc[row])}")
    keys = ["model", "item", "attempt"]
    twice = frame.duplicated(keys)
    if twice.any():
        row = int(np.argmax(twice.to_numpy()))
        first = frame[keys].iloc[row]
        raise _refuse(where, f"has model {first['model']!r}, item {first['item']!r}, attempt "
                      f"{first['attempt']!r} twice (line {row + 2})")
    has_clusters = CLUSTER in frame.columns
    if has_clusters:
        per_item = frame.groupby("item", sort=True)[CLUSTER].nunique()
        if (per_item > 1).any():
            item = per_item.index[int(np.argmax((per_item > 1).to_numpy()))]
            names = sorted(frame.loc[frame["item"] == item, CLUSTER].unique())
            raise _refuse(where, f"puts item {item!r} in more than one cluster "
                          f"({', '.join(map(repr, names[:3]))})")
        item_cluster = frame.groupby("item", sort=True)[CLUSTER].first()
        items = sorted(item_cluster.index, key=lambda i: (item_cluster[i], i))
    else:
        items = sorted(frame["item"].unique())
    counts = frame.groupby(["model", "item"], sort=True).size()
    models = sorted(frame["model"].unique())
    if len(counts) != len(models) * len(items):
        have = set(counts.index)
        gap = next((m, q) for m in models for q in items if (m, q) not in have)
        raise _refuse(where, f"has no attempt of model {gap[0]!r} on item {gap[1]!r} (every "
                      "model needs every item)")
    full = int(counts.max())
    short = counts[counts < full]
    dropped: tuple = ()
    if len(short):
        if not complete_models:
            (m, q), c = short.index[0], int(short.iloc[0])
            raise _refuse(where, f"has ragged attempts: {len(short)} of {len(counts)} "
                          f"(model, item) pairs have fewer than {full} (from {int(counts.min())}"
                          f"; model {m!r} has {c} on item {q!r}); every (model, item) needs "
                          f"the same count (complete_models keeps the models with {full} on "
                          "every item)")
        dropped = tuple(sorted(short.index.get_level_values(0).unique()))
        models = [m for m in models if m not in dropped]
        if not models:
            raise _refuse(where, f"has no model with {full} attempts on every item (all "
                          f"{len(dropped)} have fewer on some item)")
        frame = frame[frame["model"].isin(models)]
        score = score[frame.index.to_numpy()]
    # Rows in (model, item) order, attempts in file order within each.
    order = frame.assign(_m=frame["model"].map({m: i for i, m in enumerate(models)}),
                         _i=frame["item"].map({q: i for i, q in enumerate(items)}),
                         _s=score).sort_values(["_m", "_i"], kind="stable")
    scores = order["_s"].to_numpy().reshape(len(models), len(items), full)
    if np.isin(scores, (0.0, 1.0)).all():
        scores = scores.astype(bool)
    scores.setflags(write=False)
    codes, names = None, ()
    if has_clusters:
        per = [item_cluster[i] for i in items]
        names = tuple(dict.fromkeys(per))
        if len(names) > 1:
            lookup = {c: k for k, c in enumerate(names)}
            codes = np.array([lookup[c] for c in per])
            codes.setflags(write=False)
    return ItemPool(tuple(models), tuple(items), scores, codes, names, dropped, source,
                    (int(counts.min()), full))


# --------------------------------------------------------------------------------------------
# The reader


@functools.lru_cache(maxsize=16)
def _cached(resolved: str, mtime_ns: int, size: int, complete_models: bool,
            max_bytes: int, where: str) -> ItemPool:
    # mtime and size are in the key so that an edited file is read again
    text = decode(read_bytes(resolved, max_bytes=max_bytes, where=where), where)
    return check_frame(parse_table(text, where), where, complete_models=complete_models,
                       source=resolved)


def read_pool(path, *, complete_models: bool = False, max_bytes: int = DEFAULT_MAX_BYTES,
              where: str | None = None) -> ItemPool:
    """Read and check a pool file (plain CSV or gzip), once per file version per process.

    Parameters
    ----------
    path : path-like
        The pool file.
    complete_models : bool
        Ragged attempts (some (model, item) with fewer): ``False`` refuses them with the
        counts; ``True`` keeps the models with every item at the full count and records the
        others in :attr:`ItemPool.dropped`.
    max_bytes : int
        Largest (inflated) size accepted, in bytes; default 2 GiB.
    where : str, optional
        How messages name the pool (default ``pool 'PATH'``).

    Returns
    -------
    ItemPool

    Raises
    ------
    InvalidParameterError
        One line naming the file and the first offence.
    """
    path = Path(path)
    where = where or f"pool {str(path)!r}"
    info = _check_file(path, where)
    return _cached(str(path.resolve()), info.st_mtime_ns, info.st_size, bool(complete_models),
                   int(max_bytes), where)


read_pool.cache_clear = _cached.cache_clear  # type: ignore[attr-defined]
