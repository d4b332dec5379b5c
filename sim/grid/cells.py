"""Drawing a calibration cell: the one place that turns (generator, k, effect, seed) into data.

The runner and the reports both draw through :func:`draw_cell`, so a report's per-seed
deltas are the very experiments on which a cell's protocols were scored. Everything that
changes the draw (the generator's parameters, k, the effect, the number of experiments, the
root seed and the chunk size) is part of the cell's cache key (:class:`sim.grid.CellSpec`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from evalcal_core import resources
from protocols import PoolScores, ScoreBatch

from .seeding import cell_seed

#: scores drawn and evaluated at once: bounds memory for question-level generators
CHUNK_ELEMENTS = 2**23

#: bytes a question-level generator and the protocols hold per drawn score at a cell's peak
#: (seed_question's two float64 buffers, the bool scores and the protocols' temporaries:
#: about 31 measured at n = 100,000, k = 10, over the process's 200 MB of imports)
BYTES_PER_SCORE = 40


def check_memory(generator, k: int, chunk: int, available: int | None = None) -> int:
    """Bytes one chunk of the cell needs; ``ValueError`` (one line) if more than available.

    Called before anything is drawn, so a cell too large for the machine fails at once with
    a message instead of being killed by the system mid-run.
    """
    if generator.from_pool:
        # A pool batch holds index sets and per-question counts, not score copies.
        need = chunk * int(generator.n) * 8 * 4
    else:
        need = chunk * int(k) * int(generator.n) * BYTES_PER_SCORE
    resources.check_memory(need, f"a cell of generator {generator.name} with k = {k} and "
                           f"n = {generator.n} ({chunk} experiment(s) per chunk)",
                           "use fewer questions or seeds", available)
    return need


def _pool_scores(generator) -> PoolScores:
    # Once per process and pool: uint8 scores and per-seed metrics of every pool seed.
    base, variant = generator.pool()
    return PoolScores(base, variant, generator.binary)


def chunk_size(generator, k: int) -> int:
    """Experiments drawn at once for ``generator`` at ``k`` seeds (a cache-key field)."""
    return max(1, CHUNK_ELEMENTS // (int(k) * generator.n))


def data_rng(generator, k: int, effect_pp: float, seed: int) -> np.random.Generator:
    """The cell's data stream: named by the generator's setting, k and the effect."""
    return np.random.default_rng(cell_seed(seed, "data", generator.name, generator.describe(),
                                           int(k), float(effect_pp)))


def protocol_rng(protocol: str, protocol_params: str, generator, k: int, effect_pp: float,
                 seed: int) -> np.random.Generator:
    """A protocol's resampling stream in a cell (independent of which other protocols run)."""
    return np.random.default_rng(cell_seed(seed, "protocol", protocol, protocol_params,
                                           generator.name, generator.describe(), int(k),
                                           float(effect_pp)))


def draw_cell(generator, k: int, effect_pp: float, sims: int, seed: int,
              chunk: int | None = None, counts: bool = False) -> Iterator[ScoreBatch]:
    """The cell's experiments, ``chunk`` at a time, as validated score batches.

    Parameters
    ----------
    generator : sim.generators.Generator
    k : int
        Seeds per arm.
    effect_pp : float
        True effect in percentage points.
    sims : int
        Experiments in the cell.
    seed : int
        Root seed.
    chunk : int, optional
        Experiments per batch; default :func:`chunk_size`. It changes which draws land in
        which batch, and so the protocols' resampling streams: keep it in the cache key.
    counts : bool, default False
        Yield batches of per-question correct-run counts
        (:meth:`protocols.ScoreBatch.from_counts`) of the same experiments, without their
        runs, where the generator :attr:`~sim.generators.Generator.draws_counts`: what the
        protocols that read no runs see is the same either way.

    Yields
    ------
    protocols.ScoreBatch
        Shape ``(m, k, n)`` with ``m <= chunk``; the batches together hold ``sims``.
    """
    chunk = chunk_size(generator, k) if chunk is None else int(chunk)
    check_memory(generator, k, min(chunk, sims))
    rng = data_rng(generator, k, effect_pp, seed)
    pool = _pool_scores(generator) if generator.from_pool else None
    for start in range(0, sims, chunk):
        m = min(chunk, sims - start)
        if pool is not None:
            # Index sets into the pool (the same random numbers draw() would use).
            yield ScoreBatch.from_pool(pool, generator.draw_seeds(m, k, effect_pp / 100.0, rng))
            continue
        if counts and generator.draws_counts:
            yield ScoreBatch.from_counts(*generator.draw_counts(m, k, effect_pp / 100.0, rng), k)
            continue
        base, variant = generator.draw(m, k, effect_pp / 100.0, rng)
        yield ScoreBatch(base, variant, generator.binary)


def cell_deltas(generator, k: int, effect_pp: float, sims: int, seed: int) -> np.ndarray:
    """Per-seed deltas (fraction, shape ``(sims, k)``) of the experiments a cell draws."""
    return np.concatenate([b.seed_deltas for b in draw_cell(generator, k, effect_pp, sims,
                                                              seed)])
