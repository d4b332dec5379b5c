"""The study design record, its registry, and the user's declared or inferred :class:`Design`.

A :class:`StudyDesign` is one kind of study (its module in this package says what its units
are and which protocols are honest for it); a :class:`Design` is one study's description,
read from the user's options and data, whose :attr:`Design.kind` is the registered kind
whose inference rule accepts it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from evalcal_core.registry import Registry
from evalcal_core.validate import InvalidParameterError

#: ``Design.compare`` for training procedures: the seeds are the units
COMPARE_METHODS = "methods"
#: ``Design.compare`` for fixed models: the questions (or their clusters) are the units
COMPARE_MODELS = "models"
#: every value of ``Design.compare``
COMPARES = (COMPARE_METHODS, COMPARE_MODELS)

DESIGNS = Registry("study design", "design", "evalcal_core.designs.get")


@dataclass(frozen=True)
class Design:
    """One study's design, declared by the user or inferred from the input.

    Attributes
    ----------
    compare : {"methods", "models"}
        ``methods``: training procedures, seeds are the units. ``models``: fixed checkpoints,
        questions (or clusters of them) are the units.
    paired : bool
        For ``methods``: seed ``i`` of every arm shares its randomness. Ignored for models.
    runs : int
        Seeds per arm (``methods``) or repeated runs per question (``models``).
    n_questions : int
        Questions per run (1 for per-seed metrics).
    cluster : str or None
        Name of the column or metadata field the questions are clustered by.
    n_clusters : int
        Number of clusters (0 when not clustered).
    inferred : tuple of str
        Which of the fields were inferred rather than declared, with the reason, for the
        printed design line (e.g. ``"models: one run per arm"``).
    """

    compare: str = COMPARE_METHODS
    paired: bool = True
    runs: int = 1
    n_questions: int = 1
    cluster: str | None = None
    n_clusters: int = 0
    inferred: tuple[str, ...] = ()

    def __post_init__(self):
        if self.compare not in COMPARES:
            raise InvalidParameterError(f"compare must be {COMPARE_METHODS!r} or "
                                        f"{COMPARE_MODELS!r}, got {self.compare!r}")

    @property
    def study(self) -> StudyDesign:
        """The registered study design whose inference rule accepts this design (rules are
        tried in table order: a kind that refines another is registered before it)."""
        for study in designs():
            if study.matches(self):
                return study
        raise InvalidParameterError(f"no registered study design matches {self!r}; the "
                                    f"designs are {', '.join(names())}")

    @property
    def kind(self) -> str:
        """One of :data:`evalcal_core.designs.KINDS`: the name of :attr:`study`."""
        return self.study.name

    def describe(self) -> str:
        """The design line printed first in every output, e.g.
        ``"models, 1 run, 1,136 questions, clusters: none"``."""
        runs = f"{self.runs:,} {'run' if self.runs == 1 else 'runs'}"
        if self.compare == COMPARE_METHODS:
            seeds = "paired" if self.paired else "independent"
            head = f"methods, {self.runs:,} {seeds} seed{'s' if self.runs != 1 else ''} per arm"
        else:
            head = f"models, {runs}" + (" per question" if self.runs > 1 else "")
        questions = (f"{self.n_questions:,} questions" if self.n_questions > 1
                     else "one metric per run")
        clusters = (f"clusters: {self.n_clusters:,} by {self.cluster!r}" if self.cluster
                    else "clusters: none")
        return f"{head}, {questions}, {clusters}"


@dataclass(frozen=True)
class StudyDesign:
    """One kind of study: what its units are, what it is called, what it reports.

    Attributes
    ----------
    name : str
        The kind's name (``Design.kind``, ``Protocol.valid_for``, ``Generator.design``).
    order : int
        Position in tables and in :data:`~evalcal_core.designs.KINDS` (smallest first); the
        inference rules are tried in this order.
    words : str
        What the kind is called in the first line of every output.
    compare : {"methods", "models"}
        The ``Design.compare`` of every study of this kind.
    primary : str
        Name of the protocol reported for every comparison under this design (``evaluate``)
        and drawn first in the calibration's figures; honest for the design.
    primary_one_binary_run : str
        The protocol reported instead when each arm is one run of 0/1 scores (an exact
        test there); ``""`` when :attr:`primary` serves every input.
    generator : str
        The registered simulation generator whose cells calibrate protocols for this design.
    generator_params : mapping of str to object
        The parameters of :attr:`generator` for that calibration (read-only).
    description : str
        One line: what the units are.
    paired : bool
        Whether unit ``i`` of every arm is the same unit (a seed sharing its randomness, or
        a question), as :attr:`Design.paired` of every study of this kind says; what a
        declared ``--design`` sets.
    clustered : bool
        Whether every study of this kind names its questions' clusters (``--cluster
        COLUMN``); a declared ``--design`` of this kind needs them, and one of any other
        kind refuses them.
    rule : callable of Design -> bool
        Whether a user's declared or inferred :class:`Design` is of this kind; the four
        kinds' rules accept disjoint sets of designs that together cover every design.
    """

    name: str
    order: int
    words: str
    compare: str
    primary: str
    generator: str
    description: str
    rule: Callable[[Design], bool]
    generator_params: Mapping[str, object] = field(default_factory=dict)
    primary_one_binary_run: str = ""
    paired: bool = True
    clustered: bool = False

    def __post_init__(self):
        if self.compare not in COMPARES:
            raise InvalidParameterError(f"study design {self.name!r}: compare must be "
                                        f"{COMPARE_METHODS!r} or {COMPARE_MODELS!r}, got "
                                        f"{self.compare!r}")
        object.__setattr__(self, "generator_params",
                           MappingProxyType(dict(self.generator_params)))

    def matches(self, design: Design) -> bool:
        """Whether ``design`` (declared or inferred) is of this kind."""
        return bool(self.rule(design))

    def primary_for(self, design: Design, binary: bool) -> str:
        """The protocol each comparison of ``design`` reports.

        Parameters
        ----------
        design : Design
            The study (its ``runs`` per arm decide the one-binary-run case).
        binary : bool
            Whether every score is 0 or 1.
        """
        if self.primary_one_binary_run and design.runs == 1 and binary:
            return self.primary_one_binary_run
        return self.primary


def register(design: StudyDesign) -> StudyDesign:
    """Add ``design`` to the registry under its name; returns it (for ``X = register(...)``)."""
    if not isinstance(design, StudyDesign) or not design.name:
        raise InvalidParameterError("a registered study design is a StudyDesign with a "
                                    f"non-empty name; got {design!r}")
    if design.name in DESIGNS.names() and DESIGNS.cls(design.name) is not design:
        raise InvalidParameterError(f"study design name {design.name!r} is already "
                                    "registered")
    return DESIGNS.register(design)


def get(name: str) -> StudyDesign:
    """The study design registered as ``name``; ``ValueError`` listing the names otherwise."""
    return DESIGNS.cls(name)


def designs() -> list[StudyDesign]:
    """Every registered study design, in table order."""
    return sorted((DESIGNS.cls(n) for n in DESIGNS.names()), key=lambda d: (d.order, d.name))


def names() -> list[str]:
    """Names of every registered study design, in table order."""
    return [d.name for d in designs()]
