"""Argument validators with one message template.

Every message reads ``The 'NAME' parameter of OWNER must be RULE. Got VALUE instead.``
(``option`` instead of ``parameter`` for command-line options, whose names start with
``--``). Values are shown plainly: ``nan``, ``3``, ``'abc'``, never numpy reprs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def plain(value) -> str:
    """``value`` as a user would write it: numpy scalars unwrapped, strings quoted."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    return repr(value)


def fail(name: str, rule: str, value, owner: str | None = None) -> ValueError:
    """The ``ValueError`` for argument ``name`` breaking ``rule`` (returned, to raise)."""
    kind = "option" if name.startswith("--") else "parameter"
    where = f" of {owner}" if owner else ""
    return ValueError(f"The {name!r} {kind}{where} must be {rule}. Got {plain(value)} instead.")


def _range_rule(low, high, low_open, high_open) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}" if isinstance(low, float)
                     else f"{'>' if low_open else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}" if isinstance(high, float)
                     else f"{'<' if high_open else '<='} {high}")
    return " and ".join(parts)


def _is_number(value) -> bool:
    return (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, (bool, np.bool_)))


def check_number(value, name: str, owner: str | None = None, *, low=None, high=None,
                 low_open=False, high_open=False) -> float:
    """``value`` as a float if it is a finite number in the range, else ``ValueError``."""
    ok = _is_number(value) and math.isfinite(float(value))
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        rule = _range_rule(low, high, low_open, high_open)
        raise fail(name, f"a finite number{' ' + rule if rule else ''}", value, owner)
    return float(value)


def check_int(value, name: str, owner: str | None = None, *, low=None, high=None) -> int:
    """``value`` as an int if it is a whole number in ``[low, high]``, else ``ValueError``.

    A float with a whole value (``30.0``) is accepted: command-line values and JSON often
    carry integers that way.
    """
    ok = _is_number(value) and math.isfinite(float(value)) and float(value).is_integer()
    if ok and low is not None:
        ok = value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        rule = _range_rule(low, high, False, False)
        raise fail(name, f"an integer{' ' + rule if rule else ''}", value, owner)
    return int(value)


def check_bool(value, name: str, owner: str | None = None) -> bool:
    """``value`` if it is ``True`` or ``False`` (numpy bools too), else ``ValueError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise fail(name, "True or False", value, owner)
    return bool(value)


def check_choice(value, name: str, choices: Iterable, owner: str | None = None):
    """``value`` if it is one of ``choices``, else ``ValueError`` listing them."""
    choices = tuple(choices)
    if value not in choices:
        raise fail(name, "one of " + ", ".join(str(c) for c in choices), value, owner)
    return value


def check_alpha(alpha, name: str = "alpha", owner: str | None = None) -> float:
    """A significance level in (0, 1)."""
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise fail(name, "a number in (0, 1)", alpha, owner) from None
    if not 0.0 < alpha < 1.0:
        raise fail(name, "a number in (0, 1)", alpha, owner)
    return alpha
