"""The study-design registry: every kind names an honest primary protocol and a generator of
its own kind, and every user's design is of exactly one kind. Consistency checks against the
protocol and generator registries and against the rule stated in ``evalcal_core.designs``'s
modules (methods: paired or not; models: clustered or not); no statistics."""

from __future__ import annotations

import itertools

import pytest

import protocols
from evalcal_core import designs
from evalcal_core.designs import (
    COMPARE_METHODS,
    COMPARE_MODELS,
    KIND_WORDS,
    KINDS,
    METHODS_INDEPENDENT,
    METHODS_PAIRED,
    MODELS,
    MODELS_CLUSTERED,
    Design,
    StudyDesign,
)
from evalcal_core.validate import InvalidParameterError
from sim import generators


def test_kinds_and_words_come_from_the_registry_in_table_order():
    assert KINDS == (METHODS_PAIRED, METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED)
    assert list(KINDS) == designs.names() == [d.name for d in designs.designs()]
    assert KIND_WORDS == {d.name: d.words for d in designs.designs()}
    assert sorted(KINDS) == designs.DESIGNS.names()


@pytest.mark.parametrize(("compare", "paired", "cluster"), list(itertools.product(
    (COMPARE_METHODS, COMPARE_MODELS), (True, False), (None, "task"))))
def test_every_design_is_of_exactly_one_kind(compare, paired, cluster):
    """Methods are paired or independent by ``paired`` (clusters do not apply); models are
    clustered exactly when a cluster is named (``paired`` does not apply)."""
    design = Design(compare=compare, paired=paired, cluster=cluster,
                    n_clusters=3 if cluster else 0)
    matching = [d.name for d in designs.designs() if d.matches(design)]
    if compare == COMPARE_METHODS:
        expected = METHODS_PAIRED if paired else METHODS_INDEPENDENT
    else:
        expected = MODELS_CLUSTERED if cluster else MODELS
    assert matching == [expected]
    assert design.kind == expected and design.study is designs.get(expected)
    assert design.study.compare == compare


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_names_an_honest_primary_and_its_own_generator(kind):
    study = designs.get(kind)
    for name in filter(None, (study.primary, study.primary_one_binary_run)):
        assert protocols.protocol_class(name).label(kind) == "", name
    assert protocols.recommended_for(kind) == study.primary
    assert protocols.protocol_class(study.primary).recommended_for == {kind}
    assert generators.generator_class(study.generator).design == kind
    assert generators.get(study.generator, **study.generator_params).design == kind
    with pytest.raises(TypeError):
        study.generator_params["x"] = 1  # read-only


@pytest.mark.parametrize(("compare", "runs", "binary", "primary"), [
    (COMPARE_METHODS, 5, False, "paired_t"),
    (COMPARE_METHODS, 1, True, "paired_t"),
    (COMPARE_MODELS, 1, True, "mcnemar"),
    (COMPARE_MODELS, 1, False, "t_signflip_questions"),
    (COMPARE_MODELS, 3, True, "t_signflip_questions"),
])
def test_the_primary_protocol_is_the_one_evaluate_reports(compare, runs, binary, primary):
    """The choice docs/evaluate.md states: paired_t for paired seeds, exact McNemar for one
    binary run of fixed models, t_signflip_questions otherwise (the t interval, significant
    only if the sign-flip test agrees)."""
    design = Design(compare=compare, runs=runs)
    assert design.study.primary_for(design, binary) == primary


def test_registering_a_name_twice_or_an_unknown_name_is_refused():
    study = designs.get(MODELS)
    assert designs.register(study) is study  # the same object again: nothing changes
    other = StudyDesign(name=MODELS, order=9, words="x", compare=COMPARE_MODELS,
                        primary="mcnemar", generator="question_mixture", description="x",
                        rule=lambda design: False)
    with pytest.raises(InvalidParameterError, match="already registered"):
        designs.register(other)
    with pytest.raises(InvalidParameterError, match=r"'design' parameter .* Got 'nope'"):
        designs.get("nope")
    with pytest.raises(InvalidParameterError, match="compare must be"):
        Design(compare="seeds")
    assert designs.get(MODELS) is study


@pytest.mark.parametrize("kind", KINDS)
def test_a_declared_kind_is_the_design_its_fields_describe(kind):
    """``--design NAME`` sets what the registry says of the kind (``compare``, ``paired``,
    ``clustered``); the design those fields describe is of that kind by the kind's own rule,
    and no two kinds share the fields."""
    study = designs.get(kind)
    design = Design(compare=study.compare, paired=study.paired,
                    cluster="task" if study.clustered else None,
                    n_clusters=3 if study.clustered else 0)
    assert design.study is study
    fields = {(d.compare, d.paired, d.clustered) for d in designs.designs()}
    assert len(fields) == len(KINDS)
