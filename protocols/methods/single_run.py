"""``single_run``: one run per arm, a gain of at least ``threshold`` counts as a win."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED
from evalcal_core.validate import check_number, fail

from .._base import Protocol, register
from .._result import make_result

#: the threshold used for metrics that are fractions in [0, 1] (accuracies): 1 pp
ACCURACY_THRESHOLD = 0.01


@register
@dataclass(frozen=True)
class SingleRun(Protocol):
    """Compare seed 0 of each arm; significant iff ``|estimate| >= threshold``.

    Parameters
    ----------
    threshold : float or None, default None
        Smallest absolute difference called a result, in the metric's own units. ``None``
        means 1 pp (0.01) for metrics that are fractions in [0, 1] (accuracies); for any
        other metric (a score outside [0, 1]: a loss, BLEU in points, a percentage) it must
        be given, since a fixed 0.01 means nothing there.

    Raises
    ------
    ValueError
        From :meth:`evaluate`, when ``threshold`` is ``None`` and a score lies outside
        [0, 1].
    """

    threshold: float | None = None

    name = "single_run"
    summary = "one run per arm; a difference of at least a threshold (1 pp) is called a result"
    pitfall = "one run is not evidence"
    uses_first_seed_only = True
    valid_for = frozenset()
    pitfall_for = {METHODS_INDEPENDENT: pitfall,
                   MODELS: "a difference with no test: the sampling of the questions is ignored",
                   MODELS_CLUSTERED: "a difference with no test: the sampling of the "
                                     "questions is ignored"}

    def __post_init__(self):
        if self.threshold is not None:
            check_number(self.threshold, "threshold", self.name, low=0)

    def threshold_for(self, batch) -> float:
        """The threshold applied to ``batch`` (metric units); see the class docstring."""
        if self.threshold is not None:
            return float(self.threshold)
        # The metric is the per-seed score (a run's accuracy): judge its range, which also
        # spares pool batches from building every per-question score.
        fractions = batch.binary or all(float(a.min()) >= 0.0 and float(a.max()) <= 1.0
                                        for a in (batch.seed_base, batch.seed_variant))
        if not fractions:
            raise fail("threshold", "given (in the metric's units) for scores outside [0, 1]: "
                       "its default, 0.01 = 1 pp, is for accuracies", None, "single_run")
        return ACCURACY_THRESHOLD

    def decision_note(self, batch) -> str:
        threshold = self.threshold_for(batch)
        default = " (the default for accuracies: 1 pp)" if self.threshold is None else ""
        return (f"a difference of at least {threshold:g} in the metric's units is called a "
                f"result{default}")

    def _evaluate(self, batch, alpha, rng):
        estimate = batch.seed_deltas[..., 0]
        threshold = self.threshold_for(batch)
        # A float difference of two accuracies can land a hair below an exact 1 pp.
        significant = np.abs(estimate) >= threshold - 1e-12 * max(1.0, threshold)
        return make_result(estimate, significant=significant)
