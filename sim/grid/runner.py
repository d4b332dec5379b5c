"""Rejection rates of a set of cells as a calibration frame: :func:`run_cells`, and
:func:`calibrate` for the (k, effect) grid of one generator."""

from __future__ import annotations

from dataclasses import asdict

import pandas as pd

import protocols
from evalcal_core.options import Execution
from evalcal_core.params import encode
from evalcal_core.validate import InvalidParameterError
from protocols.param_check import check_protocol_param

from .cache import CellResult
from .execute import CellRequest, execute
from .pool import add_pool_columns
from .pool_seeds import DEFAULT_METHOD as DEFAULT_POOL_METHOD
from .pool_seeds import add_seed_pool_columns

#: how calibration draws the z-bootstrap protocols' replicates (``--replicates``)
DEFAULT_REPLICATES = "summary"


def applicable_protocols(generator, ks, names=None, protocol_params=None,
                         replicates=DEFAULT_REPLICATES):
    """Protocols that can run on the generator's data for at least one k of ``ks``.

    Parameters
    ----------
    generator : Generator
    ks : sequence of int
    names : list of str or None
        Requested protocols (default: all registered but the harness reproductions, those
        with a non-empty :attr:`~protocols.Protocol.harness`, which run only when named).
        A requested protocol that fits no k raises ``ValueError``; unrequested ones are
        silently left out.
    protocol_params : dict or None
        Set on every protocol that has the parameter; a key no selected protocol has
        raises ``ValueError``.
    replicates : {'summary', 'drawn'}
        The ``replicates`` parameter of the z-bootstrap protocols, unless
        ``protocol_params`` sets it: 'summary' draws the replicates' mean and SD from their
        law (:mod:`protocols._replicate_law`; the same rates, a fraction of the time),
        'drawn' draws every replicate as :mod:`protocols.evaluate` does.

    Returns
    -------
    dict
        Protocol name -> (protocol object, its parameters as a ``;``-joined string).
    """
    explicit = names is not None
    # The harness reproductions are descriptive and many: a default run stays as fast as
    # it was before they were registered.
    names = list(names) if explicit else [n for n in protocols.names()
                                          if not protocols.protocol_class(n).harness]
    params = dict(protocol_params or {})
    for key, value in params.items():
        # every protocol taking a key checks it before any is built, and a refusal names the
        # key as typed (a protocol's own refusal names its field and itself only)
        check_protocol_param(key, value, names, f"--protocol-param {key}={value}")
    chosen, used = {}, set()
    for name in names:
        own = {k: v for k, v in params.items() if protocols.PROTOCOLS.accepts(name, k)}
        if protocols.PROTOCOLS.accepts(name, "replicates"):
            own.setdefault("replicates", replicates)
        protocol = protocols.get(name, **own)
        if all(generator.why_not(protocol, k) for k in ks):
            if explicit:
                why = generator.why_not(protocol, max(ks))
                raise InvalidParameterError(f"protocol {name!r} cannot run on generator "
                                            f"{generator.name!r} with k in {min(ks)}..{max(ks)}: "
                                            f"it {why}")
            continue
        used.update(own)
        canonical = protocols.PROTOCOLS.canonical(name, own)
        defaults = protocols.parameters(name)
        chosen[name] = (protocol, encode(canonical, defaults))
    unused = sorted(set(params) - used)
    if unused:
        raise InvalidParameterError(f"--protocol-param {unused[0]!r} is not a parameter of any "
                                    f"selected protocol ({', '.join(chosen)})")
    return chosen


def calibrate(generator, ks, effects_pp, *, protocol_names=None, protocol_params=None,
              sims=2000, alpha=0.05, seed=0, jobs=1, backend="loky", scheduler=None,
              out=None, progress=True, pool_reps=0,
              replicates=DEFAULT_REPLICATES,
              pool_method=DEFAULT_POOL_METHOD) -> pd.DataFrame:
    """Rejection rates of protocols on a (k, effect) grid of one generator.

    Parameters
    ----------
    generator : sim.generators.Generator
    ks : sequence of int
        Seeds per arm.
    effects_pp : sequence of float
        True effects in percentage points (0 = the null).
    protocol_names : list of str or None
        Default: every protocol applicable to the generator.
    protocol_params : dict or None
        Parameters set on every selected protocol that has them.
    sims : int
        Experiments per cell.
    alpha : float
    seed : int
        Root seed; the result depends on nothing else (not on ``jobs`` or ``backend``).
    jobs : int
    backend : {'loky', 'dask'}
    scheduler : str or None
        dask scheduler address.
    out : path or None
        Cache directory; finished cells are reused.
    progress : bool
        Show a progress bar on stderr.
    pool_reps : int
        Real pools (``generator.from_pool``): half-sample replicates of the pool behind the
        ``pool_low``/``pool_high`` interval (:mod:`sim.grid.pool`); 0 leaves them NaN.
    replicates : {'summary', 'drawn'}
        See :func:`applicable_protocols`.

    Returns
    -------
    pandas.DataFrame
        One row per (protocol, k, effect) with the fields of ``CellResult``, ``null_params``
        (the setting whose effect-0 rows validate these) and ``pool_low``, ``pool_high``,
        ``pool_sd`` (fractions; NaN for synthetic generators).
    """
    check_grid(generator, ks, effects_pp)
    chosen = applicable_protocols(generator, ks, protocol_names, protocol_params, replicates)
    run = Execution(sims=sims, alpha=alpha, seed=seed, jobs=jobs, backend=backend,
                    scheduler=scheduler, out=out, progress=progress)
    return run_cells(grid_requests(generator, ks, effects_pp, chosen), run,
                     pool_reps=pool_reps, pool_method=pool_method)


def check_grid(generator, ks, effects_pp) -> None:
    """``ValueError`` unless ``generator`` can simulate every effect (pp) and the largest k."""
    for effect in effects_pp:
        generator.check_effect(effect / 100.0)
    max_k = generator.max_k
    if max_k is not None and max(ks) > max_k:
        raise InvalidParameterError(f"--k {max(ks)} exceeds the {max_k} seeds that generator "
                                    f"{generator.name} can draw ({generator.describe()})")


def grid_requests(generator, ks, effects_pp, chosen) -> list[CellRequest]:
    """The cells of the (k, effect) grid for the ``chosen`` protocols
    (:func:`applicable_protocols`), each protocol at the k it can run at."""
    return [CellRequest(generator, name, params, int(k), float(effect))
            for k in ks for effect in effects_pp
            for name, (protocol, params) in chosen.items()
            if generator.why_not(protocol, k) is None]


def run_cells(requests, run: Execution, *, pool_reps: int = 0, desc: str = "calibrating",
              pool_method: str = DEFAULT_POOL_METHOD) -> pd.DataFrame:
    """Rows (a ``calibrate`` frame) of any set of cells, computed or read from the cache.

    Cells of one (generator, k, effect) are drawn once for all their protocols. Real-pool
    rows get their pool-sampling interval: from the seeds their own experiments drew
    (``pool_method`` 'jackknife' or 'projection', :mod:`sim.grid.pool_seeds`; no extra
    cells), or with 'halves' from ``pool_reps`` half-sample replicates when ``pool_reps >
    0`` (:func:`sim.grid.pool.add_pool_columns`). This is what the seed-budget and the
    minimum-detectable-effect searches call for the extra cells they need. ``run`` is how
    (:class:`evalcal_core.options.Execution`: simulations, level, seed, workers, backend,
    cache folder, progress).
    """
    rows = execute(requests, run, desc=desc)
    frame = pd.DataFrame([asdict(r) for r in rows], columns=_COLUMNS)
    # The setting whose effect-0 rows validate these (a real pool's: its dataset's null pool).
    nulls = {g.describe(): g.null_setting() for g in {r.generator for r in requests}}
    frame["null_params"] = frame["generator_params"].map(nulls)
    if pool_method == "halves":
        frame = add_pool_columns(frame.drop(columns="seed_counts"), requests, pool_reps, run)
    else:
        frame = add_seed_pool_columns(frame, requests, method=pool_method)
    return frame.sort_values(["generator_params", "protocol", "k", "effect_pp"],
                             kind="stable", ignore_index=True)


_COLUMNS = list(CellResult.__dataclass_fields__)
#: how real-pool rows get their pool-sampling interval (``--pool-method``)
POOL_METHODS = ("jackknife", "projection", "halves")
