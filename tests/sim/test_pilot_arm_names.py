"""``--from-pilot`` with any arm names (issue 47 item 1): a pilot of two arms named as the
user named them reads as the same pilot named ``baseline`` and ``variant`` (the baseline:
the arm named ``baseline`` in any case, else the file's first arm); more arms are refused
in one line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcal_core.results_io import read_two_arms
from evalcal_core.validate import InvalidParameterError
from sim import plan as P
from sim.pilot import generator_from_pilot, read_pilot


def _pilot(path, names=("baseline", "variant"), k=4, n=40, seed=0, first=0):
    """0/1 scores of two arms on k seeds x n questions, the variant better; ``first``: the
    arm whose rows come first in the file."""
    rng = np.random.default_rng(seed)
    scores = (rng.random((2, k, n)) < np.array([0.55, 0.65])[:, None, None]).astype(int)
    rows = [(s, names[a], f"q{q}", int(scores[a, s, q]))
            for a in (first, 1 - first) for s in range(k) for q in range(n)]
    pd.DataFrame(rows, columns=["seed", "arm", "question", "score"]).to_csv(path, index=False)
    return path


def test_any_names_read_as_baseline_and_variant(tmp_path):
    canonical = read_pilot(_pilot(tmp_path / "a.csv"))
    named = read_pilot(_pilot(tmp_path / "b.csv", names=("gpt-old", "gpt-new")))
    assert named.arms == ("gpt-old", "gpt-new")
    np.testing.assert_array_equal(named.scores, canonical.scores)
    fit_a = generator_from_pilot(tmp_path / "a.csv")
    fit_b = generator_from_pilot(tmp_path / "b.csv")
    assert fit_b.text.replace(str(tmp_path / "b.csv"), "P") == fit_a.text.replace(
        str(tmp_path / "a.csv"), "P")
    assert fit_b.observed_effect_pp == fit_a.observed_effect_pp


def test_an_arm_named_baseline_in_any_case_is_the_baseline(tmp_path):
    """Its rows second in the file: still the baseline (first arm)."""
    got = read_two_arms(_pilot(tmp_path / "c.csv", names=("Baseline", "new"), first=1))
    ref = read_two_arms(_pilot(tmp_path / "d.csv", names=("baseline", "new"), first=0))
    assert got.arms == ("Baseline", "new")
    np.testing.assert_array_equal(got.scores, ref.scores)


def test_plan_from_pilot_with_any_names(tmp_path):
    """``sim.plan --from-pilot``: the variance components of a renamed pilot are the
    canonical one's."""
    def components(path):
        argv = ["--from-pilot", str(path), "--cost", "seed=4", "question=0.001",
                "repeat=0.0005", "--effect", "3"]
        return P.config_from_args(P.build_parser().parse_args(argv)).components

    a = components(_pilot(tmp_path / "a.csv"))
    b = components(_pilot(tmp_path / "b.csv", names=("old", "new")))
    assert (a.sd_seed, a.sd_question, a.sd_inter) == (b.sd_seed, b.sd_question, b.sd_inter)


def test_three_arms_are_refused(tmp_path):
    path = tmp_path / "three.csv"
    frame = pd.read_csv(_pilot(tmp_path / "two.csv", names=("a", "b")))
    pd.concat([frame, frame[frame.arm == "a"].assign(arm="c")]).to_csv(path, index=False)
    with pytest.raises(InvalidParameterError, match=r"--from-pilot .*three\.csv: a pilot has "
                                                    r"two arms .* got 3 \('a', 'b', 'c'\)"):
        read_pilot(path)


def test_plan_from_pilot_reads_two_logs(tmp_path):
    """``sim.plan --from-pilot 'BASELINE,VARIANT'``: two Inspect logs of 3 epochs give the
    components of the same scores written as a tidy CSV (epochs as runs)."""
    from test_harness_logs import inspect_sample, write_inspect

    rng = np.random.default_rng(2)
    right = rng.random((2, 3, 40)) < np.array([0.5, 0.62])[:, None, None]
    logs, rows = [], []
    for a, arm in enumerate(("base", "new")):
        samples = [inspect_sample(q + 1, e + 1, s="C" if right[a, e, q] else "I")
                   for q in range(40) for e in range(3)]
        logs.append(write_inspect(tmp_path / f"{arm}.eval", samples))
        rows += [(e, arm, q + 1, int(right[a, e, q])) for e in range(3) for q in range(40)]
    tidy = tmp_path / "tidy.csv"
    pd.DataFrame(rows, columns=["seed", "arm", "question", "score"]).to_csv(tidy, index=False)

    def components(source):
        argv = ["--from-pilot", str(source), "--cost", "seed=4", "question=0.001",
                "repeat=0.0005", "--effect", "3", "--design", "models"]
        return P.config_from_args(P.build_parser().parse_args(argv)).components

    from_logs, from_csv = components(f"{logs[0]},{logs[1]}"), components(tidy)
    assert (from_logs.sd_question, from_logs.sd_inter, from_logs.sd_repeat) == pytest.approx(
        (from_csv.sd_question, from_csv.sd_inter, from_csv.sd_repeat))
