"""Small local stand-ins for pieces other branches provide (``protocols.multiplicity``,
``protocols.claims``, ``protocols.ranking``, the ``cluster_cr*`` protocols).

Each name is imported from its owner when present; the fallback has the same signature and
is checked against the same references in the tests (statsmodels ``multipletests``).
"""

from __future__ import annotations

import numpy as np

CORRECTIONS = ("holm", "maxt", "bh", "bonferroni", "none")


def _adjust(p, method: str) -> np.ndarray:
    """Adjusted p-values (Holm, Bonferroni, Benjamini-Hochberg, none); NaN stays NaN."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    m = q.size
    if m == 0 or method == "none":
        out[ok] = q
        return out
    order = np.argsort(q, kind="stable")
    ranked = q[order]
    if method == "bonferroni":
        adj = np.minimum(1.0, q * m)
    elif method == "holm":
        step = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
        adj = np.empty(m)
        adj[order] = step
    elif method == "bh":
        step = np.minimum(1.0, np.minimum.accumulate(
            (ranked * m / np.arange(1, m + 1))[::-1])[::-1])
        adj = np.empty(m)
        adj[order] = step
    else:
        raise ValueError(f"unknown correction {method!r}")
    out[ok] = adj
    return out


def _paired_signflip_null(deltas, n_flips: int, rng) -> np.ndarray:
    """t statistics of ``deltas`` (units, comparisons) under random joint sign flips,
    shape (n_flips, comparisons); the same flip for every comparison keeps their
    correlation."""
    d = np.asarray(deltas, dtype=float)
    rng = np.random.default_rng(rng)
    signs = rng.choice((-1.0, 1.0), size=(n_flips, d.shape[0]))
    flipped = signs[:, :, None] * d[None]
    return _t_of(flipped)


def _t_of(d):
    """One-sample t of the units (axis -2) for each comparison (axis -1)."""
    g = d.shape[-2]
    mean = d.mean(axis=-2)
    se = d.std(axis=-2, ddof=1) / np.sqrt(g)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, mean / se, 0.0)


def _maxt_stepdown(observed_t, null_t) -> np.ndarray:
    """Westfall-Young step-down max-T adjusted p-values (two-sided)."""
    obs = np.abs(np.asarray(observed_t, dtype=float))
    null = np.abs(np.asarray(null_t, dtype=float))
    order = np.argsort(-obs, kind="stable")
    m = obs.size
    adj = np.empty(m)
    for rank, j in enumerate(order):
        rest = order[rank:]
        mx = null[:, rest].max(axis=1)
        adj[j] = (1 + np.sum(mx >= obs[j])) / (1 + null.shape[0])
    # monotone in the step-down order
    adj[order] = np.maximum.accumulate(adj[order])
    return np.minimum(adj, 1.0)


def _claim_verdict(claim: str, estimate, ci_low, ci_high, margin) -> str:
    """"shown", "refuted" or "inconclusive" from the (simultaneous) CI and the margin.

    superiority: the difference exceeds ``margin`` (default 0); non-inferiority: the
    variant is not worse by more than ``margin``; equivalence: within ``+-margin``.
    """
    lo, hi = float(ci_low), float(ci_high)
    if np.isnan(lo) or np.isnan(hi):
        return "inconclusive"
    m = float(margin)
    if claim == "superiority":
        return "shown" if lo > m else "refuted" if hi < m else "inconclusive"
    if claim == "non-inferiority":
        return "shown" if lo > -m else "refuted" if hi < -m else "inconclusive"
    if claim == "equivalence":
        if -m < lo and hi < m:
            return "shown"
        return "refuted" if (lo > m or hi < -m) else "inconclusive"
    raise ValueError(f"unknown claim {claim!r}")


def _cld(arms, separable) -> dict:
    """Compact letter display: arms sharing a letter are not separable.

    ``arms`` in display order (best first); ``separable``: set of frozenset pairs.
    Insert-and-absorb (Piepho 2004).
    """
    groups = [set(arms)]
    for pair in separable:
        i, j = tuple(pair)
        new = []
        for g in groups:
            if i in g and j in g:
                new += [g - {i}, g - {j}]
            else:
                new.append(g)
        groups = [g for g in new if g and not any(g < h for h in new)]
        uniq = []
        for g in groups:
            if g not in uniq:
                uniq.append(g)
        groups = uniq
    pos = {a: i for i, a in enumerate(arms)}
    groups.sort(key=lambda g: min(pos[a] for a in g))
    letters = {a: "" for a in arms}
    for k, g in enumerate(groups):
        ch = chr(ord("a") + k) if k < 26 else f"[{k}]"
        for a in arms:
            if a in g:
                letters[a] += ch
    return letters


try:  # the shared implementations, once merged
    from protocols.multiplicity import adjust as _shared_adjust  # type: ignore
except ImportError:  # pragma: no cover - until h-multiarm lands
    _shared_adjust = None

adjust = _adjust if _shared_adjust is None else _shared_adjust
maxt_stepdown = _maxt_stepdown
paired_signflip_null = _paired_signflip_null
claim_verdict = _claim_verdict
cld = _cld
