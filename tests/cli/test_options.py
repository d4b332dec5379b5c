"""Options declared once (:mod:`evalcal_core.options`): the parser, the config, the checks and
the command line are all derived from the field declarations."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from evalcal_core.cli import ArgumentParser
from evalcal_core.options import (
    ALL_CORES,
    Execution,
    add_options,
    alpha_option,
    check_options,
    config_from_args,
    jobs_option,
    option,
    out_option,
    seed_option,
    sims_option,
    to_argv,
)
from evalcal_core.validate import Each, Interval, InvalidParameterError


@dataclass(frozen=True)
class Toy:
    k: tuple = option("--k", nargs="+", kind=int, always=True, help="seeds",
                      constraint=Each(Interval("int", 1, 100)))
    sims: int = sims_option(500)
    seed: int = seed_option()
    alpha: float = alpha_option()
    jobs: int = jobs_option()
    out: Path = out_option(Path("toy_out"))
    plot: bool = option("--no-plot", True, switch=True, in_argv=False, help="no figure")
    mde: bool = option("--mde", False, switch=True, help="search the mde", group="searches")
    quiet: bool = option("--quiet", False, switch=True, in_argv=False, help="no table")

    def __post_init__(self):
        check_options(self)


def _parse(argv):
    parser = add_options(ArgumentParser(prog="toy"), Toy)
    return config_from_args(Toy, parser.parse_args(argv))


def test_parser_defaults_equal_the_config_defaults():
    parsed = _parse(["--k", "3"])
    assert parsed == Toy(k=(3,))
    assert parsed.jobs == ALL_CORES and parsed.plot and not parsed.mde


def test_to_argv_round_trips_and_leaves_out_what_changes_no_number():
    config = Toy(k=(3, 10), sims=100, alpha=0.1, jobs=2, plot=False, mde=True)
    argv = to_argv(config)
    assert argv == ["--k", "3", "10", "--sims", "100", "--seed", "0", "--alpha", "0.1",
                    "--mde"]
    again = _parse(argv)
    assert again == Toy(k=(3, 10), sims=100, alpha=0.1, mde=True)


@pytest.mark.parametrize(("argv", "message"), [
    (["--k", "0"], r"^The '--k' option must be values that are each an integer >= 1 and <= 100\. "
                   r"Got \[0\] instead\.$"),
    (["--k", "3", "--alpha", "1.5"], r"^The '--alpha' option must be a finite number > 0 and "
                                     r"< 1\. Got 1\.5 instead\.$"),
    (["--k", "3", "--sims", "0"], r"^The '--sims' option must be an integer >= 1"),
    (["--k", "3", "--jobs", "-1"], r"^The '--jobs' option must be an integer >= 1"),
    (["--k", "3", "--seed", "-2"], r"^The '--seed' option must be an integer >= 0"),
])
def test_bad_values_are_one_line_naming_the_option(argv, message):
    with pytest.raises(InvalidParameterError, match=message):
        _parse(argv)


def test_help_lists_every_option_in_its_group(capsys):
    parser = add_options(ArgumentParser(prog="toy"), Toy)
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    text = capsys.readouterr().out
    for flag in ("--k", "--sims", "--seed", "--alpha", "--jobs", "--out", "--no-plot",
                 "--mde", "--quiet"):
        assert flag in text
    assert "searches:" in text and text.index("searches:") < text.index("search the mde")


def test_a_required_option_is_required(capsys):
    parser = add_options(ArgumentParser(prog="toy"), Toy)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args([])
    assert exc.value.code == 2
    assert "--k" in capsys.readouterr().err


def test_execution_collects_the_shared_options():
    config = Toy(k=(3,), sims=100, seed=7, jobs=2, quiet=True)
    run = Execution.of(config)
    assert run == Execution(sims=100, alpha=0.05, seed=7, jobs=2, out=Path("toy_out"),
                            progress=False)
    assert Execution.of(config, jobs=1).jobs == 1
