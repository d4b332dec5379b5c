"""Every ``--help`` reads as plain text and names no folder of one machine (issue 47 item 4).

Descriptions come from module docstrings, written in reST for the API docs: a terminal showed
``double backticks`` and Sphinx roles (``:func:`sim.grid.run_cells```) as typed. Defaults
computed from the checkout's location printed this machine's folders (``--data-root``'s
``(/work/shared/data)``); the docs named one as ``--data-root``'s example. Both use the
placeholder ``DATA_ROOT``, a folder laid out like ``../shared/data``.
"""

from __future__ import annotations

import importlib
import re

import pytest
from in_process import run_in_process
from tests_paths import REPO, checkout_snapshot

import evalcal_cli
from evalcal_core.cli import plain_text
from sim.llm_pools import cli as pools_cli

#: commands with a parser that the front door does not list
PYTHON_M_ONLY = ("sim.decisions.streaming", "sim.llm_pools.build")
#: what a reST-free text never holds: double backticks and Sphinx roles
MARKUP = re.compile(r"``|:(?:py:)?[a-z]+:`")
#: absolute folders of one machine (the placeholder DATA_ROOT stands for the data root)
MACHINE_FOLDERS = re.compile(r"(?<![\w.])/(?:work|home|Users|root|mnt|scratch)/")


def _helps():
    """(name, argv of evalcal or None, main) of every help screen."""
    yield "evalcal", [], evalcal_cli.main
    for name in evalcal_cli.SUBCOMMANDS:
        yield f"evalcal {name}", [name], evalcal_cli.main
    for inner in pools_cli.SUBCOMMANDS:
        yield f"evalcal pools {inner}", ["pools", inner], evalcal_cli.main
    for module in PYTHON_M_ONLY:
        yield f"python -m {module}", None, importlib.import_module(module).main


HELPS = list(_helps())


@pytest.mark.parametrize(("name", "argv", "main"), HELPS, ids=[h[0] for h in HELPS])
def test_help_is_plain_and_names_no_machine_folder(name, argv, main):
    if argv is None:
        got = run_in_process(main, name, "--help")
    else:
        got = run_in_process(main, "evalcal", *argv, "--help")
    assert got.returncode == 0 and got.stdout.strip(), got.stderr[-500:]
    markup = [line for line in got.stdout.splitlines() if MARKUP.search(line)]
    assert not markup, f"{name} --help shows reST markup: {markup[:3]}"
    folders = [line for line in got.stdout.splitlines() if MACHINE_FOLDERS.search(line)]
    assert not folders, f"{name} --help names a folder of one machine: {folders[:3]}"


@pytest.mark.parametrize(("text", "plain"), [
    ("``--jobs`` workers", "--jobs workers"),
    ("by :func:`sim.grid.run_cells` (:mod:`sim.validity`)",
     "by sim.grid.run_cells (sim.validity)"),
    (":data:`~evalcal_core.designs.KINDS`", "KINDS"),  # Sphinx shows the last name after ~
    (":py:meth:`the label <protocols.Protocol.label>`", "the label"),
    ("alpha is 5% (%(default)s); a `single` backtick stays", "alpha is 5% (%(default)s); a "
                                                           "`single` backtick stays"),
])
def test_plain_text_renders_as_sphinx_does(text, plain):
    """Reference: the text Sphinx renders for each role (the name; after ``~`` the last
    component; an explicit title instead of the target)."""
    assert plain_text(text) == plain


def _checkout_files(suffix: str) -> list[str]:
    """The checkout's files ending in ``suffix``: no caches, environments or the user's
    output folders (:func:`tests_paths.checkout_snapshot`)."""
    return sorted(rel for rel, kind in checkout_snapshot().items()
                  if kind[0] == "file" and rel.endswith(suffix)
                  and not rel.split("/")[0].endswith(".egg-info"))


def _machine_folders(files) -> list[str]:
    return [f"{rel}:{i}: {line.strip()}" for rel in files
            for i, line in enumerate((REPO / rel).read_text(errors="replace").splitlines(), 1)
            if MACHINE_FOLDERS.search(line)]


def test_docs_name_no_folder_of_one_machine():
    """README, docs and every other Markdown file of the checkout: DATA_ROOT, not a path."""
    found = _machine_folders(_checkout_files(".md"))
    assert not found, found[:5]


def test_code_names_no_folder_of_one_machine():
    """Docstrings, help strings and messages of every Python file (tests included: their
    fixtures name layouts too)."""
    found = _machine_folders(f for f in _checkout_files(".py")
                             if not f.endswith("test_help_texts.py"))
    assert not found, found[:5]
