"""The harness defaults table in words: the markdown page and the terminal summary of
:mod:`sim.harness_defaults`, every sentence computed from the table's rows."""

from __future__ import annotations

import math

import pandas as pd

from evalcal_core.params import decode

from .validity import INVALID, UNDECIDED, VALID

#: a default "holds by being conservative" when its mean power where it holds is this many
#: percentage points below the recommended protocol's in the same cells
POWER_GAP_PP = 10.0


def _pct(x: float) -> str:
    """A rate as a percentage with one decimal (0.1% steps are what 4,000 simulations
    resolve)."""
    return "—" if not math.isfinite(x) else f"{100 * x:.1f}%"


def _span(values) -> str:
    """``low–high%`` of a set of fractions (one value when they agree to 0.1 pp)."""
    values = [v for v in values if math.isfinite(v)]
    if not values:
        return "—"
    low, high = min(values), max(values)
    return _pct(low) if round(1000 * low) == round(1000 * high) else \
        f"{100 * low:.1f}–{100 * high:.1f}%"


def groups(frame: pd.DataFrame) -> list[str]:
    """The design groups, in the table's order."""
    return list(dict.fromkeys(frame["group"]))


def is_real(part: pd.DataFrame) -> bool:
    """Whether rows are a real pool's A/A cells (one per model of the pool)."""
    return bool(len(part)) and part["generator"].iloc[0] == "llm_items"


def model_of(generator_params: str) -> str:
    """The model of a real pool's A/A cell (its ``model=`` parameter)."""
    return str(decode(generator_params).get("model", "?"))


def cell_summary(part: pd.DataFrame) -> dict:
    """One protocol in one design group: its rates, verdicts and power; for a real pool's
    cells also the worst model and that cell's Wilson 95% interval (the pool-sampling facts
    beside the Monte Carlo error)."""
    worst = part.loc[part["rate"].idxmax()]
    real = is_real(part)
    return {"cells": len(part), "real": real,
            "worst_model": model_of(worst["generator_params"]) if real else "",
            "worst_low": float(worst["rate_low"]), "worst_high": float(worst["rate_high"]),
            "holds": int((part["state"] == VALID).sum()),
            "over": int((part["state"] == INVALID).sum()),
            "undecided": int((part["state"] == UNDECIDED).sum()),
            "rates": part["rate"].tolist(), "upper": float(part["fpr_upper"].max()),
            "worst": float(worst["rate"]), "worst_n": int(worst["n_questions"]),
            "over_n": sorted(part.loc[part["state"] == INVALID, "n_questions"].unique()),
            "power": part["power"].tolist()}


def fpr_entry(s: dict | None) -> str:
    """A table entry: the rate's range over the group's cells, the largest upper bound, and
    how many cells are over the level or undecided."""
    if s is None:
        return "cannot run"
    notes = []
    if s["over"]:
        notes.append(f"**{s['over']} over**")
    if s["undecided"]:
        notes.append(f"{s['undecided']} undecided")
    parts = [", ".join(notes)] if notes else []
    if s.get("real") and s["worst"] > 0:
        parts.append(f"worst {s['worst_model']} {_interval(s)}")
    extra = "".join(f"; {p}" for p in parts)
    return f"{_span(s['rates'])} (≤ {_pct(s['upper'])}{extra})"


def _interval(s: dict) -> str:
    """The worst cell's rate and its Wilson 95% interval: ``3.1% [2.6, 3.7]``."""
    return (f"{_pct(s['worst'])} [{100 * s['worst_low']:.1f}, "
            f"{100 * s['worst_high']:.1f}]")


def summaries(frame: pd.DataFrame) -> dict[tuple[str, str], dict]:
    """``(protocol, group) -> cell_summary``."""
    return {key: cell_summary(part) for key, part in frame.groupby(["protocol", "group"],
                                                                    sort=False)}


def recommended_of(frame: pd.DataFrame) -> dict[str, str]:
    """Each group's recommended protocol."""
    rec = frame[frame["recommended"]]
    return dict(zip(rec["group"], rec["protocol"]))


def default_names(frame: pd.DataFrame) -> list[str]:
    """The harness reproductions in the table, by name."""
    return sorted(frame.loc[frame["reproduces"] != "", "protocol"].unique())


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _ns(values) -> str:
    values = [int(v) for v in values]
    return f"n = {values[0]}" if len(values) == 1 else f"n = {min(values)}–{max(values)}"


def sentence(name: str, frame: pd.DataFrame, effect_pp: float) -> str:
    """When a user may trust default ``name``: where it held its level, where it was shown
    above it (with the worst rate), where neither was shown, and what its power was where it
    held beside the recommended protocol's on the same cells."""
    table = summaries(frame)
    rec = recommended_of(frame)
    reproduces = frame.loc[frame["protocol"] == name, "reproduces"].iloc[0]
    hold, over, unsure = [], [], []
    for group in groups(frame):
        s = table.get((name, group))
        if s is None:
            continue
        if s["over"] and s["real"]:
            over.append(f"{group}, up to {_interval(s)} ({s['worst_model']}; over for "
                        f"{s['over']} of its {s['cells']} models)")
        elif s["over"]:
            over.append(f"{group}, up to {_pct(s['worst'])} (over at {_ns(s['over_n'])})")
        elif s["holds"] == s["cells"]:
            hold.append(group)
        else:
            unsure.append(group)
    parts = [f"`{name}` ({reproduces}):"]
    if over:
        parts.append(f"shown above the {_pct(frame['alpha'].iloc[0])} level in: "
                     + "; ".join(over) + ".")
    if hold:
        parts.append(f"Holds its level in {_listing(hold)}.")
        gap = _power_gap(name, hold, table, rec)
        if gap is not None:
            own, honest = gap
            parts.append(f"Where it holds, its power at {effect_pp:g} pp averages "
                         f"{_pct(own)} against {_pct(honest)} for the recommended protocol"
                         + (": it holds by being conservative." if 100 * (honest - own)
                            >= POWER_GAP_PP else "."))
    if unsure:
        parts.append(f"Neither shown to hold nor shown above in {_listing(unsure)} (rates "
                     "near the level; more simulations would tell).")
    missing = [g for g in groups(frame) if (name, g) not in table]
    if not over and not unsure:
        verdict = ("A difference it calls significant can be trusted in every design here" + (
            f" where it runs (it cannot run in {_listing(missing)})." if missing else "."))
    elif hold:
        verdict = f"A difference it calls significant can be trusted only in {_listing(hold)}."
    else:
        verdict = "Do not rely on a difference it calls significant in any design here."
    parts.append(verdict)
    return " ".join(parts)


def _power_gap(name, hold, table, rec):
    own, honest = [], []
    for group in hold:
        mine, theirs = table[(name, group)]["power"], table.get((rec.get(group), group))
        if theirs is None or len(mine) != len(theirs["power"]):
            continue
        own += mine
        honest += theirs["power"]
    pairs = [(a, b) for a, b in zip(own, honest) if math.isfinite(a) and math.isfinite(b)]
    if not pairs:
        return None
    return (sum(a for a, _ in pairs) / len(pairs), sum(b for _, b in pairs) / len(pairs))


def _grid_table(frame: pd.DataFrame, value) -> list[str]:
    """Rows: the recommended protocol, then each default; columns: the design groups."""
    table = summaries(frame)
    rec = recommended_of(frame)
    cols = groups(frame)
    lines = ["| protocol | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    entries = [f"`{rec[g]}` {value(table.get((rec[g], g)))}" if g in rec else "—"
               for g in cols]
    lines.append("| **evalcal's protocol for the design** | " + " | ".join(entries) + " |")
    for name in default_names(frame):
        lines.append(f"| `{name}` | " + " | ".join(value(table.get((name, g)))
                                                  for g in cols) + " |")
    return lines


def power_entry(s: dict | None) -> str:
    """A power entry: the range over the group's cells (— where not simulated)."""
    if s is None:
        return "cannot run"
    shown = _span(s["power"])
    return shown + (" (over its level)" if s["over"] and shown != "—" else "")


def format_markdown(frame: pd.DataFrame, config, command: str) -> str:
    """The page: how it was measured, one sentence per default, the rates and the power by
    design, and each group cell by cell."""
    alpha = float(frame["alpha"].iloc[0]) if len(frame) else config.alpha
    nulls = frame.drop_duplicates(["generator_params", "k"])
    lines = [
        "# Which harness defaults can you trust?", "",
        f"Measured by `{command}` (root seed {config.seed}): {len(nulls)} null cells of "
        f"{config.sims:,} experiments each (effect 0), and the synthetic cells again at "
        f"{config.effect_pp:g} pp with {config.power_sims:,} experiments (power, counted "
        f"in the right direction); α = {alpha:g}. Each default is the decision a user makes "
        "from what the harness prints (its module under `protocols/methods/harness_*.py` "
        "cites the tool's formula), beside the protocol `evaluate` reports for the design.",
        "",
        f"A cell **holds** when the one-sided Clopper-Pearson upper bound of its rate (at "
        f"1 − 0.05 / looks) is ≤ {_pct(alpha * 1.2)} (α + α/5); it is **over** when the exact "
        f"binomial test of rate ≤ α (Bonferroni over the looks) is rejected by Holm over all "
        f"{len(frame)} null rows at family-wise 0.001; otherwise it is undecided (the rule of "
        "`sim.validity`; the recommended protocols' undecided cells get more simulations, "
        "doubling up to 16 times, the defaults are judged on their first look).", ""]
    lines += _real_paragraph(frame, config)
    lines += ["## When to trust each default", ""]
    lines += [f"- {sentence(name, frame, config.effect_pp)}" for name in default_names(frame)]
    lines += ["", "## False-positive rate by design", "",
              "Range over the design's cells (the question counts, or the pool's models), "
              "the largest upper bound after ≤, and the cells over the level or undecided.", ""]
    lines += _grid_table(frame, fpr_entry)
    if frame["power"].notna().any():
        lines += ["", f"## Power at {config.effect_pp:g} pp by design", "",
                  "Range over the design's cells; — where none was simulated: real A/A pools have "
                  "no effect to detect, and 30 questions of the fixed-model mixture hold too "
                  "few hard questions to plant a few pp.",
                  ""]
        lines += _grid_table(frame, power_entry)
    lines += ["", "## Cell by cell", "",
              "False-positive rate (verdict) / power; one table per design group.", ""]
    for group, part in frame.groupby("group", sort=False):
        lines += _cell_table(group, part)
    return "\n".join(lines) + "\n"


def _real_paragraph(frame: pd.DataFrame, config) -> list[str]:
    """What the real columns are: the pools, how their models were chosen, and what their
    intervals do and do not cover."""
    real = frame[frame["generator"] == "llm_items"]
    if real.empty:
        return []
    cells = real.drop_duplicates(["generator_params", "k"])
    count = getattr(config, "pool_models", 0)
    sampled = (f"a pool with more than {count} models is sampled: {count} of them, evenly "
               "spaced by accuracy (the least and the most accurate included)" if count
               else "every model of each pool")
    return [f"Real columns ({len(cells)} A/A cells, {len(groups(real))} columns): one cell "
            "per model of a real pool, its attempts split at random into two halves of r "
            f"attempts per arm (effect 0 by construction) at the pool's own size; {sampled}; "
            "a ragged file's incomplete models are dropped (the column says how many of the "
            "file's models it holds). Each real entry names the worst model with its cell's "
            "Wilson 95% interval: that interval is the Monte Carlo error of one model's cell; "
            "the pool-sampling error is that other models of the same benchmark may sit "
            "higher.", ""]


def _cell_table(group: str, part: pd.DataFrame) -> list[str]:
    if is_real(part):
        # one cell per model of the pool: summarised, the CSV has each
        models = sorted({model_of(p) for p in part["generator_params"]})
        out = [f"### {group}", "", f"Models: {', '.join(models)}.", "",
               "| protocol | models | FPR range | models over | worst model, FPR [95% interval] |",
               "|---|---|---|---|---|"]
        for name, rows in part.groupby("protocol", sort=False):
            s = cell_summary(rows)
            out.append(f"| `{name}` | {len(rows)} | {_span(rows['rate'])} | "
                       f"{s['over']} | {s['worst_model']} {_interval(s)} |")
        return out + [""]
    ns = sorted(part["n_questions"].unique())
    out = [f"### {group}", "", "| protocol | " + " | ".join(f"n = {n}" for n in ns) + " |",
           "|---" * (len(ns) + 1) + "|"]
    for name, rows in part.groupby("protocol", sort=False):
        by_n = {int(r.n_questions): r for r in rows.itertuples()}
        entries = []
        for n in ns:
            r = by_n.get(int(n))
            if r is None:
                entries.append("—")
                continue
            mark = {VALID: "", INVALID: " **over**", UNDECIDED: " ?"}.get(r.state, "")
            power = "" if not math.isfinite(r.power) else f" / {_pct(r.power)}"
            entries.append(f"{_pct(r.rate)}{mark}{power}")
        out.append(f"| `{name}` | " + " | ".join(entries) + " |")
    return out + [""]


def format_terminal(frame: pd.DataFrame, config) -> str:
    """The printed summary: one line per protocol and design group, then the sentences."""
    table = summaries(frame)
    w = max([8, *(len(p) for p in frame["protocol"])])
    gw = max([8, *(len(g) for g in frame["group"])])
    head = (f"{'design':<{gw}} {'protocol':<{w}} {'cells':>5} {'holds':>5} {'over':>4} "
            f"{'FPR range':>12} {'max upper':>9} {'power':>12}")
    lines = [head, "-" * len(head)]
    for (name, group), s in sorted(table.items(), key=lambda kv: (groups(frame).index(kv[0][1]),
                                                                  kv[0][0])):
        worst = f"  worst {s['worst_model']}" if s["real"] and s["worst"] > 0 else ""
        lines.append(f"{group:<{gw}} {name:<{w}} {s['cells']:>5} {s['holds']:>5} "
                     f"{s['over']:>4} {_span(s['rates']):>12} {_pct(s['upper']):>9} "
                     f"{_span(s['power']):>12}{worst}")
    lines += ["", "When to trust each default:"]
    lines += [f"- {sentence(name, frame, config.effect_pp)}" for name in default_names(frame)]
    return "\n".join(lines)
