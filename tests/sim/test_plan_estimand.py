"""The planner's estimand (issue 45): ``questions`` (these questions fixed; evaluate's primary
``paired_t``) or ``population`` (questions random; evaluate's ``paired_two_level`` row).

References: the design registry (``evalcal_core.designs``) and ``evaluate``'s own output for
the test each estimand names; a direct Monte Carlo of per-seed means (explicit repeats, a
question set held fixed) for the ``questions`` variance; scipy's noncentral t for its power;
binomial bounds for the sizes at each estimand's effect 0.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats

import protocols
from evalcal_core import designs
from evalcal_core.designs import METHODS_PAIRED
from reports.end_to_end import check
from reports.evaluate.api import compare
from sim import generators
from sim import plan as P
from sim import plan_model as M
from sim import plan_search as S
from sim.decisions import planner as F
from sim.end_to_end import tidy
from sim.generators.seed_question import mean_sigmoid

#: the README example's components (fractions)
README = M.Components(0.005, 0.08, 0.10, 0.40)


def _binomial_bound(sims, alpha=0.05, z=3.0):
    return alpha + z * np.sqrt(alpha * (1 - alpha) / sims)


def test_each_estimands_test_is_what_evaluate_prints():
    """questions: the design registry's primary protocol of methods_paired, which evaluate
    prints as its primary comparison; population: a reportable protocol evaluate prints as
    a row of its table (read from evaluate's output on a seeds x questions file)."""
    assert M.ESTIMAND_TESTS[M.QUESTIONS] == designs.get(METHODS_PAIRED).primary
    rng = np.random.default_rng(3)
    d = 0.01 * rng.standard_normal((6, 40)) + 0.01 * rng.standard_normal((1, 40))
    body = compare(tidy({"baseline": 0.5 - d / 2, "variant": 0.5 + d / 2})).to_dict()
    assert body["comparisons"][0]["protocol"] == M.ESTIMAND_TESTS[M.QUESTIONS]
    assert M.ESTIMAND_TESTS[M.POPULATION] in [row["protocol"] for row in body["rows"]]
    assert M.ESTIMAND_TESTS[M.POPULATION] != body["comparisons"][0]["protocol"]
    assert METHODS_PAIRED in protocols.get(M.ESTIMAND_TESTS[M.POPULATION]).valid_for
    assert "primary comparison line" in M.where_printed(M.QUESTIONS)
    assert "table row paired_two_level" in M.where_printed(M.POPULATION)


@pytest.mark.parametrize("estimand", M.ESTIMANDS)
def test_planner_prints_one_estimand_line_naming_the_test(estimand, tmp_path, capsys):
    code = P.main(["--sd-seed", "0.5", "--sd-question", "8", "--sd-inter", "10",
                   "--sd-repeat", "40", "--cost", "seed=4", "question=0.01", "repeat=0.0005",
                   "--estimand", estimand, "--sims", "0", "--k-max", "12", "--out",
                   str(tmp_path)])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    lines = [line for line in out if line.startswith("estimand: ")]
    assert len(lines) == 1 and lines[0].startswith(f"estimand: {estimand}: ")
    assert M.ESTIMAND_TESTS[estimand] in lines[0] and "evaluate's" in lines[0]
    import pandas as pd

    table = pd.read_csv(tmp_path / "plan_designs.csv")
    assert (table.estimand == estimand).all()
    assert (table.test == M.ESTIMAND_TESTS[estimand]).all()


def test_estimand_is_refused_for_models_and_defaults_by_design(capsys):
    from evalcal_core.cli import call_main

    assert call_main(P.main, "python -m sim.plan", ["--design", "models", "--sd-question",
                                                    "3", "--estimand", "questions"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"'--estimand' option must be one of population", err), err
    config = S._plan_iv(S.PlanConfig(components=README, costs=M.Costs(seed=1.0)))
    assert config.estimand == M.QUESTIONS
    models = S._plan_iv(S.PlanConfig(components=README, costs=M.Costs(question=1.0),
                                     design="models"))
    assert models.estimand == M.POPULATION
    population = S._plan_iv(S.PlanConfig(components=README, costs=M.Costs(seed=1.0),
                                         estimand="population"))
    assert population.n_min == protocols.get("paired_two_level").min_n


@pytest.mark.parametrize("k,n,r", [(3, 20, 1), (6, 50, 4), (10, 8, 3)])
def test_questions_variance_is_a_direct_monte_carlo_of_per_seed_means(k, n, r):
    """One question set drawn and held fixed; seeds, interaction and r explicit repeats
    drawn 20,000 times: the variance of the mean of the per-seed means is sd_seed^2 / k +
    sd_inter^2 / (k n) + sd_repeat^2 / (k n r) (no sd_question^2 / n term) within 4 SEs of a
    sample variance, and the per-seed means' t has scipy's noncentral-t power."""
    comp = M.Components(0.02, 0.30, 0.05, 0.20)   # a large question spread: it must not enter
    rng = np.random.default_rng(k * 100 + n)
    sims = 20_000
    questions = comp.sd_question * rng.standard_normal(n)          # fixed
    seeds = comp.sd_seed * rng.standard_normal((sims, k, 1))
    inter = comp.sd_inter * rng.standard_normal((sims, k, n))
    repeats = comp.sd_repeat * rng.standard_normal((sims, k, n, r)).mean(axis=-1)
    per_seed = (questions + seeds + inter + repeats).mean(axis=-1)   # (sims, k)
    mean = per_seed.mean(axis=-1)
    expected = float(M.mean_delta_variance(comp, "methods", k, n, r, M.QUESTIONS))
    assert expected == pytest.approx(comp.sd_seed**2 / k + comp.sd_inter**2 / (k * n)
                                     + comp.sd_repeat**2 / (k * n * r), rel=1e-12)
    s2 = mean.var(ddof=1)
    se = s2 * np.sqrt(2 / (sims - 1))   # normal sample variance
    assert abs(s2 - expected) < 4 * se, (s2, expected, se)
    # the population variance adds the question term, which the fixed set does not show
    assert float(M.mean_delta_variance(comp, "methods", k, n, r, M.POPULATION)) > \
        s2 + 10 * se
    # power of paired_t on the per-seed means at the effect on these questions
    effect = 2.0 * np.sqrt(expected)
    t = stats.ttest_1samp(per_seed - questions.mean() + effect, 0.0, axis=1)
    got = np.mean(t.pvalue < 0.05)
    ref = float(M.power(comp, "methods", k, n, r, effect))
    ncp = effect / np.sqrt(expected)
    tc = stats.t.isf(0.025, k - 1)
    assert ref == pytest.approx(stats.nct.sf(tc, k - 1, ncp) + stats.nct.sf(tc, k - 1, -ncp),
                                abs=1e-10)
    assert abs(got - ref) < 4 * np.sqrt(ref * (1 - ref) / sims)


@pytest.mark.parametrize("estimand,k,n,r", [
    ("questions", 10, 343, 10), ("questions", 9, 4, 10), ("questions", 2, 5, 1),
    ("population", 10, 1481, 8), ("population", 9, 598, 10), ("population", 20, 30, 2)])
def test_size_at_the_estimands_effect_zero(estimand, k, n, r):
    """The registry test evaluate prints for the estimand, at that estimand's effect 0 (a new
    draw of seeds and questions per experiment): rejection <= alpha + 3 binomial SEs (3,000
    experiments); for questions the closed form at 0 is alpha exactly."""
    sims = 3000 if k * n < 5000 else 1500
    sim = M.simulate_power(README, "methods", k, n, r, 0.0, estimand=estimand, sims=sims,
                           rng=[k, n, r, len(estimand)])
    assert sim.power <= _binomial_bound(sims), sim
    if estimand == M.QUESTIONS:
        assert float(M.power(README, "methods", k, n, r, 0.0)) == pytest.approx(0.05,
                                                                                rel=1e-12)


def test_paired_t_does_not_hold_a_zero_population_effect():
    """The issue: at the README's population plan (k 10, n 1,481, r 8), paired_t on per-seed
    means rejects a zero *population* effect far above alpha (it tests the effect on the
    questions drawn): more than alpha + 4 binomial SEs over 1,500 experiments."""
    sim = M.simulate_power(README, "methods", 10, 1481, 8, 0.0, estimand=M.POPULATION,
                           test=M.registry_test("paired_t"), sims=1500, rng=45)
    assert sim.power > _binomial_bound(1500, z=4.0), sim


def test_generator_questions_effect_is_the_effect_on_the_drawn_questions():
    """seed_question, questions estimand: each experiment's shift makes the mean over its
    questions of E[D | b_q] (mean_sigmoid quadrature, independent of the Newton steps) the
    target, to 1e-9."""
    gen = generators.get("seed_question", theta=1.0, sd_question=1.5, sd_seed=0.3, rho=0.5,
                         sd_noise=1.0)
    rng = np.random.default_rng(5)
    b = gen.sd_question * rng.standard_normal((7, 1, 30))
    beta = M._questions_beta(gen, b, 0.03)
    var = gen.sd_seed**2 + gen.sd_noise**2
    got = (mean_sigmoid(gen.theta + beta + b, var)
           - mean_sigmoid(gen.theta + b, var)).mean(axis=-1)
    assert np.allclose(got, 0.03, atol=1e-9)
    assert np.ptp(beta) > 0   # a different shift per question set
    assert not M._questions_beta(gen, b, 0.0).any()


@pytest.mark.slow
def test_generator_questions_plan_reaches_power_by_simulation():
    """seed_question with binomial repeats, questions estimand: the chosen design's paired_t
    power, simulated at the effect on each experiment's questions, is the closed form within
    3.5 binomial SEs (the components are the generator's at the population effect: an
    approximation for a question set)."""
    gen = generators.get("seed_question", theta=1.0, sd_question=1.5, sd_seed=0.1, rho=0.5,
                         sd_noise=1.0)
    from sim.plan_components import components_from_generator

    config = S.PlanConfig(components=components_from_generator(gen, 0.02),
                          costs=M.Costs(seed=4.0, question=0.001, repeat=0.0005), model=gen,
                          effect=0.02, k_max=30, n_max=3000, r_max=6, sims=3000, show=1)
    plan = S.run_plan(config)
    for row in plan.checked.itertuples():
        se = np.sqrt(row.power * (1 - row.power) / row.sims)
        assert abs(row.sim_power - row.power) < 3.5 * se, row


def test_family_sample_matches_evaluate():
    """The planner family's experiments as users' files: evaluate's primary (questions) and
    paired_two_level row (population) give the family's decisions (3 + 3 experiments per
    estimand, small cells)."""
    for params in (F.CELLS[4], F.CELLS[-1]):
        report = check(F.sample(params, 3, np.random.default_rng(1)))
        assert report.experiments == 6 and not report.mismatches, report.mismatches
