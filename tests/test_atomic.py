"""The atomic writer: whole files or none, and a full disk named by the file asked for."""

from __future__ import annotations

import errno
import os

import pytest

from evalcal_core import atomic
from evalcal_core.cli import run_main


def test_a_write_is_whole_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "a.csv"
    atomic.write_atomic(target, "x,y\n1,2\n")
    assert target.read_text() == "x,y\n1,2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.csv"]
    assert oct(target.stat().st_mode & 0o777) == oct(atomic.FILE_MODE)


def test_a_full_disk_names_the_target_and_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "calibration.csv"
    target.write_text("old\n")

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as write()/fsync() raise it

    monkeypatch.setattr(atomic.os, "fsync", no_space)
    with pytest.raises(OSError) as caught:
        atomic.write_atomic(target, "new\n")
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(target)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["calibration.csv"]


def test_a_full_disk_is_one_line_naming_the_file(tmp_path, monkeypatch, capsys):
    target = tmp_path / "out.csv"

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fsync", no_space)

    def main(argv):
        atomic.write_atomic(target, "data\n")

    with pytest.raises(SystemExit) as stop:
        run_main(main, "writer", [])
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2
    assert "\n" not in err and str(target) in err and "No space left" in err
