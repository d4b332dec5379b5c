"""No command runs an abbreviated option as the full one (issue 47 item 4).

argparse's default ``allow_abbrev=True`` ran ``--leader`` as ``--leaderboard`` and ``--js`` as
``--json``: a typo ran something the user did not write, and an option added later could
change what a saved command line means. Every parser of every command (each ``evalcal``
subcommand, ``evalcal pools``' subcommands, the ``python -m`` forms the front door does not
list) is asked for every long option it has: a unique prefix of it must be refused in one
line that names the prefix, exit status 2.
"""

from __future__ import annotations

import argparse
import importlib

import pytest
from in_process import run_in_process

import evalcal_cli
from sim.llm_pools import cli as pools_cli

#: commands with a parser that the front door does not list: (how a user types it, module)
PYTHON_M_ONLY = (("python -m sim.decisions.streaming", "sim.decisions.streaming"),)


def _commands():
    """(id, argv prefix, main, the module whose ``build_parser`` the command parses with)."""
    for name, sub in evalcal_cli.SUBCOMMANDS.items():
        if name == "pools":
            for inner, (module, _) in pools_cli.SUBCOMMANDS.items():
                yield f"pools {inner}", ["pools", inner], evalcal_cli.main, module
        else:
            yield name, [name], evalcal_cli.main, sub.module
    for shown, module in PYTHON_M_ONLY:
        yield shown, [], None, module


COMMANDS = list(_commands())


def _required(parser: argparse.ArgumentParser) -> list[str]:
    """Values for the parser's required arguments, so that argparse gets as far as the
    unrecognised ones (it names missing required arguments first)."""
    argv = []
    for action in parser._actions:
        if not action.required:
            continue
        value = str(sorted(action.choices)[0]) if action.choices else "1"
        count = action.nargs if isinstance(action.nargs, int) else 1
        argv += [*action.option_strings[:1], *[value] * count]
    return argv


def _prefixes(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    """(option, its shortest unique prefix) for every long option that has one: a prefix of
    no other option and not itself an option."""
    flags = [f for a in parser._actions for f in a.option_strings if f.startswith("--")]
    out = []
    for flag in flags:
        if flag == "--help":
            continue
        for end in range(3, len(flag)):
            prefix = flag[:end]
            if sum(f.startswith(prefix) for f in flags) == 1:
                out.append((flag, prefix))
                break
    return out


def test_every_command_is_asked():
    """The list is complete: every subcommand of the front door and of ``evalcal pools``."""
    names = {c[0] for c in COMMANDS}
    assert set(evalcal_cli.SUBCOMMANDS) - {"pools"} <= names
    assert {f"pools {n}" for n in pools_cli.SUBCOMMANDS} <= names


@pytest.mark.parametrize(("name", "head", "main", "module"), COMMANDS,
                         ids=[c[0] for c in COMMANDS])
def test_unique_prefixes_are_refused(name, head, main, module):
    module = importlib.import_module(module)
    parser = module.build_parser()
    assert parser.allow_abbrev is False
    prefixes = _prefixes(parser)
    assert prefixes, f"{name}: no long option with a unique prefix to try"
    required = _required(parser)
    for flag, prefix in prefixes:
        if main is None:
            got = run_in_process(module.main, name, *required, prefix)
        else:
            got = run_in_process(main, "evalcal", *head, *required, prefix)
        lines = got.stderr.strip().splitlines()
        assert got.returncode == 2, (name, flag, prefix, got.stderr[-500:])
        assert len(lines) == 1, (name, flag, prefix, got.stderr[-500:])
        assert f"unrecognized arguments: {prefix}" in lines[0], (name, flag, lines[0])
