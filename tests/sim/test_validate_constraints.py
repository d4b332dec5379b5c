"""``evalcal_core.validate``: constraints as data, one message template (each message is
pinned: the template is scikit-learn's "The 'x' parameter of f must be RULE. Got V instead.")."""

import pytest

from evalcal_core.validate import (
    AllOf,
    AnyOf,
    Each,
    Interval,
    Optional,
    Options,
    Requires,
    Rule,
    check_requires,
    validate,
)


@pytest.mark.parametrize(("constraint", "value", "message"), [
    (Interval("int", 1, 10), 0, "The '--n' option must be an integer >= 1 and <= 10. Got 0 "
                                "instead."),
    (Interval("int", 1), 2.5, "must be an integer >= 1. Got 2.5 instead."),
    (Interval("real", 0, 1, low_open=True, high_open=True), 1.0,
     "must be a finite number > 0 and < 1. Got 1.0 instead."),
    (Interval("real", 0.0, 0.95), float("nan"), "a finite number >= 0 and <= 0.95. Got nan"),
    (Options(("a", "b")), "c", "must be one of a, b. Got 'c' instead."),
    (AnyOf(Options((0,), "0 (off)"), Interval("int", 2)), 1,
     "must be 0 (off) or an integer >= 2. Got 1 instead."),
    (Optional(Rule(lambda v: len(set(v)) == len(v), "distinct values")), [1, 1],
     "must be distinct values. Got [1, 1] instead."),
    (AllOf(Rule(lambda v: len(v) == 2, "two values"), Each(Interval("int", 1))), [0, 3],
     "must be values that are each an integer >= 1. Got [0, 3] instead."),
])
def test_a_broken_constraint_names_option_rule_and_value(constraint, value, message):
    with pytest.raises(ValueError, match=pytest.importorskip("re").escape(message)):
        validate({"--n": value}, {"--n": constraint})


def test_values_that_keep_their_rule_pass():
    validate({"--n": 3, "x": None, "y": 0}, {
        "--n": Interval("int", 1, 10), "x": Optional(Interval("real", 0)),
        "y": AnyOf(Options((0,)), Interval("int", 2))})


def test_a_dependency_is_one_line():
    class C:
        percent, pilot = True, None

    rule = Requires("--percent", lambda c: c.percent, "--from-pilot", lambda c: c.pilot,
                    why="describes a pilot's scores")
    with pytest.raises(ValueError, match="^--percent describes a pilot's scores; it goes with "
                                         "--from-pilot$"):
        check_requires(C(), [rule])
