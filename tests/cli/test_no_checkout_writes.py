"""No test writes into the checkout (``tests/conftest.py``).

Each test runs in a temporary working directory, so a command's default output folder lands
there; the session compares snapshots of the checkout taken before the first test and after
the last, and fails on anything but caches. These tests check both halves, the second on a
throwaway checkout run by a pytest of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests_paths import REPO, USER_OUTPUT_DIRS, checkout_changes, checkout_snapshot

from evalcal_core.cli import call_main


def test_default_output_folder_lands_outside_the_checkout(capsys):
    """``sim.calibrate`` without ``--out`` writes ``reports/output/calibrate`` under the
    working directory, which the suite points at a temporary folder."""
    from sim import calibrate

    cwd = Path.cwd()
    assert REPO not in [cwd, *cwd.parents]
    before = checkout_snapshot(REPO)
    argv = ["--k", "2", "--sims", "10", "--effects", "0", "--protocols", "paired_t",
            "--jobs", "1", "--quiet", "--no-plot"]
    assert call_main(calibrate.main, "sim.calibrate", argv) == 0, capsys.readouterr().err
    assert (cwd / "reports" / "output" / "calibrate" / "calibration.csv").is_file()
    assert checkout_changes(before, checkout_snapshot(REPO)) == []


def test_child_processes_import_the_checkout():
    proc = subprocess.run([sys.executable, "-c", "import sim, os; print(sim.__file__)"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).resolve().is_relative_to(REPO)


def test_snapshot_sees_writes_and_ignores_caches(tmp_path):
    root = tmp_path / "checkout"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "old.txt").write_text("old\n")
    before = checkout_snapshot(root)
    # caches: Python's and numba's (index and data beside the module's bytecode), pytest's,
    # hypothesis's, an editable install's metadata, tox's environments
    for cache in ("pkg/__pycache__/mod.cpython-311.pyc", "pkg/__pycache__/mod.f-1.py311.nbi",
                  "pkg/__pycache__/mod.f-1.py311.1.nbc", ".pytest_cache/v/cache/lastfailed",
                  ".hypothesis/examples/x", "evalcal.egg-info/PKG-INFO",
                  ".tox/py/lib/x.py"):
        (root / cache).parent.mkdir(parents=True, exist_ok=True)
        (root / cache).write_text("")
    assert checkout_changes(before, checkout_snapshot(root)) == []
    # the user's output folders: a reports.build run beside the suite writes there
    (root / "reports" / "output").mkdir(parents=True)
    (root / "reports" / "output" / "a.csv").write_text("a\n")
    (root / "reports" / "a.csv").write_text("a\n")
    (root / "pkg" / "mod.py").write_text("x = 2\n")
    (root / "old.txt").unlink()
    assert checkout_changes(before, checkout_snapshot(root)) == [
        "created reports", "created reports/a.csv", "changed pkg/mod.py", "removed old.txt"]


def test_user_output_folders_are_the_ignored_ones():
    """Every folder the snapshot leaves out is one git ignores (so nothing committed hides
    there), asked of git itself."""
    for folder in USER_OUTPUT_DIRS:
        probe = f"{folder}/probe.csv"
        done = subprocess.run(["git", "check-ignore", "-q", probe], cwd=REPO, timeout=60)
        assert done.returncode == 0, f"{folder} is not ignored by .gitignore"


def _throwaway_checkout(root: Path) -> Path:
    """This suite's conftest in a checkout of its own, with a test that writes into it."""
    (root / "tests").mkdir(parents=True)
    for name in ("conftest.py", "tests_paths.py"):
        shutil.copy(REPO / "tests" / name, root / "tests" / name)
    (root / "pkg" / "__pycache__").mkdir(parents=True)
    (root / "tests" / "test_writer.py").write_text(
        "from tests_paths import REPO\n\n"
        "def test_writes():\n"
        "    (REPO / 'pkg' / '__pycache__' / 'k.nbi').write_text('a numba cache')\n"
        "    (REPO / 'results.csv').write_text('a,b')\n")
    return root


def _pytest(root: Path, **env):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests"],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


def test_a_session_that_writes_into_its_checkout_fails(tmp_path):
    root = _throwaway_checkout(tmp_path / "checkout")
    proc = _pytest(root, EVALCAL_ALLOW_CHECKOUT_WRITES="0")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
    assert "created results.csv" in proc.stdout and "k.nbi" not in proc.stdout, proc.stdout

    (root / "results.csv").unlink()
    proc = _pytest(root, EVALCAL_ALLOW_CHECKOUT_WRITES="1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "created results.csv" in proc.stdout
