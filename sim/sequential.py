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

Example::

    python -m sim.sequential --k 3 20 --effects 0 1 --sims 2000 --seed 0 --out seq
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

import protocols
from evalcal_core.atomic import atomic_path, write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.params import parse_key_values
from evalcal_core.validate import check_alpha, check_int
from protocols._base import Protocol

from .generators import Generator
from .generators import get as get_generator
from .grid import cell_seed, chunk_size, wilson
from .outputs import write_csv
from .words import setting_words

#: designs simulated by default, in display order
DESIGNS = ("peek", "fixed", "gs_pocock", "gs_obf", "e_tmix")
#: boundary kinds of :func:`z_boundaries`: Lan--DeMets spending functions and the classical
#: constant-shape designs of Pocock (1977) and O'Brien and Fleming (1979)
BOUNDARY_KINDS = ("pocock", "obrien_fleming", "pocock_constant", "obrien_fleming_constant")
#: design name -> boundary kind
_GS_KIND = {"gs_pocock": "pocock", "gs_obf": "obrien_fleming"}
#: prior variance of the standardized effect of ``e_tmix``
E_PRIOR_VARIANCE = 1.0
#: score-scale grid step of the numerical integration, in units of one seed's sd
_GRID_STEP = 0.05
#: the continuation density is negligible beyond this many sd from its mean
_GRID_SD = 10.0


# --------------------------------------------------------------------------------------------
# Boundaries


def spending(t, alpha: float, kind: str) -> np.ndarray:
    """Lan--DeMets (1983) alpha-spending function, two-sided.

    Parameters
    ----------
    t : array_like
        Information fractions in [0, 1].
    alpha : float
        Total two-sided level.
    kind : {'pocock', 'obrien_fleming'}
        ``alpha ln(1 + (e - 1) t)`` or ``2 - 2 Phi(z_{1 - alpha/2} / sqrt(t))``.

    Returns
    -------
    ndarray
        Level spent up to each ``t``.
    """
    t = np.asarray(t, dtype=float)
    if kind == "pocock":
        return alpha * np.log1p((math.e - 1.0) * t)
    if kind == "obrien_fleming":
        with np.errstate(divide="ignore"):
            return 2.0 * special.ndtr(-special.ndtri(1 - alpha / 2) / np.sqrt(t))
    raise ValueError(f"The 'kind' parameter of spending must be 'pocock' or "
                     f"'obrien_fleming'. Got {kind!r} instead.")


class _Recursion:
    """Armitage--McPherson--Rowe recursion for the score ``S_j`` = sum of ``j`` i.i.d.
    N(drift, 1) steps, observed at ``looks``; Simpson's rule on a grid of step
    ``_GRID_STEP * min sqrt(increment)``.

    ``cross(i, b)`` is P(|S| first crosses ``b sqrt(n_i)`` at look ``i``); ``advance(b)``
    moves the continuation density past look ``i`` with boundary ``b`` (z scale).
    """

    def __init__(self, looks, drift):
        self.looks = np.asarray(looks, dtype=float)
        self.drift = float(drift)
        self.step = _GRID_STEP * math.sqrt(float(np.min(np.diff(self.looks, prepend=0.0))))
        self.i = 0
        self.x = None  # grid of the continuation region after look i - 1
        self.g = None  # density times Simpson weight on that grid

    def _increment(self):
        n = self.looks[self.i]
        prev = 0.0 if self.i == 0 else self.looks[self.i - 1]
        return n, n - prev

    def cross(self, b: float) -> float:
        n, dn = self._increment()
        edge = b * math.sqrt(n)
        if self.i == 0:
            mean, sd = self.drift * n, math.sqrt(n)
            return float(special.ndtr((-edge - mean) / sd) + special.ndtr((mean - edge) / sd))
        mean = self.x + self.drift * dn
        sd = math.sqrt(dn)
        lower = special.ndtr((-edge - mean) / sd)
        upper = special.ndtr((mean - edge) / sd)
        return float(self.g @ (lower + upper))

    def advance(self, b: float) -> None:
        n, dn = self._increment()
        sd_total = math.sqrt(n)
        centre = self.drift * n
        low = max(-b * sd_total, centre - _GRID_SD * sd_total)
        high = min(b * sd_total, centre + _GRID_SD * sd_total)
        if high <= low:
            # Everything has crossed: the later looks see no mass.
            self.x, self.g = np.zeros(1), np.zeros(1)
            self.i += 1
            return
        m = 2 * math.ceil((high - low) / (2 * self.step)) + 1
        y = np.linspace(low, high, m)
        h = (high - low) / (m - 1)
        simpson = np.ones(m)
        simpson[1:-1:2], simpson[2:-1:2] = 4.0, 2.0
        simpson *= h / 3.0
        if self.i == 0:
            density = stats.norm.pdf(y, loc=centre, scale=sd_total)
        else:
            sd = math.sqrt(dn)
            kernel = stats.norm.pdf((y[:, None] - self.x[None, :] - self.drift * dn) / sd) / sd
            density = kernel @ self.g
        self.x, self.g = y, density * simpson
        self.i += 1


def _check_looks(looks, caller: str) -> np.ndarray:
    try:
        arr = np.asarray(looks, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"The 'looks' parameter of {caller} must be a sequence of numbers. "
                         f"Got {looks!r} instead.") from None
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or arr[0] <= 0 \
            or np.any(np.diff(arr) <= 0):
        raise ValueError(f"The 'looks' parameter of {caller} must be a non-empty, strictly "
                         f"increasing sequence of positive numbers (seeds at each look). "
                         f"Got {looks!r} instead.")
    return arr


def exit_probabilities(bounds, looks, drift: float = 0.0) -> np.ndarray:
    """Probability of first crossing ``|Z| >= bounds[i]`` at each look.

    ``Z_i = S_{n_i} / sqrt(n_i)`` where ``S`` sums i.i.d. N(drift, 1) steps, so under
    ``drift = 0`` the ``Z_i`` are standard normal with ``corr(Z_i, Z_j) = sqrt(n_i / n_j)``.

    Parameters
    ----------
    bounds : array_like
        Two-sided z boundaries at each look (``inf`` = no stop).
    looks : array_like
        Seeds (information) at each look, strictly increasing.
    drift : float, default 0
        Mean of one step in units of its sd (standardized effect per seed).

    Returns
    -------
    ndarray
        Crossing probabilities per look; their sum is the overall rejection probability.
    """
    looks = _check_looks(looks, "exit_probabilities")
    bounds = np.asarray(bounds, dtype=float)
    if bounds.shape != looks.shape or np.any(np.isnan(bounds)) or np.any(bounds <= 0):
        raise ValueError(f"The 'bounds' parameter of exit_probabilities must be positive, one "
                         f"per look ({looks.size}). Got {bounds!r} instead.")
    rec = _Recursion(looks, drift)
    out = np.empty(looks.size)
    for i, b in enumerate(bounds):
        out[i] = rec.cross(b)
        rec.advance(b)
    return out


def z_boundaries(looks, alpha: float = 0.05, kind: str = "obrien_fleming") -> np.ndarray:
    """Two-sided group-sequential boundaries for the z statistic.

    Parameters
    ----------
    looks : array_like
        Seeds (information) at each look, strictly increasing; the information fraction of
        look ``i`` is ``looks[i] / looks[-1]``.
    alpha : float, default 0.05
        Overall two-sided level.
    kind : {'pocock', 'obrien_fleming', 'pocock_constant', 'obrien_fleming_constant'}
        ``pocock`` and ``obrien_fleming`` spend alpha by the Lan--DeMets functions
        (:func:`spending`); the ``_constant`` kinds are the classical designs with boundary
        ``c`` (Pocock 1977) or ``c sqrt(n_K / n_i)`` (O'Brien and Fleming 1979), ``c`` solved
        for the level. Their published tables assume equally spaced looks.

    Returns
    -------
    ndarray
        ``|Z_i| >= bounds[i]`` rejects at look ``i``; ``inf`` where nothing is spent.
    """
    looks = _check_looks(looks, "z_boundaries")
    alpha = check_alpha(alpha, "alpha", "z_boundaries")
    if kind not in BOUNDARY_KINDS:
        raise ValueError(f"The 'kind' parameter of z_boundaries must be one of "
                         f"{BOUNDARY_KINDS}. Got {kind!r} instead.")
    if kind.endswith("_constant"):
        shape = (np.ones(looks.size) if kind == "pocock_constant"
                 else np.sqrt(looks[-1] / looks))

        def excess(c):
            return exit_probabilities(c * shape, looks).sum() - alpha

        c = optimize.brentq(excess, 0.5, 20.0, xtol=1e-10)
        return c * shape
    spent = np.diff(spending(looks / looks[-1], alpha, kind), prepend=0.0)
    rec = _Recursion(looks, 0.0)
    bounds = np.empty(looks.size)
    for i, target in enumerate(spent):
        if target <= 1e-300:
            bounds[i] = np.inf
        else:
            bounds[i] = optimize.brentq(lambda b, t=target: rec.cross(b) - t, 1e-6, 40.0,
                                        xtol=1e-10)
        rec.advance(min(bounds[i], 40.0))
    return bounds


def t_boundaries(looks, alpha: float = 0.05, kind: str = "obrien_fleming",
                 method: str = "calibrated") -> np.ndarray:
    """Critical values of the paired t statistic at each look (``looks`` = seeds, >= 2).

    Parameters
    ----------
    looks : array_like of int
        Seeds at each look, strictly increasing, >= 2; information fraction
        ``looks[i] / looks[-1]``.
    alpha : float, default 0.05
        Overall two-sided level.
    kind : {'pocock', 'obrien_fleming'}
        Lan--DeMets spending function (:func:`spending`).
    method : {'calibrated', 'nominal'}
        ``nominal``: each z boundary of :func:`z_boundaries` becomes its two-sided nominal
        level ``2 Phi(-b)`` and then the t quantile at that level with ``looks[i] - 1``
        degrees of freedom (Jennison and Turnbull 2000, sec. 11.4). At a handful of seeds
        this leaks: with looks at 3..20 seeds the level is about 0.057 instead of 0.05.
        ``calibrated``: alpha is spent on the exact null distribution of the t process of
        normal per-seed deltas (it does not depend on their mean or sd), estimated from
        ``CALIBRATION_PATHS`` fixed simulated paths: at look ``i`` the boundary is the
        value that the first ``round(spending(t_i) * M)`` crossings reach. Deterministic.

    Returns
    -------
    ndarray
        ``|t_i| >= bounds[i]`` rejects at look ``i``; ``inf`` where nothing is spent.
    """
    looks = _check_looks(looks, "t_boundaries")
    if looks[0] < 2 or np.any(looks != np.round(looks)):
        raise ValueError(f"The 'looks' parameter of t_boundaries must be whole numbers of "
                         f"seeds >= 2. Got {looks!r} instead.")
    alpha = check_alpha(alpha, "alpha", "t_boundaries")
    if kind not in ("pocock", "obrien_fleming"):
        raise ValueError(f"The 'kind' parameter of t_boundaries must be 'pocock' or "
                         f"'obrien_fleming'. Got {kind!r} instead.")
    if method == "nominal":
        nominal = 2.0 * special.ndtr(-z_boundaries(looks, alpha, kind))
        return stats.t.isf(nominal / 2.0, looks - 1)
    if method != "calibrated":
        raise ValueError(f"The 'method' parameter of t_boundaries must be 'calibrated' or "
                         f"'nominal'. Got {method!r} instead.")
    return np.array(_calibrated(tuple(int(j) for j in looks), alpha, kind))


#: simulated null paths behind ``t_boundaries(method='calibrated')``: the level they give
#: has a Monte Carlo SE of about sqrt(0.05 * 0.95 / M) = 3e-4 at alpha = 0.05
CALIBRATION_PATHS = 2**19
#: root entropy of the calibration paths (fixed: the boundaries are part of the design)
CALIBRATION_ENTROPY = 0x5EED5EED
_NULL_PATHS: dict[str, np.ndarray] = {}


def _null_abs_t(k: int) -> np.ndarray:
    """``|t|`` of ``CALIBRATION_PATHS`` null paths after 1..k seeds, float32 (M, k).

    Seed j's N(0, 1) deltas come from their own child stream, so the first k columns are
    the same whatever the largest k asked for so far (the cache keeps the widest).
    """
    cached = _NULL_PATHS.get("abs_t")
    if cached is None or cached.shape[1] < k:
        # Widen to at least 20 seeds at once: regenerating for each new k costs more.
        width = max(k, 20, 0 if cached is None else cached.shape[1])
        root = np.random.SeedSequence(CALIBRATION_ENTROPY)
        d = np.empty((CALIBRATION_PATHS, width))
        for j, child in enumerate(root.spawn(width)):
            d[:, j] = np.random.default_rng(child).standard_normal(CALIBRATION_PATHS)
        t, _ = _t_path(d)
        cached = _NULL_PATHS["abs_t"] = np.abs(t).astype(np.float32)
    return cached[:, :k]


@functools.lru_cache(maxsize=256)
def _calibrated(looks: tuple, alpha: float, kind: str) -> tuple:
    abs_t = _null_abs_t(looks[-1])
    m = abs_t.shape[0]
    target = np.round(spending(np.asarray(looks) / looks[-1], alpha, kind) * m).astype(int)
    alive = np.ones(m, dtype=bool)
    crossed = 0
    bounds = []
    for j, wanted in zip(looks, target):
        n = int(wanted) - crossed
        x = abs_t[alive, j - 1]
        if n <= 0:
            bounds.append(math.inf)
            continue
        # The boundary sits halfway between the n-th and (n+1)-th largest |t| still alive.
        top = -np.partition(-x, [n - 1, n])[[n - 1, n]]
        c = float(0.5 * (top[0] + top[1]))
        bounds.append(c)
        stop = alive.copy()
        stop[alive] = x >= c
        crossed += int(stop.sum())
        alive &= ~stop
    return tuple(bounds)


def e_tmix(t, k, g: float = E_PRIOR_VARIANCE) -> np.ndarray:
    """Scale-invariant Bayes factor (e-value) of the one-sample t-test.

    ``(1 + k g)^(-1/2) [(1 + t^2/nu) / (1 + t^2 / (nu (1 + k g)))]^(k/2)``, ``nu = k - 1``:
    the normal likelihood integrated over ``delta ~ N(0, g)`` (standardized effect) and the
    right-Haar prior ``1/sigma``, over the same under ``delta = 0`` (Rouder et al. 2009).

    Parameters
    ----------
    t : array_like
        t statistics of the per-seed deltas (``inf`` where all deltas are equal and non-zero).
    k : array_like of int
        Seeds (>= 2).
    g : float
        Prior variance of the standardized effect.
    """
    t = np.asarray(t, dtype=float)
    k = np.asarray(k, dtype=float)
    nu = k - 1.0
    spread = 1.0 + k * g
    r = t * t / nu
    # At t = +-inf the ratio tends to 1 + k g; where t is NaN (all deltas zero) it is 1.
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = np.where(np.isinf(r), spread, (1.0 + r) / (1.0 + r / spread))
    ratio = np.where(np.isnan(r), 1.0, ratio)
    return np.exp(0.5 * k * np.log(ratio) - 0.5 * np.log(spread))


# --------------------------------------------------------------------------------------------
# Simulation


@dataclass(frozen=True)
class SequentialResult:
    """Outcome of one design on a batch of simulated experiments.

    Attributes
    ----------
    design : str
    k_min, k_max : int
        Fewest and most seeds per arm.
    looks : tuple of int
        Seeds at which the design may stop.
    effect_pp : float
        True effect in percentage points (0 = the null).
    sims : int
    alpha : float
        Two-sided level.
    rejections : int
        Experiments that rejected (either sign).
    rate, rate_low, rate_high : float
        Rejection rate and its Wilson 95% interval; the false-positive rate at effect 0.
    power, power_low, power_high : float
        Rate of rejections with the sign of the effect, with its Wilson 95% interval; NaN at
        effect 0.
    wrong_sign : int
        Rejections with the wrong sign (0 at effect 0).
    mean_seeds : float
        Mean seeds per arm used (the look of the first rejection, else ``k_max``).
    seeds_used : ndarray of int, shape (sims,)
        Seeds used by each experiment.
    fixed_k_same_power : float
        Smallest k at which the fixed design, on the same draws, reaches ``power``; NaN at
        effect 0 or when no k up to ``k_max`` does.
    """

    design: str
    k_min: int
    k_max: int
    looks: tuple
    effect_pp: float
    sims: int
    alpha: float
    rejections: int
    rate: float
    rate_low: float
    rate_high: float
    power: float
    power_low: float
    power_high: float
    wrong_sign: int
    mean_seeds: float
    seeds_used: np.ndarray = field(repr=False)
    fixed_k_same_power: float = math.nan

    def seeds_distribution(self) -> pd.Series:
        """Share of experiments that stopped at each look (index: seeds)."""
        counts = np.array([(self.seeds_used == j).sum() for j in self.looks])
        return pd.Series(counts / self.sims, index=pd.Index(self.looks, name="seeds"))

    def row(self) -> dict:
        """The scalar fields plus seed-use quantiles, for ``sequential.csv``."""
        keys = ["design", "k_min", "k_max", "effect_pp", "sims", "alpha", "rejections", "rate",
                "rate_low", "rate_high", "power", "power_low", "power_high", "wrong_sign",
                "mean_seeds"]
        out = {key: getattr(self, key) for key in keys}
        out["median_seeds"] = float(np.median(self.seeds_used))
        out["p90_seeds"] = float(np.quantile(self.seeds_used, 0.9))
        out["stopped_early"] = float(np.mean(self.seeds_used < self.k_max))
        out["n_looks"] = len(self.looks)
        out["fixed_k_same_power"] = self.fixed_k_same_power
        return out


def _simulate_iv(generator, protocol, k_min, k_max, effect_pp, sims, alpha, looks, designs,
                 caller):
    if not isinstance(generator, Generator):
        raise ValueError(f"The 'generator' parameter of {caller} must be a generator from "
                         f"sim.generators.get. Got {generator!r} instead.")
    if isinstance(protocol, str):
        protocol = protocols.get(protocol)
    if not isinstance(protocol, Protocol):
        raise ValueError(f"The 'protocol' parameter of {caller} must be a protocol name or "
                         f"object. Got {protocol!r} instead.")
    k_min = check_int(k_min, "k_min", caller, low=2)
    k_max = check_int(k_max, "k_max", caller, low=2)
    if k_max < k_min:
        raise ValueError(f"The 'k_max' parameter of {caller} must be >= k_min ({k_min}). "
                         f"Got {k_max!r} instead.")
    ok = isinstance(effect_pp, (int, float, np.integer, np.floating)) \
        and not isinstance(effect_pp, bool) and np.isfinite(effect_pp)
    if not ok:
        raise ValueError(f"The 'effect_pp' parameter of {caller} must be a finite number "
                         f"(percentage points). Got {effect_pp!r} instead.")
    generator.check_effect(effect_pp / 100.0)
    sims = check_int(sims, "sims", caller, low=1)
    alpha = check_alpha(alpha, "alpha", caller)
    why = protocol.applicable(k_min, generator.n, generator.binary)
    if why is not None:
        raise ValueError(f"The 'protocol' parameter of {caller}: {protocol.name!r} cannot run "
                         f"at k_min = {k_min} on generator {generator.name!r}: it {why}")
    if looks is None:
        looks = tuple(range(k_min, k_max + 1))
    else:
        arr = np.asarray(looks)
        ok = arr.ndim == 1 and arr.size > 0 and np.issubdtype(arr.dtype, np.integer) \
            and np.all(np.diff(arr) > 0) and arr[0] >= k_min and arr[-1] == k_max
        if not ok:
            raise ValueError(f"The 'looks' parameter of {caller} must be strictly increasing "
                             f"integers in [k_min, k_max] = [{k_min}, {k_max}] ending at k_max. "
                             f"Got {looks!r} instead.")
        looks = tuple(int(j) for j in arr)
    designs = tuple(designs)
    unknown = [d for d in designs if d not in DESIGNS]
    if unknown or not designs:
        raise ValueError(f"The 'designs' parameter of {caller} must be a non-empty subset of "
                         f"{DESIGNS}. Got {designs!r} instead.")
    return generator, protocol, k_min, k_max, float(effect_pp), sims, alpha, looks, designs


@dataclass(frozen=True)
class _Draws:
    """What every design needs from one batch of experiments, for looks at 1..K seeds."""

    #: protocol decision and estimate after j seeds, for j = first..K (columns)
    significant: np.ndarray
    estimate: np.ndarray
    first: int
    #: paired t statistic and its df + 1 after j seeds, j = 1..K (column 0: NaN)
    t: np.ndarray
    mean: np.ndarray


def _t_path(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Paired t statistics (and means) of the running prefixes of per-seed deltas ``d``.

    Prefix sums of the deltas and of their squares, both taken about the first delta: the
    shift keeps the sums small, so the variance does not suffer from cancellation.
    ``d`` has shape (sims, K); column ``j - 1`` of the results is after ``j`` seeds.
    """
    k = np.arange(1, d.shape[1] + 1, dtype=float)
    shifted = d - d[:, :1]
    s1 = np.cumsum(shifted, axis=1)
    s2 = np.cumsum(shifted * shifted, axis=1)
    mean_shifted = s1 / k
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.maximum(s2 - k * mean_shifted**2, 0.0) / (k - 1)
        mean = mean_shifted + d[:, :1]
        t = mean / np.sqrt(var / k)
    # A constant non-zero delta is a perfect signal (t = +-inf); an all-zero one is no signal.
    t = np.where(var == 0, np.where(mean == 0, 0.0, np.sign(mean) * np.inf), t)
    t[:, 0] = np.nan
    return t, mean


def _draw(generator, protocol, first, k_top, delta, sims, alpha, data_rng, protocol_rng):
    """Draw ``sims`` experiments of ``k_top`` seeds and evaluate ``protocol`` after each
    ``j = first..k_top`` seeds. A loop over chunks of experiments bounds memory; the loop
    over ``j`` is over looks, each a vectorized call."""
    chunk = chunk_size(generator, k_top)
    parts = []
    for start in range(0, sims, chunk):
        base, variant = generator.draw(min(chunk, sims - start), k_top, delta, data_rng)
        sig, est = [], []
        for j in range(first, k_top + 1):
            r = protocol.evaluate(base[:, :j], variant[:, :j], alpha, rng=protocol_rng)
            sig.append(r.significant)
            est.append(r.estimate)
        d = variant.mean(axis=-1) - base.mean(axis=-1)
        t, mean = _t_path(d)
        parts.append((np.stack(sig, axis=1), np.stack(est, axis=1), t, mean))
    sig, est, t, mean = (np.concatenate(x) for x in zip(*parts))
    return _Draws(significant=sig, estimate=est, first=first, t=t, mean=mean)


def _first_stop(reject: np.ndarray) -> np.ndarray:
    """Index of the first True per row, -1 where none."""
    hit = reject.any(axis=1)
    return np.where(hit, reject.argmax(axis=1), -1)


def _decisions(draws: _Draws, design: str, looks, alpha: float):
    """Reject flags and signs (sims, len(looks)) of ``design`` at ``looks``."""
    looks = np.asarray(looks)
    if design in ("peek", "fixed"):
        cols = looks - draws.first
        if design == "fixed":
            cols = cols[-1:]
        return draws.significant[:, cols], np.sign(draws.estimate[:, cols])
    t = draws.t[:, looks - 1]
    sign = np.sign(draws.mean[:, looks - 1])
    if design == "e_tmix":
        return e_tmix(t, looks[None, :]) >= 1.0 / alpha, sign
    return np.abs(t) >= t_boundaries(looks, alpha, _GS_KIND[design])[None, :], sign


def _fixed_power(draws: _Draws, effect_pp: float, k_max: int) -> pd.Series:
    """Power (correct sign) of the fixed design at each k = first..k_max, same draws."""
    cols = slice(0, k_max - draws.first + 1)
    hits = draws.significant[:, cols] & (np.sign(draws.estimate[:, cols]) == np.sign(effect_pp))
    return pd.Series(hits.mean(axis=0), index=np.arange(draws.first, k_max + 1))


def _tally(design, draws, k_min, k_max, looks, effect_pp, sims, alpha, fixed_power):
    design_looks = looks[-1:] if design == "fixed" else looks
    reject, sign = _decisions(draws, design, design_looks, alpha)
    stop = _first_stop(reject)
    rejected = stop >= 0
    rows = np.arange(sims)
    stop_sign = np.where(rejected, sign[rows, np.maximum(stop, 0)], 0.0)
    seeds = np.where(rejected, np.asarray(design_looks)[np.maximum(stop, 0)], k_max)
    rejections = int(rejected.sum())
    low, high = wilson(rejections, sims)
    if effect_pp == 0:
        power = power_low = power_high = same = math.nan
        wrong = 0
    else:
        correct = int((rejected & (stop_sign == np.sign(effect_pp))).sum())
        wrong = rejections - correct
        power = correct / sims
        power_low, power_high = wilson(correct, sims)
        reached = fixed_power[fixed_power >= power]
        same = float(reached.index[0]) if len(reached) else math.nan
    return SequentialResult(
        design=design, k_min=k_min, k_max=k_max, looks=tuple(int(j) for j in design_looks),
        effect_pp=effect_pp, sims=sims, alpha=alpha, rejections=rejections,
        rate=rejections / sims, rate_low=low, rate_high=high, power=power,
        power_low=power_low, power_high=power_high, wrong_sign=wrong,
        mean_seeds=float(seeds.mean()), seeds_used=seeds.astype(int),
        fixed_k_same_power=same)


def simulate_sequential(generator, protocol, k_min: int, k_max: int, effect_pp: float,
                        sims: int, alpha: float = 0.05, *, rng=None, looks=None,
                        designs=DESIGNS) -> dict[str, SequentialResult]:
    """Several stopping designs on the same simulated experiments (common random numbers).

    Parameters
    ----------
    generator : sim.generators.Generator
        Draws ``(base, variant)`` of shape ``(sims, k, n)``.
    protocol : str or protocols.Protocol
        The test that ``peek`` and ``fixed`` apply; the group-sequential and e-process
        designs use the paired t statistic of the per-seed deltas (mean over questions).
    k_min, k_max : int
        Seeds per arm at the first look (>= 2) and at most.
    effect_pp : float
        True effect, variant minus baseline, in percentage points (0 = the null).
    sims : int
        Experiments.
    alpha : float, default 0.05
        Two-sided level of every design.
    rng : numpy.random.Generator, int or None
        Normalized with ``np.random.default_rng``; two child streams (data, protocol) are
        spawned from it, so the data do not depend on the protocol.
    looks : sequence of int or None
        Seeds at which the sequential designs look (default ``k_min..k_max``); must end at
        ``k_max``.
    designs : sequence of str
        Subset of :data:`DESIGNS`.

    Returns
    -------
    dict
        Design name -> :class:`SequentialResult`.
    """
    generator, protocol, k_min, k_max, effect_pp, sims, alpha, looks, designs = _simulate_iv(
        generator, protocol, k_min, k_max, effect_pp, sims, alpha, looks, designs,
        "simulate_sequential")
    data_rng, protocol_rng = np.random.default_rng(rng).spawn(2)
    first = max(protocol.min_k, 2)
    draws = _draw(generator, protocol, first, k_max, effect_pp / 100.0, sims, alpha, data_rng,
                  protocol_rng)
    fixed_power = _fixed_power(draws, effect_pp, k_max)
    return {d: _tally(d, draws, k_min, k_max, looks, effect_pp, sims, alpha, fixed_power)
            for d in designs}


def simulate_peeking(generator, protocol, k_min: int, k_max: int, effect_pp: float,
                     sims: int, alpha: float = 0.05, rng=None) -> SequentialResult:
    """Add a seed and test again until ``protocol`` rejects or ``k_max`` seeds are spent.

    The protocol runs at nominal ``alpha`` after every seed ``j = k_min..k_max`` and the
    experiment stops at the first rejection. Parameters are those of
    :func:`simulate_sequential`.

    Returns
    -------
    SequentialResult
        ``rate`` at effect 0 is the false-positive rate of the practice; ``seeds_used`` is
        the look of the first rejection, else ``k_max``.
    """
    return simulate_sequential(generator, protocol, k_min, k_max, effect_pp, sims, alpha,
                               rng=rng, designs=("peek",))["peek"]


def sequential_table(generator, protocol, k_min: int, k_max_values, effects_pp, sims: int,
                     alpha: float = 0.05, *, seed: int = 0, designs=DESIGNS) -> pd.DataFrame:
    """Every design at every ``k_max`` and effect, one row each (``sequential.csv``).

    Per effect the experiments are drawn once with ``max(k_max_values)`` seeds, from a stream
    derived from the seed and the cell's names (:func:`sim.grid.cell_seed`); each ``k_max``
    uses their first ``k_max`` seeds, so the curves over ``k_max`` share their draws.

    Returns
    -------
    pandas.DataFrame
        Columns of :meth:`SequentialResult.row` plus generator, generator_params, protocol.
    """
    ks = sorted({k for k in k_max_values})
    if not ks or not all(isinstance(k, (int, np.integer)) for k in ks) \
            or not isinstance(k_min, (int, np.integer)) or ks[0] < k_min:
        raise ValueError(f"The 'k_max_values' parameter of sequential_table must be "
                         f"non-empty integers >= k_min ({k_min!r}). Got {k_max_values!r} "
                         f"instead.")
    effects_pp = list(effects_pp)
    if not effects_pp:
        raise ValueError("The 'effects_pp' parameter of sequential_table must be non-empty. "
                         "Got [] instead.")
    seed = check_int(seed, "seed", "sequential_table", low=0)
    ks = [int(k) for k in ks]
    top = ks[-1]
    # Validate every argument before any work (the largest k_max covers the others).
    for effect in effects_pp:
        _simulate_iv(generator, protocol, k_min, top, effect, sims, alpha, None, designs,
                     "sequential_table")
    rows = []
    for effect in effects_pp:
        args = _simulate_iv(generator, protocol, k_min, top, effect, sims, alpha, None,
                            designs, "sequential_table")
        generator, protocol, _, _, effect, sims, alpha, _, designs = args
        names = (generator.name, generator.describe(), top, float(effect))
        data_rng = np.random.default_rng(cell_seed(seed, "sequential-data", *names))
        protocol_rng = np.random.default_rng(cell_seed(seed, "sequential-protocol",
                                                       protocol.name, *names))
        first = max(protocol.min_k, 2)
        draws = _draw(generator, protocol, first, top, effect / 100.0, sims, alpha, data_rng,
                      protocol_rng)
        for k_max in ks:
            looks = tuple(range(k_min, k_max + 1))
            fixed_power = _fixed_power(draws, effect, k_max)
            for design in designs:
                result = _tally(design, draws, k_min, k_max, looks, effect, sims, alpha,
                                fixed_power)
                rows.append({"generator": generator.name,
                             "generator_params": generator.describe(),
                             "protocol": protocol.name, **result.row()})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Figure and command line

_STYLE = {"peek": ("tab:red", "-", "o"), "fixed": ("black", ":", "s"),
          "gs_pocock": ("tab:blue", "--", "^"), "gs_obf": ("tab:green", "-.", "D"),
          "e_tmix": ("tab:purple", (0, (5, 1, 1, 1)), "v")}
_LABEL = {"peek": "peek: test after every seed", "fixed": "fixed k = k_max",
          "gs_pocock": "group-sequential, Pocock spending",
          "gs_obf": "group-sequential, O'Brien-Fleming spending",
          "e_tmix": "anytime-valid e-process (t mixture)"}


def plot_sequential(frame: pd.DataFrame, path) -> None:
    """Draw :func:`sequential_figure` of ``frame`` into the PNG file ``path`` (atomically)."""
    import matplotlib.pyplot as plt

    fig = sequential_figure(frame)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def sequential_figure(frame: pd.DataFrame):
    """False-positive rate, power and mean seeds used against ``k_max``, one line per design.

    Left: rate at effect 0 with Wilson 95% bands and the nominal alpha line (hidden without
    effect-0 rows). Middle: power at the smallest non-zero effect (hidden without one).
    Right: mean seeds used (solid: that effect, dotted: the null). The caller chooses the
    matplotlib backend (``Agg`` for files).
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    alpha = float(frame["alpha"].iloc[0])
    k_min = int(frame["k_min"].iloc[0])
    nonzero = sorted(e for e in frame["effect_pp"].unique() if e != 0)
    effect = min(nonzero, key=abs) if nonzero else None
    designs = [d for d in DESIGNS if d in set(frame["design"])]
    fig, axes = plt.subplots(1, 3, figsize=(15, 5.2))
    for design in designs:
        color, style, marker = _STYLE[design]
        kw = dict(color=color, ls=style, marker=marker, ms=3.5, lw=1.4)
        part = frame[frame["design"] == design].sort_values("k_max")
        null = part[part["effect_pp"] == 0]
        if not null.empty:
            axes[0].plot(null["k_max"], null["rate"], label=_LABEL[design], **kw)
            axes[0].fill_between(null["k_max"], null["rate_low"], null["rate_high"],
                                 color=color, alpha=0.15, lw=0)
            axes[2].plot(null["k_max"], null["mean_seeds"], color=color, ls=":", lw=1.2)
        if effect is not None:
            alt = part[part["effect_pp"] == effect]
            axes[1].plot(alt["k_max"], alt["power"], label=_LABEL[design], **kw)
            axes[1].fill_between(alt["k_max"], alt["power_low"], alt["power_high"],
                                 color=color, alpha=0.15, lw=0)
            axes[2].plot(alt["k_max"], alt["mean_seeds"], label=_LABEL[design], **kw)
    null_high = frame.loc[frame["effect_pp"] == 0, "rate_high"]
    if null_high.empty:
        axes[0].set_visible(False)
    else:
        axes[0].axhline(alpha, color="gray", lw=1.2, ls=(0, (1, 1)),
                        label=f"nominal α = {100 * alpha:g}%")
        axes[0].set_ylim(0, max(2.2 * alpha, 1.1 * float(null_high.max())))
    axes[0].set_title("effect 0 pp: false-positive rate")
    axes[0].set_ylabel("rejection rate")
    if effect is not None:
        axes[1].set_title(f"effect {effect:g} pp: power (correct sign)")
        axes[1].set_ylim(0, 1.02)
        axes[1].set_ylabel("power")
        null_note = "" if null_high.empty else ", dotted: 0 pp"
        axes[2].set_title(f"mean seeds used (solid: {effect:g} pp{null_note})")
    else:
        axes[1].set_visible(False)
        axes[2].set_title("mean seeds used (dotted: 0 pp)")
    axes[2].set_ylabel("seeds per arm")
    for ax in axes:
        ax.set_xlabel(f"k_max (first look at k_min = {k_min} seeds)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    legend = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    handles, labels = list(legend.values()), list(legend)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3), fontsize=9,
               frameon=False)

    fig.suptitle(f"Adding seeds until it is significant: {frame['generator'].iloc[0]} "
                 f"({setting_words(frame['generator_params'].iloc[0])}), "
                 f"{int(frame['sims'].iloc[0])} experiments, protocol "
                 f"{frame['protocol'].iloc[0]}", fontsize=10)
    from matplotlib.ticker import PercentFormatter

    for ax in axes[:2]:
        ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="python -m sim.sequential",
        description="False-positive rate, power and seeds used when seeds are added until "
                    "the test is significant, against valid sequential designs.")
    p.add_argument("--k", nargs=2, type=int, required=True, metavar=("K_MIN", "K_MAX"),
                   help="first look at K_MIN seeds; rows for every k_max in K_MIN..K_MAX")
    p.add_argument("--effects", nargs="+", type=float, default=[0.0, 1.0], metavar="PP",
                   help="true effects in percentage points (default 0 1)")
    p.add_argument("--sims", type=int, default=2000, help="experiments per effect (2000)")
    p.add_argument("--seed", type=int, default=0, help="root seed (0)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (0.05)")
    p.add_argument("--protocol", default="paired_t", help="protocol that peeks (paired_t)")
    p.add_argument("--generator", default="seed_gaussian", help="generator (seed_gaussian)")
    p.add_argument("--param", nargs="+", default=[], metavar="KEY=VALUE",
                   help="generator parameters, e.g. sigma=0.004 noise=t3")
    p.add_argument("--designs", nargs="+", default=list(DESIGNS), metavar="NAME",
                   help=f"designs (default: all of {' '.join(DESIGNS)})")
    p.add_argument("--out", type=Path, default=Path("reports") / "output" / "sequential",
                   help="output folder")
    p.add_argument("--no-plot", action="store_true", help="skip sequential.png")
    p.add_argument("--quiet", action="store_true", help="print nothing")
    return p


def _summary(frame: pd.DataFrame) -> str:
    """The rows at a few k_max values, as a fixed-width table."""
    ks = sorted(set(frame["k_max"]))
    shown_k = sorted({k for k in (6, 10, 20) if k in ks} | {ks[-1]})
    part = frame[frame["k_max"].isin(shown_k)].copy()
    part["rate [95% CI]"] = [f"{r:.3f} [{lo:.3f}, {hi:.3f}]" for r, lo, hi in
                             zip(part["rate"], part["rate_low"], part["rate_high"])]
    cols = ["design", "k_max", "effect_pp", "rate [95% CI]", "power", "mean_seeds",
            "fixed_k_same_power"]
    return part[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}",
                                na_rep="-")


def main(argv=None) -> int:
    """Command line; returns the exit code (``ValueError`` is handled by the caller)."""

    args = build_parser().parse_args(argv)
    k_min, k_top = args.k
    if args.sims < 1:
        raise ValueError(f"--sims must be >= 1; got {args.sims}")
    if k_min < 2:
        raise ValueError(f"--k K_MIN must be >= 2 (a t statistic needs two seeds); got {k_min}")
    if k_top < k_min:
        raise ValueError(f"--k needs K_MIN <= K_MAX; got {k_min} > {k_top}")
    if len(set(args.effects)) != len(args.effects):
        raise ValueError(f"--effects has a repeated value: {args.effects}")
    generator = get_generator(args.generator, **parse_key_values(args.param, "--param"))
    frame = sequential_table(generator, args.protocol, k_min, range(k_min, k_top + 1),
                             args.effects, args.sims, args.alpha, seed=args.seed,
                             designs=args.designs)
    write_csv(frame, args.out / "sequential.csv")
    written = ["sequential.csv"]
    write_atomic(args.out / "command.json", json.dumps(
        {"argv": sys.argv[1:] if argv is None else list(argv)}) + "\n")
    if not args.no_plot:
        import matplotlib

        matplotlib.use("Agg")
        plot_sequential(frame, args.out / "sequential.png")
        written.append("sequential.png")
    if not args.quiet:
        print(_summary(frame))
        print(f"\nwrote {args.out}/: {', '.join(written)}")
    return 0


def run() -> None:
    """Console entry point: ``prog: error: msg`` on stderr and exit 2 for bad input."""
    run_main(main, "python -m sim.sequential")


if __name__ == "__main__":
    run()
