"""Conformance of the planner's registered designs (:mod:`sim.plan_designs`).

References: each design's ``Var(mean D)`` is checked against an exact enumeration written
here, independently of the designs' formulas -- the covariance matrix of every (seed or
cluster, question, repeat) delta from the random-effects model docs/planning.md and
:mod:`sim.plan_model` state (two deltas share a component's variance when they share its
level), summed: ``Var(mean) = 1' Sigma 1 / N**2``; at k = n = r = 1 that is the sum of the
components the design's formula names. The normal draws are checked against it by Monte
Carlo, with a tolerance from the sampling distribution of a normal variance (5 SEs).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sim import plan_designs
from sim import plan_model as M
from sim.plan import build_parser

NAMES = [d.name for d in plan_designs.designs_all()]
COMP = M.Components(0.03, 0.08, 0.1, 0.4, sd_cluster=0.05)


def _cases():
    for name in NAMES:
        for estimand in plan_designs.get(name).estimands:
            yield name, estimand


def _crossed(k, n, r, parts):
    """``1' Sigma 1 / N**2`` of a k x n x r array whose deltas share ``var`` when equal on
    every index in ``levels``, for each ``(var, levels)`` in ``parts``."""
    s, q, e = (a.ravel() for a in np.meshgrid(np.arange(k), np.arange(n), np.arange(r),
                                              indexing="ij"))
    index = {"s": s, "q": q, "e": e}
    sigma = sum(var * np.prod([index[i][:, None] == index[i][None, :] for i in levels],
                              axis=0)
                for var, levels in parts)
    return float(sigma.sum()) / (k * n * r) ** 2


def _reference(name, estimand, c, k, n, r):
    """The design's model, written out as shared levels (s: seed or cluster, q: question,
    e: repeat); a new design needs its model here."""
    sa2, sc2, si2, sr2 = c.sd_seed**2, c.sd_question**2, c.sd_inter**2, c.sd_repeat**2
    if name == "methods":  # crossed seeds and questions; questions fixed drop their part
        question = [(sc2, "q")] if estimand == M.POPULATION else []
        return _crossed(k, n, r, [(sa2, "s"), *question, (si2, "sq"), (sr2, "sqe")])
    if name == "models":  # no seeds: one row; a question's interaction is its effect
        return _crossed(1, n, r, [(sc2 + si2, "q"), (sr2, "qe")])
    if name == "clusters":  # the crossed form, clusters for seeds
        return _crossed(k, n, r, [(sa2, "s"), (sc2, "q"), (si2, "sq"), (sr2, "sqe")])
    if name == "models_clustered":  # questions nested in clusters
        return _crossed(k, n, r, [(c.sd_cluster**2, "s"), (sc2 + si2, "sq"), (sr2, "sqe")])
    raise AssertionError(f"no reference model for the planner design {name!r}")


def test_every_design_is_reachable_from_the_command_line():
    """A design is a ``--design`` choice (listed in ``--help``, parsed) or the problem a
    choice is solved as."""
    parser = build_parser()
    helptext = parser.format_help()
    for name in plan_designs.DESIGNS:
        assert name in helptext
        assert parser.parse_args(["--design", name]).design == name
    solved = {plan_designs.get(n).solved_as for n in plan_designs.DESIGNS}
    for name in NAMES:
        assert name in plan_designs.DESIGNS or name in solved, name


@pytest.mark.parametrize("name, estimand", list(_cases()))
def test_variance_is_the_enumerated_model(name, estimand):
    """At k = n = r = 1 the sum of the design's components; at small designs the exact
    enumeration of the model's covariance (module docstring), to rounding."""
    one = float(M.mean_delta_variance(COMP, name, 1, 1, 1, estimand))
    assert one == pytest.approx(_reference(name, estimand, COMP, 1, 1, 1), rel=1e-12)
    for k, n, r in ((2, 3, 1), (3, 2, 4), (4, 5, 2)):
        got = float(M.mean_delta_variance(COMP, name, k, n, r, estimand))
        assert got == pytest.approx(_reference(name, estimand, COMP, k, n, r), rel=1e-12)


@pytest.mark.parametrize("name, estimand", list(_cases()))
def test_normal_draws_have_the_variance(name, estimand):
    """The mean of a design's simulated units (:func:`sim.plan_model.draw_deltas`) has the
    enumerated variance: 20,000 experiments, 5 SEs of a normal sample variance."""
    k, n, r, sims = 3, 4, 2, 20_000
    # the clusters form has no crossed question part (models_clustered moves it into the
    # interaction); its draws are the unit means of that form
    comp = (dataclasses.replace(COMP, sd_question=0.0) if plan_designs.get(name).solved_as
            is None and not plan_designs.get(name).choosable else COMP)
    d = M.draw_deltas(comp, name, sims, k, n, r, 0.0, np.random.default_rng(5), estimand)
    got = float(d.reshape(sims, -1).mean(axis=1).var(ddof=1))
    expected = _reference(name, estimand, comp, k, n, r)
    assert abs(got / expected - 1) < 5 * np.sqrt(2 / (sims - 1))


@pytest.mark.parametrize("name", NAMES)
def test_power_at_zero_effect_is_at_most_alpha(name):
    """A noncentral-t design's power at effect 0 is alpha exactly (the t's level, scipy);
    the two-level quadrature's is its size, at most alpha."""
    spec = plan_designs.get(name)
    for estimand in spec.estimands:
        p = float(M.power(COMP, name, 6, 20, 2, 0.0, 0.05, estimand))
        if spec.df(6.0, 20.0, estimand) is None:
            assert p <= 0.05 + 1e-12
        else:
            assert p == pytest.approx(0.05, abs=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_the_object_states_what_it_prints(name):
    """Every estimand of a design has its words, and its default costs pay something the
    design pays (consistency of the registry; no statistics)."""
    spec = plan_designs.get(name)
    assert spec.estimands and spec.estimands[0] in plan_designs.ESTIMANDS
    for estimand in spec.estimands:
        assert spec.test_words(estimand) and spec.test_column(estimand)
        if spec.choosable:
            assert spec.estimand_words[estimand]
    assert any(spec.default_costs.get(p, 0) > 0 for p in spec.paid)
    with pytest.raises(ValueError, match="design"):
        plan_designs.get("nonsense")
