"""``harness_aso_05`` and ``harness_aso_02``: deep-significance's Almost Stochastic Order test.

Source: github.com/Kaleidophon/deep-significance, ``deepsig/aso.py`` (``aso``,
``compute_violation_ratio``, ``get_quantile_function``, ``get_bootstrapped_violation_ratios``);
del Barrio, Cuesta-Albertos & Matrán (2018), "An optimal transportation approach for
assessing almost stochastic order"; Dror, Shlomov & Reichart (2019), "Deep dominance - how
to properly compare deep neural models", ACL. Only the facts are carried over:

* the empirical quantile function of ``n`` scores is ``Q(p) = sorted[clip(ceil(n p) - 1,
  0, n - 1)]``;
* on the grid ``t = np.arange(dt, 1, dt)`` (``dt = 0.005``), with ``f = Q_A(t)``,
  ``g = Q_B(t)``: ``W2 = sum((g - f)**2) dt``, the violation integral is the same sum over
  the points with ``f < g`` excluding the first grid point, and the violation ratio is
  their quotient (0.5 when ``W2 = 0``);
* each of ``num_bootstrap_iterations = 1000`` iterations evaluates ``Q`` at ``n`` uniform
  draws per sample (a resample with replacement) and recomputes the ratio;
* ``eps_min = clip(ratio - sigma / c * Phi^-1(1 - confidence), 0, 1)`` with
  ``c = sqrt(n_A n_B / (n_A + n_B))`` and ``sigma`` the SD (``ddof = 0``) of
  ``c * (ratios* - ratio)``, i.e. ``ratio + z_confidence * SD(ratios*)``.

Scores A "better" than B when ``eps_min < 0.5`` (the docstring's rule); the README advises
a stricter ``0.2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.stats import norm

from evalcal_core.designs import MODELS, MODELS_CLUSTERED

from .._base import REPEATS_NOT_SEEDS, Protocol, check_draws, register
from .._resample import _chunks
from .._result import make_result
from .harness_rliable import resampled_run_counts

#: deepsig's default differential of the integrals over t
DT = 0.005


def _grid_weights(k: int, dt: float = DT):
    """How many grid points ``t`` read each order statistic: (all points, points but t[0]).

    Both samples have ``k`` scores, so ``Q_A(t)`` and ``Q_B(t)`` read the same order
    statistic at every grid point and the sums over the grid are weighted sums over the
    ``k`` order statistics.
    """
    t = np.arange(dt, 1, dt)
    index = np.clip(np.ceil(k * t).astype(np.int64) - 1, 0, k - 1)
    return np.bincount(index, minlength=k), np.bincount(index[1:], minlength=k)


def violation_ratios(sorted_a, sorted_b, dt: float = DT):
    """deepsig's violation ratio of A against B, both ways, from sorted scores.

    Parameters
    ----------
    sorted_a, sorted_b : ndarray, shape (..., k)
        Each sample's scores in ascending order (equal sizes).
    dt : float
        The grid step.

    Returns
    -------
    ratio_ab, ratio_ba : ndarray, shape (...)
        ``compute_violation_ratio(a, b)`` (the share of the squared quantile distance where
        A is below B) and ``compute_violation_ratio(b, a)``; 0.5 where ``W2 = 0``.
    """
    w_all, w_tail = _grid_weights(sorted_a.shape[-1], dt)
    gap2 = (sorted_b - sorted_a) ** 2
    w2 = gap2 @ w_all * dt
    below = np.where(sorted_a < sorted_b, gap2, 0.0) @ w_tail * dt
    above = np.where(sorted_b < sorted_a, gap2, 0.0) @ w_tail * dt
    zero = w2 == 0
    safe = np.where(zero, 1.0, w2)
    return np.where(zero, 0.5, below / safe), np.where(zero, 0.5, above / safe)


def _sorted_resamples(sorted_x, counts):
    # The order statistics of a resample with counts c: the j-th is the original order
    # statistic i with cumsum(c)[i - 1] <= j < cumsum(c)[i].
    k = sorted_x.shape[-1]
    cum = np.cumsum(counts, axis=-1)
    index = (cum[..., None, :] <= np.arange(k)[:, None]).sum(axis=-1)
    return np.take_along_axis(sorted_x[..., None, :], index, axis=-1)


def aso_epsilon_min(a, b, *, confidence_level: float = 0.95, n_resamples: int = 1000,
                    dt: float = DT, rng=None):
    """deepsig's ``aso(a, b)`` and ``aso(b, a)`` for a batch of score pairs (one bootstrap).

    Parameters
    ----------
    a, b : array_like, shape (..., k)
        Scores of the two algorithms (per-run metrics; fractions for accuracy), ``k >= 1``.
    confidence_level : float, default 0.95
        deepsig's ``confidence_level``.
    n_resamples : int, default 1000
        deepsig's ``num_bootstrap_iterations``.
    dt : float, default 0.005
    rng : numpy.random.Generator, int or None

    Returns
    -------
    eps_ab, eps_ba : ndarray, shape (...)
        ``eps_min`` of A over B (small: A better) and of B over A, each in [0, 1], from
        the same bootstrap resamples.
    """
    rng = np.random.default_rng(rng)
    sa, sb = np.sort(np.asarray(a, dtype=float), axis=-1), np.sort(np.asarray(b, float), -1)
    shape, k = sa.shape[:-1], sa.shape[-1]
    ratio_ab, ratio_ba = violation_ratios(sa, sb, dt)
    flat_a, flat_b = sa.reshape(-1, k), sb.reshape(-1, k)
    sd_ab, sd_ba = np.empty(flat_a.shape[0]), np.empty(flat_a.shape[0])
    for rows in _chunks(flat_a.shape[0], n_resamples * k * k):
        size = (rows.stop - rows.start,)
        ra = _sorted_resamples(flat_a[rows], resampled_run_counts(size, k, n_resamples, rng))
        rb = _sorted_resamples(flat_b[rows], resampled_run_counts(size, k, n_resamples, rng))
        star_ab, star_ba = violation_ratios(ra, rb, dt)
        sd_ab[rows], sd_ba[rows] = star_ab.std(axis=-1), star_ba.std(axis=-1)
    z = norm.ppf(confidence_level)
    eps_ab = np.clip(ratio_ab + z * sd_ab.reshape(shape), 0.0, 1.0)
    eps_ba = np.clip(ratio_ba + z * sd_ba.reshape(shape), 0.0, 1.0)
    return eps_ab, eps_ba


@dataclass(frozen=True)
class _AsoProtocol(Protocol):
    """deepsig's ASO on the per-run scores of the two arms; see :func:`aso_epsilon_min`.

    The variant is called better when ``eps_min(variant, base) < threshold`` and worse when
    ``eps_min(base, variant) < threshold``, each at ``confidence_level = 1 - alpha`` (0.95,
    deepsig's default, at the default alpha). The estimate is the difference of the mean
    run scores (fraction); ``eps_min`` is not a difference of accuracies and is not in the
    result (call :func:`aso_epsilon_min`). No CI, no p-value.

    Parameters
    ----------
    n_resamples : int, default 1000
        deepsig's ``num_bootstrap_iterations`` (its default).
    """

    n_resamples: int = 1000

    #: eps_min below it is a verdict
    threshold: ClassVar[float] = 0.5
    # With one run the bootstrap has no spread: eps_min is 0 or 1 on one pair of scores.
    min_k = 2
    stochastic = True
    valid_for = frozenset()
    pitfall_for = {MODELS: REPEATS_NOT_SEEDS, MODELS_CLUSTERED: REPEATS_NOT_SEEDS}

    def __post_init__(self):
        check_draws(self.n_resamples, "n_resamples", self.name, low=2)

    def _evaluate(self, batch, alpha, rng):
        xb, xv = batch.seed_base, batch.seed_variant
        eps_vb, eps_bv = aso_epsilon_min(xv, xb, confidence_level=1 - alpha,
                                         n_resamples=self.n_resamples, rng=rng)
        estimate = xv.mean(axis=-1) - xb.mean(axis=-1)
        return make_result(estimate,
                           significant=(eps_vb < self.threshold) | (eps_bv < self.threshold))


@register
@dataclass(frozen=True)
class HarnessAso05(_AsoProtocol):
    """deepsig ``aso`` with its documented rule: the variant is better when eps_min < 0.5.

    Parameters
    ----------
    n_resamples : int, default 1000
        deepsig's ``num_bootstrap_iterations``.
    """

    name = "harness_aso_05"
    summary = "deepsig ASO: eps_min < 0.5 (its default rule), either direction"
    harness = "deepsig aso (almost stochastic order); eps_min < 0.5"
    threshold = 0.5
    pitfall = "eps_min < 0.5 is not a level-alpha test: calls noise a winner at few runs"


@register
@dataclass(frozen=True)
class HarnessAso02(_AsoProtocol):
    """deepsig ``aso`` with the README's stricter rule: the variant is better when
    eps_min < 0.2.

    Parameters
    ----------
    n_resamples : int, default 1000
        deepsig's ``num_bootstrap_iterations``.
    """

    name = "harness_aso_02"
    summary = "deepsig ASO: eps_min < 0.2 (the README's advice), either direction"
    harness = "deepsig aso (almost stochastic order); eps_min < 0.2"
    threshold = 0.2
    pitfall = "eps_min < 0.2 has no stated error rate: its size depends on k"
