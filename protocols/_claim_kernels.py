"""Compiled kernel of the bounded-support score statistic (:func:`protocols.claims.
mean_score_claim`).

The statistic at a null ``d0`` needs the tilt ``t`` that reweights the observed deltas to
mean ``d0``: a bisection of 50 steps, inside the 50-step bisections that invert the test
into an interval. In numpy each of the 2,500 inner steps is several whole-array operations,
so one experiment (the command's case: a user's file) spent 1.5 ms per statistic, most of
it in numpy's per-call overhead; the compiled loop does the same bisection per experiment.
The steps, the bracket and the weights are those of the numpy version it replaced; sums run
in index order, so a result may differ from numpy's pairwise sums in the last bits.
"""

from __future__ import annotations

import os

import numpy as np

from evalcal_core.resources import ensure_numba_cache

# A read-only install and HOME leave numba nowhere to cache: give it a temporary folder.
ensure_numba_cache(os.path.dirname(__file__))
import numba  # noqa: E402


# error_model numpy: where d0 = +-1 the bracket's end divides by zero, to +-inf (as numpy)
@numba.njit(cache=True, nogil=True, error_model="numpy")
def _z_rows(values, shared, weights, est, d0, steps, out):
    rows, size = weights.shape
    for r in range(rows):
        vals = values[0] if shared else values[r]
        w = weights[r]
        null = d0[r]
        low = -1.0 / (1.0 - null)
        high = 1.0 / (1.0 + null)
        # g(t) = sum_i w_i u_i / (1 + t u_i) decreases in t; its root tilts the weights
        # to mean d0. Outside (low, high) a weight on -1 or +1 would turn negative.
        for _ in range(steps):
            mid = 0.5 * (low + high)
            g = 0.0
            for i in range(size):
                if w[i] > 0.0:
                    u = vals[i] - null
                    g += w[i] * u / (1.0 + mid * u)
            if g > 0.0:
                low = mid
            else:
                high = mid
        t = 0.5 * (low + high)
        mass = 0.0
        var0 = 0.0
        for i in range(size):
            if w[i] > 0.0:
                u = vals[i] - null
                p = w[i] / (1.0 + t * u)
                mass += p
                var0 += p * u * u
        # Mass the reweighted data cannot carry goes to the bound whose multiplier
        # vanished: -1 when t is at its upper end (the null lies below the data), +1 at
        # the lower end.
        leftover = max(1.0 - mass, 0.0)
        bound = (-1.0 if t > 0.0 else 1.0) - null
        var0 += leftover * bound * bound
        num = est[r] - null
        # num == 0: the data sit at the null value (z = 0), also where the variance is 0
        out[r] = 0.0 if num == 0.0 else num / np.sqrt(var0)


def bounded_score_z(values, weights, est, d0, steps: int):
    """Score statistic / sqrt(n) for ``E d = d0`` over distributions on [-1, 1].

    Parameters
    ----------
    values : ndarray, shape (S,) or (..., S)
        Support points (deltas, fractions of the score's range): one row shared by the
        batch, or one per experiment.
    weights : ndarray, shape (..., S)
        Each experiment's weight on each support point (summing to 1).
    est : ndarray, shape (...)
        The mean delta of each experiment.
    d0 : ndarray, shape (...)
        The null mean delta of each experiment.
    steps : int
        Bisection steps of the tilt.

    Returns
    -------
    ndarray, shape (...)
    """
    shape = np.shape(est)
    size = weights.shape[-1]
    w = np.ascontiguousarray(weights, dtype=float).reshape(-1, size)
    shared = np.ndim(values) == 1
    v = np.ascontiguousarray(values, dtype=float).reshape(-1, size)
    e = np.ascontiguousarray(np.broadcast_to(est, shape), dtype=float).reshape(-1)
    null = np.ascontiguousarray(np.broadcast_to(d0, shape), dtype=float).reshape(-1)
    out = np.empty(e.size)
    _z_rows(v, shared, w, e, null, int(steps), out)
    return out.reshape(shape)
