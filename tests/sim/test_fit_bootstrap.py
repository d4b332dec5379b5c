"""The fit check's parametric bootstrap (:mod:`sim.fit_bootstrap`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

import sim.fit_bootstrap
from sim import generators
from sim.fit_bootstrap import ModelPool, null_diffs
from sim.grid import calibrate
from sim.pool_summary import fit_check

MODEL = generators.get("seed_question", n_questions=300, sd_seed=0.2, rho=0.5)


def test_model_pool_draws_k_distinct_seeds_of_one_fixed_pool():
    """One pool per stream (the same on every call), different pools for other streams,
    and each experiment's k seeds are k distinct rows of that pool."""
    pool = ModelPool(parent=MODEL, size=12, stream=5, effect=0.0)
    base, variant = pool.pool()
    assert base.shape == variant.shape == (12, 300)
    again = ModelPool(parent=MODEL, size=12, stream=5, effect=0.0).pool()
    assert np.array_equal(again[0], base) and np.array_equal(again[1], variant)
    other = ModelPool(parent=MODEL, size=12, stream=6, effect=0.0).pool()[0]
    assert not np.array_equal(other, base)
    b, v = pool.draw(50, 4, 0.0, np.random.default_rng(1))
    rows = {row.tobytes(): i for i, row in enumerate(base)}
    for experiment in b:
        picked = [rows[row.tobytes()] for row in experiment]
        assert len(set(picked)) == 4
    assert pool.max_k == 12 and pool.binary and pool.n == 300


def test_model_pool_fixes_its_effect():
    pool = ModelPool(parent=MODEL, size=12, stream=5, effect=0.01)
    with pytest.raises(ValueError, match=r"fixed at \+1.0000 pp; got \+0.0000 pp"):
        pool.draw(2, 3, 0.0, 0)
    assert "model_pool=5;size=12;effect=0.01" in pool.describe()


def test_null_diffs_arithmetic_by_hand(monkeypatch):
    """With the runner replaced by fixed rates, the columns are the formulas of the
    docstring: replicate diffs b - a of 0.10 - 0.05 and 0.20 - 0.05 (100 experiments each)
    give mean 0.10, spread var 0.005 less the mean Monte Carlo variance, and
    null_mean_se = sqrt(0.005 / 2)."""
    rates = {}

    def fake(requests, run, **_):
        sims = run.sims
        rows = []
        for i, q in enumerate(requests):
            fitted_side = q.generator.name == "seed_question"
            rep = len([r for r in requests[:i] if r.generator.name == q.generator.name
                       and r.protocol == q.protocol and r.k == q.k])
            rate = (0.10 if rep == 0 else 0.20) if fitted_side else 0.05
            rates[(q.generator.describe(), q.protocol, q.k)] = rate
            rows.append(dict(generator_params=q.generator.describe(), protocol=q.protocol,
                             k=q.k, rate=rate, sims=sims))
        return pd.DataFrame(rows)

    monkeypatch.setattr(sim.fit_bootstrap, "run_cells", fake)
    out = null_diffs(MODEL, 0.0, True, 12, [3], ["paired_t"], 2, seed=0, sims=100)
    row = out.iloc[0]
    assert row.null_reps == 2 and row.null_mean == pytest.approx(0.10)
    mc = np.mean([0.05 * 0.95 / 99 + 0.10 * 0.90 / 99, 0.05 * 0.95 / 99 + 0.20 * 0.80 / 99])
    assert row.null_sd == pytest.approx(np.sqrt(0.005 - mc))
    assert row.null_mean_se == pytest.approx(np.sqrt(0.005 / 2))
    assert null_diffs(MODEL, 0.0, True, 12, [3], ["paired_t"], 0, seed=0, sims=100).empty


@dataclass(frozen=True)
class _Pool:
    """What fit_check reads of a real pool, around a simulated one."""

    inner: ModelPool
    null: bool = True
    dataset: str = "synthetic"
    scenario: str = "S0p"

    def pool(self):
        return self.inner.pool()

    def declared_null(self):
        return self.null

    @property
    def pool_size(self):
        return self.inner.size


@dataclass(frozen=True)
class _NotNull(ModelPool):
    """A pool drawn at ``effect`` that calls itself a null (effect 0)."""

    name = "not_null_pool"

    def fixed_effect(self):
        return 0.0

    def check_effect(self, delta):
        assert delta == 0.0


def _check(pool, effect_pp, seed=0):
    ks, names = [3, 4, 5], ["paired_t", "paired_t_questions", "welch_t"]
    common = dict(sims=2000, alpha=0.05, seed=seed, jobs=1, backend="loky", scheduler=None,
                  out=None, progress=False)
    real = calibrate(pool.inner, ks, [effect_pp], protocol_names=names, **common)
    fc = fit_check(pool, real, ks, [effect_pp], {**common, "protocol_params": None,
                                                 "replicates": "summary"}, reps=30)
    return (fc["diff"] - fc["null_mean"]).abs() <= 2 * fc["se_null"] + 1e-9


@pytest.mark.slow
def test_slow_check_passes_a_correct_model_and_flags_a_pool_that_is_not_null():
    """Three pools of 30 seeds drawn from seed_question itself (so the fitted family is
    right): at least 7 of their 9 cells each within 2 se_null (a correct model's diff is
    within with probability about 0.95; 7 of 9 has probability ~0.99 for independent
    cells). A pool drawn at +3 pp but declared a null (its fit is then simulated at 0, as
    for a real null pool) is flagged: at most 3 of 9 cells within."""
    for stream in (11, 12, 13):
        pool = _Pool(ModelPool(parent=MODEL, size=30, stream=stream, effect=0.0))
        assert _check(pool, 0.0).sum() >= 7, stream
    wrong = _Pool(_NotNull(parent=MODEL, size=30, stream=11, effect=0.03))
    assert _check(wrong, 0.0).sum() <= 3
