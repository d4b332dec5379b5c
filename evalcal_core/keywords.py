"""Keyword arguments as a command's options: how the Python functions (``evalcal.compare``,
``evalcal.plan``) reuse a command's parser, so that a value is checked, and refused, exactly
as on the command line. The keywords are the fields of the command's options dataclass, whose
declarations (:mod:`evalcal_core.options`) name the flags."""

from __future__ import annotations

import contextlib
import io

from .options import declared
from .validate import InvalidParameterError


def option_flags(config_cls) -> dict[str, str]:
    """``{keyword: --option}`` of every option declared on ``config_cls``
    (:func:`~evalcal_core.options.option`): the keyword is the field's name (``--k-max`` ->
    ``k_max``, ``--param`` -> ``generator_param``)."""
    return {f.name: opt.flag for f, opt in declared(config_cls)}


def keywords_to_argv(options: dict, flags: dict[str, str], caller: str) -> list[str]:
    """The command-line arguments that say what ``options`` say.

    ``None`` and ``False`` leave an option out, ``True`` gives the bare flag, a list or tuple
    its items, a dict ``KEY=VALUE`` items; anything else its ``str``. A keyword that is not in
    ``flags`` is an :class:`~evalcal_core.validate.InvalidParameterError` naming the allowed
    ones.
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
            argv += [flag, *(f"{k}={v}" for k, v in value.items())]
        elif isinstance(value, (list, tuple)):
            argv += [flag, *(str(v) for v in value)]
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
