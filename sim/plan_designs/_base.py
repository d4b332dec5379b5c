"""The planner's design object: what differs between the studies ``python -m sim.plan`` plans.

A :class:`PlanDesign` states, for one design, everything the planner's modules would
otherwise branch on: whether the arms are trained on random seeds, whether the seeds (or
clusters) are a search axis, the units a simulated experiment draws, the test's degrees of
freedom, the variance of the mean delta, the cost formula and its inverse, the words the
output prints, the default costs and the option rules that differ. Each design is one module
of :mod:`sim.plan_designs` registering one instance; :func:`get` finds it by name.

Sizes are float arrays that broadcast (``k`` seeds or clusters per arm, ``n`` questions per
seed or cluster, ``r`` repeats); components are standard deviations in fractions (a
:class:`sim.plan_model.Components`); variances are in fractions**2; costs in the costs' unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from evalcal_core import designs
from evalcal_core.designs import METHODS_PAIRED
from evalcal_core.registry import Registry
from evalcal_core.validate import InvalidParameterError

#: the estimands a plan can be for (:mod:`sim.plan_model`'s docstring); a design lists the
#: ones it has, its default first
QUESTIONS, POPULATION = "questions", "population"
ESTIMANDS = (QUESTIONS, POPULATION)
#: per estimand, the registry protocol ``evaluate`` prints for it on a methods_paired study:
#: the design's primary comparison (questions fixed) and the reportable two-level t
ESTIMAND_TESTS = {QUESTIONS: designs.get(METHODS_PAIRED).primary,
                  POPULATION: "paired_two_level"}


def where_printed(estimand: str) -> str:
    """Where ``evaluate`` prints the estimand's test: its primary comparison line when the
    test is the design's primary protocol, else the two-arm table's row of that name."""
    name = ESTIMAND_TESTS[estimand]
    if name == designs.get(METHODS_PAIRED).primary:
        return "evaluate's primary comparison line"
    return f"evaluate's table row {name} (not the primary comparison line)"


def _frozen(mapping) -> Mapping:
    return field(default_factory=lambda: MappingProxyType(dict(mapping)))


@dataclass(frozen=True)
class PlanDesign:
    """One design the planner plans (a subclass per module overrides the formulas).

    Attributes
    ----------
    name : str
        The ``--design`` value (or, for a design only solved internally, its name there).
    summary : str
        What is compared, for ``--help``.
    order : int
        Position among the ``--design`` choices.
    kind : str or None
        The study kind of :mod:`evalcal_core.designs` this design plans (a value, not a
        test); ``None`` for an internal form.
    choosable : bool
        Offered by ``--design`` (``False``: the form another design is solved as).
    seeds : bool
        The arms are trained on random seeds: ``sd_seed`` enters, a pilot's rows are seeds
        (else repeats of two fixed models) and a generator keeps its seed spread.
    seed_axis : bool
        The seeds (or clusters) ``k`` are searched; ``False`` fixes k at 1.
    clustered : bool
        Takes ``--cluster-size`` and ``--sd-cluster`` (and only this design does).
    estimands : tuple of str
        The estimands it plans for, its default first; another estimand asked of a formula
        reads as the default (the design has no other).
    registry_tested : bool
        Its test per estimand is the registry protocol ``evaluate`` prints
        (:data:`ESTIMAND_TESTS`), run on the ``(k, n)`` cell-mean deltas; else the
        t on the units' deltas (``paired_t`` on ``(sims, units)``).
    n_min_low : int
        Lowest ``--n-min`` accepted.
    default_costs : mapping
        ``--cost`` when none is given (models pay no seeds: a question's cost, so that
        designs differ).
    paid : tuple of str
        The costs a design of this kind pays (one must be positive).
    noise : tuple of str
        Components whose sum must be positive (the test needs noise to estimate); the
        first names the option of the message.
    solved_as : str or None
        The design this one is searched as (:meth:`problem`), ``None`` for itself.
    """

    name: str
    summary: str = ""
    order: int = 0
    kind: str | None = None
    choosable: bool = True
    seeds: bool = True
    seed_axis: bool = True
    clustered: bool = False
    estimands: tuple = (POPULATION,)
    registry_tested: bool = False
    n_min_low: int = 2
    default_costs: Mapping = _frozen({"seed": 1.0})
    paid: tuple = ("seed", "question", "repeat")
    noise: tuple = ("sd_seed", "sd_inter", "sd_repeat")
    solved_as: str | None = None
    #: words: the test (designs not :attr:`registry_tested`), per estimand (those that are)
    test: str = ""
    tests: Mapping = _frozen({})
    #: words: the cost formula, printed after "a design costs"
    cost_words: str = ""
    #: the table's first column (``k`` or, for clusters, ``clusters``) and its header letter
    first_column: str = "k"
    letter: str = "k"
    #: words: the chosen design's seeds part ({k}, {clusters}, {m}: cluster size) and the
    #: searched bounds' ({k_min}, {k_max})
    chosen_head: str = ""
    bounds_head: str = ""
    #: words: the ``estimand:`` line per estimand, the power column's meaning per estimand,
    #: the check column's when it differs from the generic one, a line of the design's own
    #: ({m}: cluster size, {icc}: intra-cluster correlation at r = 1)
    estimand_words: Mapping = _frozen({})
    power_words: Mapping = _frozen({})
    check_words: Mapping = _frozen({})
    own_line: str = ""

    # ------------------------------------------------------------ words

    def test_words(self, estimand: str) -> str:
        """The test the plan's power is for, in words."""
        return self.tests[estimand] if self.registry_tested else self.test

    def test_column(self, estimand: str) -> str:
        """The ``test`` CSV column: the registry name where :attr:`registry_tested`."""
        return ESTIMAND_TESTS[estimand] if self.registry_tested else self.test

    def estimand_of(self, estimand: str) -> str:
        """``estimand`` where the design has it, else its default (its only one)."""
        return estimand if estimand in self.estimands else self.estimands[0]

    # ------------------------------------------------------------ the model

    def units(self, k, n):
        """Simulated cells of one experiment (sims are bounded by sims x units)."""
        return k * n

    def variance(self, comp, k, n, r, estimand: str):
        """``Var(mean D)`` (fraction**2) of a design of k, n, r under ``estimand``."""
        raise NotImplementedError

    def df(self, k, n, estimand: str):
        """Degrees of freedom of the t the closed form uses; ``None`` where the power is
        not a noncentral t (the two-level test's quadrature)."""
        return k - 1

    def cost(self, costs, k, n, r):
        """Cost (``costs.unit``) of k, n, r, both arms counted."""
        return 2 * k * (costs.seed + n * (costs.question + r * costs.repeat))

    def room(self, budget: float, costs, k):
        """What a budget leaves per question for k seeds (``cost`` solved for n times the
        cost of one question)."""
        return budget / 2 / k - costs.seed

    def largest_k(self, config) -> int:
        """The most seeds (or clusters) of a design in the bounds (the dearest design)."""
        return config.k_max

    def draw_normal(self, comp, sims, k, n, r, delta, rng, estimand):
        """The test's units under the normal components model (fractions), ``delta`` the
        estimand's effect; a new draw of seeds and questions per experiment."""
        raise NotImplementedError

    def grid_axes(self, problem, config, r, ks, ns):
        """The figure's rows and columns and the ``(k, n, r)`` they mean (broadcast)."""
        raise NotImplementedError

    # ------------------------------------------------------------ solving

    def validate(self, config, n_limit: int) -> None:
        """Checks of this design's own options (raise ``InvalidParameterError``);
        ``n_limit`` bounds every size option."""

    def problem(self, config):
        """The configuration searched (this design's: ``config`` itself)."""
        return config

    def plan_of(self, inner, config):
        """The plan of ``config`` from the plan of :meth:`problem` (here the same)."""
        return inner


#: the registered designs (instances, by name)
PLAN_DESIGNS = Registry("planner design", "design", "sim.plan_designs.get")


def register(design: PlanDesign) -> PlanDesign:
    """Add ``design`` under its name; returns it (for ``DESIGN = register(...)``)."""
    if not isinstance(design, PlanDesign):
        raise InvalidParameterError(f"a registered planner design is a PlanDesign; got "
                                    f"{design!r}")
    return PLAN_DESIGNS.register(design)


def get(name: str) -> PlanDesign:
    """The planner design registered as ``name``; ``ValueError`` listing the names
    otherwise."""
    return PLAN_DESIGNS.cls(name)


def designs_all() -> list[PlanDesign]:
    """Every registered planner design, in ``--design`` order (internal forms last)."""
    return sorted((get(n) for n in PLAN_DESIGNS.names()),
                  key=lambda d: (not d.choosable, d.order, d.name))


def choices() -> tuple[str, ...]:
    """The ``--design`` values, in order (the first is the default)."""
    return tuple(d.name for d in designs_all() if d.choosable)

