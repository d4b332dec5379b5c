"""``reports.build``'s arguments are checked before any step runs: one line, exit status 2.

Every bad case must fail within a second with nothing built: the steps are replaced by a
function that fails the test if called, and ``--out`` must not even be created. Only the
default pool may be absent; then the real-pool steps are a documented skip.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests_paths import FIXTURE_POOL

from evalcal_core.cli import call_main
from real_runs import store
from reports import build


@pytest.fixture
def no_step(monkeypatch):
    """Fail the test if the build gets as far as running a step."""
    def run_step(step, pool_missing):
        raise AssertionError(f"step {step.name} ran before the arguments were checked")

    monkeypatch.setattr(build, "run_step", run_step)


@pytest.fixture
def paths(tmp_path):
    (tmp_path / "afile").write_text("not a folder\n")
    (tmp_path / "empty").mkdir()
    return {"tmp": str(tmp_path), "afile": str(tmp_path / "afile"),
            "empty": str(tmp_path / "empty"), "fixture": FIXTURE_POOL}


CASES = [
    (["--pool", "{tmp}/nope"], ["'--pool'", "nope does not exist"]),
    (["--pool", "{afile}"], ["'--pool'", "afile is a file"]),
    (["--pool", "{empty}"], ["'--pool'", "holding a real-run pool", "real_runs.build_pool"]),
    (["--pool", "{fixture}", "--profile", "nosuch"], ["'--profile'", "fixture", "'nosuch'"]),
    # the committed pool (cpu) is the default store
    (["--profile", "nosuch"], ["'--profile'", "cpu", "'nosuch'"]),
    (["--pool", "{fixture}", "--out", "{afile}"], ["'--out'", "is a file"]),
    (["--pool", "{fixture}", "--out", "{afile}/sub"], ["'--out'", "under the file"]),
    (["--jobs", "0"], ["'--jobs'", ">= 1"]),
    (["--alpha", "1.5"], ["'--alpha'", "1.5"]),
    (["--jobs", "x"], ["--jobs", "invalid int"]),
]


def _fill(argv, paths):
    out = []
    for a in argv:
        for name, value in paths.items():
            a = a.replace("{" + name + "}", value)
        out.append(a)
    return out


@pytest.mark.parametrize(("argv", "words"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_argument_is_one_line_before_any_work(argv, words, paths, no_step, capsys):
    out = f"{paths['tmp']}/out"
    argv = _fill(argv, paths)
    if "--out" not in argv:
        argv += ["--out", out]
    t0 = time.perf_counter()
    try:
        code = call_main(build.main, build.PROG, argv)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    elapsed = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{build.PROG}: error: "), err
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert elapsed < 1.0, f"took {elapsed:.2f} s"
    assert not Path(out).exists(), "--out was created before the arguments were checked"
    assert Path(paths["afile"]).read_text() == "not a folder\n"


def test_absent_default_pool_is_a_documented_skip(tmp_path, monkeypatch, capsys):
    """The one absence allowed: no ``--pool`` and no committed pool (any ``--profile``)."""
    import sim.calibrate as calibrate
    import sim.harness_defaults as harness_defaults
    from reports import pitfalls

    monkeypatch.setattr(store, "DEFAULT_POOL", tmp_path / "no_pool")
    monkeypatch.setattr(build, "DEFAULT_POOL", tmp_path / "no_pool")
    calls = []
    for module in (calibrate, pitfalls, harness_defaults):
        monkeypatch.setattr(module, "main", lambda argv: calls.append(argv) or 0)
    out = tmp_path / "out"
    assert build.main(["--out", str(out), "--quick", "--profile", "paper"]) == 0
    printed = capsys.readouterr().out
    assert "paper_table: skipped (no real-run pool of profile 'paper' under" in printed
    assert len(calls) == 3
    assert (out / "index.html").read_text().count("Not built: no real-run pool") == 3
