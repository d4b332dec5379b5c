"""Results and pilot files that are no table are refused in one line, not waited on and not
read whole (issue 47 item 4).

A FIFO given as a pilot blocked the command (the CSV parser opened it); a 3 GB file of zeros
took 10 GB (``evaluate``) to 16 GB (``plan --from-pilot``) before any message, since the
parser holds a whole line. Each command that reads a results CSV or a pilot is given: a FIFO
named like a CSV, ``/dev/zero``, a sparse file past the size cap, a binary file and a file
whose first line never ends; each must answer within seconds, exit 2, one line naming the
file.
"""

from __future__ import annotations

import contextlib
import os
import signal

import pytest
from in_process import run_in_process

import evalcal_cli
from evalcal_core.readers._files import TABLE_HEAD_BYTES
from evalcal_core.results_io import MAX_BYTES


class _Hung(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: float):
    """Fail instead of hanging: a blocked FIFO open would otherwise stall the suite."""
    def alarm(signum, frame):
        raise _Hung(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _fifo(tmp_path):
    path = tmp_path / "pilot.csv"
    os.mkfifo(path)
    return path, "FIFO"


def _device(tmp_path):
    return "/dev/zero", "a device"


def _oversized(tmp_path):
    path = tmp_path / "huge.csv"
    with open(path, "wb") as fh:
        fh.truncate(MAX_BYTES + 1)  # sparse: no disk is used
    return path, f"past the cap of {MAX_BYTES:,} bytes"


def _binary(tmp_path):
    path = tmp_path / "zeros.csv"
    path.write_bytes(b"seed,arm,metric\n" + bytes(2**20))
    return path, "binary, not a results CSV (a NUL byte on line 2)"


def _endless_line(tmp_path):
    path = tmp_path / "line.csv"
    path.write_bytes(b"seed" * TABLE_HEAD_BYTES)
    return path, f"first line is longer than {TABLE_HEAD_BYTES // 1024} KiB"


FILES = {"fifo": _fifo, "dev-zero": _device, "oversized": _oversized, "binary": _binary,
         "endless-line": _endless_line}
COMMANDS = {"evaluate": lambda f, out: ["evaluate", f],
            "plan": lambda f, out: ["plan", "--from-pilot", f],
            "calibrate": lambda f, out: ["calibrate", "--k", "3", "--from-pilot", f,
                                         "--out", out]}


@pytest.mark.parametrize("kind", FILES)
@pytest.mark.parametrize("command", COMMANDS)
def test_refused_in_one_line_within_seconds(command, kind, tmp_path):
    path, words = FILES[kind](tmp_path)
    out = tmp_path / "out"
    with _deadline(30.0):
        got = run_in_process(evalcal_cli.main, "evalcal", *COMMANDS[command](path, out))
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and len(lines) == 1, got.stderr[-800:]
    assert lines[0].startswith(f"evalcal {command}: error: {path}") and words in lines[0], \
        lines[0]
    assert not out.exists()


def test_a_table_whose_header_fills_the_head_is_still_read(tmp_path):
    """Consistency check of the rule's edge: a header line that ends within the first
    64 KiB is a CSV like any other (the usual error for its unknown columns)."""
    path = tmp_path / "wide.csv"
    path.write_text("seed,arm,metric," + "x" * (TABLE_HEAD_BYTES - 100) + "\n0,a,1,2\n")
    got = run_in_process(evalcal_cli.main, "evalcal", "evaluate", path)
    assert got.returncode == 2 and "first line" not in got.stderr
    assert "binary" not in got.stderr
