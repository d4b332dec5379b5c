"""Vectorized resampling kernels shared by the bootstrap and permutation protocols.

All functions take arrays with leading batch axes and bound their memory with a chunk size
over the flattened batch, never with a Python loop over single experiments.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math

import numpy as np
from scipy import special

#: elements of the largest temporary array a kernel builds at once (~32 MB of float64)
CHUNK_ELEMENTS = 2**22

#: experiments per thread below which the BCa kernel does not split a batch
MIN_EXPERIMENTS_PER_THREAD = 64

#: parts of a batch per thread in the parallel BCa kernel
PARTS_PER_THREAD = 4

#: most threads the compiled kernels may use (None: numba's default, one per core); set
#: by :func:`kernel_threads`
_max_threads: int | None = None

#: relative tolerance for ties between resampled statistics and the observed one: values on
#: a lattice (accuracy deltas are multiples of 1/n) must tie exactly despite rounding
TIE_RTOL = 1e-12


def _kernels():
    # Imported on first use: numba (and the first-use compile notice) is paid only by the
    # BCa protocols, not by every command that imports the registry.
    from protocols import _bca_kernels

    return _bca_kernels


@contextlib.contextmanager
def kernel_threads(n: int | None):
    """Let the compiled resampling kernels use at most ``n`` threads inside the block.

    Results never depend on the thread count; this only keeps a worker process that
    shares the machine with others (a calibration's loky or dask workers) to one core.
    ``None`` restores numba's default (``NUMBA_NUM_THREADS``, one per core).
    """
    global _max_threads
    previous = _max_threads
    _max_threads = n
    try:
        yield
    finally:
        _max_threads = previous


def _threads_for(m: int) -> int:
    # threads worth starting for a batch of m experiments
    import numba

    n = numba.get_num_threads()
    if _max_threads is not None:
        n = min(n, _max_threads)
    return max(1, min(n, m // MIN_EXPERIMENTS_PER_THREAD))


def _chunks(n_items: int, cost_per_item: int):
    step = max(1, CHUNK_ELEMENTS // max(1, cost_per_item))
    for start in range(0, n_items, step):
        yield slice(start, min(start + step, n_items))


def _flat(x, tail: int):
    """Reshape ``x`` to (batch, *last ``tail`` axes) and return the batch shape."""
    batch_shape = x.shape[: x.ndim - tail]
    return x.reshape((-1,) + x.shape[x.ndim - tail:]), batch_shape


# --------------------------------------------------------------------------------------------
# Bootstrap of a mean over questions


def resampled_sums_of_integers(values, n_resamples, rng):
    """Sums of ``n`` values drawn with replacement, for integer values in a small range.

    Drawing ``n`` indices uniformly and summing is the same in distribution as drawing the
    counts of each distinct value from a multinomial with the empirical frequencies; with
    few distinct values (per-question correct counts 0..k) that is far cheaper.

    Parameters
    ----------
    values : ndarray of int, shape (..., n)
    n_resamples : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of float, shape (..., n_resamples)
    """
    flat, batch_shape = _flat(values, 1)
    n = flat.shape[-1]
    lo, hi = int(flat.min()), int(flat.max())
    levels = np.arange(lo, hi + 1)
    n_levels = levels.size
    offset = (flat - lo) + n_levels * np.arange(flat.shape[0])[:, None]
    freq = np.bincount(offset.ravel(), minlength=n_levels * flat.shape[0])
    freq = freq.reshape(flat.shape[0], n_levels) / n
    out = np.empty((flat.shape[0], n_resamples))
    for sl in _chunks(flat.shape[0], n_resamples * n_levels):
        p = freq[sl, None, :]
        counts = rng.multinomial(n, p, size=(p.shape[0], n_resamples))
        out[sl] = counts @ levels.astype(float)
    return out.reshape(batch_shape + (n_resamples,))


def resampled_means(values, n_resamples, rng):
    """Means of ``n`` values drawn with replacement (the question bootstrap), per experiment.

    Parameters
    ----------
    values : ndarray, shape (..., n)
    n_resamples : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (..., n_resamples)
    """
    flat, batch_shape = _flat(values, 1)
    n = flat.shape[-1]
    out = np.empty((flat.shape[0], n_resamples))
    for sl in _chunks(flat.shape[0], n_resamples * n):
        idx = rng.integers(0, n, size=(sl.stop - sl.start, n_resamples, n))
        out[sl] = np.take_along_axis(flat[sl, None, :], idx, axis=-1).mean(axis=-1)
    return out.reshape(batch_shape + (n_resamples,))


def resampled_run_picks(scores, n_resamples, rng):
    """Run bootstrap of one arm: for every question pick one of the ``k`` runs at random.

    Parameters
    ----------
    scores : ndarray, shape (..., k, n)
    n_resamples : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (..., n_resamples)
        Mean score over questions of each replicate (fraction).
    """
    flat, batch_shape = _flat(scores, 2)
    m, k, n = flat.shape
    if flat.dtype == bool or np.all((flat == 0) | (flat == 1)):
        correct = flat.sum(axis=-2, dtype=np.int64)
        return resampled_run_picks_binary(correct.reshape(batch_shape + (n,)), k,
                                          n_resamples, rng)
    out = np.empty((m, n_resamples))
    for sl in _chunks(m, n_resamples * n):
        pick = rng.integers(0, k, size=(sl.stop - sl.start, n_resamples, 1, n))
        chosen = np.take_along_axis(flat[sl, None, :, :], pick, axis=-2)
        out[sl] = chosen[..., 0, :].mean(axis=-1)
    return out.reshape(batch_shape + (n_resamples,))


def resampled_run_picks_binary(correct, k, n_resamples, rng):
    """:func:`resampled_run_picks` of 0/1 scores from their per-question correct counts.

    A question answered right by j of k runs contributes Bernoulli(j/k), so a replicate's
    total is ``sum_j Binomial(#questions with j, j/k)``: exact, and O(k) per replicate
    instead of O(n).

    Parameters
    ----------
    correct : ndarray of int, shape (..., n)
        Runs (of ``k``) that answered each question right.
    k : int
    n_resamples : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (..., n_resamples)
    """
    flat, batch_shape = _flat(np.asarray(correct), 1)
    m, n = flat.shape
    offset = flat + (k + 1) * np.arange(m)[:, None]
    by_level = np.bincount(offset.ravel(), minlength=(k + 1) * m).reshape(m, k + 1)
    inner = np.arange(1, k)
    out = np.empty((m, n_resamples))
    for sl in _chunks(m, n_resamples * max(1, k - 1)):
        draws = rng.binomial(by_level[sl, None, 1:k], inner / k,
                             size=(sl.stop - sl.start, n_resamples, k - 1))
        out[sl] = draws.sum(axis=-1) + by_level[sl, None, k]
    out /= n
    return out.reshape(batch_shape + (n_resamples,))


# --------------------------------------------------------------------------------------------
# Sign-flip permutation test on paired deltas


def sign_flip_pvalue(d, rng, *, max_exact_k=16, n_permutations=10_000):
    """Two-sided sign-flip permutation p-value of the mean of paired deltas.

    The statistic is ``|sum(d)|``. Up to ``max_exact_k`` seeds all ``2**k`` sign patterns are
    enumerated (the exact test, equal to ``scipy.stats.permutation_test`` with
    ``permutation_type='samples'`` and exhaustive resamples); beyond, ``n_permutations``
    random patterns are drawn and ``p = (1 + count) / (1 + n_permutations)``.

    Parameters
    ----------
    d : ndarray, shape (..., k)
        Per-seed deltas (variant minus baseline).
    rng : numpy.random.Generator
    max_exact_k : int
    n_permutations : int

    Returns
    -------
    ndarray, shape (...)
    """
    flat, batch_shape = _flat(np.asarray(d, dtype=float), 1)
    m, k = flat.shape
    observed = np.abs(flat.sum(axis=-1))
    threshold = observed - TIE_RTOL * np.abs(flat).sum(axis=-1)
    p = np.empty(m)
    if k <= max_exact_k:
        # all 2**k patterns, counted in O(2**(k/2)) by the compiled kernel
        counts = _kernels().sign_flip_counts(np.ascontiguousarray(flat), threshold)
        p[:] = counts / 2.0**k
    else:
        # one uniform 64-bit draw gives 64 seeds their signs (its bits), read by the compiled
        # kernel: a float array of signs drawn one at a time cost 30x the time at k = 48,
        # most of it drawing (benchmarks/bench_sign_flip.py)
        n_words = -(-k // 64)
        for sl in _chunks(m, n_permutations * n_words):
            words = rng.integers(0, 2**64, size=(sl.stop - sl.start, n_permutations, n_words),
                                 dtype=np.uint64)
            count = _kernels().random_sign_flip_counts(np.ascontiguousarray(flat[sl]),
                                                       np.ascontiguousarray(threshold[sl]),
                                                       words)
            p[sl] = (1.0 + count) / (1.0 + n_permutations)
    return p.reshape(batch_shape)


def min_sign_flip_pvalue(k: int, *, max_exact_k=16, n_permutations=10_000) -> float:
    """Smallest two-sided sign-flip p-value attainable with ``k`` seeds (2 / 2**k if exact)."""
    if k <= max_exact_k:
        return 2.0 / 2.0**k
    return 1.0 / (1.0 + n_permutations)


# --------------------------------------------------------------------------------------------
# BCa bootstrap interval on the mean of paired deltas


@functools.lru_cache(maxsize=16)
def ideal_bootstrap_multisets(k: int):
    """All ``C(2k-1, k)`` resamples of ``k`` seeds as count vectors with their probabilities.

    Returns
    -------
    counts : ndarray of float, shape (M, k)
        How often each seed appears in the resample.
    weights : ndarray, shape (M,)
        Multinomial probabilities ``k! / (prod counts! * k**k)``; they sum to 1.
    """
    bars = np.array(list(itertools.combinations(range(2 * k - 1), k - 1)), dtype=np.int64)
    bars = bars.reshape(-1, k - 1)
    edges = np.concatenate([np.full((bars.shape[0], 1), -1), bars,
                            np.full((bars.shape[0], 1), 2 * k - 1)], axis=1)
    counts = (np.diff(edges, axis=1) - 1).astype(float)
    log_w = (special.gammaln(k + 1) - special.gammaln(counts + 1).sum(axis=1)
             - k * math.log(k))
    weights = np.exp(log_w)
    counts.setflags(write=False)
    weights.setflags(write=False)
    return counts, weights


def n_ideal_multisets(k: int) -> int:
    """Number of distinct bootstrap resamples of ``k`` items, ``C(2k-1, k)``."""
    return math.comb(2 * k - 1, k)


def _acceleration(d):
    # Jackknife acceleration of the mean (Efron 1987): U_i = (k-1)(mean_jack - theta_(i))
    # reduces to d_i - mean(d).
    u = d - d.mean(axis=-1, keepdims=True)
    u2 = u * u  # products, not float powers: equal up to rounding, several times faster
    num = (u2 * u).sum(axis=-1)
    den = u2.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = num / (6.0 * (den * np.sqrt(den)))
    return np.where(den > 0, a, 0.0)


def _bca_levels(z0, a, alpha):
    z_lo = special.ndtri(alpha / 2.0)
    out = []
    for z in (z_lo, -z_lo):
        num = z0 + z
        out.append(special.ndtr(z0 + num / (1.0 - a * num)))
    return out


@functools.lru_cache(maxsize=8)
def _z0_of_twice_share(n_resamples: int) -> np.ndarray:
    # z0 = ndtri(share below, ties counted half) for every possible count 2*below + ties;
    # all replicates on one side would give +-inf, so clip to the resolution of B.
    share = np.arange(2 * n_resamples + 1) / (2.0 * n_resamples)
    share = np.clip(share, 0.5 / n_resamples, 1.0 - 0.5 / n_resamples)
    z0 = special.ndtri(share)
    z0.setflags(write=False)
    return z0


def _ideal_bca(flat, theta, tol, a, alpha):
    # BCa over all C(2k-1, k) resample multisets, weighted by their probabilities.
    counts, weights = ideal_bootstrap_multisets(flat.shape[1])
    counts_t = np.ascontiguousarray(counts.T, dtype=np.float32)
    share = _kernels().weighted_share(flat, counts_t, weights, theta, tol)
    q_lo, q_hi = _bca_levels(special.ndtri(share), a, alpha)
    offsets = _kernels().weighted_quantile_offsets(
        flat, counts_t, weights, theta, np.stack([q_lo, q_hi], axis=-1))
    return theta + offsets[:, 0], theta + offsets[:, 1]


def _ordered_counts(idx, k):
    """Seed counts of the resamples ``idx`` (B, k), laid out for the BCa kernel.

    Returns ``counts_t`` (k, B) of float64: ``counts_t[j, p]`` is how often the j-th
    smallest delta is in the resample at position p. Resample counts are exchangeable
    across seeds, so giving them to the deltas in sorted order is still an ordinary
    bootstrap. That makes how low a resample's mean lies depend mostly on the resample:
    the resamples are ranked once for the batch by the normal scores of the ranks they
    pick, and block q of the kernel (positions ``l * n_blocks + q``, ``l`` < BLOCK) gets
    the ranked resamples ``q * BLOCK .. (q + 1) * BLOCK - 1``. The two tails, where the
    BCa ends lie, then fill few blocks. Only the speed depends on this layout, never the
    interval.
    """
    scores = special.ndtri((np.arange(k) + 0.625) / (k + 0.25))  # Blom's normal scores
    ranked = np.argsort(scores[idx].sum(axis=-1))  # deterministic; ties may go either way
    return _kernels().layout_counts(idx, ranked, k)


def bca_interval(d, alpha, rng, *, n_resamples=10_000, exact=False):
    """BCa bootstrap confidence interval for the mean of per-seed deltas.

    Follows Efron (1987) as ``scipy.stats.bootstrap(method='BCa')`` does: bias correction
    ``z0 = Phi^-1(share of replicates below the estimate, ties counted half)``, acceleration
    from the jackknife. With ``exact=True`` the "ideal" bootstrap is used: every one of the
    ``C(2k-1, k)`` resample multisets with its multinomial probability, so the interval has
    no Monte Carlo error; quantiles are then the generalized inverse of the discrete CDF.
    Both modes find their order statistics in the compiled kernels of
    :mod:`protocols._bca_kernels` (exactly the values a full sort would give).

    Parameters
    ----------
    d : ndarray, shape (..., k)
        Per-seed deltas.
    alpha : float
        1 - confidence level (two-sided).
    rng : numpy.random.Generator
        Used only when ``exact`` is False; one set of ``n_resamples`` resamples is drawn
        per call and shared by the batch (as scipy does for batched input).
    n_resamples : int
    exact : bool

    Returns
    -------
    ci_low, ci_high : ndarray, shape (...)
        All deltas equal gives ``[d, d]``.
    """
    flat, batch_shape = _flat(np.asarray(d, dtype=float), 1)
    k = flat.shape[1]
    theta = flat.mean(axis=-1)
    tol = TIE_RTOL * np.abs(flat).max(axis=-1)
    a = _acceleration(flat)
    flat = np.ascontiguousarray(flat)
    if exact:
        low, high = _ideal_bca(flat, theta, tol, a, alpha)
    else:
        # One set of resamples for the whole batch, as scipy.stats.bootstrap draws for
        # batched input: every experiment's interval is an ordinary bootstrap interval,
        # and a batch gives exactly what its experiments give one by one with the same rng.
        idx = rng.integers(0, k, size=(n_resamples, k))
        z_alpha = float(special.ndtri(alpha / 2.0))
        args = (np.sort(flat, axis=-1), _ordered_counts(idx, k), theta, tol, a,
                _z0_of_twice_share(n_resamples), z_alpha)
        n_threads = _threads_for(flat.shape[0])
        if n_threads > 1:
            # a few parts per thread, each thread taking the next part when done (chunks
            # of one), so that a core busy elsewhere delays only the parts it took
            import numba

            n_parts = min(PARTS_PER_THREAD * n_threads,
                          flat.shape[0] // MIN_EXPERIMENTS_PER_THREAD)
            previous = numba.set_parallel_chunksize(1)
            try:
                off_low, off_high = _kernels().bca_offsets_parallel(*args, n_parts)
            finally:
                numba.set_parallel_chunksize(previous)
        else:
            off_low, off_high = _kernels().bca_offsets(*args)
        low, high = theta + off_low, theta + off_high
    constant = np.ptp(flat, axis=-1) <= tol
    low = np.where(constant, theta, low)
    high = np.where(constant, theta, high)
    return low.reshape(batch_shape), high.reshape(batch_shape)
