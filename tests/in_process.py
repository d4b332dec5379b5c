"""A command run in the test's own process, as its console entry point runs it.

:func:`evalcal_core.cli.run_in_process` (the decision grid's end-to-end check runs commands
the same way): ``call_main`` is what ``run_main`` (every command's entry point) exits with,
so the exit code and the one-line errors are the command's; a subprocess adds only the
interpreter's start (about 1.5 s on the 2-core CI machine). The real process route is
covered once per command by
``tests/cli/test_bad_input.py::test_entry_points_in_a_subprocess``.
"""

from __future__ import annotations

from evalcal_core.cli import Completed, run_in_process

__all__ = ["Completed", "run_in_process"]
