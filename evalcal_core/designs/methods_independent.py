"""``methods_independent``: training procedures compared on independent seeds.

No pairing: seeds are the units, the arms are two independent samples (possibly unequally
many seeds per arm). Reportable: ``welch_t``.
"""

from __future__ import annotations

from ._base import COMPARE_METHODS, Design, StudyDesign, register


def _independent_methods(design: Design) -> bool:
    return design.compare == COMPARE_METHODS and not design.paired


DESIGN = register(StudyDesign(
    name="methods_independent", order=1, words="methods, independent seeds",
    compare=COMPARE_METHODS, primary="welch_t", generator="unpaired_seeds",
    description="training procedures on independent seeds; the arms are two independent "
                "samples of seeds",
    paired=False, rule=_independent_methods))
