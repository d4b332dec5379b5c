"""``llm_items`` and the LLM pools: the real pool against its published source, the A/A and
A/B draws against exact sampling-without-replacement laws, validation, and the
calibrate command on the pool."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from item_pools import shared_pool, write_pool
from scipy import stats

from sim import generators
from sim.generators.llm_items import DEFAULT_POOL

MODELS = ("m0", "m1", "m2", "m3")


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """A pool written for the tests: 4 models x 15 items x 4 attempts, 0/1 (MathArena's
    shape; the real pool is read only where its own numbers are checked)."""
    return str(write_pool(tmp_path_factory.mktemp("pool"), models=MODELS, items=15,
                          attempts=4, seed=11))


def _pool_csv(tmp_path, rows, name="pool.csv"):
    path = tmp_path / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def _clustered_pool(tmp_path, sizes=(5, 3, 2), attempts=4, models=("a", "b"), seed=0):
    """A random 0/1 pool with clusters of the given sizes."""
    rng = np.random.default_rng(seed)
    rows = []
    item = 0
    for c, size in enumerate(sizes):
        for _ in range(size):
            for m in models:
                p = rng.random()
                rows += [{"model": m, "item": f"q{item:02d}", "attempt": a,
                          "score": int(rng.random() < p), "cluster": f"c{c}"}
                         for a in range(attempts)]
            item += 1
    return _pool_csv(tmp_path, rows)


# ------------------------------------------------------------------------------------------
# The real MathArena pool (shared, not shipped; its builder: tests/sim/test_pool_builders.py)


def test_real_pool_counts_and_published_averages():
    """16 models x 15 AIME I 2025 problems x 4 attempts, 0/1 scores, read by name. Each
    model's accuracy equals the "Avg" row MathArena published (matharena.ai,
    static/js/table_data.js at 8fdd9ab): o3-mini (high) 80.0%, o1 (medium) 78.33%,
    claude-3.5-sonnet 3.33%."""
    shared = shared_pool(DEFAULT_POOL)
    frame = pd.read_csv(shared)
    data = generators.get("llm_items", model="deepseek-r1").data()
    assert data.scores.shape == (16, 15, 4) and Path(data.source) == shared.resolve()
    assert frame.groupby("model").size().nunique() == 1
    assert frame["model"].nunique() == 16 and frame["item"].nunique() == 15
    assert set(frame["attempt"]) == {0, 1, 2, 3}
    assert set(frame["score"]) == {0, 1}
    acc = 100 * frame.groupby("model")["score"].mean()
    published = {"o3-mini-high": 80.0, "o1-medium": 78.33333333333334,
                 "claude-3.5-sonnet": 3.3333333333333335}
    for model, value in published.items():
        assert acc[model] == pytest.approx(value, abs=1e-9)


# ------------------------------------------------------------------------------------------
# A/A draws


def test_aa_halves_are_a_permutation_of_the_items_attempts(pool):
    """At k = R / 2 the two halves together are exactly the item's R attempts (a draw
    without replacement): their sum is the item's count of correct attempts."""
    g = generators.get("llm_items", pool=pool, model="m1")
    data = g.data()
    counts = data.scores[data.models.index("m1")].sum(axis=1)
    b, v = g.draw(200, 2, 0.0, np.random.default_rng(1))
    np.testing.assert_array_equal(b.sum(axis=1) + v.sum(axis=1),
                                  np.broadcast_to(counts, (200, g.n)))
    assert g.fixed_effect() == 0.0 and g.null_setting() == g.describe()


def test_aa_one_run_each_follows_the_hypergeometric_law(pool):
    """k = 1: base and variant are two attempts drawn without replacement from the item's R,
    so P(both right) = c (c - 1) / (R (R - 1)) and P(base right) = c / R (scipy's
    hypergeometric pmf); tolerance 4 binomial SE of the Monte Carlo frequency."""
    g = generators.get("llm_items", pool=pool, model="m2")
    data = g.data()
    r = data.attempts
    counts = data.scores[data.models.index("m2")].sum(axis=1)
    sims = 20_000
    b, v = g.draw(sims, 1, 0.0, np.random.default_rng(2))
    b, v = b[:, 0, :], v[:, 0, :]
    for q, c in enumerate(counts):
        both = stats.hypergeom(r, int(c), 2).pmf(2)
        one = int(c) / r
        for freq, p in (((b[:, q] & v[:, q]).mean(), both), (b[:, q].mean(), one),
                        (v[:, q].mean(), one)):
            assert abs(freq - p) <= 4 * np.sqrt(p * (1 - p) / sims) + 1e-12


def test_aa_random_model_and_item_subsets(pool):
    """model=None draws the model uniformly per experiment; n_items draws distinct items,
    each item in a fraction n / N of the experiments (4 binomial SE)."""
    g = generators.get("llm_items", pool=pool, n_items=5)
    data = g.data()
    sims = 4000
    rng = np.random.default_rng(3)
    items = g._items(sims, rng)
    assert items.shape == (sims, 5)
    assert (np.sort(items, axis=1)[:, 1:] != np.sort(items, axis=1)[:, :-1]).all()
    freq = np.bincount(items.ravel(), minlength=len(data.items)) / sims
    p = 5 / len(data.items)
    assert np.all(np.abs(freq - p) <= 4 * np.sqrt(p * (1 - p) / sims))
    # base + variant at k = 2 is the drawn model's correct count on each drawn item (the
    # draw's own order of random numbers: items, then models; a consistency check), and
    # the models are uniform (4 binomial SE).
    sims = 4000
    b, v = g.draw(sims, 2, 0.0, np.random.default_rng(4))
    rng = np.random.default_rng(4)
    items = g._items(sims, rng)
    models = rng.integers(len(data.models), size=sims)
    counts = data.scores.sum(axis=2)  # (models, items)
    np.testing.assert_array_equal(b.sum(axis=1) + v.sum(axis=1), counts[models[:, None], items])
    freq = np.bincount(models, minlength=len(data.models)) / sims
    p = 1 / len(data.models)
    assert np.all(np.abs(freq - p) <= 4 * np.sqrt(p * (1 - p) / sims))


def test_same_rng_same_draw_other_rng_other_draw(pool):
    g = generators.get("llm_items", pool=pool, n_items=10)
    a = g.draw(50, 1, 0.0, np.random.default_rng(9))
    b = g.draw(50, 1, 0.0, np.random.default_rng(9))
    c = g.draw(50, 1, 0.0, np.random.default_rng(10))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


# ------------------------------------------------------------------------------------------
# A/B draws


def test_ab_truth_is_the_pools_mean_difference_and_draws_are_unbiased(pool):
    """fixed_effect = mean over items of (B's - A's attempt mean), computed here from the
    CSV with pandas; the mean drawn difference matches it (4 Monte Carlo SE)."""
    pair = "m0,m3"
    g = generators.get("llm_items", pool=pool, pair=pair, n_items=8)
    frame = pd.read_csv(pool)
    acc = frame.groupby("model")["score"].mean()
    truth = acc["m3"] - acc["m0"]
    assert g.fixed_effect() == pytest.approx(truth, abs=1e-12)
    sims = 20_000
    b, v = g.draw(sims, 3, truth, np.random.default_rng(5))
    d = v.mean(axis=(1, 2)) - b.mean(axis=(1, 2))
    assert abs(d.mean() - truth) <= 4 * d.std(ddof=1) / np.sqrt(sims)
    assert g.max_k == 4
    null = generators.get("llm_items", pool=pool, model="m0", n_items=8)
    assert g.null_setting() == null.describe()


def test_ab_effect_is_fixed(pool):
    g = generators.get("llm_items", pool=pool, pair="m0,m1")
    with pytest.raises(ValueError, match=r"fixed by the pool .*Omit --effects"):
        g.draw(2, 1, 0.0, 0)
    with pytest.raises(ValueError, match="'k'"):
        generators.get("llm_items", pool=pool).draw(2, 3, 0.0, 0)


# ------------------------------------------------------------------------------------------
# A user's pool with clusters


def test_clustered_pool_draws_a_fixed_share_per_cluster(tmp_path):
    """n_items split by largest remainders (10 items in clusters of 5, 3, 2; n = 6 -> 3, 2, 1
    ... as 6 * (0.5, 0.3, 0.2) = (3, 1.8, 1.2) -> (3, 1, 1) + the largest remainder -> (3, 2,
    1)); every drawn item sits in the cluster its code says."""
    path = _clustered_pool(tmp_path)
    g = generators.get("llm_items", pool=path, model="a", n_items=6)
    np.testing.assert_array_equal(g.clusters(), [0, 0, 0, 1, 1, 2])
    data = g.data()
    items = g._items(500, np.random.default_rng(6))
    np.testing.assert_array_equal(data.clusters[items], np.broadcast_to(g.clusters(), (500, 6)))
    full = generators.get("llm_items", pool=path, model="a")
    np.testing.assert_array_equal(full.clusters(), data.clusters)
    # A/B truth weights each cluster by its share of the drawn items.
    ab = generators.get("llm_items", pool=path, pair="a,b", n_items=6)
    means = np.asarray(data.scores, dtype=float).mean(axis=2)
    d = means[1] - means[0]
    per = [d[data.clusters == c].mean() for c in range(3)]
    assert ab.fixed_effect() == pytest.approx(np.dot([3 / 6, 2 / 6, 1 / 6], per))


@pytest.mark.parametrize("rows, match", [
    ([{"model": "a", "item": 1, "attempt": 0}], r"lacks the column\(s\) score"),
    ([{"model": "a", "item": 1, "attempt": a, "score": 2} for a in range(2)],
     r"score that is not a number in \[0, 1\]: line 2 has '2'"),
    ([{"model": "a", "item": 1, "attempt": 0, "score": 1}] * 2, "attempt '0' twice"),
    ([{"model": m, "item": q, "attempt": a, "score": 1} for m, q in (("a", 1), ("a", 2),
                                                                     ("b", 1))
      for a in range(2)], r"no attempt of model 'b' on item '2'"),
    ([{"model": "a", "item": 1, "attempt": 0, "score": 1}],
     r"'pool'.*>= 2 attempts per \(model, item\) for an A/A pool \(it has 1"),
])
def test_bad_pool_files(tmp_path, rows, match):
    path = _pool_csv(tmp_path, rows)
    with pytest.raises(ValueError, match=match):
        generators.get("llm_items", pool=path)


@pytest.mark.parametrize("params, match", [
    ({"model": "nope"}, r"The 'model' parameter of generator llm_items must be one of .*"
                        r"Got 'nope' instead"),
    ({"pair": "m0"}, r"'pair'.*two different models"),
    ({"pair": "m0,m0"}, r"'pair'.*two different models"),
    ({"pair": "m0,m1", "model": "m0"}, r"'pair'.*left out when 'model'"),
    ({"n_items": 1}, r"'n_items'.*>= 2 and <= 15. Got 1"),
    ({"n_items": 16}, r"'n_items'.*Got 16"),
])
def test_bad_parameters(params, match, pool):
    with pytest.raises(ValueError, match=match):
        generators.get("llm_items", pool=pool, **params)


@pytest.mark.parametrize("pool_arg, match", [
    ("nope", r"'pool' parameter of generator llm_items: no pool named 'nope' in \$EVALCAL_POOLS"),
    ("missing.csv", r"pool 'missing.csv' does not exist"),
])
def test_bad_pool_names(pool_arg, match, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCAL_POOLS", str(tmp_path))
    with pytest.raises(ValueError, match=match):
        generators.get("llm_items", pool=pool_arg)


def test_pool_by_name_from_the_pools_folder(tmp_path, monkeypatch):
    """A name resolves to NAME.csv.gz in $EVALCAL_POOLS (a gzip read by its magic bytes)."""
    import gzip

    frame = pd.read_csv(write_pool(tmp_path, models=("x", "y"), items=6, attempts=2))
    (tmp_path / "mine.csv.gz").write_bytes(gzip.compress(frame.to_csv(index=False).encode()))
    monkeypatch.setenv("EVALCAL_POOLS", str(tmp_path))
    data = generators.get("llm_items", pool="mine", model="x").data()
    np.testing.assert_array_equal(
        data.scores.sum(axis=2), frame.pivot_table("score", "model", "item", "sum").to_numpy())


def test_default_pool_absent_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCAL_POOLS", str(tmp_path))
    with pytest.raises(ValueError, match=rf"no pool named '{DEFAULT_POOL}' in \$EVALCAL_POOLS"):
        generators.get("llm_items")


def test_clustered_pool_needs_an_item_per_cluster(tmp_path):
    path = _clustered_pool(tmp_path, sizes=(8, 1, 1))
    with pytest.raises(ValueError, match=r"'n_items'.*>= \d+, so that every cluster gets"):
        generators.get("llm_items", pool=path, n_items=3)


def test_ragged_pool_is_refused_unless_complete_models(tmp_path):
    """A ragged pool (model 'c' lacks an attempt on one item) is refused in one line; with
    ``complete_models=True`` it draws from the complete models only, and the parameter
    enters the cell's key only when set (a complete pool's keys are unchanged)."""
    frame = pd.read_csv(write_pool(tmp_path, models=("a", "b", "c"), items=6, attempts=4))
    short = (frame["model"] == "c") & (frame["item"] == "q002") & (frame["attempt"] == 3)
    path = _pool_csv(tmp_path, frame[~short], name="ragged.csv")
    with pytest.raises(ValueError, match=r"has ragged attempts: 1 of 18 .*complete_models"):
        generators.get("llm_items", pool=path)
    g = generators.get("llm_items", pool=path, complete_models=True)
    assert tuple(g.data().models) == ("a", "b") and g.data().dropped == ("c",)
    assert g.describe().endswith(";complete_models=True")
    with pytest.raises(ValueError, match=r"'model' parameter .*Got 'c' instead"):
        generators.get("llm_items", pool=path, model="c", complete_models=True)
    with pytest.raises(ValueError, match=r"'complete_models' parameter .*True or False"):
        generators.get("llm_items", pool=path, complete_models="yes")
    whole = generators.get("llm_items", pool=str(tmp_path / "pool.csv"))
    assert "complete_models" not in whole.describe()
    assert "complete_models" not in whole.null_setting()


# ------------------------------------------------------------------------------------------
# The calibrate command


def test_calibrate_runs_on_the_llm_pool(tmp_path, pool):
    """``python -m sim.calibrate --generator llm_items`` runs like on the CIFAR pools: the
    effect-0 rows of the A/A pool at k = 1, 2 (false-positive rates in [0, 1])."""
    out = tmp_path / "cal"
    root = Path(generators.__file__).resolve().parents[2]
    res = subprocess.run([sys.executable, "-m", "sim.calibrate", "--generator", "llm_items",
                          "--param", f"pool={pool}", "model=m1", "--k", "1", "2",
                          "--sims", "60",
                          "--protocols", "paired_t_questions", "mcnemar", "--out", str(out),
                          "--no-plot", "--quiet"], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(root)})
    assert res.returncode == 0, res.stderr
    frame = pd.read_csv(out / "calibration.csv")
    assert set(frame["effect_pp"]) == {0.0}
    assert set(frame["k"]) == {1, 2}
    assert set(frame["protocol"]) == {"paired_t_questions", "mcnemar"}
