"""``evaluate ... --html PAGE.html``: one self-contained page of the user's own comparison.

The page holds, in order: the design and why it was inferred, the verdict table (or the
leaderboard), the forest plot (or the board plot) as an embedded PNG, the anytime-valid
stream's lines with ``--stream``, the evidence for the reported protocol, the notes, and
what the user's harness default says on the same data (:mod:`.harness`). Its CSS is inline
and nothing is fetched: it opens from a file, offline, and can be mailed or attached to a
review. Every user string (names, paths, notes) goes through :func:`html.escape`; a name's
cell may wrap anywhere, so that a long model name is wrapped rather than clipped, and on a
phone each table row becomes a card, every cell under its column's name.

The notebook view (:meth:`~reports.evaluate.cli.Evaluation._repr_html_`) is the same verdict
table and evidence, without the plot.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from evalcal_core.atomic import write_atomic

from .board import board_rows, board_summary
from .forest import check_output_path
from .render import (
    claim_line,
    comparison_headers,
    comparison_rows,
    effect_rows,
    header_lines,
    interval_notes,
    visible,
)

#: the class attributes of a numeric cell, a name's cell (it may break anywhere: a
#: 200-character model name has no space) and a warning (outside the f-strings: Python 3.10
#: allows no backslash inside their braces)
NUM = ' class="num"'
NAME = ' class="name"'
WARN = ' class="warn"'

#: resolution of the embedded plot, dots per inch (sharp on a high-density screen)
PAGE_DPI = 144

STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1b1b;
       margin: 0 auto; padding: 12px 16px 40px; max-width: 1200px; }
h1 { font-size: 1.35em; margin: 0.4em 0; }
h2 { font-size: 1.1em; margin: 1.4em 0 0.4em; border-bottom: 1px solid #ddd; }
p, li, h1, h2, figcaption, code { overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: 0.5em 0; font-size: 0.93em; }
th, td { border: 1px solid #d4d4d4; padding: 4px 6px; text-align: left;
         vertical-align: top; overflow-wrap: break-word; }
td.name { overflow-wrap: anywhere; min-width: 7em; }
figure { margin: 0.5em 0; }
th { background: #f3f3f3; }
td.num { text-align: right; white-space: nowrap; }
tr.yes td { background: #eef6ee; }
img { max-width: 100%; height: auto; display: block; margin: 0.5em 0; }
.design { background: #f6f8fa; border-left: 4px solid #4a78b0; padding: 6px 10px; }
.warn { color: #8a3b00; }
ul { padding-left: 1.3em; }
code { background: #f3f3f3; padding: 0 3px; }
/* a phone: each row a card, each cell under its column's name (six columns of numbers and
   verdicts do not fit 390 px side by side) */
@media (max-width: 600px) { body { font-size: 14px; padding: 8px; }
  table, tbody, tr, td { display: block; width: auto; } thead { display: none; }
  tr { border: 1px solid #d4d4d4; margin: 0 0 6px; }
  td, td.num { border: 0; padding: 1px 6px; text-align: left; white-space: normal; }
  td.name { min-width: 0; font-weight: 600; }
  td::before { content: attr(data-label) ": "; color: #555; font-weight: normal; } }
"""


def check_html_path(path, option: str = "--html") -> Path:
    """Refuse an HTML page path that is empty, lacks ``.html`` (or ``.htm``) or names no
    regular file, before any work (as :func:`.forest.check_forest_path` does for PNGs).

    Raises
    ------
    ValueError
        One line naming ``option``, the value and what is allowed.
    """
    return check_output_path(path, option, (".html", ".htm"), "an HTML page path")


def _e(x) -> str:
    """A user string as HTML text: on one line (:func:`.render.visible`), escaped."""
    return html.escape(visible(x), quote=True)


def _table(headers, rows, numeric=(), row_class=None, names=(0,)) -> str:
    """An HTML table; ``numeric``: column indexes aligned right and kept on one line;
    ``names``: columns of names, which wrap anywhere; ``row_class``: a class per row (or
    ``None``)."""
    head = "".join(f"<th scope=\"col\">{_e(h)}</th>" for h in headers)
    labels = [f" data-label=\"{_e(h)}\"" for h in headers]
    body = []
    for i, row in enumerate(rows):
        cls = f" class=\"{row_class[i]}\"" if row_class and row_class[i] else ""
        cells = "".join(f"<td{NUM if c in numeric else NAME if c in names else ''}{labels[c]}>"
                        f"{_e(x)}</td>" for c, x in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _list(items) -> str:
    items = [i for i in items if str(i).strip()]
    return "<ul>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>" if items else ""


def design_html(evaluation) -> str:
    """The design line and why (its inference reasons, or "declared")."""
    design = evaluation.design
    why = ("inferred: " + "; ".join(design.inferred) if design.inferred
           else "declared with --design")
    return (f"<p class=\"design\"><strong>design: {_e(design.describe())}</strong><br>"
            f"{_e(why)}</p>")


def verdict_html(evaluation) -> str:
    """The verdict: the comparisons table (with the effect sizes and the claim) or the
    leaderboard, as HTML."""
    units = evaluation.units
    if evaluation.board is not None:
        rows = board_rows(evaluation.board, list(evaluation.scores.arms), units)
        mean_head = "mean (%)" if units.fraction else "mean"
        cells = [[r["rank"], r["tier"], r["system"], f"{r['mean']:.2f}",
                  f"[{r['rank_low']}, {r['rank_high']}]", "yes" if r["possibly_best"] else ""]
                 for r in rows]
        return (f"<p>{_e(board_summary(evaluation.board, evaluation.board_unit))}</p>"
                + _table(["rank", "tier", "system", mean_head, "rank interval",
                          "possibly best"], cells, numeric=(0, 1, 3), names=(2,),
                         row_class=["yes" if r["possibly_best"] else "" for r in rows]))
    a = evaluation.analysis
    head = header_lines(a, units)[1:]  # the design line has its own block
    out = [f"<p>{'<br>'.join(_e(line) for line in head)}</p>",
           _table(comparison_headers(a, units), comparison_rows(a, units), numeric=(1, 3, 4),
                  row_class=["yes" if c.significant else "" for c in a.comparisons])]
    out.append(_table(["comparison", f"{a.comparisons[0].d_kind} "
                       f"[{100 * (1 - a.alpha):g}% CI]",
                       "relative error reduction [simultaneous CI]"], effect_rows(a)))
    if a.claim:
        out.append(f"<p><strong>{_e(claim_line(a, units, evaluation._streamed))}</strong></p>")
    return "".join(out)


def evidence_html(evaluation) -> str:
    """The evidence for the reported protocol (its first line a heading, the cells a list)."""
    lines = evaluation.evidence_lines()
    if not lines:
        return ""
    rest = [line.strip() for line in lines[1:]]
    items = "".join(f"<li{WARN if line.startswith('warning') else ''}>{_e(line)}</li>"
                    for line in rest)
    return f"<p>{_e(lines[0])}</p><ul>{items}</ul>"


def notes_html(evaluation) -> str:
    """What was read (log matching, reader notes) and the verdict's notes."""
    notes = list(evaluation.pre)
    if evaluation.analysis is not None:
        notes += [*evaluation.analysis.notes, *interval_notes(evaluation.analysis,
                                                              evaluation.units)]
    return _list(notes)


def harness_html(evaluation, table=None) -> str:
    """What the logs' harness default says on the same arms, with its measured error."""
    from .harness import harness_view

    view = harness_view(evaluation, table)
    if view is None:
        why = ("the leaderboard ranks every system at once: no harness default compares "
               "them" if evaluation.board is not None else
               "the arms came from a results CSV, not harness logs (--arm NAME=PATH): no "
               "harness default to compare")
        return f"<p>{_e(why)}</p>"
    if not view.protocol:
        return f"<p>{_e(view.note)}</p>"
    units = evaluation.units
    out = [f"<p>The {_e(', '.join(view.formats))} logs' default comparison, "
           f"<code>{_e(view.protocol)}</code> ({_e(view.harness)}), on the same arms:</p>"]
    rows = []
    for c, row, why in view.rows:
        pair = f"{visible(c.variant)} - {visible(c.base)}"
        ours = "significant" if c.significant else "not significant"
        if row is None:
            rows.append([pair, "cannot run: " + why, "", ours])
            continue
        interval = ("" if row.ci_low_pp is None else
                    f"[{row.ci_low_pp:+.2f}, {row.ci_high_pp:+.2f}]")
        theirs = "significant" if row.significant else "not significant"
        rows.append([pair, f"{row.estimate_pp:+.2f} {units.short} {interval}".strip(), theirs,
                     ours + (" (agrees)" if theirs == ours else " (differs)")])
    out.append(_table(["comparison", f"harness estimate ({units.name}) [its interval]",
                       "harness verdict", f"evalcal's verdict ({evaluation.analysis.primary})"],
                      rows))
    labels = dict.fromkeys(row.pitfall for _, row, _ in view.rows if row is not None
                           and row.pitfall)
    out += [f"<p>Under this design evalcal labels it: {_e(label)}.</p>" for label in labels]
    m = view.measured
    if m is not None:
        worst = f"; the worst of the {m['tied']} rows of this shape" if m["tied"] > 1 else ""
        out.append(f"<p>Measured false-positive rate of <code>{_e(view.protocol)}</code> at "
                   f"level {evaluation.config.alpha:g}, nearest cell ({_e(m['group'])}, "
                   f"{int(m['n_questions']):,} questions, {int(m['k'])} run(s) per arm"
                   f"{worst}): <strong>{100 * m['rate']:.1f}%</strong> "
                   f"[{100 * m['rate_low']:.1f}%, {100 * m['rate_high']:.1f}%] "
                   f"({_e(m['state'])}, {int(m['sims']):,} experiments), from "
                   f"{_e(view.source)}.</p>")
    else:
        out.append(f"<p>{_e(view.note)}.</p>")
    return "".join(out)


def plot_png(evaluation) -> bytes:
    """The forest plot (or, with ``--leaderboard``, the board plot) as PNG bytes."""
    from .._save import png_bytes

    if evaluation.board is not None:
        from .board_plot import board_figure
        fig = board_figure(evaluation.board, list(evaluation.scores.arms),
                           fraction=evaluation.units.fraction, unit=evaluation.board_unit)
    else:
        from .forest import forest_figure
        fig = forest_figure(evaluation.analysis, evaluation.units)
    return png_bytes(fig, dpi=PAGE_DPI)


def page(evaluation, *, harness_table=None) -> str:
    """The whole page as one HTML string (inline CSS, the plot as a base64 PNG).

    Parameters
    ----------
    evaluation : reports.evaluate.cli.Evaluation
    harness_table : path, optional
        A harness-defaults CSV for the harness default's measured rate (default: the shipped
        one, if any).
    """
    source = evaluation.scores.source
    image = base64.b64encode(plot_png(evaluation)).decode("ascii")
    kind = "board plot" if evaluation.board is not None else "forest plot"
    if evaluation.board is not None:
        caption = "rank intervals and tiers, best first"
    else:
        from .forest import drawn_intervals

        drawn = drawn_intervals(evaluation.analysis)
        caption = ("each comparison's difference; " + drawn if drawn else
                   "each comparison's estimate alone: none was given a verdict, so no "
                   "interval is drawn (see the notes)")
    sections = [
        f"<h1>evalcal: {_e(source)}</h1>",
        "<h2>Design</h2>", design_html(evaluation),
        "<h2>Verdict</h2>", verdict_html(evaluation),
        f"<h2>{kind.capitalize()}</h2>",
        f"<figure><img alt=\"{_e(kind)} of the comparison\" "
        f"src=\"data:image/png;base64,{image}\"><figcaption>{_e(caption)}</figcaption>"
        "</figure>"]
    if evaluation.stream is not None:
        from .stream import stream_lines
        lines = stream_lines(evaluation.stream, list(evaluation.scores.arms), evaluation.units,
                             gate=evaluation.config.gate)
        sections += ["<h2>Anytime-valid stream (--stream)</h2>", _list(lines)]
    evidence = evidence_html(evaluation)
    if evidence:
        sections += ["<h2>Evidence for the reported protocol</h2>", evidence]
    notes = notes_html(evaluation)
    if notes:
        sections += ["<h2>Notes</h2>", notes]
    sections += ["<h2>What your harness default says on the same data</h2>",
                 harness_html(evaluation, harness_table)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>evalcal: {_e(source)}</title><style>{STYLE}</style></head><body>"
            + "\n".join(sections) + "\n</body></html>\n")


def write_page(evaluation, path, *, harness_table=None) -> str:
    """Write :func:`page` to ``path`` atomically (a reader never sees half a page)."""
    path = check_html_path(path)
    write_atomic(path, page(evaluation, harness_table=harness_table))
    return str(path)
