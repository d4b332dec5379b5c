"""``evaluate``'s options, declared once: the parser, the checks, ``to_argv`` and the
keywords of :func:`reports.evaluate.compare` all come from :class:`EvaluateOptions`.

:func:`config_from_args` checks what no single option can (``--claim`` needs ``--margin``,
logs or a results CSV, not both, ...) and resolves the options into the
:class:`EvalConfig` a run reads: the arms by name, the protocol parameters as a dict, the
margin and single_run's threshold in the scores' own scale (fractions under ``--percent``),
the zipped members' size in bytes.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from evalcal_core.cli import ArgumentParser
from evalcal_core.designs import KIND_WORDS, KINDS, designs
from evalcal_core.designs import get as design_kind
from evalcal_core.log_options import (
    check_log_options,
    filter_option,
    log_format_option,
    metric_option,
    task_option,
)
from evalcal_core.options import add_options, alpha_option, check_options, option, seed_option
from evalcal_core.options import config_from_args as options_from_args
from evalcal_core.params import parse_key_values
from evalcal_core.readers import parse_arm_options
from evalcal_core.results_io import MAX_RANGE
from evalcal_core.validate import (
    Interval,
    Optional,
    Options,
    check_number,
    fail,
)
from protocols import names, protocol_class
from protocols.analysis.compare import CORRECTIONS
from protocols.analysis.stream import STREAM_METHODS
from protocols.claims import check_margin as check_claim_margin
from protocols.param_check import check_protocol_param

PROG = "python -m protocols.evaluate"
CLAIMS = ("superiority", "non-inferiority", "equivalence")
FORMATS = ("text", "markdown", "latex")

#: the kinds whose arms' seeds are independent (``--equal-variances`` applies to them) and
#: those whose questions are clustered (``--cluster`` names their clusters), from the registry
_INDEPENDENT = " or ".join(d.name for d in designs() if not d.paired)
_CLUSTERED = " or ".join(d.name for d in designs() if d.clustered)

#: the ``--help`` sections, in the order they are listed
LOGS = "harness logs"
DESIGN = "design (inferred when omitted; always printed first)"
COMPARISONS = "comparisons"
COLUMNS = "columns of a results CSV (when yours have other names)"

GATE_HELP = """\
claims and --gate (exit status):
  0  the claim is shown for every comparison (its simultaneous interval clears the margin)
  1  the claim is refuted for some comparison (the interval lies on the wrong side)
  3  inconclusive (the interval straddles the margin): more seeds or questions needed
  2  bad input or options (one line on stderr)
  e.g. in CI: python -m reports.evaluate --arm current=evals/a --arm candidate=evals/b \\
                --reference current --claim non-inferiority --margin 0.01 --gate
"""


@dataclass(frozen=True)
class EvaluateOptions:
    """What ``python -m reports.evaluate`` was asked, option by option, as typed (the
    results CSV, a positional argument, aside). Fields are in the order of ``--help``."""

    arm: tuple = option("--arm", (), action="append", metavar="NAME=PATH", group=LOGS,
                        help="one arm's harness log (lm-eval samples_*.jsonl, Inspect .eval, "
                             "HELM per_instance_stats.json, a one-arm CSV, or a folder); "
                             "repeat per arm")
    baseline: str | None = option("--baseline", None, metavar="LOG", group=LOGS,
                                  help="two-arm shorthand: --arm baseline=LOG (needs "
                                       "--variant)")
    variant: str | None = option("--variant", None, metavar="LOG", group=LOGS,
                                 help="two-arm shorthand: --arm variant=LOG")
    metric: str | None = metric_option(group=LOGS)
    task: str | None = task_option(group=LOGS)
    filter: str | None = filter_option(group=LOGS)
    design: str | None = option("--design", None, choices=KINDS, metavar="NAME", group=DESIGN,
                                help="the study design, one of: " + "; ".join(
                                    kind + ("" if KIND_WORDS[kind] == kind
                                            else f" ({KIND_WORDS[kind]})") for kind in KINDS))
    equal_variances: bool = option("--equal-variances", False, switch=True, group=DESIGN,
                                   help=f"with --design {_INDEPENDENT} --correction maxt: the "
                                        "arms' seed variances are equal by design (declared, "
                                        "not tested), so max-T is Dunnett's / Tukey's "
                                        "pooled-variance test (default: Holm's Welch)")
    cluster: str | None = option("--cluster", None, metavar="COLUMN", group=DESIGN,
                                 help="questions are clustered by this column or log field "
                                      f"(--design {_CLUSTERED}; inferred when --design is "
                                      "omitted)")
    reference: str | None = option("--reference", None, metavar="ARM", group=COMPARISONS,
                                   help="compare every arm with this one (many-to-one); "
                                        "default all pairs")
    correction: str = option("--correction", "holm", choices=CORRECTIONS, group=COMPARISONS,
                             help="multiplicity: holm (default), maxt, bh, bonferroni, none")
    claim: str | None = option("--claim", None, choices=CLAIMS, group=COMPARISONS,
                               help="the claim to check against --margin")
    margin: float | None = option("--margin", None, kind=float, metavar="M",
                                  group=COMPARISONS,
                                  constraint=Optional(Interval("real", 0.0, MAX_RANGE)),
                                  help="claim margin in the file's units (0.01 = 1 pp for "
                                       "fractions)")
    gate: bool = option("--gate", False, switch=True, group=COMPARISONS,
                        help="exit 0 if the claim is shown, 1 refuted, 3 inconclusive")
    stream: bool = option("--stream", False, switch=True, group=COMPARISONS,
                          help="two arms: also read the paired differences in the file's "
                               "order as an anytime-valid confidence sequence (valid however "
                               "often you look) and say where 0 first left it; with --claim, "
                               "the claim's anytime-valid verdict, which --gate then reads")
    # None, not betting: given without --stream it is refused
    stream_method: str | None = option("--stream-method", None, choices=STREAM_METHODS,
                                       group=COMPARISONS,
                                       help="the confidence sequence of --stream: betting "
                                            "(default) or empirical-bernstein (wider)")
    order_by: str | None = option("--order-by", None, metavar="COLUMN", group=COMPARISONS,
                                  help="with --stream: the column giving the order the units "
                                       "arrived in (numbers or ISO 8601 times; each question "
                                       "or seed at its smallest value); default the file's "
                                       "row order (each at its first row)")
    leaderboard: bool = option("--leaderboard", False, switch=True, group=COMPARISONS,
                               help="many systems: every pair at once (max-T), as tiers, "
                                    "simultaneous rank intervals and the set of possibly-best "
                                    "systems, instead of one line per comparison")
    alpha: float = alpha_option()
    # the registry as imported: every protocol module is imported by ``import protocols``
    protocols: tuple | None = option("--protocols", None, nargs="+", metavar="NAME",
                                     choices=tuple(names()),
                                     help="protocols of the two-arm table (default: all "
                                          "applicable)")
    protocol_param: tuple = option("--protocol-param", (), nargs="+", metavar="KEY=VALUE",
                                   help="set on every selected protocol that has the "
                                        "parameter")
    threshold: float | None = option("--threshold", None, kind=float, metavar="T",
                                     help="single_run's smallest difference called a result, "
                                          "in the file's units (default 0.01 = 1 pp for "
                                          "fractions; required for others)")
    percent: bool = option("--percent", False, switch=True,
                           help="scores are percentages (91.2) rather than fractions (0.912)")
    metric_range: tuple | None = option("--metric-range", None, nargs=2, kind=float,
                                        metavar=("LOW", "HIGH"),
                                        help="valid scores of a metric that is not a "
                                             "fraction in [0, 1]")
    lower_is_better: bool = option("--lower-is-better", False, switch=True,
                                   help="the metric is a loss or an error: claims, the "
                                        "ranking and the wording read a lower score as "
                                        "better (the difference is still variant - "
                                        "baseline; no relative error reduction)")
    partial_credit: bool = option("--partial-credit", False, switch=True,
                                  help="allow a few scores other than 0 and 1 in a "
                                       "per-question file")
    score_column: str | None = option("--score-column", None, metavar="COLUMN",
                                      group=COLUMNS,
                                      help="the results CSV's column of scores (default "
                                           "score, or metric per seed)")
    arm_column: str | None = option("--arm-column", None, metavar="COLUMN", group=COLUMNS,
                                    help="the column naming each row's arm (default arm)")
    model_column: str | None = option("--model-column", None, metavar="COLUMN",
                                      group=COLUMNS, help="the same as --arm-column")
    question_column: str | None = option("--question-column", None, metavar="COLUMN",
                                         group=COLUMNS,
                                         help="the column naming each row's question "
                                              "(default question)")
    seed_column: str | None = option("--seed-column", None, metavar="COLUMN", group=COLUMNS,
                                     help="the column naming each row's run (default seed; "
                                          "a file without one is one run per arm: fixed "
                                          "models)")
    common_questions: bool = option("--common-questions", False, switch=True, group=COLUMNS,
                                    help="keep the questions every arm has (boards and "
                                         "pairs whose models cover different questions; "
                                         "how many each arm lost is printed) and drop exact "
                                         "duplicate rows (counted); a duplicate with another "
                                         "score stays an error")
    seed: int = seed_option(help="seed of the resampling (0)")
    json: bool = option("--json", False, switch=True, help="machine-readable output")
    format: str = option("--format", "text", metavar="FORMAT", constraint=Options(FORMATS),
                         help="output: text (default), markdown or latex")
    log_format: str | None = log_format_option()
    max_member_mb: float | None = option("--max-member-mb", None, kind=float, metavar="MB",
                                         group=LOGS,
                                         constraint=Optional(Interval("real", 0.0, 1e6,
                                                                      low_open=True)),
                                         help="largest size in MiB of one member of a "
                                              "zipped log (Inspect .eval), one JSON log or "
                                              "one JSONL line (256); it bounds memory: peak "
                                              "about 2x the cap plus ~100 MB, so raise it "
                                              "only for a larger, trusted member")
    forest: str | None = option("--forest", None, metavar="PATH.png",
                                help="write a forest plot (with --leaderboard: the ranked "
                                     "plot of the rank intervals and tiers)")
    html: str | None = option("--html", None, metavar="PAGE.html",
                              help="also write one self-contained page of this comparison "
                                   "(design, verdict, forest or board plot, evidence, notes "
                                   "and what your harness default says on the same logs) to "
                                   "link a reviewer to; no network needed to open it")

    def __post_init__(self):
        check_options(self)


@dataclass(frozen=True)
class EvalConfig:
    """What one ``evaluate`` run does (the CLI only parses into this)."""

    results: str | None = None
    arms: dict = field(default_factory=dict)
    metric: str | None = None
    task: str | None = None
    filter: str | None = None
    design: str | None = None
    cluster: str | None = None
    reference: str | None = None
    correction: str = "holm"
    claim: str | None = None
    margin: float | None = None
    equal_variances: bool = False
    gate: bool = False
    alpha: float = 0.05
    protocols: tuple | None = None
    params: dict = field(default_factory=dict)
    percent: bool = False
    metric_range: tuple | None = None
    partial_credit: bool = False
    seed: int = 0
    json: bool = False
    format: str = "text"
    log_format: str | None = None
    max_member_bytes: int | None = None
    forest: str | None = None
    html: str | None = None
    leaderboard: bool = False
    stream: bool = False
    stream_method: str = STREAM_METHODS[0]
    order_by: str | None = None
    lower_is_better: bool = False
    common_questions: bool = False
    #: the results CSV's names of the reader's columns (``{"score": "acc"}``), see
    #: :func:`evalcal_core.results_io.reader_names`
    columns: dict = field(default_factory=dict)


def _epilog() -> str:
    by_kind = "".join(
        f"  {KIND_WORDS[kind] + ':':<30} "
        + ", ".join(n for n in names() if not protocol_class(n).label(kind)) + "\n"
        for kind in KINDS)
    never = [n for n in names() if all(protocol_class(n).label(k) for k in KINDS)]
    return ("protocols reportable per design (the output labels every row for yours):\n"
            + by_kind
            + "pitfalls under every design (shown for teaching):\n"
            + "".join(f"  {n:<26} {protocol_class(n).label(KINDS[0])}\n" for n in never)
            + "\n" + GATE_HELP)


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
        description="Compare the arms of your own results: the study design first, then one "
                    "reportable protocol per comparison with multiplicity-adjusted p-values "
                    "and simultaneous intervals, effect sizes, a ranking and an optional "
                    "claim gate.",
        epilog=_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="?", default=None,
                   help="tidy CSV: seed,arm,metric or seed,arm,question,score with any arm "
                        "names (default: the shipped example)")
    return add_options(p, EvaluateOptions)


def config_from_args(args: argparse.Namespace) -> EvalConfig:
    """Check the options (one-line errors) and build the config."""
    return resolve(options_from_args(EvaluateOptions, args), args.results)


def _arms(opts: EvaluateOptions, results) -> dict:
    """``{name: log path}`` from ``--arm`` or ``--baseline``/``--variant``; ``{}`` for a
    results CSV."""
    if (opts.baseline is None) != (opts.variant is None):
        given = "--baseline" if opts.baseline is not None else "--variant"
        raise fail(("--baseline", "--variant"), "given together: name both arms' logs",
                   got=f"only {given}")
    arms = parse_arm_options(opts.arm)
    if opts.baseline is not None:
        if arms:
            raise fail(("--arm", "--baseline"), "given one at a time: --arm NAME=PATH per "
                       "arm or --baseline and --variant, not both", got="both")
        arms = {"baseline": opts.baseline, "variant": opts.variant}
    if arms and results is not None:
        raise fail("results", "left out when the arms are harness logs (--arm, or --baseline "
                   "and --variant): a results CSV or logs, not both", results)
    if arms and len(arms) < 2:
        raise fail("--arm", "given once per arm, for two or more arms",
                   got=f"one arm ({next(iter(arms))})")
    check_log_options(opts, bool(arms), "--arm NAME=PATH, or --baseline and --variant")
    if not arms and opts.max_member_mb is not None:
        raise fail("--max-member-mb", "used with harness logs (--arm NAME=PATH, or --baseline "
                   "and --variant): it bounds a log's members", opts.max_member_mb)
    return arms


def _columns(opts: EvaluateOptions) -> dict:
    """``{reader's column: the CSV's}`` from ``--score-column`` and the like (only those
    given); refused with logs, and where two name one column."""
    if opts.arm_column is not None and opts.model_column is not None:
        raise fail(("--arm-column", "--model-column"), "given one at a time (the same "
                   "option)", got="both")
    given = {"score": ("--score-column", opts.score_column),
             "arm": ("--arm-column" if opts.model_column is None else "--model-column",
                     opts.arm_column if opts.model_column is None else opts.model_column),
             "question": ("--question-column", opts.question_column),
             "seed": ("--seed-column", opts.seed_column)}
    given = {role: pair for role, pair in given.items() if pair[1] is not None}
    seen: dict = {}
    for flag, name in given.values():
        if not name.strip():
            raise fail(flag, "a column name", name)
        key = name.strip().lower()
        if key in seen:
            raise fail((seen[key], flag), "names of different columns",
                       got=f"{name!r} for both")
        seen[key] = flag
    if opts.common_questions and (opts.arm or opts.baseline is not None):
        raise fail("--common-questions", "given with a results CSV (harness logs are "
                   "matched by question id already, what was dropped printed)", got="logs")
    if given and (opts.arm or opts.baseline is not None):
        flag, name = next(iter(given.values()))
        raise fail(flag, "given with a results CSV (harness logs name their own fields: "
                   "--metric)", name)
    return {role: name for role, (_, name) in given.items()}


def _check_combinations(opts: EvaluateOptions) -> None:
    """The rules between options (each option's own rule is in its declaration)."""
    if opts.metric_range is not None:
        low, high = opts.metric_range
        check_number(low, "--metric-range", low=-MAX_RANGE, high=MAX_RANGE)
        check_number(high, "--metric-range", low=low, high=MAX_RANGE, low_open=True)
        if opts.percent:
            raise fail(("--percent", "--metric-range"), "given one at a time: declare the "
                       "range in the file's own units", got="both")
    _check_design(opts)
    if opts.json and opts.format != "text":
        raise fail(("--json", "--format"), "given one at a time: each chooses the output's "
                   "format", got=f"--json and --format {opts.format}")
    if opts.stream_method is not None and not opts.stream:
        raise fail("--stream-method", "given with --stream (it chooses that sequence)",
                   opts.stream_method)
    if opts.order_by is not None and not opts.stream:
        raise fail("--order-by", "given with --stream (it orders the stream)", opts.order_by)
    if opts.order_by is not None and (opts.arm or opts.baseline is not None):
        raise fail("--order-by", "used with a results CSV: harness logs stream in the order "
                   "their samples appear", opts.order_by)
    if opts.stream and opts.claim is not None and opts.alpha >= 0.5:
        raise fail("--alpha", "< 0.5 with --stream and --claim (the claim reads the "
                   "1 - 2 alpha sequence)", opts.alpha)
    if opts.stream and opts.leaderboard:
        raise fail(("--stream", "--leaderboard"), "given one at a time: --stream reads two "
                   "arms, --leaderboard ranks many", got="both")
    if opts.leaderboard:
        for flag, value, default in (("--claim", opts.claim, None),
                                     ("--reference", opts.reference, None),
                                     ("--correction", opts.correction, "holm")):
            if value != default:
                raise fail("--leaderboard", "given without --claim, --reference or "
                           "--correction: it compares every pair with its own max-T "
                           "correction", got=f"{flag} {value}")
    if opts.forest is not None:
        from .forest import check_forest_path  # before any work: a bad path costs nothing
        check_forest_path(opts.forest)
    if opts.html is not None:
        from .html import check_html_path
        check_html_path(opts.html)
    if opts.gate and opts.claim is None:
        raise fail("--gate", "given with a --claim (superiority, non-inferiority or "
                   "equivalence) to decide", got="no --claim")
    if opts.margin is not None and opts.claim is None:
        raise fail("--margin", "given with a --claim", opts.margin)
    if opts.claim in ("non-inferiority", "equivalence") and opts.margin is None:
        raise fail("--margin", f"a number > 0 in the file's units for --claim {opts.claim}",
                   got="no --margin")


def _check_design(opts: EvaluateOptions) -> None:
    """``--design`` against ``--cluster`` and ``--equal-variances``: what the declared kind
    says of clusters and of its seeds' pairing (the registry's ``clustered`` and ``paired``);
    the data's checks come later (:func:`protocols.analysis.design.infer_design`)."""
    study = None if opts.design is None else design_kind(opts.design)
    if study is not None and opts.cluster is not None and not study.clustered:
        raise fail(("--cluster", "--design"), f"given together only with --design {_CLUSTERED} "
                   "(--cluster names the questions' clusters)",
                   got=f"--cluster {opts.cluster} with --design {opts.design}")
    if study is not None and study.clustered and opts.cluster is None:
        raise fail("--cluster", f"given with --design {opts.design}: the column or log field "
                   "naming each question's cluster", got="no --cluster")
    independent = study is not None and not study.paired
    if opts.equal_variances and not (independent and opts.correction == "maxt"):
        raise fail("--equal-variances", f"given with --design {_INDEPENDENT} and --correction "
                   "maxt (it chooses their pooled-variance test)",
                   got=f"--correction {opts.correction}" + (
                       "" if independent else f" with --design {opts.design or '(inferred)'}"))


def _params(opts: EvaluateOptions, scale: float) -> dict:
    """``--protocol-param`` and ``--threshold`` as ``{key: value}``, each key a parameter of
    a selected protocol."""
    params = parse_key_values(opts.protocol_param, "--protocol-param")
    if opts.threshold is not None:
        if "threshold" in params:
            raise fail(("--threshold", "--protocol-param"), "given one at a time for "
                       "single_run's threshold", got="both")
        params["threshold"] = opts.threshold * scale
    chosen = names() if opts.protocols is None else opts.protocols
    for key, value in params.items():
        typed = (f"--threshold {opts.threshold:g}"
                 if key == "threshold" and opts.threshold is not None
                 else f"--protocol-param {key}={value}")
        # checked now, by every protocol that takes it, and named as typed: the first
        # protocol built on the data (perhaps one that does not apply) named it otherwise
        if not check_protocol_param(key, value, chosen, typed):
            raise fail("--protocol-param", "KEY=VALUE with KEY a parameter of a selected "
                       f"protocol ({', '.join(chosen)})", key)
    return params


def resolve(opts: EvaluateOptions, results: str | None = None) -> EvalConfig:
    """The :class:`EvalConfig` of ``opts`` and the results CSV, after the rules between
    options; one-line :class:`~evalcal_core.validate.InvalidParameterError` otherwise."""
    _check_combinations(opts)
    if isinstance(results, str) and not results.strip():
        # an empty path is a path given wrong: it must not fall back to the shipped example
        raise fail("results", "a results CSV path (left out: the shipped example)", results)
    arms = _arms(opts, results)
    scale = 0.01 if opts.percent else 1.0
    params = _params(opts, scale)
    max_member = (None if opts.max_member_mb is None
                  else int(opts.max_member_mb * 2**20))
    margin = (None if opts.margin is None else
              check_margin(opts.margin, opts.metric_range, opts.percent, opts.claim) * scale)
    return EvalConfig(
        results=results, arms=arms, metric=opts.metric, task=opts.task, filter=opts.filter,
        design=opts.design, equal_variances=opts.equal_variances, cluster=opts.cluster,
        reference=opts.reference, correction=opts.correction, claim=opts.claim,
        margin=margin, gate=opts.gate, alpha=opts.alpha, protocols=opts.protocols,
        params=params, percent=opts.percent, metric_range=opts.metric_range,
        partial_credit=opts.partial_credit, seed=opts.seed, json=opts.json,
        format=opts.format, log_format=opts.log_format, max_member_bytes=max_member,
        forest=opts.forest, html=opts.html, leaderboard=opts.leaderboard, stream=opts.stream,
        stream_method=opts.stream_method or STREAM_METHODS[0], order_by=opts.order_by,
        columns=_columns(opts), lower_is_better=opts.lower_is_better,
        common_questions=opts.common_questions)


def check_margin(margin, metric_range, percent, claim) -> float:
    """The margin in the file's units, refused where it cannot be meant (5 on fractions:
    :func:`protocols.claims.check_margin`'s hint); 0 only for superiority."""
    if margin == 0:  # in [0, MAX_RANGE]: the option's declaration
        if claim != "superiority":
            raise fail("--margin", f"> 0 for --claim {claim}", margin)
        return 0.0
    score_range = (metric_range if metric_range is not None
                   else (0.0, 100.0) if percent else (0.0, 1.0))
    margin = check_claim_margin(margin, score_range, "--margin")
    if margin >= score_range[1] - score_range[0]:
        raise fail("--margin", f"below the width of the metric's range [{score_range[0]:g}, "
                   f"{score_range[1]:g}]", margin)
    return float(margin)
