"""``--jobs`` (issue 47 item 4): 0 is refused in one line by every command that takes it, and
no run starts more workers than it has cells or the machine has cores.

``--jobs`` has no "0 means all cores" meaning anywhere: its default is all cores, and every
command refuses values below 1 with the same message (``evalcal_core.options.jobs_option``).
"""

from __future__ import annotations

import importlib
import sys
from contextlib import contextmanager

import pytest
from in_process import run_in_process

import evalcal_cli
import sim.grid.execute as execute_module
from evalcal_core import options
from evalcal_core.options import Execution, workers
from sim import generators
from sim.grid import CellRequest, run_cells


def _takes_jobs(name: str) -> bool:
    module = importlib.import_module(evalcal_cli.SUBCOMMANDS[name].module)
    if not hasattr(module, "build_parser"):  # evalcal pools: subcommands without --jobs
        return False
    parser = module.build_parser()
    return any("--jobs" in a.option_strings for a in parser._actions)


#: the simulation commands with ``--jobs`` and no required option (the real-run commands
#: train on a data root; ``calibrate`` needs ``--k``)
JOBS_COMMANDS = [n for n in evalcal_cli.SUBCOMMANDS if n not in ("train", "build-pool")
                 and _takes_jobs(n)]


def test_the_commands_with_jobs_are_found():
    assert {"calibrate", "design-check", "evidence", "decision-grid"} <= set(JOBS_COMMANDS)


@pytest.mark.parametrize("name", JOBS_COMMANDS)
def test_jobs_0_is_refused_before_any_folder_is_made(name, tmp_path):
    """``design-check --jobs 0`` and ``evidence --jobs 0`` reached joblib ("n_jobs == 0 in
    Parallel has no meaning", a traceback) after locking their output folder."""
    extra = ["--k", "3"] if name in ("calibrate",) else []
    out = tmp_path / "out"
    got = run_in_process(evalcal_cli.main, "evalcal", name, *extra, "--jobs", "0",
                         "--out", out)
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and len(lines) == 1, got.stderr[-800:]
    assert f"evalcal {name}: error:" in lines[0] and "'--jobs'" in lines[0]
    assert "Got 0 instead" in lines[0]
    assert not out.exists()


def test_workers_are_capped_by_the_tasks_and_the_cores(monkeypatch):
    monkeypatch.setattr(options, "ALL_CORES", 8)
    assert workers(16, 4) == 4
    assert workers(16, 100) == 8
    assert workers(2, 100) == 2
    assert workers(5, 0) == 1


@pytest.fixture
def started(monkeypatch):
    """The worker counts the engine asks its backend for; tasks run here, one by one."""
    asked = []

    @contextmanager
    def recording(backend, jobs, scheduler=None):
        asked.append(jobs)
        yield lambda: (lambda calls: [f(*a, **kw) for f, a, kw in calls])

    monkeypatch.setattr(execute_module, "backend_context", recording)
    # as if this process had started workers before: no in-process shortcut for light cells
    monkeypatch.setattr(execute_module, "_loky_started", True)
    return asked


def _requests():
    g = generators.get("question_mixture", n_questions=60)
    return [CellRequest(g, "paired_t", "", k, 0.0) for k in (2, 3, 4, 5)]


@pytest.mark.parametrize(("cores", "expected"), [(64, 4), (3, 3)])
def test_a_4_cell_grid_asks_for_at_most_4_workers(started, monkeypatch, cores, expected):
    """16 workers for a 4-cell grid held 1.15 GB; the rows are those of one worker."""
    monkeypatch.setattr(options, "ALL_CORES", cores)
    run = Execution(sims=20, seed=1, jobs=16, progress=False)
    rows = run_cells(_requests(), run)
    assert started == [expected]
    monkeypatch.setattr(execute_module, "_loky_started", False)
    alone = run_cells(_requests(), Execution(sims=20, seed=1, jobs=1, progress=False))
    assert rows.equals(alone)


def test_the_decision_grid_asks_for_at_most_its_cells(monkeypatch):
    """``python -m sim.decision_grid``'s own pool of workers: one family's quick cells."""
    dg = sys.modules.get("sim.decision_grid") or importlib.import_module("sim.decision_grid")
    asked = []

    class Sequential:
        def __init__(self, n_jobs):
            asked.append(n_jobs)

        def __call__(self, calls):
            return [f(*a, **kw) for f, a, kw in calls]

    monkeypatch.setattr(dg, "Parallel", Sequential)
    monkeypatch.setattr(options, "ALL_CORES", 64)
    family = "two_level"
    cells = dg.decisions.families()[family].QUICK_CELLS
    config = dg.GridConfig(families=(family,), quick=True, sims=200, jobs=4096)
    dg.run_grid(config)
    assert asked and asked[0] == len(cells) and max(asked) <= len(cells)
