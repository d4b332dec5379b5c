"""The decision grid's experiments as users' files: ``evalcal.compare`` and the command's
``--json`` and exit status decide as the grid does, experiment by experiment."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from reports.end_to_end import check, check_families
from sim import decisions

#: experiments per family in the slow suite (the issue's sample size)
PER_FAMILY = 200


def _with_sample():
    return [name for name, module in decisions.families().items()
            if hasattr(module, "sample")]


def test_every_family_takes_part():
    """Every decision family defines ``sample``: none is scored without being checked
    through the command."""
    assert set(_with_sample()) == set(decisions.families())


def test_quick_cells_agree_end_to_end():
    """A few experiments of every family's quick cells: no disagreement. A real-pool family
    whose pools are absent here has no cell to run (the grid says so in one line)."""
    report = check_families(6, quick=True)
    assert report.mismatches == []
    runnable = {name for name in _with_sample()
                if decisions.cells_of(decisions.families()[name], quick=True)[0]}
    assert set(report.by_family) == runnable
    assert all(count >= 6 for count in report.by_family.values())


@pytest.mark.slow
def test_every_family_agrees_on_its_sampled_experiments():
    """At least 200 experiments of every family, spread over all its cells."""
    report = check_families(PER_FAMILY)
    assert report.mismatches == []
    assert all(count >= PER_FAMILY for count in report.by_family.values())


def test_a_wrong_grid_decision_is_caught():
    """The check can fail: one experiment's grid decision flipped is reported, naming the
    decision and both values; a reader that misreads the JSON is reported too."""
    module = decisions.families()["clusters"]
    sample = module.sample(module.QUICK_CELLS[0], 4, np.random.default_rng(1))
    flipped = {k: v.copy() for k, v in sample.decisions.items()}
    flipped["significant"][2] = ~flipped["significant"][2]
    report = check(dataclasses.replace(sample, decisions=flipped))
    assert report.experiments == 4 and len(report.mismatches) == 1
    assert "experiment 2" in report.mismatches[0] and "significant: grid" in report.mismatches[0]
    misread = dataclasses.replace(sample, read=lambda body: {**sample.read(body),
                                                             "refused": None})
    assert len(check(misread).mismatches) == 4
