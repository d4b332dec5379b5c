"""Where the planner's variance components come from: a ``seed_question`` setting (exact,
by quadrature) or a pilot's scores (two-way ANOVA method of moments).

One run per (seed, question) cannot split a pilot's residual into interaction and repeat
noise: all of it is taken as interaction (repeats never help; exact under greedy decoding,
whose repeats are identical); for 0/1 scores the note gives the ``--sd-repeat`` that the
``seed_question`` fit's split (sampled decoding) would mean; ``--sd-repeat`` overrides.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from evalcal_core.validate import InvalidParameterError

from . import plan_designs
from .generators.seed_question import mean_sigmoid, pair_sigmoid
from .plan_model import Components


def components_from_generator(gen, effect: float, design: str = plan_designs.DEFAULT
                              ) -> Components:
    """Exact components of a ``seed_question`` setting at true effect ``effect`` (fraction).

    By quadrature over the model's normals (independent of any simulation): the seed part is
    the variance over the seed effects ``(u_b, u_v)`` of ``E[D | u]``, the question part the
    variance over the difficulty ``b`` of ``E[D | b]``, the repeat part ``E[p_b (1 - p_b) +
    p_v (1 - p_v)]``, and the interaction what is left of ``Var(p_v - p_b)``. For a design
    of fixed models (``models``: :attr:`~sim.plan_designs.PlanDesign.seeds` false) the seeds
    are fixed (``sd_seed = 0``; the generator's seed spread is removed) and a question's
    interaction is part of its effect.
    """
    seeds = plan_designs.get(design).seeds
    if not seeds:
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
    if not seeds:
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
                          repeat_share: float | None = None,
                          sampled_share: float | None = None,
                          design: str = plan_designs.DEFAULT,
                          source: str = "pilot") -> Components:
    """Method-of-moments components from a pilot's ``(k, n)`` scores (one run per cell).

    ``sigma_a**2 = (MS_seed - MS_resid) / n``, ``sigma_c**2 = (MS_question - MS_resid) / k``,
    ``sigma_i**2 + sigma_r**2 = MS_resid``. One run per (seed, question) cannot split the
    residual into interaction and repeat noise: with ``sd_repeat`` (fraction) given, the
    interaction is the rest; else with ``repeat_share`` (a model's ``sigma_r**2 / (sigma_i**2
    + sigma_r**2)``, e.g. of ``seed_question`` fitted to the pilot) by that share; else the
    whole residual is taken as interaction (repeats then never help; the conservative
    reading, and the right one for greedy decoding: repeats of a deterministic decode are
    identical, so their variance is 0). A note says which; ``sampled_share`` (the fitted
    model's share, which assumes sampled decoding) is then stated in it with the
    ``--sd-repeat`` that would plan with it. For fixed models (``models``, ``models_clustered``: the
    design's :attr:`~sim.plan_designs.PlanDesign.seeds` false) the rows are repeats of the
    two fixed models, so the residual is the repeat noise and there is no seed part.
    Estimates below 0 are set to 0 with a note, and estimates above the largest sd a delta of
    the pilot's scores can have (their range: 1 for 0/1 scores) are clipped to it with a
    note: a few seeds can give a moment estimate no data could.
    """
    base = np.asarray(base, dtype=float)
    variant = np.asarray(variant, dtype=float)
    k, n = base.shape
    if k < 2 or n < 2:
        raise InvalidParameterError("--from-pilot needs at least 2 seeds and 2 questions; "
                                    f"{source} has {k} seeds and {n} questions")
    ms_s, ms_q, ms_e = anova_mean_squares(variant - base)
    notes = []
    seeds = plan_designs.get(design).seeds
    var_a = (ms_s - ms_e) / n if seeds else 0.0
    var_c = (ms_q - ms_e) / k
    checked = (("sd_seed", var_a), ("sd_question", var_c)) if seeds else (
        ("sd_question", var_c),)
    for name, value in checked:
        if value <= 0:
            notes.append(f"{name} estimate at the boundary 0 (moment estimate {value:.3g} "
                         f"fraction**2 <= 0): the pilot cannot tell it from 0; state --"
                         f"{name.replace('_', '-')} to plan for a positive one")
    if not seeds:
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
        note = ("one run per (seed, question): repeat noise and interaction cannot be told "
                "apart; the residual is taken as interaction (repeats do not help, as under "
                "greedy decoding, whose repeats are identical: repeat variance 0)")
        if sampled_share is not None and sampled_share > 0:
            # the model's Bernoulli noise is a fresh draw per repeat: sampled decoding only
            sd_sampled = 100 * math.sqrt(sampled_share * ms_e)
            note += (f"; under sampled decoding (temperature > 0) the fitted seed_question "
                     f"model reads {100 * sampled_share:.1f}% of it as repeat noise: state "
                     f"--sd-repeat {sd_sampled:.3g} to plan with that")
        else:
            note += "; state --sd-repeat to split it"
        notes.append(note)
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
