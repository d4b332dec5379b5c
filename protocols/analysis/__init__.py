"""One analysis of a user's arms: the statistics ``evaluate`` prints, below every front end.

``python -m protocols.evaluate`` (:mod:`reports.evaluate`), the Python function
``evalcal.compare`` and the decision grid's families (:mod:`sim.decisions`) all call
:func:`analyze`; the report layer only reads the :class:`Analysis` it returns and writes it
as text, Markdown, LaTeX, JSON or a figure. What differs by study design (the units, the
primary protocol, the joint null) is read from the design; the pieces:

* :mod:`.design` — the study design inferred from the scores or declared;
* :mod:`.designs` — what the analysis does by design (one module per kind): the paired
  units, the joint null, how the primary protocol is called, the effect size, the claim
  test; every piece below asks the design's object and none branches on its name;
* :mod:`.arms` — the comparisons of many arms on one experiment or a batch: the primary
  protocol per comparison, every correction's adjusted p and simultaneous intervals, claims;
* :mod:`.compare` — the per-design comparison of two or more arms as ``evaluate`` prints it
  (:mod:`.arms` on one experiment, plus refusals, effect sizes, notes and the compact
  ranking);
* :mod:`.board` — ``--leaderboard``: every pair at once, tiers, rank intervals, best set;
* :mod:`.stream` — ``--stream``: the anytime-valid reading in arrival order;
* :mod:`.protocol_table` — the two-arm table of every applicable protocol, labelled for the
  design.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from evalcal_core.designs import Design
from evalcal_core.scores import ArmScores
from evalcal_core.validate import check_alpha
from protocols.claims import EXIT_STATUS
from protocols.streaming import METHODS

from . import designs
from .board import rank_board
from .compare import CORRECTIONS, Comparisons, compare_arms
from .design import cluster_codes, infer_design
from .evidence import Evidence, nearest
from .protocol_table import evaluate_protocols, notes_for
from .stream import stream_summary

__all__ = ["CORRECTIONS", "Analysis", "Comparisons", "Plan", "analyze", "infer_design"]


@dataclass(frozen=True)
class Plan:
    """What to compute on the arms (the statistical options of ``evaluate``).

    Attributes
    ----------
    alpha : float
        Family-wise (or false-discovery, ``bh``) level.
    correction : str
        One of :data:`CORRECTIONS`.
    reference : str or None
        Many-to-one comparisons against this arm; all pairs when ``None``.
    claim : str or None
        ``superiority``, ``non-inferiority`` or ``equivalence``.
    margin : float or None
        The claim's margin in the scores' units (fractions for accuracies).
    leaderboard : bool
        Rank every system at once instead of comparing arms.
    stream : bool
        Add the anytime-valid reading of two arms in arrival order.
    stream_method : str
        The confidence sequence (:data:`protocols.streaming.METHODS`).
    protocols : tuple of str or None
        The two-arm table's protocols (``None``: every one that runs).
    params : dict or None
        Parameters set on the table's protocols.
    seed : int
        Seed of every resampling.
    fraction : bool
        Whether scores are fractions (accuracies, shown in pp).
    binary : bool
        Whether the scores are 0/1 per question.
    table : bool
        Whether to compute the two-arm table of every protocol.
    equal_variances : bool
        Independent seeds: the arms' variances are declared equal, so ``maxt`` is Dunnett's
        or Tukey's pooled-variance test (:func:`compare_arms`).
    lower_is_better : bool
        The metric is a loss: claims and the ranking read lower as better
        (:func:`compare_arms`); the differences stay ``variant - base``.
    """

    alpha: float = 0.05
    correction: str = "holm"
    reference: str | None = None
    claim: str | None = None
    margin: float | None = None
    leaderboard: bool = False
    stream: bool = False
    stream_method: str = METHODS[0]
    protocols: tuple | None = None
    params: dict | None = None
    seed: int = 0
    fraction: bool = True
    binary: bool = False
    table: bool = True
    equal_variances: bool = False
    lower_is_better: bool = False

    @property
    def factor(self) -> float:
        """Display units per score unit: 100 for fractions (pp), else 1."""
        return 100.0 if self.fraction else 1.0

    @property
    def unit(self) -> str:
        """The name of the display unit."""
        return "pp" if self.fraction else "metric units"


@dataclass(frozen=True)
class Analysis:
    """Everything :func:`analyze` computed, read by every front end.

    Attributes
    ----------
    design : Design
    plan : Plan
    comparisons : Comparisons or None
        The arms' comparisons (``None`` with a leaderboard).
    board : protocols.leaderboard.Leaderboard or None
    board_unit : str
        The leaderboard's paired unit (``questions``, ``seeds``, ``clusters``).
    stream : dict or None
        The anytime-valid reading (:func:`.stream.stream_summary`).
    rows, skipped, table_notes : list, dict, list
        The two-arm table of every applicable protocol (empty with more arms or ragged
        seeds), in display units (pp for fractions).
    evidence : protocols.analysis.evidence.Evidence or None
        The reported protocol's measured false-positive rate and power in the calibrated
        cells nearest this design (:func:`.evidence.nearest`; ``None`` with a leaderboard).
    """

    design: Design
    plan: Plan
    comparisons: Comparisons | None = None
    board: object = None
    board_unit: str = ""
    stream: dict | None = None
    rows: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)
    table_notes: list = field(default_factory=list)
    evidence: Evidence | None = None

    @property
    def gate(self) -> int | None:
        """The claim's exit status (0 shown, 1 refuted, 3 inconclusive), or ``None``
        without a claim: the anytime-valid verdict with ``stream`` (valid after any number
        of looks), else the fixed-n claim over the comparisons. The one status that the
        process, the text and the JSON report."""
        if self.stream is not None and "claim" in self.stream:
            return EXIT_STATUS[self.stream["claim"]["verdict"]]
        return None if self.comparisons is None else self.comparisons.gate


def analyze(scores: ArmScores, design: Design, plan: Plan) -> Analysis:
    """The statistics of one evaluation of ``scores`` under ``design``.

    Parameters
    ----------
    scores : ArmScores
        The arms' scores (m arms, r runs, n questions).
    design : Design
        The study design (:func:`.design.infer_design`).
    plan : Plan
        What to compute.

    Returns
    -------
    Analysis
    """
    alpha = check_alpha(plan.alpha)
    codes = cluster_codes(scores)
    if plan.leaderboard:
        if not plan.lower_is_better:
            board, unit = rank_board(scores, design, codes, alpha=alpha, seed=plan.seed)
            return Analysis(design, plan, board=board, board_unit=unit)
        # a loss: the board ranks the reflection (1 - x for fractions, so 0/1 stays 0/1; -x
        # otherwise), whose highest is the lowest loss; the means shown are the scores' own
        top = 1.0 if plan.fraction else 0.0
        board, unit = rank_board(replace(scores, scores=top - scores.scores), design, codes,
                                 alpha=alpha, seed=plan.seed)
        board = replace(board, means=top - board.means, diff=-board.diff,
                        lower_is_better=True)
        return Analysis(design, plan, board=board, board_unit=unit)
    comparisons = compare_arms(scores, design, alpha=alpha, correction=plan.correction,
                               reference=plan.reference, claim=plan.claim,
                               margin=plan.margin, fraction=plan.fraction, seed=plan.seed,
                               binary=plan.binary, equal_variances=plan.equal_variances,
                               lower_is_better=plan.lower_is_better)
    rows, skipped, notes = [], {}, []
    if plan.table and scores.m == 2 and not scores.ragged:
        # ragged: unequal seed counts cannot be paired
        base, var = scores.arm(scores.arms[0]), scores.arm(scores.arms[1])
        rows, skipped = evaluate_protocols(
            base, var, kind=design.kind, alpha=alpha, protocols=plan.protocols,
            rng=plan.seed, params=plan.params, clusters=codes, factor=plan.factor)
        notes = notes_for(base, var, alpha, rows, study=designs.of(design), factor=plan.factor,
                          unit=plan.unit, names_=scores.arms,
                          run_ids=scores.run_ids)
    stream = (stream_summary(scores, design, alpha, plan.fraction, method=plan.stream_method,
                             claim=plan.claim, margin=plan.margin,
                             lower_is_better=plan.lower_is_better) if plan.stream else None)
    # the evidence is read from the shipped table, for the protocol the verdict reports
    found = nearest(design.kind, comparisons.primary, design.n_questions, design.runs,
                    design.n_clusters)
    return Analysis(design, plan, comparisons=comparisons, stream=stream, rows=rows,
                    skipped=skipped, table_notes=notes, evidence=found)


def is_binary(scores: ArmScores, per_question: bool) -> bool:
    """Whether every score is 0 or 1 and scores are per question (McNemar's design)."""
    return bool(np.isin(scores.scores, (0.0, 1.0)).all()) and per_question
