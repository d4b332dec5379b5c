"""``evalcal pools describe PATH [--json]``: what a pool holds, before calibrating on it.

Models, items, attempts per (model, item) (fewest and most in the file), clusters and their
sizes, the models' accuracy range (naming the models), how many items have mixed outcomes
per model (some attempts right, some wrong: the only items on which an A/A split of one
model's attempts can differ), whether A/A splits are possible (>= 2 attempts) and which
models are complete (a ragged pool is read with its complete models; the others are listed).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import add_options, check_options, config_from_args, option
from evalcal_core.pool_paths import resolve_pool
from evalcal_core.pools import ItemPool, read_pool

OWNER = "evalcal pools describe"


@dataclass(frozen=True)
class PoolSummary:
    """What :func:`summarize` finds in a pool.

    Attributes
    ----------
    source : str
        The file read.
    models, items : int
        Counts of the complete models and of the items.
    attempts : int
        Attempts per (model, item) of the complete models (the pool's R).
    attempts_min, attempts_max : int
        Fewest and most attempts of any (model, item) in the file (dropped models included).
    clusters : int
        Number of clusters (0 without a ``cluster`` column).
    cluster_sizes : dict of str to int
        Items per cluster, in the pool's cluster order.
    accuracy_min, accuracy_max : float
        Lowest and highest mean score of a model over its items and attempts (a fraction).
    accuracy_min_model, accuracy_max_model : str
        The models with those means (the first in name order on a tie).
    mixed : dict of str to int
        Per model, items whose attempts disagree (some scores differ).
    mixed_min, mixed_median, mixed_max : float
        Over the models, the fewest, median and most such items.
    aa_splits : bool
        Whether A/A splits are possible (>= 2 attempts).
    complete_models : tuple of str
        The models read (every item at the full attempt count).
    dropped_models : tuple of str
        Models left out because some item has fewer attempts.
    binary : bool
        Whether every score is 0 or 1.
    """

    source: str
    models: int
    items: int
    attempts: int
    attempts_min: int
    attempts_max: int
    clusters: int
    cluster_sizes: dict
    accuracy_min: float
    accuracy_max: float
    accuracy_min_model: str
    accuracy_max_model: str
    mixed: dict
    mixed_min: float
    mixed_median: float
    mixed_max: float
    aa_splits: bool
    complete_models: tuple
    dropped_models: tuple
    binary: bool


def summarize(pool: ItemPool) -> PoolSummary:
    """The :class:`PoolSummary` of a pool read by :func:`evalcal_core.pools.read_pool`."""
    scores = np.asarray(pool.scores, dtype=float)
    accuracy = scores.mean(axis=(1, 2))
    low, high = int(np.argmin(accuracy)), int(np.argmax(accuracy))
    # an item is mixed for a model when its attempts do not all agree
    mixed = (scores.max(axis=2) != scores.min(axis=2)).sum(axis=1)
    if pool.clusters is not None:
        sizes = np.bincount(pool.clusters, minlength=len(pool.cluster_names))
        cluster_sizes = {n: int(c) for n, c in zip(pool.cluster_names, sizes)}
    else:
        cluster_sizes = {n: len(pool.items) for n in pool.cluster_names}
    lo, hi = pool.attempts_range or (pool.attempts, pool.attempts)
    return PoolSummary(
        source=pool.source, models=len(pool.models), items=len(pool.items),
        attempts=pool.attempts, attempts_min=int(lo), attempts_max=int(hi),
        clusters=len(cluster_sizes), cluster_sizes=cluster_sizes,
        accuracy_min=float(accuracy[low]), accuracy_max=float(accuracy[high]),
        accuracy_min_model=pool.models[low], accuracy_max_model=pool.models[high],
        mixed={m: int(c) for m, c in zip(pool.models, mixed)},
        mixed_min=float(mixed.min()), mixed_median=float(np.median(mixed)),
        mixed_max=float(mixed.max()), aa_splits=pool.attempts >= 2,
        complete_models=tuple(pool.models), dropped_models=tuple(pool.dropped),
        binary=pool.scores.dtype == bool)


def _names(names, limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


def format_text(s: PoolSummary) -> str:
    """The summary as the lines the command prints."""
    attempts = (f"{s.attempts} per (model, item)" if s.attempts_min == s.attempts_max else
                f"{s.attempts_min} to {s.attempts_max} per (model, item) in the file; "
                f"{s.attempts} for the complete models")
    clusters = ("none" if not s.clusters else f"{s.clusters} ("
                + ", ".join(f"{n} {c}" for n, c in s.cluster_sizes.items()) + " items)")
    lines = [
        f"pool {s.source}",
        f"models: {s.models} complete ({_names(list(s.complete_models))})",
        f"items: {s.items}",
        f"attempts: {attempts}",
        f"scores: {'0/1' if s.binary else 'fractions in [0, 1]'}",
        f"clusters: {clusters}",
        f"accuracy over models: {100 * s.accuracy_min:.1f}% ({s.accuracy_min_model}) to "
        f"{100 * s.accuracy_max:.1f}% ({s.accuracy_max_model})",
        f"items with mixed outcomes per model (some attempts right, some wrong): min "
        f"{s.mixed_min:g}, median {s.mixed_median:g}, max {s.mixed_max:g} of {s.items}",
        ("A/A splits: possible (" + f"{s.attempts} attempts: up to {s.attempts // 2} per arm)"
         if s.aa_splits else "A/A splits: not possible (1 attempt per (model, item); A/B "
         "pairs and leaderboards only)"),
    ]
    if s.dropped_models:
        lines.append(f"dropped (fewer than {s.attempts} attempts on some item): "
                     f"{len(s.dropped_models)} ({_names(list(s.dropped_models))})")
    return "\n".join(lines)


def to_json(s: PoolSummary) -> str:
    """The summary as JSON (every field of :class:`PoolSummary`)."""
    data = asdict(s)
    data["complete_models"] = list(s.complete_models)
    data["dropped_models"] = list(s.dropped_models)
    return json.dumps(data, indent=2)


@dataclass(frozen=True)
class DescribeOptions:
    """What ``evalcal pools describe`` was asked; each field a command-line option."""

    pool: str = option("pool", help="the pool file (CSV or gzip), or a pool's name in "
                                    "$EVALCAL_POOLS or ../shared/data/llm_pools")
    json: bool = option("--json", False, switch=True, help="print JSON instead of text")

    def __post_init__(self):
        check_options(self)


def build_parser() -> ArgumentParser:
    """The options of :class:`DescribeOptions`, as declared there."""
    return add_options(ArgumentParser(prog=OWNER, description=__doc__), DescribeOptions)


def main(argv=None) -> int:
    config = config_from_args(DescribeOptions, build_parser().parse_args(argv))
    path = resolve_pool(config.pool, "pool", OWNER)
    # ragged pools are described through their complete models, the others listed
    summary = summarize(read_pool(Path(path), complete_models=True))
    print(to_json(summary) if config.json else format_text(summary))
    return 0


if __name__ == "__main__":
    run_main(main, OWNER)
