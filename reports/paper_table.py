"""``python -m reports.paper_table``: the analogue of the paper's Table 2 from the real pool.

Per dataset and scenario: the single-run delta (seed 0); then, on the first k seeds for
k = 3, 10 and 20, the mean delta with its BCa 95% CI, the sign-flip p-value and the Welch
p-value, so a reader sees what more seeds buy. Deltas are in percentage points.

The CI, the sign-flip p and the verdict are those of ONE evaluation of ``paired_bca_perm``
per row, with a generator seeded by ``--seed``: above ``max_exact_k`` seeds its sign flips
are sampled, so the same command gives byte-identical files.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import protocols
from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import (
    add_options,
    alpha_option,
    check_options,
    config_from_args,
    option,
    out_option,
    pool_option,
    seed_option,
)
from evalcal_core.outdir import run_outputs
from real_runs.manifest import DATA_CAVEATS, pool_caveat
from real_runs.store import check_store, pool_cells
from sim.outputs import csv_text

DEFAULT_OUT = Path("reports") / "output" / "paper_table"
KS = (3, 10, 20)
PROG = "python -m reports.paper_table"


def paper_table(root=None, ks=KS, alpha=0.05, *, seed=0, profile=None) -> pd.DataFrame:
    """One row per (dataset, scenario, k) with the statistics above.

    Parameters
    ----------
    root : path or None
        Run store; default the committed pool.
    profile : str or None
        Training profile of the pools (``cpu``, ``paper``); needed only when the store
        holds several.
    ks : tuple of int
        Numbers of seeds (the first k of the pool); larger than the pool are left out.
    alpha : float
        Two-sided level of ``paired_bca_perm`` (fraction).
    seed : int
        Seeds the one generator that every row's ``paired_bca_perm`` draws from (random
        bootstrap resamples, sampled sign flips beyond ``max_exact_k`` seeds).
    """
    from sim import generators

    rng = np.random.default_rng(seed)
    paired = protocols.get("paired_bca_perm", bootstrap="auto")
    welch = protocols.get("welch_t")
    rows = []
    for dataset, scenario in pool_cells(root, profile):
        params = {"dataset": dataset, "scenario": scenario}
        if root is not None:
            params["root"] = str(root)
        if profile is not None:
            params["profile"] = profile
        pool = generators.get("real_pool", **params)
        base, variant = pool.pool()
        acc_b = base.mean(axis=1)
        acc_v = variant.mean(axis=1)
        single = 100 * (acc_v[0] - acc_b[0])
        for k in ks:
            if k > len(acc_b):
                continue
            b, v = acc_b[:k], acc_v[:k]
            # One evaluation gives the CI, the p and the verdict that belong together.
            r = paired.evaluate(b, v, alpha, rng=rng)
            p_w = welch.evaluate(b, v, alpha).p_value
            rows.append(dict(
                dataset=dataset, scenario=scenario, k=k, single_run_delta_pp=single,
                base_acc_pct=100 * b.mean(), variant_acc_pct=100 * v.mean(),
                mean_delta_pp=100 * float(r.estimate), bca_low_pp=100 * float(r.ci_low),
                bca_high_pp=100 * float(r.ci_high), sign_flip_p=float(r.p_value),
                welch_p=float(p_w), paired_verdict=bool(r.significant)))
    return pd.DataFrame(rows)


def to_markdown(table: pd.DataFrame, alpha: float = 0.05) -> str:
    """The table as GitHub Markdown (no extra dependency)."""
    level = f"{100 * (1 - alpha):g}%"
    lines = ["| dataset | scenario | k | single-run Δ (pp) | mean Δ (pp) | "
             f"BCa {level} CI (pp) | sign-flip p | Welch p | paired protocol |",
             "|---|---|---:|---:|---:|---|---:|---:|---|"]
    for r in table.itertuples():
        verdict = "significant" if r.paired_verdict else "not significant"
        lines.append(f"| {r.dataset} | {r.scenario} | {r.k} | {r.single_run_delta_pp:+.2f} | "
                     f"{r.mean_delta_pp:+.2f} | [{r.bca_low_pp:+.2f}, {r.bca_high_pp:+.2f}] | "
                     f"{r.sign_flip_p:.4f} | {r.welch_p:.4f} | {verdict} |")
    return "\n".join(lines) + "\n"


def caveats_markdown(datasets, profile_text: str) -> str:
    """Markdown list of the pool's caveats: its training profile's, then the datasets'."""
    lines = ["Caveats:", "", f"* {profile_text}"]
    lines += [f"* {d}: {DATA_CAVEATS[d]}" for d in sorted(set(datasets)) if d in DATA_CAVEATS]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PaperTableOptions:
    """What ``python -m reports.paper_table`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`) whose own rule is checked when built."""

    pool: str | None = pool_option()
    out: Path = out_option(DEFAULT_OUT)
    seed: int = seed_option(help="seed of the resampling of paired_bca_perm (0)")
    alpha: float = alpha_option()
    profile: str | None = option("--profile", None,
                                 help="training profile of the pools (cpu, paper); needed "
                                      "only when the store holds several")

    def __post_init__(self):
        check_options(self)


def build_parser() -> argparse.ArgumentParser:
    """The options of :class:`PaperTableOptions`, as declared there."""
    # ``python -OO`` strips docstrings: the description must not need one.
    summary = (__doc__ or "").strip().splitlines()[:1]
    return add_options(ArgumentParser(prog=PROG, description=summary[0] if summary else None),
                       PaperTableOptions)


def main(argv=None) -> int:
    """Check the arguments and the pool, then compute and write under ``--out``, which is
    locked and marked incomplete until both files are written."""
    args = config_from_args(PaperTableOptions, build_parser().parse_args(argv))
    if args.pool is not None:
        check_store(args.pool, "--pool")  # a store the user names must exist
    pool_cells(args.pool, args.profile, option="--pool STORE")  # before the lock
    with run_outputs(args.out, PROG) as outputs:
        table = paper_table(args.pool, alpha=args.alpha, seed=args.seed, profile=args.profile)
        write_atomic(outputs.path / "paper_table.csv", csv_text(table, "%.6g"))
        datasets = set(table["dataset"])
        markdown = (to_markdown(table, args.alpha) + "\n"
                    + caveats_markdown(datasets, pool_caveat(args.pool, args.profile, datasets)))
        write_atomic(outputs.path / "paper_table.md", markdown)
    print(markdown)
    print(f"wrote {args.out}/paper_table.md and paper_table.csv")
    return 0


def run() -> None:
    run_main(main, PROG)


if __name__ == "__main__":
    run()
