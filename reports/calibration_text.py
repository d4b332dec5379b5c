"""A calibration run in words: the summary tables ``python -m sim.calibrate`` prints."""

from __future__ import annotations

import pandas as pd

from evalcal_core import designs
from evalcal_core.designs import COMPARE_MODELS, KIND_WORDS
from sim.labels import design_of, is_reportable

from ._report_page import MIN_JUDGED_SIMS
from .words import effect_words, setting_words
from .words import short_label as _short_label


def summary_table(calibration: pd.DataFrame, budget: pd.DataFrame,
                  mde: pd.DataFrame | None = None) -> str:
    """Text tables: rejection rate (%) by protocol and k, one block per effect; then the seed
    budget (recommended protocols with their k, the others with the reason) and the
    minimum detectable effects."""
    lines = []
    several = calibration["generator_params"].nunique() > 1
    pooled = "pool_low" in calibration and calibration["pool_low"].notna().any()
    if not several:
        first = calibration.iloc[0]
        lines.append(f"{first['generator']}: {setting_words(first['generator_params'])}")
        lines.append("")
    for (params, effect), part in calibration.groupby(["generator_params", "effect_pp"],
                                                      sort=True):
        what = "false-positive rate" if effect == 0 else "power"
        prefix = f"{_short_label(params)}: " if several else ""
        lines.append(f"{prefix}effect {effect_words(params, effect)}: {what} (%) ± the larger "
                     f"side of its 95% Wilson interval, {int(part['sims'].iloc[0])} "
                     f"simulations per cell")
        generator = part["generator"].iloc[0]
        design = KIND_WORDS[design_of(generator)]
        for honest, title in ((True, f"honest protocols for {design}"),
                              (False, f"pitfalls for {design} (shown for teaching; do not "
                                      f"report them)")):
            names = [n for n in sorted(part["protocol"].unique())
                     if is_reportable(n, generator) == honest]
            if not names:
                continue
            rows = part[part["protocol"].isin(names)]
            cells = rows.assign(cell=[_rate_cell(r) for r in rows.itertuples()])
            table = cells.pivot(index="protocol", columns="k", values="cell")
            lines.append(f"  {title}:")
            lines.append(table.to_string(na_rep="-"))
        lines.append("")
    if pooled:
        lines.append("real pools: pool_low/pool_high in calibration.csv widen each rate's "
                     "Wilson interval by the pool-sampling error (a jackknife over the pool's "
                     "seeds, from the seeds each experiment drew; --pool-method)")
        lines.append("")
    if not budget.empty:
        target = float(budget["target_power"].iloc[0])
        lines.append(f"seed budget: smallest k with power >= {100 * target:.0f}% "
                     f"(MC range: the k over which the power's 95% interval straddles it)")
        if any(designs.get(design_of(g)).compare == COMPARE_MODELS
               for g in budget["generator"].unique()):
            lines.append("  for fixed models k counts decoding repeats of each model on the "
                         "same questions; repeats cannot remove the questions' sampling "
                         "noise (plan questions with python -m sim.plan --design models)")
        # the header says "effect": each value carries its unit ("1 pp", or a metric-range
        # pool's "+1.472 (score in [0, 2000])"), never pp for a metric that is not a fraction
        shown = budget.assign(effect=[effect_words(p, x) for p, x in
                                      zip(budget["generator_params"], budget["effect_pp"])],
                              k_needed=[_k_range(r) for r in budget.itertuples()])
        columns = ["protocol", "effect", "k_needed", "k_power_80", "k_power_90"]
        if several:
            shown = shown.assign(setting=shown["generator_params"].map(_short_label))
            columns = ["setting"] + columns
        ok = shown[shown["recommended"] == "yes"]
        keys = (["setting"] if several else []) + ["protocol", "why"]
        rest = shown[shown["recommended"] != "yes"].drop_duplicates(keys)
        quick = int(calibration["sims"].min()) < MIN_JUDGED_SIMS
        if quick:
            # a quick run's undecided cells say nothing about the protocol: name none, and
            # keep only the reasons that do not depend on the number of simulations
            lines.append(f"not judged: fewer than {MIN_JUDGED_SIMS:,} simulations per cell (a "
                         f"quick run); rerun with --sims {MIN_JUDGED_SIMS:,} or more for a "
                         f"recommendation")
            rest = rest[[not is_reportable(name, generator) for name, generator
                         in zip(rest["protocol"], budget.loc[rest.index, "generator"])]]
        elif ok.empty:
            lines.append("no protocol is recommended (reasons below)")
        else:
            lines.append(ok[columns].to_string(index=False))
        lines.append("")
        lines.append("pitfalls:" if quick else "not recommended:")
        for row in rest.itertuples():
            where = f"{row.setting}: " if several else ""
            lines.append(f"  {where}{row.protocol}: {row.why}")
        if rest.empty:
            lines.append("  (none)")
    if mde is not None and not mde.empty:
        lines.append("")
        target = float(mde["target_power"].iloc[0])
        lines.append(f"minimum detectable effect (pp) at power {100 * target:.0f}%, "
                     f"[confidently below, confidently above]")
        found = mde[~mde["note"].fillna("").str.startswith("not recommended")]
        if not found.empty:
            text = found.assign(mde=[_mde_text(r) for r in found.itertuples()])
            lines.append(text.pivot(index="protocol", columns="k", values="mde")
                         .to_string(na_rep="-"))
    return "\n".join(lines)


def _rate_cell(row) -> str:
    """``5.5±1.0``: a rate in % with the larger side of its Wilson interval."""
    half = max(row.rate - row.rate_low, row.rate_high - row.rate)
    return f"{100 * row.rate:.1f}±{100 * half:.1f}"


def _k_range(row) -> str:
    """``k_needed`` with its Monte Carlo range, e.g. ``10 (9-11)``."""
    text = str(row.k_needed)
    if not text.isdigit():
        return text
    low = "?" if pd.isna(row.k_needed_low) else int(row.k_needed_low)
    high = "?" if pd.isna(row.k_needed_high) else int(row.k_needed_high)
    return text if low == high == int(text) else f"{text} ({low}-{high})"


def _mde_text(row) -> str:
    if pd.isna(row.mde_pp):
        return str(row.note)
    high = "?" if pd.isna(row.mde_high_pp) else f"{row.mde_high_pp:.3g}"
    return f"{row.mde_pp:.3g} [{row.mde_low_pp:.3g}, {high}]"
