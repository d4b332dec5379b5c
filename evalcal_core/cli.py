"""The command-line runner: ``main(argv) -> int``; an error is one line on stderr, exit 2."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
import textwrap
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


#: reST strong emphasis, ``**holds**``: the words alone are shown
_STRONG = re.compile(r"\*\*(\S(?:.*?\S)?)\*\*")


def plain_text(text: str) -> str:
    """``text`` without inline reST markup a terminal would show as is: double backticks,
    strong emphasis and Sphinx roles (``:func:`sim.plan.main``` reads ``sim.plan.main``)."""
    return _STRONG.sub(r"\1", _ROLE.sub(_role_text, text).replace("``", ""))


def help_text(doc: str | None) -> str | None:
    """A module docstring as ``--help`` text: inline reST markup removed (:func:`plain_text`),
    its blocks kept for :class:`PlainHelpFormatter`; ``None`` when docstrings are stripped
    (``python -OO``)."""
    return None if doc is None else plain_text(doc).strip()


#: a rule of a reST simple table: columns of ``=`` separated by spaces
_TABLE_RULE = re.compile(r"^=+(?: +=+)*\s*$")
#: the underline of a reST section title: one punctuation character repeated
_UNDERLINE = re.compile(r"^([-=~^\"'`#*+])\1{2,}\s*$")
#: the marker of a bullet or enumerated list item, with the spaces after it
_ITEM = re.compile(r"^(?:[*+-]|\d+[.)])\s+")


@dataclass(frozen=True)
class HelpBlock:
    """One block of a help text: ``kind`` is ``"paragraph"`` (wrapped), ``"item"`` (a list
    item, wrapped under its marker) or ``"lines"`` (shown line by line: a literal block, a
    table, an indented block laid out by hand); ``indent`` is in columns."""

    kind: str
    lines: tuple[str, ...]
    indent: int = 0
    #: an item right under the previous one (no blank line between): the same list
    tight: bool = False


def _indented(line: str) -> bool:
    return bool(line.strip()) and line[0].isspace()


def help_blocks(text: str) -> list[HelpBlock]:
    """The blocks of a reST text as a terminal shows them.

    A paragraph ending in ``::`` loses it (``Example::`` reads ``Example:``, a lone ``::``
    vanishes) and the indented block after it is a literal block, kept line by line, as is an
    indented block laid out by hand. A simple table keeps its rows as laid out; its top and
    bottom ``====`` rules are dropped and the rule under a header row becomes dashes. List
    items are wrapped one by one under their marker; other paragraphs are wrapped whole.
    """
    # a module docstring or a composed string: not indented as a whole, or dedented whole
    lines = textwrap.dedent(text.expandtabs()).strip("\n").splitlines()
    blocks: list[HelpBlock] = []
    literal_next = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if _indented(line):
            # a literal block runs on over blank lines while its lines stay indented
            start = i
            while i < len(lines) and (not lines[i].strip() or lines[i][0].isspace()):
                i += 1
            body = textwrap.dedent("\n".join(lines[start:i]).rstrip()).splitlines()
            blocks.append(HelpBlock("lines", tuple(s.rstrip() for s in body),
                                    4 if literal_next else 2))
            literal_next = False
            continue
        literal_next = False
        if (i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1])
                and len(lines[i + 1].strip()) >= len(line.strip())):
            # a section title: underlined with dashes, whatever its reST adornment
            title = line.strip()
            blocks.append(HelpBlock("lines", (title, "-" * len(title))))
            i += 2
            continue
        if _TABLE_RULE.match(line):
            # rows until a rule that ends the table (followed by a blank line or the end)
            rows, i = [], i + 1
            while i < len(lines):
                row = lines[i]
                i += 1
                if _TABLE_RULE.match(row):
                    if i >= len(lines) or not lines[i].strip():
                        break
                    rows.append(row.replace("=", "-").rstrip())
                elif row.strip():
                    rows.append(row.rstrip())
            blocks.append(HelpBlock("lines", tuple(rows), 2))
            continue
        start = i
        i += 1
        if _ITEM.match(line):
            # the item's continuation lines are indented under its text
            while i < len(lines) and _indented(lines[i]):
                i += 1
            tight = bool(blocks) and blocks[-1].kind == "item" and bool(lines[start - 1].strip())
            blocks.append(HelpBlock("item", tuple(lines[start:i]), tight=tight))
            continue
        while i < len(lines) and lines[i].strip() and not _TABLE_RULE.match(lines[i]):
            i += 1
        words = " ".join(" ".join(lines[start:i]).split())
        if words.endswith("::"):
            literal_next = True
            # reST: "Example::" shows "Example:", "Example ::" shows "Example", "::" nothing
            words = words[:-1] if not words[:-2].endswith(" ") else words[:-2].rstrip()
            words = "" if words == ":" else words
        if words:
            blocks.append(HelpBlock("paragraph", (words,)))
    return blocks


def render_help(text: str, width: int, indent: str = "") -> str:
    """``text`` (reST) as terminal lines at most ``width`` columns wide where they can be
    wrapped (:func:`help_blocks`; literal lines and table rows are never broken), each
    block after a blank line but a list's items one under the other."""
    width = max(width, 20)
    out = []
    for block in help_blocks(text):
        if block.tight:
            out.append("\n")  # a list's items on consecutive lines
        elif out:
            out.append("\n\n")
        if block.kind == "lines":
            pad = indent + " " * block.indent
            out.append("\n".join((pad + s).rstrip() for s in block.lines))
        elif block.kind == "item":
            first = block.lines[0]
            marker = _ITEM.match(first).group(0)
            words = " ".join(" ".join([first[len(marker):], *block.lines[1:]]).split())
            out.append(textwrap.fill(words, width, initial_indent=indent + marker,
                                     subsequent_indent=indent + " " * len(marker),
                                     break_on_hyphens=False))
        else:
            # an option name is never broken at its hyphens (--llm-/pools)
            out.append(textwrap.fill(block.lines[0], width, initial_indent=indent,
                                     subsequent_indent=indent, break_on_hyphens=False))
    return "".join(out)


class PlainHelpFormatter(argparse.HelpFormatter):
    """argparse's formatter whose description and epilog keep their reST blocks
    (:func:`render_help`): paragraphs wrapped one by one instead of run together, example
    command lines and table rows on lines of their own."""

    def _fill_text(self, text, width, indent):
        return render_help(text, width, indent)


#: a negative number as a value, exponent forms included ('-1e0', '-2.5E-3', '-.5')
NEGATIVE_NUMBER = re.compile(r"^-(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
#: the actions that may be given more than once (they add up, or print and exit)
_REPEATABLE = (argparse._AppendAction, argparse._AppendConstAction, argparse._CountAction,
               argparse._ExtendAction, argparse._HelpAction, argparse._VersionAction)


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors are one stderr line, exit code 2.

    argparse prints the usage block before the message; a script or a test reading stderr
    then has to find the message among the usage lines. ``--help`` still shows the usage.
    The program is named as the user called it (``evalcal NAME`` through the front door), and
    descriptions lose their reST markup while keeping their paragraphs, literal blocks and
    tables (:class:`PlainHelpFormatter`).

    Abbreviated options are refused (``allow_abbrev=False``): argparse would run ``--leader``
    as ``--leaderboard`` and ``--js`` as ``--json``, so a typo or a later option that makes a
    prefix ambiguous silently changes what a saved command line means.
    """

    def __init__(self, *args, prog=None, description=None, **kwargs):
        if prog is not None:
            prog = prog_name(prog)
        kwargs["allow_abbrev"] = False
        # a parser that lays out its own lines keeps its formatter
        kwargs.setdefault("formatter_class", PlainHelpFormatter)
        super().__init__(*args, prog=prog, description=help_text(description), **kwargs)
        #: callables run on the parsed namespace (:func:`evalcal_core.options.add_options`
        #: adds one per declared constraint)
        self.checks: list = []
        # argparse takes only -N and -N.N for negative numbers: '-1e0' or '-1e308' was read as
        # an option, and '--metric-range -1e0 1' failed with "expected 2 arguments"
        self._negative_number_matcher = NEGATIVE_NUMBER

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

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, after refusing an option that takes a value given twice (argparse keeps
        the last silently: ``--alpha 0.05 --alpha 0.2`` ran at 0.2)."""
        args = list(sys.argv[1:] if args is None else args)
        self._refuse_repeats(args)
        return super().parse_known_args(args, namespace)

    def _refuse_repeats(self, args: list) -> None:
        seen: dict = {}
        for i, token in enumerate(args):
            if token == "--":
                break
            if not token.startswith("-") or NEGATIVE_NUMBER.match(token):
                continue
            flag, eq, value = token.partition("=")
            action = self._option_string_actions.get(flag)
            if action is None or action.nargs == 0 or isinstance(action, _REPEATABLE):
                continue
            if not eq:
                value = args[i + 1] if i + 1 < len(args) else ""
            if action.dest in seen:
                first_flag, first = seen[action.dest]
                many = action.nargs in ("+", "*")
                how = (f", all its values after it ('{flag} A B')" if many else "")
                raise InvalidParameterError(
                    f"The {flag!r} option must be given once{how} (a second {flag} would "
                    f"silently replace the first). Got {first_flag} {first}, then {flag} "
                    f"{value} instead.")
            seen[action.dest] = (flag, value)

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
        message = " ".join(str(message).split())
        counted = re.fullmatch(r"argument (\S+?)(?:/\S+)?: expected (\d+) arguments", message)
        if counted:
            # '--opt=A B' holds one value: say how the values are given, not only their count
            flag, count = counted.groups()
            message += (f" (the {flag} option takes {count} values separated by spaces, "
                        f"'{flag} A B'; '{flag}=A' holds one)")
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


#: what asks for less memory, by the command's last name (``python -m sim.calibrate`` and
#: ``evalcal calibrate`` are both ``calibrate``, ``evalcal decision-grid`` is
#: ``decision_grid``); a command not named here gets
#: :data:`MEMORY_DEFAULT`
MEMORY_HINTS = {
    "calibrate": "fewer --sims per cell, a smaller --k or --k-max, or fewer --jobs",
    "plan": "fewer --sims or a smaller --k-max",
    "evaluate": "a smaller results file (fewer arms, runs or questions) or --correction holm "
                "in place of maxt",
    "decision_grid": "fewer --sims or --max-sims, fewer --families, or fewer --jobs",
    "design_check": "fewer --sims, questions or repeats, or fewer --jobs",
    "harness_defaults": "fewer --sims, questions or repeats, or fewer --jobs",
    "multiarm": "fewer --sims or --max-sims",
    "export": "a smaller input (fewer logs, arms or questions)",
    "from_logs": "fewer or smaller logs",
    "gpu_batch": "a smaller plan or --workers",
    "pack_data": "a --data-root with fewer images (the pack is built in memory)",
}
#: the hint of a command with no entry in :data:`MEMORY_HINTS`
MEMORY_DEFAULT = "ask for less work (fewer simulations or workers) or give a smaller input"


def memory_hint(prog: str) -> str:
    """What the command ``prog`` (as typed) can be asked for less of, in its own options."""
    last = prog.split()[-1].rsplit(".", 1)[-1].replace("-", "_") if prog.split() else ""
    return MEMORY_HINTS.get(last, MEMORY_DEFAULT)


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
        print(f"{prog}: error: out of memory; {memory_hint(prog)}", file=sys.stderr)
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
