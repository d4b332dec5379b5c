"""Joint null laws of many comparisons' studentized statistics, for max-T.

Each generator returns a :class:`JointNull`: the observed statistics and their joint
resampling (or asymptotic) law under the null, drawn with one shared resample for all
comparisons so that their correlation (a shared baseline, shared seeds) is kept.

* :func:`paired_signflip_null` — paired seeds: one sign pattern per resample flips the same
  seeds in every comparison's deltas. Exact (every pattern, with weights) up to
  ``max_exact_k`` seeds.
* :func:`unpaired_bootstrap_null` — unpaired seeds: a bootstrap of each arm's *centred*
  values (every arm resampled once per replicate, shared by all comparisons).
* :func:`gaussian_null` — many units (questions of a fixed model): the comparisons'
  z-statistics are asymptotically jointly normal with the correlation estimated from the
  units, so the null is drawn from that normal law (the ``multcomp`` approach).

:mod:`protocols.multiplicity` turns a joint null into adjusted p-values and simultaneous
intervals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.validate import check_choice, check_int, fail

from ._resample import CHUNK_ELEMENTS, _chunks, _flat
from .multiplicity import _comparisons_iv, contrast_matrix


@dataclass(frozen=True)
class JointNull:
    """Observed statistics of ``m`` comparisons and their joint resampling null.

    Attributes
    ----------
    estimate : ndarray, shape (..., m)
        Mean difference of each comparison (metric units, e.g. fraction).
    se : ndarray, shape (..., m)
        Its standard error (same units).
    df : ndarray or float
        Degrees of freedom of the marginal t reference (``inf`` for z).
    observed : ndarray, shape (..., m)
        Studentized statistics ``estimate / se``.
    null : ndarray, shape (..., P, m)
        The statistics under each of ``P`` shared resamples.
    weights : ndarray, shape (P,) or None
        Probabilities of the resamples when they are all enumerated (exact); ``None`` for
        ``P`` random resamples (Monte Carlo p ``(1 + count) / (1 + P)``).
    pivot : ndarray, shape (..., P, m) or None
        The statistics under the same resamples of the data *centred at their estimates*:
        the resampling law of the pivots ``(estimate - delta) / se`` at the observed effects,
        which simultaneous intervals need. ``None`` where :attr:`null` is that law already
        (a null drawn from centred data or from a normal law that does not depend on the
        effects).
    """

    estimate: np.ndarray
    se: np.ndarray
    df: np.ndarray | float
    observed: np.ndarray
    null: np.ndarray
    weights: np.ndarray | None
    pivot: np.ndarray | None = None

    @property
    def exact(self) -> bool:
        """Whether every resample was enumerated."""
        return self.weights is not None


def signflip_patterns(k: int, n_flips: int, rng, *, max_exact_k: int = 16,
                      two_sided: bool = True):
    """Sign patterns of ``k`` seeds: all of them (exact) or ``n_flips`` random ones.

    Two-sided, exact enumeration keeps the first seed's sign at +1: a pattern and its
    negation give the same ``|t|`` in every comparison, so the ``2**(k-1)`` patterns, each
    with weight ``2**-(k-1)``, give the exact two-sided law. One-sided statistics tell a
    pattern from its negation: all ``2**k`` patterns, weight ``2**-k``. Either way the
    first pattern is the identity.

    Returns
    -------
    signs : ndarray, shape (P, k) of +-1.0
    weights : ndarray, shape (P,) or None
    """
    if k <= max_exact_k:
        free = k - 1 if two_sided else k
        bits = (np.arange(2 ** free)[:, None] >> np.arange(free)) & 1
        signs = np.concatenate([np.ones((bits.shape[0], k - free)), 1.0 - 2.0 * bits], axis=1)
        return signs, np.full(signs.shape[0], 2.0 ** -free)
    return rng.choice(np.array([-1.0, 1.0]), size=(n_flips, k)), None


def paired_signflip_null(deltas, n_flips: int = 10_000, *, rng=None,
                         max_exact_k: int = 16, unit_weights=None) -> JointNull:
    """Joint sign-flip null of paired t statistics of ``m`` comparisons.

    Each resample flips the signs of the same seeds in every comparison's deltas, which
    keeps the dependence between comparisons (shared baseline, shared seed effects). Valid
    when each seed's vector of deltas is symmetric about 0 under the null jointly (e.g.
    multivariate normal seed effects).

    Parameters
    ----------
    deltas : ndarray, shape (..., m, k)
        Per-seed deltas of each comparison (e.g. from :func:`pair_deltas`).
    n_flips : int
        Random sign patterns when ``k > max_exact_k``.
    rng : numpy.random.Generator, optional
        Used only when ``k > max_exact_k``; one set of patterns for the whole batch.
    max_exact_k : int
        Up to this many seeds all ``2**(k-1)`` patterns are enumerated (exact p-values).
    unit_weights : ndarray, shape (k,), optional
        How each unit's expected delta scales with the comparison's effect, with mean 1:
        a unit that is a cluster's sum scaled by ``G / n`` has expectation ``effect *
        n_g G / n``, so its weight is ``n_g G / n``. Default: 1 for every unit (seeds).

    Returns
    -------
    JointNull
        ``observed`` is the paired t statistic of each comparison
        (``scipy.stats.ttest_rel``'s), ``df = k - 1``. ``pivot`` holds the same sign
        patterns applied to the deltas centred at their expectations at the estimate
        (``d - estimate * unit_weights``; see :func:`simultaneous_ci`).
    """
    d = np.asarray(deltas, dtype=float)
    if d.ndim < 2 or d.shape[-1] < 2:
        raise fail("deltas", "an array of shape (..., m, k) with k >= 2 seeds",
                   owner="paired_signflip_null", got=f"shape {d.shape}")
    n_flips = check_int(n_flips, "n_flips", low=1)
    k = d.shape[-1]
    rng = np.random.default_rng(rng)
    signs, weights = signflip_patterns(k, n_flips, rng, max_exact_k=max_exact_k)
    estimate = d.mean(axis=-1)
    se = d.std(axis=-1, ddof=1) / np.sqrt(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = estimate / se
    null = _signflip_t(d, signs)
    if weights is not None:
        # The first enumerated pattern is the identity: its statistic *is* the observed one.
        # Set it so, since the null's shortcut variance (Q - S**2 / k) cancels badly when
        # the deltas barely vary, and the observed pattern must tie with itself.
        null[..., 0, :] = observed
    w = _unit_weights_iv(unit_weights, k, "paired_signflip_null")
    pivot = _signflip_t(d - estimate[..., None] * w, signs)
    return JointNull(estimate, se, float(k - 1), observed, null, weights, pivot)


def _unit_weights_iv(unit_weights, k, owner):
    if unit_weights is None:
        return np.ones(k)
    w = np.asarray(unit_weights, dtype=float)
    if w.shape != (k,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise fail("unit_weights", f"{k} positive finite numbers (one per unit)",
                   owner=owner, got=f"shape {w.shape}")
    return w / w.mean()


def _signflip_t(d, signs):
    # t = mean / (sd / sqrt(k)); flipping signs keeps sum(d**2), so only the sum changes:
    # var = (Q - S**2 / k) / (k - 1).
    flat, batch_shape = _flat(d, 2)
    b, m, k = flat.shape
    n_pat = signs.shape[0]
    q = (flat * flat).sum(axis=-1)
    out = np.empty((b, n_pat, m))
    for sl in _chunks(b, n_pat * m * 2):
        s = np.einsum("pk,bmk->bpm", signs, flat[sl], optimize=True)
        var = (q[sl, None, :] - s * s / k) / (k - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (s / k) / np.sqrt(np.maximum(var, 0.0) / k)
        out[sl] = t
    return out.reshape(batch_shape + (n_pat, m))


def unpaired_bootstrap_null(scores, comparisons, n_resamples: int = 10_000, *, rng=None,
                            statistic: str = "welch") -> JointNull:
    """Joint bootstrap null of unpaired two-sample t statistics (arms with ``k`` seeds each).

    Every replicate resamples each arm's *centred* values (``x - mean(x)``) with replacement,
    once, and computes every comparison from the same resampled arms; a shared control then
    enters all its comparisons, as it does in the data. Centring each arm at its own mean
    makes every comparison's null true in the resamples whatever the real differences are,
    which is what the step-down needs (subset pivotality); a permutation of arm labels
    would need equal distributions in all arms, also under partial nulls.

    Parameters
    ----------
    scores : ndarray, shape (..., a, k)
        Per-seed metric of each of ``a`` arms (``k`` seeds each, unpaired).
    comparisons : sequence of (int, int)
        ``(i, j)``: arm ``i`` minus arm ``j``.
    n_resamples : int
    rng : numpy.random.Generator
        One set of resample indices is drawn per call and shared by the batch.
    statistic : {"welch", "pooled"}
        ``"welch"``: Welch t (``df`` holds each comparison's Welch–Satterthwaite df).
        ``"pooled"``: t with the variance pooled over all ``a`` arms and ``a (k - 1)`` df
        (Dunnett's statistic).

    Returns
    -------
    JointNull
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim < 2 or x.shape[-1] < 2:
        raise fail("scores", "an array of shape (..., a, k) with k >= 2 seeds",
                   owner="unpaired_bootstrap_null", got=f"shape {x.shape}")
    check_choice(statistic, "statistic", ("welch", "pooled"), owner="unpaired_bootstrap_null")
    n_resamples = check_int(n_resamples, "n_resamples", low=1)
    comparisons = _comparisons_iv(comparisons, x.shape[-2])
    rng = np.random.default_rng(rng)
    a, k = x.shape[-2:]
    i = np.array([c[0] for c in comparisons])
    j = np.array([c[1] for c in comparisons])
    estimate, se, df = _two_sample(x.mean(axis=-1), x.var(axis=-1, ddof=1), k, i, j, statistic)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = estimate / se
    flat, batch_shape = _flat(x - x.mean(axis=-1, keepdims=True), 2)
    null = np.empty((flat.shape[0], n_resamples, len(comparisons)))
    # replicates a block at a time (the indices of successive blocks are the stream's next
    # ones, as if drawn at once): memory follows CHUNK_ELEMENTS, not n_resamples
    per_block = max(1, CHUNK_ELEMENTS // (a * k))
    for start in range(0, n_resamples, per_block):
        reps = slice(start, min(start + per_block, n_resamples))
        idx = rng.integers(0, k, size=(reps.stop - reps.start, a, k))
        for sl in _chunks(flat.shape[0], idx.size):
            boot = np.take_along_axis(flat[sl, None, :, :], idx[None], axis=-1)
            est, s, _ = _two_sample(boot.mean(axis=-1), boot.var(axis=-1, ddof=1), k, i, j,
                                    statistic)
            with np.errstate(divide="ignore", invalid="ignore"):
                null[sl, reps] = est / s
    return JointNull(estimate, se, df, observed,
                     null.reshape(batch_shape + null.shape[1:]), None)


def _two_sample(mean, var, k, i, j, statistic):
    est = mean[..., i] - mean[..., j]
    if statistic == "pooled":
        pooled = var.mean(axis=-1, keepdims=True)
        se = np.sqrt(pooled * 2.0 / k) * np.ones_like(est)
        df = float(var.shape[-1] * (k - 1))
    else:
        vi, vj = var[..., i] / k, var[..., j] / k
        se = np.sqrt(vi + vj)
        with np.errstate(divide="ignore", invalid="ignore"):
            df = (vi + vj) ** 2 / ((vi**2 + vj**2) / (k - 1))
    return est, se, df


def gaussian_null(scores, comparisons, n_draws: int = 10_000, *, rng=None) -> JointNull:
    """Joint multivariate-t null of per-unit paired t statistics (questions of fixed models).

    With ``n`` units (questions) each comparison's statistic ``mean(d_c) / (sd(d_c) /
    sqrt(n))`` is asymptotically normal, and jointly so with the correlation of the arms'
    means estimated from the units. Draws of arm means from ``N(0, cov(x) / n)``, divided by
    one shared ``sqrt(chi2_{n-1} / (n - 1))`` per draw, give every comparison's null
    statistic at once, each with the t law on ``n - 1`` df of the per-question t test (the
    multcomp convention for an estimated covariance). The normal law alone made max-T's
    family-wise error 5.8% at n = 100 binary questions (``python -m sim.decision_grid
    --families models_arms``).

    Parameters
    ----------
    scores : ndarray, shape (..., a, n)
        Per-question score of each arm (paired by question).
    comparisons : sequence of (int, int)
    n_draws : int
    rng : numpy.random.Generator
        One set of standard normal draws per call, shared by the batch.

    Returns
    -------
    JointNull
        ``df = n - 1``.
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim < 2 or x.shape[-1] < 2:
        raise fail("scores", "an array of shape (..., a, n) with n >= 2 questions",
                   owner="gaussian_null", got=f"shape {x.shape}")
    n_draws = check_int(n_draws, "n_draws", low=1)
    lmat = contrast_matrix(comparisons, x.shape[-2])
    rng = np.random.default_rng(rng)
    n = x.shape[-1]
    centred = x - x.mean(axis=-1, keepdims=True)
    cov = np.einsum("...in,...jn->...ij", centred, centred) / ((n - 1) * n)
    vc = np.einsum("ci,...ij,cj->...c", lmat, cov, lmat)
    se = np.sqrt(np.maximum(vc, 0.0))
    estimate = x.mean(axis=-1) @ lmat.T
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = estimate / se
    # a square root of the (positive semi-definite) covariance of the arm means
    lam, vec = np.linalg.eigh(cov)
    root = vec * np.sqrt(np.maximum(lam, 0.0))[..., None, :]
    z = rng.standard_normal((n_draws, x.shape[-2]))
    z = z / np.sqrt(rng.chisquare(n - 1, size=(n_draws, 1)) / (n - 1))
    draws = np.einsum("pa,...ia,ci->...pc", z, root, lmat, optimize=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        null = draws / se[..., None, :]
    return JointNull(estimate, se, float(n - 1), observed, null, None)
