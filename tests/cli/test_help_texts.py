"""Every ``--help`` reads as plain text and names no folder of one machine (issue 47 item 4).

Descriptions come from module docstrings, written in reST for the API docs: a terminal showed
``double backticks`` and Sphinx roles (``:func:`sim.grid.run_cells```) as typed, and argparse
ran every paragraph, ``Example::`` literal block and ``====`` table rule together into one
wrapped paragraph (``python -m sim.harness_defaults --help``). Every help screen is checked:
each ``evalcal`` subcommand (the console script of ``setup.cfg``) and every ``python -m``
entry point of the project's packages, found by reading their files. Defaults
computed from the checkout's location printed this machine's folders (``--data-root``'s
``(/work/shared/data)``); the docs named one as ``--data-root``'s example. Both use the
placeholder ``DATA_ROOT``, a folder laid out like ``../shared/data``.
"""

from __future__ import annotations

import configparser
import contextlib
import importlib
import io
import re
import runpy
import sys
import textwrap
import warnings

import pytest
from in_process import run_in_process
from tests_paths import REPO, checkout_snapshot

import evalcal_cli
import evalcal_core.cli
from evalcal_core.cli import help_blocks, plain_text, render_help
from sim.llm_pools import cli as pools_cli

#: commands with a parser that the front door does not list
PYTHON_M_ONLY = ("sim.decisions.streaming", "sim.llm_pools.build")
#: the packages whose modules may be run as ``python -m``
PACKAGES = ("evalcal", "evalcal_cli", "evalcal_core", "sim", "protocols", "real_runs",
            "reports")
#: what a reST-free text never holds: double backticks, Sphinx roles, strong emphasis, the
#: ``::`` that announces a literal block, a table's ``====`` rule
MARKUP = re.compile(r"``|:(?:py:)?[a-z]+:`|\*\*\w|::|^\s*={3,}")
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


def _python_m_modules() -> list[str]:
    """Every module ``python -m`` runs as a command: a package's ``__main__.py``, a module
    with an ``if __name__ == "__main__":`` block."""
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).with_suffix("")
            if path.name == "__main__.py":
                found.append(".".join(rel.parts[:-1]))
            elif 'if __name__ == "__main__":' in path.read_text(encoding="utf-8"):
                found.append(".".join(rel.parts))
    return found


PYTHON_M = _python_m_modules()


def test_console_scripts_are_the_front_door():
    """The console scripts of ``setup.cfg`` are the ``evalcal`` front door, whose every
    subcommand :data:`HELPS` covers; another script would need its own help check."""
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    scripts = [line.split("=")[1].strip() for line in
               config["options.entry_points"]["console_scripts"].strip().splitlines()]
    assert scripts == ["evalcal_cli:run"]
    assert set(PYTHON_M_ONLY) <= set(PYTHON_M) and "sim.harness_defaults" in PYTHON_M


@pytest.fixture
def raw_texts(monkeypatch):
    """The description and epilog of every parser whose help is printed, before the
    formatter lays them out."""
    seen = []
    original = evalcal_core.cli.ArgumentParser.format_help

    def format_help(parser):
        seen.extend(t for t in (parser.description, parser.epilog) if t)
        return original(parser)

    monkeypatch.setattr(evalcal_core.cli.ArgumentParser, "format_help", format_help)
    return seen


def _literal_lines(text: str) -> list[str]:
    """The lines of the literal blocks of a reST text (the indented lines after a paragraph
    ending in ``::``), read independently of :func:`evalcal_core.cli.help_blocks`."""
    lines, found, i = textwrap.dedent(text).splitlines(), [], 0
    while i < len(lines):
        announced = lines[i].rstrip().endswith("::")
        i += 1
        while announced and i < len(lines) and (not lines[i].strip() or lines[i][0] == " "):
            found += [lines[i].strip()] if lines[i].strip() else []
            i += 1
    return found


def _check_help(name, got, raw):
    assert got.returncode == 0 and got.stdout.strip(), got.stderr[-500:]
    shown = got.stdout.splitlines()
    markup = [line for line in shown if MARKUP.search(line)]
    assert not markup, f"{name} --help shows reST markup: {markup[:3]}"
    folders = [line for line in shown if MACHINE_FOLDERS.search(line)]
    assert not folders, f"{name} --help names a folder of one machine: {folders[:3]}"
    # each example command line keeps a line of its own, whole
    stripped = {line.strip() for line in shown}
    lost = [line for text in raw for line in _literal_lines(text) if line not in stripped]
    assert not lost, f"{name} --help runs example lines into others: {lost[:3]}"


@pytest.mark.parametrize(("name", "argv", "main"), HELPS, ids=[h[0] for h in HELPS])
def test_help_is_plain_and_names_no_machine_folder(name, argv, main, raw_texts):
    if argv is None:
        got = run_in_process(main, name, "--help")
    else:
        got = run_in_process(main, "evalcal", *argv, "--help")
    _check_help(name, got, raw_texts)


@pytest.mark.parametrize("module", PYTHON_M)
def test_python_m_help_is_plain(module, monkeypatch, raw_texts):
    """``python -m MODULE --help`` as the interpreter runs it (runpy, in this process: a
    subprocess per module would add 1.5 s each)."""
    monkeypatch.setattr(sys, "argv", [module, "--help"])
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        # runpy warns that a module it runs again as __main__ was imported before
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=False)
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code
    _check_help(f"python -m {module}", evalcal_core.cli.Completed(code, out.getvalue(),
                                                                   err.getvalue()), raw_texts)


def test_harness_defaults_help_keeps_its_examples_and_table():
    """The screen the issue quoted: its two example commands and each table row start a
    line, and the paragraphs after them stay apart."""
    got = run_in_process(importlib.import_module("sim.harness_defaults").main,
                         "python -m sim.harness_defaults", "--help")
    shown = got.stdout.splitlines()
    assert "Example:" in shown
    examples = [line for line in shown if line.startswith("    python -m sim.harness_defaults")]
    assert len(examples) == 2 and examples[1].split("#")[0].split() == [
        "python", "-m", "sim.harness_defaults", "--quick", "--out", "/tmp/harness_defaults"]
    rows = [line.split("  ")[1] for line in shown
            if re.match(r"  (models|methods|real LLM)", line)]
    assert rows == ["models, r runs", "models, G clusters", "methods, k seeds",
                    "real LLM A/A pool"]
    assert any(line.startswith("The real pools by default") for line in shown)


@pytest.mark.parametrize(("text", "plain"), [
    ("``--jobs`` workers", "--jobs workers"),
    ("by :func:`sim.grid.run_cells` (:mod:`sim.validity`)",
     "by sim.grid.run_cells (sim.validity)"),
    (":data:`~evalcal_core.designs.KINDS`", "KINDS"),  # Sphinx shows the last name after ~
    (":py:meth:`the label <protocols.Protocol.label>`", "the label"),
    ("alpha is 5% (%(default)s); a `single` backtick stays", "alpha is 5% (%(default)s); a "
                                                           "`single` backtick stays"),
    ("**holds** or **over**; 2 * 3", "holds or over; 2 * 3"),
])
def test_plain_text_renders_as_sphinx_does(text, plain):
    """Reference: the text Sphinx renders for each role (the name; after ``~`` the last
    component; an explicit title instead of the target)."""
    assert plain_text(text) == plain


#: reST and what the help shows of it (at 60 columns): the reST reference says what each
#: construct is; the rendering is this project's plain-text reading of it
RENDERED = [
    ("Example::\n\n    cmd --a 1 \\\n        --b 2\n\nAfter.",
     "Example:\n\n    cmd --a 1 \\\n        --b 2\n\nAfter."),
    ("Run it ::\n\n    cmd", "Run it\n\n    cmd"),
    ("One.\n\n::\n\n    cmd\n\n    cmd2", "One.\n\n    cmd\n\n    cmd2"),
    ("=====  ====\nA      B\n=====  ====\nx      y y\nz      w\n=====  ====\n\nNext.",
     "  A      B\n  -----  ----\n  x      y y\n  z      w\n\nNext."),
    ("Title\n=====\n\nText.", "Title\n-----\n\nText."),
    ("* one\n  more\n* two\n\n1. first", "* one more\n* two\n\n1. first"),
    ("a\nb\n\nc", "a b\n\nc"),
    ("x" * 50 + " --llm-pools x", "x" * 50 + "\n--llm-pools x"),
    ("**holds** when", "holds when"),
]


@pytest.mark.parametrize(("text", "shown"), RENDERED)
def test_render_help(text, shown):
    """Reference: the reST specification (docutils' "reStructuredText Markup
    Specification": literal blocks after ``::``, the three ``::`` forms, simple tables,
    section titles, bullet and enumerated lists); the layout is this project's."""
    assert render_help(plain_text(text), 60) == shown


def test_help_blocks_kinds():
    blocks = help_blocks("Intro::\n\n    a\n\n      b\n\nMid.\n\n  laid out\n\n- item\n- two"
                         "\n\nText.")
    assert [(b.kind, b.lines, b.indent, b.tight) for b in blocks] == [
        ("paragraph", ("Intro:",), 0, False), ("lines", ("a", "", "  b"), 4, False),
        ("paragraph", ("Mid.",), 0, False), ("lines", ("laid out",), 2, False),
        ("item", ("- item",), 0, False), ("item", ("- two",), 0, True),
        ("paragraph", ("Text.",), 0, False)]


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
