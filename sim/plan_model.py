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

Estimand (every design): the population mean delta ``delta``, over the population of
questions the benchmark's n are a draw from (and, for methods, of training seeds) -- what a
paper claims. ``paired_t`` on the k per-seed deltas does not test it: it holds the questions
fixed and tests ``delta + cbar = 0`` (``cbar ~ N(0, sigma_c**2 / n)``, the effect on *these*
questions), so at ``delta = 0`` it rejects far above alpha when ``sigma_c > 0`` (17.5-18.4% at
the README example's chosen design). The registry's ``paired_two_level`` adds the question
variance but truncates it at 0 and uses Satterthwaite df; with few questions it does not hold
the level either (normal model, effect 0, 4,000 experiments: 9.8% at k = 9, n = 2 and 11.8%
at k = 20, n = 2 with sigma_c = 8, sigma_i = 10, sigma_r = 40 pp, r = 10), nor does the
same variance with Welch-Satterthwaite df (6-10% where one mean square has 1 df). The
planner's test for methods is therefore :func:`two_level_test`: ``t = mean D / sqrt((MS_seed
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
probabilities), so at ``delta = 0`` the power is the test's size.

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
from evalcal_core.designs import MODELS
from evalcal_core.validate import fail

from .grid import wilson

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


def mean_delta_variance(comp: Components, design: str, k, n, r):
    """Closed-form ``Var(mean D)`` (fraction**2) of a design; arrays broadcast.

    ``methods``: ``sa2/k + sc2/n + si2/(k n) + sr2/(k n r)``; ``models``: ``(sc2 + si2)/n +
    sr2/(n r)`` (k is ignored: no seeds; the interaction is part of a question's effect).
    """
    k, n, r = _sizes(k, n, r)
    sa2, sc2, si2, sr2 = (comp.sd_seed**2, comp.sd_question**2, comp.sd_inter**2,
                          comp.sd_repeat**2)
    if design == MODELS:
        return (sc2 + si2) / n + sr2 / (n * r) + 0 * k
    return sa2 / k + sc2 / n + si2 / (k * n) + sr2 / (k * n * r)


def _two_sided_nct(tc, df, ncp):
    # P(T < -tc | ncp) = P(T > tc | -ncp): scipy's cdf is NaN far in the tail (ncp = 40),
    # its sf is not.
    return stats.nct.sf(tc, df, ncp) + stats.nct.sf(tc, df, -ncp)


def power(comp: Components, design: str, k, n, r, effect, alpha: float = 0.05):
    """Power (fraction) of the design's test at population effect ``effect`` (fraction).

    ``methods``: :func:`two_level_test` (seeds and questions random; module docstring), by
    quadrature over its two mean squares: at ``effect = 0`` this is the test's size (at most
    ``alpha``). ``models``: two-sided paired t on n per-question deltas; ``clusters`` (the
    ``methods`` form of models_clustered, :func:`sim.plan_search.clustered_as_methods`):
    two-sided t on the k unit-mean deltas (k - 1 df); both noncentral t, exactly ``alpha`` at
    ``effect = 0``.
    Arrays broadcast. Exact under the normal model; for 0/1 scores an approximation (checked
    by :func:`simulate_power`).
    """
    k, n, r = _sizes(k, n, r)
    effect = np.asarray(effect, dtype=float)
    se = np.sqrt(mean_delta_variance(comp, design, k, n, r))
    if design in (MODELS, "clusters"):
        df = (n if design == MODELS else k) - 1 + 0 * (k + n)
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
    k, n, r = _sizes(k, n, r)
    if design == MODELS:
        return 2 * n * (costs.question + r * costs.repeat) + 0 * k
    return 2 * k * (costs.seed + n * (costs.question + r * costs.repeat))


def icc(comp: Components, r: int = 1) -> float:
    """Intra-cluster correlation of the per-question deltas (mean of r repeats) of the
    ``methods`` form of a clustered problem (:func:`sim.plan_search.clustered_as_methods`)."""
    within = comp.sd_inter**2 + comp.sd_repeat**2 / r
    total = comp.sd_seed**2 + within
    return comp.sd_seed**2 / total if total > 0 else 0.0



def _draw_seed_question(gen, sims, k, n, r, delta, rng):
    """Correct counts out of r repeats, ``(base, variant)`` of shape ``(sims, k, n)``.

    The latent model of :class:`sim.generators.seed_question.SeedQuestion` (its docstring:
    fresh difficulties ``b_q``, seed effects ``u`` with correlation rho, per-(seed, question)
    noise shared by the arms, ``beta`` from :meth:`beta_for`), with the r repeats of a cell
    drawn as one binomial of its probability. At r = 1 it is the generator's own law (checked
    against :meth:`draw` in the tests).
    """
    beta = gen.beta_for(delta)
    b = gen.sd_question * rng.standard_normal((sims, 1, n))
    z = rng.standard_normal((sims, k, 2))
    u_b = gen.sd_seed * z[..., :1]
    u_v = gen.sd_seed * (gen.rho * z[..., :1] + np.sqrt(1 - gen.rho**2) * z[..., 1:])
    shared = gen.sd_noise * rng.standard_normal((sims, k, n)) + gen.theta + b
    base = rng.binomial(r, special.expit(shared + u_b))
    variant = rng.binomial(r, special.expit(shared + beta + u_v))
    return base, variant


def _draw_deltas(model, design, sims, k, n, r, delta, rng):
    """The test's units, fractions, a new question set per experiment (population estimand):
    cell-mean deltas ``(sims, k, n)`` (methods), per-question deltas ``(sims, n)`` (models)
    or per-unit mean deltas ``(sims, k)`` (clusters)."""
    if isinstance(model, Components):
        c = model
        within = math.sqrt(c.sd_inter**2 + c.sd_repeat**2 / r)
        if design == MODELS:
            sd = math.sqrt(c.sd_question**2 + c.sd_inter**2 + c.sd_repeat**2 / r)
            return delta + sd * rng.standard_normal((sims, n))
        if design == "clusters":
            # only the unit means the t reads are drawn (sd_question is 0 here)
            return (delta + c.sd_seed * rng.standard_normal((sims, k))
                    + within / math.sqrt(n) * rng.standard_normal((sims, k)))
        return (delta + c.sd_seed * rng.standard_normal((sims, k, 1))
                + c.sd_question * rng.standard_normal((sims, 1, n))
                + within * rng.standard_normal((sims, k, n)))
    if design == MODELS:
        gen = dataclasses.replace(model, sd_seed=0.0)
        base, variant = _draw_seed_question(gen, sims, 1, n, r, delta, rng)
        return (variant[:, 0, :] - base[:, 0, :]) / r
    base, variant = _draw_seed_question(model, sims, k, n, r, delta, rng)
    return (variant - base) / r


@dataclass(frozen=True)
class SimulatedPower:
    """Monte Carlo power: ``rejections`` of ``sims``; ``low``, ``high`` its 95% Wilson
    interval (fractions)."""

    rejections: int
    sims: int
    power: float
    low: float
    high: float


def simulate_power(model, design, k, n, r, effect, *, sims=2000, alpha=0.05,
                   rng=None) -> SimulatedPower:
    """Simulated power of the design's test at population effect ``effect``, each
    experiment on a new draw of questions (and seeds): :func:`two_level_test` on the (seed,
    question) cell-mean deltas (methods), ``paired_t`` of the protocol registry on the
    per-question deltas (models) or on the unit-mean deltas (clusters).

    Parameters
    ----------
    model : Components or seed_question Generator
        Normal components model, or ``seed_question`` (binomial repeats).
    effect : float
        Population effect (fraction); at 0 the result is the test's rejection rate under the
        null.
    rng : numpy.random.Generator, int or SeedSequence
    """
    rng = np.random.default_rng(rng)
    test = protocols.get("paired_t")
    units = n if design == MODELS else k * n
    chunk = max(1, _CELLS_PER_CHUNK // max(units, 1))
    hits = 0
    for start in range(0, sims, chunk):
        m = min(chunk, sims - start)
        d = _draw_deltas(model, design, m, k, n, r, effect, rng)
        if design == "methods":
            hits += int(np.sum(two_level_test(d, alpha)))
            continue
        # paired_t on (sims, units, 1): one score per unit, the t on their deltas.
        result = test.evaluate(np.zeros(d.shape + (1,)), d[..., None], alpha)
        hits += int(np.sum(result.significant))
    low, high = wilson(hits, sims)
    return SimulatedPower(hits, sims, hits / sims, low, high)
