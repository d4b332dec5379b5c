"""A command run in the test's own process, as its console entry point runs it.

``call_main`` is what ``run_main`` (every command's entry point) exits with, so the exit
code and the one-line errors are the command's; a subprocess adds only the interpreter's
start (about 1.5 s on the 2-core CI machine). The real process route is covered once per
command by ``tests/cli/test_bad_input.py::test_entry_points_in_a_subprocess``.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

from evalcal_core.cli import call_main


@dataclass(frozen=True)
class Completed:
    """Like ``subprocess.CompletedProcess``: exit code and the text of both streams."""

    returncode: int
    stdout: str
    stderr: str


def run_in_process(main, prog: str, *argv) -> Completed:
    """``main(argv)`` through ``call_main`` with stdout and stderr captured; argparse's
    ``SystemExit`` (usage errors, ``--help``) gives its code."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = call_main(main, prog, [str(a) for a in argv])
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code
    return Completed(code, out.getvalue(), err.getvalue())
