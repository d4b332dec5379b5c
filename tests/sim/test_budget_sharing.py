"""The seed-budget search draws each cell once for all the protocols it searches, with the
rows of a plain run; the sign-flip p from counts is the same number as the float computation
it replaces."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sim.grid.execute as execute_module
from evalcal_core.options import Execution
from protocols.methods.signflip_questions import signflip_t_pvalue
from sim import generators
from sim.budget import sharing_runner
from sim.grid import CellRequest, run_cells

PROTOCOLS = ("paired_t_questions", "signflip_questions", "t_signflip_questions")


@pytest.fixture
def draws(monkeypatch):
    """The (k, effect, sims, seed) of every cell drawn."""
    seen = []
    original = execute_module.run_task

    def counting(generator, k, effect, specs, seed, threads=1):
        seen.append((k, effect, specs[0].sims, seed))
        return original(generator, k, effect, specs, seed, threads)

    monkeypatch.setattr(execute_module, "run_task", counting)
    return seen


def test_sharing_runner_draws_a_cell_once_and_returns_the_plain_rows(draws):
    """Consistency with :func:`sim.grid.run_cells` itself: the same rows, byte for byte,
    whether a protocol's row was scored with another's request or on its own."""
    g = generators.get("question_mixture", n_questions=400)
    run = Execution(sims=40, seed=3, jobs=1, progress=False)

    def plain(requests, *, sims=None, seed=None, pool_reps=None):
        over = {name: v for name, v in (("sims", sims), ("seed", seed)) if v is not None}
        return run_cells(requests, Execution(**{**run.__dict__, **over}))

    def siblings(request):
        return [CellRequest(g, name, "", request.k, request.effect_pp) for name in PROTOCOLS]

    shared = sharing_runner(plain, siblings)
    asks = [([CellRequest(g, "paired_t_questions", "", 2, 0.5)], {}),
            ([CellRequest(g, "signflip_questions", "", 2, 0.5),
              CellRequest(g, "paired_t_questions", "", 3, 0.0)], {}),
            ([CellRequest(g, "t_signflip_questions", "", 2, 0.5)], {}),
            ([CellRequest(g, "t_signflip_questions", "", 2, 0.5)], {"sims": 20, "seed": 9})]
    got = [shared(requests, **over) for requests, over in asks]
    assert sorted(draws) == sorted([(2, 0.5, 40, 3), (3, 0.0, 40, 3), (2, 0.5, 20, 9)])
    draws.clear()
    want = [plain(requests, **over) for requests, over in asks]
    assert draws.count((2, 0.5, 40, 3)) == 3  # drawn again for each protocol asked
    for a, b in zip(got, want):
        pd.testing.assert_frame_equal(a, b)


def test_signflip_p_of_integer_deltas_equals_the_float_path_bit_for_bit():
    """Consistency only: integer deltas (binary scores' counts) give the p-values of the
    same deltas as floats, in every regime (enumerated, sampled, normal limit), and use the
    random stream alike."""
    rng = np.random.default_rng(0)
    n = 400
    share = np.array([0.0, 0.01, 0.03, 0.1, 0.2, 0.6, 1.0])[:, None]  # 0 to 400 non-zero
    d = rng.integers(-3, 4, size=(share.size, n)) * (rng.random((share.size, n)) < share)
    d[3] *= 2  # no delta of size 1: the continuity correction reads min |d| = 2
    got = signflip_t_pvalue(d, 999, np.random.default_rng(1))
    want = signflip_t_pvalue(d.astype(float), 999, np.random.default_rng(1))
    np.testing.assert_array_equal(got, want)
