"""The design generators ``clustered_questions`` and ``unpaired_seeds``: structure, validation,
and moments against the model's formulas (quadrature from ``seed_question``)."""

import numpy as np
import pytest

from sim import generators
from sim.generators.clustered_questions import cluster_sizes
from sim.generators.seed_question import mean_sigmoid, pair_sigmoid


def test_registered_with_their_design_kinds():
    assert generators.get("clustered_questions").design == "models_clustered"
    assert generators.get("unpaired_seeds").design == "methods_independent"


# ------------------------------------------------------------------------------------------
# clustered_questions: the fixed cluster structure


@pytest.mark.parametrize("n, g, min_size", [(100, 10, 2), (100, 50, 2), (5000, 20, 2),
                                            (1000, 10, 30)])
def test_cluster_sizes_sum_to_n_with_the_minimum(n, g, min_size):
    gen = generators.get("clustered_questions", n_questions=n, n_clusters=g, min_size=min_size)
    sizes = gen.sizes
    assert sizes.shape == (g,) and sizes.sum() == n and sizes.min() >= min_size
    codes = gen.clusters()
    assert codes.shape == (n,) and codes.dtype.kind == "i"
    np.testing.assert_array_equal(np.bincount(codes, minlength=g), sizes)
    # contiguous blocks, in cluster order
    assert np.all(np.diff(codes) >= 0)


def test_cluster_sizes_are_fixed_by_cluster_seed_and_unequal():
    a = generators.get("clustered_questions", n_questions=1000, n_clusters=20)
    b = generators.get("clustered_questions", n_questions=1000, n_clusters=20)
    c = generators.get("clustered_questions", n_questions=1000, n_clusters=20, cluster_seed=1)
    np.testing.assert_array_equal(a.sizes, b.sizes)
    assert not np.array_equal(a.sizes, c.sizes)
    assert a.sizes.max() > 2 * a.sizes.mean()
    # the draws do not touch the structure
    a.draw(2, 1, 0.0, np.random.default_rng(0))
    np.testing.assert_array_equal(a.sizes, b.sizes)


def test_dirichlet_multinomial_sizes_mean_and_spread():
    """Shares ~ Dirichlet(1): a cluster's extra size is Beta-binomial(R, 1, G - 1), mean R/G
    and variance R (G - 1) (G + R) / (G^2 (G + 1)) (R = n - G min; exact moments, 4 SE, the
    variance's SE estimated from the squared deviations)."""
    rng = np.random.default_rng(3)
    n, g, m = 400, 10, 2
    sizes = np.array([cluster_sizes(n, g, m, 1.0, rng) for _ in range(20000)])
    rest = n - g * m
    extra = sizes[:, 0] - m
    var = rest * (g - 1) * (g + rest) / (g**2 * (g + 1))
    assert abs(extra.mean() - rest / g) < 4 * np.sqrt(var / extra.size)
    sq = (extra - rest / g) ** 2
    assert abs(sq.mean() - var) < 4 * sq.std() / np.sqrt(extra.size)


@pytest.mark.parametrize("params, match", [
    ({"icc": 1.0}, r"'icc' parameter of generator clustered_questions must be a finite "
                   r"number >= 0 and < 1\. Got 1\.0"),
    ({"icc": -0.1}, "'icc'"),
    ({"n_questions": 100, "n_clusters": 101}, r"'n_clusters'.*<= 100\. Got 101"),
    ({"n_questions": 100, "n_clusters": 50, "min_size": 3}, r"'min_size'.*<= 2\. Got 3"),
    ({"concentration": 0.0}, r"'concentration'.*> 0"),
    ({"sd_effect": -1.0}, "'sd_effect'"),
    ({"cluster_seed": -1}, "'cluster_seed'"),
])
def test_clustered_questions_validation(params, match):
    with pytest.raises(ValueError, match=match):
        generators.get("clustered_questions", **params)


def test_clustered_questions_effect_range():
    gen = generators.get("clustered_questions")
    with pytest.raises(ValueError, match="'effect'"):
        gen.draw(1, 1, 1 - gen.expected_accuracy(), 0)


# ------------------------------------------------------------------------------------------
# clustered_questions: moments


@pytest.mark.parametrize("delta", [0.0, 0.03, -0.02])
def test_beta_gives_the_expected_gain_exactly(delta):
    """The variant's expected accuracy minus the baseline's is ``delta`` (quadrature)."""
    gen = generators.get("clustered_questions", sd_effect=0.8)
    beta = gen.beta_for(delta)
    gain = mean_sigmoid(gen.theta + beta, gen.sd_question**2 + gen.sd_effect**2) \
        - mean_sigmoid(gen.theta, gen.sd_question**2)
    assert abs(gain - delta) < 1e-9
    if delta == 0:
        # The effect's spread alone lowers an above-0.5 accuracy: beta > 0 at the null.
        assert beta > 0


@pytest.mark.parametrize("delta", [0.0, 0.02])
def test_mean_gain_over_experiments_is_delta(delta):
    """Mean over experiments of (variant - baseline accuracy) = delta (4 Monte Carlo SE)."""
    gen = generators.get("clustered_questions", n_questions=200, n_clusters=10, icc=0.3,
                         sd_effect=1.0)
    b, v = gen.draw(4000, 2, delta, np.random.default_rng(11))
    d = v.mean(axis=(1, 2)) - b.mean(axis=(1, 2))
    assert abs(d.mean() - delta) < 4 * d.std() / np.sqrt(d.size)


@pytest.mark.parametrize("icc", [0.0, 0.3])
def test_pairs_of_questions_match_the_latent_icc(icc):
    """Rate at which two questions are both right: within a cluster
    ``E[expit(x + X1) expit(x + X2)]`` with latent covariance ``icc * total variance``
    (``seed_question.pair_sigmoid``, quadrature); across clusters the product of the means.
    Both arms; tolerance 4 Monte Carlo SE."""
    gen = generators.get("clustered_questions", n_questions=40, n_clusters=4, min_size=10,
                         icc=icc, sd_effect=1.0)
    sims = 40000
    b, v = gen.draw(sims, 1, 0.0, np.random.default_rng(5))
    codes = gen.clusters()
    beta = gen.beta_for(0.0)
    for y, x, total in ((b[:, 0], gen.theta, gen.sd_question**2),
                        (v[:, 0], gen.theta + beta, gen.sd_question**2 + gen.sd_effect**2)):
        y = y.astype(float)
        s0, s1 = y[:, codes == 0].sum(axis=1), y[:, codes == 1].sum(axis=1)
        m = 10
        within = (s0 * (s0 - 1)) / (m * (m - 1))       # per experiment, mean over pairs
        across = s0 * s1 / m**2
        want_within = pair_sigmoid(x, x, total, icc * total)
        want_across = float(mean_sigmoid(x, total)) ** 2
        for got, want in ((within, want_within), (across, want_across)):
            assert abs(got.mean() - want) < 4 * got.std() / np.sqrt(sims), (got.mean(), want)


def test_runs_are_independent_bernoulli_given_the_benchmark():
    """Two runs of one arm on one question agree as Bernoulli draws of a shared p do:
    P(both right) = E[p^2] = pair_sigmoid with covariance = total (4 MC SE)."""
    gen = generators.get("clustered_questions", n_questions=50, n_clusters=5, icc=0.1)
    b, _ = gen.draw(4000, 2, 0.0, np.random.default_rng(9))
    both = (b[:, 0] & b[:, 1]).mean(axis=1)
    total = gen.sd_question**2
    want = pair_sigmoid(gen.theta, gen.theta, total, total)
    assert abs(both.mean() - want) < 4 * both.std() / np.sqrt(both.size)


# ------------------------------------------------------------------------------------------
# unpaired_seeds


@pytest.mark.parametrize("noise", ["normal", "t3", "skewed"])
def test_unpaired_seeds_moments(noise):
    """Mean delta, each arm's sd, and arm correlation 0 (4 SE; heavy tails loosen the sd)."""
    gen = generators.get("unpaired_seeds", sigma=0.01, sd_ratio=2.0, noise=noise)
    m = 200_000
    b, v = gen.draw(m, 1, 0.004, np.random.default_rng(0))
    b, v = b.ravel(), v.ravel()
    d = v - b
    assert abs(d.mean() - 0.004) < 4 * gen.delta_sd() / np.sqrt(m)
    rel = 0.01 if noise == "normal" else 0.05
    assert abs(b.std() / 0.01 - 1) < rel
    assert abs(v.std() / 0.02 - 1) < rel
    assert abs(np.corrcoef(b, v)[0, 1]) < 4 / np.sqrt(m)


@pytest.mark.parametrize("params, match", [
    ({"sd_ratio": 0.0}, r"'sd_ratio' parameter of generator unpaired_seeds must be a finite "
                        r"number > 0 and <= 10"),
    ({"sigma": 5.0}, "'sigma'"),
    ({"noise": "cauchy"}, r"'noise' parameter of generator unpaired_seeds must be one of"),
])
def test_unpaired_seeds_validation(params, match):
    with pytest.raises(ValueError, match=match):
        generators.get("unpaired_seeds", **params)
