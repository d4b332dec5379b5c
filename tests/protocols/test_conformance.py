"""Conformance checks run on every registered protocol (parametrized over ``protocols.names()``).

A protocol registered tomorrow is tested by this file without editing it. Which invariant
applies is decided by the class attributes (``paired``, ``uses_first_seed_only``,
``stochastic``, ``min_k``, ``binary``), never by a list of names.

These are consistency checks of the statistical contract (see ``protocols.ProtocolResult``);
the values themselves are checked against scipy/statsmodels in ``test_reference.py``.
Deterministic protocols (and the BCa-based ones with ``bootstrap='exact'``) must agree up to
floating-point summation order; stochastic ones are compared through ``R`` copies evaluated
in one batch, within Monte Carlo error (``_protocol_checks.assert_mc_equivalent``).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from _protocol_checks import (
    SWAPPED,
    UNCHANGED,
    assert_mc_equivalent,
    assert_results_equal,
    configured,
    copies,
    experiments,
    is_deterministic,
    make_scores,
    plain,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import protocols
from evalcal_core.designs import KINDS

NAMES = protocols.names()
SEED = 20240611


def _evaluate_either(proto, base, variant, other_base, other_variant, mapping):
    """Evaluate the two inputs and compare them exactly or within MC error, as applicable."""
    k = base.shape[-2]
    if is_deterministic(proto, k):
        a = proto.evaluate(base, variant, rng=SEED)
        b = proto.evaluate(other_base, other_variant, rng=SEED)
        assert_results_equal(a, b, mapping)
    else:
        a = proto.evaluate(copies(base), copies(variant), rng=SEED)
        b = proto.evaluate(copies(other_base), copies(other_variant), rng=SEED)
        assert_mc_equivalent(a, b, mapping)


def _seed_permutation(proto, k, rng):
    """A permutation of the k seeds; seed 0 stays first for protocols that read only seed 0."""
    if proto.uses_first_seed_only:
        return np.concatenate([[0], 1 + rng.permutation(k - 1)])
    return rng.permutation(k)


def test_registry_is_populated():
    """The package discovers its protocol modules (consistency check)."""
    assert len(NAMES) >= 13
    assert NAMES == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_class_attributes(name):
    """Every protocol declares the attributes the harness and these tests rely on."""
    cls = protocols.protocol_class(name)
    assert cls.name == name
    assert isinstance(cls.summary, str) and cls.summary
    assert isinstance(cls.min_k, int) and cls.min_k >= 1
    for attr in ("binary", "needs_questions", "paired", "stochastic", "uses_first_seed_only"):
        assert isinstance(getattr(cls, attr), bool), attr
    # Defaults build a valid protocol.
    assert isinstance(protocols.get(name), protocols.Protocol)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
@settings(max_examples=20)
def test_result_fields_are_well_formed(name, data):
    """Shapes equal the batch shape; p in [0, 1]; CI ordered; NaN consistent per protocol.

    Consistency check of the ``ProtocolResult`` contract: a protocol either has a p-value
    (CI) for every experiment or for none.
    """
    proto = configured(name)
    base, variant = data.draw(experiments(proto))
    batch_shape = base.shape[:-2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = proto.evaluate(base, variant, rng=SEED)
    for field in ("estimate", "ci_low", "ci_high", "p_value", "significant", "degenerate"):
        value = getattr(res, field)
        assert isinstance(value, np.ndarray), field
        assert value.shape == batch_shape, field
    assert res.shape == batch_shape
    assert res.significant.dtype == bool
    assert np.all(np.isfinite(res.estimate))
    # Estimates are differences of accuracies (fractions), so they lie in [-1, 1].
    assert np.all(np.abs(res.estimate) <= 1.0 + 1e-12)
    assert isinstance(res.degenerate, np.ndarray) and res.degenerate.dtype == bool
    assert res.degenerate.shape == batch_shape
    # A degenerate experiment (no variance estimate) is never significant.
    assert not np.any(res.significant & res.degenerate)
    p_nan = np.isnan(res.p_value)
    if not p_nan.all():
        # The protocol has a p-value: NaN exactly where it had no variance estimate.
        np.testing.assert_array_equal(p_nan, res.degenerate, err_msg="p NaN vs degenerate")
    else:
        # No p at all: a protocol without p-values (none degenerate), or a batch in which
        # every experiment lacks a variance estimate (all degenerate).
        assert res.degenerate.all() or not res.degenerate.any()
    assert np.all((res.p_value[~p_nan] >= 0.0) & (res.p_value[~p_nan] <= 1.0))
    ci_nan = np.isnan(res.ci_low)
    np.testing.assert_array_equal(ci_nan, np.isnan(res.ci_high))
    if not ci_nan.all():
        # A CI exists for every experiment but the degenerate ones.
        assert not np.any(ci_nan & ~res.degenerate), "CI NaN for some experiments only"
    assert np.all(res.ci_low[~ci_nan] <= res.ci_high[~ci_nan])


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
@settings(max_examples=15)
def test_swapping_arms_negates_the_estimate(name, data):
    """evaluate(variant, base) = evaluate(base, variant) with estimate and CI negated (CI ends
    swapped), p and decision unchanged: a two-sided test has no preferred arm."""
    proto = configured(name)
    base, variant = data.draw(experiments(proto))
    _evaluate_either(proto, base, variant, variant, base, SWAPPED)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data(), perm_seed=st.integers(0, 2**32 - 1))
@settings(max_examples=15)
def test_invariant_under_reordering_seeds(name, data, perm_seed):
    """Relabelling the seeds (same permutation in both arms, keeping the pairing) changes
    nothing. Protocols with ``uses_first_seed_only`` keep seed 0 in place."""
    proto = configured(name)
    base, variant = data.draw(experiments(proto))
    perm = _seed_permutation(proto, base.shape[-2], np.random.default_rng(perm_seed))
    _evaluate_either(proto, base, variant, base[..., perm, :], variant[..., perm, :],
                     UNCHANGED)


@pytest.mark.parametrize("name", [n for n in NAMES if not protocols.protocol_class(n).paired])
@given(data=st.data(), perm_seed=st.integers(0, 2**32 - 1))
@settings(max_examples=10)
def test_unpaired_protocols_ignore_the_pairing(name, data, perm_seed):
    """A protocol with ``paired = False`` must not depend on which baseline seed is matched
    with which variant seed: permuting the variant's seeds alone changes nothing."""
    proto = configured(name)
    base, variant = data.draw(experiments(proto))
    perm = _seed_permutation(proto, base.shape[-2], np.random.default_rng(perm_seed))
    _evaluate_either(proto, base, variant, base, variant[..., perm, :], UNCHANGED)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
@settings(max_examples=10)
def test_same_integer_rng_gives_identical_results(name, data):
    """``rng=<int>`` (and a Generator in the same state) reproduces the result bit for bit."""
    proto = plain(name)
    base, variant = data.draw(experiments(proto))
    first = proto.evaluate(base, variant, rng=12345)
    again = proto.evaluate(base, variant, rng=12345)
    from_generator = proto.evaluate(base, variant, rng=np.random.default_rng(12345))
    for other in (again, from_generator):
        for field in ("estimate", "ci_low", "ci_high", "p_value", "significant"):
            np.testing.assert_array_equal(getattr(first, field), getattr(other, field),
                                          err_msg=field)


@pytest.mark.parametrize("name", NAMES)
def test_inputs_are_not_mutated(name):
    """Inputs are read, never written: copies compare equal afterwards, and read-only arrays
    (which raise on any in-place write) are accepted."""
    proto = plain(name)
    k = max(proto.min_k, 3)
    base, variant = make_scores(7, (4,), k, 20)
    base_copy, variant_copy = base.copy(), variant.copy()
    proto.evaluate(base, variant, rng=0)
    np.testing.assert_array_equal(base, base_copy)
    np.testing.assert_array_equal(variant, variant_copy)
    base.setflags(write=False)
    variant.setflags(write=False)
    proto.evaluate(base, variant, rng=0)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
@settings(max_examples=10)
def test_batch_equals_one_by_one(name, data):
    """Evaluating experiments together equals evaluating each alone (exact for deterministic
    protocols; for stochastic ones each experiment's MC distribution is the same)."""
    proto = configured(name)
    base, variant = data.draw(experiments(proto, batch_shapes=((3,), (2, 3))))
    k = base.shape[-2]
    batch_shape = base.shape[:-2]
    if is_deterministic(proto, k):
        together = proto.evaluate(base, variant, rng=SEED)
        for index in np.ndindex(batch_shape):
            alone = proto.evaluate(base[index], variant[index], rng=SEED)
            assert_results_equal(together[index], alone)
    else:
        together = proto.evaluate(copies(base), copies(variant), rng=SEED)
        for index in np.ndindex(batch_shape):
            alone = proto.evaluate(copies(base[index]), copies(variant[index]), rng=SEED)
            assert_mc_equivalent(together[(slice(None),) + index], alone)


@pytest.mark.parametrize("name", NAMES)
def test_per_seed_vector_input(name):
    """A 1-D input ``(k,)`` is k per-seed metrics with n = 1: it equals the ``(k, 1)`` input,
    and question-level protocols refuse it."""
    proto = plain(name)
    k = max(proto.min_k, 4)
    base = np.linspace(0.80, 0.83, k)
    variant = base + np.array([0.01, 0.02, 0.0, 0.015] + [0.01] * (k - 4))
    if proto.needs_questions:
        with pytest.raises(ValueError, match="per-question scores"):
            proto.evaluate(base, variant)
        return
    flat = proto.evaluate(base, variant, rng=0)
    column = proto.evaluate(base[:, None], variant[:, None], rng=0)
    assert flat.shape == ()
    assert_results_equal(flat, column, rtol=0.0, atol=0.0)


# --------------------------------------------------------------------------------------------
# Size under the null, per design: a protocol reportable for a design kind (``valid_for``)
# keeps alpha on null data of that kind. methods_paired: the two tests below (paired seeds,
# binary per-seed metrics by enumeration, continuous scores by Monte Carlo); the other kinds:
# ``test_null_rejection_rate_per_design``.

ALPHA = 0.05

#: null distributions of one seed's per-seed binary metric (base, variant): probabilities of
#: (0, 0), (0, 1), (1, 0), (1, 1); exchangeable arms, so the null holds
BINARY_NULLS = {
    "fair coin, independent arms": (0.25, 0.25, 0.25, 0.25),
    "accuracy 0.8, independent arms": (0.04, 0.16, 0.16, 0.64),
    "accuracy 0.65, correlated arms": (0.30, 0.05, 0.05, 0.60),
}


def _all_binary_outcomes(k):
    """Every one of the 4**k paired binary outcomes of k seeds, shape (4**k, k, 1) per arm,
    and the index of each seed's cell in (0, 0), (0, 1), (1, 0), (1, 1)."""
    cells = np.array([(0, 0), (0, 1), (1, 0), (1, 1)], dtype=float)
    index = np.array(list(itertools.product(range(4), repeat=k)))
    return cells[index][..., 0, None], cells[index][..., 1, None], index


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_null_rejection_rate_on_binary_per_seed_metrics_is_at_most_alpha(name, k):
    """Exact, by enumeration: on binary per-seed metrics (n = 1) the rejection rate under the
    null is ``sum_outcomes P(outcome) * significant(outcome)`` over all 4**k outcomes, with
    no Monte Carlo error (every protocol applicable here is deterministic at k <= 6: exact
    sign flips, the ideal bootstrap). It must not exceed alpha unless the protocol is a
    declared pitfall for ``methods_paired``. On 679e496 paired_t and welch_t failed (0.125
    at k = 2: constant non-zero deltas had p = 0)."""
    proto = configured(name)
    if proto.applicable(k, 1, True) is not None:
        pytest.skip(proto.applicable(k, 1, True))
    if not is_deterministic(proto, k) and proto.label("methods_paired"):
        # No exact rate to enumerate, and none would be checked: a stochastic pitfall.
        pytest.skip(f"stochastic, a pitfall for paired seeds: {proto.label('methods_paired')}")
    base, variant, index = _all_binary_outcomes(k)
    assert is_deterministic(proto, k)
    sig = proto.evaluate(base, variant, ALPHA, rng=SEED).significant
    for label, probs in BINARY_NULLS.items():
        rate = float((np.asarray(probs)[index].prod(axis=-1) * sig).sum())
        if not proto.label("methods_paired"):
            assert rate <= ALPHA + 1e-12, f"{label}: rejection rate {rate:.4f} > {ALPHA}"


#: continuous scores: question difficulty shared by both arms (sd 1) plus per-(seed, question)
#: deltas D[s, q] = a_s + e_sq (sd of a, e). No question component in the deltas: the null
#: holds on the benchmark's own questions (what per-seed protocols test) as well as on the
#: population of questions (paired_two_level; tested with question components in
#: test_reference.py)
CONTINUOUS_NULLS = {"seeds dominate": (3.0, 1.0), "balanced": (1.0, 1.0),
                    "noise only": (0.0, 1.0)}
CONTINUOUS_SIMS = 4000


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_null_rejection_rate_on_continuous_scores_is_at_most_alpha(name, k):
    """Monte Carlo: 4,000 null experiments per setting of continuous scores (k seeds, 8
    questions, fractions near 0.7; ``CONTINUOUS_NULLS``). A protocol reportable for paired
    seeds (``methods_paired``) must reject at most alpha + 3 binomial SEs,
    sqrt(alpha (1 - alpha) / 4000) = 0.0034 (bound 0.0603)."""
    proto = configured(name)
    if proto.label("methods_paired"):
        pytest.skip(f"a pitfall for paired seeds: {proto.label('methods_paired')}")
    n = 1 if proto.applicable(k, 8, False) is not None else 8
    if proto.applicable(k, n, False) is not None:
        pytest.skip(proto.applicable(k, n, False))
    bound = ALPHA + 3.0 * np.sqrt(ALPHA * (1 - ALPHA) / CONTINUOUS_SIMS)
    rng = np.random.default_rng([SEED, k])
    shape = (CONTINUOUS_SIMS, k, n)
    for label, (sd_a, sd_e) in CONTINUOUS_NULLS.items():
        difficulty = rng.standard_normal((CONTINUOUS_SIMS, 1, n))
        deltas = (sd_a * rng.standard_normal((CONTINUOUS_SIMS, k, 1))
                  + sd_e * rng.standard_normal(shape))
        base = 0.7 + 0.01 * (difficulty + rng.standard_normal(shape))
        rate = proto.evaluate(base, base + 0.01 * deltas, ALPHA, rng=SEED).significant.mean()
        assert rate <= bound, f"{label}: rejection rate {rate:.4f} > {bound:.4f}"


def _null_methods_independent(rng, sims, setting):
    """Independent seeds: per-seed metrics of two arms drawn independently (no pairing),
    unequal spreads (sd 1 pp and 3 pp around 0.7), ``setting`` = k seeds; n = 1."""
    k = setting
    base = 0.7 + 0.01 * rng.standard_normal((sims, k, 1))
    variant = 0.7 + 0.03 * rng.standard_normal((sims, k, 1))
    return base, variant, None


def _null_models(rng, sims, setting):
    """Fixed models on iid questions: question q has difficulty p_q ~ Beta(0.8, 0.8) shared
    by both arms (positively correlated arms); each of the k repeats answers it right with
    probability p_q, independently (repeats are binomial noise). ``setting`` = (k, n)."""
    k, n = setting
    p = rng.beta(0.8, 0.8, (sims, 1, n))
    return rng.random((sims, k, n)) < p, rng.random((sims, k, n)) < p, None


def _null_models_clustered(rng, sims, setting):
    """Fixed models on clustered questions: continuous scores (fractions near 0.7) with a
    question difficulty shared by the arms; the per-question delta is a cluster effect
    (sd 1 pp, mean 0 over the population of clusters) plus a question effect (sd 1 pp);
    k = 2 repeats add noise. ``setting`` = the cluster sizes (few, unequal)."""
    sizes = np.asarray(setting)
    codes = np.repeat(np.arange(len(sizes)), sizes)
    n, k = len(codes), 2
    cluster = rng.standard_normal((sims, 1, len(sizes)))[..., codes]
    delta = cluster + rng.standard_normal((sims, 1, n))
    base = 0.7 + 0.01 * (rng.standard_normal((sims, 1, n)) + rng.standard_normal((sims, k, n)))
    variant = base + 0.01 * (delta + rng.standard_normal((sims, k, n)))
    return base, variant, codes


#: null data of each design kind other than methods_paired, and the settings drawn
DESIGN_NULLS = {
    "methods_independent": (_null_methods_independent, [2, 3, 4, 6]),
    "models": (_null_models, [(1, 10), (1, 30), (1, 200), (3, 30), (3, 200)]),
    "models_clustered": (_null_models_clustered, [(3, 5, 8, 12, 20), (10,) * 6, (4,) * 20]),
}
DESIGN_SIMS = 4000


def _design_cases():
    for kind, (_, settings_) in DESIGN_NULLS.items():
        for name in NAMES:
            if kind in protocols.protocol_class(name).valid_for:
                for setting in settings_:
                    yield pytest.param(name, kind, setting, id=f"{name}-{kind}-{setting}")


@pytest.mark.parametrize(("name", "kind", "setting"), list(_design_cases()))
def test_null_rejection_rate_per_design(name, kind, setting):
    """Monte Carlo, 4,000 null experiments per setting: a protocol reportable for design
    ``kind`` rejects at most alpha + 3 binomial SEs (0.0603) on null data of that kind
    (``DESIGN_NULLS``; protocols needing clusters get the data's clusters)."""
    proto = protocols.get(name, **({"n_resamples": 200}
                                   if "n_resamples" in protocols.parameters(name) else {}))
    draw, _ = DESIGN_NULLS[kind]
    base, variant, codes = draw(np.random.default_rng([SEED, KINDS.index(kind)]), DESIGN_SIMS,
                                setting)
    why = proto.applicable(base.shape[-2], base.shape[-1], base.dtype == bool, codes)
    assert why is None, why
    bound = ALPHA + 3.0 * np.sqrt(ALPHA * (1 - ALPHA) / DESIGN_SIMS)
    rate = proto.evaluate(base, variant, ALPHA, rng=SEED, clusters=codes).significant.mean()
    assert rate <= bound, f"{kind} {setting}: rejection rate {rate:.4f} > {bound:.4f}"


def test_every_design_kind_has_a_reportable_protocol():
    """Each kind of study (``evalcal_core.designs.KINDS``) has at least one protocol valid
    for it, and the per-design null test above covers it (consistency check)."""
    for kind in KINDS:
        valid = [n for n in NAMES if kind in protocols.protocol_class(n).valid_for]
        assert valid, f"no reportable protocol for {kind}"
    assert set(DESIGN_NULLS) | {"methods_paired"} == set(KINDS)


@pytest.mark.parametrize("name", NAMES)
def test_labels_are_declared_per_design(name):
    """``label(kind)`` is empty exactly for the kinds in ``valid_for`` and a one-line reason
    for every other kind; ``pitfall`` stays the reason under paired seeds (consistency)."""
    cls = protocols.protocol_class(name)
    assert cls.valid_for <= set(KINDS)
    assert set(cls.pitfall_for) <= set(KINDS) - cls.valid_for
    for kind in KINDS:
        reason = cls.label(kind)
        assert (reason == "") == (kind in cls.valid_for), kind
        assert "\n" not in reason and len(reason) <= 100, kind
    assert bool(cls.pitfall) == ("methods_paired" not in cls.valid_for)
    if cls.pitfall:
        assert cls.label("methods_paired").startswith(cls.pitfall)
    assert cls.recommended_for <= cls.valid_for


def test_every_design_has_one_recommended_protocol():
    """Each design kind names exactly one first choice, and it is reportable there."""
    for kind in KINDS:
        chosen = [n for n in protocols.names()
                  if kind in protocols.protocol_class(n).recommended_for]
        assert len(chosen) == 1, (kind, chosen)
        assert protocols.recommended_for(kind) == chosen[0]
        assert protocols.protocol_class(chosen[0]).label(kind) == ""


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [3, 20])
def test_a_protocol_not_marked_stochastic_ignores_rng(name, k):
    """``stochastic = False`` is a promise: any ``rng`` gives the same result, at small k
    and beyond ``max_exact_k`` (16) where sign patterns are sampled. Fails on 679e496 for
    wilcoxon, which sampled sign patterns at k > 16 while marked deterministic."""
    proto = plain(name)
    if proto.stochastic:
        return
    base, variant = make_scores(5, (6,), k, 10)
    first = proto.evaluate(base, variant, rng=1)
    other = proto.evaluate(base, variant, rng=2)
    assert_results_equal(first, other, rtol=0.0, atol=0.0)


#: the one-level protocols that count only the questions as noise
QUESTIONS_ONLY = ("paired_t_questions", "paired_question_bootstrap", "mcnemar")


@pytest.mark.parametrize("name", QUESTIONS_ONLY)
def test_question_only_protocols_are_declared_pitfalls(name):
    """Across seeds these tests treat the questions as the only randomness (FPR 53-58% under
    seed_question with seed-effect sd 0.3): each says so in its ``pitfall``."""
    assert "questions as the only noise" in protocols.protocol_class(name).pitfall


def test_the_honest_question_level_protocol_is_not_a_pitfall():
    """paired_two_level counts seeds and questions; it is paired and needs k >= 2."""
    cls = protocols.protocol_class("paired_two_level")
    assert cls.pitfall == "" and cls.paired and cls.needs_questions and cls.min_k == 2


def test_designs_docstring_lists_the_reportable_protocols():
    """Each design's module docstring in ``evalcal_core.designs`` (which protocols the kind
    reports) is the registry's ``valid_for``, so the prose cannot drift from the labels
    (consistency)."""
    import importlib
    import pkgutil
    import re

    from evalcal_core import designs

    docs = {}
    for info in pkgutil.iter_modules(designs.__path__):
        module = importlib.import_module(f"{designs.__name__}.{info.name}")
        if isinstance(getattr(module, "DESIGN", None), designs.StudyDesign):
            docs[module.DESIGN.name] = module.__doc__
    assert sorted(docs) == sorted(KINDS)
    for kind in KINDS:
        named = set(re.findall(r"``(\w+)``", docs[kind])) & set(NAMES)
        valid = {n for n in NAMES if kind in protocols.protocol_class(n).valid_for}
        assert named == valid, kind
