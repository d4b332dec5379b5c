"""Validated scores of a batch of paired experiments, with what the protocols derive from them.

Inputs are validated once, here; the derived quantities (per-seed metrics, per-question means
and correct counts) are computed on first use and shared by every protocol evaluated on the
same batch.

Binary (0/1) scores may be carried compactly (``bool`` or ``uint8``): every derived quantity
of 0/1 data is an integer count divided by k or n, so it is bit-for-bit the value the float64
path gives. A batch drawn from a pool of recorded runs (:meth:`ScoreBatch.from_pool`) carries
index sets into the pool instead of score copies: its per-seed metrics are gathered from the
pool's, and the ``(..., k, n)`` scores are built only if a protocol asks for them.
"""

from __future__ import annotations

import functools

import numpy as np

from evalcal_core.validate import fail

#: dtypes accepted as 0/1 scores without a float64 copy
COMPACT_DTYPES = (np.dtype(bool), np.dtype(np.uint8))


def _as_scores(x, arg: str) -> np.ndarray:
    if isinstance(x, np.ndarray) and x.dtype == bool:
        # 0/1 by construction and finite: no float copy, no scan.
        a = x
    else:
        try:
            a = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise fail(arg, "an array of numbers", got=f"a {type(x).__name__}") from None
    if a.ndim == 1:
        # Per-seed metrics without questions: (k,) means k seeds with one score each.
        a = a[:, None]
    if a.ndim < 2:
        raise fail(arg, "of shape (..., k, n) (seeds, questions) or (k,) for per-seed metrics",
                   got=f"shape {a.shape}")
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        raise fail(arg, "an array with at least one seed and one question", got=f"shape {a.shape}")
    if a.dtype != bool and not np.all(np.isfinite(a)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise fail(arg, "finite", got=f"{float(a[bad])} at index {bad}")
    return a


def _as_clusters(clusters, n: int) -> np.ndarray:
    """Cluster codes of the ``n`` questions as consecutive ints ``0 .. G - 1`` (read-only)."""
    a = np.asarray(clusters)
    whole = a.dtype.kind in "iu" or (a.dtype.kind == "f" and bool(np.all(np.isfinite(a)))
                                     and bool(np.all(a == np.round(a))))
    if a.dtype == bool or not whole:
        raise fail("clusters", "an array of integer cluster codes, one per question",
                   got=f"dtype {a.dtype}")
    if a.shape != (n,):
        raise fail("clusters", f"of shape (n,) = ({n},), one code per question",
                   got=f"shape {a.shape}")
    codes = np.unique(a, return_inverse=True)[1].reshape(n).astype(np.intp)
    codes.setflags(write=False)
    return codes


def _is_binary(a: np.ndarray) -> bool:
    if a.dtype == bool:
        return True
    return bool(np.all((a == 0) | (a == 1)))


def _count_dtype(k: int):
    # Counts of k runs: uint8 sums are exact while k < 256 and read an eighth of int64.
    return np.uint8 if k < 256 else np.int64


#: questions summed at once in uint16 (exact: at most 65,535 ones)
_U16_BLOCK = 2**16 - 1


def _count_ones(scores: np.ndarray) -> np.ndarray:
    # uint8 -> uint16 sums are about 8x faster than bool -> int64 (SIMD at narrow width);
    # blocks of at most 65,535 questions cannot overflow.
    u = scores.view(np.uint8)
    n = u.shape[-1]
    total = np.zeros(u.shape[:-1], dtype=np.int64)
    for start in range(0, n, _U16_BLOCK):
        total += u[..., start:start + _U16_BLOCK].sum(axis=-1, dtype=np.uint16)
    return total


def seed_mean(scores: np.ndarray) -> np.ndarray:
    """Mean over the last (question) axis; for 0/1 scores an exact integer count over n,
    divided by n, which is bit for bit the float64 mean."""
    if scores.dtype in COMPACT_DTYPES:
        return _count_ones(scores) / scores.shape[-1]
    return scores.mean(axis=-1)


class ScoreBatch:
    """Scores of the baseline and the variant, shape ``(..., k, n)``, validated.

    Row ``i`` of both arms used seed ``i``; ``n`` questions per run (``n = 1`` for per-seed
    metrics). Leading axes are independent experiments. Build with :meth:`from_arrays`
    (any array-likes), directly from arrays already known to be valid (float64, or
    ``bool``/``uint8`` 0/1 scores with ``binary=True``), or with :meth:`from_pool`.

    Attributes
    ----------
    base, variant : ndarray, shape (..., k, n)
        Scores (fraction for accuracy); float64, or bool/uint8 for binary data.
    binary : bool
        Every score is 0 or 1.
    clusters : ndarray of int, shape (n,), or None
        Cluster of each question, as codes ``0 .. G - 1`` (``G = n_clusters``); ``None``
        when the questions are not clustered. Fixed across the batch's experiments.
    """

    def __init__(self, base: np.ndarray | None, variant: np.ndarray | None, binary: bool, *,
                 shape: tuple[int, ...] | None = None, scores=None, clusters=None,
                 **derived):
        if base is not None:
            self.__dict__["base"] = base
            self.__dict__["variant"] = variant
            shape = base.shape
        self.shape = tuple(shape)
        self.binary = bool(binary)
        self.clusters = None if clusters is None else _as_clusters(clusters, self.shape[-1])
        # ``scores()`` returns (base, variant) for a batch that holds no arrays yet.
        self._scores = scores
        self._pool = self._order = None
        for name, value in derived.items():
            if not isinstance(getattr(type(self), name, None), functools.cached_property):
                raise TypeError(f"ScoreBatch has no derived quantity {name!r}")
            self.__dict__[name] = value

    @classmethod
    def from_arrays(cls, base, variant, clusters=None) -> ScoreBatch:
        """Validate ``base`` and ``variant`` (array-likes or a batch) into a batch.

        Parameters
        ----------
        base, variant : array_like, shape (..., k, n) or (k,), or a batch and ``None``
        clusters : array_like of int, shape (n,), optional
            Cluster code of each question (any integers; recoded ``0 .. G - 1``). Given with
            a batch, it returns a batch with these clusters sharing the batch's arrays.

        Raises
        ------
        ValueError
            Naming the argument: not numeric, wrong shape, empty, non-finite, or shapes that
            differ; clusters not integers or not of shape (n,).
        """
        if isinstance(base, ScoreBatch) and variant is None:
            return base if clusters is None else base.with_clusters(clusters)
        base = _as_scores(base, "base")
        variant = _as_scores(variant, "variant")
        if base.shape != variant.shape:
            raise fail(("base", "variant"), "of the same shape",
                       got=f"{base.shape} and {variant.shape}")
        binary = _is_binary(base) and _is_binary(variant)
        if base.dtype != variant.dtype:
            base, variant = base.astype(float), variant.astype(float)
        return cls(base, variant, binary, clusters=clusters)

    @classmethod
    def from_counts(cls, correct_base, correct_variant, k: int, clusters=None) -> ScoreBatch:
        """Binary experiments known by each question's correct runs (of ``k``) alone.

        For protocols that read nothing but these counts and what derives from them
        (per-question means and deltas: ``Protocol.reads_runs`` false); asking the batch
        for its runs or per-seed metrics raises ``RuntimeError``.

        Parameters
        ----------
        correct_base, correct_variant : ndarray of int, shape (..., n)
            Correct runs per question, in ``0 .. k`` (not checked: a generator's draw).
        k : int
            Runs per arm.
        clusters : array_like of int, shape (n,), optional
        """
        correct_base = np.asarray(correct_base, dtype=np.int64)
        correct_variant = np.asarray(correct_variant, dtype=np.int64)
        shape = correct_base.shape[:-1] + (int(k), correct_base.shape[-1])

        def no_runs():
            raise RuntimeError("this batch holds per-question counts only: a protocol that "
                               "reads runs or per-seed metrics needs a batch of runs")
        return cls(None, None, True, shape=shape, scores=no_runs, clusters=clusters,
                   correct_base=correct_base, correct_variant=correct_variant)

    def with_clusters(self, clusters) -> ScoreBatch:
        """The same experiments with question clusters ``clusters`` (shape ``(n,)``).

        The new batch shares this one's arrays and the derived quantities computed so far.
        """
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.__dict__.pop("_shared", None)
        other.clusters = _as_clusters(clusters, self.n)
        return other

    @property
    def n_clusters(self) -> int:
        """Number of question clusters G (0 when not clustered)."""
        return 0 if self.clusters is None else int(self.clusters.max()) + 1

    @classmethod
    def from_pool(cls, pool, order) -> ScoreBatch:
        """Experiments that each use the pool's seeds ``order[i]`` (index sets, no copies).

        Parameters
        ----------
        pool : PoolScores
            The pool's scores and their per-seed metrics, computed once.
        order : ndarray of int, shape (m, k)
            Seeds of each experiment; row ``i`` of both arms is pool seed ``order[:, i]``.
        """
        order = np.asarray(order)
        m, k = order.shape
        derived = {"seed_base": pool.seed_base[order], "seed_variant": pool.seed_variant[order]}
        if pool.binary:
            derived["seed_discordant"] = pool.seed_discordant[order]
        batch = cls(None, None, pool.binary, shape=(m, k, pool.n),
                    scores=lambda: (pool.base[order], pool.variant[order]), **derived)
        batch._pool, batch._order = pool, order
        return batch

    @property
    def pool(self) -> PoolScores | None:
        """The :class:`PoolScores` of a batch built by :meth:`from_pool`; ``None`` otherwise."""
        return self._pool

    @property
    def order(self) -> np.ndarray | None:
        """Pool seeds of each experiment, shape ``(m, k)``, of a batch built by
        :meth:`from_pool` (row ``i`` of both arms is pool seed ``order[:, i]``); ``None``
        for a batch that holds its own arrays."""
        return self._order

    def shared(self, key: str, compute):
        """``compute()``, once per batch: a quantity several protocols derive alike."""
        memo = self.__dict__.setdefault("_shared", {})
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    # ---------------------------------------------------------------------------------------
    # Shape

    @property
    def k(self) -> int:
        """Paired seeds per experiment."""
        return self.shape[-2]

    @property
    def n(self) -> int:
        """Questions per run (1 for per-seed metrics)."""
        return self.shape[-1]

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Shape of the leading (experiment) axes."""
        return self.shape[:-2]

    # ---------------------------------------------------------------------------------------
    # Scores, built on first use for a pool batch

    @functools.cached_property
    def _arrays(self):
        return self._scores()

    @functools.cached_property
    def base(self) -> np.ndarray:
        """Baseline scores, shape ``(..., k, n)``."""
        return self._arrays[0]

    @functools.cached_property
    def variant(self) -> np.ndarray:
        """Variant scores, shape ``(..., k, n)``."""
        return self._arrays[1]

    # ---------------------------------------------------------------------------------------
    # Derived quantities

    @functools.cached_property
    def seed_base(self) -> np.ndarray:
        """Per-seed metric of the baseline, shape ``(..., k)`` (mean over questions)."""
        return seed_mean(self.base)

    @functools.cached_property
    def seed_variant(self) -> np.ndarray:
        """Per-seed metric of the variant, shape ``(..., k)``."""
        return seed_mean(self.variant)

    @functools.cached_property
    def seed_deltas(self) -> np.ndarray:
        """Per-seed deltas, variant minus baseline, shape ``(..., k)``."""
        return self.seed_variant - self.seed_base

    @functools.cached_property
    def seed_discordant(self) -> np.ndarray:
        """Binary scores: questions on which seed i's two arms differ, int64 ``(..., k)``.

        Equal to the per-seed sum of squared per-question deltas, ``sum_q (v - b)**2``.
        """
        return _count_ones(self.base != self.variant)

    @functools.cached_property
    def question_base(self) -> np.ndarray:
        """Per-question mean of the baseline over its k runs, shape ``(..., n)``."""
        if self.binary:
            return self.correct_base / self.k
        return self.base.mean(axis=-2)

    @functools.cached_property
    def question_variant(self) -> np.ndarray:
        """Per-question mean of the variant over its k runs, shape ``(..., n)``."""
        if self.binary:
            return self.correct_variant / self.k
        return self.variant.mean(axis=-2)

    @functools.cached_property
    def question_deltas(self) -> np.ndarray:
        """Per-question delta of the k-run means, variant minus baseline, ``(..., n)``."""
        return self.question_variant - self.question_base

    @functools.cached_property
    def correct_deltas(self) -> np.ndarray:
        """Binary scores: variant minus baseline correct runs per question, int64 ``(..., n)``."""
        return self.correct_variant - self.correct_base

    @functools.cached_property
    def correct_base(self) -> np.ndarray:
        """Binary scores: runs (of k) that got each question right, int64 ``(..., n)``."""
        return self._correct(0)

    @functools.cached_property
    def correct_variant(self) -> np.ndarray:
        """Binary scores: the variant's correct runs per question, integers ``(..., n)``."""
        return self._correct(1)

    def first_seed(self) -> ScoreBatch:
        """The batch restricted to seed 0 (k = 1)."""
        derived = {name: self.__dict__[name][..., :1] for name in ("seed_base", "seed_variant")
                   if name in self.__dict__}
        if "base" in self.__dict__:
            return ScoreBatch(self.base[..., :1, :], self.variant[..., :1, :], self.binary,
                              clusters=self.clusters, **derived)
        pool, order = self._pool, self._order[:, :1]
        return ScoreBatch(None, None, self.binary, shape=self.shape[:-2] + (1, self.n),
                          scores=lambda: (pool.base[order], pool.variant[order]),
                          clusters=self.clusters, **derived)

    # ---------------------------------------------------------------------------------------

    def _correct(self, arm: int) -> np.ndarray:
        dtype = _count_dtype(self.k)
        if "base" not in self.__dict__ and self._pool is not None and self._pool.binary:
            # Sum the k drawn rows of the uint8 pool, one seed at a time: no (m, k, n) copy.
            rows = (self._pool.base, self._pool.variant)[arm]
            out = np.zeros(self.shape[:-2] + (self.n,), dtype=dtype)
            for i in range(self.k):
                out += rows[self._order[:, i]]
        else:
            scores = (self.base, self.variant)[arm]
            if scores.dtype in COMPACT_DTYPES:
                out = scores.view(np.uint8).sum(axis=-2, dtype=dtype)
            else:
                return scores.sum(axis=-2).astype(np.int64)
        # int64 for the callers (differences of counts must not wrap); only n values.
        return out.astype(np.int64, copy=False)


class PoolScores:
    """A pool of recorded paired runs, with its per-seed metrics computed once.

    Parameters
    ----------
    base, variant : ndarray, shape (pool_size, n)
        Scores of the pool's seeds; 0/1 scores are stored as uint8.
    binary : bool
    """

    def __init__(self, base, variant, binary: bool):
        base = np.asarray(base)
        variant = np.asarray(variant)
        if binary:
            base, variant = base.astype(np.uint8), variant.astype(np.uint8)
        self.base, self.variant, self.binary = base, variant, bool(binary)
        self.n = base.shape[-1]
        self.seed_base = seed_mean(base)
        self.seed_variant = seed_mean(variant)
        if binary:
            self.seed_discordant = _count_ones(base != variant)
