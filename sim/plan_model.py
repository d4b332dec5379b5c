"""The study planner's model: variance components, closed-form power, and its simulation.

For a study of kind ``methods`` (training methods compared on k paired seeds, each seed's runs
scored on n questions, r repeats per question) or ``models`` (two fixed checkpoints, n
questions, r repeats), the variance of the mean delta is known in closed form from four
variance components of the per-question delta ``D`` (variant minus baseline), all in fractions
(printed in pp):

``sd_seed`` (sigma_a)
    spread of a seed's mean delta over seeds (seed main effect);
``sd_question`` (sigma_c)
    spread of a question's mean delta over questions (question main effect);
``sd_inter`` (sigma_i)
    seed x question interaction of the delta *in probability* (what a seed gets right on a
    question that another seed does not, beyond the main effects): repeats do not average it;
``sd_repeat`` (sigma_r)
    noise of one repeat's delta given the seed and question. For 0/1 scores drawn
    Bernoulli(p) per repeat, ``sigma_r**2 = E[p_b (1 - p_b) + p_v (1 - p_v)]``: the two
    arms' binomial variances, averaged over seeds and questions.

For ``methods`` (crossed seeds and questions, the seed-question array exchangeable)::

    Var(mean D) = sigma_a**2 / k + sigma_c**2 / n + sigma_i**2 / (k n) + sigma_r**2 / (k n r)

(the crossed-array covariances: two cells of one seed share ``sigma_a**2``, of one question
``sigma_c**2``, of one (seed, question) ``sigma_a**2 + sigma_c**2 + sigma_i**2``; the r repeats
of a cell share everything but their binomial noise).

Estimand (``methods``: one of two, :data:`ESTIMANDS`, each with the test ``evaluate`` prints
for it, :data:`ESTIMAND_TESTS`):

``questions`` (the default)
    the effect on *these* n questions (questions fixed, seeds random): ``delta_Q = delta +
    cbar`` with ``cbar`` the mean of the n question effects. Its test is the design's primary
    protocol (``paired_t`` on the k per-seed mean deltas, ``evaluate``'s primary line). The
    questions are not resampled, so the ``sigma_c**2 / n`` term drops::

        Var(mean D | questions) = sigma_a**2 / k + sigma_i**2 / (k n) + sigma_r**2 / (k n r)

    (questions still average the interaction and the repeat noise). The k per-seed deltas are
    independent normals of variance ``k Var`` around ``delta_Q``, so the power is the
    noncentral t on k - 1 df with noncentrality ``delta_Q / sqrt(Var)``, exactly ``alpha`` at
    ``delta_Q = 0``. At a zero *population* effect ``paired_t`` rejects far above alpha when
    ``sigma_c > 0`` (13-18% at the README example's designs): it tests ``delta_Q``, not
    ``delta``.
``population``
    the population mean delta ``delta``, over the population of questions the benchmark's n
    are a draw from and of training seeds. ``evaluate`` prints its test in the two-arm table
    row ``paired_two_level`` (two-way ANOVA variance, Satterthwaite df lowered at the mean
    squares' upper bounds; at least 4 questions). The planner's closed form is that of
    :func:`two_level_test`, a close, conservative relative whose power is exact under the
    normal model (below); the simulation check runs the registry's ``paired_two_level``
    itself.

:func:`two_level_test`: ``t = mean D / sqrt((MS_seed
+ MS_question) / (k n))`` on ``min(k, n) - 1`` df, with the two-way ANOVA mean squares of the
(seed, question) cell-mean deltas. ``(MS_seed + MS_question) / (k n) = var(d_s) / k +
var(q_s) / n`` (per-seed deltas ``d_s``, per-question deltas ``q_s`` averaged over seeds) has
expectation ``Var(mean D) + (sigma_i**2 + sigma_r**2 / r) / (k n)`` (never below the true
variance), and a t on the smaller of the two df is Hsu's (1938) conservative solution of the
Behrens-Fisher problem; so its rejection rate at ``delta = 0`` is at most alpha for every
value of the components (its *size*; below alpha where the interaction and repeat noise
matter). Its power is exact under the normal model: given the two mean squares (independent
scaled chi-squares on k - 1 and n - 1 df, independent of the mean) the test rejects with a
normal probability; the planner integrates that over both (Gauss-Legendre in the chi-squares'
probabilities), so at ``delta = 0`` the power is the test's size. ``paired_two_level``
subtracts ``MS_resid`` from the question mean square (an unbiased variance) on more df, so
where n is not tiny its power is at least this closed form's (the check column shows it).

For ``models`` (no seeds; a question's interaction is part of its effect)::

    Var(mean D) = sigma_c**2 / n + sigma_r**2 / (n r)

and the test is the paired t on the n per-question deltas (each the mean of r repeats; n - 1
df), power from the noncentral t with noncentrality ``delta / sqrt(Var)`` (exactly alpha at
``delta = 0``; the estimand is these two checkpoints' mean delta over the population of
questions).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

import protocols
from evalcal_core.validate import fail

from . import plan_designs
from .generators.seed_question import _normal_rule
from .grid import wilson

# the estimands (module docstring) and their tests, stated with the designs that have them
from .plan_designs import ESTIMAND_TESTS, ESTIMANDS, POPULATION, QUESTIONS, where_printed

__all__ = ["ESTIMANDS", "ESTIMAND_TESTS", "POPULATION", "QUESTIONS", "Components", "Costs",
           "SimulatedPower", "cost", "draw_deltas", "icc", "mean_delta_variance", "power",
           "registry_test", "simulate_power", "two_level_test", "where_printed"]

#: Gauss-Legendre rule on (0, 1) (weights summing to 1) over the probabilities of the two mean
#: squares' chi-squares in :func:`power` (methods)
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(48)
_GL_NODES, _GL_WEIGHTS = (_GL_NODES + 1) / 2, _GL_WEIGHTS / 2
#: (seed, question) cells drawn at once by the simulation (float64 buffers of 16 MB)
_CELLS_PER_CHUNK = 2**21


@dataclass(frozen=True)
class Components:
    """Variance components of the per-question delta, as standard deviations (fractions).

    Attributes
    ----------
    sd_seed, sd_question, sd_inter, sd_repeat : float
        sigma_a, sigma_c, sigma_i, sigma_r of the module docstring (fraction; 0.01 = 1 pp).
    source : str
        Where they came from, in words.
    notes : tuple of str
        Warnings the user must see (an estimate at the boundary 0, a split assumed).
    """

    sd_seed: float
    sd_question: float
    sd_inter: float
    sd_repeat: float
    sd_cluster: float = 0.0
    source: str = "stated"
    notes: tuple = ()

    def describe(self) -> str:
        """The components in pp, one line."""
        cluster = f"sd_cluster {100 * self.sd_cluster:.3f} pp, " if self.sd_cluster else ""
        return (f"{cluster}sd_seed {100 * self.sd_seed:.3f} pp, sd_question "
                f"{100 * self.sd_question:.3f} pp, sd_inter {100 * self.sd_inter:.3f} pp, "
                f"sd_repeat {100 * self.sd_repeat:.3f} pp (per-question delta; {self.source})")


@dataclass(frozen=True)
class Costs:
    """Cost of one seed (per arm), one (seed, question) scored, one scored answer."""

    seed: float = 0.0
    question: float = 0.0
    repeat: float = 0.0
    unit: str = "units"


def _sizes(k, n, r):
    return (np.asarray(k, dtype=float), np.asarray(n, dtype=float), np.asarray(r, dtype=float))


def mean_delta_variance(comp: Components, design: str, k, n, r, estimand: str = QUESTIONS):
    """Closed-form ``Var(mean D)`` (fraction**2) of a design; arrays broadcast.

    ``methods``: ``sa2/k + sc2/n + si2/(k n) + sr2/(k n r)`` for the ``population``
    estimand, without ``sc2/n`` for ``questions`` (the questions are not resampled);
    ``models``: ``(sc2 + si2)/n + sr2/(n r)`` (k is ignored: no seeds; the interaction is
    part of a question's effect). ``estimand`` is read for ``methods`` only.
    """
    k, n, r = _sizes(k, n, r)
    spec = plan_designs.get(design)
    return spec.variance(comp, k, n, r, spec.estimand_of(estimand))


def _two_sided_nct(tc, df, ncp):
    # P(T < -tc | ncp) = P(T > tc | -ncp): scipy's cdf is NaN far in the tail (ncp = 40),
    # its sf is not.
    return stats.nct.sf(tc, df, ncp) + stats.nct.sf(tc, df, -ncp)


def power(comp: Components, design: str, k, n, r, effect, alpha: float = 0.05,
          estimand: str = QUESTIONS):
    """Power (fraction) of the design's test at effect ``effect`` (fraction) of the estimand.

    ``methods`` with ``questions``: ``paired_t`` on the k per-seed deltas, noncentral t on
    k - 1 df (exactly ``alpha`` at ``effect = 0``). ``methods`` with ``population``:
    :func:`two_level_test` (seeds and questions random; module docstring), by
    quadrature over its two mean squares: at ``effect = 0`` this is the test's size (at most
    ``alpha``). ``models``: two-sided paired t on n per-question deltas; ``clusters`` (the
    ``methods`` form of models_clustered, :func:`sim.plan_search.clustered_as_methods`):
    two-sided t on the k unit-mean deltas (k - 1 df); both noncentral t, exactly ``alpha`` at
    ``effect = 0``.
    Arrays broadcast. Exact under the normal model; for 0/1 scores an approximation (checked
    by :func:`simulate_power`).
    """
    k, n, r = _sizes(k, n, r)
    spec = plan_designs.get(design)
    estimand = spec.estimand_of(estimand)
    effect = np.asarray(effect, dtype=float)
    se = np.sqrt(mean_delta_variance(comp, design, k, n, r, estimand))
    df = spec.df(k, n, estimand)
    if df is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            return _two_sided_nct(stats.t.isf(alpha / 2, df), df, effect / se)
    arrays = np.broadcast_arrays(k, n, r, effect, se)
    flat = [a.ravel() for a in arrays]
    # each design point holds a nodes x nodes grid: blocks of points bound the memory
    # (a brute-force sweep of 27,000 designs took 2.7 GB at once)
    out = np.concatenate([_two_level_power(comp, *(a[i:i + _POWER_BLOCK] for a in flat),
                                           alpha)
                          for i in range(0, max(flat[0].size, 1), _POWER_BLOCK)])
    return out.reshape(arrays[0].shape)[()]


#: design points whose quadrature grids (48 x 48 nodes) are held at once by :func:`power`
_POWER_BLOCK = 1024


def _two_level_power(comp, k, n, r, effect, se, alpha):
    # power() of 1-d arrays of methods designs
    inner = comp.sd_inter**2 + comp.sd_repeat**2 / r
    ms_seed = inner + n * comp.sd_seed**2          # E[MS_seed], k - 1 df
    ms_question = inner + k * comp.sd_question**2  # E[MS_question], n - 1 df
    tc = stats.t.isf(alpha / 2, np.minimum(k, n) - 1)
    # The test rejects when |mean| > tc sqrt((MS_seed + MS_question) / (k n)); the mean is
    # N(effect, se**2) independent of the two scaled chi-squares: integrate the normal
    # rejection probability over the chi-squares' probabilities (outer product of the rules).
    x_s = stats.chi2.ppf(_GL_NODES, (k - 1)[..., None]) / (k - 1)[..., None]
    x_q = stats.chi2.ppf(_GL_NODES, (n - 1)[..., None]) / (n - 1)[..., None]
    spread = (ms_seed[..., None, None] * x_s[..., :, None]
              + ms_question[..., None, None] * x_q[..., None, :]) / (k * n)[..., None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        cut = (tc[..., None, None] * np.sqrt(spread)) / se[..., None, None]
        shift = (effect / se)[..., None, None]
    p = special.ndtr(shift - cut) + special.ndtr(-shift - cut)
    return np.einsum("...ij,i,j->...", p, _GL_WEIGHTS, _GL_WEIGHTS)


def two_level_test(deltas, alpha: float = 0.05):
    """The planner's test of a zero population mean delta (methods; module docstring).

    ``t = mean D / sqrt((MS_seed + MS_question) / (k n))`` on ``min(k, n) - 1`` df, two-sided:
    the seed-level and question-level squared SEs added (``var(d_s) / k + var(q_s) / n``),
    each a scaled chi-square, on the smaller df (Hsu's conservative Behrens-Fisher t), so the
    rejection rate at a zero population effect is at most ``alpha`` whatever the components.

    Parameters
    ----------
    deltas : ndarray, shape (..., k, n)
        Cell-mean deltas (variant minus baseline, mean of the r repeats; fraction), k >= 2
        seeds, n >= 2 questions.
    alpha : float
        Two-sided level.

    Returns
    -------
    ndarray of bool, shape (...)
        Rejected. An experiment whose two mean squares are both 0 has no variance estimate
        and is not rejected.
    """
    k, n = deltas.shape[-2:]
    if k < 2 or n < 2:
        raise fail("deltas", "of shape (..., k, n) with k >= 2 and n >= 2", deltas.shape)
    seed_var = deltas.mean(axis=-1).var(axis=-1, ddof=1)       # MS_seed / n
    question_var = deltas.mean(axis=-2).var(axis=-1, ddof=1)   # MS_question / k
    se = np.sqrt(seed_var / k + question_var / n)
    t = np.abs(deltas.mean(axis=(-2, -1)))
    # An SE that is rounding of equal deltas (relative 1e-12, as protocols._decisions) is none.
    scale = np.abs(deltas).max(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return (se > 1e-12 * scale) & (t > stats.t.isf(alpha / 2, min(k, n) - 1) * se)


def cost(costs: Costs, design: str, k, n, r):
    """Cost of a design (``costs.unit``); arrays broadcast; both arms counted."""
    return plan_designs.get(design).cost(costs, *_sizes(k, n, r))


def icc(comp: Components, r: int = 1) -> float:
    """Intra-cluster correlation of the per-question deltas (mean of r repeats) of the
    ``methods`` form of a clustered problem (:func:`sim.plan_search.clustered_as_methods`)."""
    within = comp.sd_inter**2 + comp.sd_repeat**2 / r
    total = comp.sd_seed**2 + within
    return comp.sd_seed**2 / total if total > 0 else 0.0



def _questions_beta(gen, b, delta):
    """Per experiment, the logit shift whose effect on *its* questions is ``delta``.

    ``b`` (shape ``(sims, 1, n)``) are the experiment's question difficulties; the effect on
    them (seeds random) is ``mean_q [m(theta + beta + b_q) - m(theta + b_q)]`` with ``m(x) =
    E[expit(x + u + e)]`` over the seed effect and the noise (variance ``sd_seed**2 +
    sd_noise**2``). Newton's method from the population's ``beta_for(delta)`` (the effect is
    increasing in beta; 8 steps reach 1e-12 in the tests' settings); shape ``(sims, 1, 1)``.
    """
    if delta == 0:
        return np.zeros(b.shape[:-1] + (1,))
    sd = math.sqrt(gen.sd_seed**2 + gen.sd_noise**2)
    nodes, weights = _normal_rule(sd)

    def mean_and_slope(shift):
        p = special.expit(gen.theta + np.asarray(shift)[..., None] + b[..., None] + sd * nodes)
        return ((p * weights).sum(-1).mean(-1, keepdims=True),
                (p * (1 - p) * weights).sum(-1).mean(-1, keepdims=True))

    base, _ = mean_and_slope(0.0)
    beta = np.full(base.shape, gen.beta_for(delta))
    for _ in range(8):
        mean, slope = mean_and_slope(beta)
        beta = beta - (mean - base - delta) / slope
    return beta


def _draw_seed_question(gen, sims, k, n, r, delta, rng, estimand=POPULATION):
    """Correct counts out of r repeats, ``(base, variant)`` of shape ``(sims, k, n)``.

    The latent model of :class:`sim.generators.seed_question.SeedQuestion` (its docstring:
    fresh difficulties ``b_q``, seed effects ``u`` with correlation rho, per-(seed, question)
    noise shared by the arms, ``beta`` from :meth:`beta_for`), with the r repeats of a cell
    drawn as one binomial of its probability. At r = 1 it is the generator's own law (checked
    against :meth:`draw` in the tests). With ``estimand="questions"`` ``beta`` is set per
    experiment so that the effect on the drawn questions is ``delta``
    (:func:`_questions_beta`); the draws are the same.
    """
    b = gen.sd_question * rng.standard_normal((sims, 1, n))
    beta = (gen.beta_for(delta) if estimand == POPULATION
            else _questions_beta(gen, b, delta))
    z = rng.standard_normal((sims, k, 2))
    u_b = gen.sd_seed * z[..., :1]
    u_v = gen.sd_seed * (gen.rho * z[..., :1] + np.sqrt(1 - gen.rho**2) * z[..., 1:])
    shared = gen.sd_noise * rng.standard_normal((sims, k, n)) + gen.theta + b
    base = rng.binomial(r, special.expit(shared + u_b))
    variant = rng.binomial(r, special.expit(shared + beta + u_v))
    return base, variant


def draw_deltas(model, design, sims, k, n, r, delta, rng, estimand=POPULATION):
    """The test's units (fractions): cell-mean deltas ``(sims, k, n)`` (methods),
    per-question deltas ``(sims, n)`` (models) or per-unit mean deltas ``(sims, k)``
    (clusters), each experiment on a new draw of seeds and questions.

    ``delta`` is the effect of ``estimand`` (methods): ``population``, the mean over the
    question population; ``questions``, the effect on each experiment's own questions (the
    normal model's question effects are centred on their mean; a generator's shift is set
    per experiment). The other designs have the population estimand.
    """
    spec = plan_designs.get(design)
    estimand = spec.estimand_of(estimand)
    if isinstance(model, Components):
        return spec.draw_normal(model, sims, k, n, r, delta, rng, estimand)
    # a generator: fixed models have no seed spread and one "seed" (the rows are repeats)
    gen = model if spec.seeds else dataclasses.replace(model, sd_seed=0.0)
    base, variant = _draw_seed_question(gen, sims, k if spec.seed_axis else 1, n, r, delta,
                                        rng, estimand)
    deltas = (variant - base) / r
    return deltas if spec.seed_axis else deltas[:, 0, :]


def registry_test(name: str):
    """``test(deltas, alpha)`` of the registry protocol ``name`` on ``(..., k, n)`` deltas
    (fractions), read as the scores ``0.5 -+ deltas / 2`` of two arms (what a user's file
    would hold): its ``significant`` flags."""
    protocol = protocols.get(name)

    def test(deltas, alpha):
        return np.asarray(protocol.evaluate(0.5 - deltas / 2, 0.5 + deltas / 2,
                                            alpha).significant)
    test.__name__ = name
    return test


@dataclass(frozen=True)
class SimulatedPower:
    """Monte Carlo power: ``rejections`` of ``sims``; ``low``, ``high`` its 95% Wilson
    interval (fractions)."""

    rejections: int
    sims: int
    power: float
    low: float
    high: float


def simulate_power(model, design, k, n, r, effect, *, estimand=QUESTIONS, test=None,
                   sims=2000, alpha=0.05, rng=None) -> SimulatedPower:
    """Simulated power of a test at effect ``effect`` of the estimand, each experiment on
    a new draw of seeds and questions (:func:`draw_deltas`).

    Parameters
    ----------
    model : Components or seed_question Generator
        Normal components model, or ``seed_question`` (binomial repeats).
    effect : float
        Effect (fraction) of ``estimand``; at 0 the result is the test's rejection rate
        under that null.
    estimand : {"questions", "population"}
        ``methods`` only (the others have the population estimand).
    test : callable, optional
        ``test(deltas, alpha) -> bool array`` on cell-mean deltas ``(m, k, n)`` (methods).
        Default: the registry protocol ``evaluate`` prints for the estimand
        (:data:`ESTIMAND_TESTS`, through :func:`registry_test`) for methods; ``paired_t`` on
        the per-question deltas (models) or on the unit-mean deltas (clusters).
        :func:`two_level_test` checks the population closed form's own test.
    rng : numpy.random.Generator, int or SeedSequence
    """
    rng = np.random.default_rng(rng)
    spec = plan_designs.get(design)
    if spec.registry_tested and test is None:
        test = registry_test(ESTIMAND_TESTS[estimand])
    paired_t = protocols.get("paired_t")
    units = spec.units(k, n)
    chunk = max(1, _CELLS_PER_CHUNK // max(units, 1))
    hits = 0
    for start in range(0, sims, chunk):
        m = min(chunk, sims - start)
        d = draw_deltas(model, design, m, k, n, r, effect, rng, estimand)
        if spec.registry_tested:
            hits += int(np.sum(test(d, alpha)))
            continue
        # paired_t on (sims, units, 1): one score per unit, the t on their deltas.
        result = paired_t.evaluate(np.zeros(d.shape + (1,)), d[..., None], alpha)
        hits += int(np.sum(result.significant))
    low, high = wilson(hits, sims)
    return SimulatedPower(hits, sims, hits / sims, low, high)
