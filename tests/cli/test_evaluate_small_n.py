"""Two fixed models on a small benchmark: evaluate says when too few questions differ for
the per-question t alone, and its verdict needs the exact sign-flip test (issue 33). The
threshold comes from sim.design_check on the MathArena A/A pool (paired_t_questions up to
10.5% at alpha = 5% with 15 questions)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reports.evaluate import main
from reports.evaluate.protocols_table import FEW_DIFFERING


def _write(path, n, seed):
    rng = np.random.default_rng(seed)
    rows = ["seed,arm,question,score"] + [f"{s},{a},q{q},{int(rng.random() < 0.5)}"
                                          for s in range(2) for a in ("baseline", "variant")
                                          for q in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("n", [15, 200])
def test_the_note_appears_exactly_when_few_questions_differ(tmp_path, capsys, n):
    path = _write(tmp_path / "s.csv", n, seed=n)
    assert main([str(path), "--compare", "models"]) == 0
    text = capsys.readouterr().out
    frame = pd.read_csv(path)
    means = frame.groupby(["arm", "question"])["score"].mean().unstack(0)
    differ = int((means["variant"] != means["baseline"]).sum())
    assert (differ < FEW_DIFFERING) == (n == 15)
    assert (f"Only {differ} of {n} questions differ" in text) == (differ < FEW_DIFFERING)
    assert "signflip_questions" in text  # the exact test runs beside the t
    assert "protocol t_signflip_questions" in text  # the verdict needs both
