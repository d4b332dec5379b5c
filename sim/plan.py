"""Study planner: the cheapest seeds x questions x repeats that detect an effect.

"With a seed costing 4 GPU-hours and a scored answer 0.0005, how many seeds, questions and
repeats do I need to see +1 pp with 80% power?" This module is the command (``python -m
sim.plan``, ``evalcal plan``): its options, and the plan in words and CSV tables. The model
(variance components, each design's test and its closed-form power, the simulation) is
:mod:`sim.plan_model`; components from a pilot or a generator :mod:`sim.plan_components`; the
search over designs :mod:`sim.plan_search`.

Components come from ``--sd-seed/--sd-question/--sd-inter/--sd-repeat`` (pp; simulated as
normal), from a pilot (``--from-pilot FILE``, or its logs as ``--arm NAME=PATH`` per arm:
two-way ANOVA mean squares of the pilot's deltas, the ones ``paired_two_level`` uses;
simulated through ``seed_question`` fitted to the pilot), or from a ``seed_question``
setting (``--param theta=2 sd_seed=0.1 ...``; exact components by quadrature at the
effect). One run per (seed, question) cannot split the
pilot's residual into interaction and repeat noise: all of it is interaction (repeats never
help; exact under greedy decoding, whose repeats are identical), and for 0/1 scores a note
gives the ``--sd-repeat`` of the ``seed_question`` fit's split (sampled decoding);
``--sd-repeat`` overrides. ``models_clustered`` (``--cluster-size m --sd-cluster``) is
solved as the ``methods`` problem with clusters for seeds
(:func:`sim.plan_search.clustered_as_methods`). What is printed per design (its test, cost
formula, estimand lines, default costs) is its :mod:`sim.plan_designs` object's. The figure:
``python -m reports.plan_figure`` with the same options and ``--figure FILE``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.log_options import (
    check_log_options,
    filter_option,
    log_format_option,
    log_read,
    metric_option,
    task_option,
)
from evalcal_core.options import (
    add_options,
    alpha_option,
    check_options,
    option,
    seed_option,
    sims_option,
)
from evalcal_core.options import config_from_args as options_from_args
from evalcal_core.outdir import check_complete, run_outputs
from evalcal_core.validate import (
    Interval,
    InvalidParameterError,
    Optional,
    Options,
    check_choice,
    check_number,
    fail,
)

from . import generators, plan_designs
from .outputs import write_csv
from .plan_components import components_from_generator, components_from_pilot
from .plan_model import (
    ESTIMAND_TESTS,
    ESTIMANDS,
    Components,
    Costs,
    icc,
)
from .plan_search import (
    DESIGNS,
    MIN_CHECK_SIMS,
    SIM_CELLS_LIMIT,
    Plan,
    PlanConfig,
    run_plan,
)


def estimand_line(design: str, estimand: str) -> str:
    """The ``estimand:`` line of the planner's output: what is estimated, the test the plan's
    power is for and where ``evaluate`` prints that test (the design's words; CSV columns
    ``estimand`` and ``test`` hold the name and the test)."""
    return f"estimand: {estimand}: {plan_designs.get(design).estimand_words[estimand]}"


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


def _sd_option(flag: str, what: str):
    return option(flag, None, kind=float, help=f"{what}, pp", group="variance components",
                  constraint=Optional(Interval("real", 0.0, 100.0)))


def _design_help() -> str:
    # each choice with what it compares, from the designs' objects
    parts = [f"{d.name} ({d.summary})" for d in plan_designs.designs_all() if d.choosable]
    return f"{', '.join(parts[:-1])} or {parts[-1]}; default {plan_designs.DEFAULT}"


def _clustered_names() -> str:
    return " or ".join(d.name for d in plan_designs.designs_all()
                       if d.choosable and d.clustered)


@dataclasses.dataclass(frozen=True)
class PlanOptions:
    """What ``python -m sim.plan`` was asked, option by option (declared once: the parser,
    the checks and ``--help`` come from these fields). :func:`config_from_args` resolves it
    into a :class:`~sim.plan_search.PlanConfig` (components from the stated sds, a pilot or
    a generator)."""

    design: str = option("--design", plan_designs.DEFAULT, constraint=Options(DESIGNS),
                         help=_design_help())
    power: float = option("--power", 0.8, kind=float, help="target power (default 0.8)")
    effect: float | None = option("--effect", None, kind=float,
                                  help="true effect to detect, pp (default 1 unless --budget)")
    budget: float | None = option("--budget", None, kind=float,
                                  help="total budget (cost unit): report the smallest "
                                       "detectable effect")
    estimand: str | None = option(
        "--estimand", None, constraint=Optional(Options(ESTIMANDS)),
        help="methods: questions (default; the effect on these n questions, seeds random: "
             "evaluate's primary paired_t on per-seed means) or population (questions random "
             "too: evaluate's table row paired_two_level); models designs: population")
    alpha: float = alpha_option()
    cost: tuple = option("--cost", (), nargs="+", metavar="KEY=VALUE",
                         help="seed=C (per seed and arm) question=C (per seed x question "
                              "scored) repeat=C (per scored answer); default seed=1 (models "
                              "and models_clustered: question=1)")
    cost_unit: str = option("--cost-unit", "units", help="name of the cost unit (for output)")
    sd_seed: float | None = _sd_option("--sd-seed", "seed-level sd of the per-seed delta")
    sd_question: float | None = _sd_option("--sd-question",
                                           "question-level sd of the per-question delta")
    sd_inter: float | None = _sd_option("--sd-inter", "seed x question interaction sd (not "
                                                      "averaged by repeats)")
    sd_repeat: float | None = _sd_option("--sd-repeat", "sd of one repeat's delta given seed "
                                                        "and question")
    sd_cluster: float | None = _sd_option("--sd-cluster", "models_clustered: sd of a "
                                                          "cluster's mean delta over clusters")
    cluster_size: int | None = option("--cluster-size", None, kind=int,
                                      help="models_clustered: questions per cluster m "
                                           "(clusters G are searched in [--k-min, --k-max], "
                                           "G m <= --n-max)")
    from_pilot: str | None = option("--from-pilot", None, metavar="FILE",
                                    help="tidy CSV seed,arm,question,score (two arms, any "
                                         "names) or two harness logs 'BASELINE,VARIANT': "
                                         "components by two-way ANOVA, simulation through "
                                         "seed_question fitted to it (logs: or --arm)")
    arm: tuple = option("--arm", (), action="append", metavar="NAME=PATH",
                        help="instead of --from-pilot: one arm's pilot log (lm-eval "
                             "samples_*.jsonl, Inspect .eval, HELM, a one-arm CSV, or a "
                             "folder), as evaluate reads --arm; give it for both arms (the "
                             "one named baseline, else the first, is the baseline)")
    metric: str | None = metric_option()
    task: str | None = task_option()
    filter: str | None = filter_option()
    log_format: str | None = log_format_option()
    generator_param: tuple | None = option("--param", None, nargs="+",
                                           metavar="KEY=VALUE",
                                           help="a seed_question setting (e.g. theta=2 "
                                                "sd_seed=0.1): exact components at the "
                                                "effect; simulation through it")
    k_min: int = option("--k-min", 2, kind=int, help="fewest seeds per arm (2)",
                        group="search bounds")
    k_max: int = option("--k-max", 50, kind=int, help="most seeds per arm (50)",
                        group="search bounds")
    n_min: int = option("--n-min", 2, kind=int, help="fewest questions (2)",
                        group="search bounds")
    n_max: int = option("--n-max", 10_000, kind=int,
                        help="most questions (the benchmark's size; 10000)",
                        group="search bounds")
    r_max: int = option("--r-max", 10, kind=int, help="most repeats per question (10)",
                        group="search bounds")
    sims: int = sims_option(2000, help="simulated experiments per checked design (0: no "
                                       "check)", constraint=None)
    show: int = option("--show", 5, kind=int, help="designs listed and simulated (5)")
    seed: int = seed_option(help="root seed of the simulation (0)")
    out: str | None = option("--out", None, metavar="DIR", in_argv=False,
                             help="write plan_designs.csv and plan_checked.csv there")

    def __post_init__(self):
        check_options(self)


def build_parser(prog="python -m sim.plan") -> ArgumentParser:
    return add_options(ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0]),
                       PlanOptions)


def config_from_args(parsed) -> PlanConfig:
    """A :class:`PlanConfig` from parsed arguments (sources of components resolved)."""
    args = options_from_args(PlanOptions, parsed)
    cost_kw = _parse_pairs(args.cost, "--cost", ("seed", "question", "repeat"))
    spec = plan_designs.get(args.design)  # a --design choice (PlanOptions checked it)
    # models pay no seeds: their default is a question's cost, so that designs differ
    default = dict(spec.default_costs)
    costs = Costs(**(default if not cost_kw else cost_kw), unit=args.cost_unit)
    if args.effect is None and args.budget is None:
        args = dataclasses.replace(args, effect=1.0)
    stated = {name: getattr(args, f"sd_{name}") for name in
              ("seed", "question", "inter", "repeat")}
    if (args.cluster_size is not None or args.sd_cluster is not None) != spec.clustered:
        raise fail("--cluster-size", f"given (with --sd-cluster) exactly when --design is "
                   f"{_clustered_names()}", args.cluster_size)
    design = check_choice(args.design, "--design", DESIGNS)
    if stated["seed"] is not None and not spec.seeds:
        # two fixed checkpoints have no training seeds: a stated seed component was planned
        # with silently before
        raise fail("--sd-seed", f"left out with --design {design}: fixed models have no "
                   "training seeds (their runs are repeats: --sd-repeat)", stated["seed"])
    from .pilot import PILOT_LOGS, pilot_label, pilot_paths, pilot_source, reads_logs

    # --from-pilot FILE, or its logs as --arm NAME=PATH per arm (as evaluate reads them)
    source = pilot_source(args.from_pilot, args.arm)
    check_log_options(args, reads_logs(source), PILOT_LOGS)
    flag = "--arm" if args.arm else "--from-pilot"
    if source is not None and args.generator_param is not None:
        raise fail(flag, "not combined with --param", pilot_label(source))
    effect = None if args.effect is None else check_number(
        args.effect, "--effect", low=0.0, high=100.0, low_open=True) / 100
    model = None
    if args.generator_param is not None:
        gen = generators.get("seed_question", **_parse_pairs(args.generator_param,
                                                             "--param"))
        at = effect if effect is not None else 0.01
        gen.check_effect(at)
        comp = components_from_generator(gen, at, design)
        model = gen
    elif source is not None:
        from .pilot import read_pilot, two_arms

        for path in pilot_paths(source):
            check_complete(path, flag)  # not from a killed run's folder
        # a CSV of two arms with any names, or two harness logs (their runs, epochs or
        # seeds, are the pilot's runs: repeats under --design models)
        pilot = read_pilot(source, log_read(args))
        if pilot.question_ids == ("metric",):
            raise InvalidParameterError(f"{flag}: {pilot_label(source)} has per-seed metrics; "
                                        "the planner needs per-question scores "
                                        "(seed,arm,question,score)")
        base, variant = two_arms(pilot)
        sd_r = None if stated["repeat"] is None else stated["repeat"] / 100
        binary = np.isin(base, (0, 1)).all() and np.isin(variant, (0, 1)).all()
        share = None
        if binary and pilot.r >= 2:
            model = generators.generator_class("seed_question").fit(base, variant)
            observed = float(np.mean(variant - base))
            fitted = components_from_generator(model, observed)
            parts = fitted.sd_inter**2 + fitted.sd_repeat**2
            share = fitted.sd_repeat**2 / parts if parts > 0 else None
        # the model's split assumes sampled decoding: stated, not planned with (greedy
        # repeats are identical, so the default reads the residual as interaction)
        comp = components_from_pilot(base, variant, sd_repeat=sd_r,
                                     sampled_share=share, design=design,
                                     source=pilot_label(source))
    else:
        missing = [n for n, v in stated.items() if v is None]
        if len(missing) == 4 and args.sd_cluster is None:
            raise fail("--sd-seed", "given (or --from-pilot FILE, --arm logs, or --param): the "
                       "planner needs variance components", None)
        comp = Components(*((stated[n] or 0.0) / 100 for n in ("seed", "question", "inter",
                                                                 "repeat")),
                          sd_cluster=(args.sd_cluster or 0.0) / 100,
                          source="stated" + (f"; {', '.join(missing)} taken as 0"
                                             if missing else ""))
    # Stated values override what a pilot or a generator gave (except the split above).
    if source is not None or args.generator_param is not None:
        over = {f"sd_{n}": v / 100 for n, v in stated.items()
                if v is not None and not (n == "repeat" and source is not None)}
        if over:
            comp = dataclasses.replace(comp, source=comp.source + "; stated: " + ", ".join(
                over), **over)
    if source is not None and np.ptp(variant - base) == 0 and not any(
            getattr(comp, name) for name in ("sd_seed", "sd_question", "sd_inter", "sd_repeat")):
        # named here, not as a stated --sd-seed of 0 (which the user never typed)
        delta = 100 * float(np.mean(variant - base))
        raise InvalidParameterError(
            f"{flag}: the pilot's arms differ by {delta:+.4g} pp on every run and question "
            f"({pilot_label(source)}): it shows no variance to plan with (the same log given "
            f"for both arms?); state the components with "
            f"{'--sd-seed, ' if spec.seeds else ''}--sd-question, --sd-inter or --sd-repeat "
            "instead")
    return PlanConfig(components=comp, costs=costs, model=model, design=design,
                      estimand=args.estimand,
                      power=args.power, effect=effect,
                      budget=args.budget, alpha=args.alpha, k_min=args.k_min,
                      k_max=args.k_max, n_min=args.n_min, n_max=args.n_max, r_max=args.r_max,
                      sims=args.sims, show=args.show, seed=args.seed,
                      cluster_size=1 if args.cluster_size is None else args.cluster_size,
                      components_follow_effect=args.generator_param is not None and not any(
                          v is not None for v in stated.values()))


def _design_words(spec, ch, m):
    head = spec.chosen_head.format(m=m, **ch)
    r = ch["r"]
    return f"{head}n = {ch['n']:,} questions, r = {r} repeat{'s' if r != 1 else ''}"


def test_words(design: str, estimand: str) -> str:
    """The test the plan's power is for, in words."""
    return plan_designs.get(design).test_words(estimand)


def report_lines(plan: Plan) -> list[str]:
    """The planner's text output."""
    c = plan.config
    unit = c.costs.unit
    spec = plan_designs.get(c.design)
    first = spec.first_column
    lines = [f"design: {c.design}; test: {test_words(c.design, c.estimand)}; two-sided "
             f"alpha {c.alpha:g}",
             estimand_line(c.design, c.estimand),
             f"components: {plan.components.describe()}"]
    if c.estimand in spec.power_words:
        lines.append(spec.power_words[c.estimand])
    lines += [f"warning: {note}" for note in plan.components.notes]
    if not spec.seeds and plan.components.sd_seed > 0:
        lines.append("note: sd_seed is not used for models (two fixed checkpoints, no seeds)")
    if spec.own_line:
        lines.append(spec.own_line.format(m=c.cluster_size,
                                          icc=icc(plan.problem.components, 1)))
    lines.append(f"costs ({unit}): seed {c.costs.seed:g}, question {c.costs.question:g}, "
                 f"repeat {c.costs.repeat:g}; a design costs {spec.cost_words}")
    bounds = spec.bounds_head.format(k_min=c.k_min, k_max=c.k_max)
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
    lines.append(f"chosen: {_design_words(spec, ch, c.cluster_size)}: cost "
                 f"{ch['cost']:.4g} {unit}, power {100 * ch['power']:.1f}% (closed form) at "
                 f"{ch['effect_pp']:.3g} pp (SD of the mean delta {ch['sd_pp']:.3f} pp)")
    at_bound = [f"{name} = {value} is --{name}-max" for name, value, top in
                (("k", ch.get(first), c.k_max), ("n", ch["n"], c.n_max), ("r", ch["r"], c.r_max))
                if value == top and not (name == "k" and not spec.seed_axis)]
    if at_bound:
        lines.append(f"note: {'; '.join(at_bound)}: a larger bound may give a cheaper design")
    table = plan.checked if plan.checked is not None else plan.designs.head(c.show).assign(
        role=[f"best #{i + 1}" for i in range(min(c.show, len(plan.designs)))])
    head = (f"{'':>10} {spec.letter:>4} {'n':>7} {'r':>3} "
            f"{'cost':>10} {'effect pp':>9} {'power':>7}")
    if plan.checked is not None:
        head += "   check: simulated [95% Wilson]"
        # two powers side by side read as two answers: say which one the plan stands on
        if c.estimand in spec.check_words:
            lines.append(spec.check_words[c.estimand])
        else:
            lines.append("power column: the closed form, the plan's answer; the check column "
                         "simulates each design from the fitted model (a check of the closed "
                         "form, not a second answer: a gap means the model and the closed "
                         "form's normal components differ)" if c.model else
                         "power column: the closed form, the plan's answer; the check column "
                         "simulates each design (a check of the closed form, not a second "
                         "answer)")
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
        tested = (f"; {ESTIMAND_TESTS[c.estimand]} (registry) at the {c.estimand} effect, "
                  "a new draw of seeds and questions per experiment"
                  if spec.registry_tested else "")
        lines.append(f"check: {c.sims:,} simulated experiments per design, {what}{tested}")
        done = plan.checked["sims"]
        if (done < c.sims).any():
            fewest = int(done[done > 0].min()) if (done > 0).any() else 0
            seeds = " x seeds" if spec.seed_axis else ""
            lines.append(
                f"note: sims reduced to keep each check within {SIM_CELLS_LIMIT:.0e} "
                f"simulated cells (sims x questions{seeds}): {(done == 0).sum()} design(s) "
                f"not simulated (fewer than {MIN_CHECK_SIMS} sims fit; nan), "
                f"{((done > 0) & (done < c.sims)).sum()} with fewer sims (down to {fewest:,})")
        if c.model:
            # A fitted model need not reproduce the closed form's components exactly: show
            # its own, so that a gap between the two power columns can be read.
            own = components_from_generator(c.model, ch["effect_pp"] / 100, c.design)
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
    c = plan.config
    tables = {name: None if table is None else table.assign(
        estimand=c.estimand, test=plan_designs.get(c.design).test_column(c.estimand))
        for name, table in (("plan_designs.csv", plan.designs),
                            ("plan_checked.csv", plan.checked))}
    written = [name for name, table in tables.items() if table is not None]
    for name in written:
        write_csv(tables[name], out / name)
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
