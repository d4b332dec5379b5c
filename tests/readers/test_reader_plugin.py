"""A new log format is one new file: a module dropped into the package's folder is found.

The throwaway module is written to a temporary folder added to the package's ``__path__``
(what a second folder of the package would be), so the checkout is not written to.
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np

from evalcal_core import readers

MODULE = '''
"""Throwaway format: one line per question, "id score"."""
from evalcal_core.readers import Reader, RunLog, register
from evalcal_core.readers._base import frozen
from evalcal_core.readers._files import check_regular


@register
class SpaceReader(Reader):
    name = "space-sep"
    suffixes = (".ssv",)

    @classmethod
    def read(cls, path, opts):
        check_regular(path)
        pairs = [line.split() for line in path.read_text().splitlines() if line.strip()]
        if any(len(p) != 2 for p in pairs):
            raise ValueError(f"{path}: every line needs 'id score'")
        return RunLog(scores=frozen([[float(s) for _, s in pairs]]),
                      questions=tuple(q for q, _ in pairs), runs=("run 0",),
                      metric="score", task=None, model=None, format=cls.name,
                      source=str(path))
'''


def test_a_reader_module_dropped_in_is_registered_and_used(tmp_path, monkeypatch):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "space_sep.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.setattr(readers, "__path__", [*readers.__path__, str(plugins)])
    monkeypatch.setattr(readers.READERS, "_classes", dict(readers.READERS._classes))
    monkeypatch.delitem(sys.modules, "evalcal_core.readers.space_sep", raising=False)
    assert "space-sep" not in readers.names()
    try:
        readers.discover()
        assert "space-sep" in readers.names()
        base, variant = tmp_path / "b.ssv", tmp_path / "v.ssv"
        base.write_text("q1 1\nq2 0\nq3 1\n")
        variant.write_text("q2 1\nq3 1\nq4 0\n")
        assert readers.detect(base).name == "space-sep"
        arms = readers.read_arms({"baseline": base, "variant": variant})
        assert arms.question_ids == ("q2", "q3")
        np.testing.assert_array_equal(arms.scores, [[[0, 1]], [[1, 1]]])
    finally:
        sys.modules.pop("evalcal_core.readers.space_sep", None)
