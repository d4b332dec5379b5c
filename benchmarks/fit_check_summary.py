"""Summarize a ``fit_check.csv``: how well ``seed_question`` fitted to each pool mimics it.

Usage::

    python -m sim.calibrate --generator real --k 3 10 --check-fit --sims 300 --out /tmp/fc
    python benchmarks/fit_check_summary.py /tmp/fc/fit_check.csv [--markdown]

Per pool (dataset, scenario) it prints the number of cells (protocol x k), the share of cells
whose fitted rate is within 2 standard errors of the real one (``|diff| <= 2 se``, with
``se`` the two-sample binomial SE written by ``--check-fit``), the mean and largest
``|rate_fit - rate_real|`` in percentage points, and the noise floor: the mean ``|diff|``
that Monte Carlo error alone would give a perfect fit (``sqrt(2 / pi) se`` per cell, the
mean of a half-normal). The last row pools every cell.

With the parametric-bootstrap columns of ``--check-fit`` (``null_mean``, ``se_null``;
:mod:`sim.fit_bootstrap`) it also prints the share of cells whose ``diff`` is within 2
``se_null`` of ``null_mean`` (where a correct model's diff falls) and the mean ``|diff|`` a
correct model would show on that pool (the folded-normal mean of N(null_mean, se_null**2),
averaged over the cells).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from scipy import stats

#: a cell is "within 2 SE" when |diff| <= 2 se; the slack absorbs rounding in the CSV
_SLACK = 1e-9


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, scenario) and a final ``all`` row.

    Parameters
    ----------
    frame : pandas.DataFrame
        A ``fit_check.csv`` (columns ``dataset, scenario, diff, se`` at least).

    Returns
    -------
    pandas.DataFrame
        ``cells``, ``within_2se_pct`` (percentage of cells), ``mean_abs_diff_pp``,
        ``max_abs_diff_pp`` and ``noise_floor_pp`` (percentage points).
    """
    missing = {"dataset", "scenario", "diff", "se"} - set(frame.columns)
    if missing:
        raise ValueError(f"fit_check.csv lacks the columns {sorted(missing)}")
    total = frame["se_total"] if "se_total" in frame else pd.Series(np.nan, frame.index)
    center = frame["null_mean"] if "null_mean" in frame else pd.Series(np.nan, frame.index)
    scale = frame["se_null"] if "se_null" in frame else pd.Series(np.nan, frame.index)
    frame = frame.assign(abs_pp=100 * frame["diff"].abs(),
                         within=frame["diff"].abs() <= 2 * frame["se"] + _SLACK,
                         within_total=frame["diff"].abs() <= 2 * total + _SLACK,
                         se_total=total, se_null=scale,
                         within_null=(frame["diff"] - center).abs() <= 2 * scale + _SLACK,
                         null_abs_pp=100 * folded_normal_mean(center, scale))

    def one(group):
        known = group["se_total"].notna()
        return pd.Series({"cells": len(group),
                          "within_2se_pct": 100 * group["within"].mean(),
                          "mean_abs_diff_pp": group["abs_pp"].mean(),
                          "max_abs_diff_pp": group["abs_pp"].max(),
                          "noise_floor_pp": 100 * np.sqrt(2 / np.pi) * group["se"].mean(),
                          "within_2se_total_pct": (100 * group.loc[known, "within_total"].mean()
                                                   if known.any() else np.nan),
                          "floor_total_pp": 100 * np.sqrt(2 / np.pi)
                          * group["se_total"].mean(),
                          "within_2se_null_pct": _share(group, "within_null", "se_null"),
                          "null_abs_diff_pp": group["null_abs_pp"].mean()})

    rows = [dict(dataset=d, scenario=s, **one(g)) for (d, s), g in
            frame.groupby(["dataset", "scenario"], sort=True)]
    rows.append(dict(dataset="all", scenario="", **one(frame)))
    out = pd.DataFrame(rows)
    out["cells"] = out["cells"].astype(int)
    return out


def _share(group, flag, scale):
    """Percentage of the cells with a known ``scale`` whose ``flag`` is true (NaN if none)."""
    known = group[scale].notna()
    return 100 * group.loc[known, flag].mean() if known.any() else np.nan


def folded_normal_mean(mean, sd):
    """``E|X|`` for ``X ~ N(mean, sd**2)`` (``|mean|`` where ``sd`` is 0)."""
    mean = np.asarray(mean, dtype=float)
    sd = np.asarray(sd, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = mean / sd
        value = sd * np.sqrt(2 / np.pi) * np.exp(-ratio**2 / 2) \
            + mean * (1 - 2 * stats.norm.cdf(-ratio))
    return np.where(sd > 0, value, np.abs(mean))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/fit_check_summary.py",
                                description=__doc__.splitlines()[0], allow_abbrev=False)
    p.add_argument("csv", help="a fit_check.csv written by 'sim.calibrate --check-fit'")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = p.parse_args(argv)
    table = summarize(pd.read_csv(args.csv))
    if args.markdown:
        print("| dataset | scenario | cells | within 2 SE (%) | mean abs diff (pp) "
              "| max (pp) | noise floor (pp) | within 2 total SE (%) | floor with pool (pp) "
              "| within 2 SE of a correct model (%) | a correct model's mean abs diff (pp) |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in table.itertuples(index=False):
            print(f"| {r.dataset} | {r.scenario} | {r.cells} | {r.within_2se_pct:.0f} "
                  f"| {r.mean_abs_diff_pp:.1f} | {r.max_abs_diff_pp:.1f} "
                  f"| {r.noise_floor_pp:.1f} | {r.within_2se_total_pct:.0f} "
                  f"| {r.floor_total_pp:.1f} | {r.within_2se_null_pct:.0f} "
                  f"| {r.null_abs_diff_pp:.1f} |")
    else:
        print(table.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    worst = table.iloc[:-1]
    print(f"\npools meeting both targets (>= 80% within 2 SE, mean |diff| <= 2 pp): "
          f"{int(np.sum((worst.within_2se_pct >= 80) & (worst.mean_abs_diff_pp <= 2)))}"
          f" of {len(worst)}")
    if worst["within_2se_null_pct"].notna().any():
        print(f"pools with >= 80% of cells within 2 SE of a correct model's diff: "
              f"{int(np.sum(worst.within_2se_null_pct >= 80))} of {len(worst)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
