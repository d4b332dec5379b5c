"""``python -m protocols.evaluate``: reading a user's CSV, the two-arm table, JSON and bad
files (N arms: ``test_evaluate_arms.py``; designs: ``test_evaluate_design.py``)."""

import json
import subprocess
import sys

import numpy as np
import pytest
from in_process import run_in_process
from scipy import stats
from welch_reference import welch_reference

from evalcal_core.results_io import read_results_arms
from reports.evaluate import example_path, main


def run_cli(*args):
    """The command run in this process (``tests/in_process.py``: same exit code and output)."""
    return run_in_process(main, "python -m protocols.evaluate", *args)


def test_json_output_matches_scipy_on_the_example():
    """The shipped example through the command, in a process of its own as a user runs it:
    paired_t and welch_t equal scipy's p-values (welch_t: scipy's statistic on the bounded
    df of tests/welch_reference.py)."""
    proc = subprocess.run([sys.executable, "-m", "protocols.evaluate", example_path(),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    res = read_results_arms(example_path())
    assert res.arms == ("baseline", "variant")
    rows = {r["protocol"]: r for r in out["rows"]}
    b, v = res.scores[0, :, 0], res.scores[1, :, 0]
    assert rows["paired_t"]["p_value"] == pytest.approx(stats.ttest_rel(v, b).pvalue)
    assert rows["welch_t"]["p_value"] == pytest.approx(welch_reference(v, b, 0.05)[0])
    assert rows["paired_t"]["estimate_pp"] == pytest.approx(100 * (v - b).mean())
    assert "mcnemar" in out["not_applicable"]
    assert any("smallest attainable exact sign-flip p" in n for n in out["notes"])


def test_table_for_three_seeds_warns_that_the_exact_test_cannot_pass(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("seed,arm,metric\n" + "".join(
        f"{s},baseline,{0.9 + 0.001 * s}\n{s},variant,{0.92 + 0.001 * s}\n" for s in range(3)))
    assert main([str(path)]) == 0
    text = capsys.readouterr().out
    assert ("With k = 3 the smallest attainable exact sign-flip p is 0.25, so the paired "
            "protocol (paired_bca_perm) can NEVER be significant at alpha = 0.05: k >= 6 "
            "seeds are needed.") in " ".join(text.split())
    assert main([str(path), "--alpha", "0.01"]) == 0
    # 2 / 2**7 = 0.0156 > 0.01 > 2 / 2**8: eight seeds are needed at alpha = 0.01.
    assert "k >= 8 seeds are needed." in capsys.readouterr().out
    line = next(x for x in text.splitlines() if x.startswith("paired_bca_perm"))
    assert "not significant" in line


def test_per_question_file_runs_question_protocols(tmp_path):
    rng = np.random.default_rng(0)
    rows = ["seed,arm,question,score"]
    for s in range(4):
        for arm, p in (("baseline", 0.7), ("variant", 0.75)):
            rows += [f"{s},{arm},{q},{int(rng.random() < p)}" for q in range(50)]
    path = tmp_path / "q.csv"
    path.write_text("\n".join(rows) + "\n")
    res = read_results_arms(path)
    assert res.scores.shape == (2, 4, 50) and res.metric == "score"  # per question
    proc = run_cli(str(path), "--json")
    names = {r["protocol"] for r in json.loads(proc.stdout)["rows"]}
    assert {"mcnemar", "run_bootstrap", "question_bootstrap", "paired_t"} <= names


def test_percent_scale(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("seed,arm,metric\n0,baseline,90\n0,variant,91\n1,baseline,89\n"
                    "1,variant,90.5\n")
    res = read_results_arms(path, percent=True)
    np.testing.assert_allclose(res.scores[1, :, 0] - res.scores[0, :, 0], [0.01, 0.015])


@pytest.mark.parametrize("content, message", [
    ("seed,arm,value\n0,baseline,1\n", "needs columns seed, arm, metric"),
    ("seed,arm,metric\n0,baseline,0.9\n1,baseline,0.91\n", "names one arm ('baseline')"),
    ("seed,arm,metric\n0,baseline,0.9\n0,treatment,0.91\n", "one run per arm with one score"),
    ("seed,arm,metric\n0,baseline,0.9\n0,variant,abc\n", "row 3: column 'metric'"),
    ("seed,arm,metric\n0,baseline,0.9\n0,variant,0.91\n1,baseline,0.9\n",
     "arm 'variant' has no score for seed 1"),
    ("seed,arm,metric\n0,baseline,0.9\n0,baseline,0.91\n", "row 3: duplicate entry"),
    ("seed,arm,metric\n", "no rows"),
    ("seed,arm,question,score\n0,baseline,q1,1\n0,variant,q1,1\n0,baseline,q2,0\n",
     "no score for seed 0, question 'q2'"),
])
def test_malformed_files_give_one_line_and_exit_2(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    proc = run_cli(str(path))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr


def test_missing_file_and_bad_alpha():
    proc = run_cli("/nonexistent/results.csv")
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = run_cli(example_path(), "--alpha", "1.5")
    assert proc.returncode == 2 and "'--alpha'" in proc.stderr


def _per_seed_csv(path, base, variant):
    path.write_text("seed,arm,metric\n" + "".join(
        f"{s},baseline,{b}\n{s},variant,{v}\n" for s, (b, v) in enumerate(zip(base, variant))))
    return path


def test_sampled_sign_flips_are_never_called_exact(tmp_path, capsys):
    """Beyond 16 seeds the sign-flip p is sampled: no note calls it exact (679e496 did)."""
    rng = np.random.default_rng(1)
    base = 0.8 + 0.01 * rng.standard_normal(20)
    path = _per_seed_csv(tmp_path / "r.csv", base, base + 0.003)
    assert main([str(path)]) == 0
    notes = [x for x in capsys.readouterr().out.splitlines() if x.startswith("* ")]
    assert not any("exact" in x for x in notes)
    assert any("sampled from 10000 random sign patterns" in x for x in notes)


def test_zero_standard_error_is_reported_as_no_evidence(tmp_path):
    """Binary per-seed metrics that agree on every seed (deltas 1, 1, 1): paired_t has no
    variance estimate; the JSON row says so (p null, degenerate, a note), not p = 0."""
    path = _per_seed_csv(tmp_path / "b.csv", [0, 0, 0], [1, 1, 1])
    out = json.loads(run_cli(str(path), "--json").stdout)
    row = next(r for r in out["rows"] if r["protocol"] == "paired_t")
    assert row["p_value"] is None and row["degenerate"] and not row["significant"]
    assert "no variance estimate" in row["note"]
    assert any(n.startswith("paired_t: no variance estimate") for n in out["notes"])
    text = run_cli(str(path)).stdout
    line = next(x for x in text.splitlines() if x.startswith("paired_t "))
    assert "not significant (no variance estimate)" in line


def test_single_run_threshold_is_explicit_and_reported(tmp_path):
    """The output states single_run's threshold; --threshold sets it in the file's units;
    a metric outside [0, 1] needs it (single_run is listed as not applicable without)."""
    path = _per_seed_csv(tmp_path / "acc.csv", [0.80, 0.81, 0.79], [0.815, 0.82, 0.80])
    out = json.loads(run_cli(str(path), "--json").stdout)
    row = next(r for r in out["rows"] if r["protocol"] == "single_run")
    assert row["significant"] and "at least 0.01" in row["note"] and "1 pp" in row["note"]
    out = json.loads(run_cli(str(path), "--json", "--threshold", "0.02").stdout)
    row = next(r for r in out["rows"] if r["protocol"] == "single_run")
    assert not row["significant"] and "at least 0.02" in row["note"]
    # Percentages: --threshold is in the file's units (2 = 2 pp).
    pct = _per_seed_csv(tmp_path / "pct.csv", [80, 81, 79], [81.5, 82, 80])
    out = json.loads(run_cli(str(pct), "--json", "--percent", "--threshold", "2").stdout)
    row = next(r for r in out["rows"] if r["protocol"] == "single_run")
    assert not row["significant"] and "at least 0.02" in row["note"]
    # A loss (not a fraction): no default.
    loss = _per_seed_csv(tmp_path / "loss.csv", [2.31, 2.30, 2.33], [2.29, 2.28, 2.30])
    out = json.loads(run_cli(str(loss), "--json", "--metric-range", "0", "10").stdout)
    assert "must be given (in the metric's units)" in out["not_applicable"]["single_run"]
    out = json.loads(run_cli(str(loss), "--json", "--metric-range", "0", "10",
                             "--threshold", "0.015").stdout)
    row = next(r for r in out["rows"] if r["protocol"] == "single_run")
    assert row["significant"] and "at least 0.015" in row["note"]


@pytest.mark.parametrize(("text", "expected"), [
    ("seed,arm,metric\n0,baseline,0.9\n1,baseline,0.8\n0,variant,0.9\n1,variant,nan\n",
     "must be a finite number, got nan"),
    ("seed,arm,metric\n0,baseline,0.9\n0,baseline,0.8\n0,variant,0.9\n",
     "duplicate entry for seed=0, arm='baseline'"),
])
def test_messages_show_cells_as_written_not_numpy_reprs(tmp_path, capsys, text, expected):
    """A bad cell is quoted as the file has it (``nan``, ``seed=0``), never ``np.float64(nan)``
    or ``np.int64(0)``."""
    path = tmp_path / "r.csv"
    path.write_text(text)
    from evalcal_core.cli import call_main

    assert call_main(main, "evaluate", [str(path)]) == 2
    err = capsys.readouterr().err
    assert expected in err and "np." not in err
