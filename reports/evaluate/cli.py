"""``python -m reports.evaluate``: arguments -> :class:`~.options.EvalConfig` (the options are
declared in :mod:`.options`) -> :func:`run_config`."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from importlib import resources

from evalcal_core.cli import run_main
from evalcal_core.results_io import check_arm_scores
from evalcal_core.validate import InvalidParameterError, check_alpha, fail
from protocols.analysis import Analysis, Plan, analyze, is_binary
from protocols.analysis.design import infer_design

from .board import board_json, board_text
from .design import design_json, design_line
from .load import read_log_arms, read_tidy
from .options import EvalConfig, build_parser, config_from_args
from .protocols_table import format_table
from .render import (
    Units,
    as_json,
    claim_line,
    clean,
    comparison_headers,
    comparison_rows,
    header_lines,
    latex,
    markdown,
    text,
    visible,
)
from .stream import stream_lines

__all__ = ["EvalConfig", "Evaluation", "build_parser", "config_from_args", "evaluate",
           "example_path", "main", "run", "run_config"]


def example_path() -> str:
    """Path of the example results CSV shipped with the package."""
    return str(resources.files("protocols") / "examples" / "example_results.csv")


def _load(config: EvalConfig):
    scale = 0.01 if config.percent else 1.0
    if config.arms:
        loaded = read_log_arms(config.arms, metric=config.metric, task=config.task,
                               filter=config.filter, scale=scale, cluster=config.cluster,
                               partial_credit=config.partial_credit, fmt=config.log_format,
                               max_member_bytes=config.max_member_bytes)
    else:
        loaded = read_tidy(example_path() if config.results is None else config.results,
                           percent=config.percent, metric_range=config.metric_range,
                           partial_credit=config.partial_credit, cluster=config.cluster,
                           order_by=config.order_by, columns=config.columns,
                           common=config.common_questions)
        if config.partial_credit and not loaded.per_question:
            # it allows non-0/1 scores among per-question ones: a per-seed metric has none
            raise fail("--partial-credit", "given with per-question scores (it allows a few "
                       "scores other than 0 and 1 among them)", got="a per-seed file")
        return loaded
    declared = config.metric_range is not None
    check_arm_scores(loaded.scores, value_range=config.metric_range if declared
                     else (0.0, 1.0), percent=config.percent, declared=declared,
                     partial=config.partial_credit)
    return loaded


@dataclass(frozen=True)
class Evaluation:
    """One evaluation: what was read, and the :class:`protocols.analysis.Analysis` of it,
    before it is written in any format.

    Attributes
    ----------
    config : EvalConfig
    result : protocols.analysis.Analysis
        The design, the comparisons (or the leaderboard), the stream, the claim and gate,
        and the two-arm table of every protocol.
    units : reports.evaluate.render.Units
    scores : evalcal_core.scores.ArmScores
    pre : list of str
        Lines the text output prints before the comparisons (log matching, reader notes).
    paired_logs : object or None
        The harness logs' run matching, when the arms came from logs.
    """

    config: EvalConfig
    result: Analysis
    units: Units
    scores: object
    pre: list
    paired_logs: object = None

    @property
    def analysis(self):
        """The comparisons of the arms (``None`` with ``--leaderboard``)."""
        return self.result.comparisons

    @property
    def design(self):
        return self.result.design

    @property
    def board(self):
        return self.result.board

    @property
    def board_unit(self) -> str:
        return self.result.board_unit

    @property
    def stream(self):
        return self.result.stream

    @property
    def rows(self) -> list:
        return self.result.rows

    @property
    def skipped(self) -> dict:
        return self.result.skipped

    @property
    def notes(self) -> list:
        return self.result.table_notes

    @property
    def table(self) -> str:
        """The two-arm table of every protocol as text ("" when there is none)."""
        if not self.rows and not self.skipped:
            return ""
        # the notes name the arms: one line each in the text table (newlines escaped)
        return format_table(self.rows, self.skipped, [visible(n) for n in self.notes],
                            self.config.alpha, unit=self.units.short or "metric units")

    @property
    def exit_status(self) -> int:
        """The command's exit status: ``--gate``'s verdict (the anytime-valid one with
        ``--stream``, :attr:`protocols.analysis.Analysis.gate`), else 0."""
        gate = self.result.gate
        return gate if (self.config.gate and gate is not None) else 0

    @property
    def evidence(self):
        """The reported protocol's calibration nearest this design
        (:class:`protocols.analysis.evidence.Evidence`; ``None`` with ``--leaderboard``)."""
        return self.result.evidence

    def evidence_lines(self, fmt: str = "text") -> list[str]:
        """The evidence as ``fmt`` prints it (LaTeX: without the command to recompute)."""
        if self.evidence is None:
            return []
        lines = self.evidence.lines(self.config.alpha, self.units.fraction)
        if not self.evidence.found:
            return lines
        *lines, recompute = lines
        lines += [f"  {note}" for note in self.evidence_scope()]
        return lines if fmt == "latex" else [*lines, recompute]

    def evidence_scope(self) -> list[str]:
        """What the evidence table's cells are not: the verdict's multiplicity, its claim."""
        notes = []
        if len(self.analysis.comparisons) > 1:
            notes.append(f"the rates are per comparison, before --correction "
                         f"{self.config.correction}")
        if self.config.claim:
            notes.append(f"the {self.config.claim} claim's test at its margin is not in this "
                         "table: the decision grid scores claims at the margin "
                         "(docs/decision_grid.md)")
        return notes

    @property
    def _streamed(self) -> bool:
        return self.stream is not None and "claim" in self.stream

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
        body = as_json(self.analysis, units, extra=extra, gate=self.result.gate,
                       gate_from=("the anytime-valid stream" if self._streamed
                                  else "the fixed-n claim"))
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
        if self.evidence is not None:
            body["evidence"] = clean({**self.evidence.to_dict(config.alpha, units.fraction),
                                      "scope": self.evidence_scope()})
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

    def __repr__(self) -> str:
        """The verdict as the text output starts: the source, the design, the arms and the
        comparisons table (or the leaderboard); ``str()`` is the whole output."""
        if self.board is not None:
            return self.render("text")
        a, units = self.analysis, self.units
        lines = [f"Results: {visible(self.scores.source)}", *header_lines(a, units), ""]
        rows = comparison_rows(a, units)
        heads = comparison_headers(a, units)
        widths = [max(len(str(x)) for x in col) for col in zip(heads, *rows)]
        table = ["  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip()
                 for r in (heads, *rows)]
        lines += [table[0], "-" * len(table[0]), *table[1:]]
        if a.claim:
            lines += ["", claim_line(a, units, self._streamed)]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The design, the verdict table and the evidence as HTML, for notebooks
        (:mod:`.html`; :meth:`page` adds the plot, the notes and the harness default)."""
        from .html import design_html, evidence_html, verdict_html

        return f"<div>{design_html(self)}{verdict_html(self)}{evidence_html(self)}</div>"

    def page(self, *, harness_table=None) -> str:
        """The ``--html`` page: one self-contained HTML string (:func:`.html.page`)."""
        from .html import page

        return page(self, harness_table=harness_table)

    def write_page(self, path, *, harness_table=None) -> str:
        """Write :meth:`page` to ``path`` (``.html``) atomically; returns the path."""
        from .html import write_page

        return write_page(self, path, harness_table=harness_table)

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
            return markdown(self.analysis, self.units, source=self.scores.source,
                            streamed=self._streamed, evidence=self.evidence_lines(fmt))
        if fmt == "latex":
            return latex(self.analysis, self.units, source=self.scores.source,
                         evidence=self.evidence_lines(fmt))
        if fmt != "text":
            raise InvalidParameterError(f"format {fmt!r} is not an output format; allowed: text, "
                                        "markdown, latex, json")
        out = text(self.analysis, self.units, source=self.scores.source, pre=self.pre,
                   protocol_table=self.table, streamed=self._streamed,
                   evidence=self.evidence_lines(fmt))
        if self.stream is not None:
            out += "\n\n" + "\n".join(stream_lines(self.stream, list(self.scores.arms),
                                                    self.units, gate=self.config.gate))
        return out


def plan_of(config: EvalConfig, fraction: bool, binary: bool) -> Plan:
    """The statistical options of ``config`` as a :class:`protocols.analysis.Plan`."""
    return Plan(alpha=check_alpha(config.alpha), correction=config.correction,
                reference=config.reference, claim=config.claim, margin=config.margin,
                leaderboard=bool(config.leaderboard), stream=bool(config.stream),
                stream_method=config.stream_method,
                protocols=None if config.protocols is None else tuple(config.protocols),
                params=config.params, seed=config.seed, fraction=fraction, binary=binary,
                equal_variances=config.equal_variances,
                lower_is_better=config.lower_is_better)


def evaluate(config: EvalConfig) -> Evaluation:
    """Load, infer the design and :func:`protocols.analysis.analyze`: no output."""
    loaded = _load(config)
    scores = loaded.scores
    design = infer_design(scores, design=config.design, runs_from=loaded.runs_from)
    fraction = config.metric_range is None
    plan = plan_of(config, fraction, is_binary(scores, loaded.per_question))
    result = analyze(scores, design, plan)
    pre = list(scores.notes)
    if loaded.paired_logs is not None and not plan.leaderboard:
        pre = loaded.paired_logs.summary_lines() + pre
    return Evaluation(config, result, Units(fraction, scores.metric), scores, pre,
                      loaded.paired_logs)


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
    if config.html:
        from .html import write_page
        write_page(result, config.html)
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
