"""The command-line runner: ``main(argv) -> int``; an error is one line on stderr, exit 2."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
from dataclasses import dataclass

from evalcal_core.validate import InvalidParameterError

#: the name a command was invoked by through the ``evalcal`` front door (``evalcal plan``)
_INVOKED_AS: list[str] = []


@contextlib.contextmanager
def invoked_as(name: str):
    """Within the block, commands name themselves ``name`` in usage lines and errors (the
    ``evalcal`` front door runs ``evalcal plan`` as ``sim.plan``'s ``main``)."""
    _INVOKED_AS.append(name)
    try:
        yield
    finally:
        _INVOKED_AS.pop()


def prog_name(default: str) -> str:
    """The name the user typed: the front door's ``evalcal NAME``, else ``default``
    (``python -m package.module``)."""
    return _INVOKED_AS[-1] if _INVOKED_AS else default


#: a Sphinx role, ``:func:`name``` or ``:py:meth:`~a.b.name```: the name alone is shown
_ROLE = re.compile(r":(?:py:)?[a-z]+:`(~?)([^`<]*?)(?:\s*<[^`>]*>)?`")


def _role_text(match: re.Match) -> str:
    # "~a.b.name" shows "name", as Sphinx renders it
    return match.group(2).rsplit(".", 1)[-1] if match.group(1) else match.group(2)


def plain_text(text: str) -> str:
    """``text`` without reST markup a terminal would show as is: double backticks and Sphinx
    roles (``:func:`sim.plan.main``` reads ``sim.plan.main``)."""
    return _ROLE.sub(_role_text, text).replace("``", "")


def help_text(doc: str | None) -> str | None:
    """A module docstring as ``--help`` text: reST markup removed (:func:`plain_text`);
    ``None`` when docstrings are stripped (``python -OO``)."""
    return None if doc is None else plain_text(doc).strip()


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors are one stderr line, exit code 2.

    argparse prints the usage block before the message; a script or a test reading stderr
    then has to find the message among the usage lines. ``--help`` still shows the usage.
    The program is named as the user called it (``evalcal NAME`` through the front door), and
    descriptions lose their reST backticks.

    Abbreviated options are refused (``allow_abbrev=False``): argparse would run ``--leader``
    as ``--leaderboard`` and ``--js`` as ``--json``, so a typo or a later option that makes a
    prefix ambiguous silently changes what a saved command line means.
    """

    def __init__(self, *args, prog=None, description=None, **kwargs):
        if prog is not None:
            prog = prog_name(prog)
        kwargs["allow_abbrev"] = False
        super().__init__(*args, prog=prog, description=help_text(description), **kwargs)
        #: callables run on the parsed namespace (:func:`evalcal_core.options.add_options`
        #: adds one per declared constraint)
        self.checks: list = []

    def format_help(self) -> str:
        """argparse's help, with reST markup removed from the description, the epilog and
        every option's help (however they were set) before the lines are wrapped."""
        self.description = help_text(self.description)
        if self.epilog is not None:
            self.epilog = plain_text(self.epilog)
        for action in self._actions:
            if isinstance(action.help, str):
                action.help = plain_text(action.help)
        return super().format_help()

    def parse_args(self, args=None, namespace=None):
        """argparse's namespace, after every check in :attr:`checks` (an
        :class:`~evalcal_core.validate.InvalidParameterError` is the one-line error): a value
        is refused before the command locks a folder or starts workers, also where the
        command never builds a checked config from it."""
        parsed = super().parse_args(args, namespace)
        for check in self.checks:
            check(parsed)
        return parsed

    def error(self, message):
        print(f"{self.prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
        raise SystemExit(2)


def run_main(main, prog: str, argv=None) -> None:
    """Run ``main(argv)`` and exit with its code.

    An :class:`~evalcal_core.validate.InvalidParameterError` (the user's input breaks a stated
    rule) or an ``OSError`` (unreadable file, full disk, permission denied) is one line
    ``PROG: error: MESSAGE`` on stderr and exit code 2; Ctrl-C is exit code 130. Any other
    exception, a plain ``ValueError`` from numpy or pandas included, is a bug and keeps its
    traceback.
    """
    raise SystemExit(call_main(main, prog, argv))


def call_main(main, prog: str, argv=None) -> int:
    """``main(argv)``'s exit code, with the errors of :func:`run_main` printed as one line."""
    prog = prog_name(prog)
    try:
        return main(argv)
    except (InvalidParameterError, OSError) as exc:
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{prog}: error: out of memory; use fewer simulations or questions per cell",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


@dataclass(frozen=True)
class Completed:
    """Like ``subprocess.CompletedProcess``: exit code and the text of both streams."""

    returncode: int
    stdout: str
    stderr: str


def run_in_process(main, prog: str, *argv) -> Completed:
    """A command run in this process as its console entry point runs it: ``main(argv)``
    through :func:`call_main` with stdout and stderr captured; argparse's ``SystemExit``
    (usage errors, ``--help``) gives its code. The tests and the decision grid's end-to-end
    check (:mod:`sim.end_to_end`) run commands this way (a subprocess adds only the
    interpreter's start)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = call_main(main, prog, [str(a) for a in argv])
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code
    return Completed(code, out.getvalue(), err.getvalue())


def one_line(exc: BaseException) -> str:
    """The exception's message on one line (OS errors say what failed on which file)."""
    if isinstance(exc, IsADirectoryError) and exc.filename is not None:
        text = f"{exc.filename} is a directory, not a file"
    elif isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())
