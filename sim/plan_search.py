"""The study planner's search: the cheapest design that reaches the power, checked by
simulation.

Costs (any unit, the same for all three): ``seed`` per trained seed and arm, ``question`` per
(seed, question) scored, ``repeat`` per scored answer; a design costs ``2 k (seed + n
(question + r repeat))`` for methods (both arms trained and scored) and ``2 n (question + r
repeat)`` for models. The search runs over every integer k <= --k-max and r <= --r-max and
finds, for each, the smallest n <= --n-max reaching the power (bisection; the power grows with
n), then ranks by cost; with --budget it takes the largest n the budget buys and solves for
the smallest detectable effect instead. The best designs and the chosen one's neighbours (k +-
1, n x/ 1.25, r +- 1) are then simulated with the test ``evaluate`` prints for the estimand
(a new draw of seeds and questions for every experiment, at the estimand's effect) and shown
with 95% Wilson intervals.

``models_clustered`` (``--cluster-size m --sd-cluster``) is solved as the ``methods`` problem
with clusters for seeds (:func:`clustered_as_methods`). What differs by design (the search
axes, the cost and its inverse, the validation rules, the problem a design is solved as) is
asked of its :mod:`sim.plan_designs` object.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

import protocols
from evalcal_core.validate import check_alpha, check_choice, check_int, check_number, fail

from . import plan_designs
from .grid import cell_seed
from .plan_components import components_from_generator
from .plan_model import (
    ESTIMAND_TESTS,
    QUESTIONS,
    Components,
    Costs,
    cost,
    mean_delta_variance,
    power,
    simulate_power,
)

#: the kinds of study planned, the ``--design`` choices (:mod:`sim.plan_designs`)
DESIGNS = plan_designs.DESIGNS
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


def _min_n(comp, design, k, r, effect, target, alpha, n_lo, n_hi, estimand=QUESTIONS):
    """Smallest integer n in [n_lo, n_hi] with power >= target, per (k, r) (vectorized
    bisection); 0 where even n_hi falls short."""
    k = np.asarray(k, dtype=float)
    r = np.asarray(r, dtype=float)
    ok_hi = power(comp, design, k, n_hi, r, effect, alpha, estimand) >= target
    ok_lo = power(comp, design, k, n_lo, r, effect, alpha, estimand) >= target
    lo = np.full(k.shape, float(n_lo))   # power(lo) < target (unless ok_lo)
    hi = np.full(k.shape, float(n_hi))   # power(hi) >= target
    while np.any(hi - lo > 1):
        mid = np.floor((lo + hi) / 2)
        ok = power(comp, design, k, mid, r, effect, alpha, estimand) >= target
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return np.where(ok_lo, n_lo, np.where(ok_hi, hi, 0)).astype(int)


def _mde(comp, design, k, n, r, target, alpha, estimand=QUESTIONS):
    """Smallest effect (fraction) with power >= target at each design (vectorized bisection
    on log effect); inf where even 100 pp falls short."""
    # Bracket around the normal approximation (z_{1-alpha/2} + z_power) SD, widened to
    # [1e-7, 1] where it does not hold; then bisection to a relative 1e-6.
    guess = (stats.norm.isf(alpha / 2) + stats.norm.ppf(target)) * np.sqrt(
        mean_delta_variance(comp, design, k, n, r, estimand))
    lo = np.log(np.clip(guess / 8, 1e-7, 1.0))
    hi = np.log(np.clip(guess * 8, 1e-7, 1.0))
    low_ok = power(comp, design, k, n, r, np.exp(lo), alpha, estimand) >= target
    high_ok = power(comp, design, k, n, r, np.exp(hi), alpha, estimand) >= target
    lo = np.where(low_ok, math.log(1e-7), lo)
    hi = np.where(high_ok, hi, 0.0)
    reach = power(comp, design, k, n, r, 1.0, alpha, estimand) >= target
    for _ in range(int(np.ceil(np.log2(np.max(hi - lo) / 1e-6)))):
        mid = (lo + hi) / 2
        ok = power(comp, design, k, n, r, np.exp(mid), alpha, estimand) >= target
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return np.where(reach, np.exp(hi), np.inf)


def search(comp: Components, costs: Costs, *, design=plan_designs.DEFAULT, power_target=0.8,
           effect=None, budget=None, alpha=0.05, k_max=50, n_max=10_000, r_max=10,
           k_min=2, n_min=2, estimand=QUESTIONS) -> pd.DataFrame:
    """Every (k, r) of the grid with its best n, ranked (see :class:`Plan`).

    With ``effect`` (fraction): the smallest n with closed-form power >= ``power_target``,
    ranked by cost (then fewer seeds, repeats). With ``budget``: the largest n within it,
    ranked by the smallest detectable effect (then cost). ``estimand`` (methods): whose
    effect and test (:data:`sim.plan_model.ESTIMAND_TESTS`).
    """
    spec = plan_designs.get(design)
    ks = np.arange(k_min, k_max + 1) if spec.seed_axis else np.array([1])
    rs = np.arange(1, r_max + 1)
    kk, rr = (a.ravel() for a in np.meshgrid(ks, rs, indexing="ij"))
    if budget is None:
        nn = _min_n(comp, design, kk, rr, effect, power_target, alpha, n_min, n_max,
                    estimand)
        keep = nn > 0
        kk, rr, nn = kk[keep], rr[keep], nn[keep]
        eff = np.full(kk.shape, float(effect))
    else:
        per_question = costs.question + rr * costs.repeat
        room = spec.room(budget, costs, kk)
        with np.errstate(divide="ignore", invalid="ignore"):
            nn = np.where(per_question > 0, np.floor(room / per_question + 1e-9), n_max)
        nn = np.minimum(nn, n_max)
        keep = nn >= n_min
        kk, rr, nn = kk[keep], rr[keep], nn[keep].astype(int)
        eff = (_mde(comp, design, kk, nn, rr, power_target, alpha, estimand) if kk.size
               else kk * 1.0)
    table = pd.DataFrame({
        "k": kk.astype(int), "n": nn.astype(int), "r": rr.astype(int),
        "cost": cost(costs, design, kk, nn, rr),
        "power": power(comp, design, kk, nn, rr, eff, alpha, estimand) if kk.size else [],
        "effect_pp": 100 * eff,
        "sd_pp": 100 * np.sqrt(mean_delta_variance(comp, design, kk, nn, rr, estimand)),
    })
    order = ["cost", "k", "r"] if budget is None else ["effect_pp", "cost", "k", "r"]
    table = table[np.isfinite(table.effect_pp)] if budget is not None else table
    return table.sort_values(order, kind="stable").reset_index(drop=True)


def neighbours(design, k, n, r, *, k_min, k_max, n_min, n_max, r_max):
    """The chosen design's neighbours (k +- 1, n x/ 1.25, r +- 1) inside the bounds."""
    out = []
    seed_axis = plan_designs.get(design).seed_axis
    steps = [(0, 1.0, 0), (0, N_STEP, 0), (0, 1 / N_STEP, 0), (0, 1.0, 1), (0, 1.0, -1)]
    if seed_axis:
        steps += [(1, 1.0, 0), (-1, 1.0, 0)]
    for dk, fn, dr in steps:
        kk, nn, rr = k + dk, int(round(n * fn)), r + dr
        if seed_axis and not k_min <= kk <= k_max:
            continue
        if n_min <= nn <= n_max and 1 <= rr <= r_max and (kk, nn, rr) not in out:
            out.append((kk, nn, rr))
    return out[1:]


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
                     "power": float(power(comp, config.design, k, n, r, effect, config.alpha,
                                          config.estimand)),
                     "effect_pp": 100 * effect,
                     "sd_pp": float(100 * np.sqrt(mean_delta_variance(
                         comp, config.design, k, n, r, config.estimand))),
                     "role": "neighbour"})
    for row in rows:
        sims = check_sims(config.sims, config.design, row["k"], row["n"])
        if sims == 0:
            row.update(sims=0, sim_power=math.nan, sim_low=math.nan, sim_high=math.nan)
            continue
        seq = cell_seed(config.seed, "plan", config.design, config.estimand, row["k"],
                        row["n"], row["r"], round(100 * effect, 9))
        sim = simulate_power(model, config.design, row["k"], row["n"], row["r"], effect,
                             estimand=config.estimand, sims=sims, alpha=config.alpha, rng=seq)
        row.update(sims=sim.sims, sim_power=sim.power, sim_low=sim.low, sim_high=sim.high)
    return pd.DataFrame(rows)


def check_sims(sims: int, design: str, k: int, n: int) -> int:
    """Sims of one checked design: ``sims``, reduced so that sims x cells stays within
    :data:`SIM_CELLS_LIMIT`; 0 (not simulated) below :data:`MIN_CHECK_SIMS`.

    Nothing else bounds the product: a design with n ~ 1e6 questions at 20,000 sims would
    draw 2e10 cells per design (minutes to hours, with no output).
    """
    cells = max(1, plan_designs.get(design).units(int(k), int(n)))
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
    design: str = plan_designs.DEFAULT
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
    #: the components are ``model``'s at the effect (``--param``): with
    #: ``budget`` they are recomputed at the detectable effect found, and the search re-run
    components_follow_effect: bool = False
    #: methods: ``questions`` (these n questions fixed; evaluate's primary ``paired_t``) or
    #: ``population`` (questions random; its ``paired_two_level`` row); ``None``: questions
    #: for methods, population (the only one) for the other designs
    estimand: str | None = None


def _plan_iv(config: PlanConfig) -> PlanConfig:
    """Validate every field once; messages name the command-line option."""
    check_choice(config.design, "--design", DESIGNS)
    spec = plan_designs.get(config.design)
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
    estimand = config.estimand or spec.estimands[0]
    check_choice(estimand, "--estimand", spec.estimands)
    config = dataclasses.replace(config, estimand=estimand)
    check_int(config.n_min, "--n-min", low=spec.n_min_low, high=N_LIMIT)
    if spec.registry_tested:
        # the estimand's test as evaluate runs it needs this many questions (paired_two_level:
        # 4) and seeds: the search starts there
        test = protocols.get(ESTIMAND_TESTS[estimand])
        config = dataclasses.replace(config, n_min=max(config.n_min, test.min_n),
                                     k_min=max(config.k_min, test.min_k))
    check_int(config.n_max, "--n-max", low=config.n_min, high=N_LIMIT)
    check_int(config.r_max, "--r-max", low=1, high=R_LIMIT)
    pairs = (config.k_max - config.k_min + 1 if spec.seed_axis else 1) * config.r_max
    if pairs > PAIRS_LIMIT:
        raise fail("--r-max", f"such that (--k-max - --k-min + 1) x --r-max <= {PAIRS_LIMIT} "
                   f"(the (k, r) pairs searched); got {pairs} pairs from --k-max "
                   f"{config.k_max}, --r-max", config.r_max)
    check_int(config.sims, "--sims", low=0, high=SIMS_LIMIT)
    check_int(config.show, "--show", low=1, high=100)
    check_int(config.seed, "--seed", low=0)
    spec.validate(config, N_LIMIT)
    c = config.components
    for name in ("sd_seed", "sd_question", "sd_inter", "sd_repeat", "sd_cluster"):
        check_number(getattr(c, name), "--" + name.replace("_", "-"), low=0.0, high=1.0)
    if sum(getattr(c, name) for name in spec.noise) == 0:
        raise fail("--" + spec.noise[0].replace("_", "-"),
                   "positive (with every other component 0 the test has no noise to estimate)", 0.0)
    for name in ("seed", "question", "repeat"):
        check_number(getattr(config.costs, name), "--cost " + name, low=0.0)
    costs = config.costs
    paid = spec.paid  # models and clusters pay no seed
    if all(getattr(costs, name) == 0 for name in paid):
        # every design would cost 0: the ranking by cost would pick one arbitrarily
        raise fail("--cost", f"positive for at least one of {', '.join(paid)} (all 0 "
                   f"makes every {config.design} design free and the choice arbitrary)",
                   "all 0")
    # the dearest design in the bounds (Python floats: an overflow is inf, not a warning)
    k_top = spec.largest_k(config)
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
    """``models_clustered`` as the ``methods`` problem it is: the configuration its design
    object searches (:meth:`sim.plan_designs.models_clustered.ModelsClusteredDesign.problem`,
    whose module states the mapping: clusters for seeds, ``sd_seed -> sd_cluster``,
    ``sd_inter -> sqrt(sd_question**2 + sd_inter**2)``, ``sd_question -> 0``, a seed cost
    of 0). The returned problem's design is ``clusters`` (a nested design: searched like
    ``methods``, tested by the t on the G cluster-mean deltas, not by
    :func:`two_level_test`); it is solved unvalidated, by :func:`run_plan`. Any other design
    is its own problem.
    """
    return plan_designs.get(config.design).problem(config)


def run_plan(config: PlanConfig) -> Plan:
    """Search the grid, choose, and (``config.sims > 0``) check by simulation: the problem
    the design is solved as (:func:`clustered_as_methods`), its plan read back in the
    design's terms."""
    config = _plan_iv(config)
    spec = plan_designs.get(config.design)
    return spec.plan_of(_solve(spec.problem(config)), config)


def _solve(config: PlanConfig) -> Plan:
    """:func:`run_plan` of a validated configuration (or of the ``clusters`` problem)."""
    comp = config.components
    table = search(comp, config.costs, design=config.design, power_target=config.power,
                   effect=config.effect, budget=config.budget, alpha=config.alpha,
                   k_min=config.k_min, k_max=config.k_max, n_min=config.n_min,
                   n_max=config.n_max, r_max=config.r_max, estimand=config.estimand)
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
                       n_max=config.n_max, r_max=config.r_max,
                       estimand=config.estimand)
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
    # the design's axes (methods: k x n at the chosen r; models: r x n; models_clustered:
    # r x the total questions G m), computed on the problem searched
    rows, columns, (k, n, rr) = plan_designs.get(plan.config.design).grid_axes(
        c, plan.config, r, ks, ns)
    p = power(c.components, c.design, k, n, rr, effect, c.alpha, c.estimand)
    return rows, columns, p, cost(c.costs, c.design, k, n, rr)
