"""The simulation grid: cells, their seeds, the cache, the parallel backends and the runner.

A *cell* is one (generator, k, effect) setting; a *request* asks for one protocol's
rejection rate on it. :func:`run_cells` computes any set of requests as rows of a
calibration frame (each cell drawn once for all its protocols, from a stream named by the
cell; finished rows read from the cache; the rest in parallel), and :func:`calibrate` the
(k, effect) grid of one generator. Everything that runs cells (the seed-budget and
effect searches, the real pools' half-samples, the fit check) goes through here.

Modules, lowest first: ``seeding`` (a cell's ``SeedSequence``), ``cells`` (drawing a cell),
``cache`` (a cell's key and cached row), ``task`` (scoring protocols on one drawn cell;
``wilson``), ``parallel`` (loky / dask), ``execute`` (a set of requests through the cache,
in parallel), ``pool_seeds`` (real pools' pool-sampling intervals from the seeds each
experiment drew: the default), ``pool`` (the older half-sample intervals, ``--pool-method
halves``), ``runner`` (the frame).
"""

from .cache import CacheWarning, CellCache, CellResult, CellSpec
from .cells import (
    BYTES_PER_SCORE,
    cell_deltas,
    check_memory,
    chunk_size,
    data_rng,
    draw_cell,
    protocol_rng,
)
from .execute import CellRequest
from .parallel import BACKENDS
from .pool import DEFAULT_REPS
from .runner import (
    DEFAULT_REPLICATES,
    applicable_protocols,
    calibrate,
    check_grid,
    grid_requests,
    run_cells,
)
from .seeding import cell_seed
from .task import run_task, wilson

__all__ = ["BACKENDS", "BYTES_PER_SCORE", "DEFAULT_REPLICATES", "DEFAULT_REPS", "CacheWarning",
           "CellCache", "CellRequest", "CellResult", "CellSpec", "applicable_protocols",
           "calibrate", "cell_deltas", "cell_seed", "check_grid", "check_memory", "chunk_size",
           "data_rng", "draw_cell", "grid_requests", "protocol_rng", "run_cells", "run_task",
           "wilson"]
