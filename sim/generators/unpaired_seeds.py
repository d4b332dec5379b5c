"""``unpaired_seeds``: per-seed metrics of two methods trained on independent seeds (n = 1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import METHODS_INDEPENDENT
from evalcal_core.validate import check_number, fail

from ._base import Generator, register
from .seed_gaussian import NOISES, standard_noise


@register
@dataclass(frozen=True)
class UnpairedSeeds(Generator):
    """Per-seed metrics with no randomness shared between the arms.

    ``X_i = mu + sigma Z_i`` and ``Y_i = mu + delta + sigma sd_ratio W_i``, with all ``Z``
    and ``W`` independent (mean 0, variance 1, from the family ``noise``): design kind
    ``methods_independent``. Row ``i`` of the two arms has nothing in common, so the arm
    correlation is 0 and any pairing of rows is arbitrary; ``sd_ratio != 1`` gives the arms
    unequal variances (what Welch's test allows for and a pooled-variance test does not).

    Parameters
    ----------
    mu : float, default 0.90
        Baseline mean metric (fraction).
    sigma : float, default 0.005
        Seed-to-seed standard deviation of the baseline (fraction; 0.005 = 0.5 pp).
    sd_ratio : float, default 1.0
        Variant's seed-to-seed sd over the baseline's, in (0, 10].
    noise : {'normal', 't3', 'skewed'}, default 'normal'
        Family of Z and W (as in ``seed_gaussian``).
    """

    mu: float = 0.90
    sigma: float = 0.005
    sd_ratio: float = 1.0
    noise: str = "normal"

    name = "unpaired_seeds"
    #: the study design it simulates (:data:`evalcal_core.designs.KINDS`)
    design = METHODS_INDEPENDENT

    def __post_init__(self):
        check_number(self.mu, "mu", self.owner, low=0, high=1)
        check_number(self.sigma, "sigma", self.owner, low=0, high=0.5)
        check_number(self.sd_ratio, "sd_ratio", self.owner, low=0, low_open=True, high=10)
        if self.noise not in NOISES:
            raise fail("noise", f"one of {NOISES}", self.noise, self.owner)

    def _draw(self, sims, k, delta, rng):
        z = standard_noise(self.noise, (sims, k, 1), rng)
        w = standard_noise(self.noise, (sims, k, 1), rng)
        base = self.mu + self.sigma * z
        variant = self.mu + delta + self.sigma * self.sd_ratio * w
        return base, variant

    def delta_sd(self) -> float:
        """Standard deviation of one row's delta, ``sigma sqrt(1 + sd_ratio**2)`` (fraction)."""
        return self.sigma * np.sqrt(1 + self.sd_ratio**2)
