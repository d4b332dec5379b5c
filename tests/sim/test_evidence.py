"""``python -m sim.evidence``: the evidence table's rows, its real-pool cells on a small pool
the test writes, the shipped table recomputed at small sims (Monte Carlo bound), bad input."""

from __future__ import annotations

import hashlib
import json
import math
import shlex

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evalcal_core.designs import KINDS, MODELS, MODELS_CLUSTERED
from evalcal_core.options import Execution
from protocols.analysis import evidence as lookup
from sim import evidence


def _write_pool(path, models=("a", "b", "c"), items=40, attempts=4, clusters=True, seed=0):
    """A 0/1 pool: each (model, item) with its own success rate; two clusters."""
    rng = np.random.default_rng(seed)
    rows = []
    for m, shift in zip(models, (0.0, 0.3, 0.6)):
        for q in range(items):
            p = 1 / (1 + np.exp(-(rng.normal() + shift)))
            for a in range(attempts):
                row = {"model": m, "item": f"q{q:03d}", "attempt": a,
                       "score": int(rng.random() < p)}
                if clusters:
                    row["cluster"] = "x" if q < items // 2 else "y"
                rows.append(row)
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_quick_table_every_kind_and_a_real_pool(tmp_path):
    pool = _write_pool(tmp_path / "pool.csv")
    config = evidence.EvidenceConfig(sims=100, model_sims=30, seed=1, llm_pools=(str(pool),),
                                     quick=True)
    table = evidence.build_table(config)
    assert list(table.columns) == evidence.COLUMNS
    assert set(table["kind"]) == set(KINDS)
    # the reported protocol of each kind, and nothing else
    for kind, part in table.groupby("kind"):
        allowed = {evidence.reported_protocols(kind, r, b)[0] for r in (1, 2, 4)
                   for b in (True, False)}
        assert set(part["protocol"]) <= allowed
    low, high = proportion_confint(table["rejections"], table["sims"], method="wilson")
    assert np.allclose(table["rate_low"], low, atol=1e-9)
    assert np.allclose(table["rate_high"], high, atol=1e-9)
    # null rows judged, power rows not
    assert set(table.loc[table["effect_pp"] == 0, "state"]) <= {"valid", "invalid",
                                                                 "undecided"}
    assert (table.loc[table["effect_pp"] != 0, "state"].fillna("") == "").all()
    digest = hashlib.sha256(pool.read_bytes()).hexdigest()[:16]
    real = table[table["source"] == f"pool.csv@{digest}"]
    aa = real[real["pair"].fillna("") == ""]
    # A/A: three models at 30 experiments each, pooled; n = 30 and all 40 items; r = 1, 2
    assert set(aa["n_questions"]) == {30, 40} and set(aa["runs"]) == {1, 2}
    assert (aa["pool_models"] == 3).all() and (aa["sims"] == 90).all()
    assert (aa["effect_pp"] == 0).all()
    assert set(aa["kind"]) == {MODELS, MODELS_CLUSTERED}
    assert (aa.loc[aa["kind"] == MODELS_CLUSTERED, "clusters"] == 2).all()
    assert (aa["worst_rate"] >= aa["rate"] - 1e-12).all()
    assert set(aa["worst_model"]) <= {"a", "b", "c"}
    ab = real[real["pair"].fillna("") != ""]
    assert len(ab) and (ab["effect_pp"] != 0).all() and (ab["pool_models"] == 2).all()
    # the pool's data never reaches the table: no path, only the file's name and digest
    assert not table.astype(str).apply(lambda c: c.str.contains(str(tmp_path))).any().any()


def test_ragged_pool_with_complete_models(tmp_path):
    """A ragged pool is refused in one line without --complete-models; with it the complete
    models make the A/A cells (the dropped model is in none), and a complete pool's cells
    are the same with and without the switch (no key changes)."""
    pool = _write_pool(tmp_path / "pool.csv", items=40)
    frame = pd.read_csv(pool)
    short = (frame["model"] == "c") & (frame["item"] == "q002") & (frame["attempt"] == 3)
    ragged = tmp_path / "ragged.csv"
    frame[~short].to_csv(ragged, index=False)
    with pytest.raises(ValueError, match=r"^--llm-pools \S+ragged.csv: .*ragged attempts"):
        evidence.EvidenceConfig(llm_pools=(str(ragged),), quick=True)
    grid = evidence.quick_grid()
    cells = evidence.pool_requests(str(ragged), grid, complete_models=True)
    models = {meta["model"] for _, meta in cells if meta["model"]}
    assert models == {"a", "b"}
    assert all(req.generator.complete_models for req, _ in cells)
    plain = evidence.pool_requests(str(pool), grid)
    switched = evidence.pool_requests(str(pool), grid, complete_models=True)
    assert ([r.generator.describe() for r, _ in plain]
            == [r.generator.describe() for r, _ in switched])


def test_best_pairs_take_the_difference_nearest_each_effect():
    class Pool:
        models = ("a", "b", "c")
        scores = np.zeros((3, 10, 2))
    Pool.scores[1, :1] = 1   # b: 10 pp above a
    Pool.scores[2, :2] = 1   # c: 20 pp above a, 10 above b
    assert evidence.best_pairs(Pool, (10.0, 19.0)) == [("a", "b"), ("a", "c")]


def _shipped():
    table = lookup.load_table()
    if not len(table):
        pytest.skip("no shipped evidence table")
    return table


def test_shipped_table_names_its_command():
    _shipped()
    meta = json.loads(lookup.SIDECAR.read_text())
    argv = shlex.split(meta["command"])[3:]
    args = evidence.build_parser().parse_args(argv)
    assert args.sims == meta["sims"] and args.seed == meta["seed"]
    assert len(args.llm_pools) == len(meta["pools"])


@pytest.mark.parametrize("kind, protocol, n, runs, effect", [
    ("models", "t_signflip_questions", 300, 2, 0.0),
    ("models", "t_signflip_questions", 300, 2, 5.0),
    ("methods_independent", "welch_t", 1, 5, 1.0),
])
def test_shipped_rows_recomputed_within_monte_carlo_error(kind, protocol, n, runs, effect):
    table = _shipped()
    row = table[(table["kind"] == kind) & (table["protocol"] == protocol)
                & (table["n_questions"] == n) & (table["runs"] == runs)
                & (table["effect_pp"] == effect) & (table["pool_models"] == 0)]
    row = row[row["sd_ratio"].isna() | (row["sd_ratio"] == 1.0)].iloc[0]
    grid = evidence.full_grid()
    reqs = [req for req, shape in evidence.synthetic_requests(grid)
            if shape.kind == row["kind"] and req.protocol == protocol and req.k == runs
            and req.generator.n == n and req.effect_pp == effect
            and req.generator.describe() == row["generator_params"]]
    assert len(reqs) == 1
    sims = 400
    frame = evidence.run_cells(reqs, Execution(sims=sims, seed=12345, progress=False))
    x2 = int(frame["rejections"].iloc[0])
    # two independent binomial counts of one rate: their difference over its pooled SE is
    # ~N(0, 1); |z| <= 4 fails a correct table with probability 6e-5 per row
    n1 = int(row["sims"])
    pooled = (int(row["rejections"]) + x2) / (n1 + sims)
    pooled = min(max(pooled, 1 / (n1 + sims)), 1 - 1 / (n1 + sims))
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / sims))
    z = (row["rate"] - x2 / sims) / se
    assert abs(z) <= stats.norm.isf(stats.norm.sf(4.0))


def test_bad_input_is_one_line_exit_2(tmp_path):
    done = run_in_process(evidence.main, "python -m sim.evidence", "--sims", "5", "--out",
                          tmp_path / "o")
    assert done.returncode == 2 and "sims" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    done = run_in_process(evidence.main, "python -m sim.evidence", "--llm-pools",
                          tmp_path / "missing.csv", "--out", tmp_path / "o")
    assert done.returncode == 2 and "--llm-pools" in done.stderr
