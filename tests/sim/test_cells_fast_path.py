"""Index-set draws from a real pool, bool draws, and the memory check before a cell runs.

Consistency checks: the fast data path must hold exactly the values the copying path held
(same random numbers), so calibration results do not change.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from sim import generators
from sim.grid.cells import BYTES_PER_SCORE, check_memory, draw_cell


def test_real_pool_batches_are_the_copied_draws():
    g = generators.get("real_pool", dataset="ag_news", scenario="S1")
    effect_pp = 100 * g.fixed_effect()
    batches = list(draw_cell(g, 5, effect_pp, 50, seed=0, chunk=20))
    assert [b.shape[0] for b in batches] == [20, 20, 10]
    from sim.grid.cells import data_rng

    rng = data_rng(g, 5, effect_pp, 0)
    for batch in batches:
        base, variant = g.draw(batch.shape[0], 5, effect_pp / 100, rng)
        assert np.array_equal(batch.base, base) and np.array_equal(batch.variant, variant)
        assert np.array_equal(batch.seed_deltas, variant.mean(-1) - base.mean(-1))
        assert np.array_equal(batch.correct_base, base.sum(axis=-2).astype(np.int64))


def test_draw_seeds_consumes_the_stream_of_draw():
    g = generators.get("real_pool", dataset="ag_news", scenario="S0p")
    order = g.draw_seeds(7, 4, 0.0, np.random.default_rng(3))
    base, _ = g.draw(7, 4, 0.0, np.random.default_rng(3))
    assert order.shape == (7, 4)
    assert all(len(set(row)) == 4 for row in order)
    assert np.array_equal(g.pool()[0][order], base)


def test_question_mixture_draws_bool_scores():
    base, variant = generators.get("question_mixture", n_questions=50).draw(
        3, 2, 0.0, np.random.default_rng(0))
    assert base.dtype == bool and variant.dtype == bool


def test_memory_check_is_one_line_before_allocating():
    g = generators.get("question_mixture", n_questions=100_000)
    assert check_memory(g, 8, 10, available=2**40) == 10 * 8 * 100_000 * BYTES_PER_SCORE
    with pytest.raises(ValueError, match=r"\(10 experiment\(s\) per chunk\) needs about "
                                         r"[\d.]+ GiB of memory; 0\.000977 GiB is "
                                         r"available") as err:
        check_memory(g, 8, 10, available=2**20)
    assert "\n" not in str(err.value)
    # 200 seeds x 10**7 questions: ~75 GiB per experiment, more than this machine has.
    huge = generators.get("question_mixture", n_questions=10**7)
    with pytest.raises(ValueError, match="GiB is available"):
        next(draw_cell(huge, 200, 0.0, 5, seed=0))


def test_cli_exit_2_on_a_cell_too_large(tmp_path):
    cmd = [sys.executable, "-m", "sim.calibrate", "--generator", "question_mixture",
           "--param", "n_questions=10000000", "--k", "200", "--k-max", "200", "--effects",
           "0", "--sims", "2", "--jobs", "1", "--quiet", "--no-plot", "--protocols", "paired_t",
           "--out", str(tmp_path / "out")]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 2, res.stderr
    assert "GiB is available" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_a_question_level_cell_is_the_same_drawn_alone_or_beside_a_run_protocol(monkeypatch):
    """A cell whose protocols read no runs draws counts only; its rows equal those of the
    same cells drawn with runs beside a protocol that reads them (the cache key holds no
    trace of the neighbours, so the numbers must not depend on them)."""
    from evalcal_core.options import Execution
    from sim.grid import CellRequest, run_cells

    g = generators.get("question_mixture", n_questions=300)
    run = Execution(sims=60, seed=2, jobs=1, progress=False)
    alone = [CellRequest(g, name, "", 3, 1.0)
             for name in ("paired_t_questions", "t_signflip_questions")]
    beside = alone + [CellRequest(g, "welch_t", "", 3, 1.0)]
    b = run_cells(beside, run)
    b = b[b["protocol"] != "welch_t"].reset_index(drop=True)

    def no_runs(*args):
        raise AssertionError("runs drawn for protocols that read counts only")
    monkeypatch.setattr(type(g), "_draw", no_runs)
    a = run_cells(alone, run)
    import pandas as pd

    pd.testing.assert_frame_equal(a.reset_index(drop=True), b)
    assert a["rejections"].gt(0).all()
