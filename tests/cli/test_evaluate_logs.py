"""``reports.evaluate --baseline LOG --variant LOG`` and the pilot's reader
(:func:`sim.pilot.read_pilot`: a CSV or ``"BASELINE,VARIANT"`` logs)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from evalcal_core.readers import read_logs
from evalcal_core.results_io import check_arm_scores, read_results_arms, read_tidy_arms
from reports.evaluate import main
from sim.pilot import read_pilot, two_arms


def _one_arm(path, p, questions, runs=4, seed=0):
    rng = np.random.default_rng(seed)
    rows = ["run,question,score"]
    for r in range(runs):
        rows += [f"{r},q{q},{int(rng.random() < p)}" for q in questions]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.fixture
def logs(tmp_path):
    base = _one_arm(tmp_path / "base.csv", 0.6, range(0, 60), seed=1)
    var = _one_arm(tmp_path / "var.csv", 0.7, range(3, 63), seed=2)
    return base, var


def test_paired_logs_print_matching_and_apply_question_protocols(logs, capsys):
    base, var = logs
    assert main(["--baseline", base, "--variant", var]) == 0
    text = capsys.readouterr().out
    assert "57 questions matched" in text
    assert "q0" in text and "q60" in text  # dropped ids are named
    assert "mcnemar" in text.split("Not applicable")[0]  # a question-level protocol ran


def test_paired_logs_json_has_the_matching(logs, capsys):
    base, var = logs
    assert main(["--baseline", base, "--variant", var, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["k"] == 4 and out["n"] == 57
    assert out["matching"]["dropped_baseline"] == ["q0", "q1", "q2"]
    assert out["matching"]["dropped_variant"] == ["q60", "q61", "q62"]


def test_read_pilot_dispatches_csv_and_log_pairs(logs, tmp_path):
    base, var = logs
    pair = read_pilot(f"{base},{var}")
    assert pair.arms == ("baseline", "variant") and pair.scores.shape == (2, 4, 57)
    assert set(pair.question_ids) == {f"q{i}" for i in range(3, 60)}  # the common ones
    assert pair.run_ids[0] == "run 0"
    assert pair.runs_are == "unknown"
    tidy = tmp_path / "tidy.csv"
    tidy.write_text("seed,arm,metric\n0,variant,0.91\n0,baseline,0.9\n")
    assert read_pilot(tidy).question_ids == ("metric",)
    np.testing.assert_array_equal(two_arms(read_pilot(tidy)), [[[0.9]], [[0.91]]])
    np.testing.assert_array_equal(read_pilot(tidy).scores, read_results_arms(tidy).scores)
    with pytest.raises(ValueError, match=r"holds one arm's log; name both arms' logs: "
                                         r"--arm NAME=PATH per arm, or --from-pilot "
                                         r"'BASELINE,VARIANT'$"):
        read_pilot(base)
    with pytest.raises(ValueError, match=r"is a directory; .*--from-pilot 'BASELINE,VARIANT'$"):
        read_pilot(tmp_path)
    with pytest.raises(ValueError, match=r"results file '.*nope\.csv' does not exist$"):
        read_pilot(tmp_path / "nope.csv")
    # any two arm names (issue 47): the one named 'baseline', else the first, is the baseline
    tidy.write_text("seed,arm,metric\n0,treatment,0.91\n0,baseline,0.9\n")
    assert read_pilot(tidy).arms == ("baseline", "treatment")
    tidy.write_text("seed,arm,metric\n0,baseline,0.9\n0,treatment,0.91\n0,other,0.92\n")
    with pytest.raises(ValueError, match=r"a pilot has two arms .* got 3 "):
        read_pilot(tidy)


def test_two_arms_refuses_other_than_two(tmp_path):
    path = tmp_path / "three.csv"
    path.write_text("seed,arm,metric\n0,a,0.9\n0,b,0.91\n0,c,0.92\n")
    with pytest.raises(ValueError, match=r"The 'scores' parameter of two_arms must be two arms "
                                         r".*Got arms a, b, c instead\.$"):
        two_arms(read_results_arms(path))


def test_tidy_two_arm_csv_as_both_logs_reads_each_arm(tmp_path):
    rows = ["seed,arm,question,score"] + [f"{s},{a},{q},{(s + q + (a == 'variant')) % 2}"
                                          for s in range(3) for a in ("baseline", "variant")
                                          for q in range(10)]
    path = tmp_path / "both.csv"
    path.write_text("\n".join(rows) + "\n")
    pair = read_logs({"baseline": path, "variant": path}).scores
    direct = read_results_arms(path)
    np.testing.assert_array_equal(pair.scores, direct.scores)
    np.testing.assert_array_equal(read_pilot(f"{path},{path}").scores, direct.scores)


def test_from_pilot_takes_a_log_pair_of_seeds_or_unknown_runs(logs, tmp_path, capsys):
    from sim.calibrate import main as calibrate

    base, var = logs
    out = tmp_path / "o"
    code = calibrate(["--k", "3", "--sims", "10", "--protocols", "paired_t", "--jobs", "1",
                      "--from-pilot", f"{base},{var}", "--out", str(out), "--no-plot"])
    assert code == 0
    assert "fitted seed_question" in capsys.readouterr().out


def test_from_pilot_refuses_logs_of_repeats_as_evaluate_reads_them_as_fixed_models(
        tmp_path, capsys):
    """Inspect epochs are repeats: evaluate infers "models" for them, so a methods seed
    budget fitted to them would contradict the design; the pilot is refused in one line."""
    from tests_paths import FIXTURES

    log = FIXTURES / "logs" / "inspect_eval" / "tiny.eval"
    out = tmp_path / "o"
    proc = subprocess.run([sys.executable, "-m", "sim.calibrate", "--k", "3", "--sims", "10",
                           "--protocols", "paired_t", "--jobs", "1", "--from-pilot",
                           f"{log},{log}", "--out", str(out), "--no-plot"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "harness logs of repeated runs, which evaluate reads as fixed models" in proc.stderr
    assert "evalcal plan --design models" in proc.stderr
    assert not (out / "calibration.csv").exists()
    assert main([f"--baseline={log}", f"--variant={log}", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["design"]["compare"] == "models"


def test_percent_scores_read_with_percent_pass_the_checks(tmp_path, capsys):
    path = tmp_path / "p.csv"
    path.write_text("seed,arm,metric\n" + "".join(
        f"{s},baseline,{90 + s / 10}\n{s},variant,{91 + s / 7}\n" for s in range(4)))
    assert main([str(path), "--percent"]) == 0
    assert "+1." in capsys.readouterr().out  # about +1 pp, not +100 pp
    assert main([str(path), "--metric-range", "0", "100"]) == 0


def test_partial_credit_is_allowed_when_declared(tmp_path):
    rows = ["seed,arm,question,score"] + [f"{s},{a},{q},{1 if q else 0.5}" for s in range(3)
                                          for a in ("baseline", "variant") for q in range(40)]
    path = tmp_path / "h.csv"
    path.write_text("\n".join(rows) + "\n")
    res = read_tidy_arms(path)
    with pytest.raises(ValueError, match="0/1"):
        check_arm_scores(res)
    assert check_arm_scores(res, partial=True) is res


def test_inspect_logs_with_epochs_through_the_cli(tmp_path, capsys):
    """Inspect .eval logs (3 epochs each): runs are epochs, question-level protocols run."""
    from test_harness_logs import inspect_sample, write_inspect  # tests/ is on sys.path

    rng = np.random.default_rng(3)
    for name, p, ids in (("base", 0.6, range(30)), ("var", 0.75, range(1, 31))):
        samples = [inspect_sample(f"s{i}", e, match="C" if rng.random() < p else "I")
                   for e in (1, 2, 3) for i in ids]
        write_inspect(tmp_path / f"{name}.eval", samples, epochs=3)
    assert main(["--baseline", str(tmp_path / "base.eval"), "--variant",
                 str(tmp_path / "var.eval"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["k"], out["n"]) == (3, 29)
    assert out["matching"] == {"matched": 29, "dropped_baseline": ["s0"],
                               "dropped_variant": ["s30"]}
    assert {r["protocol"] for r in out["rows"]} >= {"paired_t", "mcnemar"}
