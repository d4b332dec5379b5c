"""``--alpha 1e-300`` (issue 47 item 4): refused in one line by every command that takes
``--alpha``, before any work; the level at the floor still runs.

Before, ``evaluate --alpha 1e-300`` ended in a ``StopIteration`` (no number of seeds let the
sign-flip p reach the level), ``seed-power-bound`` in a failed linear program, ``multiarm``
printed 100% equivalence claims at the margin and ``evaluate`` "100% intervals" of +-inf.
"""

from __future__ import annotations

import importlib

import pytest
from in_process import run_in_process

import evalcal_cli
from evalcal_core.options import MIN_ALPHA
from protocols.analysis.designs.methods_paired import sign_flip_note


def _takes_alpha(name: str) -> bool:
    module = importlib.import_module(evalcal_cli.SUBCOMMANDS[name].module)
    if not hasattr(module, "build_parser"):  # evalcal pools: no --alpha
        return False
    return any("--alpha" in a.option_strings for a in module.build_parser()._actions)


#: the required options of the commands that have some
REQUIRED = {"calibrate": ["--k", "3"], "sequential": ["--k", "3", "5"]}
ALPHA_COMMANDS = [n for n in evalcal_cli.SUBCOMMANDS if _takes_alpha(n)]


def test_the_commands_with_alpha_are_found():
    assert {"evaluate", "plan", "calibrate", "seed-power-bound", "multiarm",
            "design-check"} <= set(ALPHA_COMMANDS)


@pytest.mark.parametrize("name", ALPHA_COMMANDS)
@pytest.mark.parametrize("alpha", ["1e-300", "5e-5"])
def test_a_level_below_the_floor_is_one_line(name, alpha, tmp_path):
    got = run_in_process(evalcal_cli.main, "evalcal", name, *REQUIRED.get(name, []),
                         "--alpha", alpha)
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and len(lines) == 1, got.stderr[-800:]
    assert lines[0].startswith(f"evalcal {name}: error: The '--alpha' option must be >= "
                               f"{MIN_ALPHA:g}")
    assert lines[0].endswith(f"Got {float(alpha)!r} instead.")


@pytest.mark.parametrize("name", ["evaluate", "multiarm"])
def test_out_of_range_levels_keep_their_messages(name):
    """The floor is checked beside each command's own rule, which still names (0, 1)."""
    got = run_in_process(evalcal_cli.main, "evalcal", name, "--alpha", "1.5")
    assert got.returncode == 2, got.stderr
    assert "(0, 1)" in got.stderr or "> 0 and < 1" in got.stderr, got.stderr


def test_the_floor_itself_runs():
    got = run_in_process(evalcal_cli.main, "evalcal", "evaluate", "--alpha", str(MIN_ALPHA))
    assert got.returncode == 0, got.stderr[-800:]
    assert "99.99% CI" in got.stdout


def test_sign_flip_note_when_no_number_of_seeds_reaches_the_level():
    """The library takes any level in (0, 1) (a Bonferroni level over many pairs is tiny).
    Reference, by hand: the exact sign-flip p with j <= 16 seeds is at least 2 / 2**j, so
    2 / 2**16 = 3.0518e-05 at best; beyond 16 seeds the p is sampled from 10,000 patterns
    and never below 1 / 10,001 = 9.999e-05."""
    note = sign_flip_note(10, 1e-300)
    assert "NEVER be significant" in note and "nor with any number of seeds" in note
    assert f"{2 / 2**16:.4g}" in note
    # a level some number of seeds reaches still names it: 2 / 2**j < 0.001 from j = 11
    assert "k >= 11 seeds are needed" in sign_flip_note(5, 0.001)
