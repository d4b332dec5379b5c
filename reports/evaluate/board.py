"""``evaluate --leaderboard``: every pair of many systems at once, as tiers, simultaneous
rank intervals and the set of possibly-best systems (numbers: :mod:`protocols.leaderboard`).

The paired units follow the design: questions of fixed models (each system's mean over its
repeats), seeds of training methods paired by seed, or clusters of questions (each cluster's
mean, so a cluster is one unit). Independent seeds have no pairing to exploit: refused.
"""

from __future__ import annotations

import numpy as np

from .render import Units


def board_rows(board, names, units: Units) -> list[dict]:
    """One row per system, best first: rank by mean, tier, mean, rank interval, best set
    and the p-value of "some rival is better" behind it."""
    return [{"rank": int(pos + 1), "system": names[i], "tier": int(board.tier[i]),
             "mean": float(board.means[i]) * (100.0 if units.fraction else 1.0),
             "rank_low": int(board.rank_low[i]), "rank_high": int(board.rank_high[i]),
             "possibly_best": bool(board.best_set[i]), "p_beaten": float(board.beaten_p[i])}
            for pos, i in enumerate(board.order)]


def _null(board) -> str:
    return ("all 2^n sign flips" if board.exact
            else f"{board.draws:,} sign-flip draws")


def _count(k: int, noun: str) -> str:
    return f"{k:,} {noun}{'' if k == 1 else 's'}"


def board_summary(board, unit: str) -> str:
    m = board.means.size
    pairs = m * (m - 1) // 2
    shown = int(board.separated.sum())
    lower = " (lower is better: the best has the lowest mean)" if getattr(
        board, "lower_is_better", False) else ""
    return (f"leaderboard{lower}: {m} systems on {board.units} paired {unit}; max over all "
            f"{pairs:,} pairs of McNemar-type sign statistics (critical {board.critical:.3g}, "
            f"{_null(board)}, simultaneous at {100 * (1 - board.alpha):g}%): {shown:,} pairs "
            f"separated, {_count(int(board.tier.max()), 'tier')}, "
            f"{int(board.best_set.sum())} possibly best")


def board_text(head_lines, board, names, units: Units, unit: str, fmt: str = "text") -> str:
    """The board as terminal text or a Markdown table, after ``head_lines``."""
    rows = board_rows(board, names, units)
    mean_head = "mean (%)" if units.fraction else "mean"
    head = ["rank", "tier", "system", mean_head, "rank interval", "possibly best"]
    body = [[str(r["rank"]), str(r["tier"]), r["system"], f"{r['mean']:.2f}",
             f"[{r['rank_low']}, {r['rank_high']}]", "yes" if r["possibly_best"] else ""]
            for r in rows]
    lines = list(head_lines) + [board_summary(board, unit), ""]
    if fmt == "markdown":
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in body]
    else:
        widths = [max(len(h), *(len(r[c]) for r in body)) for c, h in enumerate(head)]
        lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
        lines.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
        lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in body]
    level = f"{100 * (1 - board.alpha):g}%"
    lines += ["", "* Tiers: the order by mean is cut only where every system above is "
              "separated from every system below, so two systems in different tiers are a "
              "separated pair (a wrong tier order needs a false separation). Rank intervals "
              "hold every system's true rank at once (ties allow any rank of their group). "
              "Possibly best: the systems that no rival beats in a test of each system "
              f"against its {board.means.size - 1} rivals at once; the set holds the best "
              f"system with probability >= {level}. It can hold fewer systems than the rank "
              "intervals that start at 1: those come from the all-pairs separations, which "
              "pay for every pair. Calibrated: python -m sim.decision_grid --families "
              "leaderboard."]
    return "\n".join(lines)


def board_json(board, names, units: Units, unit: str) -> dict:
    """The ``--json`` body of a leaderboard."""
    m = board.means.size
    critical = float(board.critical)
    return {"systems": m, "units": int(board.units), "unit": unit, "alpha": board.alpha,
            "pairs": m * (m - 1) // 2,
            "critical": critical if np.isfinite(critical) else None,
            "null_draws": int(board.draws), "exact": bool(board.exact),
            "separated_pairs": int(board.separated.sum()), "tiers": int(board.tier.max()),
            "mean_unit": "percent" if units.fraction else "metric units",
            "rows": board_rows(board, names, units),
            "separated": [[names[i], names[j]] for i, j in zip(*np.nonzero(board.separated))],
            **({"lower_is_better": True} if getattr(board, "lower_is_better", False) else {})}
