"""``python -m reports.evaluate``: arguments -> :class:`EvalConfig` -> :func:`run_config`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from importlib import resources

import numpy as np

from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.designs import COMPARE_MODELS, COMPARES, KIND_WORDS, KINDS
from evalcal_core.params import parse_key_values
from evalcal_core.readers import names as log_formats
from evalcal_core.results_io import MAX_RANGE, check_arm_scores
from evalcal_core.validate import InvalidParameterError, check_alpha, check_int, check_number
from protocols import PROTOCOLS, names, protocol_class
from protocols.claims import EXIT_STATUS
from protocols.claims import check_margin as check_claim_margin

from .board import board_json, board_summary, board_text, rank_board
from .compare import CORRECTIONS, compare_arms
from .design import cluster_codes, design_json, design_line, infer_design
from .load import parse_arm_options, read_log_arms, read_tidy
from .protocols_table import evaluate_protocols, format_table, notes_for
from .render import Units, as_json, clean, header_lines, latex, markdown, text, visible
from .stream import STREAM_METHODS, stream_lines, stream_summary

PROG = "python -m reports.evaluate"
CLAIMS = ("superiority", "non-inferiority", "equivalence")
FORMATS = ("text", "markdown", "latex")

GATE_HELP = """\
claims and --gate (exit status):
  0  the claim is shown for every comparison (its simultaneous interval clears the margin)
  1  the claim is refuted for some comparison (the interval lies on the wrong side)
  3  inconclusive (the interval straddles the margin): more seeds or questions needed
  2  bad input or options (one line on stderr)
  e.g. in CI: python -m reports.evaluate --arm current=evals/a --arm candidate=evals/b \\
                --reference current --claim non-inferiority --margin 0.01 --gate
"""


def example_path() -> str:
    """Path of the example results CSV shipped with the package."""
    return str(resources.files("protocols") / "examples" / "example_results.csv")


@dataclass(frozen=True)
class EvalConfig:
    """What one ``evaluate`` run does (the CLI only parses into this)."""

    results: str | None = None
    arms: dict = field(default_factory=dict)
    metric: str | None = None
    task: str | None = None
    filter: str | None = None
    compare: str | None = None
    unpaired: bool = False
    cluster: str | None = None
    reference: str | None = None
    correction: str = "holm"
    claim: str | None = None
    margin: float | None = None
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
    leaderboard: bool = False
    stream: bool = False
    stream_method: str = STREAM_METHODS[0]


def build_parser() -> ArgumentParser:
    by_kind = "".join(
        f"  {KIND_WORDS[kind] + ':':<30} "
        + ", ".join(n for n in names() if not protocol_class(n).label(kind)) + "\n"
        for kind in KINDS)
    never = [n for n in names() if all(protocol_class(n).label(k) for k in KINDS)]
    epilog = ("protocols reportable per design (the output labels every row for yours):\n"
              + by_kind
              + "pitfalls under every design (shown for teaching):\n"
              + "".join(f"  {n:<26} {protocol_class(n).label(KINDS[0])}\n"
                        for n in never)
              + "\n" + GATE_HELP)
    p = ArgumentParser(
        prog=PROG,
        description="Compare the arms of your own results: the study design first, then one "
                    "reportable protocol per comparison with multiplicity-adjusted p-values "
                    "and simultaneous intervals, effect sizes, a ranking and an optional "
                    "claim gate.",
        epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="?", default=None,
                   help="tidy CSV: seed,arm,metric or seed,arm,question,score with any arm "
                        "names (default: the shipped example)")
    g = p.add_argument_group("harness logs")
    g.add_argument("--arm", action="append", default=[], metavar="NAME=PATH",
                   help="one arm's harness log (lm-eval samples_*.jsonl, Inspect .eval, HELM "
                        "per_instance_stats.json, a one-arm CSV, or a folder); repeat per arm")
    g.add_argument("--baseline", metavar="LOG",
                   help="two-arm shorthand: --arm baseline=LOG (needs --variant)")
    g.add_argument("--variant", metavar="LOG", help="two-arm shorthand: --arm variant=LOG")
    g.add_argument("--metric", help="metric, scorer or stat to read from the logs")
    g.add_argument("--task", help="task to read when a log holds several")
    g.add_argument("--filter", help="lm-eval filter, HELM perturbation or CSV arm")
    d = p.add_argument_group("design (inferred when omitted; always printed first)")
    d.add_argument("--compare", choices=COMPARES,
                   help="methods: training procedures, seeds are the units; models: fixed "
                        "checkpoints, questions are the units")
    d.add_argument("--unpaired", action="store_true",
                   help="the arms' seeds are independent (methods only)")
    d.add_argument("--cluster", metavar="COLUMN",
                   help="questions are clustered by this column (models only)")
    c = p.add_argument_group("comparisons")
    c.add_argument("--reference", metavar="ARM",
                   help="compare every arm with this one (many-to-one); default all pairs")
    c.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="multiplicity: holm (default), maxt, bh, bonferroni, none")
    c.add_argument("--claim", choices=CLAIMS, help="the claim to check against --margin")
    c.add_argument("--margin", type=float, metavar="M",
                   help="claim margin in the file's units (0.01 = 1 pp for fractions)")
    c.add_argument("--gate", action="store_true",
                   help="exit 0 if the claim is shown, 1 refuted, 3 inconclusive")
    c.add_argument("--stream", action="store_true",
                   help="two arms: also read the paired differences in the file's order as "
                        "an anytime-valid confidence sequence (valid however often you "
                        "look) and say where 0 first left it; with --claim, the claim's "
                        "anytime-valid verdict, which --gate then reads")
    c.add_argument("--stream-method", choices=STREAM_METHODS, default=None,
                   help="the confidence sequence of --stream: betting (default) or "
                        "empirical-bernstein (wider)")
    c.add_argument("--leaderboard", action="store_true",
                   help="many systems: every pair at once (max-T), as tiers, simultaneous "
                        "rank intervals and the set of possibly-best systems, instead of "
                        "one line per comparison")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (0.05)")
    p.add_argument("--protocols", nargs="+", metavar="NAME", choices=names(),
                   help="protocols of the two-arm table (default: all applicable)")
    p.add_argument("--protocol-param", nargs="+", default=[], metavar="KEY=VALUE",
                   help="set on every selected protocol that has the parameter")
    p.add_argument("--threshold", type=float, default=None, metavar="T",
                   help="single_run's smallest difference called a result, in the file's "
                        "units (default 0.01 = 1 pp for fractions; required for others)")
    p.add_argument("--percent", action="store_true",
                   help="scores are percentages (91.2) rather than fractions (0.912)")
    p.add_argument("--metric-range", nargs=2, type=float, metavar=("LOW", "HIGH"),
                   help="valid scores of a metric that is not a fraction in [0, 1]")
    p.add_argument("--partial-credit", action="store_true",
                   help="allow a few scores other than 0 and 1 in a per-question file")
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling (0)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--format", default="text", metavar="FORMAT",
                   help="output: text (default), markdown or latex")
    p.add_argument("--log-format", default=None, metavar="NAME",
                   help=f"the logs' format ({', '.join(log_formats())}); detected from the "
                        "file name and content when omitted")
    g.add_argument("--max-member-mb", type=float, default=None, metavar="MB",
                   help="largest size a member of a zipped log (Inspect .eval) may inflate to "
                        "(512)")
    p.add_argument("--forest", metavar="PATH.png",
                   help="write a forest plot (with --leaderboard: the ranked plot of the "
                        "rank intervals and tiers)")
    return p


def config_from_args(args) -> EvalConfig:
    """Check the options (one-line errors) and build the config."""
    check_alpha(args.alpha, "--alpha")
    check_int(args.seed, "--seed", low=0, high=2**63 - 1)
    if args.metric_range is not None:
        low, high = args.metric_range
        check_number(low, "--metric-range", low=-MAX_RANGE, high=MAX_RANGE)
        check_number(high, "--metric-range", low=low, high=MAX_RANGE, low_open=True)
        if args.percent:
            raise InvalidParameterError("--percent and --metric-range exclude each other: declare "
                                        "the range in the file's own units")
    if (args.baseline is None) != (args.variant is None):
        raise InvalidParameterError("--baseline and --variant go together: name both arms' logs")
    arms = parse_arm_options(args.arm)
    if args.baseline is not None:
        if arms:
            raise InvalidParameterError("give --baseline/--variant or --arm NAME=PATH, not both")
        arms = {"baseline": args.baseline, "variant": args.variant}
    if arms and args.results is not None:
        raise InvalidParameterError(f"give either a results CSV ({args.results}) or --baseline and "
                                    f"--variant (or --arm), not both")
    if arms and len(arms) < 2:
        raise InvalidParameterError(f"--arm names one arm ({next(iter(arms))}); a comparison "
                                    "needs two or more")
    if not arms and any(v is not None for v in (args.metric, args.task, args.filter)):
        raise InvalidParameterError("--metric, --task and --filter read harness logs: use them "
                                    "with --baseline and --variant (or --arm NAME=PATH)")
    if args.unpaired and args.compare == COMPARE_MODELS:
        raise InvalidParameterError("--unpaired applies to --compare methods (independent seeds); "
                                    "models are compared on the same questions, always paired")
    if args.stream_method is not None and not args.stream:
        raise InvalidParameterError(f"--stream-method {args.stream_method} chooses the sequence "
                                    "of --stream: give --stream too")
    if args.stream and args.claim is not None and args.alpha >= 0.5:
        raise InvalidParameterError(f"--alpha {args.alpha:g} with --stream and --claim must be "
                                    "< 0.5 (the claim reads the 1 - 2 alpha sequence)")
    if args.stream and args.leaderboard:
        raise InvalidParameterError("--stream reads two arms; --leaderboard ranks many: give one")
    if args.leaderboard and (args.claim is not None or args.reference is not None
                             or args.correction != "holm"):
        raise InvalidParameterError("--leaderboard compares every pair with its own max-T "
                                    "correction: it takes no --claim, --reference or "
                                    "--correction")
    if args.forest is not None:
        from .forest import check_forest_path  # before any work: a bad path costs nothing
        check_forest_path(args.forest)
    if args.gate and args.claim is None:
        raise InvalidParameterError("--gate needs a --claim (superiority, non-inferiority or "
                                    "equivalence) to decide")
    if args.margin is not None and args.claim is None:
        raise InvalidParameterError("--margin needs a --claim")
    if args.claim in ("non-inferiority", "equivalence") and args.margin is None:
        raise InvalidParameterError(f"--claim {args.claim} needs a --margin > 0 in the file's "
                                    "units")
    params = parse_key_values(args.protocol_param, "--protocol-param")
    scale = 0.01 if args.percent else 1.0
    if args.threshold is not None:
        if "threshold" in params:
            raise InvalidParameterError("Give single_run's threshold once: --threshold or "
                                        "--protocol-param threshold=, not both.")
        params["threshold"] = args.threshold * scale
    chosen = names() if args.protocols is None else args.protocols
    for key in params:
        if not any(PROTOCOLS.accepts(name, key) for name in chosen):
            raise InvalidParameterError(f"--protocol-param {key!r} is not a parameter of any "
                                        f"selected protocol ({', '.join(chosen)})")
    output, log_format = args.format, args.log_format
    if output not in FORMATS:
        raise InvalidParameterError(f"--format {output!r} is not an output format; allowed: "
                                    f"{', '.join(FORMATS)}")
    if log_format is not None and log_format not in log_formats():
        raise InvalidParameterError(f"--log-format {log_format!r} is not a known log format; "
                                    f"allowed: {', '.join(log_formats())}")
    if log_format is not None and not arms:
        raise InvalidParameterError(f"--log-format {log_format} reads harness logs: use it with "
                                    "--arm NAME=PATH or --baseline and --variant")
    max_member = None
    if args.max_member_mb is not None:
        max_member = int(check_number(args.max_member_mb, "--max-member-mb", low=0.0,
                                      low_open=True, high=1e6) * 2**20)
    margin = None
    if args.margin is not None:
        margin = check_margin(args.margin, args.metric_range, args.percent,
                              args.claim) * scale
    return EvalConfig(
        results=args.results, arms=arms, metric=args.metric, task=args.task,
        filter=args.filter, compare=args.compare, unpaired=args.unpaired,
        cluster=args.cluster, reference=args.reference, correction=args.correction,
        claim=args.claim, margin=margin, gate=args.gate, alpha=args.alpha,
        protocols=None if args.protocols is None else tuple(args.protocols), params=params,
        percent=args.percent,
        metric_range=None if args.metric_range is None else tuple(args.metric_range),
        partial_credit=args.partial_credit, seed=args.seed, json=args.json,
        format=output, log_format=log_format, max_member_bytes=max_member,
        forest=args.forest, leaderboard=args.leaderboard, stream=args.stream,
        stream_method=args.stream_method or STREAM_METHODS[0])


def check_margin(margin, metric_range, percent, claim) -> float:
    """The margin in the file's units, refused where it cannot be meant (5 on fractions:
    :func:`protocols.claims.check_margin`'s hint); 0 only for superiority."""
    check_number(margin, "--margin", low=0.0, high=MAX_RANGE)
    if margin == 0:
        if claim != "superiority":
            raise InvalidParameterError(f"--margin must be > 0 for --claim {claim}")
        return 0.0
    score_range = (metric_range if metric_range is not None
                   else (0.0, 100.0) if percent else (0.0, 1.0))
    margin = check_claim_margin(margin, score_range, "--margin")
    if margin >= score_range[1] - score_range[0]:
        raise InvalidParameterError(f"--margin {margin:g} is not below the width of the metric's "
                                    f"range [{score_range[0]:g}, {score_range[1]:g}]")
    return float(margin)


def _load(config: EvalConfig):
    scale = 0.01 if config.percent else 1.0
    if config.arms:
        loaded = read_log_arms(config.arms, metric=config.metric, task=config.task,
                               filter=config.filter, scale=scale, cluster=config.cluster,
                               partial_credit=config.partial_credit, fmt=config.log_format,
                               max_member_bytes=config.max_member_bytes)
    else:
        loaded = read_tidy(config.results or example_path(), percent=config.percent,
                           metric_range=config.metric_range,
                           partial_credit=config.partial_credit, cluster=config.cluster)
        return loaded
    declared = config.metric_range is not None
    check_arm_scores(loaded.scores, value_range=config.metric_range if declared
                     else (0.0, 1.0), percent=config.percent, declared=declared,
                     partial=config.partial_credit)
    return loaded


@dataclass(frozen=True)
class Evaluation:
    """Everything one evaluation computed, before it is written in any format.

    Attributes
    ----------
    config : EvalConfig
    analysis : reports.evaluate.compare.Analysis
        The design, the comparisons, the claim and gate.
    units : reports.evaluate.render.Units
    scores : evalcal_core.scores.ArmScores
    rows, skipped, notes : list, dict, list
        The two-arm table of every applicable protocol (empty with more arms).
    table : str
        That table as text.
    pre : list of str
        Lines the text output prints before the comparisons (log matching, reader notes).
    paired_logs : object or None
        The harness logs' run matching, when the arms came from logs.
    """

    config: EvalConfig
    analysis: object
    units: Units
    scores: object
    rows: list
    skipped: dict
    notes: list
    table: str
    pre: list
    paired_logs: object = None
    board: object = None
    board_unit: str = ""
    design: object = None
    stream: dict | None = None

    @property
    def exit_status(self) -> int:
        """The command's exit status: ``--gate``'s verdict (the anytime-valid one with
        ``--stream``), else 0."""
        if self.analysis is None:
            return 0
        if self.config.gate and self.stream is not None and "claim" in self.stream:
            return EXIT_STATUS[self.stream["claim"]["verdict"]]
        gate = self.analysis.gate
        return gate if (self.config.gate and gate is not None) else 0

    def to_dict(self) -> dict:
        """The ``--json`` body."""
        config, scores, units = self.config, self.scores, self.units
        # ragged (independent) seeds: no one k, so each arm's
        k = dict(zip(scores.arms, scores.seed_counts)) if scores.ragged else scores.r
        extra = {"source": scores.source, "k": k, "n": scores.n, "alpha": config.alpha}
        if self.board is not None:
            return {"design": design_json(self.design), **extra,
                    "leaderboard": board_json(self.board, list(scores.arms), units,
                                              self.board_unit),
                    **({"forest": config.forest} if config.forest else {})}
        body = as_json(self.analysis, units, extra=extra)
        if scores.m == 2 and not scores.ragged:
            body["rows"] = clean([_row_json(r, units) for r in self.rows])
            body["not_applicable"] = self.skipped
            body["notes"] = self.notes
        if self.paired_logs is not None:
            dropped = self.paired_logs.dropped
            if scores.m == 2:
                body["matching"] = {"matched": scores.n,
                                    "dropped_baseline": list(dropped[scores.arms[0]]),
                                    "dropped_variant": list(dropped[scores.arms[1]])}
            else:
                body["matching"] = {"matched": scores.n,
                                    "dropped": {a: list(dropped[a]) for a in scores.arms}}
            body["runs_matched_by"] = self.paired_logs.matched_by
        if config.forest:
            body["forest"] = config.forest
        if self.stream is not None:
            body["stream"] = self.stream
        return body

    @property
    def frame(self):
        """One row per comparison (the ``comparisons`` of :meth:`to_dict`), or per system
        with ``--leaderboard``, a DataFrame."""
        import pandas as pd

        body = self.to_dict()
        if self.board is not None:
            return pd.DataFrame(body["leaderboard"]["rows"])
        return pd.DataFrame(body["comparisons"])

    def to_frame(self):
        """:attr:`frame`: the comparisons (or the leaderboard) as a DataFrame."""
        return self.frame

    def to_markdown(self) -> str:
        """``render("markdown")``: what ``--format markdown`` prints."""
        return self.render("markdown")

    def __str__(self) -> str:
        return self.render("text")

    def _repr_html_(self) -> str:
        """The design line and the comparisons table, for notebooks."""
        import html

        lines = ([design_line(self.design), board_summary(self.board, self.board_unit)]
                 if self.board is not None else header_lines(self.analysis, self.units))
        head = "<br>".join(html.escape(line) for line in lines)
        return f"<p>{head}</p>" + self.frame.to_html(index=False, na_rep="")

    def render(self, fmt: str = "text") -> str:
        """The output in ``fmt`` (text, markdown, latex or json), as the command writes it."""
        if fmt == "json":
            return json.dumps(self.to_dict(), indent=2)
        if self.board is not None and fmt in ("text", "markdown"):
            head = [f"Results: {self.scores.source}"] if fmt == "text" else []
            return board_text(head + self.pre + [design_line(self.design)], self.board,
                              list(self.scores.arms), self.units, self.board_unit, fmt)
        if self.board is not None:
            raise InvalidParameterError("--leaderboard writes text, markdown or json; not latex")
        if fmt == "markdown":
            return markdown(self.analysis, self.units, source=self.scores.source)
        if fmt == "latex":
            return latex(self.analysis, self.units, source=self.scores.source)
        if fmt != "text":
            raise InvalidParameterError(f"format {fmt!r} is not an output format; allowed: text, "
                                        "markdown, latex, json")
        out = text(self.analysis, self.units, source=self.scores.source, pre=self.pre,
                   protocol_table=self.table)
        if self.stream is not None:
            out += "\n\n" + "\n".join(stream_lines(self.stream, list(self.scores.arms),
                                                    self.units, gate=self.config.gate))
        return out


def evaluate(config: EvalConfig) -> Evaluation:
    """Load, infer the design, compare the arms and tabulate the protocols: no output."""
    loaded = _load(config)
    scores = loaded.scores
    design = infer_design(scores, compare=config.compare, unpaired=config.unpaired,
                          runs_from=loaded.runs_from)
    binary = bool(np.isin(scores.scores, (0.0, 1.0)).all()) and loaded.per_question
    fraction = config.metric_range is None
    if config.leaderboard:
        board, unit = rank_board(scores, design, cluster_codes(scores),
                                 alpha=check_alpha(config.alpha), seed=config.seed)
        return Evaluation(config, None, Units(fraction, scores.metric), scores, [], {}, [],
                          "", list(scores.notes), loaded.paired_logs, board, unit, design)
    analysis = compare_arms(scores, design, alpha=check_alpha(config.alpha),
                            correction=config.correction, reference=config.reference,
                            claim=config.claim, margin=config.margin, fraction=fraction,
                            seed=config.seed, binary=binary)
    units = Units(fraction, scores.metric)
    pre = list(scores.notes)
    if loaded.paired_logs is not None:
        pre = loaded.paired_logs.summary_lines() + pre
    table, rows, skipped, notes = "", [], {}, []
    if scores.m == 2 and not scores.ragged:  # ragged: unequal seed counts cannot be paired
        base, var = scores.arm(scores.arms[0]), scores.arm(scores.arms[1])
        rows, skipped = evaluate_protocols(
            base, var, kind=design.kind, alpha=config.alpha, protocols=config.protocols,
            rng=config.seed, params=config.params, clusters=cluster_codes(scores),
            factor=units.factor)
        notes = notes_for(base, var, config.alpha, rows, kind=design.kind,
                          factor=units.factor, unit=units.name, names_=scores.arms)
        # the notes name the arms: one line each in the text table (newlines escaped)
        table = format_table(rows, skipped, [visible(n) for n in notes], config.alpha,
                             unit=units.short or "metric units")
    stream = (stream_summary(scores, design, check_alpha(config.alpha), units,
                             method=config.stream_method, claim=config.claim,
                             margin=config.margin) if config.stream else None)
    return Evaluation(config, analysis, units, scores, rows, skipped, notes, table, pre,
                      loaded.paired_logs, design=design, stream=stream)


def run_config(config: EvalConfig, out=None) -> int:
    """Run one evaluation and write its output; the exit status (``--gate`` decides it)."""
    out = out or sys.stdout
    result = evaluate(config)
    if config.forest and result.board is not None:
        from .board_plot import write_board_plot
        write_board_plot(result.board, list(result.scores.arms), config.forest,
                         fraction=result.units.fraction, unit=result.board_unit)
    elif config.forest:
        from .forest import forest_plot
        forest_plot(result.analysis, result.units, config.forest)
    out.write(result.render("json" if config.json else config.format) + "\n")
    return result.exit_status


def _row_json(row, units) -> dict:
    """A protocol row for --json: ``estimate``/``ci_low``/``ci_high`` with their ``unit``;
    the ``*_pp`` names too (kept for scripts) only where the unit is pp."""
    out = asdict(row)
    pp = {k: out.pop(k) for k in ("estimate_pp", "ci_low_pp", "ci_high_pp")}
    out.update(estimate=pp["estimate_pp"], ci_low=pp["ci_low_pp"], ci_high=pp["ci_high_pp"],
               unit=units.name)
    if units.fraction:
        out.update(pp)
    return out


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return run_config(config_from_args(args))


def run() -> None:
    """Console entry point."""
    run_main(main, "python -m protocols.evaluate")
