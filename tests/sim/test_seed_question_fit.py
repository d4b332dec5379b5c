"""``SeedQuestion.fit``: parameter recovery, quadrature accuracy, and unchanged draws.

Recovery: experiments are simulated from known parameters, fitted one by one, and each
parameter's mean estimate is compared with the truth within ``Z`` Monte Carlo standard
errors (replicate SD / sqrt(reps)). The moment equations are unbiased, so the variance
components ``sd_seed**2`` and ``rho * sd_seed**2`` are checked at every k; ``sd_seed`` and
``rho`` themselves carry the small-k bias of a sample sd and correlation (about
``-sd / (4 (k - 1))`` and ``-rho (1 - rho**2) / (2 k)``) and are checked at k = 30 only.
"""

import hashlib

import numpy as np
import pytest
from scipy import integrate, special, stats

from sim import generators
from sim.generators.seed_question import (
    MOMENTS,
    data_moments,
    fit_moments,
    mean_sigmoid,
    model_moments,
    pair_sigmoid,
)

TRUE = dict(theta=1.0, sd_question=1.5, sd_noise=0.8, sd_seed=0.3, rho=0.6)
DELTA = 0.01
#: two-sided band in Monte Carlo SEs (about 24 checks: family-wise false alarm ~1%)
Z = 3.5
UNBIASED = ("theta", "beta", "sd_question", "sd_noise", "var_seed", "cov_seed")


def recovery(k, n, reps, seed):
    """Fit ``reps`` experiments of k seeds and n questions drawn from ``TRUE``.

    Returns the estimates and the truth, by parameter name.
    """
    g = generators.get("seed_question", n_questions=n, **TRUE)
    rng = np.random.default_rng(seed)
    fits = []
    chunk = max(1, 2**21 // (k * n))
    for start in range(0, reps, chunk):
        base, variant = g.draw(min(chunk, reps - start), k, DELTA, rng)
        fits += [fit_moments(b, v) for b, v in zip(base, variant)]
    est = {name: np.array([getattr(f, name) for f in fits])
           for name in ("theta", "beta", "sd_question", "sd_noise", "sd_seed", "rho")}
    est["var_seed"] = est["sd_seed"] ** 2
    est["cov_seed"] = est["rho"] * est["sd_seed"] ** 2
    truth = {**TRUE, "beta": g.beta_for(DELTA), "var_seed": TRUE["sd_seed"] ** 2,
             "cov_seed": TRUE["rho"] * TRUE["sd_seed"] ** 2}
    return est, truth


def assert_unbiased(est, truth, names):
    for name in names:
        x = est[name]
        mcse = x.std(ddof=1) / np.sqrt(x.size)
        bias = x.mean() - truth[name]
        assert abs(bias) <= Z * mcse, f"{name}: bias {bias:+.4f}, MC SE {mcse:.4f}"


def test_recovery_fast():
    """k = 10, n = 2000, 40 replicates: no parameter's mean estimate is off by > 3.5 MC SE."""
    est, truth = recovery(10, 2000, 40, seed=1)
    assert_unbiased(est, truth, UNBIASED)


@pytest.mark.slow
@pytest.mark.parametrize("k, n", [(5, 2000), (10, 5000), (30, 10_000)])
def test_recovery(k, n):
    """100 replicates per (k, n); sd_seed and rho on their own scale at k = 30."""
    est, truth = recovery(k, n, 100, seed=k)
    assert_unbiased(est, truth, UNBIASED + (("sd_seed", "rho") if k >= 30 else ()))


def test_old_bias_is_gone():
    """The issue's case: a true seed sd of 0.30 was fitted as ~0.18 (m(1-m) in place of the
    mean logistic density). One large pool (k = 30, n = 10000) now lands within 20%."""
    g = generators.get("seed_question", n_questions=10_000, **TRUE)
    b, v = g.draw(1, 30, DELTA, np.random.default_rng(3))
    fit = generators.generator_class("seed_question").fit(b[0], v[0])
    assert fit.sd_seed == pytest.approx(0.30, rel=0.2)


def test_model_moments_match_simulation():
    """The model's exact moments equal the mean of the data estimates over 300 simulated
    experiments (consistency check of the formulas, 4 MC SE)."""
    g = generators.get("seed_question", n_questions=1000, theta=0.5, sd_question=1.0,
                       sd_noise=0.7, sd_seed=0.25, rho=0.3)
    b, v = g.draw(300, 6, 0.02, np.random.default_rng(8))
    values = np.array([data_moments(bi, vi)[0] for bi, vi in zip(b, v)])
    model = model_moments(g.theta, g.beta_for(0.02), g.sd_question, g.sd_noise, g.sd_seed,
                          g.rho, g.n)
    mcse = values.std(axis=0, ddof=1) / np.sqrt(len(values))
    for name, got, want, se in zip(MOMENTS, values.mean(axis=0), model, mcse):
        assert abs(got - want) <= 4 * se, f"{name}: {got} vs {want} (MC SE {se})"


@pytest.mark.parametrize("x, var", [(0.3, 1.0), (7.0, 60.0), (-2.0, 150.0)])
def test_mean_sigmoid_against_quad(x, var):
    """Against scipy.integrate.quad, also where 48 Gauss–Hermite nodes were too coarse."""
    s = np.sqrt(var)
    want, _ = integrate.quad(lambda z: special.expit(x + s * z) * stats.norm.pdf(z), -12, 12,
                             points=[-x / s], limit=200, epsabs=1e-13)
    assert float(mean_sigmoid(x, var)) == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("x1, x2, total, cov", [(1.0, 1.2, 3.0, 0.09), (7.0, 6.5, 60.0, 45.0),
                                                (0.5, 0.2, 12.0, -0.5)])
def test_pair_sigmoid_against_quad(x1, x2, total, cov):
    """Against scipy.integrate.quad over the shared normal part; the own parts by
    :func:`mean_sigmoid` (checked against quad above)."""
    shared, rest = np.sqrt(abs(cov)), total - abs(cov)

    def integrand(z):
        return (mean_sigmoid(x1 + shared * z, rest) * mean_sigmoid(x2 + np.sign(cov) * shared * z,
                                                                   rest) * stats.norm.pdf(z))

    want, _ = integrate.quad(integrand, -10, 10, limit=200, epsabs=1e-12)
    assert pair_sigmoid(x1, x2, total, cov) == pytest.approx(want, abs=1e-8)


@pytest.mark.parametrize("params, delta, digest", [
    ({}, 0.0, "9ef1a4198385134a"),
    ({}, 0.01, "ce5803b6b918916e"),
    ({"n_questions": 300, "sd_seed": 0.15, "rho": 0.6}, 0.02, "b577dd7d5fa95007"),
])
def test_draws_unchanged(params, delta, digest):
    """Draws are bit-identical to those before the fit was reworked (digests recorded with
    the previous version, of float64 0/1 arrays; draws are bool now, with the same values),
    so existing calibration numbers do not move."""
    g = generators.get("seed_question", **params)
    b, v = g.draw(3, 4, delta, np.random.default_rng(11))
    as_float = b.astype(np.float64).tobytes() + v.astype(np.float64).tobytes()
    assert hashlib.sha256(as_float).hexdigest()[:16] == digest
