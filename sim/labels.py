"""Which protocols are reportable on a generator's cells: the label comes from its design.

A generator simulates one study design (:attr:`sim.generators.Generator.design`, one of
:data:`evalcal_core.designs.KINDS`), and a protocol is honest or a pitfall *for a design*
(:meth:`protocols.Protocol.label`): ``paired_t_questions`` is the test to report for two
fixed models and a pitfall for training methods compared over seeds. The seed budget, the
minimum detectable effects, the calibration tables and the figures all ask here, so one
calibration labels each protocol by the study its generator simulates.
"""

from __future__ import annotations

import protocols
from evalcal_core.designs import KINDS, METHODS_PAIRED

from . import generators

#: the design of a frame whose generator is not registered here (an older calibration.csv)
DEFAULT_DESIGN = METHODS_PAIRED


def design_of(generator: str) -> str:
    """The design kind generator ``generator`` (a registered name) simulates."""
    try:
        design = generators.generator_class(generator).design
    except ValueError:  # not registered here
        return DEFAULT_DESIGN
    return design if design in KINDS else DEFAULT_DESIGN


def pitfall_reason(protocol: str, generator: str) -> str:
    """Why ``protocol`` is a pitfall on ``generator``'s cells; ``""`` if it is reportable."""
    try:
        cls = protocols.protocol_class(protocol)
    except ValueError:  # not registered here: no claim either way
        return ""
    return cls.label(design_of(generator))


def is_reportable(protocol: str, generator: str) -> bool:
    """Whether ``protocol`` is honest for the design ``generator`` simulates."""
    return pitfall_reason(protocol, generator) == ""


def recommended(generator: str) -> str:
    """The primary protocol of ``generator``'s design (:attr:`evalcal_core.designs.
    StudyDesign.primary`)."""
    return protocols.recommended_for(design_of(generator))
