"""Argument validation: constraints stated as data, one message template.

Every message reads ``The 'NAME' parameter of OWNER must be RULE. Got VALUE instead.``
(``option`` instead of ``parameter`` for command-line options, whose names start with
``--``), built by :func:`fail` alone. Values are shown plainly: ``nan``, ``3``, ``'abc'``,
never numpy reprs.

Constraints are values, in the manner of scikit-learn's ``validate_params``: an
:class:`Interval` (integers or finite reals, open or closed ends), :class:`Options` (a set of
allowed values), :class:`Rule` (a predicate and the words for it), combined with
:class:`AllOf`, :class:`AnyOf`, :class:`Each` and :class:`Optional`. A caller states a table
``{name: constraint}`` and calls :func:`validate` once; each constraint's ``str`` is the RULE
of the message. Cross-option dependencies ("--percent goes with --from-pilot") are
:class:`Requires` entries checked by :func:`check_requires`. The ``check_*`` helpers are
shorthands over the same constraints.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np


class InvalidParameterError(ValueError):
    """A user's input (an option, a parameter, a file's content) breaks a stated rule.

    The command runner prints it as one line and exits with code 2; any other exception is a
    bug and keeps its traceback.
    """


def plain(value) -> str:
    """``value`` as a user would write it: numpy scalars unwrapped, strings quoted."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    return repr(value)


def fail(name: str, rule: str, value=None, owner: str | None = None, *,
         got: str | None = None) -> InvalidParameterError:
    """The error for argument ``name`` breaking ``rule`` (returned, to raise).

    ``got`` describes what was received in words (``"shape (3,)"``) where the value itself
    is too big to show; otherwise ``value`` is shown plainly. Several names (``("x", "y")``)
    make one message about their relation.
    """
    names = (name,) if isinstance(name, str) else tuple(name)
    kind = "option" if names[0].startswith("--") else "parameter"
    if len(names) > 1:
        kind += "s"
    where = f" of {owner}" if owner else ""
    named = " and ".join(repr(n) for n in names)
    return InvalidParameterError(f"The {named} {kind}{where} must be {rule}. Got "
                                 f"{plain(value) if got is None else got} instead.")


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


class Constraint:
    """What a value may be: :meth:`accepts` tests it, ``str()`` says it in words."""

    def accepts(self, value) -> bool:
        raise NotImplementedError


@dataclass(frozen=True)
class Interval(Constraint):
    """A whole number (``kind="int"``; ``30.0`` counts) or a finite real (``kind="real"``)
    between ``low`` and ``high`` (``None``: unbounded), each end closed unless ``*_open``."""

    kind: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def accepts(self, value) -> bool:
        ok = _is_number(value) and math.isfinite(float(value))
        if ok and self.kind == "int":
            ok = float(value).is_integer()
        if ok and self.low is not None:
            ok = value > self.low if self.low_open else value >= self.low
        if ok and self.high is not None:
            ok = value < self.high if self.high_open else value <= self.high
        return bool(ok)

    def __str__(self) -> str:
        rule = _range_rule(self.low, self.high, self.low_open, self.high_open)
        what = "an integer" if self.kind == "int" else "a finite number"
        return f"{what}{' ' + rule if rule else ''}"


@dataclass(frozen=True)
class Options(Constraint):
    """One of ``options``; ``text`` replaces the default words ("one of a, b")."""

    options: tuple
    text: str = ""

    def accepts(self, value) -> bool:
        try:
            return value in self.options
        except TypeError:  # an unhashable or incomparable value is not an option
            return False

    def __str__(self) -> str:
        return self.text or "one of " + ", ".join(str(o) for o in self.options)


@dataclass(frozen=True)
class Rule(Constraint):
    """Any predicate, with the words that state it."""

    test: Callable[[object], bool]
    text: str

    def accepts(self, value) -> bool:
        try:
            return bool(self.test(value))
        except (TypeError, ValueError):
            return False

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Each(Constraint):
    """Every element of a sequence satisfies ``constraint``."""

    constraint: Constraint

    def accepts(self, value) -> bool:
        return all(self.constraint.accepts(v) for v in value)

    def __str__(self) -> str:
        return f"values that are each {self.constraint}"


@dataclass(frozen=True)
class Optional(Constraint):
    """``None``, or a value satisfying ``constraint`` (the message names the latter)."""

    constraint: Constraint

    def accepts(self, value) -> bool:
        return value is None or self.constraint.accepts(value)

    def __str__(self) -> str:
        return str(self.constraint)


class AnyOf(Constraint):
    """A value satisfying at least one of the constraints ("A or B")."""

    def __init__(self, *constraints: Constraint):
        self.constraints = constraints

    def accepts(self, value) -> bool:
        return any(c.accepts(value) for c in self.constraints)

    def __str__(self) -> str:
        return " or ".join(str(c) for c in self.constraints)


class AllOf(Constraint):
    """A value satisfying every constraint, checked in order; the message states the first
    one broken."""

    def __init__(self, *constraints: Constraint):
        self.constraints = constraints

    def accepts(self, value) -> bool:
        return self.broken(value) is None

    def broken(self, value) -> Constraint | None:
        for c in self.constraints:
            if not c.accepts(value):
                return c
        return None

    def __str__(self) -> str:
        return " and ".join(str(c) for c in self.constraints)


def validate(values: dict, constraints: dict, owner: str | None = None) -> None:
    """Check ``values[name]`` against ``constraints[name]`` for every name, in the table's
    order; ``ValueError`` (:func:`fail`) for the first value that breaks its rule."""
    for name, constraint in constraints.items():
        value = values[name]
        if isinstance(constraint, AllOf):
            broken = constraint.broken(value)
            if broken is not None:
                raise fail(name, str(broken), value, owner)
        elif not constraint.accepts(value):
            raise fail(name, str(constraint), value, owner)


@dataclass(frozen=True)
class Requires:
    """Option ``name`` (when ``used``) needs ``needs`` (when ``holds``); ``why`` says why."""

    name: str
    used: Callable[[object], bool]
    needs: str
    holds: Callable[[object], bool]
    why: str = ""


def check_requires(obj, rules) -> None:
    """``ValueError`` for the first :class:`Requires` rule ``obj`` breaks:
    "NAME [WHY; it ]goes with NEEDS"."""
    for r in rules:
        if r.used(obj) and not r.holds(obj):
            lead = f"{r.name} {r.why}; it" if r.why else r.name
            raise InvalidParameterError(f"{lead} goes with {r.needs}")


def check_number(value, name: str, owner: str | None = None, *, low=None, high=None,
                 low_open=False, high_open=False) -> float:
    """``value`` as a float if it is a finite number in the range, else ``ValueError``."""
    validate({name: value}, {name: Interval("real", low, high, low_open, high_open)}, owner)
    return float(value)


def check_int(value, name: str, owner: str | None = None, *, low=None, high=None) -> int:
    """``value`` as an int if it is a whole number in ``[low, high]``, else ``ValueError``.

    A float with a whole value (``30.0``) is accepted: command-line values and JSON often
    carry integers that way.
    """
    validate({name: value}, {name: Interval("int", low, high)}, owner)
    return int(value)


def check_bool(value, name: str, owner: str | None = None) -> bool:
    """``value`` if it is ``True`` or ``False`` (numpy bools too), else ``ValueError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise fail(name, "True or False", value, owner)
    return bool(value)


def check_choice(value, name: str, choices: Iterable, owner: str | None = None):
    """``value`` if it is one of ``choices``, else ``ValueError`` listing them."""
    validate({name: value}, {name: Options(tuple(choices))}, owner)
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
