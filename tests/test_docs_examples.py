"""The example outputs the README and the docs show are what the tools print now.

A fenced block whose first line is ``$ python -m MODULE ARGS`` is run (from the checkout,
into no folder of it: the commands shown write nothing) and every line shown must be the
corresponding line of the command's output, up to a line ``...`` (the rest left out).
``<checkout>`` stands for the checkout's path. A block whose input file is illustrative
(``my_runs.csv``, not shipped) is skipped, and says so.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```[a-z]*\n(\$ python -m [^\n]+)\n(.*?)^```", re.M | re.S)


def examples():
    found = []
    for page in PAGES:
        for match in BLOCK.finditer(page.read_text(encoding="utf-8")):
            shown = match.group(2).rstrip("\n").split("\n")
            found.append(pytest.param(match.group(1)[2:], shown,
                                      id=f"{page.name}:{match.group(1)[2:40]}"))
    return found


def test_the_pages_show_at_least_one_example():
    assert examples(), "no '$ python -m' example block found: the scan is blind"


@pytest.mark.parametrize(("command", "shown"), examples())
def test_example_output_is_what_the_tool_prints(command, shown, tmp_path):
    argv = shlex.split(command)
    missing = [a for a in argv[3:] if re.search(r"\.(csv|json|jsonl|eval)$", a)
               and not (REPO / a).exists()]
    if missing:
        pytest.skip(f"an illustrative input not shipped: {missing[0]}")
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200")
    proc = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout.replace(str(REPO), "<checkout>").split("\n")
    cut = shown.index("...") if "..." in shown else len(shown)
    assert printed[:cut] == shown[:cut]
