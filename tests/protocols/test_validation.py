"""Every ``ValueError`` of the protocols package, matched by message.

Messages follow "The {param!r} parameter of {caller} must be {rule}. Got {value!r} instead."
Input checks live in the base class, so they are tested on every registered protocol.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from _protocol_checks import make_scores, plain

import protocols

NAMES = protocols.names()


def _valid_input(proto):
    """Binary question-level scores every protocol accepts."""
    return make_scores(0, (2,), max(proto.min_k, 3), 8)


@pytest.mark.parametrize("name", NAMES)
def test_mismatched_shapes(name):
    proto = plain(name)
    base, variant = _valid_input(proto)
    with pytest.raises(ValueError, match=r"'base' and 'variant' parameters must be of the "
                                         r"same shape\. Got \(2, 3, 8\) and \(2, 3, 7\) instead"):
        proto.evaluate(base, variant[..., :7])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("arg", ["base", "variant"])
def test_non_finite_scores(name, bad, arg):
    proto = plain(name)
    base, variant = _valid_input(proto)
    scores = {"base": base, "variant": variant}
    scores[arg][1, 2, 3] = bad
    with pytest.raises(ValueError, match=rf"The '{arg}' parameter must be finite\. Got "
                                         rf"{re.escape(repr(bad))} at index \(1, 2, 3\)"):
        proto.evaluate(scores["base"], scores["variant"])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("value", "message"), [
    (0.5, r"must be of shape \(\.\.\., k, n\) .* Got shape \(\) instead"),
    (np.zeros((0, 3)), r"at least one seed and one question\. Got shape \(0, 3\)"),
    (np.zeros((3, 0)), r"at least one seed and one question\. Got shape \(3, 0\)"),
    ([["a", "b"], ["c", "d"]], r"The 'base' parameter must be an array of numbers"),
    ([[0.5, 0.5], [0.5]], r"The 'base' parameter must be an array of numbers"),
])
def test_malformed_scores(name, value, message):
    proto = plain(name)
    with pytest.raises(ValueError, match=message):
        proto.evaluate(value, value)


@pytest.mark.parametrize("name", [n for n in NAMES if protocols.protocol_class(n).min_k > 1])
def test_too_few_seeds(name):
    proto = plain(name)
    k = proto.min_k - 1
    base, variant = make_scores(0, (), k, 8)
    with pytest.raises(ValueError, match=rf"protocol '{name}' cannot evaluate scores of shape "
                                         rf"\({k}, 8\): it needs k >= {proto.min_k} seeds, "
                                         rf"got k = {k}"):
        proto.evaluate(base, variant)


@pytest.mark.parametrize("name", [n for n in NAMES if protocols.protocol_class(n).binary])
def test_non_binary_scores(name):
    proto = plain(name)
    base, variant = _valid_input(proto)
    variant[0, 0, 0] = 0.5
    with pytest.raises(ValueError, match=rf"protocol '{name}' cannot evaluate .* it needs "
                                         r"binary 0/1 per-question scores"):
        proto.evaluate(base, variant)


@pytest.mark.parametrize("name",
                         [n for n in NAMES if protocols.protocol_class(n).needs_questions])
@pytest.mark.parametrize("shape", [(5,), (5, 1), (2, 5, 1)])
def test_one_question_for_question_level_protocols(name, shape):
    proto = plain(name)
    scores = np.ones(shape)
    minimum = protocols.protocol_class(name).min_n
    with pytest.raises(ValueError, match=rf"needs per-question scores \(n >= {minimum}\), "
                                         r"got n = 1"):
        proto.evaluate(scores, scores)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("alpha", "message"), [
    (0, r"The 'alpha' parameter must be a number in \(0, 1\)\. Got 0\.0 instead"),
    (1, r"The 'alpha' parameter must be a number in \(0, 1\)\. Got 1\.0 instead"),
    (-0.1, r"The 'alpha' parameter must be a number in \(0, 1\)\. Got -0\.1 instead"),
    (np.nan, r"The 'alpha' parameter must be a number in \(0, 1\)\. Got nan instead"),
    ("x", r"The 'alpha' parameter must be a number in \(0, 1\)\. Got 'x' instead"),
    (None, r"The 'alpha' parameter must be a number in \(0, 1\)\. Got None instead"),
])
def test_alpha_outside_open_unit_interval(name, alpha, message):
    proto = plain(name)
    base, variant = _valid_input(proto)
    with pytest.raises(ValueError, match=message):
        proto.evaluate(base, variant, alpha)


@pytest.mark.parametrize("name", NAMES)
def test_rng_is_keyword_only(name):
    proto = plain(name)
    base, variant = _valid_input(proto)
    with pytest.raises(TypeError):
        proto.evaluate(base, variant, 0.05, 0)


def test_unknown_protocol_name():
    with pytest.raises(ValueError, match=r"The 'name' parameter of protocols\.get must be one "
                                         r"of bca, .*\. Got 'paired_z' instead"):
        protocols.get("paired_z")
    with pytest.raises(ValueError, match=r"must be one of"):
        protocols.parameters("paired_z")


@pytest.mark.parametrize("name", NAMES)
def test_unknown_parameter(name):
    with pytest.raises(ValueError, match=rf"protocol '{name}' has no parameter 'n_boot'; its "
                                         r"parameters are "):
        protocols.get(name, n_boot=10)


@pytest.mark.parametrize(("name", "params", "message"), [
    ("question_bootstrap", {"B": 1},
     r"The 'n_resamples' parameter of question_bootstrap must be an integer >= 2\. Got 1 instead"),
    ("paired_question_bootstrap", {"B": 2.5},
     r"The 'n_resamples' parameter of paired_question_bootstrap must be an integer >= 2\. "
     r"Got 2\.5"),
    ("run_bootstrap", {"B": True},
     r"The 'n_resamples' parameter of run_bootstrap must be an integer >= 2\. Got True instead"),
    ("run_bootstrap_sqrt_b", {"B": 0},
     r"The 'n_resamples' parameter of run_bootstrap_sqrt_b must be an integer >= 2\. "
     r"Got 0 instead"),
    ("bca", {"bootstrap": "foo"},
     r"The 'bootstrap' parameter of bca must be one of auto, exact, random\. "
     r"Got 'foo' instead"),
    ("paired_bca_perm", {"n_resamples": 1},
     r"The 'n_resamples' parameter of paired_bca_perm must be an integer >= 2\. Got 1"),
    ("sign_flip", {"n_permutations": 0},
     r"The 'n_permutations' parameter of sign_flip must be an integer >= 1\. Got 0"),
    ("sign_flip", {"max_exact_k": 25},
     r"The 'max_exact_k' parameter of sign_flip must be an integer >= 1 and <= 24\. Got 25 "),
    ("wilcoxon", {"max_exact_k": 0},
     r"The 'max_exact_k' parameter of wilcoxon must be an integer >= 1 and <= 24\. Got 0"),
    ("wilcoxon", {"n_permutations": 1.5},
     r"The 'n_permutations' parameter of wilcoxon must be an integer >= 1\. Got 1\.5"),
    ("single_run", {"threshold": -1},
     r"The 'threshold' parameter of single_run must be a finite number >= 0\. "
     r"Got -1 instead"),
    ("single_run", {"threshold": np.inf}, r"The 'threshold' parameter of single_run must be"),
    ("single_run", {"threshold": "x"},
     r"The 'threshold' parameter of single_run must be .* Got 'x' instead"),
    ("mcnemar", {"exact": "yes"},
     r"The 'exact' parameter of mcnemar must be True, False or None\. Got 'yes' instead"),
    ("mcnemar", {"ci": "score"},
     r"The 'ci' parameter of mcnemar must be one of bonferroni, matched, newcombe, wald\. "
     r"Got 'score' instead"),
    ("paired_bca_perm", {"n_resamples": 1e12},
     r"The 'n_resamples' parameter of paired_bca_perm must be an integer <= 10,000,000 "),
    ("question_bootstrap", {"B": 1e22},
     r"The 'n_resamples' parameter of question_bootstrap must be an integer <= 10,000,000 "
     r"\(a bound on memory and time\)\. Got 1e\+22 instead"),
    ("run_bootstrap", {"n_resamples": 10**12},
     r"The 'n_resamples' parameter of run_bootstrap must be an integer <= 10,000,000 .* "
     r"Got 1000000000000 instead"),
    ("sign_flip", {"n_permutations": 10**12},
     r"The 'n_permutations' parameter of sign_flip must be an integer <= 10,000,000 "),
    ("wilcoxon", {"n_permutations": 1e22},
     r"The 'n_permutations' parameter of wilcoxon must be an integer <= 10,000,000 "),
    ("mcnemar", {"correction": 1},
     r"The 'correction' parameter of mcnemar must be True or False\. Got 1 instead"),
])
def test_bad_parameter_values(name, params, message):
    with pytest.raises(ValueError, match=message):
        protocols.get(name, **params)


def test_register_rejects_a_nameless_or_duplicate_protocol():
    class Nameless(protocols.Protocol):
        pass

    with pytest.raises(ValueError, match=r"needs a non-empty class attribute 'name'; "
                                         r".*Nameless has ''"):
        protocols.register(Nameless)

    class Impostor(protocols.Protocol):
        name = "paired_t"

    with pytest.raises(ValueError, match=r"protocol name 'paired_t' is already registered by "
                                         r"PairedT"):
        protocols.register(Impostor)
    assert protocols.protocol_class("paired_t").__name__ == "PairedT"


def test_single_run_needs_a_threshold_for_metrics_that_are_not_fractions():
    """The 1 pp default is for accuracies (fractions in [0, 1]); a loss or a score in points
    needs an explicit threshold in its own units (fails on 679e496, which applied 0.01)."""
    base, variant = np.array([[2.31]]), np.array([[2.30]])
    with pytest.raises(ValueError, match=r"The 'threshold' parameter of single_run must be "
                                         r"given \(in the metric's units\) for scores outside "
                                         r"\[0, 1\].* Got None instead"):
        protocols.get("single_run").evaluate(base, variant)
    res = protocols.get("single_run", threshold=0.005).evaluate(base, variant)
    assert res.significant
    assert not protocols.get("single_run", threshold=0.05).evaluate(base, variant).significant
    # Accuracies keep the 1 pp default.
    assert protocols.get("single_run").evaluate([[0.80]], [[0.81]]).significant


@pytest.mark.parametrize("name", ["run_bootstrap", "run_bootstrap_sqrt_b"])
def test_run_bootstrap_needs_two_seeds(name):
    """With one run per arm every replicate picks that run: SE 0, no variance estimate; so
    k >= 2 (fails on 679e496, which accepted k = 1)."""
    base = np.zeros((1, 10))
    with pytest.raises(ValueError, match=rf"protocol '{name}' cannot evaluate scores of shape "
                                         r"\(1, 10\): it needs k >= 2 seeds, got k = 1"):
        protocols.get(name).evaluate(base, base + np.eye(1, 10))
