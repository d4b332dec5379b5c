"""What the user's harness would have said: its registered default run on the same arms.

When the arms came from harness logs, the log format's reader names the protocol that
reproduces what that harness prints by default to compare two runs
(:attr:`evalcal_core.readers.Reader.harness_default`: Inspect's ``stderr()`` intervals,
lm-eval's ``acc_stderr`` intervals, read for overlap). It is run on every compared pair of
arms (:func:`protocols.analysis.protocol_table.evaluate_protocols`, the two-arm table's
engine), and its measured false-positive rate under this design is read from the shipped
harness-defaults table (``protocols/evidence/harness_defaults.csv``, the CSV
:mod:`sim.harness_defaults` writes, with its sidecar ``harness_defaults.json`` naming the
command, code version and date it was computed with; the view names them beside the rate),
or from a table the caller passes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources

from evalcal_core import readers
from evalcal_core.validate import InvalidParameterError
from protocols import protocol_class
from protocols.analysis.design import cluster_codes
from protocols.analysis.protocol_table import evaluate_protocols

#: the shipped harness-defaults table, inside the ``protocols`` package, and its sidecar
SHIPPED = ("evidence", "harness_defaults.csv")
SHIPPED_META = ("evidence", "harness_defaults.json")
#: how the table is made, for the view's "recompute" line
COMMAND = "python -m sim.harness_defaults --out OUT"


@dataclass(frozen=True)
class HarnessView:
    """The user's harness default beside the verdict.

    Attributes
    ----------
    formats : tuple of str
        The logs' formats (one per arm, deduplicated).
    protocol : str
        The registered protocol reproducing the harness's default ("" where none is).
    harness : str
        What it reproduces (:attr:`protocols.Protocol.harness`).
    rows : list of tuple
        ``(comparison, ProtocolRow or None, why it could not run)`` per compared pair.
    measured : dict or None
        Its nearest cell in the harness-defaults table (:func:`nearest_measured`).
    note : str
        Why there is no protocol or no measured rate, in words ("" when both are there).
    source : str
        Where the measured rate comes from, in words: the shipped table's command, code
        version and date, or the path of the table passed ("" without a table).
    """

    formats: tuple
    protocol: str
    harness: str
    rows: list
    measured: dict | None
    note: str
    source: str = ""


def shipped_table(table=None):
    """The harness-defaults rows as a DataFrame: ``table`` (a CSV path) or the shipped one;
    ``None`` when none is shipped."""
    import pandas as pd

    if table is None:
        path = resources.files("protocols").joinpath(*SHIPPED)
        if not path.is_file():
            return None
        table = path
    return pd.read_csv(table)


def shipped_provenance() -> dict | None:
    """The shipped table's sidecar (``command``, ``code_version``, ``date``, ``rows``, ...);
    ``None`` when none is shipped."""
    path = resources.files("protocols").joinpath(*SHIPPED_META)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def table_source(table=None) -> str:
    """Where the measured rate is read from, in words: the shipped table's command, code
    version and date, or ``table``'s path ("" when neither is there)."""
    if table is not None:
        return f"the harness-defaults table {table}"
    meta = shipped_provenance()
    if meta is None:
        return ""
    return (f"the shipped harness-defaults table ({meta['command']}, code "
            f"{meta['code_version']}, {meta['date']})")


def nearest_measured(frame, protocol: str, design) -> dict | None:
    """The table's cell nearest ``design`` for ``protocol``.

    Its cells of the same kind, then those whose runs per arm equal ``design.runs`` where
    any has them (else the nearest), then the nearest question count on a log scale. Where
    several rows tie (a real pool's group has one row per model), the one with the highest
    false-positive rate: the worst case of that cell, not whichever row comes first.

    Returns
    -------
    dict or None
        ``rate``, ``rate_low``, ``rate_high`` (fractions), ``state``, ``group``,
        ``n_questions``, ``k``, ``sims`` of that row, and ``tied`` (how many rows tied, 1 for
        a synthetic cell); ``None`` when the table has no cell of this protocol and kind.
    """
    if frame is None:
        return None
    cells = frame[(frame["protocol"] == protocol) & (frame["kind"] == design.kind)]
    if cells.empty:
        return None
    runs = (cells["k"] - design.runs).abs()
    cells = cells[runs == runs.min()]
    distance = (cells["n_questions"].map(math.log) - math.log(max(design.n_questions, 1))).abs()
    cells = cells[distance == distance.min()]
    row = cells.loc[cells["rate"].idxmax()]
    out = {key: (row[key].item() if hasattr(row[key], "item") else row[key])
           for key in ("rate", "rate_low", "rate_high", "state", "group", "n_questions", "k",
                       "sims")}
    return {**out, "tied": len(cells)}


def harness_view(evaluation, table=None) -> HarnessView | None:
    """The harness default of ``evaluation``'s logs run on its compared pairs; ``None`` when
    the arms did not come from harness logs (or with ``--leaderboard``).

    Parameters
    ----------
    evaluation : reports.evaluate.cli.Evaluation
    table : path, optional
        A harness-defaults CSV to read the measured rate from (default: the shipped one).
    """
    logs = evaluation.paired_logs
    if logs is None or evaluation.analysis is None:
        return None
    formats = tuple(dict.fromkeys(log.format for log in logs.logs.values()))
    if len(formats) > 1:
        return HarnessView(formats, "", "", [], None, "the arms came from different "
                           f"harnesses ({', '.join(formats)}): no one harness default")
    reader = readers.get(formats[0])
    scores = evaluation.scores
    clustered = scores.clusters is not None
    name = reader.harness_default_clustered if clustered else reader.harness_default
    if not name:
        return HarnessView(formats, "", "", [], None, f"no harness default of {formats[0]} "
                           f"logs{' with clusters' if clustered else ''} is registered")
    design, units = evaluation.design, evaluation.units
    codes = cluster_codes(scores)
    rows = []
    for c in evaluation.analysis.comparisons:
        if scores.ragged:
            rows.append((c, None, "the arms' runs differ in number"))
            continue
        try:
            found, skipped = evaluate_protocols(
                scores.arm(c.base), scores.arm(c.variant), kind=design.kind,
                alpha=evaluation.config.alpha, protocols=[name], rng=evaluation.config.seed,
                clusters=codes, factor=units.factor)
        except InvalidParameterError as exc:  # e.g. a parameter the harness cannot take
            found, skipped = [], {name: str(exc)}
        rows.append((c, found[0] if found else None, skipped.get(name, "")))
    frame = shipped_table(table)
    measured = nearest_measured(frame, name, design)
    note = "" if measured is not None else (
        "no harness-defaults results are shipped with evalcal; "
        f"docs/harness_defaults.md holds the measured table, and {COMMAND} recomputes it"
        if frame is None else f"{table_source(table)} has no {design.kind} cell of {name}")
    return HarnessView(formats, name, protocol_class(name).harness, rows, measured, note,
                       table_source(table) if frame is not None else "")
