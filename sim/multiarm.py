"""Calibrate many-arm decisions and claim gates by simulation.

For ``m`` arms and two families of comparisons (``many_to_one``: every arm against arm 0;
``all_pairs``) this estimates, for the corrections none / bonferroni / holm / maxt:

* ``fwer`` — the family-wise error rate: the share of experiments that reject at least
  one true null (under the global null every comparison is a true null; under the
  alternative, for ``all_pairs``, the comparisons among the improved arms);
* ``any_power`` / ``all_power`` — the share that reject at least one / every false null
  under the alternative: every arm but arm 0 is better by the same ``effect``.

And the claim gates of :mod:`protocols.claims` on two arms: the share of experiments in
which non-inferiority / equivalence is *shown* when the true difference lies exactly at
the margin (must be <= alpha) and when there is no difference (the gate's power).

Two generators (the numbers in metric units are stated in :class:`MultiarmConfig`):

``paired_seed``
    ``k`` seeds; per-seed metric of arm ``a`` at seed ``s``:
    ``mu_a + sqrt(rho) Z_s + sqrt(1 - rho) W_as`` with standard normal ``Z``, ``W`` (arms
    correlated ``rho`` within a seed; a per-seed delta has sd ``sqrt(2 (1 - rho))``).
    Tests: paired t per comparison; max-T by the exact joint sign flip of
    :func:`protocols.joint_null.paired_signflip_null` (sampled beyond 16 seeds).
``fixed_model``
    One run per arm on ``n`` questions with shared difficulty ``u_q ~ N(0, 1)``; score
    ``Bernoulli(logistic(1 + b_a + u_q))`` (baseline accuracy about 0.70). Tests: z on
    per-question deltas; max-T by :func:`protocols.joint_null.gaussian_null`.

Each rate that must be <= alpha -- ``fwer`` (under the null and, for ``all_pairs``, the
alternative's true nulls) for every correction, and the gates' ``shown`` at a true
difference on the margin (``delta=-margin``; for equivalence also ``delta=+margin``) -- gets
a ``state`` from the project's one validity rule (:mod:`sim.validity`): **valid** when its
one-sided Clopper-Pearson bound (95%, Bonferroni over the rule's looks) is <= ``alpha +
alpha / 5``, **invalid** when the exact binomial test of ``rate <= alpha`` is rejected by
Holm at family-wise 0.001 over all those rows of the run (Bonferroni over the looks),
else another look: the cell's experiments are doubled (``sims``, then 2, 4, 8 and 16 times
it, up to ``--max-sims``) for the corrections that control the error rate and for the
gates, until every such rate is decided; at the cap it is **undecided**. The uncorrected
``none`` asks for no more looks (it is there to show the error growing with m); its rows
pool the looks its cell takes for the others, as every row of a cell does. Powers and
the gates at ``delta=0`` are ``reported``; a row's counts are over every look its cell
took (``looks``).

A decision rejects where the adjusted p <= alpha; a claim is shown where its p < alpha.
Everything is vectorized over the experiments of a block (:data:`BLOCK` of them); the
data of block ``b`` of look ``j`` come from a child of the cell's ``SeedSequence`` named by
its names (:func:`sim.grid.cell_seed`), ``j`` (after the first look) and ``b``, so results
depend only on ``--seed`` and the cell, and every correction sees the same data (common
random numbers).

Command line: ``python -m sim.multiarm --m 2 5 10 --k 10 --sims 2000 --seed 0 --out DIR``
writes ``DIR/multiarm.csv`` and prints the table with Wilson 95% intervals and the states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy import optimize, special, stats

from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import (
    ALPHA_FLOOR,
    add_options,
    alpha_option,
    config_from_args,
    declared,
    max_sims_option,
    option,
    out_option,
    seed_option,
    sims_option,
)
from evalcal_core.outdir import run_outputs
from evalcal_core.validate import (
    check_alpha,
    check_choice,
    check_int,
    check_number,
    fail,
)
from protocols import claims, multiplicity
from protocols import joint_null as jn

from .grid import cell_seed, wilson
from .outputs import write_csv
from .validity import (
    INVALID,
    PENDING,
    UNDECIDED,
    VALID,
    ValidityRule,
    default_max_sims,
    fold,
    to_extend,
)
from .validity import judge as judge_validity

GENERATORS = ("paired_seed", "fixed_model")
FAMILIES = ("many_to_one", "all_pairs")
DECISIONS = ("none", "bonferroni", "holm", "maxt")
GATES = ("non_inferiority", "equivalence")

#: experiments drawn per block (fixed, so results do not depend on memory settings)
BLOCK = 250
#: elements of the largest joint-null array built at once (~16 MB of float64)
NULL_ELEMENTS = 2**21
#: logit of the fixed-model baseline accuracy at average difficulty
FIXED_INTERCEPT = 1.0
#: sd of the fixed model's question difficulty (logit scale)
FIXED_DIFFICULTY_SD = 1.0
#: Gauss-Hermite nodes for the fixed model's expected accuracy
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(80)


@dataclass(frozen=True)
class MultiarmConfig:
    """What to simulate.

    Attributes
    ----------
    m : tuple of int
        Arm counts (>= 2), the baseline included.
    k : int
        Seeds per arm (``paired_seed``).
    n : int
        Questions (``fixed_model``).
    sims : int
        Experiments per cell (the validity rule's first look).
    max_sims : int or None
        Cap of the validity rule's sequential stop (default 16 times ``sims``).
    seed : int
        Root seed.
    alpha : float
        Level (FWER target; one-sided level of each claim test).
    rho : float
        Within-seed correlation of the arms (``paired_seed``).
    effect : float
        ``paired_seed`` alternative: improvement of every arm but arm 0, in sds of a
        per-seed delta.
    effect_logit : float
        ``fixed_model`` alternative: logit shift of every arm but arm 0.
    margin : float
        ``paired_seed`` gates: margin in sds of a per-seed delta.
    question_margin : float
        ``fixed_model`` gates: margin in accuracy (fraction).
    n_draws : int
        Joint-null draws of the fixed model's max-T (Monte Carlo).
    n_flips : int
        Random sign patterns when ``k > 16``.
    generators, families, methods : tuple of str
    gates : bool
        Whether to simulate the claim gates.
    """

    m: tuple = option("--m", (2, 5, 10), nargs="+", kind=int, metavar="M",
                      help="arm counts, baseline included (default 2 5 10)")
    k: int = option("--k", 10, kind=int, help="seeds per arm (paired_seed; 10)")
    n: int = option("--n", 1000, kind=int, help="questions (fixed_model; 1000)")
    sims: int = sims_option(2000, constraint=None)
    max_sims: int | None = max_sims_option(constraint=None)
    seed: int = seed_option(constraint=None)
    alpha: float = alpha_option(help="level (0.05)", constraint=ALPHA_FLOOR)
    rho: float = option("--rho", 0.5, kind=float,
                        help="within-seed correlation of the arms (0.5)")
    effect: float = option("--effect", 1.0, kind=float,
                           help="paired_seed alternative, in sds of a per-seed delta (1.0)")
    effect_logit: float = option("--effect-logit", 0.3, kind=float,
                                 help="fixed_model alternative, logit shift (0.3)")
    margin: float = option("--margin", 1.0, kind=float,
                           help="paired_seed gate margin, in sds of a per-seed delta (1.0)")
    question_margin: float = option("--question-margin", 0.04, kind=float,
                                    help="fixed_model gate margin, accuracy as a fraction "
                                         "(0.04)")
    n_draws: int = option("--draws", 1000, kind=int,
                          help="joint-null draws of the fixed model's max-T (1000)")
    n_flips: int = 2000
    generators: tuple = option("--generators", GENERATORS, nargs="+",
                               help="paired_seed and/or fixed_model (both)")
    families: tuple = FAMILIES
    methods: tuple = DECISIONS
    gates: bool = True


def _config_iv(config: MultiarmConfig, opt: bool = False) -> MultiarmConfig:
    """``config`` with every field checked (names as command-line options if ``opt``)."""
    flags = {f.name: o.flag for f, o in declared(MultiarmConfig)}

    def name(field):
        return flags.get(field, "--" + field.replace("_", "-")) if opt else field

    m = tuple(check_int(v, name("m"), low=2, high=20) for v in config.m)
    if not m:
        raise fail(name("m"), "at least one arm count", [])
    for g in config.generators:
        check_choice(g, name("generators"), GENERATORS)
    for f in config.families:
        check_choice(f, name("families"), FAMILIES)
    for d in config.methods:
        check_choice(d, name("methods"), DECISIONS)
    alpha = check_alpha(config.alpha, name("alpha"))
    sims = check_int(config.sims, name("sims"), low=1, high=1_000_000)
    max_sims = (default_max_sims(sims) if config.max_sims is None
                else check_int(config.max_sims, name("max_sims"), low=sims, high=16_000_000))
    return replace(
        config, m=m, alpha=alpha, sims=sims, max_sims=max_sims,
        k=check_int(config.k, name("k"), low=2, high=1000),
        n=check_int(config.n, name("n"), low=10, high=100_000),
        seed=check_int(config.seed, name("seed"), low=0),
        rho=check_number(config.rho, name("rho"), low=0.0, high=1.0, high_open=True),
        effect=check_number(config.effect, name("effect"), low=0.0, high=20.0),
        effect_logit=check_number(config.effect_logit, name("effect_logit"), low=0.0,
                                  high=5.0),
        margin=check_number(config.margin, name("margin"), low=0.0, high=20.0,
                            low_open=True),
        question_margin=check_number(config.question_margin, name("question_margin"),
                                     low=0.0, high=0.3, low_open=True),
        n_draws=check_int(config.n_draws, name("n_draws"), low=100, high=100_000),
        n_flips=check_int(config.n_flips, name("n_flips"), low=100, high=100_000))


# --------------------------------------------------------------------------------------------
# Generators


def draw_paired_seed(rng, sims, m, k, rho, mu):
    """Per-seed metrics, shape (sims, m, k); ``mu`` (m,) arm means (units: sd 1 per arm)."""
    z = rng.standard_normal((sims, 1, k))
    w = rng.standard_normal((sims, m, k))
    return np.asarray(mu)[:, None] + math.sqrt(rho) * z + math.sqrt(1.0 - rho) * w


def draw_fixed_model(rng, sims, m, n, shift):
    """0/1 scores, shape (sims, m, n); ``shift`` (m,) logit shifts of the arms."""
    u = rng.standard_normal((sims, 1, n)) * FIXED_DIFFICULTY_SD
    p = special.expit(FIXED_INTERCEPT + np.asarray(shift)[:, None] + u)
    return (rng.random((sims, m, n)) < p).astype(np.float64)


def fixed_accuracy(shift: float) -> float:
    """Expected accuracy (fraction) of a fixed-model arm with logit ``shift``."""
    u = _GH_X * FIXED_DIFFICULTY_SD
    return float(special.expit(FIXED_INTERCEPT + shift + u) @ _GH_W / math.sqrt(2 * math.pi))


def fixed_shift_for_difference(delta: float) -> float:
    """Logit shift whose expected accuracy differs from the baseline's by ``delta``."""
    base = fixed_accuracy(0.0)
    return float(optimize.brentq(lambda s: fixed_accuracy(s) - base - delta, -10.0, 10.0,
                                 xtol=1e-14))


# --------------------------------------------------------------------------------------------
# Decisions on one block


def _comparisons(family, m):
    return multiplicity.many_to_one(m) if family == "many_to_one" else multiplicity.all_pairs(m)


def _raw_p(generator, x, comps):
    d = multiplicity.pair_deltas(x, comps)
    units = d.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = d.mean(axis=-1) / (d.std(axis=-1, ddof=1) / math.sqrt(units))
    if generator == "paired_seed":
        return 2.0 * stats.t.sf(np.abs(t), units - 1)
    return 2.0 * special.ndtr(-np.abs(t))


def _maxt_p(generator, x, comps, config, stream):
    """Step-down max-T p-values of a block, in sub-blocks that bound the joint null's size.

    Every sub-block re-creates its generator from the same ``SeedSequence``: all
    experiments of the cell share one set of sign patterns or normal draws, whatever the
    sub-block size.
    """
    n_c = len(comps)
    if generator == "paired_seed":
        n_null = 2 ** (config.k - 1) if config.k <= 16 else config.n_flips
    else:
        n_null = config.n_draws
    step = max(1, NULL_ELEMENTS // (n_null * n_c))
    out = np.empty(x.shape[:1] + (n_c,))
    for start in range(0, x.shape[0], step):
        sl = slice(start, start + step)
        rng = np.random.default_rng(stream)
        if generator == "paired_seed":
            joint = jn.paired_signflip_null(multiplicity.pair_deltas(x[sl], comps),
                                                      config.n_flips, rng=rng)
        else:
            joint = jn.gaussian_null(x[sl], comps, config.n_draws, rng=rng)
        out[sl] = multiplicity.maxt_adjust(joint)
    return out


def _arm_means(generator, m, scenario, config):
    improved = np.r_[0.0, np.ones(m - 1)] if scenario == "alternative" else np.zeros(m)
    if generator == "paired_seed":
        return improved * config.effect * math.sqrt(2.0 * (1.0 - config.rho))
    return improved * config.effect_logit


def _units(generator, config):
    return config.k if generator == "paired_seed" else config.n


def _draw(generator, rng, sims, m, config, arm_means):
    if generator == "paired_seed":
        return draw_paired_seed(rng, sims, m, config.k, config.rho, arm_means)
    return draw_fixed_model(rng, sims, m, config.n, arm_means)


def _blocks(sims):
    for b, start in enumerate(range(0, sims, BLOCK)):
        yield b, min(BLOCK, sims - start)


def _block_names(look, b):
    # the first look's blocks keep their names: a run with more looks repeats its numbers
    return (b,) if look == 0 else (look, b)


def family_cell(generator, m, scenario, config, sims=None, look=0):
    """Counts of one (generator, m, scenario) cell for every family and method.

    ``sims`` experiments (default ``config.sims``) of look ``look`` (its own streams).

    Returns
    -------
    dict
        ``(family, method, metric) -> count`` over the ``sims`` experiments.
    """
    units = _units(generator, config)
    arm_means = _arm_means(generator, m, scenario, config)
    data_seed = cell_seed(config.seed, "multiarm", "data", generator, m, units, scenario,
                          config.rho if generator == "paired_seed" else FIXED_INTERCEPT,
                          float(arm_means[-1]))
    counts = {}
    for b, size in _blocks(config.sims if sims is None else sims):
        rng = np.random.default_rng(np.random.SeedSequence(
            data_seed.entropy, spawn_key=data_seed.spawn_key + _block_names(look, b)))
        x = _draw(generator, rng, size, m, config, arm_means)
        for family in config.families:
            comps = _comparisons(family, m)
            false_null = np.array([arm_means[i] != arm_means[j] for i, j in comps])
            raw = _raw_p(generator, x, comps)
            for method in config.methods:
                if method == "maxt":
                    stream = cell_seed(config.seed, "multiarm", "maxt", generator, family, m,
                                       units, scenario, *_block_names(look, b))
                    p = _maxt_p(generator, x, comps, config, stream)
                else:
                    p = multiplicity.adjust(raw, method)
                reject = p <= config.alpha
                tally = {"fwer": (reject & ~false_null).any(axis=-1)}
                if false_null.any():
                    tally["any_power"] = (reject & false_null).any(axis=-1)
                    tally["all_power"] = (reject | ~false_null).all(axis=-1)
                if not (~false_null).any():
                    del tally["fwer"]
                for metric, hit in tally.items():
                    key = (family, method, metric)
                    counts[key] = counts.get(key, 0) + int(hit.sum())
    return counts


def gate_cell(generator, claim, truth, config, sims=None, look=0):
    """Experiments (of ``sims``, default ``config.sims``, of look ``look``) in which
    ``claim`` is shown at true difference ``truth * margin`` (``truth`` in {-1, 0, 1})."""
    units = _units(generator, config)
    if generator == "paired_seed":
        sd = math.sqrt(2.0 * (1.0 - config.rho))
        margin = config.margin * sd
        arm_means = np.array([0.0, truth * margin])
    else:
        margin = config.question_margin
        arm_means = np.array([0.0, fixed_shift_for_difference(truth * margin)])
    data_seed = cell_seed(config.seed, "multiarm", "gate", generator, claim, truth, units,
                          config.rho if generator == "paired_seed" else FIXED_INTERCEPT,
                          margin)
    shown = 0
    for b, size in _blocks(config.sims if sims is None else sims):
        rng = np.random.default_rng(np.random.SeedSequence(
            data_seed.entropy, spawn_key=data_seed.spawn_key + _block_names(look, b)))
        x = _draw(generator, rng, size, 2, config, arm_means)
        d = x[:, 1] - x[:, 0]
        if generator == "paired_seed":
            res = claims.paired_claim(d, claim, margin, config.alpha)
        else:
            res = claims.question_claim(d, claim, margin, config.alpha)
        shown += int(res.shown.sum())
    return shown


# --------------------------------------------------------------------------------------------
# The run


COLUMNS = ("kind", "generator", "family", "m", "units", "scenario", "method", "metric",
           "count", "sims", "looks", "rate", "low", "high", "upper", "state")
#: the state of a rate that need not be <= alpha (a power, a gate at no difference)
REPORTED = "reported"
#: one-letter marks of the states in :func:`format_table`
MARKS = {VALID: "v", INVALID: "X", UNDECIDED: "?", REPORTED: " "}
#: the correction whose error rate is shown, not controlled: no more looks for it
UNCORRECTED = "none"


def must_hold(table) -> np.ndarray:
    """Rows whose rate must be <= alpha: every ``fwer``, and a gate's ``shown`` at a true
    difference on the margin."""
    gate_at_margin = (table["kind"] == "gate") & (table["scenario"] != "delta=0")
    return ((table["metric"] == "fwer") | gate_at_margin).to_numpy()


def _judged(table, rule):
    """The rule's verdicts on the rows of :func:`must_hold` (Holm over them), their counts
    over every look taken (``rejections``, ``sims``, the ``fpr_`` columns of
    :func:`sim.validity.fold`)."""
    held = table[must_hold(table)].rename(columns={"count": "rejections", "method": "protocol"})
    return judge_validity(held, rule)


def _settle(table, config, cells):
    """The validity rule's sequential stop over ``table``: the cells of rows still pending
    get their next look (all the cell's rows pooled, powers included) until none is.

    ``cells`` maps a row's cell key (:func:`_cell_key`) to ``look(sims, j) -> {row key:
    count}``. Returns ``table`` with the ``fpr_`` columns of the looks added."""
    rule = ValidityRule.make(config.alpha, config.sims, max_sims=config.max_sims)
    table = table.assign(fpr_sims=np.nan, fpr_rejections=np.nan, fpr_looks=np.nan,
                         fpr_p_min=np.nan)
    keys = [_cell_key(r) for r in table.itertuples()]
    while True:
        judged = _judged(table, rule)
        grow = to_extend(judged, rule, lambda method: method != UNCORRECTED)
        todo = sorted({keys[i] for i in judged.index[grow]})
        if not todo:
            return table
        for key in todo:
            rows = [i for i, k in enumerate(keys) if k == key]
            first = table.loc[rows[0]]
            # before its first extra look a row has no fpr_ counts yet (NaN)
            done = int(first["sims"] if math.isnan(first["fpr_sims"]) else first["fpr_sims"])
            look = 1 if math.isnan(first["fpr_looks"]) else int(first["fpr_looks"])
            chunk = rule.next_sims(done)
            counts = cells[key](chunk, look)
            for i in rows:
                row = table.loc[i].rename({"count": "rejections"})
                added = {"sims": chunk, "rejections": counts[_row_key(table.loc[i])]}
                for name, value in fold(row, added, rule).items():
                    table.loc[i, name] = value


def _cell_key(row) -> tuple:
    if row.kind == "gate":
        return ("gate", row.generator, row.method, row.scenario)
    return ("family", row.generator, int(row.m), row.scenario)


def _row_key(row) -> tuple:
    return (row["family"], row["method"], row["metric"])


def states(table, config):
    """``upper`` and ``state`` of every row of ``table`` (``count``, ``sims`` over every
    look) by the validity rule (:func:`sim.validity.judge`; Holm over the rows of
    :func:`must_hold`); other rows: NaN and "reported"."""
    held = must_hold(table)
    upper = np.full(len(table), np.nan)
    state = np.full(len(table), REPORTED, dtype=object)
    if held.any():
        rule = ValidityRule.make(config.alpha, config.sims, max_sims=config.max_sims)
        judged = _judged(table, rule)
        upper[held] = judged["fpr_upper"].to_numpy()
        state[held] = judged["state"].replace(PENDING, UNDECIDED).to_numpy()
    return upper, state


_TRUTH = {-1: "delta=-margin", 0: "delta=0", 1: "delta=+margin"}


def run_multiarm(config: MultiarmConfig | None = None):
    """Simulate every cell of ``config``, with the validity rule's sequential stop.

    Returns
    -------
    pandas.DataFrame
        One row per (cell, method, metric) with columns :data:`COLUMNS`: ``kind``
        ("family" or "gate"), ``units`` (k seeds or n questions), ``scenario`` ("null",
        "alternative"; gates: "delta=-margin", "delta=0", "delta=+margin"), ``method`` (a
        correction, or the claim for a gate), ``count`` and ``sims`` over every look of
        the cell, ``looks`` (how many), ``rate`` and its Wilson 95% interval
        ``low``-``high``, ``upper`` (the validity rule's one-sided bound) and ``state``
        (valid, invalid, undecided or reported: :func:`states`). Rates are fractions.
    """
    import pandas as pd

    config = _config_iv(config or MultiarmConfig())
    rows, cells = [], {}

    def add(kind, generator, family, m, scenario, method, metric, count):
        rows.append((kind, generator, family, m, _units(generator, config), scenario, method,
                     metric, count, config.sims))

    def family_look(generator, m, scenario):
        return lambda sims, look: family_cell(generator, m, scenario, config, sims, look)

    def gate_look(generator, claim, truth):
        return lambda sims, look: {("two_arms", claim, "shown"): gate_cell(
            generator, claim, truth, config, sims, look)}

    for generator in config.generators:
        for m in config.m:
            for scenario in ("null", "alternative"):
                counts = family_cell(generator, m, scenario, config)
                cells[("family", generator, m, scenario)] = family_look(generator, m,
                                                                        scenario)
                for family in config.families:
                    for method in config.methods:
                        for metric in ("fwer", "any_power", "all_power"):
                            if (family, method, metric) in counts:
                                add("family", generator, family, m, scenario, method, metric,
                                    counts[(family, method, metric)])
        if config.gates:
            for claim in GATES:
                truths = (-1, 0) if claim == "non_inferiority" else (-1, 0, 1)
                for truth in truths:
                    cells[("gate", generator, claim, _TRUTH[truth])] = gate_look(
                        generator, claim, truth)
                    add("gate", generator, "two_arms", 2, _TRUTH[truth], claim, "shown",
                        gate_cell(generator, claim, truth, config))
    table = pd.DataFrame(rows, columns=list(COLUMNS[:10]))
    table = _settle(table, config, cells)
    more = table["fpr_sims"].notna()
    count = table["fpr_rejections"].where(more, table["count"]).astype(int)
    sims = table["fpr_sims"].where(more, table["sims"]).astype(int)
    bounds = [wilson(int(c), int(n)) for c, n in zip(count, sims)]
    table = table.assign(count=count, sims=sims,
                         looks=table["fpr_looks"].where(more, 1).astype(int),
                         rate=count / sims, low=[b[0] for b in bounds],
                         high=[b[1] for b in bounds])
    upper, state = states(table.drop(columns=["fpr_sims", "fpr_rejections"]), config)
    return table.assign(upper=upper, state=state)[list(COLUMNS)]


def format_table(table) -> str:
    """The table as text: rates in percent with Wilson 95% intervals, methods side by side,
    each rate that must be <= alpha marked with its state (:data:`MARKS`)."""
    lines = []

    def rate(r):
        return (f"{100 * r.rate:5.1f} [{100 * r.low:4.1f},{100 * r.high:5.1f}] "
                f"{MARKS[r.state]}")

    fam = table[table.kind == "family"]
    if len(fam):
        methods = [mt for mt in DECISIONS if mt in set(fam.method)]
        head = f"{'generator':<12} {'family':<12} {'m':>3} {'scenario':<12} {'metric':<10}"
        lines.append(head + "".join(f" {mt:>22}" for mt in methods))
        keys = ["generator", "family", "m", "scenario", "metric"]
        for key, grp in fam.groupby(keys, sort=False):
            cells = {r.method: rate(r) for r in grp.itertuples()}
            lines.append((f"{key[0]:<12} {key[1]:<12} {key[2]:>3} {key[3]:<12} {key[4]:<10}"
                          + "".join(f" {cells.get(mt, ''):>22}" for mt in methods)).rstrip())
    gates = table[table.kind == "gate"]
    if len(gates):
        lines.append("")
        lines.append(f"{'generator':<12} {'claim':<16} {'truth':<14} {'shown %':>24}")
        for r in gates.itertuples():
            lines.append(f"{r.generator:<12} {r.method:<16} {r.scenario:<14} "
                         f"{rate(r):>24}".rstrip())
    held = table[table.state != REPORTED]
    if len(held):
        counts = held.state.value_counts()
        lines.append("")
        lines.append(
            f"state of the {len(held)} rates that must be <= alpha (validity rule: "
            f"one-sided Clopper-Pearson 95% bound <= alpha + alpha/5 is valid 'v'; exact "
            f"binomial test of rate <= alpha rejected by Holm at 0.001 over these rates is "
            f"invalid 'X'; a corrected rate or gate neither is gets more simulations, up to "
            f"--max-sims, and is undecided '?' there): "
            + ", ".join(f"{counts.get(s, 0)} {s}" for s in (VALID, INVALID, UNDECIDED)))
    return "\n".join(lines)


@dataclass(frozen=True)
class Output:
    """Where ``python -m sim.multiarm`` writes (an option that changes no number)."""

    out: Path | None = out_option(None, help="folder for multiarm.csv (default: print only)")


def build_parser() -> ArgumentParser:
    """The options of :class:`MultiarmConfig` and :class:`Output`, as declared there."""
    p = add_options(ArgumentParser(
        prog="python -m sim.multiarm",
        description="Family-wise error rate and power of none / bonferroni / holm / maxt "
                    "for m arms (many-to-one and all pairs), and the size and power of the "
                    "non-inferiority and equivalence gates, by simulation. See the module "
                    "docstring for the generators."), MultiarmConfig)
    return add_options(p, Output)


def main(argv=None) -> int:
    """Command line: print the table, write ``OUT/multiarm.csv`` with ``--out``."""
    args = build_parser().parse_args(argv)
    config = _config_iv(config_from_args(MultiarmConfig, args), opt=True)
    if args.out is None:
        table = run_multiarm(config)
    else:
        # locked and marked incomplete from before the simulation until the CSV is written
        with run_outputs(args.out, "python -m sim.multiarm") as outputs:
            table = run_multiarm(config)
            path = outputs.path / "multiarm.csv"
            write_csv(table, path)
    extended = int((table["looks"] > 1).sum())
    print(f"{config.sims} experiments per cell ({extended} rates of cells that took more "
          f"looks, up to {int(table['sims'].max())}), alpha {config.alpha:g}; rates in % "
          "with Wilson 95% intervals (descriptive; the states come from the validity rule)")
    print(format_table(table))
    if args.out is not None:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    run_main(main, "python -m sim.multiarm")
