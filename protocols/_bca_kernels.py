"""Compiled kernels of the paper's protocol: the BCa interval and the exact sign flip.

**BCa with random resamples** (:func:`bca_offsets`). Per experiment the interval needs the
share of the ``B`` replicate means below the estimate (the bias correction ``z0``) and two
interpolated order statistics at the BCa levels. Sorting every experiment's replicates, as
a vectorized numpy version must, costs ``O(B log B)`` per experiment. This kernel finds the
same order statistics without a sort, and reads most replicates once:

1. the fill forms the replicate means of four experiments at once, seeds four at a time
   (:func:`_fill_group`);
2. the resamples arrive ranked by how low they lean (see ``_resample._ordered_counts``),
   laid out so that block q (BLOCK strided positions) holds ranked resamples
   ``q * BLOCK ..``: the lowest and highest replicates of every experiment then sit in few
   blocks. One vectorized pass gives each block's range and the counts below and tied with
   the estimate (:func:`_ranges_below_ties`);
3. from ``z0`` and the acceleration come the BCa levels and the four wanted ranks; a
   Cornish-Fisher guess of each end, moved outward by a margin, marks the tail bins of the
   equal-width histogram over ``[min(d), max(d)]`` (every resample mean lies there), and
   only blocks reaching them are histogrammed (:func:`_tail_histogram`);
4. the replicates of the bins holding the wanted ranks are read from the blocks that reach
   them, and sorted (a handful).

A guess that misses shows in the counts, and that experiment falls back to the histogram
of every replicate (:func:`_histogram`), never to a wrong value: the results are exactly
the order statistics a full sort gives, whatever the data (ties, a lattice of values or an
outlier only make bins fuller). :func:`bca_offsets_parallel` runs parts of a batch on
several threads; every experiment comes out as in the serial kernel.

**The ideal bootstrap** (:func:`weighted_share`, :func:`weighted_quantile_offsets`): every
resample multiset with its probability, through a weighted histogram.

**The exact sign flip** (:func:`sign_flip_counts`): the 2**k patterns counted by meeting in
the middle, in O(2**(k/2)) per experiment.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np

from evalcal_core.resources import ensure_numba_cache

# A read-only install and HOME leave numba nowhere to cache: give it a temporary folder.
ensure_numba_cache(os.path.dirname(__file__))
import numba  # noqa: E402


def _compiled_before() -> bool:
    """Whether numba's on-disk cache already holds these kernels (index files ``*.nbi``)."""
    here = Path(__file__).resolve()
    folder = os.environ.get("NUMBA_CACHE_DIR")
    roots = [Path(folder)] if folder else [here.parent / "__pycache__"]
    return any(any(root.rglob(f"{here.stem}.*.nbi")) for root in roots if root.is_dir())


if sys.stderr is not None and sys.stderr.isatty() and not _compiled_before():
    # The first use on a machine compiles for 10-20 s: tell the person at the terminal
    # instead of stalling silently (scripts and pipes get no extra stderr line).
    print("evalcal: compiling the BCa kernels once for this machine (10-20 s; cached "
          "afterwards)", file=sys.stderr)

#: histogram bins per experiment; at the 2.5% tail of B = 10,000 a bin holds ~10 replicates
MAX_BINS = 1024

#: replicates per block (see _ranges_below_ties); a block is read only if it reaches a tail
BLOCK = 32

#: how far beyond the guess of each BCa end its tail histogram reaches: this many SDs of
#: the end's rank among B random replicates, sqrt(B q (1 - q)), plus TAIL_MARGIN_SHARE of
#: B for the error of the guess itself
TAIL_MARGIN_SDS = 5.0
TAIL_MARGIN_SHARE = 0.01

#: fewer replicates get fewer bins (about this many replicates per bin), so that the
#: per-experiment cost of clearing and scanning the histogram stays below that of binning
REPLICATES_PER_BIN = 8


@numba.njit(cache=True, nogil=True)
def _n_bins(n_replicates):
    return max(1, min(MAX_BINS, n_replicates // REPLICATES_PER_BIN))

_SQRT_HALF = math.sqrt(0.5)


@numba.njit(cache=True, nogil=True)
def _fill_offsets(d, counts_t, theta, out):
    # Replicate means minus the estimate. Seed-outer order lets the compiler vectorize
    # over resamples; both uses of a replicate read this one buffer, so they agree exactly.
    k, n_b = counts_t.shape
    for b in range(n_b):
        out[b] = -theta
    for j in range(k):
        dj = d[j] / k
        row = counts_t[j]
        for b in range(n_b):
            out[b] += row[b] * dj


@numba.njit(cache=True, nogil=True)
def _ndtr(x):
    return 0.5 * math.erfc(-x * _SQRT_HALF)


@numba.njit(cache=True, nogil=True)
def _bin(buf, d, theta, bins, n_bins):
    # n_bins equal bins over [min(d), max(d)] - theta, which holds every resample mean
    lo, scale = _bin_scale(d, theta, n_bins)
    top = n_bins - 0.5
    for b in range(buf.size):
        bins[b] = _bin_of(buf[b], lo, scale, top)


@numba.njit(cache=True, nogil=True)
def _histogram(bins, weights, hist4, hist):
    # Total weight per bin. Four interleaved partial histograms, so that consecutive
    # replicates in the same bin do not wait on each other's store.
    hist4[:] = 0
    n = bins.size
    stop = n - n % 4
    for b in range(0, stop, 4):
        hist4[0, bins[b]] += weights[b]
        hist4[1, bins[b + 1]] += weights[b + 1]
        hist4[2, bins[b + 2]] += weights[b + 2]
        hist4[3, bins[b + 3]] += weights[b + 3]
    for b in range(stop, n):
        hist4[0, bins[b]] += weights[b]
    for j in range(hist.size):
        hist[j] = (hist4[0, j] + hist4[1, j]) + (hist4[2, j] + hist4[3, j])


@numba.njit(cache=True, nogil=True)
def _ratio(num, den):
    # num / den with numpy's IEEE result for den == 0 (numba would raise)
    if den == 0.0:
        return math.copysign(math.inf, num) if num != 0.0 else math.nan
    return num / den


@numba.njit(cache=True, nogil=True)
def _fill_group(flat, i0, counts_t, theta, dd, out):
    # Replicate means minus the estimate of GROUP consecutive experiments (rows past the
    # batch are zeros). Like a matrix product's register tile, each resample's seed counts
    # are loaded once for the whole group and seeds are taken four at a time, so the
    # buffers are read and written once per four seeds instead of once per seed. The
    # arithmetic of one experiment does not depend on its neighbours in the group.
    m, k = flat.shape
    n_b = counts_t.shape[1]
    for e in range(4):
        i = i0 + e
        t0 = -theta[i] if i < m else 0.0
        for j in range(k):
            dd[e, j] = flat[i, j] / k if i < m else 0.0
        row = out[e]
        for b in range(n_b):
            row[b] = t0
    o0 = out[0]
    o1 = out[1]
    o2 = out[2]
    o3 = out[3]
    j = 0
    while j + 4 <= k:
        r0 = counts_t[j]
        r1 = counts_t[j + 1]
        r2 = counts_t[j + 2]
        r3 = counts_t[j + 3]
        a0, a1, a2, a3 = dd[0, j], dd[0, j + 1], dd[0, j + 2], dd[0, j + 3]
        b0, b1, b2, b3 = dd[1, j], dd[1, j + 1], dd[1, j + 2], dd[1, j + 3]
        e0, e1, e2, e3 = dd[2, j], dd[2, j + 1], dd[2, j + 2], dd[2, j + 3]
        f0, f1, f2, f3 = dd[3, j], dd[3, j + 1], dd[3, j + 2], dd[3, j + 3]
        for b in range(n_b):
            c0 = r0[b]
            c1 = r1[b]
            c2 = r2[b]
            c3 = r3[b]
            o0[b] += (c0 * a0 + c1 * a1) + (c2 * a2 + c3 * a3)
            o1[b] += (c0 * b0 + c1 * b1) + (c2 * b2 + c3 * b3)
            o2[b] += (c0 * e0 + c1 * e1) + (c2 * e2 + c3 * e3)
            o3[b] += (c0 * f0 + c1 * f1) + (c2 * f2 + c3 * f3)
        j += 4
    if j + 2 <= k:
        r0 = counts_t[j]
        r1 = counts_t[j + 1]
        a0, a1, b0, b1 = dd[0, j], dd[0, j + 1], dd[1, j], dd[1, j + 1]
        e0, e1, f0, f1 = dd[2, j], dd[2, j + 1], dd[3, j], dd[3, j + 1]
        for b in range(n_b):
            c0 = r0[b]
            c1 = r1[b]
            o0[b] += c0 * a0 + c1 * a1
            o1[b] += c0 * b0 + c1 * b1
            o2[b] += c0 * e0 + c1 * e1
            o3[b] += c0 * f0 + c1 * f1
        j += 2
    if j < k:
        r0 = counts_t[j]
        a0, b0, e0, f0 = dd[0, j], dd[1, j], dd[2, j], dd[3, j]
        for b in range(n_b):
            c0 = r0[b]
            o0[b] += c0 * a0
            o1[b] += c0 * b0
            o2[b] += c0 * e0
            o3[b] += c0 * f0


@numba.njit(cache=True, nogil=True)
def _moments(d):
    # SD, skewness and excess kurtosis of the mean of k seeds drawn from d with replacement
    k = d.size
    mu = d.mean()
    m2 = 0.0
    m3 = 0.0
    m4 = 0.0
    for j in range(k):
        u = d[j] - mu
        m2 += u * u
        m3 += u * u * u
        m4 += u * u * u * u
    m2 /= k
    m3 /= k
    m4 /= k
    if not m2 > 0.0:
        return 0.0, 0.0, 0.0
    return math.sqrt(m2 / k), m3 / m2**1.5 / math.sqrt(k), (m4 / (m2 * m2) - 3.0) / k


@numba.njit(cache=True, nogil=True)
def _cornish_fisher(z, skew, kurt):
    # standardized quantile of a distribution with these cumulants at the normal quantile z
    return (z + (z * z - 1.0) * skew / 6.0 + (z**3 - 3.0 * z) * kurt / 24.0
            - (2.0 * z**3 - 5.0 * z) * skew * skew / 36.0)


@numba.njit(cache=True, nogil=True)
def _bin_scale(d, theta, n_bins):
    # lower edge and bins per unit of _bin's equal bins over [min(d), max(d)] - theta
    lo = d.min() - theta
    width = d.max() - theta - lo
    return lo, (n_bins / width if width > 0.0 else 0.0)


@numba.njit(cache=True, nogil=True)
def _bin_of(v, lo, scale, top):
    # The bin of one replicate (monotone in v). Clamped in floating point first (rounding
    # may step outside), so that a loop of it vectorizes.
    return np.int32(min(max((v - lo) * scale, 0.0), top))


@numba.njit(cache=True, nogil=True)
def _ranges_below_ties(buf, n_blocks, t, block_min, block_max):
    """Each block's smallest and largest replicate, and the counts below and tied with 0.

    Block q holds the positions ``l * n_blocks + q`` (``l`` < BLOCK), so its range is the
    element-wise minimum and maximum of BLOCK rows, and one vectorized pass gives both
    the ranges and the two counts of the bias correction. Positions past the last whole
    block belong to no block; they are counted here and always read by the others.
    """
    n_below = 0
    n_tie = 0
    for q in range(n_blocks):
        block_min[q] = buf[q]
        block_max[q] = buf[q]
    for lane in range(BLOCK):
        row = buf[lane * n_blocks:(lane + 1) * n_blocks]
        for q in range(n_blocks):
            v = row[q]
            block_min[q] = v if v < block_min[q] else block_min[q]
            block_max[q] = v if v > block_max[q] else block_max[q]
            n_below += v < -t
            n_tie += abs(v) <= t
    for b in range(BLOCK * n_blocks, buf.size):
        v = buf[b]
        n_below += v < -t
        n_tie += abs(v) <= t
    return n_below, n_tie


@numba.njit(cache=True, nogil=True)
def _block_bins(block_min, block_max, lo, scale, n_bins, bin_min, bin_max):
    # the lowest and highest bin of every block (bins are monotone in the value)
    top = n_bins - 0.5
    for q in range(block_min.size):
        bin_min[q] = _bin_of(block_min[q], lo, scale, top)
        bin_max[q] = _bin_of(block_max[q], lo, scale, top)


@numba.njit(cache=True, nogil=True)
def _tail_histogram(buf, bin_min, bin_max, lo, scale, cut_low, cut_high, hist, bins,
                    blocks):
    """Counts of bins <= cut_low and >= cut_high, exact, reading only blocks that reach
    a tail (bins in between get partial counts and must not be used).

    The bins of the replicates read are kept in ``bins`` and the blocks read listed in
    ``blocks`` (the partial block past the last whole one, index ``n_blocks``, always
    is); returns how many are listed.
    """
    n_blocks = bin_min.size
    top = hist.size - 0.5
    hist[:] = 0
    n_listed = 0
    for q in range(n_blocks):
        if bin_min[q] <= cut_low or bin_max[q] >= cut_high:
            blocks[n_listed] = q
            n_listed += 1
            for lane in range(BLOCK):
                b = lane * n_blocks + q
                j = _bin_of(buf[b], lo, scale, top)
                bins[b] = j
                hist[j] += 1
    blocks[n_listed] = n_blocks
    n_listed += 1
    for b in range(BLOCK * n_blocks, buf.size):
        j = _bin_of(buf[b], lo, scale, top)
        bins[b] = j
        hist[j] += 1
    return n_listed


@numba.njit(cache=True, nogil=True)
def _listed_bin_values(buf, bins, bin_min, bin_max, blocks, n_listed, target, cand):
    # the replicates of one bin, sorted, from the listed blocks whose bins reach it
    n_blocks = bin_min.size
    n = 0
    for i in range(n_listed):
        q = blocks[i]
        if q < n_blocks:
            if not bin_min[q] <= target <= bin_max[q]:
                continue
            first, stop, step = q, BLOCK * n_blocks, n_blocks
        else:
            first, stop, step = BLOCK * n_blocks, buf.size, 1
        for b in range(first, stop, step):
            if bins[b] == target:
                cand[n] = buf[b]
                n += 1
    return np.sort(cand[:n])


@numba.njit(cache=True, nogil=True)
def _tail_cuts(d, zq, n_b, lo, scale, n_bins):
    # Bins beyond which the two BCa ends lie with near certainty: a Cornish-Fisher guess
    # of each end from the data's moments, moved outward by a margin in ranks. A wrong
    # guess is caught by the counts and costs a full histogram, never a wrong value.
    sd, skew, kurt = _moments(d)
    if not (sd > 0.0 and math.isfinite(zq[0]) and math.isfinite(zq[1])):
        return -1, -1
    cuts = np.empty(2, np.int64)
    for side in range(2):
        z = min(max(zq[side], -8.0), 8.0)
        guess = sd * _cornish_fisher(z, skew, kurt)
        density = max(math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi), 1e-12)
        q = _ndtr(z)
        ranks = TAIL_MARGIN_SDS * math.sqrt(n_b * q * (1.0 - q)) + TAIL_MARGIN_SHARE * n_b
        margin = ranks * sd / (n_b * density)
        x = guess + (margin if side == 0 else -margin)
        cuts[side] = _bin_of(x, lo, scale, n_bins - 0.5) if math.isfinite(x) else -1
    return cuts[0], cuts[1]


@numba.njit(cache=True, nogil=True)
def _locate(hist, first, stop, start, wanted, w0, targets, starts):
    # For wanted[w0] and wanted[w0 + 1]: the bin among first .. stop - 1 that holds that
    # sorted position, and the position its bin starts at, given that bin `first` starts
    # at `start`. False if a wanted position lies outside those bins.
    for w in range(w0, w0 + 2):
        r = wanted[w]
        pos = start
        j = first
        while j < stop and pos + hist[j] <= r:
            pos += hist[j]
            j += 1
        if j == stop or r < start:
            return False
        targets[w] = j
        starts[w] = pos
    return True


@numba.njit(cache=True, nogil=True)
def layout_counts(idx, ranked, k):
    """Seed counts of the resamples, laid out for :func:`bca_offsets`.

    Parameters
    ----------
    idx : ndarray of int64, shape (B, k)
        The seeds (positions in the sorted deltas) each resample draws.
    ranked : ndarray of int64, shape (B,)
        The resamples in the order their blocks should hold them.
    k : int

    Returns
    -------
    ndarray of float64, shape (k, B)
        ``counts_t[j, p]``: how often the j-th smallest delta is in the resample at
        position p, where ranked resample r sits at ``(r % BLOCK) * n_blocks + r // BLOCK``
        while r falls in a whole block (block ``r // BLOCK``), and at r after them.
    """
    n_b = idx.shape[0]
    n_blocks = n_b // BLOCK
    whole = BLOCK * n_blocks
    counts_t = np.zeros((k, n_b))
    for r in range(n_b):
        b = ranked[r]
        p = (r % BLOCK) * n_blocks + r // BLOCK if r < whole else r
        for i in range(idx.shape[1]):
            counts_t[idx[b, i], p] += 1.0
    return counts_t


@numba.njit(cache=True, nogil=True)
def bca_offsets(flat, counts_t, theta, tol, accel, z0_of_twice_share, z_alpha):
    """BCa interval ends of each experiment, relative to its estimate.

    Parameters
    ----------
    flat : ndarray of float64, shape (m, k)
        Per-seed deltas of ``m`` experiments (each row in ascending order, for speed).
    counts_t : ndarray of float64, shape (k, B)
        How often delta j appears in each of the ``B`` resamples shared by the batch. Any
        order of the resamples gives the same result; the ranked layout of
        :func:`layout_counts` (with sorted rows of ``flat``) makes it fast.
    theta, tol, accel : ndarray of float64, shape (m,)
        Estimate (mean delta), tie tolerance and jackknife acceleration per experiment.
    z0_of_twice_share : ndarray of float64, shape (2 B + 1,)
        ``z0`` as a function of ``2 * below + ties`` (the share below, ties counted half,
        times ``2 B``), already clipped and transformed by ``ndtri`` in numpy.
    z_alpha : float
        ``ndtri(alpha / 2)``.

    Returns
    -------
    low, high : ndarray of float64, shape (m,)
        Interval ends minus ``theta``.
    """
    m, k = flat.shape
    n_b = counts_t.shape[1]
    low = np.empty(m)
    high = np.empty(m)
    group = np.empty((4, n_b))
    dd = np.empty((4, k))
    bins = np.empty(n_b, np.int32)
    n_bins = _n_bins(n_b)
    hist = np.empty(n_bins, np.int64)
    hist4 = np.empty((4, n_bins), np.int64)
    ones = np.ones(n_b, np.int64)  # every random resample counts once
    cand0 = np.empty(n_b)
    wanted = np.empty(4, np.int64)
    h = np.empty(2)
    n_blocks = n_b // BLOCK
    block_min = np.empty(n_blocks)
    block_max = np.empty(n_blocks)
    bin_min = np.empty(n_blocks, np.int32)
    bin_max = np.empty(n_blocks, np.int32)
    blocks = np.empty(n_blocks + 1, np.int64)
    zq = np.empty(2)
    starts = np.empty(4, np.int64)
    targets = np.empty(4, np.int64)
    values = np.empty(4)
    for i0 in range(0, m, 4):
        _fill_group(flat, i0, counts_t, theta, dd, group)
        for i in range(i0, min(i0 + 4, m)):
            buf = group[i - i0]
            n_below, n_tie = _ranges_below_ties(buf, n_blocks, tol[i], block_min, block_max)
            z0 = z0_of_twice_share[2 * n_below + n_tie]
            a = accel[i]
            for side in range(2):
                # the levels of _resample._bca_levels, inline: z0 is only known in here
                num = z0 + (z_alpha if side == 0 else -z_alpha)
                zq[side] = z0 + _ratio(num, 1.0 - a * num)
                q = _ndtr(zq[side])
                h[side] = min(max(q, 0.0), 1.0) * (n_b - 1)
                base = int(math.floor(h[side]))
                wanted[2 * side] = base
                wanted[2 * side + 1] = min(base + 1, n_b - 1)
            # Which bin holds each wanted rank, the sorted position its bin starts at, and
            # the bin's replicates. First from the two tails alone: the resamples are
            # ordered so that the tails fill few blocks (see _resample._ordered_counts).
            lo, scale = _bin_scale(flat[i], theta[i], n_bins)
            _block_bins(block_min, block_max, lo, scale, n_bins, bin_min, bin_max)
            cut_low, cut_high = _tail_cuts(flat[i], zq, n_b, lo, scale, n_bins)
            found = False
            if 0 <= cut_low < cut_high:
                n_listed = _tail_histogram(buf, bin_min, bin_max, lo, scale, cut_low,
                                           cut_high, hist, bins, blocks)
                n_top = 0
                for j in range(cut_high, n_bins):
                    n_top += hist[j]
                found = (_locate(hist, 0, cut_low + 1, 0, wanted, 0, targets, starts)
                         and _locate(hist, cut_high, n_bins, n_b - n_top, wanted, 2,
                                     targets, starts))
            if not found:  # a guess was off, or no spread: the histogram of every replicate
                _bin(buf, flat[i], theta[i], bins, n_bins)
                _histogram(bins, ones, hist4, hist)
                _locate(hist, 0, n_bins, 0, wanted, 0, targets, starts)
                _locate(hist, 0, n_bins, 0, wanted, 2, targets, starts)
                for q in range(n_blocks + 1):
                    blocks[q] = q
                n_listed = n_blocks + 1
            previous = -1
            chosen = cand0[:0]
            for w in range(4):
                if targets[w] != previous:
                    chosen = _listed_bin_values(buf, bins, bin_min, bin_max, blocks, n_listed,
                                                targets[w], cand0)
                    previous = targets[w]
                values[w] = chosen[wanted[w] - starts[w]]
            for side in range(2):
                frac = h[side] - math.floor(h[side])
                v0 = values[2 * side]
                v1 = values[2 * side + 1]
                if side == 0:
                    low[i] = v0 + frac * (v1 - v0)
                else:
                    high[i] = v0 + frac * (v1 - v0)
    return low, high


@numba.njit(cache=True, nogil=True, parallel=True)
def bca_offsets_parallel(flat, counts_t, theta, tol, accel, z0_of_twice_share, z_alpha,
                         n_parts):
    """:func:`bca_offsets` on ``n_parts`` contiguous parts of the batch, in parallel.

    Every experiment is computed exactly as in the serial kernel (its replicates do not
    depend on the others), so the result does not depend on ``n_parts`` or the threads.
    """
    m = flat.shape[0]
    low = np.empty(m)
    high = np.empty(m)
    # parts are whole groups of four experiments, as the serial kernel forms them
    step = ((m + n_parts - 1) // n_parts + 3) // 4 * 4
    for part in numba.prange(n_parts):
        start = part * step
        stop = min(m, start + step)
        if start < stop:
            part_low, part_high = bca_offsets(flat[start:stop], counts_t, theta[start:stop],
                                              tol[start:stop], accel[start:stop],
                                              z0_of_twice_share, z_alpha)
            low[start:stop] = part_low
            high[start:stop] = part_high
    return low, high


# --------------------------------------------------------------------------------------------
# The ideal bootstrap: every resample multiset, weighted by its probability


@numba.njit(cache=True, nogil=True)
def weighted_share(flat, counts_t, weights, theta, tol):
    """Probability of a replicate below the estimate, ties counted half, per experiment.

    Parameters
    ----------
    flat : ndarray of float64, shape (m, k)
    counts_t : ndarray of float32, shape (k, M)
        Seed counts of each of the ``M`` resample multisets.
    weights : ndarray of float64, shape (M,)
        Their multinomial probabilities.
    theta, tol : ndarray of float64, shape (m,)

    Returns
    -------
    ndarray of float64, shape (m,)
    """
    m = flat.shape[0]
    n_b = counts_t.shape[1]
    share = np.empty(m)
    buf = np.empty(n_b)
    for i in range(m):
        _fill_offsets(flat[i], counts_t, theta[i], buf)
        t = tol[i]
        s = 0.0
        for b in range(n_b):
            v = buf[b]
            s += weights[b] * ((v < -t) + 0.5 * (abs(v) <= t))
        share[i] = s
    return share


@numba.njit(cache=True, nogil=True)
def weighted_quantile_offsets(flat, counts_t, weights, theta, levels):
    """Generalized inverse of each experiment's replicate distribution at given levels.

    The smallest centred replicate whose cumulative probability reaches ``level - 1e-12``
    (the slack absorbs rounding in the sums of probabilities); the largest if none does.
    A NaN level gives the smallest replicate, as comparisons with NaN are false.

    Parameters
    ----------
    flat, counts_t, weights, theta
        As for :func:`weighted_share`.
    levels : ndarray of float64, shape (m, r)

    Returns
    -------
    ndarray of float64, shape (m, r)
    """
    m, n_r = levels.shape
    n_b = counts_t.shape[1]
    out = np.empty((m, n_r))
    buf = np.empty(n_b)
    bins = np.empty(n_b, np.int32)
    cand = np.empty(n_b)
    cand_w = np.empty(n_b)
    n_bins = _n_bins(n_b)
    hist4 = np.empty((4, n_bins))
    hist = np.empty(n_bins)
    for i in range(m):
        _fill_offsets(flat[i], counts_t, theta[i], buf)
        _bin(buf, flat[i], theta[i], bins, n_bins)
        _histogram(bins, weights, hist4, hist)
        for r in range(n_r):
            threshold = min(max(levels[i, r], 0.0), 1.0) - 1e-12
            # first non-empty bin whose cumulative probability reaches the threshold
            below = 0.0
            target = -1
            last = -1
            for j in range(n_bins):
                if hist[j] > 0.0:
                    last = j
                    if not (below + hist[j] < threshold):
                        target = j
                        break
                    below += hist[j]
            if target < 0:  # rounding left the total short of the level: the largest value
                target = last
                below -= hist[last]
            n_c = 0
            for b in range(n_b):
                if bins[b] == target:
                    cand[n_c] = buf[b]
                    cand_w[n_c] = weights[b]
                    n_c += 1
            order = np.argsort(cand[:n_c])
            value = cand[order[n_c - 1]]
            cdf = below
            for o in order:
                cdf += cand_w[o]
                if not (cdf < threshold):
                    value = cand[o]
                    break
            out[i, r] = value
    return out


# --------------------------------------------------------------------------------------------
# The exact sign-flip test: all 2**k sign patterns, counted by meeting in the middle


@numba.njit(cache=True, nogil=True)
def _sorted_signed_sums(d, first, stop, out, spare):
    # The 2**(stop - first) sums of +-d[first:stop], in ascending order: adding one more
    # seed x to a sorted list S gives the two sorted lists S - |x| and S + |x|, merged in
    # one pass, so no sort is needed.
    out[0] = 0.0
    n = 1
    for j in range(first, stop):
        x = abs(d[j])
        a = 0
        b = 0
        for i in range(2 * n):
            if b >= n or (a < n and out[a] - x <= out[b] + x):
                spare[i] = out[a] - x
                a += 1
            else:
                spare[i] = out[b] + x
                b += 1
        n *= 2
        out[:n] = spare[:n]
    return n


@numba.njit(cache=True, nogil=True)
def sign_flip_counts(flat, threshold):
    """How many of the ``2**k`` sign patterns reach ``|sum(s * d)| >= threshold``.

    The seeds are split in two halves; the sums of each half's ``2**(k/2)`` patterns are
    built in ascending order, and for every sum x of the first half the sums y of the second with
    ``x + y >= threshold`` are counted with a pointer that only moves one way (rounding
    is monotone, so the comparison is the one the full enumeration makes). Patterns come
    in pairs (s, -s), so the count of ``x + y <= -threshold`` is the same one. That is
    O(2**(k/2) k) per experiment instead of O(2**k k).

    Parameters
    ----------
    flat : ndarray of float64, shape (m, k)
    threshold : ndarray of float64, shape (m,)
        A threshold <= 0 is reached by every pattern.

    Returns
    -------
    ndarray of int64, shape (m,)
    """
    m, k = flat.shape
    half = k // 2
    xs = np.empty(2 ** half)
    ys = np.empty(2 ** (k - half))
    spare = np.empty(2 ** (k - half))
    out = np.empty(m, np.int64)
    for i in range(m):
        t = threshold[i]
        if not t > 0.0:
            out[i] = 2**k
            continue
        n_x = _sorted_signed_sums(flat[i], 0, half, xs, spare)
        n_y = _sorted_signed_sums(flat[i], half, k, ys, spare)
        xs_sorted = xs
        ys_sorted = ys
        # for x ascending, the y with x + y >= t form a growing suffix of ys_sorted
        count = 0
        p = n_y
        for a in range(n_x):
            x = xs_sorted[a]
            while p > 0 and x + ys_sorted[p - 1] >= t:
                p -= 1
            count += n_y - p
        out[i] = 2 * count
    return out



@numba.njit(cache=True, nogil=True)
def random_sign_flip_counts(flat, threshold, words):
    """How many of the random sign patterns ``words`` reach ``|sum(s * d)| >= threshold``.

    Pattern ``p`` of experiment ``i`` gives seed ``j`` the sign + where bit ``j % 64`` of
    ``words[i, p, j // 64]`` is set, - otherwise: the bits of a uniform 64-bit draw are
    independent fair coins, so a pattern is uniform over the ``2**k``, as a draw of ``k``
    signs one at a time is, at one draw per 64 seeds.

    ``sum(s * d) = 2 * sum(d[plus]) - sum(d)``, and the sum over the plus seeds is read a
    byte (8 seeds) at a time from a table of the 256 subset sums of each group of 8: a
    pattern costs k / 8 look-ups. Sums in another order differ by rounding only, far inside
    the tie tolerance the threshold carries (``TIE_RTOL`` of ``sum |d|``).

    Parameters
    ----------
    flat : ndarray of float64, shape (m, k)
    threshold : ndarray of float64, shape (m,)
    words : ndarray of uint64, shape (m, n_patterns, ceil(k / 64))

    Returns
    -------
    ndarray of int64, shape (m,)
    """
    m, k = flat.shape
    n_patterns = words.shape[1]
    groups = (k + 7) // 8
    table = np.zeros((groups, 256))
    out = np.empty(m, np.int64)
    for i in range(m):
        d = flat[i]
        total = 0.0
        for j in range(k):
            total += d[j]
        for g in range(groups):
            row = table[g]
            row[0] = 0.0
            for b in range(1, 256):
                low = b & (b - 1)               # b without its lowest set bit
                j = g * 8
                bit = b ^ low
                while bit > 1:
                    bit >>= 1
                    j += 1
                row[b] = row[low] + (d[j] if j < k else 0.0)
        t = threshold[i]
        count = 0
        for p in range(n_patterns):
            s = 0.0
            for g in range(groups):
                byte = (words[i, p, g >> 3] >> np.uint64(8 * (g & 7))) & np.uint64(255)
                s += table[g, byte]
            if abs(2.0 * s - total) >= t:
                count += 1
        out[i] = count
    return out
