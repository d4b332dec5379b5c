"""One task: draw a (generator, k, effect) cell once and score every protocol on it."""

from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np
from statsmodels.stats.proportion import proportion_confint

import protocols
from evalcal_core.params import decode

from .cache import CellResult, CellSpec
from .cells import draw_cell, protocol_rng
from .pool_seeds import encode_counts, seed_tallies


def wilson(count, total, alpha=0.05):
    """Wilson score interval for a binomial rate (statsmodels ``proportion_confint``)."""
    low, high = proportion_confint(count, total, alpha=alpha, method="wilson")
    # The bounds are exactly 0 at count 0 and 1 at count total; rounding leaves ~1e-19.
    low = 0.0 if count == 0 else float(low)
    high = 1.0 if count == total else float(high)
    return low, high


def _tally(spec: CellSpec, significant, estimate, width, seed_counts: str = "") -> CellResult:
    hits = _hits(spec, significant, estimate)
    if spec.effect_pp > 0:
        wrong = significant & (estimate < 0)
    elif spec.effect_pp < 0:
        wrong = significant & (estimate > 0)
    else:
        wrong = np.zeros_like(significant)
    rejections = int(hits.sum())
    low, high = wilson(rejections, spec.sims)
    finite = width[np.isfinite(width)]
    # x 100 like effect_pp (pp of a fraction); a metric-range pool's rows are restated in
    # the metric's own units by sim.calibration.state_units, not here, so that a cached
    # row means the same whatever the pool's metric
    median_width = float(np.median(finite)) * 100 if finite.size else math.nan
    return CellResult(**asdict(spec), rejections=rejections, rate=rejections / spec.sims,
                      rate_low=low, rate_high=high, wrong_sign=int(wrong.sum()),
                      median_ci_width_pp=median_width, seed_counts=seed_counts)


def run_task(generator, k, effect_pp, specs, seed, threads=1):
    """Draw one cell's experiments and evaluate every protocol of ``specs`` on them.

    Parameters
    ----------
    generator : sim.generators.Generator
    k : int
    effect_pp : float
        True effect in percentage points.
    specs : list of CellSpec
        One per protocol, all for this (generator, k, effect).
    seed : int
        Root seed.
    threads : int, default 1
        Threads the compiled protocol kernels may use: 1 in a worker process, which
        shares the machine with the other workers. Results do not depend on it.

    Returns
    -------
    list of CellResult
    """
    sims, chunk = specs[0].sims, specs[0].chunk
    evaluators = [(spec, protocols.get(spec.protocol, **decode(spec.protocol_params)),
                   protocol_rng(spec.protocol, spec.protocol_params, generator, k, effect_pp,
                                seed))
                  for spec in specs]
    parts = {spec: [] for spec in specs}
    # A real pool's experiments name their seeds: per pool seed, the experiments that drew
    # it and their rejections (the pool-sampling interval, sim.grid.pool_seeds)
    size = generator.pool_size if generator.from_pool else 0
    seeds = {spec: [np.zeros(size, np.int64), np.zeros(size, np.int64)] for spec in specs}
    codes = generator.clusters()
    # the same experiments' counts serve protocols that read no runs: a cell's numbers do
    # not depend on the other protocols drawn with it
    counts = not any(protocol.reads_runs for _, protocol, _ in evaluators)
    with protocols.kernel_threads(threads):
        for batch in draw_cell(generator, k, effect_pp, sims, seed, chunk, counts):
            order = batch.order
            if codes is not None:  # the cluster-robust protocols read them from the batch
                batch = batch.with_clusters(codes)
            for spec, protocol, rng in evaluators:
                r = protocol.evaluate(batch, alpha=spec.alpha, rng=rng)
                parts[spec].append((r.significant, r.estimate, r.ci_high - r.ci_low))
                if order is not None:
                    hits = _hits(spec, r.significant, r.estimate)
                    n, rej = seed_tallies(order, hits, size)
                    seeds[spec][0] += n
                    seeds[spec][1] += rej
    out = []
    for spec in specs:
        sig, est, width = (np.concatenate(x) for x in zip(*parts[spec]))
        counts = encode_counts(*seeds[spec]) if size else ""
        out.append(_tally(spec, sig, est, width, counts))
    return out


def _hits(spec: CellSpec, significant, estimate):
    """The experiments counted as rejections (the sign rule of :func:`_tally`)."""
    if spec.effect_pp > 0:
        return significant & (estimate > 0)
    if spec.effect_pp < 0:
        return significant & (estimate < 0)
    # Under the null every rejection is a false positive, whatever its sign.
    return significant
