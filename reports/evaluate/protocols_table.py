"""The two-arm table of every applicable protocol, as text (the rows:
:mod:`protocols.analysis.protocol_table`)."""

from __future__ import annotations


def format_table(rows, skipped, notes, alpha, unit="pp") -> str:
    """Plain-text table of the verdicts."""
    level = f"{100 * (1 - alpha):g}% CI ({unit})"
    header = f"{'protocol':<26} {'estimate':>10} {level:>21} {'p':>8}  verdict"
    lines = [header, "-" * len(header)]
    for r in rows:
        ci = ("" if r.ci_low_pp is None else f"[{r.ci_low_pp:+.2f}, {r.ci_high_pp:+.2f}]")
        p = "" if r.p_value is None else f"{r.p_value:.4f}"
        verdict = "significant" if r.significant else "not significant"
        if r.degenerate:
            verdict += " (no variance estimate)"
        if r.pitfall:
            verdict += f"   (pitfall: {r.pitfall})"
        est = f"{r.estimate_pp:+.2f}{unit if unit == 'pp' else ''}"
        lines.append(f"{r.protocol:<26} {est:>10} {ci:>21} {p:>8}  {verdict}")
    if skipped:
        lines.append("")
        lines.append("Not applicable: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()))
    lines.append("")
    lines.extend(f"* {n}" for n in notes)
    return "\n".join(lines)
