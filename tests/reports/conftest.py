"""The quick build that the front page's and the pitfalls report's tests both read."""

import subprocess
import sys

import pytest
from tests_paths import FIXTURE_POOL, REPO


@pytest.fixture(scope="session")
def quick_build(tmp_path_factory):
    """The folder ``python -m reports.build --quick --pool FIXTURE_POOL`` wrote, built once.

    Its ``pitfalls/`` is what ``python -m reports.pitfalls --quick --pool FIXTURE_POOL``
    writes (the build runs that command line, with ``--out`` and ``--jobs``), so the pitfalls
    tests read it rather than run the report a second time. In a process of its own: the
    build's peak memory is not added to the test runner's. Tests only read it.
    """
    out = tmp_path_factory.mktemp("build")
    proc = subprocess.run([sys.executable, "-m", "reports.build", "--out", str(out), "--quick",
                           "--pool", str(FIXTURE_POOL)], cwd=REPO, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out
