"""The compact data paths decide exactly as materialised float64 arrays do.

Consistency checks (no outside reference): every protocol is evaluated, with the same
``rng`` seed, on

* plain float64 arrays through the public ``evaluate(base, variant)`` (validated, the
  materialised reference: float scores, the protocols' sort/percentile code paths),
* a batch of ``bool`` scores (what question-level generators now emit),
* a batch of index sets into a pool (:meth:`ScoreBatch.from_pool`, what ``real_pool`` now
  yields),

on random, lattice-tied and constant inputs, and every field of the results must be
identical (not close: the speed must not change a decision or an interval end).
"""

from __future__ import annotations

import numpy as np
import pytest
from _protocol_checks import plain

import protocols
from protocols import ScoreBatch
from protocols._batch import PoolScores
from protocols._resample import resampled_run_picks, resampled_run_picks_binary

FIELDS = ("estimate", "ci_low", "ci_high", "p_value", "significant")
SMALL = {"n_resamples": 200}


def _protocol(name):
    own = {k: v for k, v in SMALL.items() if protocols.PROTOCOLS.accepts(name, k)}
    return plain(name, **own)


def _pool_and_order(kind, seed=0, pool_size=9, n=40, m=6, k=4):
    rng = np.random.default_rng(seed)
    if kind == "random":
        base = rng.random((pool_size, n)) < 0.7
        variant = rng.random((pool_size, n)) < 0.75
    elif kind == "lattice":
        # every seed answers the same question pattern: per-seed metrics tie exactly and
        # per-question counts take two values only
        row = np.arange(n) % 3 == 0
        base = np.broadcast_to(row, (pool_size, n)).copy()
        variant = base.copy()
        variant[::2, :2] = ~variant[::2, :2]
    else:  # constant
        base = np.ones((pool_size, n), bool)
        variant = np.ones((pool_size, n), bool)
    order = np.argsort(rng.random((m, pool_size)), axis=1)[:, :k]
    return base, variant, order


def _same(a, b):
    for field in FIELDS:
        x, y = getattr(a, field), getattr(b, field)
        assert np.array_equal(x, y, equal_nan=True), field


@pytest.mark.parametrize("kind", ["random", "lattice", "constant"])
@pytest.mark.parametrize("name", protocols.names())
def test_bool_and_pool_batches_equal_float_arrays(name, kind):
    base, variant, order = _pool_and_order(kind)
    proto = _protocol(name)
    fb, fv = base[order].astype(float), variant[order].astype(float)
    reference = proto.evaluate(fb, fv, rng=3)
    _same(proto.evaluate(ScoreBatch(base[order], variant[order], True), rng=3), reference)
    _same(proto.evaluate(ScoreBatch.from_arrays(base[order], variant[order]), rng=3),
          reference)
    pool = PoolScores(base.astype(float), variant.astype(float), binary=True)
    _same(proto.evaluate(ScoreBatch.from_pool(pool, order), rng=3), reference)


@pytest.mark.parametrize("name", [n for n in protocols.names()
                                  if not protocols.get(n).binary])
def test_float_pool_batch_equals_float_arrays(name):
    rng = np.random.default_rng(5)
    base = rng.normal(0.8, 0.1, (7, 30))
    variant = base + rng.normal(0.01, 0.05, (7, 30))
    order = np.argsort(rng.random((5, 7)), axis=1)[:, :3]
    proto = _protocol(name)
    pool = PoolScores(base, variant, binary=False)
    _same(proto.evaluate(ScoreBatch.from_pool(pool, order), rng=1),
          proto.evaluate(base[order], variant[order], rng=1))


def test_pool_batch_derives_the_arrays_and_counts():
    base, variant, order = _pool_and_order("random", n=70_000, m=3)
    batch = ScoreBatch.from_pool(PoolScores(base, variant, True), order)
    ref = ScoreBatch.from_arrays(base[order].astype(float), variant[order].astype(float))
    for name in ("seed_base", "seed_variant", "seed_deltas", "question_base",
                 "question_variant", "correct_base", "correct_variant"):
        assert np.array_equal(getattr(batch, name), getattr(ref, name)), name
        assert getattr(batch, name).dtype == getattr(ref, name).dtype, name
    assert np.array_equal(batch.base, base[order])
    first = batch.first_seed()
    assert first.shape == (3, 1, 70_000)
    assert np.array_equal(first.seed_deltas, ref.first_seed().seed_deltas)
    assert np.array_equal(first.base, base[order[:, :1]])


def test_pool_and_order_are_public_read_only_and_survive_clusters():
    base, variant, order = _pool_and_order("random")
    pool = PoolScores(base, variant, True)
    batch = ScoreBatch.from_pool(pool, order)
    assert batch.pool is pool and np.array_equal(batch.order, order)
    clustered = batch.with_clusters(np.arange(base.shape[1]) % 2)
    assert clustered.pool is pool and np.array_equal(clustered.order, order)
    with pytest.raises(AttributeError):
        batch.order = order
    plain_batch = ScoreBatch.from_arrays(base[order], variant[order])
    assert plain_batch.pool is None and plain_batch.order is None


def test_run_picks_from_counts_consume_the_same_stream():
    """The counts path draws exactly the random numbers of the materialised one."""
    rng = np.random.default_rng(0)
    scores = (rng.random((4, 6, 50)) < 0.6).astype(float)
    a = resampled_run_picks(scores, 100, np.random.default_rng(9))
    b = resampled_run_picks_binary(scores.sum(axis=-2).astype(np.int64), 6, 100,
                                   np.random.default_rng(9))
    assert np.array_equal(a, b)
