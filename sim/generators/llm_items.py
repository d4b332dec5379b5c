"""``llm_items``: experiments from a real per-item LLM result matrix with repeated attempts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalcal_core.designs import MODELS
from evalcal_core.params import content_digest, encode
from evalcal_core.pool_paths import resolve_pool
from evalcal_core.pools import ItemPool, read_pool
from evalcal_core.validate import InvalidParameterError, check_choice, check_int, fail

from ._base import Generator, pool_rows, register

#: the pool used unless ``pool=`` names another: a name found in the pools folder
#: (:mod:`evalcal_core.pool_paths`: ``$EVALCAL_POOLS``, else ``../shared/data/llm_pools``)
DEFAULT_POOL = "matharena_aime_2025_i"


def pool_path(pool: str) -> Path:
    """The file of ``pool``: a path, or a name in the pools folder (refused in one line when
    no pools folder has it)."""
    return resolve_pool(pool, "pool", "generator llm_items")


def load_pool(pool: str, complete_models: bool = False) -> ItemPool:
    """Read and check a pool (:func:`evalcal_core.pools.read_pool`): a path (CSV, plain or
    gzip) or a pool's name; cached per file version.

    Every model must have every item with the same number of attempts, one score per
    (model, item, attempt), each in [0, 1]; messages name the file and the first offence.
    ``complete_models`` keeps the models complete at the full attempt count (ragged pools).
    """
    path = pool_path(pool)
    return read_pool(path, complete_models=complete_models,
                     where=f"generator llm_items: pool {str(path)!r}")


def pool_data(pool, complete_models: bool) -> tuple[ItemPool, dict]:
    """The pool's data and the generator parameters that read it: ``complete_models`` is
    passed (and enters the cells' keys) only for a ragged pool, so a complete pool's cells
    are the same with and without a command's ``--complete-models``."""
    if complete_models:
        data = load_pool(str(pool), complete_models=True)
        if data.dropped:
            return data, {"complete_models": True}
    return load_pool(str(pool)), {}


@register
@dataclass(frozen=True)
class LLMItems(Generator):
    """Experiments from a real per-item result matrix of LLMs with repeated attempts.

    The pool (a file in the long format of :mod:`evalcal_core.pools`, plain or gzip, or a
    pool's name in the pools folder: ``$EVALCAL_POOLS``, else ``../shared/data/llm_pools``) holds,
    for every model and item, ``R`` attempts scored 0/1 (or a fraction). Two modes:

    *A/A* (``pair`` not given; effect 0, known truth): each experiment takes one model
    (``model``, or one drawn uniformly per experiment when ``model`` is not given), ``n_items``
    of the pool's items drawn without replacement, and for each item a random permutation
    of its ``R`` attempts: the first ``k`` are the baseline's runs, the next ``k`` the
    variant's. The two arms are exchangeable halves of the same model's attempts, so every
    rejection is a false positive. ``k <= R // 2``.

    *A/B* (``pair="A,B"``): the baseline is model A, the variant model B, each with ``k`` of
    its ``R`` attempts drawn without replacement per item, on the same drawn items. The
    true effect is B's mean accuracy minus A's over the items as they are drawn (the pool's
    mean difference, weighted by cluster as the draw is), so rates are power at that effect.
    ``k <= R``; the A/A pool of model A at the same items is its null (:meth:`null_setting`).

    With a ``cluster`` column naming two or more clusters, each experiment draws the same
    number of items from each cluster (``n_items`` split in proportion to the cluster sizes,
    largest remainders), so the cluster codes passed to the protocols are fixed
    (:meth:`clusters`). Shape of a draw: ``(sims, k, n_items)``, as the question-level
    generators of design ``models``: the k runs are decoding repeats of fixed models.

    Parameters
    ----------
    pool : str, default 'matharena_aime_2025_i'
        A pool's name in the pools folder (``sim/llm_pools/README.md``) or a path to a CSV
        file (plain or gzip) with columns ``model, item, attempt, score`` and optionally
        ``cluster``.
    model : str or None
        A/A: the model whose attempts are split; ``None``: one model drawn per experiment.
    pair : str or None
        A/B: ``"A,B"``, baseline model A and variant model B (excludes ``model``).
    n_items : int or None
        Items per experiment (2 to the pool's count); ``None``: every item.
    complete_models : bool, default False
        Read a ragged pool (some (model, item) pairs with fewer attempts than the most) by
        keeping only the models with the full count on every item
        (:func:`evalcal_core.pools.read_pool`); ``False`` refuses a ragged pool in one line.
    """

    pool: str = DEFAULT_POOL
    model: str | None = None
    pair: str | None = None
    n_items: int | None = None
    complete_models: bool = False

    name = "llm_items"
    #: fixed models answering the same items: the runs are decoding repeats, items the sample
    design = MODELS

    def __post_init__(self):
        if not isinstance(self.complete_models, bool):
            raise fail("complete_models", "True or False", self.complete_models, self.owner)
        data = self.data()  # fail at construction, not in a worker
        if self.pair is None and data.attempts < 2:
            # an A/A pair splits one model's attempts in two halves: a single attempt has none
            raise fail("pool", "a pool with >= 2 attempts per (model, item) for an A/A pool "
                       f"(it has {data.attempts}; give pair='A,B' for an A/B pool)",
                       str(self.pool), self.owner)
        if self.model is not None:
            check_choice(self.model, "model", data.models, self.owner)
        if self.pair is not None:
            if self.model is not None:
                raise fail("pair", "left out when 'model' is given (model: an A/A pool; "
                           "pair: an A/B pool)", self.pair, self.owner)
            names = str(self.pair).split(",")
            if (len(names) != 2 or names[0] == names[1]
                    or not all(n in data.models for n in names)):
                raise fail("pair", "two different models of the pool as 'A,B' (one of "
                           f"{', '.join(data.models)})", self.pair, self.owner)
        if self.n_items is not None:
            check_int(self.n_items, "n_items", self.owner, low=2, high=len(data.items))
            if data.clusters is not None and min(self._allocation()) < 1:
                fits = next(m for m in range(2, len(data.items) + 1)
                            if min(self._allocation(m)) >= 1)
                raise fail("n_items", f">= {fits}, so that every cluster gets an item",
                           self.n_items, self.owner)

    # ------------------------------------------------------------------ the pool

    def data(self) -> ItemPool:
        """The pool's result matrix (read once per process)."""
        return load_pool(str(self.pool), complete_models=self.complete_models)

    def data_digest(self) -> str:
        """Fingerprint of the pool's scores: an edited pool file is a new cell key."""
        return content_digest(np.asarray(self.data().scores))

    def _key_params(self) -> dict[str, object]:
        """The parameters that name a cell: ``complete_models`` only when set, so the cells
        of a complete pool keep the keys they had before the parameter existed."""
        params = self.params()
        if not self.complete_models:
            del params["complete_models"]
        return params

    def describe(self) -> str:
        return encode(self._key_params(), sort=False, skip_none=True)

    @property
    def n(self) -> int:
        return int(self.n_items) if self.n_items is not None else len(self.data().items)

    @property
    def binary(self) -> bool:  # type: ignore[override]
        return self.data().scores.dtype == bool

    @property
    def max_k(self) -> int:  # type: ignore[override]
        """Runs per arm: half the attempts (A/A), all of them (A/B)."""
        r = self.data().attempts
        return r if self.pair is not None else r // 2

    def pair_models(self) -> tuple[int, int] | None:
        """Indices of the A/B pair's models, or ``None`` (A/A)."""
        if self.pair is None:
            return None
        a, b = str(self.pair).split(",")
        models = self.data().models
        return models.index(a), models.index(b)

    def _allocation(self, n: int | None = None) -> list[int]:
        """Items drawn per cluster (cluster order), summing to ``n`` (default :attr:`n`)."""
        n = self.n if n is None else n
        sizes = np.bincount(self.data().clusters)
        share = sizes * n / sizes.sum()
        counts = np.floor(share).astype(int)
        # Largest remainders take the items the floors leave (ties: the earlier cluster).
        extra = np.argsort(-(share - counts), kind="stable")[:n - counts.sum()]
        counts[extra] += 1
        return [int(c) for c in counts]

    def clusters(self) -> np.ndarray | None:
        """Cluster code of each drawn item, int ``(n,)`` (the same in every experiment), or
        ``None`` for a pool without clusters."""
        codes = self.data().clusters
        if codes is None:
            return None
        if self.n_items is None:
            return np.asarray(codes)
        return np.repeat(np.arange(len(self._allocation())), self._allocation())

    # ------------------------------------------------------------------ truth

    def fixed_effect(self) -> float:
        """0 for an A/A pool; for A/B, B's minus A's expected accuracy (fraction) over the
        items as drawn (each cluster weighted by its share of the drawn items)."""
        pair = self.pair_models()
        if pair is None:
            return 0.0
        data = self.data()
        means = np.asarray(data.scores, dtype=float).mean(axis=2)
        d = means[pair[1]] - means[pair[0]]
        if data.clusters is None or self.n_items is None:
            return float(d.mean())
        weights = np.asarray(self._allocation()) / self.n
        per_cluster = np.bincount(data.clusters, weights=d) / np.bincount(data.clusters)
        return float(weights @ per_cluster)

    def check_effect(self, delta):
        truth = self.fixed_effect()
        if abs(delta - truth) > 1e-9:
            raise InvalidParameterError(f"The 'effect' of generator llm_items is fixed by the pool "
                                        f"({self.describe()}: {100 * truth:+.4f} pp); got "
                                        f"{100 * delta:+.4f} pp. Omit --effects.")

    def null_setting(self) -> str:
        """An A/A pool is its own null; an A/B pool's is the A/A pool of its baseline model
        on the same items."""
        if self.pair is None:
            return self.describe()
        base = str(self.pair).split(",")[0]
        return encode({**self._key_params(), "model": base, "pair": None}, sort=False,
                      skip_none=True)

    # ------------------------------------------------------------------ draws

    def _items(self, sims, rng) -> np.ndarray:
        """Item indices of each experiment, int ``(sims, n)``, in the order of
        :meth:`clusters` (a random subset per cluster)."""
        data = self.data()
        total = len(data.items)
        if self.n_items is None:
            return np.broadcast_to(np.arange(total), (sims, total))
        if data.clusters is None:
            return pool_rows(rng, sims, total, self.n)
        parts = []
        for code, m in enumerate(self._allocation()):
            members = np.flatnonzero(data.clusters == code)
            parts.append(members[pool_rows(rng, sims, members.size, m)])
        return np.concatenate(parts, axis=1)

    def _draw(self, sims, k, delta, rng):
        data = self.data()
        items = self._items(sims, rng)
        r = data.attempts
        pair = self.pair_models()
        if pair is None:
            models = (np.full(sims, data.models.index(self.model)) if self.model is not None
                      else rng.integers(len(data.models), size=sims))
            # One random permutation of each item's attempts: the first k are the
            # baseline's runs, the next k the variant's (exchangeable halves).
            order = np.argsort(rng.random((sims, self.n, r)), axis=-1)[..., :2 * k]
            runs = np.take_along_axis(data.scores[models[:, None], items], order, axis=-1)
            base, variant = runs[..., :k], runs[..., k:]
        else:
            arms = []
            for m in pair:
                order = np.argsort(rng.random((sims, self.n, r)), axis=-1)[..., :k]
                arms.append(np.take_along_axis(data.scores[m][items], order, axis=-1))
            base, variant = arms
        # (sims, n, k) -> (sims, k, n), contiguous for the protocols' reductions
        return (np.ascontiguousarray(base.transpose(0, 2, 1)),
                np.ascontiguousarray(variant.transpose(0, 2, 1)))
