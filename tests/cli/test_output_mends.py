"""Small mends of what evaluate prints (issue 47 item 3): no dangling "; " after the matched
count, "1 run" not "1 runs", and McNemar saying which run of several it read."""

from __future__ import annotations

import numpy as np
from test_harness_logs import inspect_sample, write_inspect

from evalcal_core.readers import align_logs, read_log
from reports.evaluate import compare


def _three_arms(tmp_path):
    """Three Inspect logs over the same 4 questions, 2 epochs each."""
    logs = {}
    for arm, right in (("a", {1}), ("b", {1, 2}), ("c", {1, 2, 3})):
        samples = [inspect_sample(q, e, s="C" if q in right else "I")
                   for q in (1, 2, 3, 4) for e in (1, 2)]
        logs[arm] = write_inspect(tmp_path / f"{arm}.eval", samples)
    return logs


def test_matched_line_has_no_dangling_separator_when_no_arm_lost_questions(tmp_path):
    aligned = align_logs({arm: read_log(path) for arm, path in _three_arms(tmp_path).items()})
    assert aligned.summary_lines()[0] == "4 questions matched"


def test_one_run_is_singular(tmp_path):
    rng = np.random.default_rng(0)
    import pandas as pd

    frame = pd.DataFrame([{"seed": 0, "arm": arm, "question": f"q{q}",
                           "score": int(rng.random() < 0.6)}
                          for arm in ("base", "variant") for q in range(40)])
    text = str(compare(frame))
    assert "* 1 run, 40 question(s) per run" in text and "1 runs" not in text


def test_mcnemar_names_the_epoch_it_read(tmp_path):
    """Four epochs: McNemar reads epoch 1 alone, and says so (its statistics unchanged: the
    row equals McNemar on epoch 1's scores)."""
    rng = np.random.default_rng(1)
    right = {arm: rng.random((4, 30)) < p for arm, p in (("baseline", 0.5), ("variant", 0.7))}
    paths = {}
    for arm, table in right.items():
        samples = [inspect_sample(q + 1, e + 1, s="C" if table[e, q] else "I")
                   for q in range(30) for e in range(4)]
        paths[arm] = write_inspect(tmp_path / f"{arm}.eval", samples)
    result = compare(arms=paths, design="models")
    note = next(n for n in result.notes if n.startswith("mcnemar:"))
    assert "run 1 of 4 only" in note and "its run 1 is epoch 1" in note
    row = next(r for r in result.rows if r.protocol == "mcnemar")
    first = compare(arms={arm: write_inspect(
        tmp_path / f"first_{arm}.eval",
        [inspect_sample(q + 1, 1, s="C" if table[0, q] else "I") for q in range(30)])
        for arm, table in right.items()}, design="models")
    one = next(r for r in first.rows if r.protocol == "mcnemar")
    assert (row.estimate_pp, row.p_value) == (one.estimate_pp, one.p_value)
    assert not any(n.startswith("mcnemar:") for n in first.notes)
