"""The layers of the code base (see ``evalcal_core/__init__.py``), checked over every module's
imports.

Every ``import`` statement counts, including those inside functions (lazy imports): a lazy
import of a forbidden layer is still a dependency on it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("evalcal_core", "protocols", "sim", "real_runs", "reports", "evalcal_cli", "evalcal")

#: the top floor: the front door (``evalcal_cli``, which loads its subcommands' modules by
#: name) and the Python functions (``evalcal``); nothing imports them
TOP = {"evalcal_cli", "evalcal"}
#: package (or module prefix) -> top-level names it must never import
FORBIDDEN = {
    "evalcal_core": {"protocols", "sim", "real_runs", "reports", "torch", "torchvision", *TOP},
    "protocols": {"sim", "real_runs", "reports", "torch", "torchvision", *TOP},
    "sim.generators": {"protocols", "reports", "torch", "torchvision", *TOP},
    "sim": {"reports", "torch", "torchvision", "matplotlib", *TOP},
    "real_runs": {"sim", "protocols", "reports", *TOP},
    "reports": {"torch", "torchvision", *TOP},
    "evalcal_cli": {"torch", "torchvision"},
    "evalcal": {"torch", "torchvision"},
}

#: the training modules: the only ones that may import torch (lazily or not)
TRAINING_MODULES = {"real_runs.augment", "real_runs.data", "real_runs.engine", "real_runs.models",
                    "real_runs.runtime", "real_runs.seeding", "real_runs.sweep", "real_runs.train",
                    "real_runs.text", "real_runs.gpu_batch", "real_runs.gpu_check",
                    "real_runs.pack_data", "real_runs.sources", "real_runs.device_run",
                    "real_runs.cost"}
TORCH = {"torch", "torchvision"}

#: command aliases kept under an old name: module -> the one higher module it forwards to
ALIASES = {"protocols.evaluate": "reports.evaluate", "sim.calibrate": "reports.calibrate",
           "sim.sequential.__main__": "reports.sequential",
           "sim.decision_grid.__main__": "reports.decision_grid"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(module: str, source: str, is_package: bool = False) -> set[str]:
    """Absolute names of every module ``source`` imports (relative imports resolved)."""
    found = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return found


def violations(module: str, source: str, is_package: bool = False) -> list[str]:
    """The forbidden imports of ``module`` (e.g. ``'sim.generators.x imports protocols'``)."""
    out = []
    imports = imported_modules(module, source, is_package)
    if module in ALIASES and imports <= {ALIASES[module]} | {
            f"{ALIASES[module]}.{name}" for name in ("example_path", "main", "run")}:
        return []
    tops = {name.split(".")[0] for name in imports}
    for prefix, forbidden in FORBIDDEN.items():
        if module == prefix or module.startswith(prefix + "."):
            for top in sorted(tops & forbidden):
                if top in TORCH and module in TRAINING_MODULES:
                    continue
                out.append(f"{module} imports {top}")
    if tops & TORCH and module not in TRAINING_MODULES:
        out.append(f"{module} imports torch outside the training modules")
    return sorted(set(out))


def all_modules():
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            yield module_name(path), path


def test_every_module_respects_the_layers():
    problems = []
    for module, path in all_modules():
        problems += violations(module, path.read_text(), path.name == "__init__.py")
    assert problems == []


@pytest.mark.parametrize(("module", "source", "expected"), [
    ("protocols.methods.new", "from sim import generators", "protocols.methods.new imports sim"),
    ("protocols._x", "def f():\n    import reports.build\n", "protocols._x imports reports"),
    ("sim.generators.new", "from protocols import get", "sim.generators.new imports protocols"),
    ("sim.generators.new", "from ...protocols import get", "sim.generators.new imports protocols"),
    ("evalcal_core.x", "import real_runs.store", "evalcal_core.x imports real_runs"),
    ("sim.outputs", "def f():\n    import torch\n", "sim.outputs imports torch"),
    ("sim.budget", "def f():\n    import matplotlib.pyplot\n", "sim.budget imports matplotlib"),
    ("real_runs.store", "import torch", "real_runs.store imports torch outside the training "
                                        "modules"),
    ("real_runs.store", "from sim.cells import draw_cell", "real_runs.store imports sim"),
    ("reports.build", "import evalcal_cli", "reports.build imports evalcal_cli"),
    ("evalcal_cli", "import torch", "evalcal_cli imports torch"),
    ("reports.evaluate.api", "import evalcal", "reports.evaluate.api imports evalcal"),
    ("sim.calibration", "from evalcal import calibrate", "sim.calibration imports evalcal"),
    ("evalcal._api", "import torch", "evalcal._api imports torch"),
])
def test_a_forbidden_import_is_caught(module, source, expected):
    """The checker itself: each forbidden import added to a module is reported."""
    assert expected in violations(module, source)


@pytest.mark.parametrize(("module", "source"), [
    ("sim.calibrate", "import protocols"),
    ("sim.generators.real_pool", "from evalcal_core import scenarios"),
    ("real_runs.engine", "import torch"),
    ("reports.build", "from sim import calibrate"),
    ("protocols.methods.new", "from .._base import Protocol"),
    ("evalcal._api", "from sim.calibration import run_calibration"),
    ("evalcal._api", "from reports.evaluate.api import compare"),
])
def test_allowed_imports_pass(module, source):
    assert violations(module, source) == []


def _run(code: str, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *flags, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_importing_the_generators_is_light():
    """``import sim.generators`` loads neither numba nor any protocol module."""
    proc = _run("import sys, sim.generators; "
                "print(sorted(m for m in sys.modules if m == 'numba' or m.startswith('numba.') "
                "or m == 'protocols' or m.startswith('protocols.')))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_the_commands_import_numba_only_when_a_kernel_runs():
    """``import protocols`` and the commands' modules load no numba: its import (about
    0.2 s) and the kernels' loading are paid by a computation that uses a kernel, not by
    every command, ``--help`` and refusal (numba imported at module level in
    ``protocols.claims`` once slowed every ``evaluate`` start)."""
    proc = _run("import sys, protocols, protocols.claims, reports.evaluate.cli, "
                "sim.calibration, sim.plan, sim.design_check, evalcal_cli; "
                "print(sorted(m for m in sys.modules if m == 'numba'))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_imports_work_without_docstrings():
    """``python -OO`` strips docstrings; nothing may depend on them at import time."""
    proc = _run("import protocols, sim.calibrate, reports.build, real_runs.store; "
                "print(len(protocols.names()))", "-OO")
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) >= 13


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (top-level and function-level imports alike).

    ``from package import name`` counts as importing ``package.name`` when that is a module,
    else ``package``; importing ``a.b.c`` also imports its packages ``a.b`` and ``a`` (Python
    runs their ``__init__`` first), except from inside them.
    """
    sources = {module: path for module, path in all_modules()}
    graph = {}
    for module, path in sources.items():
        found = set()
        for name in imported_modules(module, path.read_text(), path.name == "__init__.py"):
            while name and name not in sources:
                name = name.rpartition(".")[0]
            parts = name.split(".") if name else []
            for i in range(1, len(parts) + 1):
                target = ".".join(parts[:i])
                if target in sources and target != module and not (
                        module == target or module.startswith(target + ".")):
                    found.add(target)
        graph[module] = found
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph``: one per strongly connected component of >1 module
    (Tarjan's algorithm), each as a path that closes on its first module."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(_cycle_path(graph, set(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _cycle_path(graph, component) -> list[str]:
    """A shortest path from the component's first module back to itself."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & component):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return sorted(component)


def test_no_import_cycles():
    """No module imports itself through others, lazily or not: a cycle is a design knot
    (a lazy import dodges the error, not the dependency)."""
    found = [" -> ".join(cycle) for cycle in cycles(import_graph())]
    assert sorted(set(found)) == []


def test_a_cycle_is_caught():
    """The checker itself: a lazy import closing a loop is a cycle; a chain is not."""
    graph = {"sim.a": {"sim.b"}, "sim.b": {"sim.c"}, "sim.c": {"sim.a"}, "sim.d": {"sim.a"}}
    assert cycles(graph) == [["sim.a", "sim.b", "sim.c", "sim.a"]]
    assert cycles({"sim.a": {"sim.b"}, "sim.b": set()}) == []


def test_the_numbers_import_no_plotting_library():
    """sim computes; reports draws: importing sim's modules (the numbers of both commands
    included) loads no matplotlib. ``sim.calibrate`` is the command's alias and draws only
    when run."""
    proc = _run("import sys, sim.calibration, sim.grid, sim.budget, sim.mde, sim.solve, "
                "sim.sequential, sim.outputs, sim.pool_summary, sim.fit_bootstrap, sim.pilot, "
                "sim.calibrate; print(sorted(m for m in sys.modules if m == 'matplotlib' or "
                "m.startswith('matplotlib.')))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def private_imports(graph: dict[str, set[str]]) -> list[str]:
    """``importer -> module`` for every import of a package's ``_private`` module from
    outside that package (benchmarks and tests may look inside)."""
    out = []
    for module, targets in graph.items():
        for target in targets:
            package, _, leaf = target.rpartition(".")
            if leaf.startswith("_") and not leaf.startswith("__") and package \
                    and not module.startswith(package + ".") and module != package:
                out.append(f"{module} -> {target}")
    return sorted(out)


def test_no_package_reaches_into_anothers_private_modules():
    """What sim, reports, real_runs and the foundation need from the protocols (or any
    package) has a public name in that package's ``__init__``."""
    assert private_imports(import_graph()) == []


def test_a_private_import_is_caught():
    graph = {"sim.x": {"protocols._batch", "protocols"}, "protocols.y": {"protocols._batch"}}
    assert private_imports(graph) == ["sim.x -> protocols._batch"]
