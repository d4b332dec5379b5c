"""Print the README's real-pool tables from a ``calibration.csv`` of ``--generator real``.

Usage::

    python benchmarks/real_pool_tables.py OUT/calibration.csv [--ks 3 6 10]
                                          [--protocols NAME ...]

One markdown table per scenario: a row per protocol, a column per dataset, each cell the
rejection rate (%) at the given k and, in brackets, the pool-sampling interval
(``pool_low``-``pool_high``, %) at the largest of them. Under ``S0p`` the rate is the
false-positive rate; under ``S1``/``S2`` it is the power at the pool's own effect (a
rejection with the wrong sign does not count, as in ``calibration.csv``).
"""

from __future__ import annotations

import argparse

import pandas as pd

#: the README's rows, pitfalls and honest protocols side by side
DEFAULT_PROTOCOLS = ("single_run", "welch_t", "paired_t", "paired_two_level", "mcnemar",
                     "run_bootstrap_sqrt_b", "bca", "paired_bca_perm")


def _parse(params: str) -> dict:
    return dict(item.split("=", 1) for item in params.split(";") if item)


def tables(frame: pd.DataFrame, ks, names) -> str:
    """The markdown tables, one per scenario, as one string."""
    frame = frame[frame["generator"] == "real_pool"].copy()
    parsed = frame["generator_params"].map(_parse)
    frame["dataset"] = parsed.map(lambda p: p["dataset"])
    frame["scenario"] = parsed.map(lambda p: p["scenario"])
    sims = int(frame["sims"].max())
    k_pool = max(ks)
    out = []
    for scenario in sorted(frame["scenario"].unique()):
        part = frame[frame["scenario"] == scenario]
        datasets = sorted(part["dataset"].unique())
        what = "false-positive rate" if scenario.startswith("S0") else "power"
        out.append(f"**{scenario}: {what} (%)**, k = {' / '.join(map(str, ks))}, {sims} "
                   f"experiments per cell; in brackets the pool interval at k = {k_pool} "
                   f"(`pool_low`–`pool_high`)")
        out.append("")
        out.append("| protocol | " + " | ".join(datasets) + " |")
        out.append("|---|" + "---|" * len(datasets))
        for name in names:
            cells = []
            for dataset in datasets:
                rows = part[(part["protocol"] == name) & (part["dataset"] == dataset)]
                rates = rows.set_index("k")["rate"]
                if not set(ks) <= set(rates.index):
                    cells.append("–")
                    continue
                text = " / ".join(f"{100 * rates[k]:.1f}" for k in ks)
                pool = rows[rows["k"] == k_pool].iloc[0]
                if pd.notna(pool["pool_low"]):
                    text += f" [{100 * pool['pool_low']:.0f}–{100 * pool['pool_high']:.0f}]"
                cells.append(text)
            if any(c != "–" for c in cells):
                out.append(f"| `{name}` | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="calibration.csv of `sim.calibrate --generator real`")
    parser.add_argument("--ks", type=int, nargs="+", default=[3, 6, 10])
    parser.add_argument("--protocols", nargs="+", default=list(DEFAULT_PROTOCOLS))
    args = parser.parse_args(argv)
    print(tables(pd.read_csv(args.csv), args.ks, args.protocols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
