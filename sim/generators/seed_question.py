"""``seed_question``: a training-like model with question difficulty and seed effects."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from evalcal_core.validate import InvalidParameterError, check_int, check_number

from ._base import Generator, register

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(48)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


#: Gauss–Hermite is exact to ~1e-9 for ``E[expit(x + s Z)]`` while ``s <= _SHARP``; beyond,
#: the integrand's poles (at ``Im z = pi / s``) come close to the real axis and a trapezoid
#: rule with spacing ``_STEP / s`` (error ~ exp(-2 pi^2 / _STEP) ~ 1e-10) takes over.
_SHARP = 3.0
_STEP = 0.8


def _normal_rule(scale):
    """Nodes and weights (summing to 1) for ``E[f(Z)]``, Z standard normal, accurate for
    ``f(z) = expit(a + scale z)`` and smoother integrands."""
    if scale <= _SHARP:
        return _NODES, _WEIGHTS
    z = np.arange(-8.5, 8.5 + 1e-9, _STEP / scale)
    w = np.exp(-z**2 / 2)
    return z, w / w.sum()


def mean_sigmoid(x, var):
    """``E[expit(x + sqrt(var) Z)]`` for standard normal Z.

    Gauss–Hermite with 48 nodes while ``sqrt(var) <= 3`` (the defaults' range: unchanged
    from earlier versions, so draws do not move); a finer trapezoid rule beyond, where 48
    nodes can be off by 1e-4 (enough to spoil a seed variance of 1e-4).
    """
    nodes, weights = _normal_rule(np.sqrt(var))
    x = np.asarray(x, dtype=float)[..., None]
    return (special.expit(x + np.sqrt(var) * nodes) * weights).sum(axis=-1)


def pair_sigmoid(x1, x2, total, cov):
    """``E[expit(x1 + X1) expit(x2 + X2)]`` for ``(X1, X2)`` normal, each of variance
    ``total``, with covariance ``cov`` (``|cov| <= total``); scalars.

    Exact up to quadrature: ``X1 = sqrt|cov| Z + W1``, ``X2 = sign(cov) sqrt|cov| Z + W2`` with
    ``W1, W2`` independent of variance ``r**2 = total - |cov|``. The ``W`` are integrated by
    :func:`mean_sigmoid`; ``Z`` by a rule for the sharpness ``sqrt|cov| / kappa`` of the
    smoothed integrand, ``kappa = sqrt(1 + 0.3 r**2)`` (a conservative form of the probit
    approximation ``E[expit(y + r W)] ~ expit(y / sqrt(1 + pi r**2 / 8))``).
    """
    shared = np.sqrt(abs(cov))
    rest = max(total - abs(cov), 0.0)
    nodes, weights = _normal_rule(shared / np.sqrt(1 + 0.3 * rest))
    a = mean_sigmoid(x1 + shared * nodes, rest)
    b = mean_sigmoid(x2 + np.sign(cov) * shared * nodes, rest)
    return float((a * b * weights).sum())


#: the moments :meth:`SeedQuestion.fit` matches, in this order
MOMENTS = ("acc_base", "acc_variant", "both_base_2seeds", "both_variant_2seeds",
           "both_arms_2seeds", "both_arms_same_seed", "var_seed_base", "var_seed_variant",
           "var_seed_delta")


def model_moments(theta, beta, sd_question, sd_noise, sd_seed, rho, n):
    """Expected values of the :data:`MOMENTS` under the model, for a benchmark of ``n``.

    With ``T = sd_question**2 + sd_noise**2 + sd_seed**2`` the latent of a run on a
    question is normal with variance ``T``; two runs on the same question share
    ``sd_question**2`` (different seeds) or ``sd_question**2 + rho sd_seed**2 +
    sd_noise**2`` (the two arms of one seed), so every "both correct" rate is a
    :func:`pair_sigmoid`. Per-seed accuracies over a fixed benchmark of ``n`` questions
    (what a pool's seeds share) have, exactly, variance
    ``(1 - 1/n) (E[H(u)^2] - m^2) + (m - P_2seeds) / n`` and covariance
    ``(1 - 1/n) (E[H_b(u_b) H_v(u_v)] - m_b m_v) + (P_same_seed - P_2seeds_arms) / n``,
    with ``H(u) = E[expit(theta + u + b + e) | u]``: the seed effect's part plus the
    Bernoulli and question-noise part, averaged over benchmarks.
    """
    var_q, var_s, var_e = sd_question**2, sd_seed**2, sd_noise**2
    total = var_q + var_e + var_s
    x_b, x_v = theta, theta + beta
    m_b, m_v = mean_sigmoid(np.array([x_b, x_v]), total)
    # pairs: 2 baseline seeds, 2 variant seeds, base and variant of 2 seeds, the arms of one
    # seed; then E[H_b^2], E[H_v^2], E[H_b H_v] over the seed effects
    bb, vv, bv, same, hb, hv, hbv = (pair_sigmoid(x1, x2, total, cov) for x1, x2, cov in (
        (x_b, x_b, var_q), (x_v, x_v, var_q), (x_b, x_v, var_q),
        (x_b, x_v, var_q + rho * var_s + var_e),
        (x_b, x_b, var_s), (x_v, x_v, var_s), (x_b, x_v, rho * var_s)))
    var_b = (1 - 1 / n) * (hb - m_b**2) + (m_b - bb) / n
    var_v = (1 - 1 / n) * (hv - m_v**2) + (m_v - vv) / n
    cov = (1 - 1 / n) * (hbv - m_b * m_v) + (same - bv) / n
    return np.array([m_b, m_v, bb, vv, bv, same, var_b, var_v, var_b + var_v - 2 * cov])


def data_moments(base, variant):
    """Unbiased estimates of the :data:`MOMENTS` from ``(k, n)`` 0/1 arrays, and rough
    standard errors (used only to weight the moments against each other)."""
    k, n = base.shape
    cb, cv = base.sum(axis=0), variant.sum(axis=0)
    same_q = (base * variant).sum(axis=0)
    pairs = k * (k - 1)
    per_question = [cb * (cb - 1) / pairs, cv * (cv - 1) / pairs,
                    (cb * cv - same_q) / pairs, same_q / k]
    acc_b, acc_v = base.mean(axis=1), variant.mean(axis=1)
    cov = np.cov(acc_b, acc_v, ddof=1)
    s_b, s_v, c = cov[0, 0], cov[1, 1], cov[0, 1]
    s_d = s_b + s_v - 2 * c
    values = np.array([acc_b.mean(), acc_v.mean(), *(f.mean() for f in per_question),
                       s_b, s_v, s_d])
    # Rough standard errors that do not depend on which arm or pair a moment is about, so
    # that moments informing the same parameter are weighted alike (weights that follow
    # each moment's own noisy value would bias the fit toward the smaller ones).
    s_seed = max((s_b + s_v) / 2, 0.25 / n / k)
    se_acc = np.sqrt((cb.var() + cv.var()) / 2 / k**2 / n + s_seed / k)
    se_pair = np.sqrt(np.mean([f.var() for f in per_question[:3]]) / n + 2 * s_seed / k)
    se_same = np.sqrt(per_question[3].var() / n + 2 * s_seed / k)
    # The delta's variance is weighted by its own size: it is what paired protocols see,
    # and a small error in the arms' variances would be a large one in it.
    se_var = np.sqrt(2 / (k - 1)) * s_seed
    se_delta = np.sqrt(2 / (k - 1)) * max(s_d, 0.5 / n / k)
    se = [se_acc, se_acc, se_pair, se_pair, se_pair, se_same, se_var, se_var, se_delta]
    return values, np.maximum(np.array(se), 1e-9)


@dataclass(frozen=True)
class MomentFit:
    """Method-of-moments estimate of the ``seed_question`` parameters (see
    :meth:`SeedQuestion.fit`); ``beta`` is the variant's logit shift, ``cost`` half the sum
    of squared standardized moment residuals at the solution."""

    n_questions: int
    theta: float
    beta: float
    sd_question: float
    sd_noise: float
    sd_seed: float
    rho: float
    cost: float


def _fit_iv(base, variant):
    base = np.asarray(base, dtype=float)
    variant = np.asarray(variant, dtype=float)
    if base.ndim != 2 or base.shape != variant.shape or base.shape[0] < 2:
        raise InvalidParameterError(f"seed_question.fit needs two (k, n) arrays with k >= 2 seeds; "
                                    f"got shapes {base.shape} and {variant.shape}")
    if not (np.isin(base, (0, 1)).all() and np.isin(variant, (0, 1)).all()):
        raise InvalidParameterError("seed_question.fit needs binary 0/1 per-question scores")
    return base, variant


def fit_moments(base, variant) -> MomentFit:
    """Solve the moment equations of :meth:`SeedQuestion.fit`; the full estimate.

    Parameters
    ----------
    base, variant : array_like of 0/1, shape (k, n)
        Per-question correctness of k paired seeds; k >= 2.

    Returns
    -------
    MomentFit
    """
    base, variant = _fit_iv(base, variant)
    k, n = base.shape
    target, se = data_moments(base, variant)
    free_rho = k >= 3

    def unpack(x):
        theta, beta, sd_q, sd_e, sd_s = x[:5]
        return theta, beta, sd_q, sd_e, sd_s, (x[5] if free_rho else 0.0)

    def residual(x):
        return (model_moments(*unpack(x), n) - target) / se

    m_b, m_v = np.clip(target[:2], 1e-4, 1 - 1e-4)
    density = max(m_b * (1 - m_b), 1e-3) / 2
    sd_s0 = min(np.sqrt(max(target[6], 0.0)) / density, 5.0)
    start = [float(special.logit(m_b)), float(special.logit(m_v) - special.logit(m_b)),
             1.5, 0.5, sd_s0]
    low, high = [-20, -20, 0, 0, 0], [20, 20, 20, 20, 20]
    if free_rho:
        cov = (target[6] + target[7] - target[8]) / 2
        r0 = cov / np.sqrt(target[6] * target[7]) if min(target[6:8]) > 0 else 0.0
        start.append(float(np.clip(r0, -0.99, 0.99)))
        low.append(-1)
        high.append(1)
    sol = optimize.least_squares(residual, start, bounds=(low, high), x_scale="jac",
                                 xtol=1e-12, ftol=1e-12, gtol=1e-12)
    theta, beta, sd_q, sd_e, sd_s, rho = (float(v) for v in unpack(sol.x))
    return MomentFit(n_questions=n, theta=theta, beta=beta, sd_question=sd_q, sd_noise=sd_e,
                     sd_seed=sd_s, rho=rho, cost=float(sol.cost))


#: uniforms drawn at once by :func:`_bernoulli_blocks` (8 MB of float64)
_UNIFORM_BLOCK = 2**20


def _bernoulli_blocks(prob, rng):
    """``rng.random(prob.shape) < prob``, drawn a block of experiments at a time."""
    out = np.empty(prob.shape, dtype=bool)
    rows = max(1, _UNIFORM_BLOCK // max(1, prob[0].size))
    for start in range(0, prob.shape[0], rows):
        block = prob[start:start + rows]
        np.less(rng.random(block.shape), block, out=out[start:start + rows])
    return out


@register
@dataclass(frozen=True)
class SeedQuestion(Generator):
    """Binary per-question scores from a logistic model with seed and question effects.

    ``logit p[a, s, q] = theta + beta [a = variant] + b_q + u[a, s] + e[s, q]``, with
    question difficulty ``b_q ~ N(0, sd_question**2)`` (a fresh benchmark per experiment),
    seed effects ``(u[base, s], u[variant, s])`` normal with sd ``sd_seed`` and correlation
    ``rho``, and per-(seed, question) noise ``e ~ N(0, sd_noise**2)`` shared by the two arms
    of a seed (the same seed gives the same idiosyncratic luck on a question). Scores are
    Bernoulli(p). ``beta`` is calibrated so that the expected accuracy gain equals ``delta``.

    Parameters
    ----------
    n_questions : int, default 2000
    theta : float, default 2.0
        Baseline logit intercept (expected accuracy about 0.77 with the defaults).
    sd_question : float, default 2.0
        Spread of question difficulty (logit units).
    sd_seed : float, default 0.05
        Seed-to-seed spread of a run's overall skill (logit units).
    rho : float, default 0.5
        Correlation of the two arms' seed effects.
    sd_noise : float, default 1.0
        Per-(seed, question) noise (logit units), shared by the arms of a seed.
    """

    n_questions: int = 2000
    theta: float = 2.0
    sd_question: float = 2.0
    sd_seed: float = 0.05
    rho: float = 0.5
    sd_noise: float = 1.0

    name = "seed_question"
    binary = True

    def __post_init__(self):
        check_int(self.n_questions, "n_questions", self.owner, low=2, high=10**7)
        check_number(self.theta, "theta", self.owner, low=-20, high=20)
        for field in ("sd_question", "sd_seed", "sd_noise"):
            check_number(getattr(self, field), field, self.owner, low=0, high=20)
        check_number(self.rho, "rho", self.owner, low=-1, high=1)

    @property
    def n(self) -> int:
        return int(self.n_questions)

    def _total_var(self):
        return self.sd_question**2 + self.sd_seed**2 + self.sd_noise**2

    def expected_accuracy(self, beta: float = 0.0) -> float:
        """Expected accuracy (fraction) with logit shift ``beta``."""
        return float(mean_sigmoid(self.theta + beta, self._total_var()))

    def check_effect(self, delta):
        base = self.expected_accuracy()
        check_number(delta, "effect", self.owner, low=-base, high=1 - base, low_open=True,
                     high_open=True)

    def beta_for(self, delta: float) -> float:
        """Logit shift whose expected accuracy gain is ``delta`` (fraction)."""
        if delta == 0:
            return 0.0
        target = self.expected_accuracy() + delta
        return optimize.brentq(lambda b: self.expected_accuracy(b) - target, -60.0, 60.0,
                               xtol=1e-12)

    def _draw(self, sims, k, delta, rng):
        n = self.n
        beta = self.beta_for(delta)
        b = self.sd_question * rng.standard_normal((sims, 1, n))
        z = rng.standard_normal((sims, k, 2))
        u_base = self.sd_seed * z[..., :1]
        u_variant = self.sd_seed * (self.rho * z[..., :1]
                                    + np.sqrt(1 - self.rho**2) * z[..., 1:])
        # Two float64 buffers of the cell's size, filled in place, and two bool outputs: the
        # same numbers, in the same order and rounding, as the plain expressions
        # shared = theta + b + e; base = U < expit(shared + u_base), at a quarter of the
        # peak. The uniforms come in blocks of experiments: a Generator fills an array in C
        # order, so consecutive blocks hold exactly the numbers of one big draw.
        shared = rng.standard_normal((sims, k, n))
        shared *= self.sd_noise
        shared += self.theta + b
        prob = np.add(shared, u_base)
        special.expit(prob, out=prob)
        base = _bernoulli_blocks(prob, rng)
        np.add(shared, beta, out=prob)
        del shared
        prob += u_variant
        special.expit(prob, out=prob)
        # bool 0/1 scores: protocols read counts of them, and batches carry them compactly.
        return base, _bernoulli_blocks(prob, rng)

    @classmethod
    def fit(cls, base, variant) -> SeedQuestion:
        """Fit the model to recorded binary runs by the method of moments.

        All parameters are solved jointly (weighted least squares) so that the model's
        exact expected moments (:func:`model_moments`, Gauss–Hermite quadrature) equal the
        data's unbiased estimates (:func:`data_moments`): the two arms' mean accuracies;
        the rates at which two different seeds both get a question right (baseline pair,
        variant pair, baseline-variant pair: ``sd_question``); the rate at which both arms
        of the same seed get it right (``sd_noise``); and the variances and covariance of
        the per-seed accuracies over seeds (``sd_seed``, ``rho``), each made of the seed
        effects' part plus the Bernoulli part of a benchmark of ``n`` questions. ``rho`` is
        fixed at 0 when k < 3. The moments are unbiased for every k, so the variance
        components ``sd_seed**2`` and ``rho sd_seed**2`` are (nearly) unbiased; ``sd_seed``
        and ``rho`` themselves carry the usual small-k bias of a sample sd and correlation.

        Parameters
        ----------
        base, variant : array_like of 0/1, shape (k, n)
            Per-question correctness of k paired seeds; k >= 2.

        Returns
        -------
        SeedQuestion
        """
        est = fit_moments(base, variant)
        return cls(n_questions=est.n_questions, theta=est.theta, sd_question=est.sd_question,
                   sd_seed=est.sd_seed, rho=est.rho, sd_noise=est.sd_noise)
