"""The evidence beside a verdict: the reported protocol's measured false-positive rate and
power in the calibrated cells nearest to the user's design.

The numbers are read from the table ``python -m sim.evidence`` writes (shipped as
``protocols/evidence/evidence.csv``, its command and version in ``evidence.json`` beside it;
reading only, nothing is simulated here). :func:`nearest` picks, among the rows of the same
design kind and protocol, the nearest synthetic and the nearest real cell to the user's
(questions, runs per arm, clusters):

    distance = sqrt( (ln n - ln n')^2 + (runs - runs')^2 + (ln c - ln c')^2 )

with ``c`` the clusters (counted only for the clustered design; ``n`` only for the
question-level designs, the per-seed designs' cells differing in seeds alone). Among cells
equally near, the conservative one is taken: the highest false-positive rate, then the
first in the table. A cell's power rows (effect != 0) are those of the same shape and
source. No cell of the kind and protocol: the evidence says so, with no number.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

#: the shipped table and its sidecar (package data)
TABLE = Path(__file__).resolve().parent.parent / "evidence" / "evidence.csv"
SIDECAR = TABLE.with_suffix(".json")

#: the command that recomputes the real cells on a user's own pool
RECOMPUTE = "python -m sim.evidence --llm-pools YOUR_POOL --out OUT"
#: the kinds whose cells differ in questions (the per-seed designs' do not)
_QUESTION_LEVEL_COLUMN = "n_questions"


@dataclass(frozen=True)
class Power:
    """Power of a cell at one effect.

    Attributes
    ----------
    effect_pp : float
        The true effect, percentage points of the metric (``units``).
    units : str
    rate, low, high : float
        Rejection rate and its Wilson 95% interval (fractions).
    sims : int
    ci_width_pp : float
        The protocol's median 95% CI width in that cell (pp): the noise the effect faced.
    """

    effect_pp: float
    units: str
    rate: float
    low: float
    high: float
    sims: int
    ci_width_pp: float


@dataclass(frozen=True)
class EvidenceCell:
    """One calibrated cell nearest the user's design.

    Attributes
    ----------
    source : str
        The generator's name, or the real pool's ``FILE@sha256-16``.
    real : bool
    n_questions, runs, clusters : int
        The cell's shape (clusters 0: none).
    distance : float
        Its distance to the user's design (module docstring).
    rate, low, high : float
        False-positive rate at effect 0 and its Wilson 95% interval (fractions).
    sims, rejections : int
    state : str
        The validity rule's verdict on the rate (valid, invalid, undecided).
    pool_models : int
        Real pools: models the A/A cell draws from (0 for synthetic cells).
    worst_model : str
    worst_rate : float
        Real pools: the model with the highest rate, and that rate.
    params : str
        The generator's parameters (synthetic), what the noise was.
    power : tuple of Power
        The same shape's power rows (synthetic; real pools' A/B pairs).
    """

    source: str
    real: bool
    n_questions: int
    runs: int
    clusters: int
    distance: float
    rate: float
    low: float
    high: float
    sims: int
    rejections: int
    state: str
    pool_models: int
    worst_model: str
    worst_rate: float
    params: str
    power: tuple = ()

    def shape(self, kind_is_clustered: bool, question_level: bool) -> str:
        """``n = 300, r = 2`` (with ``G = 10`` for clustered designs)."""
        parts = [f"n = {self.n_questions:,}"] if question_level else []
        parts.append(f"r = {self.runs}")
        if kind_is_clustered and self.clusters:
            parts.append(f"G = {self.clusters}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Evidence:
    """The evidence for one protocol under one design.

    Attributes
    ----------
    kind, protocol : str
    n_questions, runs, clusters : int
        The user's design.
    synthetic, real : EvidenceCell or None
        The nearest synthetic and real cells (``None``: the table has none).
    command : str
        How to recompute the real cells on the user's own pool.
    table : str
        Where the numbers come from (the table's command and version).
    """

    kind: str
    protocol: str
    n_questions: int
    runs: int
    clusters: int
    synthetic: EvidenceCell | None
    real: EvidenceCell | None
    command: str
    table: str

    @property
    def found(self) -> bool:
        return self.synthetic is not None or self.real is not None

    def describe(self) -> str:
        """One line: ``evidence: PROTOCOL: false positives ... ; power ...; recompute ...``."""
        if not self.found:
            return (f"evidence: {self.protocol}: no calibrated cell for design {self.kind} in "
                    f"the evidence table (no number to show); compute one: {self.command}")
        parts = []
        # the clustered design's cells are the ones with clusters
        clustered = any(c is not None and c.clusters > 0 for c in (self.real, self.synthetic))
        ql = self.n_questions > 1
        for cell in (self.real, self.synthetic):
            if cell is None:
                continue
            rate = f"{_pct(cell.rate)} [{_pct(cell.low, 1)}, {_pct(cell.high, 1)}]"
            where = (f"{cell.source.split('@')[0]} A/A ({cell.pool_models} models; worst "
                     f"{cell.worst_model} {_pct(cell.worst_rate)})" if cell.real
                     else f"synthetic {cell.source}")
            near = self._near(cell, clustered, ql)
            power = "; ".join(f"power at {p.effect_pp:+.3g} pp: {_pct(p.rate, 0)}"
                              for p in cell.power)
            parts.append(f"{rate} on {where}, {cell.shape(clustered, ql)}{near}"
                         + (f"; {power}" if power else ""))
        head = f"evidence: {self.protocol}: false positives " + "; ".join(parts)
        return f"{head}; recompute on your pool: {self.command}"

    def _near(self, cell: EvidenceCell, clustered: bool, ql: bool) -> str:
        yours = []
        if ql and cell.n_questions != self.n_questions:
            yours.append(f"n = {self.n_questions:,}")
        if cell.runs != self.runs:
            yours.append(f"r = {self.runs}")
        if clustered and cell.clusters != self.clusters:
            yours.append(f"G = {self.clusters}")
        return f" (nearest; yours {', '.join(yours)})" if yours else ""

    def to_dict(self) -> dict:
        """The JSON ``evidence`` object."""
        def cell(c):
            if c is None:
                return None
            out = {k: getattr(c, k) for k in ("source", "n_questions", "runs", "clusters",
                                              "distance", "rate", "low", "high", "sims",
                                              "rejections", "state")}
            if c.real:
                out.update(pool_models=c.pool_models, worst_model=c.worst_model,
                           worst_rate=c.worst_rate)
            out["power"] = [{"effect_pp": p.effect_pp, "units": p.units, "rate": p.rate,
                             "low": p.low, "high": p.high, "sims": p.sims,
                             "median_ci_width_pp": p.ci_width_pp} for p in c.power]
            return out
        return {"protocol": self.protocol, "kind": self.kind,
                "design": {"n_questions": self.n_questions, "runs": self.runs,
                           "clusters": self.clusters},
                "synthetic": cell(self.synthetic), "real": cell(self.real),
                "recompute": self.command, "table": self.table, "line": self.describe()}


def _pct(x: float, digits: int = 1) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.{digits}f}%"


@functools.lru_cache(maxsize=4)
def load_table(path: str | None = None) -> pd.DataFrame:
    """The evidence table (default: the shipped one); an empty frame when it is missing."""
    path = Path(path) if path is not None else TABLE
    if not path.is_file():
        return pd.DataFrame()
    return pd.read_csv(path, keep_default_na=True,
                       dtype={"source": str, "worst_model": str, "pair": str, "state": str})


def table_provenance(path: str | None = None) -> str:
    """The table's command and code version (from the sidecar JSON), or its path."""
    table = Path(path) if path is not None else TABLE
    side = table.with_suffix(".json")
    if side.is_file():
        meta = json.loads(side.read_text())
        return f"{meta.get('command', '')} ({meta.get('code_version', '')}, {meta.get('date', '')})"
    return str(table)


def nearest(kind: str, protocol: str, n_questions: int, runs: int, clusters: int = 0, *,
            path: str | None = None) -> Evidence:
    """The nearest synthetic and real cells of ``kind`` and ``protocol`` to the design.

    Parameters
    ----------
    kind : str
        A design kind (:data:`evalcal_core.designs.KINDS`).
    protocol : str
        The protocol the verdict reports.
    n_questions : int
        Questions per run (1: one metric per run).
    runs : int
        Runs per arm (seeds, or repeats per question).
    clusters : int
        Clusters (0: none).
    path : str or None
        Another table (default: the shipped one).

    Returns
    -------
    Evidence
    """
    return _nearest(kind, protocol, int(n_questions), int(runs), int(clusters),
                    None if path is None else str(path))


@functools.lru_cache(maxsize=1024)
def _nearest(kind, protocol, n_questions, runs, clusters, path) -> Evidence:
    # cached: the decision grid analyses thousands of experiments of one design
    table = load_table(path)
    cells = (table[(table["kind"] == kind) & (table["protocol"] == protocol)]
             if len(table) else table)
    # distance on clusters only where the kind's cells have clusters (the clustered design)
    clustered = bool(len(cells)) and bool((cells["clusters"] > 0).any())
    found = {}
    for real in (False, True):
        part = cells[(cells["pool_models"] > 0) == real] if len(cells) else cells
        found[real] = _nearest_cell(part, n_questions, runs, clusters, clustered, real)
    return Evidence(kind, protocol, n_questions, runs, clusters, found[False], found[True],
                    RECOMPUTE, table_provenance(path))


def _distance(frame, n, runs, clusters, clustered):
    d2 = (frame["runs"].astype(float) - runs) ** 2
    if n > 1:
        d2 = d2 + (frame["n_questions"].clip(lower=1).map(math.log) - math.log(n)) ** 2
    if clustered:
        d2 = d2 + (frame["clusters"].clip(lower=1).map(math.log) - math.log(max(clusters, 1))) ** 2
    return d2.map(math.sqrt)


def _nearest_cell(part, n, runs, clusters, clustered, real) -> EvidenceCell | None:
    null = part[part["effect_pp"] == 0] if len(part) else part
    if not len(null):
        return None
    dist = _distance(null, n, runs, clusters, clustered)
    best = dist.min()
    # equally near (to rounding): the conservative cell, highest rate, then table order
    tied = null[(dist - best).abs() <= 1e-9]
    row = tied.loc[tied["rate"].idxmax()]
    same = ((part["source"] == row["source"]) & (part["n_questions"] == row["n_questions"])
            & (part["runs"] == row["runs"]) & (part["clusters"] == row["clusters"])
            & (part["effect_pp"] != 0))
    for column in ("icc", "sd_ratio"):
        if not pd.isna(row[column]):
            same &= part[column] == row[column]
    power = tuple(Power(float(p.effect_pp), str(p.effect_units), float(p.rate),
                        float(p.rate_low), float(p.rate_high), int(p.sims),
                        float(p.median_ci_width_pp))
                  for p in part[same].sort_values("effect_pp").itertuples())
    return EvidenceCell(
        source=str(row["source"]), real=real, n_questions=int(row["n_questions"]),
        runs=int(row["runs"]), clusters=int(row["clusters"]), distance=float(best),
        rate=float(row["rate"]), low=float(row["rate_low"]), high=float(row["rate_high"]),
        sims=int(row["sims"]), rejections=int(row["rejections"]),
        state=str(row["state"]) if not pd.isna(row["state"]) else "",
        pool_models=int(row["pool_models"]),
        worst_model=str(row["worst_model"]) if not pd.isna(row["worst_model"]) else "",
        worst_rate=float(row["worst_rate"]), params=str(row["generator_params"]),
        power=power)
