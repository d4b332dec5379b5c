"""Keyword arguments as a command's options: how the Python functions (``evalcal.compare``,
``evalcal.plan``) reuse a command's parser, so that a value is checked, and refused, exactly
as on the command line. The keywords are the fields of the command's options dataclass, whose
declarations (:mod:`evalcal_core.options`) name the flags."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np

from .options import Option, declared
from .validate import InvalidParameterError, fail


def option_flags(config_cls) -> dict[str, str]:
    """``{keyword: --option}`` of every option declared on ``config_cls``
    (:func:`~evalcal_core.options.option`): the keyword is the field's name (``--k-max`` ->
    ``k_max``, ``--param`` -> ``generator_param``)."""
    return {f.name: opt.flag for f, opt in declared(config_cls)}


def keywords_to_argv(options: dict, flags: dict[str, str], caller: str, *,
                     repeated=()) -> list[str]:
    """The command-line arguments that say what ``options`` say.

    ``None`` and ``False`` leave an option out, ``True`` gives the bare flag, a list or tuple
    its items (after one flag, or each after its own for the keywords in ``repeated``: an
    ``action="append"`` option such as ``--arm``), a dict ``KEY=VALUE`` items; anything else
    its ``str``. A keyword that is not in ``flags`` is an
    :class:`~evalcal_core.validate.InvalidParameterError` naming the allowed ones.
    """
    unknown = sorted(set(options) - set(flags))
    if unknown:
        raise InvalidParameterError(f"{caller}() got unknown option(s) {', '.join(unknown)}; "
                                    f"allowed: {', '.join(flags)}")
    argv = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = flags[key]
        if value is True:
            argv.append(flag)
        elif isinstance(value, dict):
            items = [f"{k}={v}" for k, v in value.items()]
            argv += ([a for item in items for a in (flag, item)] if key in repeated
                     else [flag, *items])
        elif isinstance(value, (list, tuple)):
            argv += ([a for v in value for a in (flag, str(v))] if key in repeated
                     else [flag, *(str(v) for v in value)])
        else:
            argv += [flag, str(value)]
    return argv


def parse_argv(parser, argv: list[str], caller: str):
    """``parser.parse_args(argv)``, with argparse's own usage errors (which print and exit)
    raised as one-line :class:`~evalcal_core.validate.InvalidParameterError` instead."""
    message = io.StringIO()
    try:
        with contextlib.redirect_stderr(message):
            return parser.parse_args(argv)
    except SystemExit as exc:
        text = " ".join(message.getvalue().split()).replace(f"{parser.prog}: error: ", "")
        raise InvalidParameterError(f"{caller}(): {text}") from exc


def _typed(key: str, value, f, opt: Option, caller: str):
    """One keyword's value as its declaration reads it, or the error naming the keyword."""
    def refuse(rule):
        text = repr(value)
        # a frame or an array prints over many lines: its type says enough
        shown = (f"{text} (a {type(value).__name__})" if "\n" not in text and len(text) <= 200
                 else f"a value of type {type(value).__name__}")
        return fail(key, rule, owner=f"{caller}()", got=shown)

    if opt.switch:
        if not isinstance(value, (bool, np.bool_)):
            raise refuse("True or False")
        return bool(value)
    if opt.nargs is not None or opt.action == "append":
        items = value
        if isinstance(value, dict):
            items = tuple(f"{k}={v}" for k, v in value.items())
        elif isinstance(value, (str, Path)) or not isinstance(value, (list, tuple)):
            items = (value,)
        if opt.nargs not in (None, "+", "*") and len(items) != opt.nargs:
            raise refuse(f"{opt.nargs} values")
        if opt.nargs == "+" and not items:
            raise refuse("one value or more")
        return tuple(_scalar(key, v, opt, refuse) for v in items)
    return _scalar(key, value, opt, refuse)


def _scalar(key, value, opt: Option, refuse):
    if opt.kind in (int, float):
        if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)):
            raise refuse("an integer" if opt.kind is int else "a number")
        if opt.kind is int:
            # exact for any int (a float round trip would refuse ints above 2**53)
            if isinstance(value, (int, np.integer)):
                return int(value)
            if not float(value).is_integer():
                raise refuse("an integer")
            return int(value)
        return float(value)
    if isinstance(value, Path):
        value = str(value)
    if not isinstance(value, str):
        # a Path is read as its string above: the rule says so where a path is meant
        raise refuse(f"a string: one of {', '.join(map(str, opt.choices))}" if opt.choices
                     else "a string or a path")
    if opt.choices is not None and value not in opt.choices:
        raise refuse(f"one of {', '.join(map(str, opt.choices))}")
    # a folder option holds what argparse gives it (``--out``'s ``type=Path``)
    return Path(value) if opt.kind is Path else value


def typed_keywords(config_cls, options: dict, caller: str, *, leave_out=()) -> dict:
    """``options`` as the declarations of ``config_cls`` read them: each keyword a field
    declared with :func:`~evalcal_core.options.option` (not in ``leave_out``), typed as
    :func:`options_from_keywords` says (a number option takes a number, not a string or a
    bool; a switch ``True``/``False``); ``None`` stays ``None``. The values are not checked
    against their constraints: the config does that when it is built.

    Raises
    ------
    InvalidParameterError
        An unknown keyword (naming the allowed ones), or a value of the wrong type, in one
        line naming the keyword and the value.
    """
    fields_ = {f.name: (f, opt) for f, opt in declared(config_cls) if f.name not in leave_out}
    unknown = sorted(set(options) - set(fields_))
    if unknown:
        raise InvalidParameterError(f"{caller}() got unknown option(s) {', '.join(unknown)}; "
                                    f"allowed: {', '.join(fields_)}")
    return {key: (None if value is None else _typed(key, value, *fields_[key], caller))
            for key, value in options.items()}


def options_from_keywords(config_cls, options: dict, caller: str, *, leave_out=(),
                          fixed: dict | None = None):
    """The options dataclass ``config_cls`` filled from keyword arguments, without argv.

    Each keyword is a field declared with :func:`~evalcal_core.options.option` (not in
    ``leave_out``) and is read by its declaration: a switch takes ``True``/``False``, a
    number option a number (not a string, not a bool), a choice one of its choices, a
    multi-value option a list, tuple or single value (a dict gives ``KEY=VALUE`` items).
    The dataclass then checks every constraint as the command does; its messages, which
    name the command's flags, are reworded to name the keywords (:func:`keyword_message`).
    ``fixed`` sets fields the caller decides (never keywords: they are in ``leave_out``).

    Raises
    ------
    InvalidParameterError
        One line naming the keyword, the value and what is allowed.
    """
    values = typed_keywords(config_cls, options, caller, leave_out=leave_out)
    with keyword_errors(config_cls, caller):
        return config_cls(**values, **(fixed or {}))


@contextlib.contextmanager
def keyword_errors(config_cls, caller: str):
    """Re-raise a one-line error that names the command's flags naming the keywords
    instead (:func:`keyword_message`)."""
    try:
        yield
    except InvalidParameterError as exc:
        raise InvalidParameterError(keyword_message(str(exc), config_cls, caller)) from None


def keyword_message(text: str, config_cls, caller: str) -> str:
    """``text`` with every flag of ``config_cls`` named as its keyword: ``The '--margin'
    option must be ...`` becomes ``The 'margin' parameter of compare() must be ...`` and a
    bare ``--claim`` becomes ``claim``."""
    words = {opt.flag: f.name for f, opt in declared(config_cls)}

    def keyword(match):
        return words.get(match.group(0), match.group(0))

    text = re.sub(r"'(--[a-z][a-z0-9-]*)'( and '(--[a-z][a-z0-9-]*)')? options?",
                  lambda m: m.group(0).replace(" options", f" parameters of {caller}()")
                  .replace(" option", f" parameter of {caller}()"), text)
    return re.sub(r"--[a-z][a-z0-9-]*", keyword, text)
