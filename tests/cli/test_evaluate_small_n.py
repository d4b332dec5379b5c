"""Two fixed models on a small benchmark: evaluate says when too few questions differ for
the per-question t alone, and its verdict needs the exact sign-flip test (issue 33). The
threshold comes from sim.design_check on the MathArena A/A pool (paired_t_questions up to
10.5% at alpha = 5% with 15 questions)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalcal_core.designs import MODELS
from protocols.analysis.protocol_table import FEW_DIFFERING
from reports.evaluate import main


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
    assert main([str(path), "--design", MODELS]) == 0
    text = capsys.readouterr().out
    frame = pd.read_csv(path)
    means = frame.groupby(["arm", "question"])["score"].mean().unstack(0)
    differ = int((means["variant"] != means["baseline"]).sum())
    assert (differ < FEW_DIFFERING) == (n == 15)
    assert (f"Only {differ} of {n} questions differ" in text) == (differ < FEW_DIFFERING)
    assert "signflip_questions" in text  # the exact test runs beside the t
    assert "protocol t_signflip_questions" in text  # the verdict needs both


@pytest.mark.parametrize("correction", ["holm", "maxt", "none"])
def test_the_t_alone_does_not_decide_when_the_exact_sign_flip_test_cannot_reject(
        tmp_path, capsys, correction):
    """Two runs per model on 12 questions; the variant is right on 5 questions where the
    baseline is wrong, both arms agree on the other 7. The t on the 12 per-question deltas
    rejects (scipy: p < 0.05); the exact sign-flip test over the 5 differing questions cannot
    (its smallest p is 2 / 2**5 = 0.0625), so under every correction the verdict is "not
    significant"."""
    rows = ["seed,arm,question,score"]
    for s in range(2):
        for q in range(12):
            rows += [f"{s},baseline,q{q},{int(q >= 5 and q % 2)}",
                     f"{s},variant,q{q},{int(q < 5 or q % 2)}"]
    path = tmp_path / "five.csv"
    path.write_text("\n".join(rows) + "\n")
    d = np.array([1.0] * 5 + [0.0] * 7)
    assert stats.ttest_1samp(d, 0.0).pvalue < 0.05
    assert main([str(path), "--design", MODELS, "--correction", correction, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (comparison,) = out["comparisons"]
    assert comparison["protocol"] == "t_signflip_questions"
    assert comparison["significant"] is False
    assert comparison["p_value"] == pytest.approx(2 / 2**5)
