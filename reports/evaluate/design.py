"""The design's line and ``--json`` object (the design itself: :mod:`protocols.analysis.design`)."""

from __future__ import annotations

from evalcal_core.designs import Design
from protocols.analysis.design import IndependentSeeds


def design_line(design: Design) -> str:
    """``design: models, 1 run, 1,136 questions, clusters: none (inferred: ...)``."""
    why = f" (inferred: {'; '.join(design.inferred)})" if design.inferred else " (declared)"
    return f"design: {design.describe()}{why}"


def design_json(design: Design) -> dict:
    """The ``"design"`` object of ``--json``."""
    out = {"compare": design.compare, "kind": design.kind, "paired": design.paired,
           "runs": design.runs, "n_questions": design.n_questions,
           "cluster": design.cluster, "n_clusters": design.n_clusters,
           "inferred": list(design.inferred), "line": design_line(design)}
    if isinstance(design, IndependentSeeds):
        out["runs_per_arm"] = dict(design.runs_per_arm)
    return out
