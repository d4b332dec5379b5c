"""Adding seeds until it is significant: peeking against valid sequential designs.

A common practice is to run ``k_min`` seeds, test, add a seed, test again, and stop at the
first ``p < alpha``. Every look is one more chance of a false positive, so the rate of false
positives grows with the number of looks (Armitage, McPherson and Rowe 1969).
:func:`simulate_peeking` measures that; :func:`simulate_sequential` puts it next to designs
that may stop early and keep the level:

``fixed``
    The protocol once, at ``k_max`` seeds (no early stop).
``gs_pocock``, ``gs_obf``
    Group-sequential paired t-tests with Lan--DeMets alpha spending of Pocock and
    O'Brien--Fleming type. Boundaries are computed for the z statistic of a Brownian motion
    with information proportional to the number of seeds (:func:`z_boundaries`, by the
    recursive numerical integration of Armitage, McPherson and Rowe) and turned into t
    critical values at the same nominal level with ``j - 1`` degrees of freedom at look ``j``
    (the "significance level approach", Jennison and Turnbull 2000, sec. 11.4), because at a
    handful of seeds the variance is estimated, not known.
``e_tmix``
    Anytime-valid: the scale-invariant Bayes factor of the one-sample t-test with a normal
    prior of variance ``g`` on the standardized effect (Rouder et al. 2009, eq. 1 with g
    fixed). It is a nonnegative martingale under the null for the scale-invariant filtration
    (Perez-Ortiz et al. 2024), so by Ville's inequality rejecting when it reaches
    ``1 / alpha`` keeps the level under any stopping rule, for normal per-seed deltas.

Modules: :mod:`~sim.sequential.boundaries` (spending, z and t boundaries, the e-value),
:mod:`~sim.sequential.designs` (one registered class per design: a new design is one class
with ``@register``), :mod:`~sim.sequential.simulation` (every design on the same draws).
The command (``python -m sim.sequential``, which also draws ``sequential.png``) lives in
:mod:`reports.sequential`; ``sim/sequential/__main__.py`` forwards to it.

Example::

    python -m sim.sequential --k 3 20 --effects 0 1 --sims 2000 --seed 0 --out seq
"""


from .boundaries import (
    BOUNDARY_KINDS,
    E_PRIOR_VARIANCE,
    e_tmix,
    exit_probabilities,
    spending,
    t_boundaries,
    z_boundaries,
)
from .designs import DESIGN_CLASSES, DESIGNS, Design, Draws, get_design, register
from .simulation import (
    SequentialResult,
    sequential_table,
    simulate_peeking,
    simulate_sequential,
)

__all__ = ["BOUNDARY_KINDS", "DESIGNS", "DESIGN_CLASSES", "E_PRIOR_VARIANCE", "Design", "Draws",
           "SequentialResult", "e_tmix", "exit_probabilities", "get_design", "register",
           "sequential_table", "simulate_peeking", "simulate_sequential", "spending",
           "t_boundaries", "z_boundaries"]
