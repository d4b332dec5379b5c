"""Outputs of ``evaluate``: terminal text, ``--json``, ``--format markdown|latex``.

Every output starts with the design line. Differences are shown in percentage points (pp)
for fraction metrics (accuracy) and in the metric's own units otherwise (``--metric-range``).
"""

from __future__ import annotations

import math
import re

import numpy as np

from protocols.analysis.compare import Comparisons

from .design import design_json, design_line

#: significant digits kept in --json (no 0.7239999999999991)
JSON_DIGITS = 10


def clean(x):
    """A JSON-ready value: floats rounded to :data:`JSON_DIGITS` digits, NaN -> None, numpy
    scalars unwrapped, containers recursed."""
    if isinstance(x, dict):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return [clean(v) for v in x.tolist()]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float):
        return None if not math.isfinite(x) else float(f"{x:.{JSON_DIGITS}g}")
    return x


class Units:
    """How differences are shown: ``factor`` per score unit and the unit's name."""

    def __init__(self, fraction: bool, metric: str = ""):
        self.fraction = fraction
        self.factor = 100.0 if fraction else 1.0
        self.name = "pp" if fraction else "metric units"
        self.short = "pp" if fraction else ""

    def diff(self, x) -> str:
        return "" if x is None or math.isnan(x) else f"{self.factor * x:+.2f}{self.short}"

    def interval(self, lo, hi) -> str:
        if lo is None or math.isnan(lo):
            return ""
        return f"[{self.factor * lo:+.2f}, {self.factor * hi:+.2f}]"

    def level(self, x) -> str:
        return f"{100 * x:.2f}%" if self.fraction else f"{x:.4g}"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def visible(name) -> str:
    """``name`` on one line: control characters (newline, CR, tab) as their escapes
    (``\\n``), so that a name never splits a row of text, Markdown or LaTeX output; the
    name itself (``--json``) is unchanged."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"),
                        str(name))


def _pair(c) -> str:
    """A comparison's label: ``variant - base``, each name made :func:`visible`."""
    return f"{visible(c.variant)} - {visible(c.base)}"


def _p(x) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}"


def _verdict(c) -> str:
    if c.degenerate:
        # a refusal's reason is one of the comparison notes
        return "no verdict (see notes)" if c.refusal else "no variance estimate"
    return "significant" if c.significant else "not significant"


def _ci(lo, hi, fmt="{:+.2f}") -> str:
    if lo is None or math.isnan(lo):
        return "n/a"
    return "[" + fmt.format(lo) + ", " + fmt.format(hi) + "]"


def interval_agrees(c) -> bool | None:
    """Whether the simultaneous interval beside ``c``'s verdict says the same thing: it
    excludes 0 exactly when the verdict is significant. ``None`` where there is no interval
    (NaN bounds)."""
    if c.sim_low is None or math.isnan(c.sim_low) or math.isnan(c.sim_high):
        return None
    return (c.sim_low > 0 or c.sim_high < 0) == bool(c.significant)


#: why a correction's verdict can differ from the simultaneous interval beside it
_WHY_APART = {
    "holm": "Holm's step-down rejects more than the single-step Bonferroni interval shows",
    "maxt": "the step-down max-T rejects more than the single-step max-T interval shows",
    "bh": ("Benjamini-Hochberg controls the false discovery rate and rejects more than the "
           "Bonferroni interval shows"),
}


def interval_notes(a: Comparisons, units: Units) -> list[str]:
    """One note per comparison whose verdict and simultaneous interval disagree, saying
    why (:func:`interval_agrees`); the verdict is the adjusted p's."""
    notes = []
    for c in a.comparisons:
        if interval_agrees(c) is not False:
            continue
        if c.significant and len(a.comparisons) == 1 and a.correction == "maxt":
            # one comparison has no step-down: its interval's multiplier also holds at
            # real effects (protocols.multiplicity.simultaneous_ci), the test's only at 0
            why = ("the interval's multiplier covers at real effects too, so it is wider "
                   "than the test's critical value")
            said = "contains"
        elif c.significant:
            why = _WHY_APART.get(a.p_method or a.correction, "the interval and the test are "
                                                             "different procedures")
            said = "contains"
        else:
            why = "the interval and the adjusted p are different procedures"
            said = "excludes"
        notes.append(f"{_pair(c)}: {_verdict(c)} (p adj {_p(c.p_adjusted)}) "
                     f"beside an interval {units.interval(c.sim_low, c.sim_high)} that "
                     f"{said} 0: {why}; the verdict is the adjusted p's.")
    return notes


def _claim_cell(c, units: Units) -> str:
    """The claim's verdict with the 1 - 2 alpha interval it was read from."""
    ci = units.interval(c.claim_low, c.claim_high)
    return f"{c.claim or ''} {ci}".strip()


def header_lines(a: Comparisons, units: Units) -> list[str]:
    """The design line, the arms and what is compared how."""
    c = len(a.comparisons)
    arms = ", ".join(f"{visible(n)} {units.level(m)}" for n, m in zip(a.arms, a.means))
    mean = "mean score, lower is better" if a.lower_is_better else "mean score"
    what = (f"each arm against {visible(a.reference)}" if a.reference is not None
            else "all pairs" if len(a.arms) > 2 else "one pair")
    simultaneous = "simultaneous " if c > 1 and a.correction != "none" else ""
    count = f" ({c})" if c > 1 else ""
    label = (f"reportable for {a.design.kind}" if not a.primary_pitfall else
             f"reportable for {a.design.kind}, but a pitfall at this shape on a real pool: "
             "no verdict, see the notes")
    lines = [design_line(a.design), f"arms ({mean}): {arms}",
             f"comparisons: {what}{count}; protocol {a.primary} ({label}); "
             f"correction {a.correction}; "
             f"{100 * a.sim_level:.4g}% {simultaneous}intervals"]
    if a.correction == "none" and c > 1:
        lines.append(f"warning: --correction none: {c} comparisons at alpha = {a.alpha:g} "
                     f"each, no family-wise control; do not report these as confirmed")
    return lines


def comparison_rows(a: Comparisons, units: Units) -> list[list[str]]:
    """Table cells: comparison, difference, interval, p, adjusted p, verdict."""
    rows = []
    for c in a.comparisons:
        rows.append([_pair(c), units.diff(c.estimate),
                     units.interval(c.sim_low, c.sim_high) or "n/a", _p(c.p_value),
                     _p(c.p_adjusted), _verdict(c)]
                    + ([_claim_cell(c, units)] if a.claim else []))
    return rows


def effect_rows(a: Comparisons) -> list[list[str]]:
    """Effect-size cells: comparison, d (and the relative error reduction, not for a loss:
    ``--lower-is-better`` has no accuracy whose error is reduced)."""
    rows = []
    for c in a.comparisons:
        d = "n/a" if math.isnan(c.d) else f"{c.d:+.2f} {_ci(c.d_low, c.d_high)}"
        rer = ("" if c.rer is None else
               f"{100 * c.rer:+.1f}% {_ci(100 * c.rer_low, 100 * c.rer_high, '{:+.1f}%')}")
        rows.append([_pair(c), d] + ([] if a.lower_is_better else [rer]))
    return rows


def _best_first(a: Comparisons) -> list:
    """``(arm, mean)`` from the best: the highest mean, or the lowest for a loss."""
    sign = 1.0 if a.lower_is_better else -1.0
    return sorted(zip(a.arms, a.means), key=lambda t: sign * t[1])


def comparison_headers(a: Comparisons, units: Units) -> list[str]:
    level = f"{100 * a.sim_level:.4g}% CI ({units.name})"
    return (["comparison", f"difference ({units.name})", level, "p", f"p adj ({a.correction})",
             "verdict"] + (["claim [1 - 2 alpha CI]"] if a.claim else []))


def _table(headers, rows) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    fmt = lambda r: "  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip()  # noqa
    return [fmt(headers), "-" * len(fmt(headers))] + [fmt(r) for r in rows]


def claim_line(a: Comparisons, units: Units, streamed: bool = False) -> str:
    """The fixed-n claim's line; ``streamed``: ``--gate`` reads the anytime-valid verdict
    instead, and the line says so rather than print a second exit status."""
    margin = 0.0 if a.margin is None else a.margin
    verdicts = ", ".join(f"{visible(c.variant)} vs {visible(c.base)}: "
                         f"{_claim_cell(c, units)}"
                         for c in a.comparisons)
    overall = {0: "shown", 1: "refuted", 3: "inconclusive"}[a.gate]
    gate = ("fixed-n, one look; --gate reads the anytime-valid verdict below" if streamed
            else f"--gate exit status {a.gate}")
    lower = " (lower is better)" if a.lower_is_better else ""
    return (f"claim: {a.claim}{lower}, margin {units.factor * margin:g} {units.name}: "
            f"{verdicts} -> {overall} ({gate})")


def text(a: Comparisons, units: Units, *, source: str, pre=(), protocol_table: str = "",
         streamed: bool = False, evidence=()) -> str:
    """The terminal output (``streamed``: an anytime-valid claim follows and sets the
    gate; ``evidence``: the reported protocol's calibration lines, printed after the
    verdict's notes)."""
    head = header_lines(a, units)
    lines = [f"Results: {visible(source)}", head[0], *map(visible, pre), *head[1:], ""]
    lines += _table(comparison_headers(a, units), comparison_rows(a, units))
    lines += ["", "effect sizes:"]
    d_name = a.comparisons[0].d_kind
    lines += _table(["comparison", f"{d_name} [{100 * (1 - a.alpha):g}% CI]"]
                    + ([] if a.lower_is_better
                       else ["relative error reduction [simultaneous CI]"]), effect_rows(a))
    if a.ranking:
        best = ", lowest first" if a.lower_is_better else ""
        lines += ["", f"ranking (arms sharing a letter are not separable at alpha = "
                      f"{a.alpha:g}, {a.correction}{best}):"]
        lines += [f"  {visible(arm):<20} {units.level(m):>10}  {a.ranking[arm]}"
                  for arm, m in _best_first(a)]
    if a.claim:
        lines += ["", claim_line(a, units, streamed)]
    lines += [f"* {visible(n)}" for n in (*a.notes, *interval_notes(a, units))]
    if evidence:
        lines += ["", *evidence]
    if protocol_table:
        lines += ["", "All protocols on these two arms (labels for this design):",
                  protocol_table]
    return "\n".join(lines)


def as_json(a: Comparisons, units: Units, *, extra: dict, gate: int | None = None,
            gate_from: str = "the fixed-n claim") -> dict:
    """The ``--json`` object (rounded, NaN as null); ``gate``: the exit status the process
    reports (:attr:`protocols.analysis.Analysis.gate`), ``gate_from`` which verdict set it."""
    comps = []
    for c in a.comparisons:
        comps.append({
            "base": c.base, "variant": c.variant, "protocol": c.protocol,
            "unit": units.name,
            "estimate": units.factor * c.estimate,
            "ci_low": units.factor * c.ci_low, "ci_high": units.factor * c.ci_high,
            "simultaneous_ci_low": units.factor * c.sim_low,
            "simultaneous_ci_high": units.factor * c.sim_high,
            "p_value": c.p_value, "p_adjusted": c.p_adjusted,
            "significant": c.significant, "degenerate": c.degenerate,
            c.d_kind: c.d, f"{c.d_kind}_ci": [c.d_low, c.d_high],
            "relative_error_reduction": c.rer,
            "relative_error_reduction_ci": None if c.rer is None else [c.rer_low, c.rer_high],
            "interval_agrees": interval_agrees(c),
            "claim": c.claim,
            **({"claim_ci_low": units.factor * c.claim_low,
                "claim_ci_high": units.factor * c.claim_high} if a.claim else {})})
    out = {"design": design_json(a.design), **extra,
           "arms": [{"name": n, "mean": m} for n, m in zip(a.arms, a.means)],
           "comparisons_mode": a.mode, "reference": a.reference,
           "correction": a.correction, "primary_protocol": a.primary,
           "simultaneous_level": a.sim_level, "comparisons": comps,
           "ranking": a.ranking or None,
           "comparison_notes": [*a.notes, *interval_notes(a, units)]}
    if a.lower_is_better:
        out["lower_is_better"] = True
    if a.primary_pitfall:
        out["primary_pitfall"] = a.primary_pitfall
    if a.correction == "none" and len(a.comparisons) > 1:
        out["warnings"] = [f"--correction none: {len(a.comparisons)} comparisons unadjusted"]
    if a.claim:
        out["claim"] = {"claim": a.claim, "margin": units.factor * (a.margin or 0.0),
                        "unit": units.name,
                        "verdict": {0: "shown", 1: "refuted", 3: "inconclusive"}[a.gate],
                        "gate_exit_status": a.gate if gate is None else gate,
                        "gate_from": gate_from}
    return clean(out)


def _md_escape(x) -> str:
    """A Markdown table cell: on one line (:func:`visible`), ``|`` escaped so that it does
    not open a new cell."""
    return visible(x).replace("|", "\\|")


def _md_row(cells) -> str:
    """One Markdown table row, every cell escaped."""
    return "| " + " | ".join(_md_escape(x) for x in cells) + " |"


def markdown(a: Comparisons, units: Units, *, source: str, streamed: bool = False,
             evidence=()) -> str:
    """A Markdown section: design, comparisons, effect sizes, ranking, claim, the evidence
    for the reported protocol (``evidence``: its lines)."""
    source = visible(source).replace("`", "'")  # a backtick would close the code span
    lines = [f"**{design_line(a.design)}**", "", f"Results: `{source}`; "
             + header_lines(a, units)[2], ""]
    heads = comparison_headers(a, units)
    lines += [_md_row(heads), "|" + "---|" * len(heads)]
    lines += [_md_row(r) for r in comparison_rows(a, units)]
    heads = ["comparison", a.comparisons[0].d_kind] + (
        [] if a.lower_is_better else ["relative error reduction"])
    lines += ["", _md_row(heads), "|" + "---|" * len(heads)]
    lines += [_md_row(r) for r in effect_rows(a)]
    if a.ranking:
        lines += ["", "| arm | mean | group |", "|---|---|---|"]
        lines += [_md_row([arm, units.level(m), a.ranking[arm]])
                  for arm, m in _best_first(a)]
    if a.claim:
        lines += ["", visible(claim_line(a, units, streamed))]
    lines += [f"- {visible(n)}" for n in (*a.notes, *interval_notes(a, units))]
    if evidence:
        lines += ["", visible(evidence[0])]
        lines += [f"- {visible(line.strip())}" for line in evidence[1:]]
    return "\n".join(lines)


#: LaTeX's special characters and their text-mode forms
_TEX = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&",
        "#": r"\#", "%": r"\%", "_": r"\_", "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}"}
_TEX_RE = re.compile("|".join(re.escape(k) for k in _TEX))


def _tex(x) -> str:
    """``x`` as LaTeX text: every special character escaped in one pass (so that the
    braces of ``\\textbackslash{}`` are not escaped again), on one line (:func:`visible`)."""
    return _TEX_RE.sub(lambda m: _TEX[m.group()], visible(x))


def latex(a: Comparisons, units: Units, *, source: str, evidence=()) -> str:
    """A LaTeX ``tabular`` of the comparisons, the design in the caption comment, the
    evidence for the reported protocol (``evidence``: its lines) under the notes."""
    heads = comparison_headers(a, units)
    lines = [f"% {design_line(a.design)}", f"% source: {visible(source)}",
             "\\begin{tabular}{l" + "r" * (len(heads) - 1) + "}", "\\hline",
             " & ".join(_tex(h) for h in heads) + " \\\\", "\\hline"]
    lines += [" & ".join(_tex(x) for x in r) + " \\\\" for r in comparison_rows(a, units)]
    lines += ["\\hline", "\\end{tabular}"]
    # printed under the table, not a comment: a reader of the PDF must see it
    lines += [f"\\par\\noindent{{\\footnotesize Note: {_tex(n)}}}"
              for n in interval_notes(a, units)]
    lines += [f"\\par\\noindent{{\\footnotesize {_tex(line.strip())}}}" for line in evidence]
    return "\n".join(lines)
