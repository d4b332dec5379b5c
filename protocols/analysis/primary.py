"""The design's primary protocol on one experiment or a batch of them: the one call behind
every comparison ``evaluate`` prints and behind the decision grid's families that score it.

:func:`primary_result` picks the protocol the design reports
(:meth:`evalcal_core.designs.StudyDesign.primary_for`), calls it as ``evaluate`` does (the
design's inputs, :meth:`~protocols.analysis.designs.DesignAnalysis.run_inputs`; exact
McNemar; the clusters where the protocol reads them; Welch on per-seed metrics of unequal
seed counts) and withholds every verdict where the protocol is a pitfall at the design's
shape on a real pool (:func:`protocols.analysis.evidence.real_pitfall`). Leading axes of the
scores are independent experiments, so a family draws thousands at once and ``evaluate``
passes one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import Design
from protocols import get, protocol_class
from protocols.methods.welch_t import welch_decision

from . import designs
from .evidence import real_pitfall

#: parameters the comparisons run a protocol with (the two-arm table runs it the same way)
AS_PRIMARY = {"mcnemar": {"exact": True}}
#: a protocol whose interval is another's, computed without its test: where only the
#: interval is read (simultaneous intervals at ``alpha / C``), the twin runs and no
#: sign-flip law is drawn (``t_signflip_questions`` returns ``paired_t_questions``'s
#: interval, the same arrays)
INTERVAL_TWIN = {"t_signflip_questions": "paired_t_questions"}


@dataclass(frozen=True)
class PrimaryResult:
    """The primary protocol's verdicts, one per experiment.

    Attributes
    ----------
    protocol : str
    estimate, ci_low, ci_high, p_value : ndarray, shape (...)
        ``variant - base`` in the scores' units and the ``1 - alpha`` interval; NaN interval
        and p where no verdict is given.
    degenerate : ndarray of bool, shape (...)
        No verdict: a zero standard error, the protocol's own refusal (a dominant cluster),
        or :attr:`pitfall`.
    significant : ndarray of bool, shape (...)
        The protocol's verdict, never where :attr:`degenerate`.
    pitfall : str
        Why the protocol is a pitfall at the design's shape on a real pool (every verdict
        withheld), or ``""``.
    """

    protocol: str
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    p_value: np.ndarray
    degenerate: np.ndarray
    significant: np.ndarray
    pitfall: str = ""


def primary_name(design: Design, binary: bool) -> str:
    """The protocol each comparison of ``design`` reports (``binary``: every score 0/1)."""
    return design.study.primary_for(design, binary)


def primary_result(design: Design, base, variant, alpha: float, *, binary: bool | None = None,
                   name: str | None = None, clusters=None, rng=None,
                   interval_only: bool = False) -> PrimaryResult:
    """The design's primary protocol on ``base`` and ``variant``.

    Parameters
    ----------
    design : Design
        The study design; its kind and shape (questions, runs, clusters) also decide the
        real-pool pitfall.
    base, variant : ndarray, shape (..., runs, n)
        Scores of the two arms (fractions or metric units); leading axes are experiments.
        Independent seeds may differ in ``runs`` between the arms (Welch's test).
    alpha : float
        Two-sided level of the interval and the test.
    binary : bool or None
        Whether every score is 0 or 1 (one binary run of fixed models: McNemar). Required
        without ``name``: the primary protocol depends on it.
    name : str or None
        Another protocol run the same way (``evaluate``'s claim and simultaneous
        intervals use the primary's name; ``None``: the primary).
    clusters : ndarray of int or None
        Cluster code per question, for the protocols that read clusters.
    rng : numpy.random.Generator, int or None
        The resampling protocols' stream.
    interval_only : bool
        Only the estimate and the interval are read: a protocol with an
        :data:`INTERVAL_TWIN` runs the twin (same interval; its p and verdict are the
        twin's); the real-pool pitfall is still ``name``'s.

    Returns
    -------
    PrimaryResult
    """
    if name is None:
        if binary is None:
            raise TypeError("primary_result: pass binary= (the primary protocol depends on "
                            "it) or name=")
        name = primary_name(design, binary)
    run = INTERVAL_TWIN.get(name, name) if interval_only else name
    protocol = get(run, **AS_PRIMARY.get(run, {}))
    extra = {"clusters": clusters} if protocol_class(run).needs_clusters else {}
    base, variant = designs.of(design).run_inputs(run, np.asarray(base, dtype=float),
                                                  np.asarray(variant, dtype=float))
    if base.shape[-2] != variant.shape[-2]:
        # independent seeds of unequal counts: Welch on each seed's metric (the protocols
        # take equal shapes)
        p, low, high, sig, estimate = welch_decision(base[..., 0], variant[..., 0], alpha)
        degenerate = np.isnan(p)
    else:
        r = protocol.evaluate(base, variant, alpha, rng=rng, **extra)
        estimate, low, high, p = r.estimate, r.ci_low, r.ci_high, r.p_value
        degenerate, sig = np.asarray(r.degenerate), np.asarray(r.significant)
    estimate, low, high, p = (np.asarray(x, dtype=float) for x in (estimate, low, high, p))
    degenerate = np.asarray(degenerate, dtype=bool)
    pitfall = real_pitfall(design.kind, name, design.n_questions, design.runs,
                           design.n_clusters)
    if pitfall:
        # a pitfall at this shape: the estimate, but no interval, p or verdict
        nan = np.full(estimate.shape, np.nan)
        low, high, p = nan, nan, nan
        degenerate = np.ones(estimate.shape, dtype=bool)
    significant = np.asarray(sig, dtype=bool) & ~degenerate
    return PrimaryResult(name, estimate, low, high, p, degenerate, significant, pitfall)
