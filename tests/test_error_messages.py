"""Every "The 'x' parameter ... must be ..." message is built by ``evalcal_core.validate.fail``.

A hand-written copy of the template drifts (a missing "Got ... instead", a numpy repr, a
second wording for the same rule); the scan below finds string literals in the code that
spell the template themselves. Docstrings are left out: they may quote it.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("evalcal_core", "protocols", "sim", "real_runs", "reports", "evalcal_cli", "evalcal")
TEMPLATE = re.compile(r"The .{0,40}\b(parameter|option)s?\b.{0,60}\bmust\b")
#: the one module allowed to spell the template
BUILDER = "evalcal_core/validate.py"


def _literal_text(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def hand_written_copies() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel == BUILDER:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                          if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                               ast.AsyncFunctionDef))
                          and node.body and isinstance(node.body[0], ast.Expr)}
            inner = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
                     for v in node.values}
            for node in ast.walk(tree):
                if id(node) in docstrings or id(node) in inner:
                    continue
                text = _literal_text(node)
                if text is not None and TEMPLATE.search(text):
                    found.append(f"{rel}:{node.lineno}: {text[:70]}")
    return found


def test_the_scan_finds_a_copy(tmp_path, monkeypatch):
    """The scan is not blind: a module spelling the template is reported."""
    package = tmp_path / "evalcal_core"
    package.mkdir()
    (package / "bad.py").write_text('def f(x):\n    """The \'x\' parameter must be 1."""\n'
                                    '    raise ValueError(f"The \'x\' parameter of f must be 1. '
                                    'Got {x} instead.")\n')
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert hand_written_copies() == [
        "evalcal_core/bad.py:3: The 'x' parameter of f must be 1. Got {} instead."]


def test_at_most_three_hand_written_copies_of_the_parameter_message():
    copies = hand_written_copies()
    assert len(copies) <= 3, "\n".join(copies)
