"""Boundaries of the sequential designs: Lan--DeMets alpha spending, group-sequential z
and t boundaries (recursive numerical integration), and the t-mixture e-value."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, special, stats

from evalcal_core.validate import check_alpha, fail

#: boundary kinds of :func:`z_boundaries`: Lan--DeMets spending functions and the classical
#: constant-shape designs of Pocock (1977) and O'Brien and Fleming (1979)
BOUNDARY_KINDS = ("pocock", "obrien_fleming", "pocock_constant", "obrien_fleming_constant")
#: prior variance of the standardized effect of ``e_tmix``
E_PRIOR_VARIANCE = 1.0
#: score-scale grid step of the numerical integration, in units of one seed's sd
_GRID_STEP = 0.05
#: the continuation density is negligible beyond this many sd from its mean
_GRID_SD = 10.0


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
    raise fail("kind", "'pocock' or 'obrien_fleming'", kind, "spending")


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
        raise fail("looks", "a sequence of numbers", looks, caller) from None
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or arr[0] <= 0 \
            or np.any(np.diff(arr) <= 0):
        raise fail("looks", "a non-empty, strictly increasing sequence of positive numbers "
                   "(seeds at each look)", looks, caller)
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
        raise fail("bounds", f"positive, one per look ({looks.size})", bounds,
                   "exit_probabilities")
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
        raise fail("kind", f"one of {BOUNDARY_KINDS}", kind, "z_boundaries")
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
        raise fail("looks", "whole numbers of seeds >= 2", looks, "t_boundaries")
    alpha = check_alpha(alpha, "alpha", "t_boundaries")
    if kind not in ("pocock", "obrien_fleming"):
        raise fail("kind", "'pocock' or 'obrien_fleming'", kind, "t_boundaries")
    if method == "nominal":
        nominal = 2.0 * special.ndtr(-z_boundaries(looks, alpha, kind))
        return stats.t.isf(nominal / 2.0, looks - 1)
    if method != "calibrated":
        raise fail("method", "'calibrated' or 'nominal'", method, "t_boundaries")
    return np.array(_calibrated(tuple(int(j) for j in looks), alpha, kind))


#: simulated null paths behind ``t_boundaries(method='calibrated')``: the level they give
#: has a Monte Carlo SE of about sqrt(0.05 * 0.95 / M) = 3e-4 at alpha = 0.05
CALIBRATION_PATHS = 2**19
#: root entropy of the calibration paths (fixed: the boundaries are part of the design)
CALIBRATION_ENTROPY = 0x5EED5EED
#: calibration paths whose t statistics are computed at once (bounds the temporaries)
_CALIBRATION_BLOCK = 2**16
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
        # Blocks of paths: _t_path's float64 temporaries over all of them at once peak at
        # about 0.8 GB (ten copies of d); the paths are independent rows, so the result is
        # the same.
        cached = np.empty(d.shape, dtype=np.float32)
        for start in range(0, CALIBRATION_PATHS, _CALIBRATION_BLOCK):
            rows = slice(start, start + _CALIBRATION_BLOCK)
            cached[rows] = np.abs(_t_path(d[rows])[0])
        _NULL_PATHS["abs_t"] = cached
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
