"""The ``evalcal`` front door: every subcommand is the same ``main`` as its ``python -m``
form, named ``evalcal NAME`` in its messages."""

from __future__ import annotations

import configparser
import importlib
import os
import subprocess
import sys

import pytest
from tests_paths import REPO

import evalcal_cli
from evalcal_core.cli import call_main


def test_help_lists_every_subcommand(capsys):
    assert evalcal_cli.main([]) == 0
    out = capsys.readouterr().out
    for name, sub in evalcal_cli.SUBCOMMANDS.items():
        assert f"  {name} " in out and sub.summary in out


@pytest.mark.parametrize("name", list(evalcal_cli.SUBCOMMANDS))
def test_every_subcommand_parses_its_help(name, capsys):
    """``evalcal NAME --help`` is the module's own parser, named ``evalcal NAME``."""
    assert callable(importlib.import_module(evalcal_cli.SUBCOMMANDS[name].module).main)
    with pytest.raises(SystemExit) as exc:
        evalcal_cli.main([name, "--help"])
    assert exc.value.code == 0
    assert f"usage: evalcal {name}" in capsys.readouterr().out


def test_errors_are_one_line_named_for_the_subcommand(capsys):
    assert call_main(evalcal_cli.main, "evalcal", ["nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("evalcal: error: 'nope' is not")
    assert evalcal_cli.main(["decision-grid", "--families", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("evalcal decision-grid: error:")


def test_the_console_script_is_the_front_door():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    scripts = cfg["options.entry_points"]["console_scripts"].split()
    assert scripts == ["evalcal", "=", "evalcal_cli:run"]


def test_calibrate_writes_the_same_bytes_both_ways(tmp_path):
    """``evalcal calibrate`` and ``python -m sim.calibrate`` give byte-identical CSVs."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = ["--k", "3", "4", "--sims", "200", "--max-sims", "200", "--protocols", "paired_t",
            "welch_t", "--no-plot", "--quiet"]
    for name, command in (("a", ["-m", "evalcal_cli", "calibrate"]),
                          ("b", ["-m", "sim.calibrate"])):
        proc = subprocess.run([sys.executable, *command, *args, "--out", str(tmp_path / name)],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in (tmp_path / "a").glob("*.csv"))
    assert written and written == sorted(p.name for p in (tmp_path / "b").glob("*.csv"))
    for file in written:
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
