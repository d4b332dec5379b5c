"""The sections of the pitfalls report, registered by a decorator (one file per section).

A section is a function ``make(ctx, scan) -> Section`` in a module ``s<N>_<topic>.py`` of
this package, decorated with ``@section(N, lesson)``: the report builds every registered
section in number order, and the reports' front page shows each lesson. Adding a section is
adding one file; nothing else lists the sections.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evalcal_core.validate import InvalidParameterError, fail


@dataclass(frozen=True)
class SectionEntry:
    """A registered section: its number, its one-line lesson, the function that builds it."""

    number: int
    lesson: str
    make: Callable


#: section number -> entry
REGISTRY: dict[int, SectionEntry] = {}


def section(number: int, lesson: str):
    """Decorator: register ``make(ctx, scan) -> Section`` as section ``number``."""
    if not isinstance(number, int) or number < 1:
        raise fail("number", "an integer >= 1", number, "section")

    def register(make: Callable) -> Callable:
        if number in REGISTRY and REGISTRY[number].make.__qualname__ != make.__qualname__:
            raise InvalidParameterError(f"section {number} is registered twice "
                                        f"({REGISTRY[number].make.__name__}, {make.__name__})")
        REGISTRY[number] = SectionEntry(number, lesson, make)
        return make

    return register


def sections() -> list[SectionEntry]:
    """Every registered section, in number order."""
    return [REGISTRY[n] for n in sorted(REGISTRY)]
