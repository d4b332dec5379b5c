"""evalcal_core.results_io aligns a tidy CSV into (arms, seeds, questions) like a pandas
pivot of the same rows (the reference), whatever the row order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcal_core.results_io import read_results_arms


def _tidy(rng, arms, seeds, questions):
    rows = pd.DataFrame([(s, a, q) for a in arms for s in seeds for q in questions],
                        columns=["seed", "arm", "question"])
    rows["score"] = (rng.random(len(rows)) < 0.6).astype(int)
    return rows.sample(frac=1.0, random_state=int(rng.integers(2**31)))


@pytest.mark.parametrize("seeds", [[3, 1, 10, 2], ["b", "a", "c"]])
def test_shuffled_rows_align_like_a_pivot(tmp_path, seeds):
    rng = np.random.default_rng(0)
    arms = ["zeta", "baseline", "alpha", "NA"]
    questions = ["q10", "q2", "q1", "7"]
    rows = _tidy(rng, arms, seeds, questions)
    path = tmp_path / "r.csv"
    rows.to_csv(path, index=False)
    got = read_results_arms(path)
    first_seen = list(dict.fromkeys(rows["arm"]))
    assert got.arms == ("baseline", *[a for a in first_seen if a != "baseline"])
    assert got.run_ids == tuple(sorted(seeds))
    assert got.question_ids == tuple(sorted(questions))
    table = rows.astype({"question": str}).pivot_table(
        index=["arm", "seed"], columns="question", values="score")
    for a, arm in enumerate(got.arms):
        ref = table.loc[arm].reindex(index=list(got.run_ids), columns=list(got.question_ids))
        np.testing.assert_array_equal(got.scores[a], ref.to_numpy(dtype=float))


def test_ragged_seed_sets_pad_and_count(tmp_path):
    rng = np.random.default_rng(1)
    rows = _tidy(rng, ["a", "b"], [0, 1, 2], ["x", "y"])
    rows = rows[~((rows.arm == "b") & (rows.seed == 1))]
    path = tmp_path / "r.csv"
    rows.to_csv(path, index=False)
    got = read_results_arms(path, ragged=True)
    a, b = got.arms.index("a"), got.arms.index("b")
    assert (got.runs_per_arm[a], got.runs_per_arm[b]) == (3, 2)
    assert np.isnan(got.scores[b, 1]).all() and not np.isnan(got.scores[a]).any()
    with pytest.raises(ValueError, match="arm 'b' has no score for seed 1"):
        read_results_arms(path)
