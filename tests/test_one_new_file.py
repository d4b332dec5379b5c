"""A new protocol, generator, study design or report section is one new file and no edit
elsewhere: registered here as throwaways, they are picked up by the calibration grid, the
design list (``KINDS``, ``KIND_WORDS``) and the report's section list.
(Log readers: tests/readers/test_reader_plugin.py; sequential designs:
tests/sim/test_sequential.py::test_a_registered_design_is_simulated_with_the_others.)"""

from __future__ import annotations

import importlib
import shutil
import sys
import textwrap

import numpy as np
import pytest

import protocols
from evalcal_core import designs
from reports import pitfalls
from reports.pitfalls import _registry
from sim import generators
from sim.grid import calibrate

PROTOCOL_MODULE = '''
from dataclasses import dataclass

import numpy as np

from protocols import Protocol, register
from protocols._result import make_result


@register
@dataclass(frozen=True)
class NeverRejects(Protocol):
    """Throwaway: the mean delta, never significant."""

    name = "never_rejects"
    summary = "throwaway"

    def _evaluate(self, batch, alpha, rng):
        d = batch.seed_deltas.mean(axis=-1)
        return make_result(d, d - 1.0, d + 1.0, np.ones_like(d), np.zeros(d.shape, bool))
'''


def test_a_protocol_module_dropped_in_is_calibrated(tmp_path, monkeypatch):
    (tmp_path / "throwaway_protocol.py").write_text(textwrap.dedent(PROTOCOL_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    classes = dict(protocols.PROTOCOLS._classes)
    try:
        importlib.import_module("throwaway_protocol")
        assert "never_rejects" in protocols.names()
        frame = calibrate(generators.get("seed_gaussian"), [3], [0.0, 1.0],
                          sims=50, seed=0, progress=False)
        rows = frame[frame["protocol"] == "never_rejects"]
        assert len(rows) == 2 and (rows["rejections"] == 0).all()
        assert np.isclose(rows["rate"], 0).all()
    finally:
        protocols.PROTOCOLS._classes.clear()
        protocols.PROTOCOLS._classes.update(classes)
        sys.modules.pop("throwaway_protocol", None)
    assert "never_rejects" not in protocols.names()


GENERATOR_MODULE = '''
from dataclasses import dataclass

from sim.generators import Generator, register


@register
@dataclass(frozen=True)
class ConstantSeeds(Generator):
    """Throwaway: every seed of the baseline scores mu, every seed of the variant mu + delta."""

    mu: float = 0.9

    name = "constant_seeds"

    def _draw(self, sims, k, delta, rng):
        base = np.full((sims, k, 1), self.mu)
        return base, base + delta
'''


def test_a_generator_module_dropped_in_is_calibrated(tmp_path, monkeypatch):
    """A generator registered by one module is listed, built by name with its parameters, and
    calibrated like the others (sign_flip on constant deltas: never a rejection at effect 0,
    every experiment at effect 1 pp with k = 6)."""
    (tmp_path / "throwaway_generator.py").write_text(
        "import numpy as np\n" + textwrap.dedent(GENERATOR_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    classes = dict(generators.GENERATORS._classes)
    try:
        importlib.import_module("throwaway_generator")
        assert "constant_seeds" in generators.names()
        g = generators.get("constant_seeds", mu=0.8)
        assert g.describe() == "mu=0.8"
        frame = calibrate(g, [6], [0.0, 1.0], protocol_names=["sign_flip"], sims=40, seed=0,
                          progress=False)
        rates = dict(zip(frame["effect_pp"], frame["rate"]))
        assert rates == {0.0: 0.0, 1.0: 1.0}
    finally:
        generators.GENERATORS._classes.clear()
        generators.GENERATORS._classes.update(classes)
        sys.modules.pop("throwaway_generator", None)
    assert "constant_seeds" not in generators.names()


DESIGN_MODULE = '''
from ._base import COMPARE_MODELS, StudyDesign, register

DESIGN = register(StudyDesign(
    name="models_throwaway", order=-1, words="models, throwaway", compare=COMPARE_MODELS,
    primary="paired_t_questions", generator="question_mixture", description="throwaway",
    rule=lambda design: design.compare == COMPARE_MODELS and design.n_questions == 7))
'''


def test_a_design_module_dropped_in_is_registered_and_listed(tmp_path, monkeypatch):
    """A copy of the design package with one more module lists it first (its order), with its
    words, and its rule, tried first, decides the kind of the designs it accepts; the package
    itself is untouched."""
    copy = tmp_path / "designs_copy"
    shutil.copytree(designs.__path__[0], copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "throwaway.py").write_text(textwrap.dedent(DESIGN_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        pkg = importlib.import_module("designs_copy")
        assert pkg.names() == ["models_throwaway", *designs.KINDS]
        assert pkg.KINDS[0] == "models_throwaway"
        assert pkg.KIND_WORDS["models_throwaway"] == "models, throwaway"
        assert pkg.get("models_throwaway").primary == "paired_t_questions"
        assert pkg.Design(compare="models", n_questions=7).kind == "models_throwaway"
        assert pkg.Design(compare="models", n_questions=8).kind == pkg.MODELS
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "designs_copy"]:
            sys.modules.pop(name)
    assert "models_throwaway" not in designs.names()


def test_a_report_section_registered_is_listed_in_order():
    saved = dict(_registry.REGISTRY)
    try:
        @_registry.section(99, "a throwaway lesson")
        def make(ctx, scan):  # pragma: no cover - only listed
            raise AssertionError

        entries = _registry.sections()
        assert entries[-1].number == 99 and entries[-1].lesson == "a throwaway lesson"
        assert [e.number for e in entries] == sorted(e.number for e in entries)
        assert pitfalls.lessons()[99] == "a throwaway lesson"
        with pytest.raises(ValueError, match="registered twice"):
            @_registry.section(99, "another")
            def other(ctx, scan):  # pragma: no cover
                raise AssertionError
    finally:
        _registry.REGISTRY.clear()
        _registry.REGISTRY.update(saved)
