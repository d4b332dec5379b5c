"""``models_clustered``: fixed models on questions grouped in correlated clusters.

As ``models``, with questions grouped in clusters (tasks, categories, passages) whose
questions are correlated: the clusters are the independent units. Reportable:
``cluster_cr2`` (CR2 SE, Imbens–Kolesár df; the clusters are passed as
``evaluate(..., clusters=codes)``).
"""

from __future__ import annotations

from ._base import COMPARE_MODELS, Design, StudyDesign, register


def _clustered_questions(design: Design) -> bool:
    return design.compare == COMPARE_MODELS and bool(design.cluster)


DESIGN = register(StudyDesign(
    name="models_clustered", order=3, words="models, clustered questions",
    compare=COMPARE_MODELS, primary="cluster_cr2", generator="clustered_questions",
    description="fixed checkpoints on questions in correlated clusters; the clusters are the "
                "independent units",
    clustered=True, rule=_clustered_questions))
