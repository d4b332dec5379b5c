"""Many variants against one baseline: family-wise false-positive rate, without and with Holm.

No ``sim.calibrate`` command covers this, so it is simulated here, vectorized: each
experiment draws one baseline and ``m`` variants of ``seed_gaussian`` per-seed metrics that
share the baseline's seed effect, and ``paired_t`` tests every variant against the baseline
in one batched call.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import protocols
from evalcal_core.validate import InvalidParameterError
from sim.grid import cell_seed, wilson


def holm_adjust(p) -> np.ndarray:
    """Holm step-down adjusted p-values along the last axis.

    ``p_adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))`` for the sorted p-values; the same
    as ``statsmodels.stats.multitest.multipletests(p, method='holm')[1]`` per row.

    Parameters
    ----------
    p : array_like, shape (..., m)

    Returns
    -------
    ndarray, shape (..., m)
    """
    p = np.asarray(p, dtype=float)
    m = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1) * (m - np.arange(m))
    ranked = np.minimum(np.maximum.accumulate(ranked, axis=-1), 1.0)
    out = np.empty_like(ranked)
    np.put_along_axis(out, order, ranked, axis=-1)
    return out


def draw_family(generator, sims: int, m: int, k: int, rng):
    """Per-seed metrics of one baseline and ``m`` variants, no true effect.

    ``X_i = mu + sigma Z_i`` and ``Y_ji = mu + sigma (rho Z_i + sqrt(1 - rho**2) W_ji)``
    (``seed_gaussian`` with normal noise; every variant shares the baseline's ``Z``).

    Returns
    -------
    base, variants : ndarray, shape (sims, m, k, 1)
        ``base`` is a read-only broadcast of one baseline per experiment.
    """
    z = rng.standard_normal((sims, 1, k, 1))
    w = rng.standard_normal((sims, m, k, 1))
    mu, sigma, rho = generator.mu, generator.sigma, generator.rho
    base = np.broadcast_to(mu + sigma * z, w.shape)
    variants = mu + sigma * (rho * z + np.sqrt(1 - rho**2) * w)
    return base, variants


def family_rates(generator, ms, k: int, sims: int, seed: int, alpha=0.05) -> pd.DataFrame:
    """Family-wise false-positive rate of ``paired_t`` for each number of variants ``m``.

    Parameters
    ----------
    generator : seed_gaussian generator
        ``mu``, ``sigma``, ``rho`` (fractions) of the per-seed metrics; normal noise.
    ms : sequence of int
    k : int
        Seeds per arm.
    sims : int
        Experiments per m.
    seed : int
        Root seed; m's stream is a child named by the generator, m and k.

    Returns
    -------
    pandas.DataFrame
        One row per (m, correction in {'none', 'holm'}): rejections (experiments with at
        least one significant variant), rate with its 95% Wilson interval, and
        ``independent_rate`` = 1 - (1 - alpha)**m.
    """
    if generator.noise != "normal":
        raise InvalidParameterError("family_rates simulates normal noise; got "
                                    f"noise={generator.noise!r}")
    test = protocols.get("paired_t")
    rows = []
    for m in ms:
        rng = np.random.default_rng(cell_seed(seed, "pitfalls", "many_variants",
                                              generator.describe(), int(m), int(k)))
        base, variants = draw_family(generator, sims, int(m), int(k), rng)
        result = test.evaluate(base, variants, alpha)
        any_raw = result.significant.any(axis=-1)
        any_holm = (holm_adjust(result.p_value) <= alpha).any(axis=-1)
        for name, hits in (("none", any_raw), ("holm", any_holm)):
            count = int(hits.sum())
            low, high = wilson(count, sims)
            rows.append(dict(m=int(m), correction=name, k=int(k), sims=int(sims),
                             alpha=alpha, rejections=count, rate=count / sims, rate_low=low,
                             rate_high=high, independent_rate=1 - (1 - alpha) ** int(m)))
    return pd.DataFrame(rows)


def delta_correlation(generator) -> float:
    """Correlation of two variants' per-seed deltas against a shared baseline.

    ``(1 - rho)**2 / (2 (1 - rho)) = (1 - rho) / 2``: positive whenever
    ``rho < 1``, which is why the family-wise rate stays below the independent-test formula.
    """
    return (1 - generator.rho) / 2

