"""Apply every applicable protocol to a user's own results (the ``evaluate`` application).

It lives in :mod:`reports` (the top layer) because it reads files, uses pandas and prints
tables; ``python -m protocols.evaluate`` is kept as a thin alias of ``python -m
reports.evaluate``.

Usage::

    python -m protocols.evaluate RESULTS.csv [--alpha 0.05] [--threshold T] [--json]
    python -m protocols.evaluate --baseline LOG --variant LOG [--metric acc] [--task T]

See :mod:`evalcal_core.results_io` for the CSV layouts and :mod:`evalcal_core.harness_logs`
for the harness logs (lm-eval, Inspect, HELM, one-arm CSV).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass
from importlib import resources

import numpy as np

from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.params import parse_key_values
from evalcal_core.results_io import MAX_RANGE, check_scores, read_any
from evalcal_core.validate import check_alpha, check_int, check_number
from protocols import get, names, protocol_class
from protocols._base import PROTOCOLS
from protocols._batch import ScoreBatch
from protocols._resample import min_sign_flip_pvalue

#: what a degenerate verdict (no variance estimate) means, shown with the row
NO_VARIANCE = ("no variance estimate (zero standard error with a non-zero estimate): no "
               "evidence either way, so p = NaN and not significant")


def example_path() -> str:
    """Path of the example results CSV shipped with the package."""
    return str(resources.files("protocols") / "examples" / "example_results.csv")


@dataclass(frozen=True)
class ProtocolRow:
    """One protocol's verdict on the user's results (pp = percentage points).

    ``degenerate``: the protocol had no variance estimate (see
    :class:`protocols.ProtocolResult`); ``note``: what the reader needs besides the numbers
    (the degenerate case; ``single_run``'s threshold), "" if nothing.
    """

    protocol: str
    estimate_pp: float
    ci_low_pp: float | None
    ci_high_pp: float | None
    p_value: float | None
    significant: bool
    pitfall: str
    degenerate: bool = False
    note: str = ""


def _or_none(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def evaluate_results(results, *, alpha=0.05, protocols=None, rng=0, params=None):
    """Apply protocols to paired results.

    Parameters
    ----------
    results : PairedResults
        From :func:`evalcal_core.results_io.read_results`.
    alpha : float
    protocols : list of str or None
        Names to apply; default all that can run on the data.
    rng : int
        Seed of the resampling protocols (each starts a fresh stream from it).
    params : dict or None
        Parameters set on every selected protocol that has them.

    Returns
    -------
    rows : list of ProtocolRow
    skipped : dict
        Protocol name -> why it cannot run on these data.
    """
    alpha = check_alpha(alpha)
    batch = ScoreBatch.from_arrays(results.base, results.variant)
    chosen = names() if protocols is None else list(protocols)
    rows, skipped = [], {}
    for name in chosen:
        own = {k: v for k, v in (params or {}).items() if PROTOCOLS.accepts(name, k)}
        protocol = get(name, **own)
        why = protocol.applicable(results.k, results.n, batch.binary)
        if why is not None:
            skipped[name] = why
            continue
        try:
            note = protocol.decision_note(batch)
        except ValueError as exc:
            # e.g. single_run without a threshold on a metric that is not a fraction
            skipped[name] = str(exc)
            continue
        # A fresh stream per protocol from the same seed: a protocol's verdict does not
        # depend on which others ran, and bca shows the CI that paired_bca_perm uses.
        r = protocol.evaluate(batch, alpha=alpha, rng=np.random.default_rng(rng))
        degenerate = bool(r.degenerate)
        if degenerate:
            note = "; ".join(filter(None, [NO_VARIANCE, note]))
        rows.append(ProtocolRow(
            protocol=name,
            estimate_pp=100 * float(r.estimate),
            ci_low_pp=_or_none(100 * float(r.ci_low)),
            ci_high_pp=_or_none(100 * float(r.ci_high)),
            p_value=_or_none(float(r.p_value)),
            significant=bool(r.significant),
            pitfall=protocol.pitfall,
            degenerate=degenerate,
            note=note,
        ))
    return rows, skipped


def _sign_flip_note(k: int, alpha: float) -> str:
    """What the sign-flip p of ``paired_bca_perm`` can reach with ``k`` seeds."""
    p_min = min_sign_flip_pvalue(k)
    if k > get("sign_flip").max_exact_k:
        n_perm = get("sign_flip").n_permutations
        return (f"With k = {k} the sign-flip p is sampled from {n_perm} random sign "
                f"patterns, a Monte Carlo estimate; its smallest value is {p_min:.4g}.")
    if p_min < alpha:
        return (f"With k = {k} the smallest attainable exact sign-flip p is {p_min:.4g}, "
                f"below alpha = {alpha:g}: the paired protocol (paired_bca_perm) can reach "
                f"significance.")
    # Smallest k whose attainable p (2 / 2**k) falls below alpha.
    needed = next(j for j in range(k + 1, 64) if min_sign_flip_pvalue(j) < alpha)
    return (f"With k = {k} the smallest attainable exact sign-flip p is {p_min:.4g}, so the "
            f"paired protocol (paired_bca_perm) can NEVER be significant at alpha = "
            f"{alpha:g}: k >= {needed} seeds are needed.")


def notes_for(results, alpha, rows=()) -> list[str]:
    """Advice a user needs to read the table (``rows``: the verdicts, for their notes)."""
    k = results.k
    notes = [f"{k} seeds, {results.n} question(s) per run; estimates are variant minus "
             f"baseline in percentage points (pp)."]
    if k >= 2:
        notes.append(_sign_flip_note(k, alpha))
        r_b, r_v = results.base.mean(axis=1), results.variant.mean(axis=1)
        if k >= 3 and r_b.std() > 0 and r_v.std() > 0:
            rho = float(np.corrcoef(r_b, r_v)[0, 1])
            notes.append(f"Correlation of the arms' per-seed metrics: {rho:.2f}; pairing "
                         f"helps when it is clearly positive.")
        deltas = ", ".join(f"{100 * x:+.2f}" for x in r_v - r_b)
        notes.append(f"Per-seed deltas (pp): {deltas}.")
        if results.n >= 2:
            notes.append("Per-question scores from several seeds: paired_two_level counts "
                         "both the seeds and the questions as noise; the per-question "
                         "protocols marked as pitfalls count only the questions.")
    notes.extend(f"{r.protocol}: {r.note}." for r in rows if r.note)
    notes.append("Rows marked with a pitfall are shown for teaching: do not report them.")
    return notes


def format_table(rows, skipped, notes, alpha) -> str:
    """Plain-text table of the verdicts."""
    header = f"{'protocol':<26} {'estimate':>9} {'95% CI (pp)':>21} {'p':>8}  verdict"
    header = header.replace("95%", f"{100 * (1 - alpha):g}%")
    lines = [header, "-" * len(header)]
    for r in rows:
        ci = ("" if r.ci_low_pp is None else f"[{r.ci_low_pp:+.2f}, {r.ci_high_pp:+.2f}]")
        p = "" if r.p_value is None else f"{r.p_value:.4f}"
        verdict = "significant" if r.significant else "not significant"
        if r.degenerate:
            verdict += " (no variance estimate)"
        if r.pitfall:
            verdict += f"   (pitfall: {r.pitfall})"
        lines.append(f"{r.protocol:<26} {r.estimate_pp:>+8.2f}pp {ci:>21} {p:>8}  {verdict}")
    if skipped:
        lines.append("")
        lines.append("Not applicable: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()))
    lines.append("")
    lines.extend(f"* {n}" for n in notes)
    return "\n".join(lines)


def build_parser() -> ArgumentParser:
    honest = [n for n in names() if not protocol_class(n).pitfall]
    pitfalls = [n for n in names() if protocol_class(n).pitfall]
    epilog = ("protocols (the ones to report):\n"
              + "".join(f"  {n:<26} {protocol_class(n).summary}\n" for n in honest)
              + "pitfalls (shown for teaching):\n"
              + "".join(f"  {n:<26} {protocol_class(n).pitfall}\n" for n in pitfalls))
    parser = ArgumentParser(
        prog="python -m protocols.evaluate",
        description="Apply every applicable evaluation protocol to your per-seed results.",
        epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="?", default=None,
                        help="tidy CSV: seed,arm,metric or seed,arm,question,score "
                             "(default: the shipped example)")
    parser.add_argument("--baseline", metavar="LOG",
                        help="the baseline's harness log (lm-eval samples_*.jsonl, Inspect "
                             ".eval, HELM per_instance_stats.json, a one-arm CSV, or a folder "
                             "of them); needs --variant")
    parser.add_argument("--variant", metavar="LOG", help="the variant's harness log")
    parser.add_argument("--metric", help="metric, scorer or stat to read from the logs")
    parser.add_argument("--task", help="task to read when a log holds several")
    parser.add_argument("--filter", help="lm-eval filter, HELM perturbation or CSV arm")
    parser.add_argument("--alpha", type=float, default=0.05, help="two-sided level (0.05)")
    parser.add_argument("--protocols", nargs="+", metavar="NAME", choices=names(),
                        help="protocols to apply (default: all applicable)")
    parser.add_argument("--protocol-param", nargs="+", default=[], metavar="KEY=VALUE",
                        help="set on every selected protocol that has the parameter")
    parser.add_argument("--threshold", type=float, default=None, metavar="T",
                        help="single_run's smallest difference called a result, in the "
                             "file's units (default 0.01 = 1 pp for accuracies as fractions; "
                             "required for other metrics)")
    parser.add_argument("--percent", action="store_true",
                        help="scores are percentages (91.2) rather than fractions (0.912)")
    parser.add_argument("--metric-range", nargs=2, type=float, metavar=("LOW", "HIGH"),
                        help="valid scores of a metric that is not a fraction in [0, 1]")
    parser.add_argument("--partial-credit", action="store_true",
                        help="allow a few scores other than 0 and 1 in a per-question file")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling (0)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


def _check_args(args) -> None:
    check_alpha(args.alpha, "--alpha")
    check_int(args.seed, "--seed", low=0, high=2**63 - 1)
    if args.metric_range is not None:
        low, high = args.metric_range
        check_number(low, "--metric-range", low=-MAX_RANGE, high=MAX_RANGE)
        check_number(high, "--metric-range", low=low, high=MAX_RANGE, low_open=True)
        if args.percent:
            raise ValueError("--percent and --metric-range exclude each other: declare the "
                             "range in the file's own units")
    if (args.baseline is None) != (args.variant is None):
        raise ValueError("--baseline and --variant go together: name both arms' logs")
    if args.baseline is not None and args.results is not None:
        raise ValueError(f"give either a results CSV ({args.results}) or --baseline and "
                         f"--variant, not both")


def _read(args):
    """The paired results the arguments name, checked; and the log pairing (or None)."""
    scale = 0.01 if args.percent else 1.0
    logs = []
    if args.baseline is not None:
        results = read_any(args.baseline, args.variant, metric=args.metric, task=args.task,
                           filter=args.filter, scale=scale, logs=logs)
    else:
        if any(v is not None for v in (args.metric, args.task, args.filter)):
            raise ValueError("--metric, --task and --filter read harness logs: use them "
                             "with --baseline and --variant")
        results = read_any(args.results or example_path(), scale=scale)
    declared = args.metric_range is not None
    check_scores(results, value_range=tuple(args.metric_range) if declared else (0.0, 1.0),
                 percent=args.percent, declared=declared, partial=args.partial_credit)
    return results, (logs[0] if logs else None)


def _check_params(params: dict, chosen) -> None:
    chosen = names() if chosen is None else chosen
    for key in params:
        if not any(PROTOCOLS.accepts(name, key) for name in chosen):
            raise ValueError(f"--protocol-param {key!r} is not a parameter of any selected "
                             f"protocol ({', '.join(chosen)})")


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    _check_args(args)
    params = parse_key_values(args.protocol_param, "--protocol-param")
    if args.threshold is not None:
        if "threshold" in params:
            raise ValueError("Give single_run's threshold once: --threshold or "
                             "--protocol-param threshold=, not both.")
        # The file's units, scaled like the scores (with --percent, 1 means 1 pp).
        params["threshold"] = args.threshold * (0.01 if args.percent else 1.0)
    _check_params(params, args.protocols)
    results, paired = _read(args)
    rows, skipped = evaluate_results(results, alpha=args.alpha, protocols=args.protocols,
                                     rng=args.seed, params=params)
    notes = notes_for(results, check_alpha(args.alpha), rows)
    if args.json:
        out = {"source": results.source, "k": results.k, "n": results.n,
               "alpha": args.alpha, "rows": [asdict(r) for r in rows],
               "not_applicable": skipped, "notes": notes}
        if paired is not None:
            out["matching"] = {"matched": paired.n,
                               "dropped_baseline": list(paired.dropped_baseline),
                               "dropped_variant": list(paired.dropped_variant)}
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"Results: {results.source}")
        if paired is not None:
            print("\n".join(paired.summary_lines()))
        print(format_table(rows, skipped, notes, args.alpha))
    return 0


def run() -> None:
    """Console entry point."""
    run_main(main, "python -m protocols.evaluate")


