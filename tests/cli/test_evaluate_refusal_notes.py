"""What ``evaluate`` prints beside a refused verdict (a dominant cluster) and under max-T
with one comparison.

References: the refusal's reason is :func:`protocols.methods.cluster_robust.dominance_check`'s
and G* its analytic value ``N**2 / sum n_g**2`` (10,000 / 9,030 for sizes 95, 1, 1, 1, 1, 1);
the one-comparison max-T p is the exact sign-flip p of 6 seeds enumerated by ``itertools``
(the observed pattern and its negation: 2 / 64).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from in_process import run_in_process

from protocols.methods.cluster_robust import dominance_check
from reports.evaluate import main

PROG = "python -m reports.evaluate"
#: one cluster of 6 holds 95 of the 100 questions
SIZES = [95, 1, 1, 1, 1, 1]


def _clustered(path, arms):
    codes = np.repeat(np.arange(len(SIZES)), SIZES)
    rng = np.random.default_rng(0)
    rows = ["seed,arm,question,score,topic"]
    for i, arm in enumerate(arms):
        hits = rng.random(codes.size) < 0.6 + 0.05 * i
        rows += [f"1,{arm},q{q},{int(h)},t{g}" for q, (h, g) in enumerate(zip(hits, codes))]
    path.write_text("\n".join(rows) + "\n")
    return str(path), codes


def _run(*argv):
    done = run_in_process(main, PROG, *argv)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("correction", ["holm", "maxt"])
@pytest.mark.parametrize("arms", [("a", "b"), ("a", "b", "c")])
def test_dominant_cluster_refusal_is_on_the_rows_and_in_json(tmp_path, arms, correction):
    """Every row says "no verdict (see notes)", never "no variance estimate"; the note (text)
    and ``comparison_notes`` (JSON) carry the reason, with G* = 10000 / 9030; no adjusted p
    stands beside the refusal (max-T included); the two-arm table does not call it a zero
    standard error."""
    path, codes = _clustered(tmp_path / "c.csv", arms)
    refuse, reason = dominance_check(codes)
    assert refuse and f"{10000 / 9030:.2f} effective clusters" in reason
    argv = [path, "--cluster", "topic", "--correction", correction]
    text = _run(*argv)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("comparison  difference"))
    rows = lines[start + 2:lines.index("", start)]       # the comparisons' table
    assert len(rows) == len(arms) * (len(arms) - 1) // 2
    assert all(r.endswith("no verdict (see notes)") for r in rows)
    assert f"* cluster_cr2 gives no verdict on any comparison: {reason}." in text
    assert "zero standard error" not in text
    out = json.loads(_run(*argv, "--json"))
    assert f"cluster_cr2 gives no verdict on any comparison: {reason}." in out[
        "comparison_notes"]
    assert all(c["degenerate"] and c["p_adjusted"] is None and not c["significant"]
               for c in out["comparisons"])


def _paired(path):
    """6 paired seeds, every delta positive, one far larger than the rest."""
    deltas = [0.001, 0.0011, 0.0009, 0.001, 0.0012, 0.05]
    rows = ["seed,arm,metric"]
    for s, d in enumerate(deltas):
        rows += [f"{s + 1},base,{0.5 + 0.001 * (s % 2)!r}",
                 f"{s + 1},new,{0.5 + 0.001 * (s % 2) + d!r}"]
    path.write_text("\n".join(rows) + "\n")
    return str(path), np.array(deltas)


def test_one_comparison_maxt_names_no_step_down(tmp_path):
    """Two paired arms under max-T: p adj is the exact sign-flip p of the t (2 / 64 by
    enumeration), significant beside an interval that contains 0; neither the max-T note
    nor the note on the disagreement mentions a step-down (there is none with one test)."""
    path, d = _paired(tmp_path / "p.csv")
    t = [np.mean(s * d) / (np.std(s * d, ddof=1) / np.sqrt(d.size))
         for s in map(np.array, itertools.product([-1.0, 1.0], repeat=d.size))]
    t0 = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
    p_exact = np.mean(np.abs(t) >= abs(t0) - 1e-9)
    assert p_exact == pytest.approx(2 / 64)
    out = json.loads(_run(path, "--correction", "maxt", "--json"))
    (c,) = out["comparisons"]
    assert c["p_adjusted"] == pytest.approx(p_exact, rel=1e-9) and c["significant"]
    assert c["simultaneous_ci_low"] < 0 < c["simultaneous_ci_high"]
    notes = " ".join(out["comparison_notes"])
    assert "step-down" not in notes
    assert "max-T: one comparison, so its p is unadjusted" in notes
    assert "the interval's multiplier covers at real effects too" in notes


def test_equal_variances_needs_independent_seeds(tmp_path):
    """``compare_arms(equal_variances=True)`` on paired seeds: one line naming the rule."""
    from evalcal_core.results_io import read_results_arms
    from protocols.analysis import infer_design
    from protocols.analysis.compare import compare_arms

    path, _ = _paired(tmp_path / "p.csv")
    scores = read_results_arms(path)
    design = infer_design(scores)
    with pytest.raises(ValueError, match="--equal-variances must be used with independent "
                                         "seeds"):
        compare_arms(scores, design, correction="maxt", equal_variances=True)
