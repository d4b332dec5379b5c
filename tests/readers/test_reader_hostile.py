"""Hostile input to every reader: deep JSON, zip bombs, FIFOs, symbolic-link loops.

Each must end in a one-line ``ValueError`` naming the file, never a ``RecursionError``, a
hang or gigabytes of memory.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
import tracemalloc
import zipfile
import zlib
from contextlib import contextmanager

import pytest

from evalcal_core import readers

DEEP = 200_000  # far past Python's recursion limit (1,000) and json's C stack guard


class _Peak:
    peak = 0


@contextmanager
def traced():
    """The peak bytes Python allocates in the block (tracemalloc: deterministic), as
    ``.peak`` once the block is left."""
    memory = _Peak()
    tracemalloc.start()
    try:
        yield memory
    finally:
        memory.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


@contextmanager
def deadline(seconds: int):
    """Fail instead of hanging (a blocked ``open`` of a FIFO is interrupted by SIGALRM)."""
    def expired(*_):
        raise TimeoutError(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def zstd_zip(path, members: dict, declared: dict | None = None):
    """A zip whose members are Zstandard-compressed (method 93), as inspect-ai writes them.

    ``declared`` overrides the uncompressed size a member's headers state (a lying bomb).
    Written by hand from APPNOTE.TXT 4.3.7 (local header), 4.3.12 (central directory) and
    4.3.16 (end record), because ``zipfile`` cannot write method 93.
    """
    zstandard = pytest.importorskip("zstandard")
    declared = declared or {}
    local, central = bytearray(), bytearray()
    for name, data in members.items():
        packed = zstandard.ZstdCompressor(level=3).compress(data)
        crc, size = zlib.crc32(data), declared.get(name, len(data))
        raw = name.encode()
        offset = len(local)
        local += struct.pack("<4s5H3L2H", b"PK\x03\x04", 63, 0, 93, 0, 0, crc, len(packed),
                             size, len(raw), 0) + raw + packed
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 63, 63, 0, 93, 0, 0, crc,
                               len(packed), size, len(raw), 0, 0, 0, 0, 0, offset) + raw
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members),
                      len(central), len(local), 0)
    path.write_bytes(bytes(local + central + end))
    return path


def _sample(qid, epoch, value="C"):
    return {"id": qid, "epoch": epoch, "scores": {"match": {"value": value}}}


HEADER = json.dumps({"version": 2, "status": "success",
                     "eval": {"task": "t", "model": "m", "config": {"epochs": 1}}}).encode()


def _one_line(info, path):
    message = str(info.value)
    assert "\n" not in message and str(path) in message, message
    return message


# --- zstd members (inspect-ai 0.3.285) ---------------------------------------------------------

def test_zstd_members_are_read(tmp_path):
    path = zstd_zip(tmp_path / "z.eval", {
        "header.json": HEADER,
        "samples/a_epoch_1.json": json.dumps(_sample("a", 1, "C")).encode(),
        "samples/b_epoch_1.json": json.dumps(_sample("b", 1, "I")).encode()})
    if "zipfile_zstd" not in sys.modules:   # inspect-ai's dependency patches zipfile
        with pytest.raises(NotImplementedError):  # what Python's zipfile does (before 3.14)
            zipfile.ZipFile(path).read("header.json")
    log = readers.read_log(path)
    assert log.questions == ("a", "b") and log.scores.tolist() == [[1.0, 0.0]]


def test_zip_bomb_declared_size_is_refused_before_reading(tmp_path):
    path = zstd_zip(tmp_path / "bomb.eval", {"header.json": HEADER},
                    declared={"header.json": 3 * 2**30})
    with pytest.raises(ValueError, match=r"header\.json: declares 3072 MiB, more than the 256 "
                                         r"MiB cap .*--max-member-mb") as info:
        readers.read_log(path)
    _one_line(info, path)


@pytest.mark.parametrize("method", ["zstd", "deflate"])
def test_zip_bomb_that_lies_is_stopped_at_the_cap(tmp_path, method):
    """A member declaring 1 KiB that inflates to 64 MiB: refused after the declared size."""
    big = b"\0" * (64 * 2**20)
    path = tmp_path / "bomb.eval"
    if method == "zstd":
        zstd_zip(path, {"header.json": big}, declared={"header.json": 1024})
    else:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("header.json", big)
        data = bytearray(path.read_bytes())
        for magic, at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # uncompressed size
            start = data.index(magic)
            data[start + at:start + at + 4] = struct.pack("<L", 1024)
        path.write_bytes(bytes(data))
    del big
    with traced() as memory:
        with pytest.raises(ValueError) as info:
            readers.read_log(path, max_member_bytes=2**20)
    peak = memory.peak
    message = _one_line(info, path)
    assert "1024 bytes its header declares" in message or "Bad CRC" in message
    assert peak < 8 * 2**20  # never holds the 64 MiB


def test_max_member_bytes_can_be_raised(tmp_path):
    members = {"header.json": HEADER,
               "samples/a_epoch_1.json": json.dumps(_sample("a", 1)).encode()}
    path = zstd_zip(tmp_path / "x.eval", members)
    with pytest.raises(ValueError, match="cap on one member"):
        readers.read_log(path, max_member_bytes=50)
    assert readers.read_log(path, max_member_bytes=2**20).n == 1
    with pytest.raises(ValueError, match="--max-member-mb"):
        readers.read_log(path, max_member_bytes=0)


def test_corrupt_zstd_member_is_one_line(tmp_path):
    path = zstd_zip(tmp_path / "x.eval", {"header.json": HEADER})
    data = bytearray(path.read_bytes())
    data[40:48] = b"\xff" * 8  # inside the compressed header.json
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="header.json") as info:
        readers.read_log(path)
    _one_line(info, path)


# --- deeply nested JSON ------------------------------------------------------------------------

def _deep():
    return "[" * DEEP + "]" * DEEP


def test_deep_json_in_an_lm_eval_line(tmp_path):
    path = tmp_path / "samples_t_2024-01-01T00-00-00.000001.jsonl"
    path.write_text('{"doc_id": 0, "metrics": ["acc"], "acc": 1}\n'
                    '{"doc_id": 1, "doc": ' + _deep() + ', "acc": 1}\n')
    with pytest.raises(ValueError, match="line 2: JSON nested too deeply") as info:
        readers.read_log(path)
    _one_line(info, path)


def test_deep_json_in_an_inspect_member(tmp_path):
    path = zstd_zip(tmp_path / "x.eval", {
        "header.json": HEADER, "samples/a_epoch_1.json": _deep().encode()})
    with pytest.raises(ValueError, match=r"member samples/a_epoch_1\.json: JSON nested too "
                                         r"deeply") as info:
        readers.read_log(path)
    _one_line(info, path)


@pytest.mark.parametrize("name, fmt", [("per_instance_stats.json", "helm"),
                                       ("log.json", "inspect-json")])
def test_deep_json_file(tmp_path, name, fmt):
    path = tmp_path / name
    path.write_text(_deep())
    with pytest.raises(ValueError, match="JSON nested too deeply") as info:
        readers.read_log(path, fmt=fmt)
    _one_line(info, path)


# --- huge files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name, fmt", [("per_instance_stats.json", "helm"),
                                       ("log.json", "inspect-json")])
def test_json_log_past_the_cap_is_refused_before_reading(tmp_path, name, fmt):
    """A 4 GiB (sparse) JSON log: one line naming the size and the option, no read."""
    path = tmp_path / name
    path.write_bytes(b"[" if fmt == "helm" else HEADER[:-1])
    os.truncate(path, 4 * 2**30)
    with traced() as memory:
        with pytest.raises(ValueError, match=r"is 4096 MiB, more than the 256 MiB cap on one "
                                             r"log file .*--max-member-mb") as info:
            readers.read_log(path, fmt=fmt)
    peak = memory.peak
    _one_line(info, path)
    assert peak < 2**20


def test_json_log_cap_follows_the_option(tmp_path):
    samples = [_sample("a", 1), _sample("b", 1)]
    log = json.loads(HEADER) | {"samples": samples}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    with pytest.raises(ValueError, match="cap on one log file"):
        readers.read_log(path, fmt="inspect-json", max_member_bytes=path.stat().st_size - 1)
    assert readers.read_log(path, fmt="inspect-json",
                            max_member_bytes=path.stat().st_size).n == 2


@pytest.mark.parametrize("kind", ["inspect-json", "eval member"])
def test_json_text_is_held_at_most_twice(tmp_path, kind):
    """What makes the cap bound memory (about 2x the cap): a JSON log or ``.eval`` member of
    one 16 MiB string is held as bytes and text, then as text and its parse, never all three
    (3x). tracemalloc counts the allocations: deterministic."""
    size = 16 * 2**20
    text = b'{"x": "' + b"a" * (size - 9) + b'"}'
    if kind == "eval member":
        path = zstd_zip(tmp_path / "big.eval", {"header.json": text})
    else:
        path = tmp_path / "log.json"
        path.write_bytes(text)
    del text
    with traced() as memory:
        with pytest.raises(ValueError, match="field 'eval' is missing"):  # parsed, then refused
            readers.read_log(path, fmt=kind if kind == "inspect-json" else None,
                             max_member_bytes=size)
    peak = memory.peak
    assert peak < 2.25 * size


def test_jsonl_line_past_the_cap_is_refused_while_streaming(tmp_path):
    """A JSONL file with no line break is never read whole: the read stops at the cap."""
    path = tmp_path / "samples_t_2024-01-01T00-00-00.000001.jsonl"
    path.write_text('{"doc_id": 0, "metrics": ["acc"], "acc": 1}\n')
    with open(path, "ab") as fh:
        fh.truncate(64 * 2**20)  # 64 MiB of NUL characters on line 2
    with traced() as memory:
        with pytest.raises(ValueError, match=r"line 2 runs past the 1 MiB cap") as info:
            readers.read_log(path, max_member_bytes=2**20)
    peak = memory.peak
    _one_line(info, path)
    assert peak < 16 * 2**20  # a few times the cap, never the 64 MiB


@pytest.mark.parametrize("content, words", [
    ("zeros", r"holds 5,368,709,120 bytes, past the cap of 2,147,483,648 bytes on a tidy CSV"),
    ("nul", r"is binary, not a tidy CSV log \(a NUL byte on line 2\)"),
    ("wide", r"its first line is longer than 64 KiB; not a tidy CSV log"),
])
def test_tidy_csv_log_is_checked_before_the_parser(tmp_path, content, words):
    """A tidy CSV given as a log (``--arm NAME=x.csv``) gets the results CSV's checks before
    pandas sees it: a sparse 5 GiB file of zeros once took 1.5 GB and ended in "out of
    memory", a header of 200,000 columns ran for minutes (the hostile run of issue 47)."""
    path = tmp_path / "arm.csv"
    if content == "zeros":
        path.write_bytes(b"")
        os.truncate(path, 5 * 2**30)
    elif content == "nul":
        path.write_bytes(b"question,score\n\x00\x00,1\n")
    else:
        path.write_text(",".join(f"c{i}" for i in range(200_000)) + "\nq0,1\n")
    with traced() as memory:
        with pytest.raises(ValueError, match=words) as info:
            readers.read_log(path, fmt="csv")
    peak = memory.peak
    _one_line(info, path)
    assert peak < 2**20


# --- FIFOs, links, folders ----------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("name", ["samples_t_2024-01-01T00-00-00.000001.jsonl", "x.eval",
                                  "per_instance_stats.json", "a.csv"])
def test_fifo_is_refused_without_opening(tmp_path, name):
    path = tmp_path / name
    os.mkfifo(path)
    with deadline(10), pytest.raises(ValueError, match="is a FIFO") as info:
        readers.read_log(path)
    _one_line(info, path)
    for fmt in readers.names():
        with deadline(10), pytest.raises(ValueError, match="FIFO"):
            readers.read_log(path, fmt=fmt)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_fifo_in_a_folder_is_skipped(tmp_path):
    os.mkfifo(tmp_path / "samples_t_2024-01-01T00-00-00.000001.jsonl")
    with deadline(10), pytest.raises(ValueError, match="found no harness logs"):
        readers.read_log(tmp_path)


def test_symlink_loop_is_named(tmp_path):
    loop = tmp_path / "loop.jsonl"
    os.symlink(loop, loop)
    with pytest.raises(ValueError, match="symbolic link loop") as info:
        readers.read_log(loop)
    assert "does not exist" not in _one_line(info, loop)


def test_broken_symlink_is_named(tmp_path):
    link = tmp_path / "gone.eval"
    os.symlink(tmp_path / "nowhere.eval", link)
    with pytest.raises(ValueError, match="broken symbolic link"):
        readers.read_log(link)


def test_results_csv_fifo_is_refused(tmp_path):
    from evalcal_core.results_io import read_results_arms

    path = tmp_path / "r.csv"
    os.mkfifo(path)
    with deadline(10), pytest.raises(ValueError, match="is a FIFO"):
        read_results_arms(path)


def test_results_csv_and_pilot_name_a_link_loop(tmp_path):
    from evalcal_core.results_io import read_results_arms
    from sim.pilot import read_pilot

    loop = tmp_path / "loop.csv"
    os.symlink(loop, loop)
    with pytest.raises(ValueError, match="symbolic link loop"):
        read_results_arms(loop)
    with pytest.raises(ValueError, match="symbolic link loop"):
        read_pilot(loop)


# --- JSON whose parse dwarfs its text -------------------------------------------------------

_SHAPES = {
    "empty lists": lambda n: "[" + ",".join(["[]"] * n) + "]",
    "zeros": lambda n: "[" + ",".join(["0"] * n) + "]",
    "empty objects": lambda n: "[" + ",".join(["{}"] * n) + "]",
    "one-key objects": lambda n: "[" + ",".join(['{"a":0}'] * n) + "]",
    "distinct keys": lambda n: "{" + ",".join(f'"{i}":0' for i in range(n)) + "}",
    "distinct key-values": lambda n: "{" + ",".join(f'"{i}":"{i}"' for i in range(n)) + "}",
    "distinct strings": lambda n: json.dumps([str(i) for i in range(n)]),
    "distinct floats": lambda n: "[" + ",".join(f"{i}.5" for i in range(n)) + "]",
    "wide characters": lambda n: json.dumps(["\U0001F600" * 10 + str(i) for i in range(n)],
                                            ensure_ascii=False),
    "escaped characters": lambda n: json.dumps(["\U0001F600" * 3 + str(i) for i in range(n)]),
    "logged text": lambda n: json.dumps([{"input": "Hello, world: a prompt " * 20, "id": i}
                                         for i in range(n // 10)]),
}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_parse_cost_bounds_what_json_allocates(shape):
    """``parse_cost`` is an upper bound of the text's size plus the peak ``json.loads``
    allocates (tracemalloc, deterministic), on the shapes that cost the most per
    character; both passes (the rough count and the one with strings blanked out)."""
    from evalcal_core.readers import _files

    text = _SHAPES[shape](50_000)
    with traced() as memory:
        parsed = json.loads(text)
    peak = memory.peak
    del parsed
    held = peak + sys.getsizeof(text)
    assert _files.parse_cost(text) >= held
    assert _files.structure_cost(text, text) >= held
    assert _files.structure_cost(text, _files._STRING.sub('""', text)) >= held


@pytest.mark.parametrize("kind", ["inspect-json", "eval member", "lm-eval line"])
def test_json_of_tiny_values_is_refused_before_parsing(tmp_path, kind):
    """40 MiB of empty lists would parse to ~0.9 GB (22 bytes per character): refused in one
    line before ``json.loads``, holding little more than the text."""
    text = ("[" + "[]," * (40 * 2**20 // 3) + "[]]").encode()
    if kind == "eval member":
        path = zstd_zip(tmp_path / "x.eval", {"header.json": HEADER,
                                              "samples/a_epoch_1.json": text})
    elif kind == "lm-eval line":
        path = tmp_path / "samples_t_2024-01-01T00-00-00.000001.jsonl"
        path.write_bytes(b'{"doc_id": 0, "metrics": ["acc"], "acc": 1, "doc": ' + text + b"}\n")
    else:
        path = tmp_path / "log.json"
        path.write_bytes(text)
    size = len(text)
    del text
    with traced() as memory:
        with pytest.raises(ValueError, match=r"whose parse would take about .* MiB of memory "
                                             r"\(many small values\), more than the 768 MiB"
                           ) as info:
            readers.read_log(path, fmt=kind if kind == "inspect-json" else None)
    peak = memory.peak
    _one_line(info, path)
    assert peak < 3.5 * size
