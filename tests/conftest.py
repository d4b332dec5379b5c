"""Test-suite configuration: a deterministic hypothesis profile, and no writes into the checkout.

``derandomize=True`` makes every property test draw the same examples on every run, so a
failure is reproducible and the suite's runtime is stable.

Every test runs in a fresh temporary working directory, so a command's default output
folder (``reports/output/...``, relative to the working directory) lands there and not in
the checkout; child processes find the checkout's packages through ``PYTHONPATH`` as they
did when they ran from the repository root. The session snapshots the checkout before the
first test and fails if anything but a cache (:data:`tests_paths.CACHE_DIRS`) was created,
changed or removed by the end. ``EVALCAL_ALLOW_CHECKOUT_WRITES=1`` turns the failure into a
report (for two sessions run at once in one checkout).
"""

import os

import pytest
from hypothesis import HealthCheck, settings
from tests_paths import REPO, checkout_changes, checkout_snapshot

settings.register_profile(
    "evalcal",
    derandomize=True,
    deadline=None,
    max_examples=25,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("evalcal")

_SNAPSHOT = pytest.StashKey[dict]()


def pytest_configure(config):
    # hypothesis's failure explanation imports a deprecated mypy_extensions name; with
    # ``filterwarnings = error`` that turns a failing property into an INTERNALERROR that
    # hides the falsifying example.
    config.addinivalue_line(
        "filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")


def pytest_sessionstart(session):
    session.stash[_SNAPSHOT] = checkout_snapshot(REPO)


def pytest_sessionfinish(session, exitstatus):
    before = session.stash.get(_SNAPSHOT, None)
    if before is None:
        return
    changes = checkout_changes(before, checkout_snapshot(REPO))
    if not changes:
        return
    shown = changes[:20] + ([f"... and {len(changes) - 20} more"] if len(changes) > 20 else [])
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"the tests wrote into the checkout {REPO} (use tmp_path):", *shown]
    if reporter is not None:
        reporter.write_sep("=", "writes into the checkout", red=True)
        for line in lines:
            reporter.write_line(line)
    if os.environ.get("EVALCAL_ALLOW_CHECKOUT_WRITES") != "1" and exitstatus in (
            pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


#: tests that name committed files by paths relative to the repository root
#: (``root=tests/fixtures/pool``): they keep running there, still watched by the session
#: check, until they use ``tests_paths.FIXTURE_POOL``
RUN_IN_REPO = ("tests/sim/test_calibrate_cli.py::test_bad_input_is_one_line_and_exit_2[",)


@pytest.fixture(autouse=True)
def _cwd_outside_the_checkout(request, tmp_path_factory, monkeypatch):
    """Run each test in an empty folder of its own, outside the checkout.

    A separate folder from ``tmp_path``, whose listing some tests check.
    """
    if request.node.nodeid.startswith(RUN_IN_REPO):
        monkeypatch.chdir(REPO)
    else:
        monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(REPO) + (os.pathsep + path if path else ""))
