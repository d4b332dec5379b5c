"""The front page of ``reports.build``: ``index.html``, the page a reviewer is sent.

Self-contained (figures embedded as base64 PNG, no script, no external resource). Every
number in its tables is a :class:`reports._report_page.Num` naming the CSV cell it shows
(``data-src="calibrate/calibration.csv:12:rate"``), so a test re-reads the CSVs and compares.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

import pandas as pd

import protocols
from evalcal_core import scenarios
from evalcal_core.atomic import write_atomic

from ._report_page import (
    BANNER_CSS,
    MIN_JUDGED_SIMS,
    CsvCite,
    Raw,
    banner_html,
    quick_banner,
    to_html,
)
from .figure_styles import is_pitfall, is_recommended, protocol_order
from .words import setting_words

_CSS = """
body { font-family: sans-serif; max-width: 1180px; margin: 1.5em auto; padding: 0 1em;
       color: #111; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 2px solid #333; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
figure { margin: 1em 0; } figcaption { color: #444; font-size: 0.92em; }
img { max-width: 100%; height: auto; border: 1px solid #ddd; display: block; }
pre, code { background: #f3f3f3; font-size: 0.9em; }
pre { padding: 0.5em; white-space: pre-wrap; overflow-wrap: anywhere; }
code { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.82em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.4em; text-align: right; }
th { white-space: normal; } span.ci { white-space: nowrap; }
th { background: #eee; }
th:first-child, td:first-child { text-align: left; }
td.text { text-align: left; }
td.why { text-align: left; white-space: normal; min-width: 24em; }
td.cells { text-align: left; white-space: normal; } span.item { white-space: nowrap; }
#calibration-searched th:last-child { text-align: left; }
#seed-budget th { white-space: normal; }
span.high { background: #fde2d8; }
tr.pitfall td { color: #666; font-style: italic; }
tr.recommended td { font-weight: bold; background: #eef5ff; }
td.high { background: #fde2d8; }
.num { font-variant-numeric: tabular-nums; }
.ci { color: #555; font-size: 0.9em; }
.note { color: #7a4a00; } .failed { color: #a00000; font-weight: bold; }
.toc li { margin: 0.1em 0; }
""" + BANNER_CSS


def _esc(text) -> str:
    return html.escape(str(text))


def _img(path: Path, alt: str, caption: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img alt="{_esc(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{caption}</figcaption></figure>")


def _table(header, rows, classes=None, *, table_id: str) -> str:
    """``rows`` of cells (lists of text and Num parts); ``classes`` per row (or None)."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{classes[i]}"' if classes and classes[i] else ""
        cells = []
        for cell in row:
            attrs = ""
            if isinstance(cell, tuple):  # (parts, td class)
                cell, td = cell
                attrs = f' class="{td}"'
            cells.append(f"<td{attrs}>{to_html(cell if isinstance(cell, list) else [cell])}"
                         "</td>")
        body.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    return (f'<div class="scroll"><table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>'
            + "".join(body) + "</tbody></table></div>")


def _rate_cell(cite: CsvCite, row: int, digits: int = 1) -> list:
    """``4.5 [2.1, 8.3]`` in percent: the rate and its 95% Wilson interval."""
    return [cite.pct(row, digits=digits), Raw(' <span class="ci">'), "[",
            cite.pct(row, "rate_low", digits), ", ", cite.pct(row, "rate_high", digits), "]",
            Raw("</span>")]


def _row_class(name: str, judged: bool = True) -> str:
    if is_recommended(name) and judged:
        return "recommended"
    return "pitfall" if is_pitfall(name) else ""


def _protocol_label(name: str, judged: bool = True) -> str:
    if is_recommended(name) and judged:
        return f"{name} (recommended)"
    return f"{name} (pitfall)" if is_pitfall(name) else name


def pitfall_notes(names) -> str:
    """One line naming the pitfall that each pitfall protocol of ``names`` illustrates."""
    items = [f"<b>{_esc(n)}</b>: {_esc(protocols.protocol_class(n).pitfall)}"
             for n in protocol_order(names) if is_pitfall(n)]
    return ("<p>Pitfall protocols (kept for teaching; do not report them): "
            + "; ".join(items) + ".</p>") if items else ""


def _searched(frame: pd.DataFrame) -> pd.Series:
    """Rows added by the seed-budget search, not asked for by the grid (``searched``)."""
    if "searched" not in frame:
        return pd.Series(False, index=frame.index)
    return frame["searched"].fillna(False).astype(bool)


def judged(frame: pd.DataFrame) -> bool:
    """Whether every cell of ``frame`` has :data:`MIN_JUDGED_SIMS` simulations or more: only
    then does the page shade, bold or recommend (a quick build's cells do not)."""
    return bool(len(frame)) and int(frame["sims"].min()) >= MIN_JUDGED_SIMS


def calibration_tables(folder: Path, csv_prefix: str) -> str:
    """Rejection rate (%) with its 95% Wilson interval, protocol by k, one table per effect.

    The tables hold the requested grid only (its k columns); the cells the seed-budget search
    measured besides (``searched``) follow in one table of their own, so that a k outside
    the grid never widens the main tables. False-positive cells whose whole interval lies
    above alpha are shaded, and the recommended protocol's row is bold, only when every cell
    has :data:`MIN_JUDGED_SIMS` simulations (:func:`judged`).
    """
    frame = pd.read_csv(folder / "calibration.csv")
    cite = CsvCite(f"{csv_prefix}calibration.csv", frame)
    ok = judged(frame)
    searched = _searched(frame)
    out = []
    several = frame["generator_params"].nunique() > 1
    grid = frame[~searched]
    for number, ((params, effect), part) in enumerate(
            grid.groupby(["generator_params", "effect_pp"], sort=True)):
        alpha = float(part["alpha"].iloc[0])
        ks = sorted(part["k"].unique())
        what = ("false-positive rate (%), no true effect" if effect == 0
                else f"power (%), true effect +{effect:g} pp")
        sims = int(part["sims"].iloc[0])
        if several:
            what = f"{setting_words(params)}: {what}"
        out.append(f"<h4>{_esc(what)} — {sims} simulated experiments per cell, 95% Wilson "
                   f"interval in brackets</h4>")
        rows, classes = [], []
        for name in protocol_order(part["protocol"].unique()):
            cells = [_protocol_label(name, ok)]
            for k in ks:
                hit = part.index[(part["protocol"] == name) & (part["k"] == k)]
                if len(hit) == 0:
                    cells.append("–")
                    continue
                i = int(hit[0])
                # power to the whole percent keeps eight k on one line; the false-positive
                # rate, compared with alpha, keeps a decimal
                rate = _rate_cell(cite, i, 1 if effect == 0 else 0)
                high = ok and _above_alpha(frame, i, effect, alpha)
                cells.append((rate, "high") if high else rate)
            rows.append(cells)
            classes.append(_row_class(name, ok))
        out.append(_table(["protocol"] + [f"k = {k}" for k in ks], rows, classes,
                          table_id=f"calibration-{number}"))
    if searched.any():
        out.append(searched_table(frame, searched, cite, ok))
    return "\n".join(out)


def _above_alpha(frame: pd.DataFrame, i: int, effect: float, alpha: float) -> bool:
    """A false-positive cell whose whole 95% interval lies above alpha."""
    return bool(effect == 0 and frame.at[i, "rate_low"] > alpha)


def searched_table(frame: pd.DataFrame, searched: pd.Series, cite: CsvCite,
                   ok: bool = True) -> str:
    """The cells the seed-budget search measured outside the requested grid: one row per
    setting, effect and protocol, its cells (``k = 12: 84 [78, 88]``) on one wrapping line."""
    extra = frame[searched]
    ks = sorted(int(k) for k in extra["k"].unique())
    sims = sorted(int(n) for n in extra["sims"].unique())
    count = f"{sims[0]}" if len(sims) == 1 else f"{sims[0]}–{sims[-1]}"
    several = frame["generator_params"].nunique() > 1
    rows, classes = [], []
    for (params, effect), part in extra.groupby(["generator_params", "effect_pp"], sort=True):
        alpha = float(part["alpha"].iloc[0])
        for name in protocol_order(part["protocol"].unique()):
            cells = []
            for i in part[part["protocol"] == name].sort_values("k").index:
                i = int(i)
                rate = _rate_cell(cite, i, 1 if effect == 0 else 0)
                if ok and _above_alpha(frame, i, effect, alpha):
                    rate = [Raw('<span class="high">'), *rate, Raw("</span>")]
                # one cell never breaks inside; the line breaks between cells
                cells += (["; "] if cells else []) + [
                    Raw('<span class="item">'), f"k = {int(frame.at[i, 'k'])}: ", *rate,
                    Raw("</span>")]
            row = [_protocol_label(name, ok)]
            if several:
                row.append((setting_words(params), "text"))
            row += ["no effect (FPR)" if effect == 0 else f"+{effect:g} pp", (cells, "cells")]
            rows.append(row)
            classes.append(_row_class(name, ok))
    header = (["protocol"] + (["setting"] if several else [])
              + ["true effect", "rate (%) by k, 95% Wilson interval in brackets"])
    return (f"<h4>Cells measured by the seed-budget search: k = "
            f"{_esc(', '.join(map(str, ks)))}</h4><p>Outside the requested grid, measured "
            f"while the seed budget searched for the smallest k reaching the target power, "
            f"{count} simulated experiments per cell. They are kept apart so the tables above "
            f"show the grid asked for.</p>"
            + _table(header, rows, classes, table_id="calibration-searched"))


def budget_table(folder: Path, csv_prefix: str, ok: bool = True) -> str:
    """The seed budget: whether each protocol is recommended (and why not), and the smallest
    k reaching 80% and 90% power, per protocol and effect. With ``ok`` False (too few
    simulations, :func:`judged`) nothing is recommended: the column says so."""
    frame = pd.read_csv(folder / "seed_budget.csv", dtype={"k_power_80": str,
                                                           "k_power_90": str,
                                                           "recommended": str, "why": str})
    cite = CsvCite(f"{csv_prefix}seed_budget.csv", frame)
    rows, classes = [], []
    order = {n: i for i, n in enumerate(protocol_order(frame["protocol"].unique()))}
    ranked = sorted(frame.index, key=lambda i: (frame.at[i, "generator_params"],
                                                frame.at[i, "effect_pp"],
                                                order[frame.at[i, "protocol"]]))
    several = frame["generator_params"].nunique() > 1
    for i in ranked:
        name = frame.at[i, "protocol"]
        cells = [_protocol_label(name, ok)]
        if several:
            cells.append((setting_words(frame.at[i, "generator_params"]), "text"))
        cells += [["+", cite.num(i, "effect_pp", "g"), " pp"],
                  [cite.pct(i, "max_fpr")] if pd.notna(frame.at[i, "max_fpr"]) else "–",
                  # a quick run answers no k: its cells cannot place a power or a rate
                  str(frame.at[i, "k_power_80"]) if ok else "–",
                  str(frame.at[i, "k_power_90"]) if ok else "–",
                  (_recommendation(frame, i) if ok else NOT_JUDGED, "why")]
        rows.append(cells)
        classes.append(_row_class(name, ok))
    header = (["protocol"] + (["setting"] if several else [])
              + ["true effect", "largest FPR over k (%)", "smallest k, 80% power",
                 "smallest k, 90% power", "recommended by the seed budget?"])
    return _table(header, rows, classes, table_id="seed-budget")


#: the seed budget's column when the cells are too few to judge
NOT_JUDGED = (f"not judged: fewer than {MIN_JUDGED_SIMS:,} simulations per cell (a quick "
              f"run)")


def _recommendation(frame: pd.DataFrame, i) -> str:
    """``yes``, or ``no:`` and the reason the seed budget gives."""
    if frame.at[i, "recommended"] == "yes":
        return "yes"
    why = frame.at[i, "why"]
    return "no: " + (why if isinstance(why, str) else "not shown valid")


def _p_format(p: float) -> str:
    """Four decimals, or two significant digits in scientific notation below 0.0001."""
    return ".1e" if p < 1e-4 else ".4f"


def _is_null(scenario: str) -> bool:
    try:
        return scenarios.scenario(scenario).null
    except ValueError:
        return False


def paper_table_html(folder: Path, csv_prefix: str) -> str:
    """``paper_table.csv`` as an HTML table (deltas in pp, p-values to 4 places)."""
    frame = pd.read_csv(folder / "paper_table.csv")
    cite = CsvCite(f"{csv_prefix}paper_table.csv", frame)
    rows, classes = [], []
    for i in frame.index:
        verdict = "significant" if bool(frame.at[i, "paired_verdict"]) else "not significant"
        rows.append([
            (str(frame.at[i, "dataset"]), "text"),
            (str(frame.at[i, "scenario"]) + (" (true null)" if _is_null(frame.at[i, "scenario"])
                                             else ""), "text"),
            [cite.num(i, "k", "d")], [cite.num(i, "single_run_delta_pp", "+.2f")],
            [cite.num(i, "mean_delta_pp", "+.2f")],
            ["[", cite.num(i, "bca_low_pp", "+.2f"), ", ", cite.num(i, "bca_high_pp", "+.2f"),
             "]"],
            [cite.num(i, "sign_flip_p", _p_format(frame.at[i, "sign_flip_p"]))],
            [cite.num(i, "welch_p", _p_format(frame.at[i, "welch_p"]))],
            (verdict, "text")])
        classes.append("recommended" if verdict == "significant" else "")
    header = ["dataset", "scenario", "k", "single-run Δ (pp)", "mean Δ (pp)",
              "BCa 95% CI (pp)", "sign-flip p", "Welch p", "paired_bca_perm"]
    return _table(header, rows, classes, table_id="paper-table")


def _commands(step) -> str:
    return f"<p>Rebuild this part:</p><pre><code>{_esc(step.command)}</code></pre>"


def _section_calibrate(out: Path, outcome) -> list[str]:
    folder = out / outcome.step.name
    parts = []
    png = folder / "power_curves.png"
    if png.exists():
        parts.append(_img(png, "power curves", (
            "Rejection rate against the number of seeds per arm. First panel: false-positive "
            "rate (no true effect), zoomed on the nominal level, with every off-scale rate "
            "written under a caret at the top edge; the others: power at each true effect, "
            "with the target power (dashed) and, on a dotted drop line, the k at which the "
            "recommended protocol reaches it (the seed budget's k when it recommends one). "
            "The recommended protocol is the thick blue line, drawn on top; a curve identical "
            "to one drawn over it has hollow markers and is named in the panel's title; "
            "pitfalls are grey and dashed (faded in the power panels: the power of a test "
            "that does not hold its level means nothing).")))
    parts.append("<h3>Seed budget</h3><p>How many seeds per arm reach 80% and 90% power. A "
                 "protocol is recommended only if it is no pitfall for the design and its "
                 "false-positive rate is shown to be at most alpha plus a stated tolerance at "
                 "every k measured (the upper end of its 95% Wilson interval); the others say "
                 "why not, and their power means nothing.</p>")
    ok = judged(pd.read_csv(folder / "calibration.csv"))
    parts.append(budget_table(folder, f"{outcome.step.name}/", ok))
    rule = (f"Cells are shaded and the recommended protocol bolded only with at least "
            f"{MIN_JUDGED_SIMS:,} simulations per cell")
    parts.append("<h3>Calibration summary</h3><p>Shaded false-positive cells: the whole "
                 f"95% interval lies above alpha. Italic grey rows are pitfalls. {rule}"
                 + ("." if ok else " (not so here: nothing is shaded or bolded).")
                 + "</p>")
    parts.append(pitfall_notes(pd.read_csv(folder / "calibration.csv")["protocol"].unique()))
    parts.append(calibration_tables(folder, f"{outcome.step.name}/"))
    return parts


def _section_pitfalls(out: Path, outcome) -> list[str]:
    from .pitfalls import LESSONS  # the lessons live beside their sections

    name = outcome.step.name
    items = "".join(
        f'<li><a href="{name}/index.html#section{n}">Section {n}</a>: {_esc(lesson)}</li>'
        for n, lesson in sorted(LESSONS.items()))
    return [f'<p>The full report, with a figure, the measured numbers and the command for '
            f'each pitfall: <a href="{name}/index.html">{name}/index.html</a> '
            f'(also <a href="{name}/README.md">README.md</a>).</p><ol>{items}</ol>']


def _section_paper_table(out: Path, outcome) -> list[str]:
    folder = out / outcome.step.name
    parts = [paper_table_html(folder, f"{outcome.step.name}/")]
    md = (folder / "paper_table.md").read_text(encoding="utf-8")
    caveats = [line[2:] for line in md.split("Caveats:", 1)[-1].splitlines()
               if line.startswith("* ")]
    if caveats:
        parts.append("<p>Caveats:</p><ul>" + "".join(f"<li>{_esc(c)}</li>" for c in caveats)
                     + "</ul>")
    return parts


def pool_profiles_html(folder: Path, csv_prefix: str) -> str:
    """``pool_profiles.csv`` under its legend, one table per dataset with a column per
    training profile (:func:`reports.pool_profiles.layout`: the default profiles the store
    lacks say "not trained yet")."""
    from . import pool_profiles as pp

    frame = pd.read_csv(folder / "pool_profiles.csv", keep_default_na=False,
                        na_values={c: ["", "nan"] for c in ("value", "low", "high")})
    cite = CsvCite(f"{csv_prefix}pool_profiles.csv", frame)
    shown = pp.shown_profiles(None, frame["profile"].unique())
    parts = [f"<p>{_esc(pp.legend(frame))}</p>"]
    for dataset, head, lines in pp.layout(frame, shown):
        rows = []
        for at in lines:
            cells = [(pp.label(frame.loc[next(i for i in at if i is not None)]), "text")]
            for i in at:
                if i is None or pd.isna(frame.at[i, "value"]):
                    cells.append(["–"])
                    continue
                fmt = pp.value_format(frame.loc[i])
                cell = [cite.num(i, "value", fmt)]
                if pd.notna(frame.at[i, "low"]):
                    cell += [Raw(' <span class="ci">'), "[", cite.num(i, "low", fmt), ", ",
                             cite.num(i, "high", fmt), "]", Raw("</span>")]
                said = pp.verdict(frame.loc[i])
                cells.append(cell + ([f": {said}"] if said else []))
            rows.append(cells)
        parts.append(f"<h3>{_esc(dataset)}</h3>")
        parts.append(_table(["quantity", *head], rows, table_id=f"pool-profiles-{dataset}"))
    return "".join(parts)


def _section_pool_profiles(out: Path, outcome) -> list[str]:
    return [pool_profiles_html(out / outcome.step.name, f"{outcome.step.name}/")]


_FIGURE_CAPTIONS = {
    "delta_ci.png": "Mean per-seed Δ with its BCa 95% interval, per dataset and scenario, at "
                    "3, 10 and 20 seeds. Filled markers: significant for paired_bca_perm; "
                    "shaded: true-null scenarios, where any significant row would be a false "
                    "positive.",
    "welch_vs_signflip.png": "The same runs tested paired (sign-flip) and unpaired (Welch), "
                             "effect scenarios only. Above the diagonal the paired test gives "
                             "the smaller p, below it Welch does. The sign-flip p cannot go "
                             "below 2/2^k (exact flips, k ≤ 16) or about 1/10,000 (sampled "
                             "flips, k = 20): very strong effects sit at that floor.",
    "learning_curves.png": "Test accuracy per epoch for paired seeds of baseline and "
                           "variant.",
}


def _section_paper_figures(out: Path, outcome) -> list[str]:
    folder = out / outcome.step.name
    return [_img(folder / f, f, _esc(caption)) for f, caption in _FIGURE_CAPTIONS.items()
            if (folder / f).exists()]


def _section_harness_defaults(out: Path, outcome) -> list[str]:
    from ._harness_defaults_section import harness_defaults_html

    return [harness_defaults_html(out / outcome.step.name, f"{outcome.step.name}/")]


#: files a part of the page is made from
_NEEDS = {"calibrate": ("calibration.csv", "seed_budget.csv"),
          "harness_defaults": ("harness_defaults.csv",),
          "paper_table": ("paper_table.csv", "paper_table.md"),
          "pool_profiles": ("pool_profiles.csv",)}
_SECTIONS = {"calibrate": _section_calibrate, "pitfalls": _section_pitfalls,
             "paper_table": _section_paper_table, "paper_figures": _section_paper_figures,
             "pool_profiles": _section_pool_profiles,
             "harness_defaults": _section_harness_defaults}


def _quick_sims(outcomes) -> str:
    """The simulations per cell the quick build passed its steps (``--sims``), in words."""
    counts = sorted({int(o.step.argv[o.step.argv.index("--sims") + 1]) for o in outcomes
                     if "--sims" in o.step.argv})
    if not counts:
        return "too few"
    return f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,} to {counts[-1]:,}"


def page(out: Path, outcomes, *, argv, settings: dict) -> str:
    """The whole page as HTML text."""
    out = Path(out)
    body = [banner_html(quick_banner(_quick_sims(outcomes)))] if settings.get("quick") else []
    body += ["<h1>evalcal reports</h1>",
            "<p>False-positive rate and power of ML evaluation protocols, measured by "
            "simulation, and what they say about real training runs. Rates are in percent "
            "with 95% Wilson intervals for their Monte Carlo error; deltas are in "
            "percentage points (pp).</p>"]
    # an unset option is shown by what it means, never as "None"
    unset = {"pool": "committed pool (real_runs/pool)", "profile": "not given"}
    shown = {k: (unset.get(k, "not given") if v is None else v) for k, v in settings.items()}
    body.append("<h2 id='settings'>This build</h2>")
    body.append(_table(["setting", "value"],
                       [[k, (str(v), "text")] for k, v in shown.items()],
                       table_id="settings"))
    body.append("<p>Rebuild everything:</p><pre><code>"
                + _esc(" ".join(["python -m reports.build", *map(str, argv)])) + "</code></pre>")
    toc = "".join(f'<li><a href="#{o.step.name}">{_esc(o.step.title)}</a>'
                  + ("" if o.status == "built" else f" ({o.status})") + "</li>"
                  for o in outcomes)
    body.append(f'<ul class="toc">{toc}</ul>')
    for o in outcomes:
        body.append(f'<h2 id="{o.step.name}">{_esc(o.step.title)}</h2>')
        if o.status == "skipped":
            body.append(f'<p class="note">Not built: {_esc(o.message)}</p>')
        elif o.status == "failed":
            body.append(f'<p class="failed">Failed: {_esc(o.message)}</p>')
        else:
            missing = [f for f in _NEEDS.get(o.step.name, ())
                       if not (out / o.step.name / f).exists()]
            if missing:
                body.append(f'<p class="failed">Missing output: {_esc(", ".join(missing))}</p>')
            else:
                body.extend(_SECTIONS[o.step.name](out, o))
            links = ", ".join(f'<a href="{o.step.name}/{f}">{_esc(f)}</a>'
                              for f in o.step.files if (out / o.step.name / f).exists())
            body.append(f"<p>Files: {links}</p>")
        body.append(_commands(o.step))
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>evalcal reports</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def write(out: Path, outcomes, *, argv, settings: dict) -> Path:
    """Write ``index.html`` into ``out`` atomically and return its path."""
    path = Path(out) / "index.html"
    write_atomic(path, page(out, outcomes, argv=argv, settings=settings))
    return path
