"""Study planner: the cheapest seeds x questions x repeats that detect an effect.

"With a seed costing 4 GPU-hours and a scored answer 0.0005, how many seeds, questions and
repeats do I need to see +1 pp with 80% power?" For a study of kind ``methods`` (training
methods compared on k paired seeds, each seed's runs scored on n questions, r repeats per
question) or ``models`` (two fixed checkpoints, n questions, r repeats), the variance of the
mean delta is known in closed form from four variance components of the per-question delta
``D`` (variant minus baseline), all in fractions (printed in pp):

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

Costs (any unit, the same for all three): ``seed`` per trained seed and arm, ``question`` per
(seed, question) scored, ``repeat`` per scored answer; a design costs ``2 k (seed + n
(question + r repeat))`` for methods (both arms trained and scored) and ``2 n (question + r
repeat)`` for models. The search runs over every integer k <= --k-max and r <= --r-max and
finds, for each, the smallest n <= --n-max reaching the power (bisection; the power grows with
n), then ranks by cost; with --budget it takes the largest n the budget buys and solves for
the smallest detectable effect instead. The best designs and the chosen one's neighbours (k +-
1, n x/ 1.25, r +- 1) are then simulated with the design's test (a new question set drawn for
every experiment: the population estimand) and shown with 95% Wilson intervals.

Components come from ``--sd-seed/--sd-question/--sd-inter/--sd-repeat`` (pp; simulated as
normal), from a pilot (``--from-pilot FILE``: two-way ANOVA mean squares of the pilot's deltas,
the ones ``paired_two_level`` uses; simulated through ``seed_question`` fitted to the pilot),
or from a ``seed_question`` setting (``--generator-param theta=2 sd_seed=0.1 ...``; exact
components by quadrature at the effect). One run per (seed, question) cannot split the
pilot's residual into interaction and repeat noise: for 0/1 scores it is split by the
``seed_question`` fit (stated as an assumption), else all of it is interaction (repeats never
help); ``--sd-repeat`` overrides. ``models_clustered`` (``--cluster-size m --sd-cluster``) is
solved as the ``methods`` problem with clusters for seeds (:func:`clustered_as_methods`). The
figure: ``python -m reports.plan_figure`` with the
same options and ``--figure FILE``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special, stats

import protocols
from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.outdir import check_complete, run_outputs
from evalcal_core.validate import (
    InvalidParameterError,
    check_alpha,
    check_choice,
    check_int,
    check_number,
    fail,
)

from . import generators
from .generators.seed_question import mean_sigmoid, pair_sigmoid
from .grid import cell_seed, wilson

#: the kinds of study planned (``evalcal_core.designs`` names: methods_paired, models)
DESIGNS = ("methods", "models", "models_clustered")
#: Gauss-Legendre rule on (0, 1) (weights summing to 1) over the probabilities of the two mean
#: squares' chi-squares in :func:`power` (methods)
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(48)
_GL_NODES, _GL_WEIGHTS = (_GL_NODES + 1) / 2, _GL_WEIGHTS / 2
#: the estimand of each design, one line (printed, and a column of the CSV tables)
ESTIMANDS = {
    "methods": "the population mean delta: over the population of questions the benchmark's n "
               "are drawn from and of training seeds (not only these n questions)",
    "models": "the two checkpoints' mean delta over the population of questions the n are "
              "drawn from (not only these n questions)",
    "models_clustered": "the two checkpoints' mean delta over the population of question "
                        "clusters the G are drawn from",
}
#: (seed, question) cells drawn at once by the simulation (float64 buffers of 16 MB)
_CELLS_PER_CHUNK = 2**21
#: neighbour steps of the chosen design: k +- 1, n x/ 1.25, r +- 1
N_STEP = 1.25
#: the largest grid sizes accepted (bounds of every size option)
K_LIMIT, N_LIMIT, R_LIMIT = 1000, 10**7, 100
#: most (k, r) pairs searched (each a bisection over n of noncentral-t powers: ~10 ms)
PAIRS_LIMIT = 5000
#: bounds of --sims
SIMS_LIMIT = 200_000
#: most (seed, question) cells simulated per checked design (sims x k x n for methods,
#: sims x n for models): about 2 s at the ~50 million cells per second measured on one
#: core; above it a design's sims are reduced (and the report says so)
SIM_CELLS_LIMIT = 10**8
#: fewest sims worth a check (a 95% Wilson interval about +-7 pp wide at 50% power);
#: a design that would get fewer is not simulated
MIN_CHECK_SIMS = 200


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
    if design == "models":
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
    ``methods`` form of models_clustered, :func:`clustered_as_methods`): two-sided t on the
    k unit-mean deltas (k - 1 df); both noncentral t, exactly ``alpha`` at ``effect = 0``.
    Arrays broadcast. Exact under the normal model; for 0/1 scores an approximation (checked
    by :func:`simulate_power`).
    """
    k, n, r = _sizes(k, n, r)
    effect = np.asarray(effect, dtype=float)
    se = np.sqrt(mean_delta_variance(comp, design, k, n, r))
    if design in ("models", "clusters"):
        df = (n if design == "models" else k) - 1 + 0 * (k + n)
        with np.errstate(divide="ignore", invalid="ignore"):
            return _two_sided_nct(stats.t.isf(alpha / 2, df), df, effect / se)
    k, n, r, effect, se = np.broadcast_arrays(k, n, r, effect, se)
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
    if design == "models":
        return 2 * n * (costs.question + r * costs.repeat) + 0 * k
    return 2 * k * (costs.seed + n * (costs.question + r * costs.repeat))


# ---------------------------------------------------------------- components


def components_from_generator(gen, effect: float, design: str = "methods") -> Components:
    """Exact components of a ``seed_question`` setting at true effect ``effect`` (fraction).

    By quadrature over the model's normals (independent of any simulation): the seed part is
    the variance over the seed effects ``(u_b, u_v)`` of ``E[D | u]``, the question part the
    variance over the difficulty ``b`` of ``E[D | b]``, the repeat part ``E[p_b (1 - p_b) +
    p_v (1 - p_v)]``, and the interaction what is left of ``Var(p_v - p_b)``. For ``models``
    the seeds are fixed (``sd_seed = 0``; the generator's seed spread is removed).
    """
    if design == "models":
        gen = dataclasses.replace(gen, sd_seed=0.0)
    beta = gen.beta_for(effect)
    xb, xv = gen.theta, gen.theta + beta
    vq, ve, vs, rho = gen.sd_question**2, gen.sd_noise**2, gen.sd_seed**2, gen.rho
    total = vq + ve + vs
    z, w = np.polynomial.hermite_e.hermegauss(64)
    w = w / w.sum()
    # question main effect: E[D | b], b ~ N(0, vq)
    cq = (mean_sigmoid(xv + np.sqrt(vq) * z, ve + vs) - mean_sigmoid(xb + np.sqrt(vq) * z,
                                                                      ve + vs))
    var_c = float((w * cq**2).sum() - ((w * cq).sum()) ** 2)
    # seed main effect: E[D | u_b, u_v], u correlated normals of sd sqrt(vs)
    z1, z2 = z[:, None], z[None, :]
    ub = np.sqrt(vs) * z1
    uv = np.sqrt(vs) * (rho * z1 + np.sqrt(max(1 - rho**2, 0.0)) * z2)
    ca = mean_sigmoid(xv + uv, vq + ve) - mean_sigmoid(xb + ub, vq + ve)
    ww = w[:, None] * w[None, :]
    var_a = float((ww * ca**2).sum() - ((ww * ca).sum()) ** 2)
    m_b, m_v = mean_sigmoid(np.array([xb, xv]), total)
    bb = pair_sigmoid(xb, xb, total, total)
    vv = pair_sigmoid(xv, xv, total, total)
    bv = pair_sigmoid(xb, xv, total, vq + ve + rho * vs)
    var_d = vv + bb - 2 * bv - (m_v - m_b) ** 2
    var_r = (m_b - bb) + (m_v - vv)
    var_i = var_d - var_a - var_c
    notes = ()
    if var_i < -1e-9:
        notes = (f"quadrature left a negative interaction ({var_i:.2e}); set to 0",)
    if design == "models":
        var_c, var_i = var_c + max(var_i, 0.0), 0.0
    return Components(float(np.sqrt(max(var_a, 0.0))), float(np.sqrt(max(var_c, 0.0))),
                      float(np.sqrt(max(var_i, 0.0))), float(np.sqrt(max(var_r, 0.0))),
                      source=f"seed_question {gen.describe()} at {100 * effect:+g} pp",
                      notes=notes)


def anova_mean_squares(deltas):
    """Two-way ANOVA mean squares ``(MS_seed, MS_question, MS_resid)`` of ``(k, n)`` deltas
    (the ones :func:`protocols.methods.paired_two_level.two_level_variance` combines)."""
    d = np.asarray(deltas, dtype=float)
    k, n = d.shape
    grand = d.mean()
    seed_means = d.mean(axis=1, keepdims=True)
    question_means = d.mean(axis=0, keepdims=True)
    ms_s = n * ((seed_means - grand) ** 2).sum() / (k - 1)
    ms_q = k * ((question_means - grand) ** 2).sum() / (n - 1)
    resid = d - seed_means - question_means + grand
    ms_e = (resid**2).sum() / ((k - 1) * (n - 1))
    return float(ms_s), float(ms_q), float(ms_e)


def _largest_delta_sd(base, variant) -> float:
    """The largest sd (fraction) a per-question delta can have: half its range.

    Scores in ``[lo, hi]`` give deltas in ``[-(hi - lo), hi - lo]``, whose sd is at most
    ``hi - lo`` (half the deltas at each end); 1 for 0/1 scores.
    """
    both = np.concatenate([np.ravel(base), np.ravel(variant)])
    return float(both.max() - both.min()) or 1.0


def components_from_pilot(base, variant, *, sd_repeat: float | None = None,
                          repeat_share: float | None = None, design: str = "methods",
                          source: str = "pilot") -> Components:
    """Method-of-moments components from a pilot's ``(k, n)`` scores (one run per cell).

    ``sigma_a**2 = (MS_seed - MS_resid) / n``, ``sigma_c**2 = (MS_question - MS_resid) / k``,
    ``sigma_i**2 + sigma_r**2 = MS_resid``. One run per (seed, question) cannot split the
    residual into interaction and repeat noise: with ``sd_repeat`` (fraction) given, the
    interaction is the rest; else with ``repeat_share`` (a model's ``sigma_r**2 / (sigma_i**2
    + sigma_r**2)``, e.g. of ``seed_question`` fitted to the pilot) by that share; else the
    whole residual is taken as interaction (repeats then never help; the conservative
    reading). A note says which. For ``models`` the rows are repeats of the two fixed models,
    so the residual is the repeat noise and there is no seed part. Estimates below 0 are set
    to 0 with a note, and estimates above the largest sd a delta of the pilot's scores can
    have (their range: 1 for 0/1 scores) are clipped to it with a note: a few seeds can give
    a moment estimate no data could.
    """
    base = np.asarray(base, dtype=float)
    variant = np.asarray(variant, dtype=float)
    k, n = base.shape
    if k < 2 or n < 2:
        raise InvalidParameterError("--from-pilot needs at least 2 seeds and 2 questions; "
                                    f"{source} has {k} seeds and {n} questions")
    ms_s, ms_q, ms_e = anova_mean_squares(variant - base)
    notes = []
    var_a = (ms_s - ms_e) / n if design == "methods" else 0.0
    var_c = (ms_q - ms_e) / k
    checked = (("sd_seed", var_a), ("sd_question", var_c)) if design == "methods" else (
        ("sd_question", var_c),)
    for name, value in checked:
        if value <= 0:
            notes.append(f"{name} estimate at the boundary 0 (moment estimate {value:.3g} "
                         f"fraction**2 <= 0): the pilot cannot tell it from 0; state --"
                         f"{name.replace('_', '-')} to plan for a positive one")
    if design != "methods":
        var_r, var_i = ms_e, 0.0
        notes.append(f"models: the pilot's {k} runs per arm read as repeats of the two models")
    elif sd_repeat is None and repeat_share is not None:
        var_r, var_i = repeat_share * ms_e, (1 - repeat_share) * ms_e
        notes.append(f"one run per (seed, question): the residual is split into repeat noise "
                     f"and interaction by the fitted seed_question model ({100 * repeat_share:.1f}"
                     f"% repeat noise), an assumption the pilot cannot check; state "
                     f"--sd-repeat to override")
    elif sd_repeat is None:
        var_r, var_i = 0.0, ms_e
        notes.append("one run per (seed, question): repeat noise and interaction cannot be "
                     "told apart; the residual is taken as interaction (repeats do not help);"
                     " state --sd-repeat to split it")
    else:
        var_r = sd_repeat**2
        var_i = ms_e - var_r
        if var_i <= 0:
            notes.append(f"sd_inter at the boundary 0: --sd-repeat {100 * sd_repeat:g} pp "
                         f"exceeds the residual sd {100 * math.sqrt(ms_e):.3f} pp")
    sds = [float(math.sqrt(max(v, 0.0))) for v in (var_a, var_c, var_i, var_r)]
    top = _largest_delta_sd(base, variant)
    for i, name in enumerate(("sd_seed", "sd_question", "sd_inter", "sd_repeat")):
        if sds[i] > top:
            # a moment estimate has no upper bound, but the delta of two scores in [lo, hi]
            # cannot have an sd above hi - lo: say so instead of handing the planner (and its
            # option checks) a value no pilot can have
            notes.append(f"{name} clipped to {100 * top:.3g} pp, the largest sd a delta of "
                         f"these scores can have (moment estimate {100 * sds[i]:.3g} pp: the "
                         f"pilot's {k} seeds are too few to pin it)")
            sds[i] = top
    return Components(*sds,
                      source=f"{source}: {k} seeds, {n} questions, MS_seed {ms_s:.3g}, "
                             f"MS_question {ms_q:.3g}, MS_resid {ms_e:.3g}",
                      notes=tuple(notes))


# ---------------------------------------------------------------- search


@dataclass(frozen=True)
class Plan:
    """A planner's answer.

    Attributes
    ----------
    designs : pandas.DataFrame
        Every feasible (k, r) with its n, ranked best first; columns ``k``, ``n``, ``r``,
        ``cost``, ``power`` (closed form, fraction), ``effect_pp``, ``sd_pp`` (sqrt of
        Var(mean D), pp).
    chosen : dict
        The first row (the cheapest design with power >= target, or the one with the smallest
        detectable effect within the budget); ``None`` when nothing in the bounds reaches it.
    checked : pandas.DataFrame or None
        Simulated designs: the columns above plus ``sims``, ``sim_power``, ``sim_low``,
        ``sim_high`` (fractions, 95% Wilson), ``role`` (``best #i`` or ``neighbour``).
    """

    config: object
    components: Components
    designs: pd.DataFrame
    chosen: dict | None
    checked: pd.DataFrame | None = None
    #: the configuration searched: ``config`` itself, or for ``models_clustered`` the
    #: equivalent ``methods`` problem (:func:`clustered_as_methods`)
    problem: object = None


def _min_n(comp, design, k, r, effect, target, alpha, n_lo, n_hi):
    """Smallest integer n in [n_lo, n_hi] with power >= target, per (k, r) (vectorized
    bisection); 0 where even n_hi falls short."""
    k = np.asarray(k, dtype=float)
    r = np.asarray(r, dtype=float)
    ok_hi = power(comp, design, k, n_hi, r, effect, alpha) >= target
    ok_lo = power(comp, design, k, n_lo, r, effect, alpha) >= target
    lo = np.full(k.shape, float(n_lo))   # power(lo) < target (unless ok_lo)
    hi = np.full(k.shape, float(n_hi))   # power(hi) >= target
    while np.any(hi - lo > 1):
        mid = np.floor((lo + hi) / 2)
        ok = power(comp, design, k, mid, r, effect, alpha) >= target
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return np.where(ok_lo, n_lo, np.where(ok_hi, hi, 0)).astype(int)


def _mde(comp, design, k, n, r, target, alpha):
    """Smallest effect (fraction) with power >= target at each design (vectorized bisection
    on log effect); inf where even 100 pp falls short."""
    # Bracket around the normal approximation (z_{1-alpha/2} + z_power) SD, widened to
    # [1e-7, 1] where it does not hold; then bisection to a relative 1e-6.
    guess = (stats.norm.isf(alpha / 2) + stats.norm.ppf(target)) * np.sqrt(
        mean_delta_variance(comp, design, k, n, r))
    lo = np.log(np.clip(guess / 8, 1e-7, 1.0))
    hi = np.log(np.clip(guess * 8, 1e-7, 1.0))
    low_ok = power(comp, design, k, n, r, np.exp(lo), alpha) >= target
    high_ok = power(comp, design, k, n, r, np.exp(hi), alpha) >= target
    lo = np.where(low_ok, math.log(1e-7), lo)
    hi = np.where(high_ok, hi, 0.0)
    reach = power(comp, design, k, n, r, 1.0, alpha) >= target
    for _ in range(int(np.ceil(np.log2(np.max(hi - lo) / 1e-6)))):
        mid = (lo + hi) / 2
        ok = power(comp, design, k, n, r, np.exp(mid), alpha) >= target
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return np.where(reach, np.exp(hi), np.inf)


def search(comp: Components, costs: Costs, *, design="methods", power_target=0.8,
           effect=None, budget=None, alpha=0.05, k_max=50, n_max=10_000, r_max=10,
           k_min=2, n_min=2) -> pd.DataFrame:
    """Every (k, r) of the grid with its best n, ranked (see :class:`Plan`).

    With ``effect`` (fraction): the smallest n with closed-form power >= ``power_target``,
    ranked by cost (then fewer seeds, repeats). With ``budget``: the largest n within it,
    ranked by the smallest detectable effect (then cost).
    """
    ks = np.arange(k_min, k_max + 1) if design != "models" else np.array([1])
    rs = np.arange(1, r_max + 1)
    kk, rr = (a.ravel() for a in np.meshgrid(ks, rs, indexing="ij"))
    if budget is None:
        nn = _min_n(comp, design, kk, rr, effect, power_target, alpha, n_min, n_max)
        keep = nn > 0
        kk, rr, nn = kk[keep], rr[keep], nn[keep]
        eff = np.full(kk.shape, float(effect))
    else:
        per_question = costs.question + rr * costs.repeat
        room = budget / 2 / (kk if design != "models" else 1) - (
            costs.seed if design != "models" else 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            nn = np.where(per_question > 0, np.floor(room / per_question + 1e-9), n_max)
        nn = np.minimum(nn, n_max)
        keep = nn >= n_min
        kk, rr, nn = kk[keep], rr[keep], nn[keep].astype(int)
        eff = _mde(comp, design, kk, nn, rr, power_target, alpha) if kk.size else kk * 1.0
    table = pd.DataFrame({
        "k": kk.astype(int), "n": nn.astype(int), "r": rr.astype(int),
        "cost": cost(costs, design, kk, nn, rr),
        "power": power(comp, design, kk, nn, rr, eff, alpha) if kk.size else [],
        "effect_pp": 100 * eff,
        "sd_pp": 100 * np.sqrt(mean_delta_variance(comp, design, kk, nn, rr)),
    })
    order = ["cost", "k", "r"] if budget is None else ["effect_pp", "cost", "k", "r"]
    table = table[np.isfinite(table.effect_pp)] if budget is not None else table
    return table.sort_values(order, kind="stable").reset_index(drop=True)


def neighbours(design, k, n, r, *, k_min, k_max, n_min, n_max, r_max):
    """The chosen design's neighbours (k +- 1, n x/ 1.25, r +- 1) inside the bounds."""
    out = []
    steps = [(0, 1.0, 0), (0, N_STEP, 0), (0, 1 / N_STEP, 0), (0, 1.0, 1), (0, 1.0, -1)]
    if design != "models":
        steps += [(1, 1.0, 0), (-1, 1.0, 0)]
    for dk, fn, dr in steps:
        kk, nn, rr = k + dk, int(round(n * fn)), r + dr
        if design != "models" and not k_min <= kk <= k_max:
            continue
        if n_min <= nn <= n_max and 1 <= rr <= r_max and (kk, nn, rr) not in out:
            out.append((kk, nn, rr))
    return out[1:]


# ---------------------------------------------------------------- simulation


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
        if design == "models":
            sd = math.sqrt(c.sd_question**2 + c.sd_inter**2 + c.sd_repeat**2 / r)
            return delta + sd * rng.standard_normal((sims, n))
        if design == "clusters":
            # only the unit means the t reads are drawn (sd_question is 0 here)
            return (delta + c.sd_seed * rng.standard_normal((sims, k))
                    + within / math.sqrt(n) * rng.standard_normal((sims, k)))
        return (delta + c.sd_seed * rng.standard_normal((sims, k, 1))
                + c.sd_question * rng.standard_normal((sims, 1, n))
                + within * rng.standard_normal((sims, k, n)))
    if design == "models":
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
    units = n if design == "models" else k * n
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


def check_designs(model, config, table: pd.DataFrame, chosen: dict, effect: float
                  ) -> pd.DataFrame:
    """Simulate the best ``config.show`` designs and the chosen one's neighbours."""
    rows = [dict(row, role=f"best #{i + 1}") for i, row in
            enumerate(table.head(config.show).to_dict("records"))]
    seen = {(row["k"], row["n"], row["r"]) for row in rows}
    comp = config.components
    for k, n, r in neighbours(config.design, chosen["k"], chosen["n"], chosen["r"],
                              k_min=config.k_min, k_max=config.k_max, n_min=config.n_min,
                              n_max=config.n_max, r_max=config.r_max):
        if (k, n, r) in seen:
            continue
        seen.add((k, n, r))
        rows.append({"k": k, "n": n, "r": r,
                     "cost": float(cost(config.costs, config.design, k, n, r)),
                     "power": float(power(comp, config.design, k, n, r, effect, config.alpha)),
                     "effect_pp": 100 * effect,
                     "sd_pp": float(100 * np.sqrt(mean_delta_variance(
                         comp, config.design, k, n, r))),
                     "role": "neighbour"})
    for row in rows:
        sims = check_sims(config.sims, config.design, row["k"], row["n"])
        if sims == 0:
            row.update(sims=0, sim_power=math.nan, sim_low=math.nan, sim_high=math.nan)
            continue
        seq = cell_seed(config.seed, "plan", config.design, row["k"], row["n"], row["r"],
                        round(100 * effect, 9))
        sim = simulate_power(model, config.design, row["k"], row["n"], row["r"], effect,
                             sims=sims, alpha=config.alpha, rng=seq)
        row.update(sims=sim.sims, sim_power=sim.power, sim_low=sim.low, sim_high=sim.high)
    return pd.DataFrame(rows)


def check_sims(sims: int, design: str, k: int, n: int) -> int:
    """Sims of one checked design: ``sims``, reduced so that sims x cells stays within
    :data:`SIM_CELLS_LIMIT`; 0 (not simulated) below :data:`MIN_CHECK_SIMS`.

    Nothing else bounds the product: a design with n ~ 1e6 questions at 20,000 sims would
    draw 2e10 cells per design (minutes to hours, with no output).
    """
    cells = max(1, int(n) if design == "models" else int(k) * int(n))
    allowed = min(int(sims), SIM_CELLS_LIMIT // cells)
    return allowed if allowed >= MIN_CHECK_SIMS else 0


# ---------------------------------------------------------------- configuration


@dataclass(frozen=True)
class PlanConfig:
    """Everything :func:`run_plan` needs (validated by :func:`_plan_iv`).

    ``effect`` (fraction) with ``power`` (target) finds the cheapest design; ``budget`` (in
    the costs' unit) finds the smallest detectable effect instead. ``components`` are used by
    the closed form; ``model`` (Components or a seed_question generator) by the simulation.
    """

    components: Components
    costs: Costs
    model: object = None
    design: str = "methods"
    power: float = 0.8
    effect: float | None = 0.01
    budget: float | None = None
    alpha: float = 0.05
    k_min: int = 2
    k_max: int = 50
    n_min: int = 2
    n_max: int = 10_000
    r_max: int = 10
    sims: int = 2000
    show: int = 5
    seed: int = 0
    cluster_size: int = 1
    #: the components are ``model``'s at the effect (``--generator-param``): with
    #: ``budget`` they are recomputed at the detectable effect found, and the search re-run
    components_follow_effect: bool = False


def _plan_iv(config: PlanConfig) -> PlanConfig:
    """Validate every field once; messages name the command-line option."""
    check_choice(config.design, "--design", DESIGNS)
    check_alpha(config.alpha, "--alpha")
    check_number(config.power, "--power", low=config.alpha, high=1.0, low_open=True,
                 high_open=True)
    if (config.effect is None) == (config.budget is None):
        raise fail("--effect", "given, or --budget instead (exactly one of them)",
                   config.effect)
    if config.effect is not None:
        check_number(config.effect, "--effect", low=0.0, high=1.0, low_open=True)
    if config.budget is not None:
        check_number(config.budget, "--budget", low=0.0, low_open=True)
    check_int(config.k_min, "--k-min", low=2, high=K_LIMIT)
    check_int(config.k_max, "--k-max", low=config.k_min, high=K_LIMIT)
    check_int(config.n_min, "--n-min", low=1 if config.design == "models_clustered" else 2,
              high=N_LIMIT)
    check_int(config.n_max, "--n-max", low=config.n_min, high=N_LIMIT)
    check_int(config.r_max, "--r-max", low=1, high=R_LIMIT)
    pairs = (config.k_max - config.k_min + 1 if config.design != "models" else 1) * \
        config.r_max
    if pairs > PAIRS_LIMIT:
        raise fail("--r-max", f"such that (--k-max - --k-min + 1) x --r-max <= {PAIRS_LIMIT} "
                   f"(the (k, r) pairs searched); got {pairs} pairs from --k-max "
                   f"{config.k_max}, --r-max", config.r_max)
    check_int(config.sims, "--sims", low=0, high=SIMS_LIMIT)
    check_int(config.show, "--show", low=1, high=100)
    check_int(config.seed, "--seed", low=0)
    if config.design == "models_clustered":
        check_int(config.cluster_size, "--cluster-size", low=1, high=N_LIMIT)
        check_int(config.n_max, "--n-max", low=config.k_min * config.cluster_size,
                  high=N_LIMIT)
        if config.model is not None:
            raise fail("--design", "methods or models with --from-pilot or --generator-param "
                       "(models_clustered takes stated components)", config.design)
    c = config.components
    for name in ("sd_seed", "sd_question", "sd_inter", "sd_repeat", "sd_cluster"):
        check_number(getattr(c, name), "--" + name.replace("_", "-"), low=0.0, high=1.0)
    noise = (c.sd_seed + c.sd_inter + c.sd_repeat if config.design == "methods"
             else c.sd_question + c.sd_inter + c.sd_repeat + c.sd_cluster)
    if noise == 0:
        raise fail("--sd-seed" if config.design == "methods" else "--sd-question",
                   "positive (with every other component 0 the test has no noise to estimate)", 0.0)
    for name in ("seed", "question", "repeat"):
        check_number(getattr(config.costs, name), "--cost " + name, low=0.0)
    costs = config.costs
    paid = ("seed", "question", "repeat") if config.design == "methods" else \
        ("question", "repeat")  # models and clusters pay no seed
    if all(getattr(costs, name) == 0 for name in paid):
        # every design would cost 0: the ranking by cost would pick one arbitrarily
        raise fail("--cost", f"positive for at least one of {', '.join(paid)} (all 0 "
                   f"makes every {config.design} design free and the choice arbitrary)",
                   "all 0")
    # the dearest design in the bounds (Python floats: an overflow is inf, not a warning)
    k_top = 1 if config.design == "models" else config.k_max
    n_top = config.n_max
    dearest = 2.0 * k_top * (costs.seed + n_top * (costs.question + config.r_max
                                                   * costs.repeat))
    if not math.isfinite(dearest):
        raise fail("--cost", f"small enough that the dearest design in the bounds (k "
                   f"{k_top}, n {n_top}, r {config.r_max}) has a finite cost",
                   f"seed={costs.seed:g}, question={costs.question:g}, "
                   f"repeat={costs.repeat:g}")
    per_answer = config.costs.question + config.costs.repeat
    if config.budget is not None and per_answer == 0 and config.costs.seed == 0:
        raise fail("--cost", "positive for at least one of seed, question, repeat when "
                   "--budget is given", "all 0")
    return config


def clustered_as_methods(config: PlanConfig) -> PlanConfig:
    """``models_clustered`` as the ``methods`` problem it is.

    G clusters of m questions (``cluster_size``), r repeats: the cluster means of the delta
    play the seeds' part. A cluster's mean delta is ``mu + g + (question and interaction
    deltas of its m questions) + repeat noise``, so with seeds -> clusters (k = G), n -> m
    (fixed), ``sd_seed -> sd_cluster``, ``sd_inter -> sqrt(sd_question**2 + sd_inter**2)``,
    ``sd_question -> 0`` and a seed cost of 0, ``Var(mean D) = sd_cluster**2 / G +
    (sd_question**2 + sd_inter**2) / (G m) + sd_repeat**2 / (G m r)`` -- the design effect
    form ``Var_iid (1 + (m - 1) icc)`` with ``icc = sd_cluster**2 / (sd_cluster**2 +
    sd_question**2 + sd_inter**2 + sd_repeat**2 / r)`` -- and the test is the t on the G
    cluster-mean deltas (G - 1 df); the cost ``2 G m (question + r repeat)``. The returned
    problem's design is ``clusters`` (a nested design: searched like ``methods``, tested by
    that t, not by :func:`two_level_test`); it is solved unvalidated, by :func:`run_plan`.
    """
    c, m = config.components, config.cluster_size
    comp = Components(c.sd_cluster, 0.0, math.hypot(c.sd_question, c.sd_inter), c.sd_repeat,
                      source=c.source, notes=c.notes)
    return dataclasses.replace(config, design="clusters", components=comp, model=None,
                               costs=dataclasses.replace(config.costs, seed=0.0), n_min=m,
                               n_max=m, k_max=min(config.k_max, config.n_max // m))


def _clustered_rows(table, m):
    if table is None:
        return None
    out = table.rename(columns={"k": "clusters"})
    out["n"] = out["clusters"] * m
    return out


def run_plan(config: PlanConfig) -> Plan:
    """Search the grid, choose, and (``config.sims > 0``) check by simulation."""
    config = _plan_iv(config)
    if config.design == "models_clustered":
        inner = _solve(clustered_as_methods(config))
        chosen = None
        if inner.chosen is not None:
            chosen = dict(inner.chosen, clusters=inner.chosen["k"],
                          n=inner.chosen["k"] * config.cluster_size)
            del chosen["k"]
        return Plan(config, config.components,
                    _clustered_rows(inner.designs, config.cluster_size), chosen,
                    _clustered_rows(inner.checked, config.cluster_size), inner.config)
    return _solve(config)


def _solve(config: PlanConfig) -> Plan:
    """:func:`run_plan` of a validated configuration (or of the ``clusters`` problem)."""
    comp = config.components
    table = search(comp, config.costs, design=config.design, power_target=config.power,
                   effect=config.effect, budget=config.budget, alpha=config.alpha,
                   k_min=config.k_min, k_max=config.k_max, n_min=config.n_min,
                   n_max=config.n_max, r_max=config.r_max)
    for _ in range(3):
        # A generator's components depend on the effect: a fixed point in the budget's
        # smallest detectable effect (two rounds move it by < 0.1% in the tests' settings).
        if not (config.components_follow_effect and config.budget is not None
                and not table.empty):
            break
        at = float(table.effect_pp.iloc[0]) / 100
        config.model.check_effect(at)
        comp = components_from_generator(config.model, at, config.design)
        config = dataclasses.replace(config, components=comp)
        again = search(comp, config.costs, design=config.design, power_target=config.power,
                       effect=None, budget=config.budget, alpha=config.alpha,
                       k_min=config.k_min, k_max=config.k_max, n_min=config.n_min,
                       n_max=config.n_max, r_max=config.r_max)
        moved = abs(float(again.effect_pp.iloc[0]) / 100 - at) if not again.empty else 0.0
        table = again
        if moved < 1e-3 * at:
            break
    if table.empty:
        return Plan(config, comp, table, None, None, config)
    chosen = table.iloc[0].to_dict()
    for key in ("k", "n", "r"):
        chosen[key] = int(chosen[key])
    checked = None
    if config.sims > 0:
        model = config.model if config.model is not None else comp
        checked = check_designs(model, config, table, chosen, chosen["effect_pp"] / 100)
    return Plan(config, comp, table, chosen, checked, config)


def power_grid(plan: Plan, ks=None, ns=None):
    """Closed-form power over a (k, n) grid at the chosen r and effect (for the figure).

    Returns
    -------
    ks, ns : ndarray
        The grid; for models and models_clustered the rows are repeats r (and the columns
        of models_clustered the total questions G m).
    power, cost : ndarray, shape (len(ks), len(ns))
    """
    c = plan.problem
    r = plan.chosen["r"] if plan.chosen else 1
    effect = plan.chosen["effect_pp"] / 100 if plan.chosen else (c.effect or 0.01)
    if plan.config.design == "models_clustered":
        # rows r, columns the total questions G m of G = k_min .. k_max clusters
        m = plan.config.cluster_size
        rs = np.arange(1, c.r_max + 1) if ks is None else np.asarray(ks)
        gs = (np.unique(np.geomspace(c.k_min, c.k_max, 60).round().astype(int))
              if ns is None else np.asarray(ns) // m)
        p = power(c.components, "clusters", gs[None, :], m, rs[:, None], effect, c.alpha)
        return rs, gs * m, p, cost(c.costs, "clusters", gs[None, :], m, rs[:, None])
    if ns is None:
        ns = np.unique(np.geomspace(c.n_min, c.n_max, 60).round().astype(int))
    if c.design == "models":
        rs = np.arange(1, c.r_max + 1) if ks is None else np.asarray(ks)
        p = power(c.components, "models", 1, ns[None, :], rs[:, None], effect, c.alpha)
        return rs, ns, p, cost(c.costs, "models", 1, ns[None, :], rs[:, None])
    ks = np.arange(c.k_min, c.k_max + 1) if ks is None else np.asarray(ks)
    p = power(c.components, "methods", ks[:, None], ns[None, :], r, effect, c.alpha)
    return ks, ns, p, cost(c.costs, "methods", ks[:, None], ns[None, :], r)


# ---------------------------------------------------------------- command line


def _parse_pairs(items, option, allowed=None):
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or (allowed is not None and key not in allowed):
            rule = ("KEY=VALUE" if allowed is None
                    else "KEY=VALUE with KEY one of " + ", ".join(allowed))
            raise fail(option, rule, item)
        try:
            out[key] = float(value)
        except ValueError:
            raise fail(option, "KEY=NUMBER", item) from None
    return out


def build_parser(prog="python -m sim.plan") -> ArgumentParser:
    p = ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    p.add_argument("--design", default="methods", help="methods (k paired seeds), models "
                   "(two fixed checkpoints) or models_clustered (questions in clusters of "
                   "--cluster-size); default methods")
    p.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    p.add_argument("--effect", type=float, default=None,
                   help="true effect to detect, pp (default 1 unless --budget)")
    p.add_argument("--budget", type=float, default=None,
                   help="total budget (cost unit): report the smallest detectable effect")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (0.05)")
    p.add_argument("--cost", nargs="+", default=[], metavar="KEY=VALUE",
                   help="seed=C (per seed and arm) question=C (per seed x question scored) "
                        "repeat=C (per scored answer); default seed=1 (models and "
                        "models_clustered: question=1)")
    p.add_argument("--cost-unit", default="units", help="name of the cost unit (for output)")
    for name, what in (("seed", "seed-level sd of the per-seed delta"),
                       ("question", "question-level sd of the per-question delta"),
                       ("inter", "seed x question interaction sd (not averaged by repeats)"),
                       ("repeat", "sd of one repeat's delta given seed and question")):
        p.add_argument(f"--sd-{name}", type=float, default=None, help=f"{what}, pp")
    p.add_argument("--sd-cluster", type=float, default=None,
                   help="models_clustered: sd of a cluster's mean delta over clusters, pp")
    p.add_argument("--cluster-size", type=int, default=None,
                   help="models_clustered: questions per cluster m (clusters G are searched "
                        "in [--k-min, --k-max], G m <= --n-max)")
    p.add_argument("--from-pilot", default=None, metavar="FILE",
                   help="tidy CSV seed,arm,question,score: components by two-way ANOVA, "
                        "simulation through seed_question fitted to it")
    p.add_argument("--generator-param", nargs="+", default=None, metavar="KEY=VALUE",
                   help="a seed_question setting (e.g. theta=2 sd_seed=0.1): exact components "
                        "at the effect; simulation through it")
    p.add_argument("--k-min", type=int, default=2)
    p.add_argument("--k-max", type=int, default=50, help="most seeds per arm (50)")
    p.add_argument("--n-min", type=int, default=2)
    p.add_argument("--n-max", type=int, default=10_000,
                   help="most questions (the benchmark's size; 10000)")
    p.add_argument("--r-max", type=int, default=10, help="most repeats per question (10)")
    p.add_argument("--sims", type=int, default=2000,
                   help="simulated experiments per checked design (0: no check)")
    p.add_argument("--show", type=int, default=5, help="designs listed and simulated (5)")
    p.add_argument("--seed", type=int, default=0, help="root seed of the simulation")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write plan_designs.csv and plan_checked.csv there")
    return p


def config_from_args(args) -> PlanConfig:
    """A :class:`PlanConfig` from parsed arguments (sources of components resolved)."""
    cost_kw = _parse_pairs(args.cost, "--cost", ("seed", "question", "repeat"))
    # models pay no seeds: their default is a question's cost, so that designs differ
    default = {"question": 1.0} if args.design in ("models", "models_clustered") \
        else {"seed": 1.0}
    costs = Costs(**(default if not cost_kw else cost_kw), unit=args.cost_unit)
    if args.effect is None and args.budget is None:
        args.effect = 1.0
    stated = {name: getattr(args, f"sd_{name}") for name in
              ("seed", "question", "inter", "repeat")}
    for name, value in {**stated, "cluster": args.sd_cluster}.items():
        if value is not None:
            check_number(value, f"--sd-{name}", low=0.0, high=100.0)
    if (args.cluster_size is not None or args.sd_cluster is not None) != (
            args.design == "models_clustered"):
        raise fail("--cluster-size", "given (with --sd-cluster) exactly when --design is "
                   "models_clustered", args.cluster_size)
    design = check_choice(args.design, "--design", DESIGNS)
    sources = sum(x is not None for x in (args.from_pilot, args.generator_param))
    if sources > 1:
        raise fail("--from-pilot", "not combined with --generator-param", args.from_pilot)
    effect = None if args.effect is None else check_number(
        args.effect, "--effect", low=0.0, high=100.0, low_open=True) / 100
    model = None
    if args.generator_param is not None:
        gen = generators.get("seed_question", **_parse_pairs(args.generator_param,
                                                             "--generator-param"))
        at = effect if effect is not None else 0.01
        gen.check_effect(at)
        comp = components_from_generator(gen, at, design)
        model = gen
    elif args.from_pilot is not None:
        from evalcal_core.results_io import read_results

        check_complete(args.from_pilot, "--from-pilot")  # not from a killed run's folder
        pilot = read_results(args.from_pilot)
        if not pilot.per_question:
            raise InvalidParameterError(f"--from-pilot: {args.from_pilot} has per-seed metrics; "
                                        "the planner needs per-question scores "
                                        "(seed,arm,question,score)")
        sd_r = None if stated["repeat"] is None else stated["repeat"] / 100
        binary = np.isin(pilot.base, (0, 1)).all() and np.isin(pilot.variant, (0, 1)).all()
        share = None
        if binary and pilot.k >= 2:
            model = generators.generator_class("seed_question").fit(pilot.base, pilot.variant)
            observed = float(np.mean(pilot.variant - pilot.base))
            fitted = components_from_generator(model, observed)
            parts = fitted.sd_inter**2 + fitted.sd_repeat**2
            share = fitted.sd_repeat**2 / parts if parts > 0 else None
        comp = components_from_pilot(pilot.base, pilot.variant, sd_repeat=sd_r,
                                     repeat_share=share, design=design,
                                     source=str(args.from_pilot))
    else:
        missing = [n for n, v in stated.items() if v is None]
        if len(missing) == 4 and args.sd_cluster is None:
            raise fail("--sd-seed", "given (or --from-pilot FILE, or --generator-param): the "
                       "planner needs variance components", None)
        comp = Components(*((stated[n] or 0.0) / 100 for n in ("seed", "question", "inter",
                                                                 "repeat")),
                          sd_cluster=(args.sd_cluster or 0.0) / 100,
                          source="stated" + (f"; {', '.join(missing)} taken as 0"
                                             if missing else ""))
    # Stated values override what a pilot or a generator gave (except the split above).
    if args.from_pilot is not None or args.generator_param is not None:
        over = {f"sd_{n}": v / 100 for n, v in stated.items()
                if v is not None and not (n == "repeat" and args.from_pilot is not None)}
        if over:
            comp = dataclasses.replace(comp, source=comp.source + "; stated: " + ", ".join(
                over), **over)
    return PlanConfig(components=comp, costs=costs, model=model, design=design,
                      power=args.power, effect=effect,
                      budget=args.budget, alpha=args.alpha, k_min=args.k_min,
                      k_max=args.k_max, n_min=args.n_min, n_max=args.n_max, r_max=args.r_max,
                      sims=args.sims, show=args.show, seed=args.seed,
                      cluster_size=1 if args.cluster_size is None else args.cluster_size,
                      components_follow_effect=args.generator_param is not None and not any(
                          v is not None for v in stated.values()))


def _design_words(design, ch, m):
    head = {"methods": f"k = {ch.get('k')} seeds per arm, ",
            "models_clustered": f"G = {ch.get('clusters')} clusters of {m}, "}.get(design, "")
    r = ch["r"]
    return f"{head}n = {ch['n']:,} questions, r = {r} repeat{'s' if r != 1 else ''}"


#: per design: the test, the cost formula, the first column of the table
_WORDS = {
    "methods": ("two-level t, seeds and questions random: mean delta / sqrt(var(per-seed "
                "deltas) / k + var(per-question deltas) / n), min(k, n) - 1 df",
                "2 k (seed + n (question + r repeat))", "k"),
    "models": ("paired t on the n per-question deltas (n - 1 df)", "2 n (question + r repeat)",
               "k"),
    "models_clustered": ("t on the G cluster-mean deltas (G - 1 df)",
                         "2 n (question + r repeat), n = G x cluster size", "clusters"),
}


def report_lines(plan: Plan) -> list[str]:
    """The planner's text output."""
    c = plan.config
    unit = c.costs.unit
    test, formula, first = _WORDS[c.design]
    lines = [f"design: {c.design}; test: {test}; two-sided alpha {c.alpha:g}",
             f"estimand: {ESTIMANDS[c.design]}",
             f"components: {plan.components.describe()}"]
    if c.design == "methods":
        # The conservative test's size is below alpha where interaction and repeat noise
        # matter: say what the power column means at effect 0.
        lines.append("power: exact for this test under the normal model, a new question set "
                     "per experiment; at effect 0 it is the test's size (<= alpha)")
    lines += [f"warning: {note}" for note in plan.components.notes]
    if c.design != "methods" and plan.components.sd_seed > 0:
        lines.append("note: sd_seed is not used for models (two fixed checkpoints, no seeds)")
    if c.design == "models_clustered":
        inner = plan.problem.components
        lines.append(f"clusters of {c.cluster_size} questions: design effect 1 + (m - 1) icc "
                     f"with icc = {icc(inner, 1):.4f} at r = 1")
    lines.append(f"costs ({unit}): seed {c.costs.seed:g}, question {c.costs.question:g}, "
                 f"repeat {c.costs.repeat:g}; a design costs {formula}")
    bounds = {"methods": f"k in [{c.k_min}, {c.k_max}], ",
              "models_clustered": f"G in [{c.k_min}, {c.k_max}], "}.get(c.design, "")
    bounds += f"n in [{c.n_min}, {c.n_max:,}], r in [1, {c.r_max}]"
    if c.budget is None:
        lines.append(f"goal: power >= {100 * c.power:g}% at {100 * c.effect:g} pp; "
                     f"searched {bounds}")
    else:
        lines.append(f"goal: smallest effect detected with power >= {100 * c.power:g}% "
                     f"within {c.budget:g} {unit}; searched {bounds}")
    if plan.chosen is None:
        lines.append("no design within the bounds reaches the goal: raise --k-max, --n-max, "
                     "--r-max or the budget, or lower --power")
        return lines
    ch = plan.chosen
    lines.append(f"chosen: {_design_words(c.design, ch, c.cluster_size)}: cost "
                 f"{ch['cost']:.4g} {unit}, power {100 * ch['power']:.1f}% (closed form) at "
                 f"{ch['effect_pp']:.3g} pp (SD of the mean delta {ch['sd_pp']:.3f} pp)")
    at_bound = [f"{name} = {value} is --{name}-max" for name, value, top in
                (("k", ch.get(first), c.k_max), ("n", ch["n"], c.n_max), ("r", ch["r"], c.r_max))
                if value == top and not (name == "k" and c.design == "models")]
    if at_bound:
        lines.append(f"note: {'; '.join(at_bound)}: a larger bound may give a cheaper design")
    table = plan.checked if plan.checked is not None else plan.designs.head(c.show).assign(
        role=[f"best #{i + 1}" for i in range(min(c.show, len(plan.designs)))])
    head = (f"{'':>10} {'G' if first == 'clusters' else 'k':>4} {'n':>7} {'r':>3} "
            f"{'cost':>10} {'effect pp':>9} {'power':>7}")
    if plan.checked is not None:
        head += "   check: simulated [95% Wilson]"
        # two powers side by side read as two answers: say which one the plan stands on
        lines.append("power column: the closed form, the plan's answer; the check column "
                     "simulates each design from the fitted model (a check of the closed form,"
                     " not a second answer: a gap means the model and the closed form's "
                     "normal components differ)" if c.model else
                     "power column: the closed form, the plan's answer; the check column "
                     "simulates each design (a check of the closed form, not a second answer)")
    lines.append(head)
    for row in table.itertuples():
        line = (f"{row.role:>10} {getattr(row, first):>4} {row.n:>7,} {row.r:>3} {row.cost:>10.4g} "
                f"{row.effect_pp:>9.3g} {100 * row.power:>6.1f}%")
        if plan.checked is not None:
            line += (f"   check {100 * row.sim_power:5.1f}% [{100 * row.sim_low:4.1f}, "
                     f"{100 * row.sim_high:4.1f}]" if row.sims > 0 else "   check not run")
        lines.append(line)
    if plan.checked is not None:
        what = ("normal components model" if not c.model
                else f"seed_question ({model_words(c.model)}), binomial repeats")
        lines.append(f"check: {c.sims:,} simulated experiments per design, {what}")
        done = plan.checked["sims"]
        if (done < c.sims).any():
            fewest = int(done[done > 0].min()) if (done > 0).any() else 0
            seeds = " x seeds" if c.design != "models" else ""
            lines.append(
                f"note: sims reduced to keep each check within {SIM_CELLS_LIMIT:.0e} "
                f"simulated cells (sims x questions{seeds}): {(done == 0).sum()} design(s) "
                f"not simulated (fewer than {MIN_CHECK_SIMS} sims fit; nan), "
                f"{((done > 0) & (done < c.sims)).sum()} with fewer sims (down to {fewest:,})")
        if c.model:
            # A fitted model need not reproduce the closed form's components exactly: show
            # its own, so that a gap between the two power columns can be read.
            own = components_from_generator(c.model, ch["effect_pp"] / 100,
                                            "models" if c.design == "models" else "methods")
            lines.append(f"the simulated model's own components: "
                         f"{dataclasses.replace(own, source=model_words(c.model)).describe()}")
    return lines


def model_words(gen) -> str:
    """A generator's parameters for people: floats to 3 significant digits.

    ``seed_question``'s parameters are on the logit scale (its ``theta`` is the baseline's
    logit, the sds are logit sds), so they are marked "logit" rather than shown as pp; a
    whole number (``n_questions``) is shown as is.
    """
    logit = getattr(gen, "name", "") == "seed_question"
    parts = []
    for name, value in gen.params().items():
        if isinstance(value, float):
            text = f"{value:.3g}"
            parts.append(f"{name} {text}" + (" logit" if logit and name != "rho" else ""))
        else:
            parts.append(f"{name} {value}")
    return ", ".join(parts)


def icc(comp: Components, r: int = 1) -> float:
    """Intra-cluster correlation of the per-question deltas (mean of r repeats) of the
    ``methods`` form of a clustered problem (:func:`clustered_as_methods`)."""
    within = comp.sd_inter**2 + comp.sd_repeat**2 / r
    total = comp.sd_seed**2 + within
    return comp.sd_seed**2 / total if total > 0 else 0.0


#: files :func:`write_tables` may write; those of an earlier plan it does not write are removed
TABLES = ("plan_designs.csv", "plan_checked.csv")


def write_tables(plan: Plan, out) -> list[str]:
    """``plan_designs.csv`` (every feasible design) and ``plan_checked.csv`` (simulated) in
    the folder ``out`` (nothing when ``None``), each atomically; fractions for powers, pp
    for effects. Returns the names written."""
    if out is None:
        return []
    from pathlib import Path

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables = {name: None if table is None else table.assign(
        test=_WORDS[plan.config.design][0], estimand=ESTIMANDS[plan.config.design])
        for name, table in (("plan_designs.csv", plan.designs),
                            ("plan_checked.csv", plan.checked))}
    written = [name for name, table in tables.items() if table is not None]
    for name in written:
        write_atomic(out / name, tables[name].to_csv(index=False))
    return written


def run_plan_into(config: PlanConfig, out, command: str) -> Plan:
    """:func:`run_plan`, with the tables written into ``out`` (unless ``None``), which is
    locked and marked incomplete from before the search until both tables are written
    (:func:`evalcal_core.outdir.run_outputs`)."""
    if out is None:
        return run_plan(config)
    with run_outputs(out, command, known=TABLES) as outputs:
        plan = run_plan(config)
        outputs.wrote(*write_tables(plan, outputs.path))
    return plan


def main(argv=None) -> int:
    """Command line: prints the plan; exit 1 when nothing in the bounds reaches the goal."""
    args = build_parser().parse_args(argv)
    plan = run_plan_into(config_from_args(args), args.out, "python -m sim.plan")
    print("\n".join(report_lines(plan)))
    return 0 if plan.chosen is not None else 1


if __name__ == "__main__":
    run_main(main, "python -m sim.plan")
