"""No study-design kind is spelled as a string outside the design registry: code names a kind
through the constants of :mod:`evalcal_core.designs` (``METHODS_PAIRED``, ``MODELS``, ...),
so the kinds live in one place. An AST scan of every string constant of non-test code;
docstrings (and other bare string statements) may name a kind in prose."""

from __future__ import annotations

import ast
from pathlib import Path

from evalcal_core import designs

REPO = Path(__file__).resolve().parents[1]
#: the registry itself: each kind's name is written once, in its module
REGISTRY = REPO / "evalcal_core" / "designs"
#: folders never scanned: tests, build and tool outputs
SKIP = {"tests", "build", "dist", "node_modules", "site-packages", "__pycache__"}



def _bare_strings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are whole statements (docstrings, prose)."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        for stmt in body if isinstance(body, list) else ():  # a lambda's body is one expression
            if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)):
                out.add(id(stmt.value))
    return out


def kind_literals(source: str, kinds=tuple(designs.KINDS)) -> list[tuple[int, str]]:
    """(line, kind) of every string constant of ``source`` equal to a kind, docstrings aside."""
    tree = ast.parse(source)
    prose = _bare_strings(tree)
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and node.value in kinds and id(node) not in prose)


def _sources():
    for path in sorted(REPO.rglob("*.py")):
        rel = path.relative_to(REPO)
        if rel.parts[0].startswith(".") or SKIP & set(rel.parts) or path.is_relative_to(REGISTRY):
            continue
        yield rel.as_posix(), path


def _offenders() -> dict[str, list[tuple[int, str]]]:
    found = {}
    for rel, path in _sources():
        hits = kind_literals(path.read_text(encoding="utf-8"))
        if hits:
            found[rel] = hits
    return found


def test_the_scan_finds_a_kind_and_skips_prose():
    """The scan can fail: a kind as a value, key or comparison is found, a docstring is not."""
    source = ('"""Module on models_clustered."""\n'
              'def f(kind):\n'
              '    """For ``models``."""\n'
              '    table = {"models": 1}\n'
              '    return kind == "methods_paired" or f"{kind}" == "models_clustered"\n')
    assert kind_literals(source) == [(4, "models"), (5, "methods_paired"),
                                     (5, "models_clustered")]


def test_no_design_kind_literal_outside_the_registry():
    offenders = _offenders()
    assert not offenders, ("name the kind through evalcal_core.designs' constants: "
                           f"{offenders}")
