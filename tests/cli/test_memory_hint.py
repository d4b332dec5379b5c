"""Out of memory is one line naming what the command itself can be asked for less of (issue
47: every command said "use fewer simulations or questions per cell", also where it has no
such option)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from evalcal_core.cli import MEMORY_DEFAULT, MEMORY_HINTS, call_main, memory_hint

#: the command line of each command with a hint of its own
COMMANDS = {
    "calibrate": ["-m", "sim.calibrate"],
    "plan": ["-m", "sim.plan"],
    "evaluate": ["-m", "protocols.evaluate"],
    "decision_grid": ["-m", "sim.decision_grid"],
    "design_check": ["-m", "sim.design_check"],
    "harness_defaults": ["-m", "sim.harness_defaults"],
    "multiarm": ["-m", "sim.multiarm"],
    "export": ["-m", "evalcal_cli", "export"],
    "from_logs": ["-m", "sim.llm_pools", "from-logs"],
    "gpu_batch": ["-m", "real_runs.gpu_batch"],
    "pack_data": ["-m", "real_runs.pack_data"],
}


def test_every_hint_has_its_command():
    assert set(COMMANDS) == set(MEMORY_HINTS)


@pytest.mark.parametrize("name", sorted(MEMORY_HINTS))
def test_a_hint_names_only_options_its_command_has(name):
    done = subprocess.run([sys.executable, *COMMANDS[name], "--help"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for flag in re.findall(r"--[a-z][a-z-]*", MEMORY_HINTS[name]):
        assert re.search(rf"{flag}\b", done.stdout), (name, flag)


@pytest.mark.parametrize("prog, hint", [
    ("python -m sim.calibrate", MEMORY_HINTS["calibrate"]),
    ("evalcal calibrate", MEMORY_HINTS["calibrate"]),
    ("evalcal decision-grid", MEMORY_HINTS["decision_grid"]),
    ("python -m sim.llm_pools from-logs", MEMORY_HINTS["from_logs"]),
    ("python -m real_runs.pack_data", MEMORY_HINTS["pack_data"]),
    ("python -m real_runs.merge_records", MEMORY_DEFAULT),
])
def test_the_hint_is_the_typed_commands(prog, hint):
    assert memory_hint(prog) == hint


def test_a_memory_error_is_one_line_and_exit_2(capsys):
    def main(argv):
        raise MemoryError

    assert call_main(main, "python -m protocols.evaluate", []) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"python -m protocols.evaluate: error: out of memory; "
                                f"{MEMORY_HINTS['evaluate']}"]
