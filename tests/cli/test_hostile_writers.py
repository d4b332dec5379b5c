"""Every command that writes an output folder refuses an ``--out`` that is a file at once.

One stderr line naming the file, exit code 2, and no work first: each command runs in this
process under a timer that aborts it after :data:`BUDGET_S` seconds (an exception
``call_main`` does not catch), so a command that starts simulating before it looks at
``--out`` fails the test instead of failing, minutes later, at its first write.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import time

import pytest
from tests_paths import FIXTURE_POOL

from evalcal_core.cli import call_main

#: seconds a refusal may take (the checks take milliseconds; the machine may be busy)
BUDGET_S = 2.0


class _OverBudget(BaseException):
    """Raised by the timer or by a command's first piece of work; a ``BaseException`` so
    that no command's handler catches it."""


@contextlib.contextmanager
def _budget(seconds: float):
    def alarm(signum, frame):
        raise _OverBudget(f"still running after {seconds:g} s: work began before --out "
                          "was checked")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# (module, argv without --out, the module's function that does the work: a call to it
# before --out is checked fails the test at once, whatever the machine's speed; None where
# the timer alone watches)
WRITERS = [
    pytest.param("sim.calibrate", ["--k", "3", "10", "--quiet"], None, id="calibrate"),
    pytest.param("reports.build", ["--pool", FIXTURE_POOL], "run_step", id="reports.build"),
    pytest.param("reports.pitfalls", [], None, id="reports.pitfalls"),
    pytest.param("reports.paper_table", ["--pool", FIXTURE_POOL], "paper_table",
                 id="reports.paper_table"),
    pytest.param("reports.paper_figures", ["--pool", FIXTURE_POOL], "build_paper_figures",
                 id="reports.paper_figures"),
    # ``sim.sequential`` is the numbers' package; the command's ``main`` is the reports
    # layer's (``python -m sim.sequential`` forwards to it)
    pytest.param("reports.sequential", ["--k", "3", "20", "--quiet"], "sequential_table",
                 id="sequential"),
    pytest.param("reports.pool_profiles", ["--pool", FIXTURE_POOL], "pool_profiles_table",
                 id="reports.pool_profiles"),
    pytest.param("sim.design_check", ["--quiet"], "design_check", id="design_check"),
    pytest.param("sim.plan", ["--sd-seed", "0.5"], "run_plan", id="plan"),
    pytest.param("reports.plan_figure", ["--sd-seed", "0.5"], None, id="plan_figure"),
    pytest.param("sim.multiarm", [], "run_multiarm", id="multiarm"),
    # the GPU path: a minute of device time must not be spent before --out is known good
    # (FIXTURE_POOL stands in for any existing folder: the work is never reached)
    pytest.param("real_runs.pack_data", ["--data-root", FIXTURE_POOL], "build_pack",
                 id="pack_data"),
    pytest.param("real_runs.gpu_check", ["--pack", FIXTURE_POOL], "_check", id="gpu_check"),
    pytest.param("real_runs.gpu_batch", ["--pack", FIXTURE_POOL, "--dataset", "cifar10",
                                         "--scenarios", "S1", "--seeds", "0",
                                         "--budget-s", "60"], "plan_runs", id="gpu_batch"),
]


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
@pytest.mark.parametrize(("module", "argv", "work"), WRITERS)
def test_out_that_is_a_file_is_refused_at_once(module, argv, work, tmp_path, capsys,
                                               monkeypatch):
    mod = importlib.import_module(module)  # the import is not what is timed
    main = mod.main
    if work is not None:
        def started(*args, **kwargs):
            raise _OverBudget(f"{module}.{work} ran before --out was checked")

        # raising=False: a renamed function leaves the timer alone to watch
        monkeypatch.setattr(mod, work, started, raising=False)
    target = tmp_path / "results"
    target.write_text("not a folder\n")
    t0 = time.perf_counter()
    with _budget(BUDGET_S):
        try:
            code = call_main(main, module, [*argv, "--out", str(target)])
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    elapsed = time.perf_counter() - t0
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(target) in lines[0], lines[0]
    assert target.read_text() == "not a folder\n"
    assert elapsed < BUDGET_S
