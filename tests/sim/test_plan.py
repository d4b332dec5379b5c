"""Tests of the study planner (:mod:`sim.plan`).

References: the closed-form variance against simulated experiments of ``seed_question``
(its own ``draw`` at r = 1; 3 SEs of a sample variance, SE from the fourth moment); the power
against scipy's noncentral t and statsmodels' ``TTestPower``; the search against a brute
force over the chosen design's neighbourhood; the pilot's ANOVA against
``paired_two_level``'s variance.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower

from protocols.methods.paired_two_level import two_level_variance
from sim import generators
from sim import plan as P
from sim import plan_components as C
from sim import plan_model as M
from sim import plan_search as S

#: a setting where all four components matter (seed spread, question spread, interaction)
SETTING = dict(theta=1.0, sd_question=1.5, sd_seed=0.3, rho=0.5, sd_noise=1.0)
EFFECT = 0.02
REPO = Path(__file__).resolve().parents[2]


def _gen():
    return generators.get("seed_question", **SETTING)


def _sample_var_se(x):
    """Sample variance and its standard error (fourth central moment, any law)."""
    m = x.size
    s2 = x.var(ddof=1)
    m4 = ((x - x.mean()) ** 4).mean()
    return s2, np.sqrt(max(m4 - (m - 3) / (m - 1) * s2**2, 0.0) / m)


def _check_variance(cells, sims, seed):
    gen = _gen()
    comp = C.components_from_generator(gen, EFFECT)
    rng = np.random.default_rng(seed)
    for k, n, r in cells:
        if r == 1 and (k, n) == (3, 200):
            # the generator's own public draw: r = 1 is its law exactly
            base, variant = gen.draw(sims, k, EFFECT, rng) if n == gen.n else \
                generators.get("seed_question", n_questions=n, **SETTING).draw(
                    sims, k, EFFECT, rng)
            mean = (variant.astype(float) - base).mean(axis=(1, 2))
        else:
            mean = M.draw_deltas(gen, "methods", sims, k, n, r, EFFECT, rng,
                                 "population").mean(axis=(1, 2))
        s2, se = _sample_var_se(mean)
        expected = float(M.mean_delta_variance(comp, "methods", k, n, r, "population"))
        assert abs(s2 - expected) < 3 * se, (k, n, r, s2, expected, se)
        assert abs(mean.mean() - EFFECT) < 3.5 * np.sqrt(expected / sims)


def test_closed_form_variance_matches_simulation_fast():
    """Four cells, 3 SEs (reference: seed_question's draws, r = 1 through ``draw``)."""
    _check_variance([(3, 200, 1), (2, 50, 4), (6, 30, 2), (4, 100, 8)], sims=3000, seed=1)


@pytest.mark.slow
def test_closed_form_variance_matches_simulation_grid():
    """Twelve cells (k in 2, 5; n in 40, 300; r in 1, 3, 8), 4,000 experiments each."""
    cells = [(k, n, r) for k in (2, 5) for n in (40, 300) for r in (1, 3, 8)]
    _check_variance(cells, sims=4000, seed=2)


def test_components_models_fold_interaction_and_drop_seeds():
    """Consistency only: models' components are methods' at sd_seed = 0, interaction folded."""
    gen = _gen()
    m = C.components_from_generator(gen, EFFECT, "models")
    ref = C.components_from_generator(generators.get("seed_question", **{**SETTING,
                                                                          "sd_seed": 0.0}),
                                      EFFECT)
    assert m.sd_seed == 0 and m.sd_inter == 0
    assert m.sd_question**2 == pytest.approx(ref.sd_question**2 + ref.sd_inter**2, rel=1e-9)
    assert m.sd_repeat == pytest.approx(ref.sd_repeat, rel=1e-12)


@pytest.mark.parametrize("k,n,r,effect", [(3, 100, 1, 0.01), (8, 500, 4, 0.005),
                                          (20, 50, 2, 0.005)])
def test_methods_power_is_scipy_noncentral_t_in_its_exact_limit(k, n, r, effect):
    """No question, interaction or repeat noise (n >= k): the two-level t is the t on the k
    per-seed deltas (k - 1 df), whose power is scipy's noncentral t and statsmodels'
    ``TTestPower``; so its power at effect 0 is alpha (48-node quadrature in the
    chi-squares' probabilities: measured within 3.3e-5 for k = 2..20, so 1e-4). The
    questions estimand's paired_t is that noncentral t exactly (1e-10)."""
    comp = M.Components(sd_seed=0.01, sd_question=0.0, sd_inter=0.0, sd_repeat=0.0)
    ncp = effect / (0.01 / np.sqrt(k))
    tc = stats.t.isf(0.025, k - 1)
    # lower tail as sf at -ncp: scipy's cdf is NaN far in the tail
    ref = stats.nct.sf(tc, k - 1, ncp) + stats.nct.sf(tc, k - 1, -ncp)
    got = float(M.power(comp, "methods", k, n, r, effect, estimand="population"))
    assert got == pytest.approx(ref, abs=1e-4)
    assert float(M.power(comp, "methods", k, n, r, effect)) == pytest.approx(ref, abs=1e-10)
    sm = TTestPower().power(effect_size=effect / 0.01, nobs=k, alpha=0.05,
                            alternative="two-sided")
    assert got == pytest.approx(sm, abs=1e-4)
    assert float(M.power(comp, "methods", k, n, r, 0.0, estimand="population")) == \
        pytest.approx(0.05, abs=1e-4)


#: the README example's components (fractions) and the old planner's design for them
README = M.Components(0.005, 0.08, 0.10, 0.40)


def test_power_at_zero_effect_is_alpha_for_the_exact_tests():
    """models (paired t over questions) and clusters (t over G cluster means) are exact t
    tests: the closed form at effect 0 is alpha (scipy's central t: exact)."""
    for design, k, n in (("models", 1, 30), ("models", 1, 2), ("clusters", 2, 5),
                         ("clusters", 40, 10)):
        for alpha in (0.05, 0.01):
            got = float(M.power(README, design, k, n, 3, 0.0, alpha))
            assert got == pytest.approx(alpha, rel=1e-12), (design, k, n)


@pytest.mark.parametrize("k,n,r", [(9, 598, 10), (9, 2, 10), (20, 2, 10), (2, 2, 1)])
def test_methods_level_holds_for_the_population_estimand(k, n, r):
    """The old planner's 'power' at a zero population effect was paired_t's rejection rate
    over the question draw: 17-18% at the README design and ~58% at n = 2 (its power did
    not depend on the effect there). Now the closed form at effect 0 is at most alpha, and
    the test rejects a true population null (a new question set per experiment) at most
    alpha (4 binomial SEs at alpha; 4,000 experiments)."""
    closed = float(M.power(README, "methods", k, n, r, 0.0, estimand="population"))
    assert closed <= 0.05 + 1e-9
    sim = M.simulate_power(README, "methods", k, n, r, 0.0, estimand="population",
                           test=M.two_level_test, sims=4000, rng=21)
    assert sim.power <= 0.05 + 4 * np.sqrt(0.05 * 0.95 / 4000)
    assert abs(sim.power - closed) < 4 * np.sqrt(max(closed * (1 - closed), 0.05 * 0.95 / 10)
                                                 / 4000)


@pytest.mark.parametrize("comp,k,n,r", [
    (README, 9, 598, 10), (README, 3, 20, 1), (README, 9, 2, 10),
    (M.Components(0.02, 0.01, 0.05, 0.3), 2, 2, 1),
    (M.Components(0.05, 0.0, 0.01, 0.01), 2, 5, 1),
    (M.Components(0.004, 0.03, 0.0, 0.05), 4, 20, 1)])
def test_methods_closed_form_matches_simulated_two_level_test(comp, k, n, r):
    """Closed form (quadrature over the two mean squares) against the simulated test
    (normal draws of every (seed, question) cell, a new question set per experiment) at
    effect 0 and at 2.5 SDs of the mean delta: 4 binomial SEs, 6,000 experiments."""
    effect = 2.5 * float(np.sqrt(M.mean_delta_variance(comp, "methods", k, n, r,
                                                       "population")))
    for j, at in enumerate((0.0, effect)):
        expected = float(M.power(comp, "methods", k, n, r, at, estimand="population"))
        sim = M.simulate_power(comp, "methods", k, n, r, at, estimand="population",
                               test=M.two_level_test, sims=6000, rng=40 + j)
        se = np.sqrt(max(expected * (1 - expected), 1e-3) / 6000)
        assert abs(sim.power - expected) < 4 * se, (at, sim.power, expected)


def test_two_level_test_is_the_anova_t():
    """The statistic is mean / sqrt((MS_seed + MS_question) / (k n)) with the two-way ANOVA
    mean squares (:func:`sim.plan_components.anova_mean_squares`, as ``paired_two_level`` reads
    them) on min(k, n) - 1 df (scipy's t quantile): consistency, on 200 random arrays."""
    rng = np.random.default_rng(12)
    d = 0.02 + 0.05 * rng.standard_normal((200, 4, 7))
    got = M.two_level_test(d, 0.05)
    ref = []
    for x in d:
        ms_s, ms_q, _ = C.anova_mean_squares(x)
        t = abs(x.mean()) / np.sqrt((ms_s + ms_q) / 28)
        ref.append(t > stats.t.isf(0.025, 3))
    assert np.array_equal(got, ref) and 0 < got.sum() < 200
    assert not M.two_level_test(np.full((1, 3, 4), 0.1), 0.05).any()   # no variance: no test
    with pytest.raises(ValueError, match=r"'deltas'.* k >= 2 and n >= 2"):
        M.two_level_test(np.zeros((5, 3, 1)))


def test_models_power_is_statsmodels_paired_t():
    """models: paired t on n per-question deltas, sd sqrt(sc2 + si2 + sr2 / r)."""
    comp = M.Components(0.0, 0.05, 0.03, 0.45)
    for n, r in ((200, 1), (800, 3)):
        sd = np.sqrt(0.05**2 + 0.03**2 + 0.45**2 / r)
        sm = TTestPower().power(effect_size=0.03 / sd, nobs=n, alpha=0.05,
                                alternative="two-sided")
        assert M.power(comp, "models", 1, n, r, 0.03) == pytest.approx(sm, abs=1e-8)


COSTS = M.Costs(seed=4.0, question=0.001, repeat=0.0005)


def _config(**kw):
    gen = generators.get("seed_question", **{**SETTING, "sd_seed": 0.1})
    base = dict(components=C.components_from_generator(gen, EFFECT), costs=COSTS, model=gen,
                effect=EFFECT, power=0.8, k_max=30, n_max=3000, r_max=6, sims=0)
    return S.PlanConfig(**{**base, **kw})


def test_search_is_cheapest_in_brute_forced_neighbourhood():
    """No (k, n, r) around the chosen design (k +- 3, n in [n/2, 2n], every r) with
    closed-form power >= 0.8 costs less (brute force)."""
    plan = S.run_plan(_config())
    ch = plan.chosen
    assert ch["power"] >= 0.8 and ch == plan.designs.iloc[0].to_dict() | {
        key: int(ch[key]) for key in "knr"}
    comp = plan.components
    ks = np.arange(max(2, ch["k"] - 3), min(30, ch["k"] + 3) + 1)
    ns = np.arange(max(2, ch["n"] // 2), min(3000, 2 * ch["n"]) + 1)
    rs = np.arange(1, 7)
    kk, nn, rr = np.meshgrid(ks, ns, rs, indexing="ij")
    ok = M.power(comp, "methods", kk, nn, rr, EFFECT) >= 0.8
    cheaper = M.cost(COSTS, "methods", kk, nn, rr) < ch["cost"] - 1e-9
    assert not np.any(ok & cheaper), list(zip(kk[ok & cheaper], nn[ok & cheaper],
                                              rr[ok & cheaper]))[:5]


@pytest.mark.slow
def test_chosen_design_reaches_power_by_simulation():
    """The chosen design's simulated power (seed_question, binomial repeats, registry
    paired_t) is >= 0.8 within Monte Carlo error (3 binomial SEs), and the neighbours'
    simulated powers agree with the closed form (3 SEs)."""
    plan = S.run_plan(_config(sims=3000, show=1))
    rows = plan.checked
    chosen = rows[rows.role == "best #1"].iloc[0]
    se = np.sqrt(0.8 * 0.2 / chosen.sims)
    assert chosen.sim_power >= 0.8 - 3 * se
    for row in rows.itertuples():
        se = np.sqrt(row.power * (1 - row.power) / row.sims)
        assert abs(row.sim_power - row.power) < 3.5 * se, row


def test_simulated_power_of_normal_model_matches_closed_form():
    """Components model (normal draws): simulated vs closed form, 3 SEs."""
    comp = M.Components(0.005, 0.004, 0.01, 0.3)
    for design, k, n, r in (("methods", 5, 300, 2), ("models", 1, 1500, 2)):
        expected = float(M.power(comp, design, k, n, r, 0.01))
        sim = M.simulate_power(comp, design, k, n, r, 0.01, sims=4000, rng=3)
        assert abs(sim.power - expected) < 3 * np.sqrt(expected * (1 - expected) / 4000)
        assert sim.low <= sim.power <= sim.high


def test_budget_mode_gives_the_smallest_detectable_effect():
    """--budget: every listed design fits the budget; the chosen one's power at its MDE is
    the target; no design on the grid detects a smaller effect within the budget."""
    plan = S.run_plan(_config(effect=None, budget=300.0))
    ch = plan.chosen
    assert (plan.designs.cost <= 300.0 + 1e-9).all()
    assert ch["power"] == pytest.approx(0.8, abs=1e-6)
    assert ch["effect_pp"] == plan.designs.effect_pp.min()
    # a larger budget detects a smaller effect
    bigger = S.run_plan(_config(effect=None, budget=1200.0))
    assert bigger.chosen["effect_pp"] < ch["effect_pp"]


def test_pilot_anova_agrees_with_paired_two_level():
    """The pilot's mean squares give paired_two_level's variance [MS_s + max(MS_q - MS_e,
    0)] / (k n), and recover known normal components (consistency: 4 SEs, loose)."""
    rng = np.random.default_rng(7)
    k, n = 8, 400
    a = 0.02 * rng.standard_normal((k, 1))
    c = 0.03 * rng.standard_normal((1, n))
    d = 0.01 + a + c + 0.1 * rng.standard_normal((k, n))
    ms_s, ms_q, ms_e = C.anova_mean_squares(d)
    v, _, _ = two_level_variance(d)
    assert (ms_s + max(ms_q - ms_e, 0)) / (k * n) == pytest.approx(float(v), rel=1e-10)
    comp = C.components_from_pilot(np.zeros((k, n)), d, sd_repeat=0.06)
    assert comp.sd_inter == pytest.approx(np.sqrt(0.1**2 - 0.06**2), rel=0.05)
    assert comp.sd_question == pytest.approx(0.03, rel=0.25)
    assert comp.sd_repeat == 0.06


def test_pilot_boundary_and_split_are_warned():
    """A pilot with no seed effect: sd_seed at 0 with a note; no sd_repeat: a note."""
    rng = np.random.default_rng(8)
    d = 0.1 * rng.standard_normal((3, 200))
    d -= d.mean(axis=1, keepdims=True)   # seeds identical: MS_seed = 0
    comp = C.components_from_pilot(np.zeros_like(d), d)
    assert comp.sd_seed == 0 and comp.sd_repeat == 0
    assert any("sd_seed estimate at the boundary 0" in note for note in comp.notes)
    assert any("cannot be told apart" in note for note in comp.notes)


def _write_pilot(path, k=4, n=60, seed=0):
    gen = generators.get("seed_question", n_questions=n, **SETTING)
    base, variant = gen.draw(1, k, 0.02, seed)
    rows = [(s, arm, f"q{q}", int(x[0, s, q])) for arm, x in (("baseline", base),
                                                               ("variant", variant))
            for s in range(k) for q in range(n)]
    pd.DataFrame(rows, columns=["seed", "arm", "question", "score"]).to_csv(path, index=False)
    return path


def test_cli_from_pilot_prints_components(tmp_path, capsys):
    path = _write_pilot(tmp_path / "pilot.csv")
    code = P.main(["--from-pilot", str(path), "--cost", "seed=4", "question=0.001",
                   "repeat=0.0005", "--effect", "3", "--sims", "200", "--k-max", "12",
                   "--n-max", "2000", "--r-max", "3", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code in (0, 1)
    assert "components: sd_seed" in out and " pp" in out and "MS_seed" in out
    # greedy repeats are identical: the residual is interaction; the model's split
    # (sampled decoding) is offered as an --sd-repeat
    assert "warning: one run per (seed, question): repeat noise and interaction" in out
    assert "the residual is taken as interaction" in out and "state --sd-repeat " in out
    if code == 0:
        checked = pd.read_csv(tmp_path / "out" / "plan_checked.csv")
        assert {"sim_power", "sim_low", "sim_high", "cost", "power"} <= set(checked)


def test_pilot_models_reads_runs_as_repeats():
    """models: the residual of a pilot's runs is repeat noise (no seed part, no split)."""
    rng = np.random.default_rng(9)
    d = 0.03 * rng.standard_normal((1, 300)) + 0.2 * rng.standard_normal((4, 300))
    comp = C.components_from_pilot(np.zeros_like(d), d, design="models")
    assert comp.sd_seed == 0 and comp.sd_inter == 0
    assert comp.sd_repeat == pytest.approx(0.2, rel=0.05)
    share = C.components_from_pilot(np.zeros_like(d), d, repeat_share=0.75)
    assert share.sd_repeat**2 == pytest.approx(3 * share.sd_inter**2, rel=1e-12)


def test_cli_subprocess_machine_readable(tmp_path):
    """Once through ``python -m sim.plan``: exit 0 and the CSV of designs."""
    out = tmp_path / "o"
    done = subprocess.run(
        [sys.executable, "-m", "sim.plan", "--sd-seed", "0.5", "--sd-inter", "1",
         "--sd-repeat", "45", "--cost", "seed=4", "question=0.001", "repeat=0.0005",
         "--k-max", "20", "--n-max", "2000", "--r-max", "4", "--sims", "0", "--out",
         str(out)], cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(out / "plan_designs.csv")
    assert (table.power >= 0.8 - 1e-12).all() and table.cost.is_monotonic_increasing
    assert "chosen: k = " in done.stdout
    # the estimand (default: these questions), one line on the terminal and a column
    assert sum(line.startswith("estimand: questions: the effect on these n questions")
               for line in done.stdout.splitlines()) == 1
    assert (table.estimand == "questions").all() and (table.test == "paired_t").all()


def test_unreachable_goal_exits_1(capsys):
    code = P.main(["--sd-seed", "5", "--effect", "0.1", "--k-max", "3", "--n-max", "10",
                   "--r-max", "1", "--sims", "0"])
    assert code == 1
    assert "no design within the bounds" in capsys.readouterr().out


@pytest.mark.parametrize("argv,match", [
    (["--sd-seed", "1", "--k-max", "1"], r"'--k-max' option must be an integer >= 2"),
    (["--sd-seed", "1", "--n-max", str(10**8)], r"'--n-max' option must be an integer >= 2 "
                                                r"and <= 10000000"),
    (["--sd-seed", "1", "--r-max", "0"], r"'--r-max' option must be an integer >= 1"),
    (["--sd-seed", "1", "--k-max", "1000", "--r-max", "100"], r"<= 5000 \(the \(k, r\) pairs"),
    (["--sd-seed", "1", "--effect", "-1"], r"'--effect' option must be a finite number > 0"),
    (["--sd-seed", "1", "--effect", "1", "--budget", "5"], r"exactly one of them"),
    (["--sd-seed", "1", "--budget", "5", "--cost", "seed=0"], r"'--cost' option must be "
                                                              r"positive"),
    (["--sd-seed", "1", "--cost", "gpu=3"], r"KEY one of seed, question, repeat"),
    (["--sd-seed", "1", "--cost", "seed=x"], r"KEY=NUMBER"),
    (["--sd-seed", "1", "--cost", "seed=-1"], r"'--cost seed' option must be a finite number "
                                              r">= 0"),
    (["--sd-seed", "1", "--design", "paired"], r"'--design' option must be one of methods, "
                                               r"models"),
    (["--effect", "1"], r"planner needs variance components"),
    (["--sd-question", "1"], r"'--sd-seed' option must be positive"),
    (["--sd-seed", "1", "--power", "1.5"], r"'--power' option must be a finite number"),
    (["--sd-seed", "1", "--sims", "-1"], r"'--sims' option must be an integer >= 0"),
    (["--sd-seed", "-2"], r"'--sd-seed' option must be a finite number >= 0"),
    (["--from-pilot", "nope.csv", "--param", "theta=1"], r"not combined"),
    (["--sd-seed", "1", "--cluster-size", "5"], r"exactly when --design is models_clustered"),
    (["--design", "models_clustered", "--cluster-size", "0", "--sd-cluster", "1"],
     r"'--cluster-size' option must be an integer >= 1"),
    (["--design", "models_clustered", "--cluster-size", "6000", "--sd-cluster", "1"],
     r"'--n-max' option must be an integer >= 12000"),
])
def test_bad_input_is_one_line_exit_2(argv, match, capsys):
    from evalcal_core.cli import call_main

    assert call_main(P.main, "python -m sim.plan", argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert re.search(match, err), err


def _clustered(m, **kw):
    comp = M.Components(0.0, 0.03, 0.01, 0.45, sd_cluster=kw.pop("sd_cluster", 0.02))
    base = dict(components=comp, costs=M.Costs(question=0.001, repeat=0.0005),
                design="models_clustered", cluster_size=m, effect=0.01, k_max=400,
                n_max=20000, r_max=4, sims=0)
    return S.PlanConfig(**{**base, **kw})


def test_clustered_with_clusters_of_one_is_models():
    """m = 1, no cluster effect: the G-cluster t is the n-question paired t."""
    config = _clustered(1, sd_cluster=0.0, effect=0.03, k_max=1000)
    plan = S.run_plan(config)
    models = S.run_plan(dataclasses.replace(config, design="models"))
    assert plan.chosen["n"] == models.chosen["n"] and plan.chosen["r"] == models.chosen["r"]
    assert plan.chosen["power"] == pytest.approx(models.chosen["power"], rel=1e-9)
    assert plan.chosen["cost"] == pytest.approx(models.chosen["cost"], rel=1e-12)


def test_clustered_variance_is_the_design_effect_formula():
    """Var(mean D) = Var_iid(n = G m) (1 + (m - 1) icc) (Kish's design effect)."""
    config = S._plan_iv(_clustered(25))
    inner = S.clustered_as_methods(config)
    c = config.components
    for g, r in ((10, 1), (40, 3)):
        total = c.sd_cluster**2 + c.sd_question**2 + c.sd_inter**2 + c.sd_repeat**2 / r
        deff = 1 + (25 - 1) * M.icc(inner.components, r)
        expected = total / (g * 25) * deff
        got = M.mean_delta_variance(inner.components, "clusters", g, 25, r)
        assert got == pytest.approx(expected, rel=1e-12)


def test_clustered_power_matches_question_level_simulation():
    """A direct simulation at the question level (cluster effects, question deltas, r
    normal repeats) tested by ``scipy.stats.ttest_1samp`` on the G cluster means: 3 SEs."""
    config = S._plan_iv(_clustered(10))
    inner = S.clustered_as_methods(config)
    c = config.components
    g, m, r, sims, effect = 30, 10, 2, 4000, 0.01
    rng = np.random.default_rng(11)
    d = (effect + c.sd_cluster * rng.standard_normal((sims, g, 1))
         + np.hypot(c.sd_question, c.sd_inter) * rng.standard_normal((sims, g, m))
         + c.sd_repeat / np.sqrt(r) * rng.standard_normal((sims, g, m)))
    sim = np.mean(stats.ttest_1samp(d.mean(axis=2), 0.0, axis=1).pvalue < 0.05)
    expected = float(M.power(inner.components, "clusters", g, m, r, effect))
    assert abs(sim - expected) < 3 * np.sqrt(expected * (1 - expected) / sims)


def test_clustered_plan_reports_clusters(capsys):
    code = P.main(["--design", "models_clustered", "--cluster-size", "20", "--sd-cluster", "2",
                   "--sd-question", "3", "--sd-repeat", "45", "--cost", "question=0.001",
                   "repeat=0.0005", "--k-max", "400", "--n-max", "20000", "--r-max", "3",
                   "--sims", "300"])
    out = capsys.readouterr().out
    assert code == 0 and "G = " in out and "clusters of 20" in out and "icc" in out


def test_neighbours_stay_in_bounds():
    got = S.neighbours("methods", 2, 10, 1, k_min=2, k_max=2, n_min=2, n_max=12, r_max=2)
    assert got == [(2, 12, 1), (2, 8, 1), (2, 10, 2)]
    got = S.neighbours("models", 1, 100, 3, k_min=2, k_max=50, n_min=2, n_max=1000, r_max=3)
    assert got == [(1, 125, 3), (1, 80, 3), (1, 100, 2)]
