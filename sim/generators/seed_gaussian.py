"""``seed_gaussian``: per-seed metrics with correlated arms (n = 1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.validate import InvalidParameterError, check_number, fail

from ._base import Generator, register

NOISES = ("normal", "t3", "skewed")

#: shape of the log-normal behind ``noise='skewed'`` (skewness ~6.2 at 1.0)
SKEW_SHAPE = 1.0


def standard_noise(noise: str, size, rng) -> np.ndarray:
    """Draws with mean 0 and variance 1 from the named family.

    ``t3`` is Student t with 3 degrees of freedom scaled by 1/sqrt(3) (heavy tails);
    ``skewed`` is a centred log-normal with shape 1 scaled to unit variance (right skew).
    """
    if noise == "normal":
        return rng.standard_normal(size)
    if noise == "t3":
        return rng.standard_t(3, size) / np.sqrt(3.0)
    s2 = SKEW_SHAPE**2
    x = np.exp(SKEW_SHAPE * rng.standard_normal(size))
    return (x - np.exp(s2 / 2)) / np.sqrt((np.exp(s2) - 1) * np.exp(s2))


#: sigmas of room between the mean score and the ends of [0, 1] (a score outside has
#: probability below 6e-7)
SCORE_SIGMAS = 5.0


@register
@dataclass(frozen=True)
class SeedGaussian(Generator):
    """Per-seed metrics: ``X_i = mu + sigma Z_i``, ``Y_i = mu + delta + sigma (rho Z_i +
    sqrt(1 - rho**2) W_i)``.

    Parameters
    ----------
    mu : float, default 0.90
        Baseline mean metric (fraction).
    sigma : float, default 0.005
        Seed-to-seed standard deviation of each arm (fraction; 0.005 = 0.5 pp).
    rho : float, default 0.5
        Correlation of the two arms of a seed (the pairing), in [-1, 1].
    noise : {'normal', 't3', 'skewed'}, default 'normal'
        Family of Z and W (all scaled to variance 1). The sign-flip test assumes symmetric
        deltas; 'skewed' shows what a violation does.
    """

    mu: float = 0.90
    sigma: float = 0.005
    rho: float = 0.5
    noise: str = "normal"

    name = "seed_gaussian"

    def __post_init__(self):
        # Fractions: an accuracy-like metric, and a seed-to-seed spread of at most 50 pp
        # (sigma=5 is a percentage-point value given by mistake).
        check_number(self.mu, "mu", self.owner, low=0, high=1)
        check_number(self.sigma, "sigma", self.owner, low=0, high=0.5)
        check_number(self.rho, "rho", self.owner, low=-1, high=1)
        # Scores are accuracies: a spread that sends scores outside [0, 1] is a setting no
        # accuracy has (and single_run's 1 pp default threshold would not apply), so it is
        # refused here, naming sigma, rather than failing later inside a protocol.
        room = min(self.mu, 1 - self.mu) / SCORE_SIGMAS
        if self.sigma > room:
            raise fail("sigma", f"at most {room:.4g} at mu = {self.mu:g}: scores are accuracies "
                       f"in [0, 1] and mu +- {SCORE_SIGMAS:g} sigma must stay inside (fractions: "
                       "0.005 = 0.5 pp)", self.sigma, self.owner)
        if self.noise not in NOISES:
            raise fail("noise", f"one of {NOISES}", self.noise, self.owner)

    def check_effect(self, delta: float) -> None:
        """``ValueError`` unless the variant's scores stay accuracies: ``mu + delta`` in
        [0, 1] with ``SCORE_SIGMAS`` sigma of room (``delta`` a fraction)."""
        super().check_effect(delta)
        room = SCORE_SIGMAS * self.sigma
        if not room <= self.mu + delta <= 1 - room:
            raise InvalidParameterError(f"The effect of {self.owner} must keep the variant's "
                                        f"accuracy mu + effect = {self.mu + delta:.4g} inside "
                                        f"[{room:.4g}, {1 - room:.4g}] (mu = {self.mu:g}, "
                                        f"{SCORE_SIGMAS:g} sigma of room); effects are in pp: 1 = "
                                        f"+1 pp. Got {100 * delta:g} pp instead.")

    def _draw(self, sims, k, delta, rng):
        z = standard_noise(self.noise, (sims, k, 1), rng)
        w = standard_noise(self.noise, (sims, k, 1), rng)
        base = self.mu + self.sigma * z
        variant = self.mu + delta + self.sigma * (self.rho * z + np.sqrt(1 - self.rho**2) * w)
        return base, variant

    def delta_sd(self) -> float:
        """Standard deviation of one per-seed delta, ``sigma sqrt(2 (1 - rho))`` (fraction)."""
        return self.sigma * np.sqrt(2 * (1 - self.rho))
