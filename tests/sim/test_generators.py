"""Synthetic generators: shapes, validation, and their moments against the model formulas."""

import numpy as np
import pytest
from item_pools import shared_pool
from tests_paths import FIXTURE_POOL

from sim import generators

#: parameters a generator needs to be built in the tests (real_pool: the fixture store)
TEST_PARAMS = {"real_pool": {"root": FIXTURE_POOL},
               # an A/B pair draws up to all 4 attempts (an A/A pool up to 2)
               "llm_items": {"pair": "gpt-4o,o1-medium"}}


def test_registry_lists_the_generators():
    assert {"seed_gaussian", "question_mixture", "seed_question"} <= set(generators.names())


@pytest.mark.parametrize("name", generators.names())
def test_draw_shape_and_determinism(name):
    if name == "llm_items":
        shared_pool("matharena_aime_2025_i")  # its default pool: skip, saying so, without it
    g = generators.get(name, **TEST_PARAMS.get(name, {}))
    delta = 0.01 if g.fixed_effect() is None else g.fixed_effect()
    b1, v1 = g.draw(3, 4, delta, np.random.default_rng(5))
    b2, v2 = g.draw(3, 4, delta, np.random.default_rng(5))
    assert b1.shape == v1.shape == (3, 4, g.n)
    np.testing.assert_array_equal(b1, b2)
    np.testing.assert_array_equal(v1, v2)
    if g.binary:
        assert np.isin(b1, (0, 1)).all() and np.isin(v1, (0, 1)).all()


@pytest.mark.parametrize("noise", ["normal", "t3", "skewed"])
def test_seed_gaussian_moments(noise):
    """Mean delta, arm sd and arm correlation equal the model's (MC error: 4 SE)."""
    g = generators.get("seed_gaussian", sigma=0.01, rho=0.3, noise=noise)
    m = 200_000
    b, v = g.draw(m, 1, 0.004, np.random.default_rng(0))
    b, v = b.ravel(), v.ravel()
    d = v - b
    sd_d = g.delta_sd()
    assert abs(d.mean() - 0.004) < 4 * sd_d / np.sqrt(m)
    # sd and correlation: SE of a sample sd ~ sd * sqrt((kurtosis - 1) / (4 m)); heavy
    # tails (t3 has infinite kurtosis) only allow a loose check, so bound generously there.
    rel = 0.01 if noise == "normal" else 0.05
    assert abs(b.std() / 0.01 - 1) < rel
    assert abs(np.corrcoef(b, v)[0, 1] - 0.3) < (0.01 if noise == "normal" else 0.05)


def test_seed_gaussian_skewed_is_skewed():
    g = generators.get("seed_gaussian", noise="skewed", rho=0.0)
    b, _ = g.draw(100_000, 1, 0.0, np.random.default_rng(1))
    x = (b.ravel() - 0.9) / 0.005
    # Centred log-normal with shape 1: skewness (e + 2) sqrt(e - 1) = 6.18.
    skew = np.mean(x**3) / np.mean(x**2) ** 1.5
    assert skew > 3


def test_question_mixture_promotes_exactly_round_delta_n_hard_questions():
    """A question is certain for the variant iff certain for the baseline or promoted."""
    g = generators.get("question_mixture", n_questions=1000)
    b, v = g.draw(50, 200, 0.013, np.random.default_rng(2))
    always_b = (b == 1).all(axis=1)
    always_v = (v == 1).all(axis=1)
    never_b = (b == 0).all(axis=1)
    # With 200 runs an uncertain question (p <= 0.8) is all-correct with prob 0.8**200 ~ 0.
    promoted = always_v & never_b
    np.testing.assert_array_equal(promoted.sum(axis=1), 13)
    assert not (always_b & ~always_v).any()


def test_question_mixture_runs_are_independent_bernoulli_of_the_mixture():
    """Easy/hard fractions, the uncertain p ~ Uniform(0.2, 0.8), and independent runs of the
    two arms at the same p (analytic moments; tolerances of 4 Monte Carlo SE)."""
    g = generators.get("question_mixture", n_questions=2000)
    runs = 400
    b, v = g.draw(20, runs, 0.0, np.random.default_rng(8))
    rb, rv = b.mean(axis=1).ravel(), v.mean(axis=1).ravel()
    total = rb.size
    # An uncertain question (0.2 <= p <= 0.8) is all-right or all-wrong in 400 runs with
    # probability below 1e-38: the extremes are the easy and hard questions.
    for frac, expected in (((rb == 1).mean(), g.p_easy), ((rb == 0).mean(), g.p_hard)):
        assert abs(frac - expected) < 4 * np.sqrt(expected * (1 - expected) / total)
    assert np.array_equal(rb == 1, rv == 1) and np.array_equal(rb == 0, rv == 0)
    unc = (rb > 0) & (rb < 1)
    x, y = rb[unc], rv[unc]
    # E[r] = E[p] = 0.5; Var(r) = Var(p) + E[p(1 - p)] / runs = 0.03 + 0.22 / 400.
    var_r = 0.03 + 0.22 / runs
    assert abs(x.mean() - 0.5) < 4 * np.sqrt(var_r / x.size)
    # The arms share p and draw independently: Var(rv - rb) = 2 E[p(1 - p)] / runs.
    d = y - x
    assert abs(d.var() / (2 * 0.22 / runs) - 1) < 4 * np.sqrt(2 / d.size)


def test_question_mixture_null_is_a_clone_in_expectation():
    g = generators.get("question_mixture", n_questions=500)
    b, v = g.draw(400, 4, 0.0, np.random.default_rng(3))
    d = v.mean(axis=(1, 2)) - b.mean(axis=(1, 2))
    assert abs(d.mean()) < 4 * d.std() / np.sqrt(d.size)


def test_question_mixture_rejects_effects_it_cannot_simulate():
    g = generators.get("question_mixture")
    with pytest.raises(ValueError, match="'effect'.*Got -0.01"):
        g.draw(1, 2, -0.01, 0)
    with pytest.raises(ValueError, match="'effect'"):
        g.draw(1, 2, 0.5, 0)


def test_seed_question_expected_gain_is_delta():
    """The calibrated logit shift gives E[acc_v] - E[acc_b] = delta (quadrature vs MC)."""
    g = generators.get("seed_question", n_questions=400)
    assert g.expected_accuracy(g.beta_for(0.02)) - g.expected_accuracy() == pytest.approx(0.02)
    b, v = g.draw(2000, 2, 0.02, np.random.default_rng(4))
    d = v.mean(axis=(1, 2)) - b.mean(axis=(1, 2))
    assert abs(d.mean() - 0.02) < 4 * d.std() / np.sqrt(d.size)
    acc = b.mean(axis=(1, 2))
    assert abs(acc.mean() - g.expected_accuracy()) < 4 * acc.std() / np.sqrt(acc.size)


def test_seed_question_fit_recovers_parameters():
    """Method of moments on one large simulated pool recovers the generating parameters."""
    true = generators.get("seed_question", n_questions=20_000, theta=1.0, sd_question=1.5,
                          sd_noise=0.8, sd_seed=0.1, rho=0.5)
    b, v = true.draw(1, 40, 0.01, np.random.default_rng(6))
    fit = generators.generator_class("seed_question").fit(b[0], v[0])
    assert fit.n_questions == 20_000
    assert fit.theta == pytest.approx(1.0, abs=0.1)
    assert fit.sd_question == pytest.approx(1.5, abs=0.1)
    assert fit.sd_noise == pytest.approx(0.8, abs=0.15)
    assert fit.sd_seed == pytest.approx(0.1, abs=0.05)


@pytest.mark.parametrize("name, params, match", [
    ("seed_gaussian", {"sigma": -1}, "'sigma'.*>= 0.*Got -1"),
    ("seed_gaussian", {"rho": 2}, "'rho'.*Got 2"),
    ("seed_gaussian", {"noise": "cauchy"}, "'noise'.*Got 'cauchy'"),
    ("seed_gaussian", {"nope": 1}, "no parameter 'nope'"),
    ("question_mixture", {"n_questions": 1.5}, "'n_questions'.*integer"),
    ("seed_question", {"sd_question": -0.1}, "'sd_question'"),
])
def test_bad_parameters(name, params, match):
    with pytest.raises(ValueError, match=match):
        generators.get(name, **params)


def test_unknown_generator():
    with pytest.raises(ValueError, match="'generator'.*Got 'nope'"):
        generators.get("nope")


@pytest.mark.parametrize("sims, k", [(0, 3), (2, 0), (2.5, 3)])
def test_bad_draw_sizes(sims, k):
    with pytest.raises(ValueError, match="'sims'|'k'"):
        generators.get("seed_gaussian").draw(sims, k, 0.0, 0)


def test_real_pool_draws_are_subsets_of_distinct_paired_seeds():
    g = generators.get("real_pool", root=FIXTURE_POOL, scenario="S1")
    pool_b, pool_v = g.pool()
    b, v = g.draw(200, 5, g.fixed_effect(), np.random.default_rng(0))
    # Identify each drawn row with its pool seed through the baseline record.
    seed_of = {row.tobytes(): i for i, row in enumerate(pool_b)}
    for exp_b, exp_v in zip(b, v):
        seeds = [seed_of[row.tobytes()] for row in exp_b]
        assert len(set(seeds)) == 5
        np.testing.assert_array_equal(exp_v, pool_v[seeds])
    # Uniform over seeds: each appears in 5/12 of the experiments (binomial, 4 SE).
    counts = np.zeros(len(pool_b))
    for exp_b in b:
        for row in exp_b:
            counts[seed_of[row.tobytes()]] += 1
    p = 5 / 12
    assert np.all(np.abs(counts / 200 - p) < 4 * np.sqrt(p * (1 - p) / 200))


def test_real_pool_truth_and_bounds():
    null = generators.get("real_pool", root=FIXTURE_POOL, scenario="S0p")
    assert null.fixed_effect() == 0.0
    effect = generators.get("real_pool", root=FIXTURE_POOL, scenario="S1")
    assert effect.fixed_effect() == pytest.approx(effect.pool_deltas().mean())
    with pytest.raises(ValueError, match="'k'.*<= 12"):
        effect.draw(1, 13, effect.fixed_effect(), 0)
    with pytest.raises(ValueError, match="fixed by the pool"):
        effect.draw(1, 3, 0.5, 0)
    s0 = generators.get("real_pool", root=FIXTURE_POOL, scenario="S0")
    b, v = s0.pool()
    np.testing.assert_array_equal(b, v)  # S0: the variant is the baseline, delta exactly 0


def test_real_pool_from_a_users_csv(tmp_path):
    path = tmp_path / "pool.csv"
    rows = ["seed,arm,metric"] + [f"{s},{a},{0.9 + 0.001 * s + (0.004 if a == 'variant' else 0)}"
                                  for s in range(6) for a in ("baseline", "variant")]
    path.write_text("\n".join(rows) + "\n")
    g = generators.get("real_pool", csv=str(path), scenario="S1", null=False)
    assert g.pool_size == 6 and g.n == 1 and not g.binary
    assert g.fixed_effect() == pytest.approx(0.004)


def test_real_pool_missing_store():
    with pytest.raises(ValueError, match="does not exist"):
        generators.get("real_pool", root="/nonexistent/pool")


def test_whole_numbers_for_float_parameters_name_the_same_cell():
    a = generators.get("seed_gaussian", rho=0)
    b = generators.get("seed_gaussian", rho=0.0)
    assert a.describe() == b.describe()
