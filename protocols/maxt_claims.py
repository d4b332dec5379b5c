"""Claims over many paired comparisons by one-sided max-T tests at their margins.

Superiority, non-inferiority and equivalence claims of ``m`` comparisons sharing their seeds
(or clusters), decided together so that the family-wise rate of false claims is at most
``alpha`` at the margins: each claim's null is shifted to its margin and the shifted deltas
are sign-flipped (the joint sign-flip law of :mod:`protocols.multiplicity`), one-sided.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.validate import check_int, fail

from ._decisions import SE_RTOL
from ._resample import _chunks, _flat
from .claims import _claim_iv
from .joint_null import _unit_weights_iv, signflip_patterns
from .multiplicity import _share_at_least, _threshold


@dataclass(frozen=True)
class MaxTClaim:
    """Claims of ``m`` comparisons decided by one-sided max-T tests at their margins.

    Attributes
    ----------
    p_shown : ndarray, shape (..., m)
        Step-down adjusted p of the claim's null (non-inferiority: ``delta <= -margin``;
        superiority: ``delta <= margin``; equivalence: the larger of its two one-sided
        nulls' adjusted p).
    p_refuted : ndarray, shape (..., m)
        Step-down adjusted p of the opposite one-sided null (the claim is refuted when it
        is rejected); for equivalence the smaller of the two "outside the margin" ones.
    verdict : ndarray of str, shape (..., m)
        ``"shown"`` where ``p_shown < alpha``, ``"refuted"`` where ``p_refuted < alpha``,
        else ``"inconclusive"``.
    exact : bool
        Whether every sign pattern was enumerated.
    """

    p_shown: np.ndarray
    p_refuted: np.ndarray
    verdict: np.ndarray
    exact: bool


def maxt_claim(deltas, claim: str, margin: float, alpha: float = 0.05, *,
               n_flips: int = 10_000, rng=None, max_exact_k: int = 16,
               unit_weights=None) -> MaxTClaim:
    """Claims over ``m`` paired comparisons by step-down one-sided max-T at the margins.

    Each claim's null sits at a known value (``delta = -margin`` for non-inferiority), so
    the deltas are *shifted* to it and flipped: at the margin the shifted per-seed vectors
    are jointly symmetric about 0, and the sign-flip law of their one-sided t statistics is
    exact whatever the other comparisons' effects (subset pivotality holds because each
    column depends on its own deltas and the shared signs only). Reading a claim off a
    simultaneous interval instead needs the pivots' law at the observed effects, which the
    uncentred flips do not give (false claims 6-10% at the margin with 3-5 seeds).

    Every one-sided hypothesis of the family (``m`` of them, ``2 m`` for equivalence: both
    sides of every comparison) enters one step-down max-T, so the family-wise rate of false
    claims is <= ``alpha`` at the margins. A claim at ``alpha`` needs
    ``2**-k < alpha``: one-sided p cannot go below ``2**-k`` (5 seeds at alpha = 0.05).

    Parameters
    ----------
    deltas : ndarray, shape (..., m, k)
        Per-unit deltas (``variant - base``) of each comparison, units paired across
        comparisons (seeds, or clusters' scaled sums).
    claim : {"superiority", "non_inferiority", "equivalence"}
    margin : float
        Metric units; > 0 (superiority: >= 0).
    alpha : float
        Level of the family of one-sided tests.
    n_flips, rng, max_exact_k, unit_weights
        As in :func:`paired_signflip_null`: each unit is shifted by ``margin`` times its
        weight (a cluster's scaled sum expects ``effect * n_g G / n``).

    Returns
    -------
    MaxTClaim
    """
    claim, margin, alpha = _claim_iv(claim, margin, alpha, "maxt_claim")
    d = np.asarray(deltas, dtype=float)
    if d.ndim < 2 or d.shape[-1] < 2:
        raise fail("deltas", "an array of shape (..., m, k) with k >= 2 units",
                   owner="maxt_claim", got=f"shape {d.shape}")
    n_flips = check_int(n_flips, "n_flips", low=1)
    k = d.shape[-1]
    m = d.shape[-2]
    rng = np.random.default_rng(rng)
    signs, weights = signflip_patterns(k, n_flips, rng, max_exact_k=max_exact_k,
                                       two_sided=False)
    w = _unit_weights_iv(unit_weights, k, "maxt_claim")
    # columns: "up" tests reject when delta > lower margin; "down" when delta < upper margin
    low_null = -margin if claim != "superiority" else margin
    cols = [d - low_null * w]             # claim side for superiority / non-inferiority
    if claim == "equivalence":
        cols.append(margin * w - d)       # delta < margin side
    shown_t = np.concatenate(cols, axis=-2)
    p_cols = _onesided_stepdown(shown_t, signs, weights)
    if claim == "equivalence":
        p_shown = np.maximum(p_cols[..., :m], p_cols[..., m:])
        # refuted: delta shown >= margin or shown <= -margin
        ref = np.concatenate([d - margin * w, -margin * w - d], axis=-2)
        p_ref_cols = _onesided_stepdown(ref, signs, weights)
        p_refuted = np.minimum(p_ref_cols[..., :m], p_ref_cols[..., m:])
    else:
        p_shown = p_cols
        p_refuted = _onesided_stepdown(low_null * w - d, signs, weights)
    with np.errstate(invalid="ignore"):
        verdict = np.where(p_shown < alpha, "shown",
                           np.where(p_refuted < alpha, "refuted", "inconclusive"))
    return MaxTClaim(p_shown, p_refuted, verdict, weights is not None)


def _onesided_stepdown(x, signs, weights):
    """Step-down max-T p of one-sided t tests ``mean(x) > 0`` per column of ``x`` (..., c, k).

    A column with no variance estimate (constant) gets t = +-inf by the sign of its mean,
    or 0 for a zero mean: it rejects only when every unit lies strictly on the claim's
    side, which the resampling law then accounts for.
    """
    k = x.shape[-1]
    obs = _onesided_t(x.mean(axis=-1), (x * x).sum(axis=-1), k)
    flat, batch_shape = _flat(x, 2)
    b, c, _ = flat.shape
    q = (flat * flat).sum(axis=-1)
    null = np.empty((b, signs.shape[0], c))
    for sl in _chunks(b, signs.shape[0] * c * 2):
        s = np.einsum("pk,bck->bpc", signs, flat[sl], optimize=True)
        null[sl] = _onesided_t(s / k, q[sl, None, :], k)
    obs_flat = obs.reshape(b, c)
    if weights is not None:
        null[:, 0, :] = obs_flat      # the identity pattern ties with the observed statistic
    order = np.argsort(-obs_flat, axis=-1, kind="stable")
    null_sorted = np.take_along_axis(null, order[:, None, :], axis=-1)
    succ = np.maximum.accumulate(null_sorted[..., ::-1], axis=-1)[..., ::-1]
    thr = np.take_along_axis(obs_flat, order, axis=-1)
    p = _share_at_least(succ, _threshold(thr), weights)
    p = np.minimum(np.maximum.accumulate(p, axis=-1), 1.0)
    out = np.empty_like(p)
    np.put_along_axis(out, order, p, axis=-1)
    return out.reshape(batch_shape + (c,))


def _onesided_t(mean, sumsq, k):
    # sd from sum(x**2) and the mean: flipping signs keeps sum(x**2)
    var = np.maximum(sumsq - k * mean * mean, 0.0) / (k - 1)
    se = np.sqrt(var / k)
    scale = np.sqrt(sumsq / k)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / se
    # rounding-level spread is no spread (protocols._decisions.SE_RTOL)
    flat = se <= SE_RTOL * np.maximum(np.abs(mean), scale)
    zero = np.abs(mean) <= SE_RTOL * scale
    return np.where(flat, np.where(zero, 0.0, np.sign(mean) * np.inf), t)
