"""The compiled BCa kernels against an independent reference: a full float64 sort.

``protocols._bca_kernels`` finds order statistics through a histogram instead of sorting.
The references below rebuild the same BCa interval the plain way (replicate matrix,
``np.sort``/``np.argsort``, ``np.percentile`` with its default linear interpolation or the
cumulative weights of the ideal bootstrap, ``scipy.special`` for ``ndtri``/``ndtr``) from
the same resamples, so the two must agree to rounding, on data chosen to stress the
histogram: ties on a lattice, an outlier that stretches the bins, constant rows, k = 2, and
levels pushed to the extreme ranks.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import special

from protocols import _resample

N_RESAMPLES = 2000


def _estimate_tolerance_acceleration(d):
    # the mean, the tie tolerance and the jackknife acceleration of the mean (Efron 1987)
    theta = d.mean(axis=-1)
    tol = _resample.TIE_RTOL * np.abs(d).max(axis=-1)
    u = d - theta[:, None]
    den = (u**2).sum(-1)
    a = np.divide((u**3).sum(-1), 6.0 * den**1.5, out=np.zeros(d.shape[0]), where=den > 0)
    return theta, tol, a


def _bca_levels(z0, a, alpha):
    # lower and upper BCa levels, in that order
    for z in (special.ndtri(alpha / 2), -special.ndtri(alpha / 2)):
        yield special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))


def _reference_bca(d, alpha, rng, n_resamples=N_RESAMPLES):
    m, k = d.shape
    theta, tol, a = _estimate_tolerance_acceleration(d)
    idx = rng.integers(0, k, size=(n_resamples, k))
    # the kernel gives resample b's counts to the deltas in ascending order
    ordered = np.sort(d, axis=-1)
    replicates = np.stack([ordered[:, idx[b]].mean(axis=-1) for b in range(n_resamples)],
                          axis=-1)
    offset = replicates - theta[:, None]
    share = ((offset < -tol[:, None]).sum(-1)
             + 0.5 * (np.abs(offset) <= tol[:, None]).sum(-1)) / n_resamples
    z0 = special.ndtri(np.clip(share, 0.5 / n_resamples, 1 - 0.5 / n_resamples))
    ends = [theta + np.array([np.percentile(offset[i], 100 * q[i]) for i in range(m)])
            for q in _bca_levels(z0, a, alpha)]
    constant = np.ptp(d, axis=-1) <= tol
    return np.where(constant, theta, ends[0]), np.where(constant, theta, ends[1])


def _reference_ideal_bca(d, alpha):
    m, k = d.shape
    theta, tol, a = _estimate_tolerance_acceleration(d)
    multisets = list(itertools.combinations_with_replacement(range(k), k))
    counts = np.array([np.bincount(c, minlength=k) for c in multisets], dtype=float)
    weights = np.array([math.factorial(k) / np.prod([math.factorial(int(x)) for x in row])
                        for row in counts]) / k**k
    replicates = d @ counts.T / k
    offset = replicates - theta[:, None]
    share = ((offset < -tol[:, None]) @ weights
             + 0.5 * (np.abs(offset) <= tol[:, None]) @ weights)
    ends = []
    for q in _bca_levels(special.ndtri(share), a, alpha):
        end = np.empty(m)
        for i in range(m):
            order = np.argsort(replicates[i])
            cdf = np.cumsum(weights[order])
            j = min(int(np.sum(cdf < np.clip(q[i], 0, 1) - 1e-12)), len(cdf) - 1)
            end[i] = replicates[i, order[j]]
        ends.append(end)
    constant = np.ptp(d, axis=-1) <= tol
    return np.where(constant, theta, ends[0]), np.where(constant, theta, ends[1])


def _data(kind, k, rng):
    m = 60
    if kind == "normal":
        return rng.normal(0.01, 0.005, (m, k))
    if kind == "lattice":  # accuracy deltas are multiples of 1/n: many exact ties
        return rng.integers(-3, 4, (m, k)) / 1000
    if kind == "outlier":  # one far seed: nearly all replicates crowd into a few bins
        d = rng.normal(0.0, 0.005, (m, k))
        d[:, 0] += 1.0
        return d
    d = np.full((m, k), 0.003)  # constant rows, and rows with one differing seed
    d[::2, 1] = 0.004
    return d


@pytest.mark.parametrize("kind", ["normal", "lattice", "outlier", "constant"])
@pytest.mark.parametrize("k", [2, 3, 8, 12])
@pytest.mark.parametrize("alpha", [0.05, 0.001, 0.5])
def test_kernel_matches_sorting(kind, k, alpha):
    d = _data(kind, k, np.random.default_rng(k))
    low, high = _resample.bca_interval(d, alpha, np.random.default_rng(1),
                                       n_resamples=N_RESAMPLES)
    ref_low, ref_high = _reference_bca(d, alpha, np.random.default_rng(1))
    # same resamples, same arithmetic up to summation order: rounding only
    scale = np.abs(d).max()
    np.testing.assert_allclose(low, ref_low, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(high, ref_high, rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("kind", ["normal", "lattice", "outlier", "constant"])
@pytest.mark.parametrize("k", [8, 12])
def test_kernel_matches_sorting_at_the_default_resamples(kind, k):
    # At B = 10,000 the kernel reads only the tails' blocks where its guess of the ends
    # holds (normal, lattice) and the whole histogram where it does not (an outlier
    # defeats the guess; constant rows have none): both must give the sorted values.
    d = _data(kind, k, np.random.default_rng(k))
    low, high = _resample.bca_interval(d, 0.05, np.random.default_rng(2), n_resamples=10_000)
    ref_low, ref_high = _reference_bca(d, 0.05, np.random.default_rng(2), n_resamples=10_000)
    scale = np.abs(d).max()
    np.testing.assert_allclose(low, ref_low, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(high, ref_high, rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("kind", ["normal", "lattice", "outlier", "constant"])
@pytest.mark.parametrize("k", [2, 3, 5, 7])
@pytest.mark.parametrize("alpha", [0.05, 0.001, 0.5])
def test_ideal_kernel_matches_weighted_sort(kind, k, alpha):
    d = _data(kind, k, np.random.default_rng(k))
    low, high = _resample.bca_interval(d, alpha, None, exact=True)
    ref_low, ref_high = _reference_ideal_bca(d, alpha)
    scale = np.abs(d).max()
    np.testing.assert_allclose(low, ref_low, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(high, ref_high, rtol=0, atol=1e-12 * scale)


def _enumerated_sign_flip_p(d):
    # every one of the 2**k sign patterns, the statistic |sum(s * d)| as a matrix product
    k = d.shape[1]
    signs = 1 - 2 * ((np.arange(2**k)[:, None] >> np.arange(k)) & 1)
    stats = np.abs(d @ signs.T)
    threshold = np.abs(d.sum(-1)) - _resample.TIE_RTOL * np.abs(d).sum(-1)
    return (stats >= threshold[:, None]).mean(-1)


@pytest.mark.parametrize("kind", ["normal", "lattice", "outlier", "constant", "ranks"])
@pytest.mark.parametrize("k", [2, 3, 8, 11, 14])
def test_sign_flip_meet_in_the_middle_matches_enumeration(kind, k):
    # the kernel counts patterns from two sorted halves; ties (lattice deltas, signed
    # ranks, zeros) must fall on the same side as in the plain enumeration
    rng = np.random.default_rng(10 * k + len(kind))
    if kind == "ranks":
        d = rng.choice([-1.0, 1.0], (60, k)) * np.arange(1, k + 1) * (rng.random((60, k)) > 0.1)
    else:
        d = _data(kind, k, rng)
    p = _resample.sign_flip_pvalue(d, None)
    np.testing.assert_array_equal(p, _enumerated_sign_flip_p(d))


@pytest.mark.parametrize("k", [3, 9])
def test_threads_do_not_change_the_interval(k):
    # The parallel kernel splits the batch into parts of whole groups of four: every
    # experiment must come out bit for bit as the serial kernel computes it.
    import protocols

    d = np.random.default_rng(k).normal(0.01, 0.005, (301, k))
    with protocols.kernel_threads(1):
        serial = _resample.bca_interval(d, 0.05, np.random.default_rng(4), n_resamples=4000)
    for parts in (2, 3):
        args = (np.sort(d, axis=-1), _resample._ordered_counts(
            np.random.default_rng(4).integers(0, k, size=(4000, k)), k), d.mean(-1),
            _resample.TIE_RTOL * np.abs(d).max(-1), _resample._acceleration(d),
            _resample._z0_of_twice_share(4000), float(special.ndtri(0.025)))
        low, high = _resample._kernels().bca_offsets_parallel(*args, parts)
        theta = d.mean(-1)
        np.testing.assert_array_equal(theta + low, serial[0])
        np.testing.assert_array_equal(theta + high, serial[1])


@pytest.mark.parametrize("kind", ["normal", "lattice", "outlier"])
def test_resample_layout_changes_only_the_speed(kind):
    # The ranked block layout only decides which replicates the kernel reads first: the
    # same resamples in their drawn order must give the same interval, bit for bit.
    k, n_resamples = 9, 4000
    d = np.sort(_data(kind, k, np.random.default_rng(5)), axis=-1)
    idx = np.random.default_rng(6).integers(0, k, size=(n_resamples, k))
    kernels = _resample._kernels()
    ranked = _resample._ordered_counts(idx, k)
    drawn = kernels.layout_counts(idx, np.arange(n_resamples), k)  # no ranking
    plain = np.zeros((k, n_resamples))
    for b in range(n_resamples):
        np.add.at(plain[:, b], idx[b], 1.0)
    theta, tol, a = _estimate_tolerance_acceleration(d)
    rest = (theta, tol, a, _resample._z0_of_twice_share(n_resamples),
            float(special.ndtri(0.025)))
    expected = kernels.bca_offsets(d, ranked, *rest)
    for counts in (drawn, plain):
        got = kernels.bca_offsets(d, counts, *rest)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
