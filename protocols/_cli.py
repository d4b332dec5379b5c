"""Helpers shared by the command-line tools: one-line errors and ``KEY=VALUE`` options."""

from __future__ import annotations

import ast
import sys


def run_main(main, prog: str) -> None:
    """Run ``main()`` and exit with its code; a ``ValueError`` is one line on stderr, code 2."""
    try:
        code = main()
    except (ValueError, FileNotFoundError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    raise SystemExit(code)


def parse_value(text: str):
    """A command-line value as a Python literal where it is one (``30``, ``0.5``, ``True``)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_key_values(items, option: str) -> dict:
    """Parse ``["a=1", "b=x"]`` into ``{"a": 1, "b": "x"}``.

    Raises
    ------
    ValueError
        Naming ``option`` and the malformed item.
    """
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{option} takes KEY=VALUE items; got {item!r}")
        out[key.strip()] = parse_value(value.strip())
    return out
