"""``python -m sim.calibrate`` writes the same bytes as the committed golden files.

The golden files were written by the command before the calibrate options were declared on
the config's fields; a refactor of the command floor must not change a byte of them (a new
number on purpose regenerates them with the command in ``GOLDEN_ARGV``, and says why in its
commit). Results depend only on ``--seed``, so the worker count is left to the runner.
"""

from __future__ import annotations

import pytest
from tests_paths import FIXTURES

from reports.calibrate import main

GOLDEN = FIXTURES / "golden" / "calibrate"
GOLDEN_ARGV = ["--k", "3", "4", "--sims", "300", "--effects", "0", "1", "--protocols",
               "paired_t", "sign_flip", "welch_t", "--no-plot", "--quiet"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_calibrate_csvs_are_byte_identical_to_the_golden_files(tmp_path, jobs):
    out = tmp_path / "out"
    assert main([*GOLDEN_ARGV, "--out", str(out), "--jobs", jobs]) == 0
    for name in ("calibration.csv", "seed_budget.csv"):
        assert (out / name).read_bytes() == (GOLDEN / name).read_bytes(), name
