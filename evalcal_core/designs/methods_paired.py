"""``methods_paired``: training procedures compared on the same k seeds.

Seed ``i`` of both arms shares its randomness (data order, initialisation). The seeds are the
units; per-question scores, if any, are a second level inside each seed. Reportable:
``paired_t`` (primary: its CI is exact under normality at any level, which simultaneous
intervals need), ``paired_bca_perm`` (the paper's protocol, from 6 seeds), ``sign_flip``,
``wilcoxon``, ``paired_two_level`` (per-question scores, seeds and questions both random).
"""

from __future__ import annotations

from ._base import COMPARE_METHODS, Design, StudyDesign, register


def _paired_methods(design: Design) -> bool:
    return design.compare == COMPARE_METHODS and design.paired


DESIGN = register(StudyDesign(
    name="methods_paired", order=0, words="methods, paired seeds", compare=COMPARE_METHODS,
    primary="paired_t", generator="seed_question", generator_params={"sd_seed": 0.3},
    description="training procedures on the same k seeds; seed i of both arms shares its "
                "randomness, the seeds are the units",
    rule=_paired_methods))
