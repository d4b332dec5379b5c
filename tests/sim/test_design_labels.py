"""The calibration labels protocols by the design its generator simulates, and the
cluster-robust protocols see the generator's clusters."""

from __future__ import annotations

import pytest

import protocols
from evalcal_core.designs import KINDS
from sim import generators
from sim.budget import seed_budget
from sim.grid import calibrate, draw_cell, protocol_rng
from sim.labels import design_of, is_reportable, pitfall_reason, recommended

SIMS = 200


@pytest.mark.parametrize(("name", "kind"), [
    ("seed_gaussian", "methods_paired"), ("seed_question", "methods_paired"),
    ("question_mixture", "models"), ("clustered_questions", "models_clustered"),
    ("unpaired_seeds", "methods_independent")])
def test_each_generator_names_its_design(name, kind):
    assert design_of(name) == kind
    chosen = recommended(name)
    assert is_reportable(chosen, name)
    assert kind in protocols.protocol_class(chosen).recommended_for


def test_an_unknown_generator_is_read_as_paired_methods():
    assert design_of("no_such_generator") == "methods_paired"
    assert pitfall_reason("welch_t", "no_such_generator") != ""


def test_labels_follow_the_design_not_the_protocol():
    assert is_reportable("paired_t_questions", "question_mixture")
    assert not is_reportable("paired_t_questions", "seed_question")
    assert not is_reportable("paired_t_questions", "clustered_questions")
    assert is_reportable("welch_t", "unpaired_seeds")
    assert not is_reportable("welch_t", "seed_gaussian")
    assert {design_of(n) for n in generators.names() if n != "real_pool"} <= set(KINDS)


def test_clustered_calibration_runs_the_cluster_tests_with_the_generators_clusters():
    """cluster_cr2's rejections in the grid equal evaluating it by hand on the same drawn
    experiments with the generator's clusters (a batch without them cannot run it)."""
    gen = generators.get("clustered_questions", n_questions=200, n_clusters=10)
    frame = calibrate(gen, [1], [0.0, 2.0], protocol_names=["cluster_cr2", "paired_t_questions"],
                      sims=SIMS, seed=3, progress=False)
    row = frame[(frame["protocol"] == "cluster_cr2") & (frame["effect_pp"] == 0)].iloc[0]
    proto = protocols.get("cluster_cr2")
    rng = protocol_rng("cluster_cr2", "", gen, 1, 0.0, 3)
    hits = 0
    for batch in draw_cell(gen, 1, 0.0, SIMS, 3, int(row["chunk"])):
        r = proto.evaluate(batch.with_clusters(gen.clusters()), alpha=0.05, rng=rng)
        hits += int(r.significant.sum())
    assert int(row["rejections"]) == hits
    budget = seed_budget(frame)
    why = dict(zip(budget["protocol"], budget["why"]))
    assert why["paired_t_questions"].startswith("a pitfall for models, clustered questions")
    assert not why["cluster_cr2"].startswith("a pitfall")
