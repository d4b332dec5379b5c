"""Peak memory of reading two large lm-eval ``--log_samples`` files as a paired comparison.

Writes two samples files of about 110 MB each (``--mb``) into a temporary folder: one JSON
line per document with a long ``doc``, ``arguments`` and ``resps`` (the bulk of a real file)
and the metric values. Then, in a fresh Python process (so that only the reading is
measured), reads them with :func:`evalcal_core.readers.read_arms` and reports the peak
resident memory (``VmHWM`` of ``/proc/self/status``, else
``resource.getrusage(RUSAGE_SELF).ru_maxrss``, which on Linux also counts the parent's peak)
and the wall time, next to the peak of a process that only imports the package.

    python benchmarks/bench_log_memory.py            # two ~110 MB files
    python benchmarks/bench_log_memory.py --mb 20    # quicker
    python benchmarks/bench_log_memory.py --pad 20   # ~230,000 short documents per file
    python benchmarks/bench_log_memory.py --bomb-gb 3   # also: an Inspect .eval zip bomb

``--member-mb`` writes Inspect ``.eval`` archives whose ``header.json`` holds one JSON
string of that many MiB, an array of that many MiB of empty lists (which Python's ``json``
would parse to ~20 times its size), and that many MiB of zeros, and reports the peak memory
of reading each: under the 256 MiB default cap the string and the zeros are refused after
reading (no samples, not JSON), at about twice the member plus ~100 MB, and the empty lists
before parsing (their parse would pass the 768 MiB a log may take); past the cap, before
reading, in one line naming ``--max-member-mb``. ``--csv-rows`` writes a tidy per-question
CSV of that many rows (2 arms, 1 seed) and reports the peak memory of ``python -m
protocols.evaluate`` on it (refused in one line past
:data:`evalcal_core.results_io.MAX_ROWS` rows, read otherwise).

    python benchmarks/bench_log_memory.py --mb 0 --member-mb 250   # read: peak ~0.6 GB
    python benchmarks/bench_log_memory.py --mb 0 --member-mb 300   # refused: over the cap
    python benchmarks/bench_log_memory.py --mb 0 --csv-rows 100000000   # about 2.4 GB of disk

``--bomb-gb`` writes two ``.eval`` archives whose ``header.json`` member inflates to that
many GB of zeros (Zstandard, as inspect-ai writes them): one whose headers state the size,
one whose headers claim 1 KiB, and reports the peak memory of refusing each.
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

MEASURE = r"""
import resource, sys, time
def peak_kb():
    # VmHWM is this process's own peak; ru_maxrss also counts the parent's peak at exec.
    try:
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from evalcal_core import readers
before = peak_kb()
t0 = time.perf_counter()
arms = {"baseline": sys.argv[1], "variant": sys.argv[2]} if len(sys.argv) > 2 else None
if arms:
    scores = readers.read_arms(arms, metric="acc")
    shape = scores.scores.shape
else:
    shape = None
wall = time.perf_counter() - t0
peak = peak_kb()
print(before, peak, wall, shape)
"""


def write_samples(path: Path, megabytes: float, seed: int, pad: int = 1500) -> int:
    """An lm-eval samples file of about ``megabytes`` MB; returns the number of documents.

    ``pad`` is the length of each logged prompt string (a shorter one: more documents).
    """
    pad = "x" * pad
    target = megabytes * 1e6
    written, doc_id = 0, 0
    with path.open("w", encoding="utf-8") as fh:
        while written < target:
            acc = float((doc_id * 7 + seed) % 3 != 0)
            line = json.dumps({
                "doc_id": doc_id,
                "doc": {"question": f"{doc_id} {pad}", "choices": ["a", "b", "c", "d"]},
                "target": "0",
                "arguments": {f"gen_args_{i}": {"arg_0": pad, "arg_1": f" {c}"}
                              for i, c in enumerate("abc")},
                "resps": [[[str(-0.5 * i), "False"]] for i in range(3)],
                "filtered_resps": [[str(-0.5 * i), "False"] for i in range(3)],
                "filter": "none", "metrics": ["acc", "acc_norm"],
                "doc_hash": "d" * 64, "prompt_hash": "p" * 64, "target_hash": "t" * 64,
                "acc": acc, "acc_norm": acc}) + "\n"
            fh.write(line)
            written += len(line)
            doc_id += 1
    return doc_id


BOMB = r"""
import resource, sys
def peak_kb():
    # VmHWM is this process's own peak; ru_maxrss also counts the parent's peak at exec.
    try:
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from evalcal_core import readers
try:
    readers.read_log(sys.argv[1])
    print("read!")
except ValueError as exc:
    print(peak_kb(), str(exc)[-120:])
"""


def write_zstd_zip(path: Path, data: bytes, crc: int, stated: int) -> None:
    """A zip holding one Zstandard-compressed (method 93) member ``header.json``: ``data``
    compressed, ``crc`` of the content, ``stated`` its declared uncompressed size."""
    name = b"header.json"
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 63, 0, 93, 0, 0, crc, len(data), stated,
                        len(name), 0) + name + data
    central = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 63, 63, 0, 93, 0, 0, crc, len(data),
                          stated, len(name), 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local), 0)
    path.write_bytes(local + central + end)


def write_bomb(path: Path, gigabytes: float, declared: int | None,
               size: int | None = None) -> None:
    """A zip with one Zstandard member (method 93) of ``gigabytes`` GB (or ``size`` bytes)
    of zeros."""
    import zstandard

    size = int(gigabytes * 1e9) if size is None else size
    chunk = b"\0" * 2**26
    compressor, crc, packed, left = zstandard.ZstdCompressor().compressobj(), 0, [], size
    while left:
        part = chunk[:min(left, len(chunk))]
        crc, left = zlib.crc32(part, crc), left - len(part)
        packed.append(compressor.compress(part))
    packed.append(compressor.flush())
    stated = size if declared is None else declared
    # ZIP64 would be needed past 4 GiB; the 32-bit size field saturates here.
    write_zstd_zip(path, b"".join(packed), crc, min(stated, 0xFFFFFFFE))


#: the ``header.json`` members ``--member-mb`` reads: (prefix, repeated filler, suffix)
MEMBER_KINDS = {
    "one JSON string": (b'{"x": "', b"a", b'"}'),
    "empty lists": (b"[", b"[],", b"[]]"),
}


def write_json_member(path: Path, mebibytes: float, kind: str) -> None:
    """An ``.eval`` whose ``header.json`` of about ``mebibytes`` MiB is one JSON string
    (``{"x": "aaa…"}``), an array of empty lists, or zeros (``kind``)."""
    size = int(mebibytes * 2**20)
    if kind == "zeros":
        write_bomb(path, 0, None, size=size)
        return
    prefix, filler, suffix = MEMBER_KINDS[kind]
    repeats = (size - len(prefix) - len(suffix)) // len(filler)
    body = filler * (2**26 // len(filler))
    import zstandard

    compressor, crc, packed = zstandard.ZstdCompressor().compressobj(), zlib.crc32(prefix), []
    packed.append(compressor.compress(prefix))
    left = repeats * len(filler)
    while left:
        part = body[:min(left, len(body))]
        crc, left = zlib.crc32(part, crc), left - len(part)
        packed.append(compressor.compress(part))
    crc = zlib.crc32(suffix, crc)
    packed.append(compressor.compress(suffix))
    packed.append(compressor.flush())
    write_zstd_zip(path, b"".join(packed), crc, len(prefix) + repeats * len(filler)
                   + len(suffix))


def write_tidy(path: Path, rows: int) -> None:
    """A per-question tidy CSV: 2 arms, seed 0, ``rows // 2`` questions, 0/1 scores."""
    import numpy as np

    half, block = rows // 2, 1 << 20
    rng = np.random.default_rng(0)
    with path.open("w") as fh:
        fh.write("seed,arm,question,score\n")
        for arm in ("baseline", "variant"):
            for start in range(0, half, block):
                scores = (rng.random(min(block, half - start)) < 0.7).astype(int)
                fh.write("".join(f"0,{arm},q{start + i},{v}\n" for i, v in enumerate(scores)))


def peak_of(command: list) -> tuple[float, str]:
    """Peak resident memory (MB, ``/usr/bin/time -v``, else ru_maxrss of the children) of a
    command, and the last line it printed."""
    import resource

    timer = ["/usr/bin/time", "-v"] if Path("/usr/bin/time").exists() else []
    done = subprocess.run(timer + command, capture_output=True, text=True)
    # GNU time writes its report after the command's own stderr
    own, _, report = done.stderr.partition("\tCommand being timed")
    said = [line for line in (done.stdout + own).strip().splitlines()
            if not line.startswith("Command exited with non-zero status")]
    if timer:
        kb = next(int(line.split()[-1]) for line in report.splitlines()
                  if "Maximum resident" in line)
    else:
        kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return kb / 1024, (said[-1] if said else "")[-160:]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=110.0,
                        help="size of each file, MB (110; 0: skip the samples files)")
    parser.add_argument("--pad", type=int, default=1500,
                        help="characters of each logged prompt (1500); smaller: more documents")
    parser.add_argument("--bomb-gb", type=float, default=0.0,
                        help="also time refusing a zip bomb of this many GB (0: skip)")
    parser.add_argument("--member-mb", type=float, default=0.0,
                        help="also read an .eval member of this many MiB (0: skip)")
    parser.add_argument("--csv-rows", type=int, default=0,
                        help="also evaluate a tidy CSV of this many rows (0: skip)")
    args = parser.parse_args(argv)
    if args.member_mb:
        with tempfile.TemporaryDirectory() as tmp:
            for label in (*MEMBER_KINDS, "zeros"):
                path = Path(tmp) / "member.eval"
                write_json_member(path, args.member_mb, label)
                peak, said = peak_of([sys.executable, "-c", BOMB, str(path)])
                print(f".eval member of {args.member_mb:g} MiB ({label}): peak RSS {peak:.0f} MB:"
                      f" {said}")
    if args.csv_rows:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "tidy.csv"
            write_tidy(path, args.csv_rows)
            size = path.stat().st_size / 1e9
            peak, said = peak_of([sys.executable, "-m", "protocols.evaluate", str(path)])
            print(f"tidy CSV of {args.csv_rows:,} rows ({size:.2f} GB): evaluate peak RSS "
                  f"{peak:.0f} MB: {said}")
    if args.bomb_gb:
        with tempfile.TemporaryDirectory() as tmp:
            for label, declared in (("size stated", None), ("claims 1 KiB", 1024)):
                path = Path(tmp) / "bomb.eval"
                write_bomb(path, args.bomb_gb, declared)
                out = subprocess.run([sys.executable, "-c", BOMB, str(path)], check=True,
                                     capture_output=True, text=True).stdout.split(maxsplit=1)
                print(f"zip bomb, {args.bomb_gb:g} GB member ({label}, archive "
                      f"{path.stat().st_size / 1e3:.0f} kB): refused with peak RSS "
                      f"{int(out[0]) / 1024:.0f} MB: ...{out[1].strip()}")
    if args.mb <= 0:
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for arm, seed in (("base", 0), ("var", 1)):
            folder = Path(tmp) / arm
            folder.mkdir()
            path = folder / "samples_bench_2024-01-01T00-00-00.000001.jsonl"
            docs = write_samples(path, args.mb, seed, args.pad)
            paths.append(str(path))
        sizes = [Path(p).stat().st_size / 1e6 for p in paths]
        idle = subprocess.run([sys.executable, "-c", MEASURE], check=True, capture_output=True,
                              text=True).stdout.split()
        out = subprocess.run([sys.executable, "-c", MEASURE, *paths], check=True,
                             capture_output=True, text=True).stdout.split(maxsplit=3)
    peak_mb, idle_mb = int(out[1]) / 1024, int(idle[1]) / 1024
    print(f"two lm-eval samples files of {sizes[0]:.0f} MB and {sizes[1]:.0f} MB "
          f"({docs} documents each, metric acc of acc/acc_norm)")
    print(f"read_arms: {float(out[2]):.1f} s, scores {out[3]}")
    print(f"peak RSS {peak_mb:.0f} MB (a process that only imports evalcal_core.readers: "
          f"{idle_mb:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
