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

A protocol is a pitfall on a real pool at the user's shape (:attr:`Evidence.pitfall`,
:func:`real_pitfall`) when the nearest real A/A cell is over its level *and* the user's
shape lies inside the range the real cells measured (questions, runs and clusters each
between the smallest and the largest real cell's): inside it the nearest cell interpolates
what was measured; outside it the nearest cell is an extrapolation, printed as a warning
only. ``evaluate`` then labels the protocol a pitfall in its table and gives no verdict
with it as the comparisons' protocol (:mod:`protocols.analysis.compare`).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalcal_core.designs import COMPARE_METHODS
from evalcal_core.designs import get as get_design

#: the shipped table and its sidecar (package data)
TABLE = Path(__file__).resolve().parent.parent / "evidence" / "evidence.csv"
SIDECAR = TABLE.with_suffix(".json")

#: the command that recomputes the table, for designs of training methods (synthetic cells)
RECOMPUTE = "python -m sim.evidence --out OUT"
#: ... and for fixed models, whose table can take the user's own pool of repeated runs
RECOMPUTE_POOL = ("python -m sim.evidence --llm-pools YOUR_POOL.csv --out OUT (adds A/A cells "
                  "from your own repeated runs: evalcal pools from-logs)")
#: the level every cell of the table was run at (sim.evidence's ALPHA)
LEVEL = 0.05


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

    def shape(self, seeds: bool, clustered: bool) -> str:
        """``400 questions, 2 runs`` (``3 clusters`` added for the clustered design;
        ``3 seeds`` for the training-method designs, whose cells differ in seeds alone)."""
        if seeds:
            return _count(self.runs, "seed")
        parts = [_count(self.n_questions, "question"), _count(self.runs, "run")]
        if clustered and self.clusters:
            parts.append(_count(self.clusters, "cluster"))
        return ", ".join(parts)

    @property
    def over_level(self) -> bool:
        """Whether the validity rule judged the cell's false-positive rate over the level."""
        return self.state == "invalid"


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
    inside_real : bool
        Whether the user's shape lies inside the range of the real A/A cells (module
        docstring): the nearest real cell then speaks for the shape.
    real_valid : EvidenceCell or None
        The nearest real A/A cell within its level with at least the user's questions, runs
        and clusters (what would be shown valid on the same pool), or ``None``.
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
    inside_real: bool = False
    real_valid: EvidenceCell | None = None

    @property
    def found(self) -> bool:
        return self.synthetic is not None or self.real is not None

    @property
    def seeds(self) -> bool:
        """Whether the design's runs are training seeds (the methods designs)."""
        return get_design(self.kind).compare == COMPARE_METHODS

    @property
    def clustered(self) -> bool:
        return get_design(self.kind).clustered

    @property
    def over_level(self) -> list[EvidenceCell]:
        """The nearest cells (real first) where the protocol was over its level."""
        return [c for c in (self.real, self.synthetic) if c is not None and c.over_level]

    @property
    def pitfall(self) -> EvidenceCell | None:
        """The real A/A cell that makes the protocol a pitfall at the user's shape: the
        nearest real cell, over its level, with the shape inside the real cells' range."""
        real = self.real
        return real if real is not None and real.over_level and self.inside_real else None

    def pitfall_reason(self) -> str:
        """Why the protocol is a pitfall at the user's shape (one clause, no final period),
        or ``""``."""
        cell = self.pitfall
        if cell is None:
            return ""
        at = "at this shape" if cell.distance == 0 else "at the nearest shape measured"
        text = (f"over its level on a real pool {at}: {_pct(cell.rate)} "
                f"[{_pct(cell.low)}, {_pct(cell.high)}] false positives at level {LEVEL:.0%} "
                f"in {cell.sims:,} A/A experiments on {cell.source.split('@')[0]} "
                f"({cell.pool_models} models), {cell.shape(self.seeds, self.clustered)}"
                f"{self._near(cell)}")
        better = self.real_valid
        if better is not None:
            text += (f"; on the same pool it holds its level at "
                     f"{better.shape(self.seeds, self.clustered)} ({_pct(better.rate)})")
        return text

    def lines(self, alpha: float = LEVEL, fraction: bool = True) -> list[str]:
        """What ``evaluate`` prints: a head line, one line per nearest cell (real first),
        a warning when a cell is over the level, and the command that recomputes.

        Parameters
        ----------
        alpha : float
            The user's level; the table's cells are at :data:`LEVEL` only, and another level
            is said to be uncalibrated here.
        fraction : bool
            Whether the user's metric is a fraction (an accuracy). The cells' effects are pp
            of an accuracy: for a metric in its own units their power says nothing about the
            user's effects and is left out (the false-positive rate, at effect 0 of
            location-scale invariant tests, holds in any units).
        """
        if not self.found:
            return [f"evidence for {self.protocol}: the evidence table has no calibrated cell "
                    f"for design {self.kind} (no number to show); compute one: {self.command}"]
        other = ("" if math.isclose(alpha, LEVEL) else
                 f"; your alpha {alpha:g} has no cells in the table")
        out = [f"evidence for {self.protocol} (false positives at level {LEVEL:.0%}, measured; "
               f"Wilson 95% intervals{other}):"]
        for cell in (self.real, self.synthetic):
            if cell is not None:
                out.append("  " + self._cell_line(cell, fraction))
        for cell in self.over_level:
            where = "a real pool" if cell.real else "a synthetic world"
            if cell is self.pitfall:
                out.append(f"  pitfall: {self.protocol} was over its level on the real cell "
                           "above, and your shape lies inside the real cells measured: it is "
                           "labelled a pitfall here and gives no verdict")
                continue
            out.append(f"  warning: {self.protocol} was over its level on {where} near this "
                       f"design ({_pct(cell.rate)} [{_pct(cell.low)}, {_pct(cell.high)}], "
                       f"{cell.shape(self.seeds, self.clustered)}): its verdict here may be a "
                       "false positive more often than alpha says")
        out.append(f"  recompute: {self.command}")
        return out

    def describe(self, alpha: float = LEVEL, fraction: bool = True) -> str:
        """:meth:`lines` as one line (the JSON ``line``)."""
        head, *rest = (line.strip() for line in self.lines(alpha, fraction))
        return " ".join([head, "; ".join(rest)]) if rest else head

    def _cell_line(self, cell: EvidenceCell, fraction: bool = True) -> str:
        rate = f"{_pct(cell.rate)} [{_pct(cell.low)}, {_pct(cell.high)}]"
        if cell.real:
            where = (f"real {cell.source.split('@')[0]} A/A, {cell.pool_models} models "
                     f"(per model: worst {cell.worst_model} {_pct(cell.worst_rate)})")
        else:
            where = f"synthetic {cell.source}"
        text = (f"{'real' if cell.real else 'synthetic'}: {rate} ({cell.state or 'not judged'},"
                f" {cell.sims:,} experiments) on {where.split(' ', 1)[1]}, "
                f"{cell.shape(self.seeds, self.clustered)}{self._near(cell)}")
        if cell.power and not fraction:
            text += ("; power not shown (its effects are accuracy points; your metric has its "
                     "own units)")
        elif cell.power:
            width = cell.power[0].ci_width_pp
            power = ", ".join(f"{_pct(p.rate, 0)} at {p.effect_pp:+.3g} pp" for p in cell.power)
            text += f"; power {power}"
            if not math.isnan(width):
                text += f" (there the median 95% CI was {width:.3g} pp wide)"
        return text

    def _near(self, cell: EvidenceCell) -> str:
        yours = []
        if not self.seeds and cell.n_questions != self.n_questions:
            yours.append(_count(self.n_questions, "question"))
        if cell.runs != self.runs:
            yours.append(_count(self.runs, "seed" if self.seeds else "run"))
        if self.clustered and cell.clusters != self.clusters:
            yours.append(_count(self.clusters, "cluster"))
        return f" (nearest; yours: {', '.join(yours)})" if yours else ""

    def to_dict(self, alpha: float = LEVEL, fraction: bool = True) -> dict:
        """The JSON ``evidence`` object (``alpha``, ``fraction``: as :meth:`lines`)."""
        def cell(c):
            if c is None:
                return None
            out = {k: getattr(c, k) for k in ("source", "n_questions", "runs", "clusters",
                                              "distance", "rate", "low", "high", "sims",
                                              "rejections", "state", "over_level")}
            if c.real:
                out.update(pool_models=c.pool_models, worst_model=c.worst_model,
                           worst_rate=c.worst_rate)
            out["power"] = [{"effect_pp": p.effect_pp, "units": p.units, "rate": p.rate,
                             "low": p.low, "high": p.high, "sims": p.sims,
                             "median_ci_width_pp": p.ci_width_pp} for p in c.power]
            return out
        out = {"protocol": self.protocol, "kind": self.kind,
               "design": {"n_questions": self.n_questions, "runs": self.runs,
                          "clusters": self.clusters},
               "synthetic": cell(self.synthetic), "real": cell(self.real),
               "recompute": self.command, "table": self.table,
               "level": LEVEL, "over_level": bool(self.over_level)}
        if self.over_level:
            # said only where a cell is over its level: the bodies of other outputs stay
            # as they were
            out["inside_real"] = self.inside_real
        if self.pitfall is not None:
            out["pitfall"] = self.pitfall_reason()
            out["real_valid"] = cell(self.real_valid)
        out["line"] = self.describe(alpha, fraction)
        return out


def _count(k: int, noun: str) -> str:
    return f"{k:,} {noun}{'' if k == 1 else 's'}"


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
    real_null = cells[(cells["pool_models"] > 0) & (cells["effect_pp"] == 0)] if len(cells) \
        else cells
    inside = _inside(real_null, n_questions, runs, clusters, clustered)
    # the nearest real cell within its level at no smaller a shape: what the pool supports
    larger = real_null
    if len(larger):
        larger = larger[(larger["state"] == "valid") & (larger["runs"] >= runs)
                        & (larger["n_questions"] >= n_questions)
                        & ((larger["clusters"] >= clusters) if clustered else True)]
    real_valid = _nearest_cell(larger, n_questions, runs, clusters, clustered, True)
    command = RECOMPUTE if get_design(kind).compare == COMPARE_METHODS else RECOMPUTE_POOL
    return Evidence(kind, protocol, n_questions, runs, clusters, found[False], found[True],
                    command, table_provenance(path), inside, real_valid)


def _inside(frame, n, runs, clusters, clustered) -> bool:
    """Whether the shape lies inside the range of ``frame``'s cells, each of questions (the
    question-level designs), runs and clusters (the clustered design) between its smallest
    and largest."""
    if not len(frame):
        return False
    inside = frame["runs"].min() <= runs <= frame["runs"].max()
    if n > 1:
        inside &= frame["n_questions"].min() <= n <= frame["n_questions"].max()
    if clustered:
        inside &= frame["clusters"].min() <= clusters <= frame["clusters"].max()
    return bool(inside)


def real_pitfall(kind: str, protocol: str, n_questions: int, runs: int,
                 clusters: int = 0) -> str:
    """Why ``protocol`` is a pitfall under design ``kind`` at this shape on a real pool
    (:attr:`Evidence.pitfall`), or ``""``: what ``evaluate``'s table labels and its
    comparisons refuse, and what the decision grid reads for the same experiments."""
    return nearest(kind, protocol, n_questions, runs, clusters).pitfall_reason()


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
