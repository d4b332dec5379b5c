"""``question_mixture``'s draw is the plain construction, value for value.

Consistency check: the reference is the straightforward construction written out below (a 2-d
``nonzero``, ``argpartition`` of the priorities, a broadcast copy); the generator's faster
indexing must consume the same random numbers and give the same scores, so calibration
results do not depend on it.
"""

from __future__ import annotations

import numpy as np
import pytest

from sim import generators
from sim.generators.question_mixture import _smallest


def reference_draw(g, sims, k, delta, rng):
    n = g.n
    u = rng.random((sims, n))
    hard = u < g.p_hard
    easy = (u >= g.p_hard) & (u < g.p_hard + g.p_easy)
    rows, cols = np.nonzero(~(hard | easy))
    p = g.low + (g.high - g.low) * rng.random(rows.size)
    variant = easy
    m = int(round(delta * n))
    if m > 0:
        priority = np.where(hard, rng.random((sims, n)), np.inf)
        chosen = np.argpartition(priority, m - 1, axis=1)[:, :m]
        promote = np.take_along_axis(hard, chosen, axis=1)
        variant = easy.copy()
        variant[np.nonzero(promote)[0], chosen[promote]] = True
    out = []
    for solved in (easy, variant):
        runs = np.broadcast_to(solved[:, None, :], (sims, k, n)).copy()
        runs[rows, :, cols] = rng.random((rows.size, k)) < p[:, None]
        out.append(runs)
    return tuple(out)


@pytest.mark.parametrize(("params", "sims", "k", "delta"), [
    ({}, 40, 3, 0.0),
    ({}, 40, 3, 0.013),
    ({}, 9, 1, 0.01),
    ({"n_questions": 300}, 30, 17, 0.02),
    ({"n_questions": 300, "p_hard": 0.3, "p_easy": 0.0}, 25, 2, 0.05),
    ({"n_questions": 60, "p_hard": 0.0, "p_easy": 1.0}, 5, 4, 0.0),
])
def test_draw_equals_the_plain_construction(params, sims, k, delta):
    g = generators.get("question_mixture", **params)
    got = g.draw(sims, k, delta, np.random.default_rng(11))
    want = reference_draw(g, sims, k, delta, np.random.default_rng(11))
    for a, b in zip(got, want):
        assert a.dtype == bool and a.shape == (sims, k, g.n)
        assert np.array_equal(a, b)


def test_smallest_takes_exactly_m_even_with_ties():
    """Equal priorities: the m that argpartition returns; a row with fewer hard questions
    than m: all of them."""
    priority = np.array([[0.1, 0.1, 0.5, np.inf], [0.3, np.inf, 0.2, np.inf]])
    hard = np.isfinite(priority)
    chosen = _smallest(priority, hard, 1)
    assert chosen.sum(axis=1).tolist() == [1, 1] and chosen[1].tolist() == [0, 0, 1, 0]
    first = np.argpartition(priority[0], 0)[0]
    assert chosen[0, first]
    assert _smallest(priority, hard, 3).tolist() == hard.tolist()
