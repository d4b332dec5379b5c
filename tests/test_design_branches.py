"""What differs by study design is asked of the design's object, never branched on its name.

Each kind of :mod:`evalcal_core.designs` has one analysis object registered in
:mod:`protocols.analysis.designs` (one module per kind), and no module outside the two
registries compares a value with a kind: an AST scan of every ``==``, ``!=``, ``in`` and
``not in`` of non-test code for an operand that is a kind's constant (``MODELS``, ...),
alone or in a tuple, list or set (a kind spelled as a string is
:mod:`tests.test_design_literals`' business). Consistency checks of the registry; no
statistics.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evalcal_core import designs as core
from evalcal_core.designs import KINDS, Design
from protocols.analysis import designs

REPO = Path(__file__).resolve().parents[1]
#: the registries: where a kind's behaviour is written, once per kind
REGISTRIES = (REPO / "evalcal_core" / "designs", REPO / "protocols" / "analysis" / "designs")
#: folders scanned: the code base's packages
PACKAGES = ("evalcal_core", "protocols", "sim", "reports", "real_runs", "evalcal",
            "evalcal_cli", "benchmarks")
#: the names code uses for the kinds: the constants of evalcal_core.designs (not
#: ``COMPARE_MODELS``, a value of ``Design.compare`` that happens to be spelled as a kind)
KIND_CONSTANTS = frozenset(name for name, value in vars(core).items()
                           if name.isupper() and not name.startswith("COMPARE")
                           and isinstance(value, str) and value in KINDS)
#: comparisons of a kind still written outside the registries, per file, at most this many
#: (none left: sim.design_check keys its per-kind checks and real-pool cells by kind; the
#: planner asks its designs' objects, sim.plan_designs). No file may gain any.
KNOWN: dict[str, int] = {}


def _names_a_kind(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_kind(e) for e in node.elts)
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    return name in KIND_CONSTANTS


def kind_comparisons(source: str) -> list[int]:
    """Lines of every comparison (``==``, ``!=``, ``in``, ``not in``) with a kind's constant
    as an operand."""
    ops = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)
    return sorted(node.lineno for node in ast.walk(ast.parse(source))
                  if isinstance(node, ast.Compare) and any(isinstance(o, ops) for o in node.ops)
                  and any(_names_a_kind(x) for x in (node.left, *node.comparators)))


def _offenders() -> dict[str, int]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if any(path.is_relative_to(r) for r in REGISTRIES):
                continue
            lines = kind_comparisons(path.read_text(encoding="utf-8"))
            if lines:
                found[path.relative_to(REPO).as_posix()] = len(lines)
    return found


def test_the_scan_finds_a_branch_on_a_kind():
    """The scan can fail: a kind compared alone, in a tuple or by membership is found; a
    kind passed as a value or a dtype's kind is not."""
    source = ("def f(design, kind, x):\n"
              "    if design.kind == designs.MODELS:\n"
              "        return 1\n"
              "    if kind in (METHODS_PAIRED, MODELS):\n"
              "        return 2\n"
              "    g(kind=MODELS)\n"
              "    return x.dtype.kind == 'f' or MODELS_CLUSTERED != kind\n")
    assert kind_comparisons(source) == [2, 4, 7]


def test_no_branch_on_a_design_kind_outside_the_registries():
    found = _offenders()
    grown = {f: n for f, n in found.items() if n > KNOWN.get(f, 0)}
    assert not grown, ("ask the design's object (protocols.analysis.designs.of(design)) "
                       f"instead of comparing its kind: {grown}")


def test_one_analysis_module_per_kind():
    """Every kind has one analysis, in the module named after it, and nothing else does."""
    assert designs.kinds() == sorted(KINDS)
    for kind in KINDS:
        analysis = designs.get(kind)
        assert analysis.kind == kind
        assert type(analysis).__module__ == f"protocols.analysis.designs.{kind}"


@pytest.mark.parametrize("kind", KINDS)
def test_a_design_finds_the_analysis_of_its_kind(kind):
    """:func:`protocols.analysis.designs.of` reads the user's design's kind (the study
    registry's inference rule decides it)."""
    study = core.get(kind)
    design = next(d for d in (Design(compare=c, paired=p, cluster=g, n_clusters=3 if g else 0)
                              for c in core.COMPARES for p in (True, False)
                              for g in (None, "task"))
                  if study.matches(d))
    assert designs.of(design) is designs.get(kind)


def test_an_unknown_kind_is_refused_with_the_kinds():
    with pytest.raises(ValueError, match="kind. parameter of protocols.analysis.designs.get "
                                         "must be one of "):
        designs.get("nonsense")
