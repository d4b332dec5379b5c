"""An output folder is whole or marked incomplete, never a silent mix of two runs.

:func:`evalcal_core.outdir.run_outputs` marks ``OUT/INCOMPLETE`` from the lock until every
output is written. The unit tests check the context manager; the kill tests run a command
into the complete output of an earlier run with other settings, ``SIGKILL`` it at several
points (when the marker appears, when the first output is replaced, at fractions of a full
run's duration) and check that the folder is then either the earlier run's output byte for
byte, the new run's complete output, or marked. A consistency check only: the reference
outputs are the commands' own complete runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests_paths import FIXTURE_POOL

from evalcal_core.outdir import (
    MARKER_NAME,
    MARKER_TEXT,
    check_complete,
    incomplete_reason,
    locked_out,
    run_outputs,
)

# --------------------------------------------------------------------------------------------
# The context manager


def test_marker_is_there_during_the_run_and_gone_after(tmp_path):
    out = tmp_path / "out"
    with run_outputs(out, "python -m demo") as outputs:
        marker = out / MARKER_NAME
        lines = marker.read_text().splitlines()
        assert len(lines) == 1
        assert lines[0].startswith("python -m demo started ") and MARKER_TEXT in lines[0]
        (outputs.path / "a.csv").write_text("1\n")
        outputs.wrote("a.csv")
    assert not marker.exists()
    assert (out / "a.csv").read_text() == "1\n"
    assert outputs.written == ["a.csv"]


def test_an_exception_keeps_the_marker_and_the_stale_files(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.csv").write_text("old\n")
    with pytest.raises(RuntimeError, match="boom"), \
            run_outputs(out, "python -m demo", known=("old.csv", "a.csv")) as outputs:
        (outputs.path / "a.csv").write_text("new\n")
        outputs.wrote("a.csv")
        raise RuntimeError("boom")
    assert "python -m demo" in incomplete_reason(out)
    assert (out / "old.csv").exists()  # the marker, not a half cleanup, says what happened


def test_stale_outputs_are_removed_before_the_marker(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    for name in ("a.csv", "b.csv", "notes.txt"):
        (out / name).write_text("earlier\n")
    with run_outputs(out, "python -m demo", known=("a.csv", "b.csv")) as outputs:
        (outputs.path / "a.csv").write_text("new\n")
        outputs.wrote("a.csv")
    assert outputs.removed == ["b.csv"]
    assert sorted(p.name for p in out.iterdir()) == [".lock", "a.csv", "notes.txt"]


def test_a_run_that_finishes_clears_an_earlier_runs_marker(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt), run_outputs(out, "python -m demo"):
        raise KeyboardInterrupt
    assert incomplete_reason(out) is not None
    with run_outputs(out, "python -m demo"):
        pass
    assert incomplete_reason(out) is None


def test_a_refused_run_leaves_the_folder_alone(tmp_path):
    """A second run is refused at the lock, before it writes its marker."""
    out = tmp_path / "out"
    with run_outputs(out, "python -m first"):
        before = (out / MARKER_NAME).read_text()
        with pytest.raises(ValueError, match="another run is writing"), \
                run_outputs(out, "python -m second"):
            pass  # pragma: no cover
        assert (out / MARKER_NAME).read_text() == before
    assert not (out / MARKER_NAME).exists()


def test_a_file_as_out_is_refused_before_any_marker(tmp_path):
    target = tmp_path / "results"
    target.write_text("x\n")
    with pytest.raises(ValueError, match="must be a folder"), run_outputs(target, "demo"):
        pass  # pragma: no cover
    assert target.read_text() == "x\n"


def test_a_folder_lock_leaves_no_file_and_refuses_a_second_run(tmp_path):
    """``lock_file=False`` (a device's $OUT, whose files are counted): the folder's own
    descriptor is locked, nothing is created in it, and the lock ends with the block."""
    out = tmp_path / "out"
    with locked_out(out, "--out", lock_file=False):
        assert list(out.iterdir()) == []
        with pytest.raises(ValueError, match="another run is writing to"), \
                locked_out(out, "--out", lock_file=False):
            pass  # pragma: no cover
    with locked_out(out, "--out", lock_file=False):
        pass
    assert list(out.iterdir()) == []


def test_readers_refuse_a_marked_folder_in_one_line(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "pilot.csv").write_text("seed,arm,score\n")
    assert check_complete(out / "pilot.csv", "--from-pilot") == out / "pilot.csv"
    (out / MARKER_NAME).write_text(f"python -m demo started then: {MARKER_TEXT}\n")
    for path in (out, out / "pilot.csv"):
        with pytest.raises(ValueError, match=r"'--from-pilot' folder .* is marked incomplete "
                                             r"\(python -m demo started then") as info:
            check_complete(path, "--from-pilot")
        assert "\n" not in str(info.value)


def test_calibrate_refuses_a_pilot_in_a_marked_folder(tmp_path, capsys):
    from evalcal_core.cli import call_main
    from sim.calibrate import main

    pilot = tmp_path / "runs" / "pilot.csv"
    pilot.parent.mkdir()
    pilot.write_text("seed,arm,score\n0,baseline,0.9\n0,variant,0.91\n")
    (pilot.parent / MARKER_NAME).write_text(f"demo: {MARKER_TEXT}\n")
    code = call_main(main, "python -m sim.calibrate",
                     ["--k", "3", "--from-pilot", str(pilot), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "is marked incomplete" in err[0], err
    assert not (tmp_path / "o").exists()  # refused before the output folder was made


# --------------------------------------------------------------------------------------------
# Kill tests


def _outputs(folder: Path) -> dict[str, bytes]:
    """The folder's output files by relative name, with the ``--out`` value in
    ``command.json`` replaced (the only place a run names its folder: a copied folder keeps
    the original's). Left out: the lock, hidden temporary files of an interrupted atomic
    write, the marker and the cell cache."""
    files = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if (not path.is_file() or rel.parts[0] == "cells"
                or any(part.startswith(".") for part in rel.parts) or rel.name == MARKER_NAME):
            continue
        data = path.read_bytes()
        if rel.name == "command.json":
            argv = json.loads(data)["argv"]
            argv[argv.index("--out") + 1] = "OUT"
            data = json.dumps(argv).encode()
        files[str(rel)] = data
    return files


def _command(module: str, argv, out: Path) -> list[str]:
    return [sys.executable, "-m", module, *argv, "--out", str(out)]


def _run(module: str, argv, out: Path) -> float:
    """Run the command to completion; its duration in seconds."""
    t0 = time.perf_counter()
    done = subprocess.run(_command(module, argv, out), cwd=out.parent, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - t0


def _changed(folder: Path, first: dict) -> bool:
    try:
        return _outputs(folder) != first
    except (FileNotFoundError, json.JSONDecodeError):  # caught between two writes
        return True


def _kill_when(module, argv, work: Path, when, deadline_s: float = 120.0) -> None:
    """Start the command into ``work`` and ``SIGKILL`` its process group as soon as
    ``when()`` is true (or when it has exited)."""
    proc = subprocess.Popen(_command(module, argv, work), cwd=work.parent,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    t_end = time.monotonic() + deadline_s
    try:
        while proc.poll() is None and not when() and time.monotonic() < t_end:
            time.sleep(0.001)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _trigger(point: str, delay, work: Path, first: dict):
    """When to kill: the marker appears, an output differs from the first run's, or
    ``delay`` seconds have passed."""
    start = time.monotonic()
    if point == "marker":
        return lambda: (work / MARKER_NAME).exists()
    if delay is None:
        return lambda: _changed(work, first)
    return lambda: time.monotonic() - start >= delay


def _check_kills(module, first_argv, second_argv, tmp_path, fractions):
    """Kill the second run at several points; the folder must be the first run's output,
    the second's complete output, or marked. Then a rerun finishes and clears the mark."""
    base, ref = tmp_path / "base", tmp_path / "ref"
    _run(module, first_argv, base)
    duration = _run(module, second_argv, ref)
    first, second = _outputs(base), _outputs(ref)
    assert first != second
    points = {"marker": None, "first output replaced": None,
              **{f"{f:g} of a run": f * duration for f in fractions}}
    seen = set()
    for i, (point, delay) in enumerate(points.items()):
        work = tmp_path / f"work{i}"
        shutil.copytree(base, work)
        _kill_when(module, second_argv, work, _trigger(point, delay, work, first))
        marked = incomplete_reason(work) is not None
        now = _outputs(work)
        seen.add("marked" if marked else "first" if now == first else "second")
        assert marked or now in (first, second), (
            f"killed at {point}: unmarked folder mixes two runs: "
            f"{sorted(k for k in now if first.get(k) != now[k])}")
        if marked:
            line = (work / MARKER_NAME).read_text()
            assert line.count("\n") == 1 and MARKER_TEXT in line, line
    assert "marked" in seen, seen  # the kills did land inside the run
    # a rerun after the last kill resumes (calibrate: from its cell cache) and clears it
    _run(module, second_argv, work)
    assert incomplete_reason(work) is None
    assert _outputs(work) == second


CALIBRATE = ["--sims", "200", "--protocols", "paired_t", "welch_t", "--k-max", "6",
             "--jobs", "1", "--quiet"]


def test_calibrate_killed_anywhere_is_whole_or_marked(tmp_path):
    # the second run writes no mde.csv and another grid: stale files and changed ones both
    _check_kills("sim.calibrate", ["--k", "3", "4", "--mde", *CALIBRATE],
                 ["--k", "3", "5", "--seed", "1", *CALIBRATE], tmp_path, fractions=(0.8,))


@pytest.mark.slow
def test_calibrate_killed_at_many_points(tmp_path):
    _check_kills("sim.calibrate", ["--k", "3", "4", "--mde", *CALIBRATE],
                 ["--k", "3", "5", "--seed", "1", *CALIBRATE], tmp_path,
                 fractions=(0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95))


SEQUENTIAL = ["--sims", "200", "--designs", "peek", "fixed", "--quiet"]


def test_sequential_killed_anywhere_is_whole_or_marked(tmp_path):
    # the second run draws no figure: sequential.png of the first is stale
    _check_kills("sim.sequential", ["--k", "3", "6", *SEQUENTIAL],
                 ["--k", "3", "7", "--seed", "1", "--no-plot", *SEQUENTIAL], tmp_path,
                 fractions=())


@pytest.mark.slow
def test_sequential_killed_at_many_points(tmp_path):
    _check_kills("sim.sequential", ["--k", "3", "6", *SEQUENTIAL],
                 ["--k", "3", "7", "--seed", "1", *SEQUENTIAL], tmp_path,
                 fractions=(0.3, 0.6, 0.8, 0.9, 0.95))


@pytest.mark.slow
def test_build_killed_midway_is_marked_then_rebuilt(tmp_path):
    """``reports.build`` (minutes): killed while a step writes, and once a step is done,
    the folder is marked; the rebuild clears every marker."""
    out = tmp_path / "build"
    argv = ["--quick", "--pool", FIXTURE_POOL]
    _run("reports.build", argv, out)
    assert not list(out.rglob(MARKER_NAME))
    second = [*argv, "--alpha", "0.1"]
    for when in (lambda: (out / "calibrate" / MARKER_NAME).exists(),
                 lambda: (out / "pitfalls" / MARKER_NAME).exists()):
        _kill_when("reports.build", second, out, when, deadline_s=600)
        assert incomplete_reason(out) is not None
    _run("reports.build", second, out)
    assert not list(out.rglob(MARKER_NAME))
    assert "0.1" in (out / "index.html").read_text()


def test_build_fails_a_step_whose_folder_stays_marked(tmp_path, monkeypatch):
    """A step's ``main`` that returns 0 but leaves its folder marked is not a result."""
    from reports import build

    (tmp_path / "marking_step.py").write_text(
        "from pathlib import Path\n\n\n"
        "def main(argv):\n"
        "    out = Path(argv[argv.index('--out') + 1])\n"
        "    out.mkdir(parents=True)\n"
        f"    (out / {MARKER_NAME!r}).write_text('python -m demo started then: x\\n')\n"
        "    return 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    step = build.Step("demo", "Demo", "marking_step", ["--out", str(tmp_path / "demo")], [])
    outcome = build.run_step(step, None)
    assert outcome.status == "failed"
    assert outcome.message.startswith("its folder is marked incomplete (python -m demo")
