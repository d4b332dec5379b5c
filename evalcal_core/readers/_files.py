"""Safe file access for the log readers: regular files only, size caps, streamed zip members.

Safe access means: only regular files are opened (a FIFO would block, a device never ends),
symbolic-link loops are named as such, JSON nested past Python's recursion limit is a one-line
``ValueError``, and zip members are inflated as a stream with a running size cap, so a zip bomb
is refused after reading at most the cap.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import struct
import sys
import zipfile
import zlib
from pathlib import Path

from evalcal_core.validate import InvalidParameterError

#: default cap, in bytes, on what one zip member may inflate to, on one JSON log and on one
#: JSONL line (the CLI's --max-member-mb). It bounds memory: a member is held as bytes, then
#: as text, then as text and its parse, so reading one mostly of text (prompts, transcripts)
#: peaks at about twice its size plus the ~100 MB of the imported package: about 0.6 GB at
#: this cap. JSON of many small values parses to several times its size (empty lists: ~20x).
DEFAULT_MAX_MEMBER_BYTES = 256 * 2**20
#: cap, in bytes, on a side file read for metadata only (lm-eval ``results_*.json``, HELM
#: ``run_spec.json``): such files are kilobytes to a few megabytes, so a bigger one is skipped
#: with a note rather than parsed whole (Python's ``json`` does not stream, and a file of empty
#: lists parses to about 20 times its size: 16 MiB stays near 350 MB)
SIDE_FILE_CAP = 16 * 2**20
#: bytes one parsed JSON log, member or line may take in memory, its text included: with the
#: ~100 MB of the imported package a read stays under 1 GB whatever the JSON holds
JSON_PARSE_LIMIT = 768 * 2**20
#: texts shorter than this are parsed without estimating their cost (at the worst measured
#: ratio, ~24 bytes per character, they stay under 100 MB)
_ESTIMATE_FROM = 4 * 2**20
#: a JSON string (escapes included), replaced by ``""`` when the structure is counted
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_CHUNK = 1 << 20
_ZIP_MAGIC = b"PK\x03\x04"
_ZSTD = 93  # zip compression method of Zstandard (APPNOTE 4.4.5)
#: the bytes a JSON value can start with (RFC 8259: object, array, string, number, literal)
_JSON_STARTS = frozenset(b'{["-0123456789tfn')


def check_path(path: Path) -> os.stat_result:
    """``os.stat`` of ``path``; one-line ``ValueError`` for what cannot be read.

    A missing file, a broken link and a symbolic-link loop are told apart; nothing is opened.
    """
    try:
        return os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InvalidParameterError(f"{path}: a broken symbolic link (its target "
                                        f"{os.readlink(path)!r} does not exist)") from None
        raise InvalidParameterError(f"{path}: does not exist (no such file or folder)") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InvalidParameterError(f"{path}: a symbolic link loop (the link points back to "
                                        f"itself); pass the real file") from None
        raise InvalidParameterError(f"{path}: cannot be read ({exc.strerror})") from None


def check_regular(path: Path) -> os.stat_result:
    """``os.stat`` of a regular file; ``ValueError`` for FIFOs, devices, sockets, folders."""
    info = check_path(path)
    if stat.S_ISDIR(info.st_mode):
        raise InvalidParameterError(f"{path}: is a folder; pass a file")
    if not stat.S_ISREG(info.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode) else
                "a socket" if stat.S_ISSOCK(info.st_mode) else
                "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else
                "not a regular file")
        raise InvalidParameterError(f"{path}: is {kind}, not a regular file; only regular "
                                    "files are read (a FIFO would wait, a device never ends)")
    return info


#: bytes of a text table read before the CSV parser sees it: its header must end within them
TABLE_HEAD_BYTES = 64 * 2**10


def check_text_table(path: Path, what: str, max_bytes: int) -> os.stat_result:
    """``os.stat`` of a regular file of at most ``max_bytes`` whose first line is text.

    One-line ``ValueError`` (naming ``what``, e.g. "a results CSV") for what
    :func:`check_regular` refuses (a FIFO would block the read, a device never ends), a file
    past ``max_bytes``, a NUL byte in the first :data:`TABLE_HEAD_BYTES` (binary) and a first
    line longer than that: the CSV parser holds a whole line in memory, so a 3 GB file of
    zeros once took 10-16 GB before any message. Opens only a regular file, and reads at most
    :data:`TABLE_HEAD_BYTES` of it.
    """
    info = check_regular(path)
    if info.st_size > max_bytes:
        raise InvalidParameterError(f"{path}: holds {info.st_size:,} bytes, past the cap of "
                                    f"{max_bytes:,} bytes on {what}")
    with open(path, "rb") as fh:
        start = fh.read(TABLE_HEAD_BYTES)
    nul = start.find(b"\x00")
    if nul >= 0:
        line = start.count(b"\n", 0, nul) + 1
        raise InvalidParameterError(f"{path}: is binary, not {what} (a NUL byte on line "
                                    f"{line})")
    if len(start) == TABLE_HEAD_BYTES and not any(end in start for end in (b"\n", b"\r")):
        raise InvalidParameterError(f"{path}: its first line is longer than "
                                    f"{TABLE_HEAD_BYTES // 2**10} KiB; not {what} (a header line "
                                    "of column names)")
    return info


def is_regular(path: Path) -> bool:
    """Whether ``path`` is a readable regular file (no error; for folder searches)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def head(path: Path, size: int = 4096) -> bytes:
    """The first ``size`` bytes of a regular file (empty when it cannot be read)."""
    if not is_regular(path):
        return b""
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def load_json(data, where: str, what: str):
    """``json.loads`` with one-line errors naming ``where``; deep nesting included, and JSON
    whose parse would take more than :data:`JSON_PARSE_LIMIT` bytes (:func:`parse_cost`)."""
    if isinstance(data, (bytes, bytearray)):
        data = _decode(data, where)
    if not data.strip():
        raise InvalidParameterError(f"{where}: empty file")
    if len(data) >= _ESTIMATE_FROM and (cost := parse_cost(data)) > JSON_PARSE_LIMIT:
        raise InvalidParameterError(
            f"{where}: JSON of {mib(len(data))} whose parse would take about {mib(cost)} of "
            f"memory (many small values), more than the {mib(JSON_PARSE_LIMIT)} one log may "
            f"take; expected {what}")
    try:
        return json.loads(data)
    except RecursionError:
        raise InvalidParameterError(f"{where}: JSON nested too deeply to read (past Python's "
                                    f"recursion limit); expected {what}") from None
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} "
                                    f"column {exc.colno}); expected {what}") from None
    except ValueError as exc:
        # An integer of more than 4,300 digits (Python's int_max_str_digits) is refused by
        # json itself with a message that names no file.
        raise InvalidParameterError(f"{where}: not readable JSON ({_first_line(exc)}); expected "
                                    f"{what}") from None


def parse_cost(text: str) -> int:
    """Upper estimate of the bytes ``json.loads(text)`` holds at its peak, ``text`` included.

    Python objects cost more than their JSON: an empty list is 64 bytes for its 3
    characters (``[],``), a one-key object 192 for 8, a short distinct string about 62 (all
    measured with ``tracemalloc``, CPython 3.11). The estimate charges each value 64 bytes
    (a comma), each array 64 more, each object 200, each key 100, each string 40 more, and
    twice the text's own size (the text and the strings' contents, in the text's width of
    1, 2 or 4 bytes per character). It counts the structure outside strings: first on the
    whole text (a few passes of ``str.count``, an over-estimate where strings hold commas
    and colons); only where that exceeds :data:`JSON_PARSE_LIMIT`, again with the strings
    blanked out.
    """
    rough = structure_cost(text, text)
    if rough <= JSON_PARSE_LIMIT:
        return rough
    return structure_cost(text, _STRING.sub('""', text))


def structure_cost(text: str, skeleton: str) -> int:
    """:func:`parse_cost`'s charge for ``text`` with its structure counted on ``skeleton``
    (the text itself, or the text with its strings blanked out)."""
    return (2 * sys.getsizeof(text) + 64 * (skeleton.count(",") + 1)
            + 64 * skeleton.count("[") + 200 * skeleton.count("{")
            + 100 * skeleton.count(":") + 20 * skeleton.count('"'))


def _decode(data, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(f"{where}: not UTF-8 text ({exc.reason})") from None


def read_side_json(path: Path, cap: int | None = None) -> tuple:
    """A small JSON side file read for metadata only: ``(object or None, note or None)``.

    Side files (lm-eval's ``results_*.json``, HELM's ``run_spec.json``) only name the run,
    model or seed, so a missing or unreadable one is ``None`` and the scores are read
    without it. One larger than ``cap`` bytes (default :data:`SIDE_FILE_CAP`, 16 MiB) is
    not read at all: ``None`` with a note naming the file and the cap, for the user to see.
    """
    cap = SIDE_FILE_CAP if cap is None else cap
    if not is_regular(path):
        return None, None
    try:
        size = path.stat().st_size
        if size > cap:
            return None, _side_note(path, f"is {mib(size)}", cap)
        with path.open("rb") as fh:
            # The size is checked again on what was read, in case the file grows meanwhile.
            data = fh.read(cap + 1)
    except OSError:
        return None, None
    if len(data) > cap:
        return None, _side_note(path, "grows past", cap)
    try:
        return json.loads(data.decode("utf-8")), None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, None  # metadata only: the scores do not depend on it


def _side_note(path: Path, size_words: str, cap: int) -> str:
    return (f"{path}: {size_words}, more than the {mib(cap)} read from a metadata side file; "
            f"skipped (run name, model and seed come from the file names instead)")


def too_big(path, size_words: str, cap: int) -> ValueError:
    """The one-line error for a log file (or one line of it) past the size cap."""
    return InvalidParameterError(f"{path}: {size_words} the {mib(cap)} cap on one log file or "
                                 "archive member; raise it with --max-member-mb if the file is "
                                 "trusted")


def read_json_file(path: Path, what: str, cap: int = DEFAULT_MAX_MEMBER_BYTES):
    """A whole JSON file of at most ``cap`` bytes, checked to be a regular file first.

    JSON logs are parsed whole (Python's ``json`` does not stream), so a file's size is
    capped like an archive member's: a multi-gigabyte file is one line, not an exhausted
    machine. The size is checked before reading and the read stops past the cap, in case
    the file grows or its size is not what ``stat`` says. Peak memory is that of
    :meth:`Archive.read_json`: the bytes and the text, then the text and the parse.
    """
    check_regular(path)
    try:
        size = path.stat().st_size
        if size > cap:
            raise too_big(path, f"is {mib(size)}, more than", cap)
        with path.open("rb") as fh:
            # read(n) allocates n bytes up front: the size stat gave, and only a file that
            # grew since is read on towards the cap
            data = fh.read(size + 1)
            if len(data) > size:
                data += fh.read(cap + 1 - len(data))
    except OSError as exc:
        raise InvalidParameterError(f"{path}: cannot be read ({exc.strerror})") from None
    if len(data) > cap:
        raise too_big(path, "grows past", cap)
    # the bytes are let go before parsing, as in Archive.read_json: never bytes, text and
    # the parse at once
    text = _decode(data, str(path))
    del data
    return load_json(text, str(path), what)


def mib(size: int) -> str:
    return f"{size / 2**20:g} MiB"


class Archive:
    """A zip archive whose members are read as streams under a size cap.

    Members compressed with Zstandard (method 93, which Inspect writes and Python's
    ``zipfile`` before 3.14 cannot read) are inflated with the ``zstandard`` package.
    """

    def __init__(self, path: Path, max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES,
                 what: str = "zip archive"):
        check_regular(path)
        self.path = path
        self.cap = max_member_bytes
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise InvalidParameterError(f"{path}: not a zip archive, or a truncated one ({exc}); "
                                        f"expected {what}") from None
        self.infos = {info.filename: info for info in self.zip.infolist()}
        for name in self.infos:
            if unsafe_member(name):
                self.zip.close()
                raise InvalidParameterError(f"{path}: member {name!r} has a path-traversal name "
                                            "('..', an absolute path or a drive); refused, as no "
                                            f"harness writes one; expected {what}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.zip.close()

    def names(self) -> list[str]:
        return list(self.infos)

    def _fail(self, name: str, text: str) -> ValueError:
        return InvalidParameterError(f"{self.path}: member {name}: {text}")

    def _too_big(self, name: str, size: int | None = None) -> ValueError:
        said = f"declares {mib(size)}, more than" if size is not None else "inflates past"
        return self._fail(name, f"{said} the {mib(self.cap)} cap on one member (a zip bomb?); "
                                f"raise it with --max-member-mb if the file is trusted")

    def read(self, name: str) -> bytearray:
        """The inflated bytes of member ``name``, at most the cap; CRC checked.

        Inflated into one buffer of the size the header declares (at most the cap), so the
        member is held once: a list of chunks joined at the end would hold it twice.
        """
        info = self.infos[name]
        if info.flag_bits & 0x1:
            raise self._fail(name, "is encrypted; decrypt the archive first")
        if info.file_size > self.cap:
            raise self._too_big(name, info.file_size)
        data = bytearray(info.file_size)
        total, crc = 0, 0
        with memoryview(data) as view:
            try:
                for chunk in self._stream(info):
                    end = total + len(chunk)
                    if end > self.cap:
                        raise self._too_big(name)
                    if end > info.file_size:
                        # Never hold more than the header declared: a lying bomb stops here.
                        raise self._fail(name, f"inflates past the {info.file_size} bytes its "
                                               "header declares (a zip bomb or a damaged "
                                               "archive)")
                    crc = zlib.crc32(chunk, crc)
                    view[total:end] = chunk
                    total = end
            except ValueError:
                raise
            except (zipfile.BadZipFile, EOFError, OSError, zlib.error, NotImplementedError,
                    RuntimeError) as exc:
                raise self._fail(name, f"cannot be inflated ({_first_line(exc)}); a truncated "
                                       f"or damaged archive?") from None
        if total != info.file_size or crc != info.CRC:
            raise self._fail(name, f"inflates to {total} bytes with CRC {crc:08x}, the "
                                   f"archive says {info.file_size} with {info.CRC:08x}; a "
                                   f"truncated or damaged archive")
        return data

    def read_json(self, name: str, what: str):
        """Member ``name`` parsed as JSON (:func:`load_json`), its bytes let go before parsing.

        Peak memory is the member's bytes plus its text while decoding, then the text plus
        what it parses to; never the bytes, the text and the parse at once.
        """
        where = f"{self.path}: member {name}"
        data = self.read(name)
        head_bytes = bytes(data[:64])
        start = head_bytes.lstrip(b" \t\n\r")
        if start and start[0] not in _JSON_STARTS:
            # no JSON value starts so (zeros, a binary blob): refused before it is decoded,
            # in the words json would use
            skipped = head_bytes[:len(head_bytes) - len(start)]
            line, column = skipped.count(b"\n") + 1, len(skipped.rsplit(b"\n", 1)[-1]) + 1
            raise InvalidParameterError(f"{where}: not valid JSON (Expecting value at line "
                                        f"{line} column {column}); expected {what}")
        text = _decode(data, where)
        del data
        return load_json(text, where, what)

    def _stream(self, info: zipfile.ZipInfo):
        if info.compress_type == _ZSTD:
            yield from self._zstd_stream(info)
            return
        with self.zip.open(info) as member:
            # zipfile checks the CRC itself once the end is read; a bad one is BadZipFile.
            while chunk := member.read(_CHUNK):
                yield chunk

    def _zstd_stream(self, info: zipfile.ZipInfo):
        try:
            import zstandard
        except ImportError:
            raise self._fail(info.filename, "is Zstandard-compressed (as Inspect writes), "
                                            "which needs the zstandard package: pip install "
                                            "zstandard") from None
        with open(self.path, "rb") as fh:
            fh.seek(info.header_offset)
            local = fh.read(30)
            if len(local) < 30 or not local.startswith(_ZIP_MAGIC):
                raise self._fail(info.filename, "its local header is missing; a damaged archive")
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            fh.seek(info.header_offset + 30 + name_len + extra_len)
            raw = _Limited(fh, info.compress_size)
            reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
            try:
                while chunk := reader.read(_CHUNK):
                    yield chunk
            except zstandard.ZstdError as exc:
                raise zlib.error(str(exc)) from None
            if raw.left:
                raise zlib.error(f"{raw.left} compressed bytes left after the end of the data")


class _Limited:
    """The next ``size`` bytes of ``fh`` as a file for the decompressor."""

    def __init__(self, fh, size: int):
        self.fh, self.left = fh, size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.fh.read(n)
        self.left -= len(data)
        return data


def unsafe_member(name: str) -> bool:
    """Whether a zip member's name climbs out of the archive (``..``, ``/x``, ``C:``, ``\\``).

    Nothing here extracts members, but such a name is never written by a harness: a
    ``samples/../../x.json`` would otherwise be read as a sample with id ``../../x``.
    """
    parts = name.replace("\\", "/").split("/")
    return (name.startswith(("/", "\\")) or ".." in parts
            or re.match(r"^[A-Za-z]:", name) is not None)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
