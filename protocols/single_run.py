"""``single_run``: one run per arm, a gain of at least ``threshold`` counts as a win."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._base import Protocol
from ._registry import register
from ._result import make_result


@register
@dataclass(frozen=True)
class SingleRun(Protocol):
    """Compare seed 0 of each arm; significant iff ``|estimate| >= threshold``.

    Parameters
    ----------
    threshold : float, default 0.01
        Smallest absolute difference (fraction; 0.01 = 1 pp) that is called a result.
    """

    threshold: float = 0.01

    name = "single_run"
    summary = "one run per arm; a difference of at least 1 pp is called a result"
    pitfall = "one run is not evidence"
    uses_first_seed_only = True

    def __post_init__(self):
        try:
            valid = bool(np.isfinite(self.threshold) and self.threshold >= 0)
        except TypeError:  # a string or None: np.isfinite cannot even test it
            valid = False
        if not valid:
            raise ValueError(f"The 'threshold' parameter of single_run must be a finite "
                             f"number >= 0 (a fraction). Got {self.threshold!r} instead.")

    def _evaluate(self, base, variant, alpha, rng):
        estimate = variant[..., 0, :].mean(axis=-1) - base[..., 0, :].mean(axis=-1)
        # A float difference of two accuracies can land a hair below an exact 1 pp.
        significant = np.abs(estimate) >= self.threshold - 1e-12
        return make_result(estimate, significant=significant)
