"""``models``: fixed models (released checkpoints) compared on one benchmark.

The questions are the sample, independent of each other; repeated runs of a model (decoding
repeats, Inspect epochs) are measurement noise averaged within a question. Reportable:
``t_signflip_questions`` (primary: the t interval on the per-question differences of the run
means, significant only if the exact sign-flip test agrees, which keeps the level where few
questions differ), ``paired_t_questions`` (the t test alone), ``mcnemar`` (primary for one
binary run per arm: exact while few questions differ, Newcombe score CI),
``signflip_questions`` (the t's sign-flip randomization twin, exact while at most 16
questions differ).
"""

from __future__ import annotations

from ._base import COMPARE_MODELS, Design, StudyDesign, register


def _independent_questions(design: Design) -> bool:
    return design.compare == COMPARE_MODELS and not design.cluster


DESIGN = register(StudyDesign(
    name="models", order=2, words="models", compare=COMPARE_MODELS,
    primary="t_signflip_questions", primary_one_binary_run="mcnemar",
    generator="question_mixture",
    description="fixed checkpoints on one benchmark; the questions are the sample, repeated "
                "runs are measurement noise",
    rule=_independent_questions))
