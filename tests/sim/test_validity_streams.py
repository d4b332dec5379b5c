"""The sequential stop's added simulations, run through the real grid: each chunk is a fresh,
independent set of experiments (not the first look's, nor another look's), counted once; and
an exact-level protocol (paired_t on normal per-seed deltas) is never called invalid over
many root seeds, its added chunks rejecting at alpha within Monte Carlo error."""


import numpy as np
import pytest
from scipy import stats

from evalcal_core.options import Execution
from sim import generators
from sim.calibration import CalibrationConfig, run_calibration
from sim.grid import cell_deltas, grid_requests, run_cells
from sim.grid.runner import applicable_protocols
from sim.validity import ValidityRule, chunk_seed, extend_null_cells

ALPHA = 0.05
FIRST = 400


def _t_rejections(deltas) -> int:
    """Rejections of the two-sided one-sample t test of per-seed deltas (scipy reference)."""
    return int((stats.ttest_1samp(deltas, 0.0, axis=1).pvalue < ALPHA).sum())


def test_added_chunks_are_fresh_independent_experiments():
    """Two borderline null cells (paired_t, k = 3 and 4; tolerance 0 keeps them pending, so
    each gets a chunk at looks 1 and 2) extended by :func:`extend_null_cells` through
    :func:`run_cells`. Checked: every chunk has its own seed; the experiments of the first
    look and of the chunks (both cells) share no per-seed delta; equal-sized draws are
    uncorrelated (|r| < 5 / sqrt(N), the null sd of Pearson's r being 1 / sqrt(N)); each
    chunk's count is scipy's t test on that chunk's deltas, and the folded totals are the
    first look plus the chunks, each once."""
    g = generators.get("seed_gaussian")
    chosen = applicable_protocols(g, [3, 4], ["paired_t"])
    def run(requests, *, sims, seed, pool_reps=0):
        execution = Execution(sims=sims, alpha=ALPHA, seed=seed, jobs=1, progress=False)
        return run_cells(requests, execution, pool_reps=pool_reps)

    frame = run(grid_requests(g, [3, 4], [0.0], chosen), sims=FIRST, seed=0)
    calls = []

    def recording_run(requests, *, sims, seed, pool_reps):
        got = run(requests, sims=sims, seed=seed, pool_reps=pool_reps)
        calls.append((sims, seed, got))
        return got

    rule = ValidityRule.make(ALPHA, FIRST, tolerance=0.0, max_sims=4 * FIRST)
    out = extend_null_cells(frame, rule_of=lambda a: rule, generator_of=lambda p: g,
                            honest=lambda p, name: True, run=recording_run, seed=0)
    assert [(sims, seed) for sims, seed, _ in calls] == [
        (FIRST, chunk_seed(0, 1)), (2 * FIRST, chunk_seed(0, 2))]
    assert len({0, chunk_seed(0, 1), chunk_seed(0, 2)}) == 3

    values = []
    for k in (3, 4):
        first = cell_deltas(g, k, 0.0, FIRST, 0)
        chunks = [cell_deltas(g, k, 0.0, sims, seed) for sims, seed, _ in calls]
        values += [first.ravel(), *(c.ravel() for c in chunks)]
        # equal-sized draws: the first look, chunk 1, and chunk 2's first half
        same = [first, chunks[0], chunks[1][:FIRST]]
        for i in range(3):
            for j in range(i + 1, 3):
                r = np.corrcoef(same[i].ravel(), same[j].ravel())[0, 1]
                assert abs(r) < 5 / np.sqrt(same[i].size)
        row = out[out.k == k].iloc[0]
        counts = [_t_rejections(first)]
        for chunk, (_, _, got) in zip(chunks, calls):
            counts.append(int(got.loc[got.k == k, "rejections"].iloc[0]))
            assert counts[-1] == _t_rejections(chunk)
        assert row.rejections == counts[0] and row.sims == FIRST
        assert row.fpr_rejections == sum(counts) and row.fpr_sims == 4 * FIRST
        assert row.fpr_looks == 3
    values = np.concatenate(values)
    # continuous draws: a repeated value would be a repeated experiment
    assert np.unique(values).size == values.size


SEEDS = range(40)


@pytest.mark.slow
def test_exact_level_protocol_is_never_invalid_over_root_seeds():
    """The whole calibration (:func:`run_calibration`: grid, k search, sequential stop,
    verdict) of paired_t on seed_gaussian (normal deltas: the t test is exact, rate exactly
    alpha; reference scipy's t distribution) at 400 first-look simulations, k = 3..5,
    for 40 root seeds (~20 s).

    * No run calls paired_t invalid: the rule bounds that per run by its family-wise 0.001
      (measured ~6e-4 for three cells), so <= 0.04 over the 40 runs.
    * The chunks the stop added are drawn after it decided to add them, so whatever the
      stopping, their pooled rate is alpha: checked within 5 binomial SE (about 0.1 pp at
      ~1.1 million added simulations). A chunk that repeated the first look's experiments
      would carry the selected (high) first looks into it; a chunk counted twice would not
      change the rate but is excluded by the test above.
    * The first looks (no selection) pool to alpha within 5 SE as well.
    """
    invalid, first, added = [], np.zeros(2), np.zeros(2)
    for seed in SEEDS:
        config = CalibrationConfig(k=(3, 5), effects=(0.0, 0.5), sims=FIRST,
                                   protocols=("paired_t",), seed=seed, out=None, quiet=True,
                                   plot=False, jobs=1, k_max=10)
        result = run_calibration(config)
        why = result.budget["why"].iloc[0]
        if why.startswith("invalid"):
            invalid.append((seed, why))
        null = result.calibration[result.calibration.effect_pp == 0]
        first += null.rejections.sum(), null.sims.sum()
        ext = null[null.fpr_sims.notna()]
        added += ((ext.fpr_rejections - ext.rejections).sum(), (ext.fpr_sims - ext.sims).sum())
    assert invalid == []
    assert added[1] > 5 * first[1]  # the stop did run: most cells start borderline at 400
    for hits, n in (first, added):
        se = np.sqrt(ALPHA * (1 - ALPHA) / n)
        assert abs(hits / n - ALPHA) < 5 * se, (hits, n)
