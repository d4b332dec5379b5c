"""Every keyword of the Python API is typed and checked by the declaration its command option
has (issue 47 item 4), in one line naming the keyword, the value and what is allowed.

``evalcal.calibrate(effects="x")`` reached the simulation as a ``TypeError``;
``evalcal.plan(effect="3")`` was handed to the parser as text and accepted, and
``plan(power=True)`` read "expected one argument". The keywords of :func:`evalcal.compare`,
:func:`evalcal.calibrate` and :func:`evalcal.plan` are listed here from the options
dataclasses the commands are built from, so an option added to a command is checked here the
day it is declared.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import evalcal
from evalcal_core.keywords import typed_keywords
from evalcal_core.options import MIN_ALPHA, declared
from reports.evaluate.api import _NOT_KEYWORDS
from reports.evaluate.options import EvaluateOptions
from sim.calibration import CalibrationConfig
from sim.plan import PlanOptions

#: each function of the API and the options dataclass its keywords fill
FUNCTIONS = {"compare": (evalcal.compare, EvaluateOptions, _NOT_KEYWORDS),
             "calibrate": (evalcal.calibrate, CalibrationConfig, ()),
             "plan": (evalcal.plan, PlanOptions, ())}


def _keywords():
    """(function name, keyword, a value of the wrong type, the rule the message states)."""
    for name, (_, config_cls, leave_out) in FUNCTIONS.items():
        for f, opt in declared(config_cls):
            if f.name in leave_out:
                continue
            if opt.switch:
                yield name, f.name, "yes", "True or False"
                continue
            width = opt.nargs if isinstance(opt.nargs, int) else 1
            if opt.kind in (int, float):
                # a number as text: what a config file or a form hands a script
                value = "1" if opt.nargs is None and opt.action is None else ("1",) * width
                yield name, f.name, value, "an integer" if opt.kind is int else "a number"
            else:
                value = 1.5 if opt.nargs is None and opt.action is None else (1.5,) * width
                yield name, f.name, value, "a string"


KEYWORDS = list(_keywords())


def test_every_function_has_its_keywords_listed():
    names = {(fn, key) for fn, key, _, _ in KEYWORDS}
    assert {("compare", "alpha"), ("compare", "margin"), ("calibrate", "effects"),
            ("calibrate", "alpha"), ("plan", "effect"), ("plan", "alpha"),
            ("plan", "power")} <= names
    assert len(names) == len(KEYWORDS) > 80


@pytest.mark.parametrize(("name", "key", "value", "rule"), KEYWORDS,
                         ids=[f"{k[0]}-{k[1]}" for k in KEYWORDS])
def test_a_value_of_the_wrong_type_names_its_keyword(name, key, value, rule):
    function = FUNCTIONS[name][0]
    with pytest.raises(ValueError) as info:
        function(**{key: value})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"The '{key}' parameter of {name}() must be {rule}"), message
    assert f"Got {value!r} (a {type(value).__name__}) instead." in message


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("alpha", [1e-300, 5e-5])
def test_a_level_below_the_floor_is_refused(name, alpha):
    """As the commands' ``--alpha`` (tests/cli/test_alpha_floor.py): ``compare(alpha=1e-300)``
    must not print intervals of +-inf."""
    function = FUNCTIONS[name][0]
    options = {"k": 3, "sims": 10} if name == "calibrate" else {}
    with pytest.raises(ValueError) as info:
        function(alpha=alpha, **options)
    assert re.fullmatch(rf"The 'alpha' parameter of {name}\(\) must be >= {MIN_ALPHA:g}: "
                        rf".*Got {alpha!r} instead\.", str(info.value)), str(info.value)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize(("alpha", "rule"), [(float("nan"), "a finite number > 0 and < 1"),
                                             (1.0, "a finite number > 0 and < 1"),
                                             (True, "a number")])
def test_a_level_outside_zero_one_is_refused(name, alpha, rule):
    function = FUNCTIONS[name][0]
    options = {"k": 3, "sims": 10} if name == "calibrate" else {}
    with pytest.raises(ValueError, match=rf"The 'alpha' parameter of {name}\(\) must be "
                                         rf"{re.escape(rule)}"):
        function(alpha=alpha, **options)


def test_typed_keywords_read_as_the_parser_reads():
    """A folder keyword is the ``Path`` argparse gives, a number option's int a float, a
    single value of a several-valued option a one-item tuple, a dict KEY=VALUE items."""
    typed = typed_keywords(CalibrationConfig, {"out": "some/dir", "alpha": 1, "k": 3,
                                               "params": {"rho": 0.3}, "seed": None},
                           "calibrate")
    assert typed == {"out": Path("some/dir"), "alpha": 1.0, "k": (3,),
                     "params": ("rho=0.3",), "seed": None}
    assert isinstance(typed["alpha"], float)
