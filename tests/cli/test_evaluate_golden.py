"""Golden outputs of ``python -m protocols.evaluate``: byte for byte, decision by decision.

The cases (``tests/fixtures/golden/evaluate/cases.json``) run the command in-process on
small committed inputs (paired and independent seeds, 0/1 questions, repeats, clusters, a
leaderboard, a stream, claims and gates) in every output format. The expected files were
written by the command before the statistics moved below the report layer
(:mod:`protocols.analysis`), so a change of any printed number, verdict, note or exit status
shows up here; a decision changed on purpose is regenerated with
``python tests/fixtures/golden/evaluate/regen.py`` and named in its commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from in_process import run_in_process

from reports.evaluate.cli import example_path, main

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "evaluate"
ROOT = Path(__file__).resolve().parents[2]
CASES = json.loads((GOLDEN / "cases.json").read_text())


def render(name: str) -> str:
    """One case's output as stored: stdout, the exit status, stderr; paths made relative
    (the example's path named ``<EXAMPLE>``)."""
    argv = [a.replace("{inputs}", str(GOLDEN / "inputs")) for a in CASES[name]]
    done = run_in_process(main, "evaluate", *argv)
    text = f"{done.stdout}\n[exit {done.returncode}]\n{done.stderr}"
    # the shipped example lives where the package is installed (a checkout or a tox env)
    return text.replace(example_path(), "<EXAMPLE>").replace(str(ROOT), "<ROOT>")


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_is_the_golden_one(name):
    """Every line of the command's output and its exit status equal the stored ones."""
    expected = (GOLDEN / "expected" / f"{name}.out").read_text()
    assert render(name) == expected
