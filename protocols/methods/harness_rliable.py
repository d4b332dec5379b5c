"""``harness_rliable_interval`` and ``harness_rliable_poi``: rliable's stratified bootstrap.

Source: github.com/google-research/rliable, ``rliable/library.py``
(``get_interval_estimates``: percentile intervals, ``reps=50000``, 95%, from
``StratifiedIndependentBootstrap`` when a list of score arrays is passed: each array's runs
are resampled with replacement, independently of the other arrays) and ``rliable/metrics.py``
(``probability_of_improvement``: ``scipy.stats.mannwhitneyu(x, y).statistic / (n_x n_y)`` per
task, 0.5 when the two arrays are equal). Agarwal et al. (2021), "Deep reinforcement
learning at the edge of the statistical precipice", NeurIPS. Only the facts are carried over.

Layout: rliable's scores are ``(num_runs, num_tasks)``; a benchmark evaluated by evalcal is
ONE task whose score on run ``i`` is that run's accuracy (the per-seed metric), so the
stratified bootstrap resamples the k runs of each arm. (Passing the ``(k, n)`` score matrix
with the questions as tasks would resample runs per question, which is ``run_bootstrap``.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED
from evalcal_core.validate import fail

from .._base import REPEATS_NOT_SEEDS, Protocol, check_draws, register
from .._resample import _chunks
from .._result import make_result

#: rliable's default ``reps`` is 50,000; 2,000 keeps 1,000 experiments of 10 runs under a
#: second, with a Monte Carlo error of the 2.5% percentile below a tenth of the CI's width
DEFAULT_RESAMPLES = 2000


def resampled_run_counts(shape: tuple, k: int, n_resamples: int, rng) -> np.ndarray:
    """How often each of ``k`` runs is drawn in each bootstrap resample of the runs.

    Parameters
    ----------
    shape : tuple
        Batch shape (experiments).
    k : int
        Runs per arm.
    n_resamples : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of float, shape ``shape + (n_resamples, k)``
        Counts summing to ``k`` along the last axis (``k`` indices drawn uniformly with
        replacement, as ``np.random.choice(k, k)`` in rliable's bootstrap).
    """
    m = int(np.prod(shape, dtype=np.int64))
    idx = rng.integers(0, k, size=(m * n_resamples, k))
    flat = idx + k * np.arange(m * n_resamples)[:, None]
    counts = np.bincount(flat.ravel(), minlength=m * n_resamples * k)
    return counts.reshape(tuple(shape) + (n_resamples, k)).astype(float)


def improvement_matrix(x, y) -> np.ndarray:
    """``1[x_i > y_j] + 0.5 * 1[x_i == y_j]``, shape ``(..., k_x, k_y)``.

    Its mean is the Mann-Whitney U statistic of ``x`` over ``y`` divided by ``k_x k_y``.
    """
    x, y = np.asarray(x)[..., :, None], np.asarray(y)[..., None, :]
    return (x > y) + 0.5 * (x == y)


def probability_of_improvement(x, y) -> np.ndarray:
    """rliable's probability of improvement of runs ``x`` over runs ``y`` (one task).

    ``P(X > Y) + 0.5 P(X = Y)`` over all pairs of runs: ``mannwhitneyu(x, y).statistic /
    (k_x k_y)``; equal arrays give 0.5 as in rliable.

    Parameters
    ----------
    x, y : array_like, shape (..., k_x) and (..., k_y)
        Per-run scores (fractions for accuracy).

    Returns
    -------
    ndarray of float, shape (...)
        A probability in [0, 1].
    """
    return improvement_matrix(x, y).mean(axis=(-2, -1))


def _percentile_interval(replicates, alpha):
    # arch's 'percentile' method (used by rliable): np.percentile, linear interpolation.
    return tuple(np.percentile(replicates, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=-1))


def _stratified_bootstrap(x, y, n_resamples, rng, statistic):
    """``statistic(c_x, c_y, rows)`` over resamples of the runs, shape ``(..., n_resamples)``.

    ``c_x``, ``c_y`` are :func:`resampled_run_counts` of the two samples, drawn
    independently (rliable's ``StratifiedIndependentBootstrap``); ``rows`` the flat indices
    of the experiments they belong to. Experiments are taken a chunk at a time to bound
    memory.
    """
    shape, k = x.shape[:-1], x.shape[-1]
    m = int(np.prod(shape, dtype=np.int64))
    out = np.empty((m, n_resamples))
    for rows in _chunks(m, n_resamples * k):
        size = (rows.stop - rows.start,)
        cx = resampled_run_counts(size, k, n_resamples, rng)
        cy = resampled_run_counts(size, k, n_resamples, rng)
        out[rows] = statistic(cx, cy, rows)
    return out.reshape(tuple(shape) + (n_resamples,))


def _runs(x, y):
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim < 1:
        raise fail(("x", "y"), "of the same shape (..., k)", got=f"{x.shape} and {y.shape}")
    return x, y


def rliable_difference_interval(x, y, *, alpha: float = 0.05,
                                n_resamples: int = DEFAULT_RESAMPLES, rng=None):
    """rliable's stratified-bootstrap percentile interval of ``mean(x) - mean(y)``.

    Parameters
    ----------
    x, y : array_like, shape (..., k)
        Per-run scores of the two algorithms (fractions for accuracy); leading axes are
        independent experiments.
    alpha : float, default 0.05
        The interval's level is ``1 - alpha`` (rliable's ``confidence_interval_size``).
    n_resamples : int, default 2000
        rliable's ``reps`` (50,000 there).
    rng : numpy.random.Generator, int or None

    Returns
    -------
    low, high : ndarray of float, shape (...)
        The ``alpha / 2`` and ``1 - alpha / 2`` percentiles of the resampled differences
        (fractions).
    """
    x, y = _runs(x, y)
    k = x.shape[-1]
    fx, fy = x.reshape(-1, k), y.reshape(-1, k)

    def difference(cx, cy, rows):
        return (cx @ fx[rows, :, None] - cy @ fy[rows, :, None])[..., 0] / k

    return _percentile_interval(
        _stratified_bootstrap(x, y, n_resamples, np.random.default_rng(rng), difference),
        alpha)


def rliable_poi_interval(x, y, *, alpha: float = 0.05, n_resamples: int = DEFAULT_RESAMPLES,
                         rng=None):
    """rliable's probability of improvement of ``x`` over ``y`` and its bootstrap interval.

    Parameters
    ----------
    x, y : array_like, shape (..., k)
        Per-run scores (fractions for accuracy); leading axes are experiments.
    alpha : float, default 0.05
    n_resamples : int, default 2000
        rliable's ``reps`` (50,000 there).
    rng : numpy.random.Generator, int or None

    Returns
    -------
    poi, low, high : ndarray of float, shape (...)
        :func:`probability_of_improvement` and the percentile interval of its resamples
        (probabilities).
    """
    x, y = _runs(x, y)
    k = x.shape[-1]
    # P of a resample: sum_ij c_x[i] c_y[j] M[i, j] / k**2 with M the improvement matrix
    # of the original runs (a resampled run is a copy of an original one).
    matrix = improvement_matrix(x, y)
    flat = matrix.reshape(-1, k, k)

    def poi(cx, cy, rows):
        return ((cx @ flat[rows]) * cy).sum(axis=-1) / k**2

    replicates = _stratified_bootstrap(x, y, n_resamples, np.random.default_rng(rng), poi)
    return (matrix.mean(axis=(-2, -1)), *_percentile_interval(replicates, alpha))


@dataclass(frozen=True)
class _RliableProtocol(Protocol):
    """A protocol on rliable's stratified bootstrap of the k runs of each arm.

    Parameters
    ----------
    n_resamples : int, default 2000
        Bootstrap resamples (rliable's ``reps``; its default 50,000 is costly in a batch:
        see :data:`DEFAULT_RESAMPLES`).
    """

    n_resamples: int = DEFAULT_RESAMPLES

    # With one run every resample is the data: a zero-width interval, no bootstrap.
    min_k = 2
    stochastic = True
    valid_for = frozenset()

    def __post_init__(self):
        check_draws(self.n_resamples, "n_resamples", self.name, low=2)


@register
@dataclass(frozen=True)
class HarnessRliableInterval(_RliableProtocol):
    """rliable's stratified-bootstrap 95% interval of the difference of mean run scores.

    ``get_interval_estimates({"diff": [variant_runs, base_runs]}, func=lambda x, y:
    np.array([x.mean() - y.mean()]), method="percentile")``: the k runs of each arm are
    resampled independently, the percentile interval (``alpha / 2`` and ``1 - alpha / 2``,
    95% by default) of the difference of the resampled means is reported, and a user calls
    the variant better or worse when it excludes 0. The estimate is the difference of the
    mean run scores (fraction). There is no p-value.

    A percentile bootstrap of k runs is too narrow at the few seeds of deep-learning
    studies (its spread is the plug-in SD, ``sqrt((k - 1) / k)`` of the sample SD, with
    normal rather than t quantiles), and it ignores the pairing of seeds.

    Parameters
    ----------
    n_resamples : int, default 2000
        Bootstrap resamples (rliable's ``reps``, default 50,000 there).
    """

    name = "harness_rliable_interval"
    summary = "rliable stratified bootstrap 95% interval of the mean difference excludes 0"
    harness = "rliable get_interval_estimates (stratified bootstrap, percentile); CI excludes 0"
    pitfall = "a percentile bootstrap of few runs: too narrow at small k, pairing unused"
    pitfall_for = {METHODS_INDEPENDENT: "a percentile bootstrap of few runs: too narrow at "
                                        "small k",
                   MODELS: REPEATS_NOT_SEEDS, MODELS_CLUSTERED: REPEATS_NOT_SEEDS}

    def _evaluate(self, batch, alpha, rng):
        xb, xv = batch.seed_base, batch.seed_variant
        low, high = rliable_difference_interval(xv, xb, alpha=alpha,
                                                n_resamples=self.n_resamples, rng=rng)
        estimate = xv.mean(axis=-1) - xb.mean(axis=-1)
        return make_result(estimate, low, high, significant=(low > 0) | (high < 0))


@register
@dataclass(frozen=True)
class HarnessRliablePoi(_RliableProtocol):
    """rliable's probability of improvement with its stratified-bootstrap 95% interval.

    ``P = probability_of_improvement(variant_runs, base_runs)`` (rliable's, here
    :func:`probability_of_improvement`), its interval the percentile interval of ``P``
    over resamples of each arm's runs (independently). The user's decision "the variant
    improves" is a lower bound above 0.5; the two-sided protocol also calls the baseline
    better when the upper bound is below 0.5 (the same rule with the arms swapped).

    The result's estimate is the difference of mean run scores (fraction), as for every
    protocol; ``P`` itself and its interval are not a difference of accuracies and are
    not in the result (call :func:`rliable_poi_interval`). No CI, no p-value.

    Parameters
    ----------
    n_resamples : int, default 2000
        Bootstrap resamples (rliable's ``reps``, default 50,000 there).
    """

    name = "harness_rliable_poi"
    summary = "rliable probability of improvement: 95% interval of P(X > Y) excludes 0.5"
    harness = "rliable probability_of_improvement + stratified bootstrap; lower bound > 0.5"
    pitfall = "a percentile bootstrap of a rank statistic of few runs: too narrow at small k"
    pitfall_for = {MODELS: REPEATS_NOT_SEEDS, MODELS_CLUSTERED: REPEATS_NOT_SEEDS}

    def _evaluate(self, batch, alpha, rng):
        xb, xv = batch.seed_base, batch.seed_variant
        _, low, high = rliable_poi_interval(xv, xb, alpha=alpha, n_resamples=self.n_resamples,
                                            rng=rng)
        estimate = xv.mean(axis=-1) - xb.mean(axis=-1)
        return make_result(estimate, significant=(low > 0.5) | (high < 0.5))
