"""What the third outside hostile-input run found (issue 47): each is refused in one line that
names what was typed, or (a negative number in exponent form) accepted.

Silent accepts: an option given twice, an empty results path, two output formats, log-only
options with a CSV, --partial-credit on per-seed scores, --assurance without a pilot,
--complete-models without pools, --sd-seed for fixed models, a pool of one run. Misleading
refusals: a repeated column, a row with extra fields, an --arm link loop, --protocol-param B,
the API's non-path results, --effects in fractions, a constant pilot, a --pool that is a file
or holds no pool, --verify of a file or a missing path, --out ''.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process
from tests_paths import FIXTURES

import evalcal
from real_runs import pack_data
from reports.evaluate import main as evaluate
from sim import calibrate, design_check, plan

EVAL = "python -m protocols.evaluate"


def _per_seed(path, k=6, seed=0):
    rng = np.random.default_rng(seed)
    rows = [{"seed": s, "arm": arm, "metric": round(0.8 + 0.01 * i + 0.01 * rng.normal(), 4)}
            for i, arm in enumerate(("base", "new")) for s in range(k)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def _refused(got, *words):
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and len(lines) == 1, got.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(("argv", "words"), [
    (["--alpha", "0.05", "--alpha", "0.2"],
     ["The '--alpha' option must be given once", "Got --alpha 0.05, then --alpha 0.2 instead."]),
    (["--correction", "holm", "--correction=bh"],
     ["The '--correction' option must be given once", "Got --correction holm, then "
                                                      "--correction bh instead."]),
    (["--json", "--format", "markdown"],
     ["The '--json' and '--format' options must be given one at a time",
      "Got --json and --format markdown instead."]),
    (["--max-member-mb", "5"], ["The '--max-member-mb' option must be used with harness logs",
                                "Got 5.0 instead."]),
    (["--partial-credit"], ["The '--partial-credit' option must be given with per-question "
                            "scores", "Got a per-seed file instead."]),
    (["--protocol-param", "B=abc"], ["--protocol-param B=abc: ", "Got 'abc' instead."]),
    (["--protocol-param", "B=-5"], ["--protocol-param B=-5: ", ">= 2"]),
    (["--threshold", "-1"], ["error: --threshold -1: ", ">= 0"]),
    (["--protocol-param", "B=100", "--protocol-param", "threshold=0.02"],
     ["The '--protocol-param' option must be given once, all its values after it "
      "('--protocol-param A B')", "Got --protocol-param B=100, then --protocol-param "
                                  "threshold=0.02 instead."]),
])
def test_evaluate_refuses_what_it_would_have_run(argv, words, tmp_path):
    got = run_in_process(evaluate, EVAL, _per_seed(tmp_path / "r.csv"), *argv)
    _refused(got, *words)


def test_an_empty_results_path_is_not_the_shipped_example(tmp_path):
    _refused(run_in_process(evaluate, EVAL, ""), "The 'results' parameter must be a results "
             "CSV path (left out: the shipped example). Got '' instead.")


def test_a_repeatable_option_may_repeat_and_a_switch_may_too(tmp_path):
    """--protocols takes several values and --arm is given per arm (covered elsewhere);
    a switch given twice means what it says once."""
    got = run_in_process(evaluate, EVAL, _per_seed(tmp_path / "r.csv"), "--json", "--json")
    assert got.returncode == 0, got.stderr


def test_a_negative_number_in_exponent_form_is_a_value(tmp_path):
    path = tmp_path / "neg.csv"
    rng = np.random.default_rng(1)
    pd.DataFrame([{"seed": s, "arm": a, "metric": round(-0.5 + 0.1 * i + 0.05 * rng.normal(), 4)}
                  for i, a in enumerate(("base", "new")) for s in range(6)]).to_csv(path,
                                                                                  index=False)
    plain = run_in_process(evaluate, EVAL, str(path), "--metric-range", "-1", "1")
    exponent = run_in_process(evaluate, EVAL, str(path), "--metric-range", "-1e0", "1")
    assert plain.returncode == 0 and exponent.returncode == 0, exponent.stderr
    assert exponent.stdout == plain.stdout
    _refused(run_in_process(evaluate, EVAL, str(path), "--metric-range=-1e0", "1"),
             "expected 2 arguments (the --metric-range option takes 2 values separated by "
             "spaces, '--metric-range A B'; '--metric-range=A' holds one)")


@pytest.mark.parametrize(("text", "words"), [
    ("seed,arm,metric,metric\n0,a,0.9,0.1\n0,b,0.8,0.2\n",
     ["the column 'metric' is named twice in the header"]),
    ("seed,arm,Metric,metric \n0,a,0.9,0.1\n0,b,0.8,0.2\n",
     ["the column 'metric' is named twice in the header"]),
    ("seed,arm,metric\n0,base,0.9,extra,more\n0,var\n1,base,0.8\n1,var,0.9\n",
     ["row 2 has 5 fields, the header 3"]),
    ("seed,arm,metric\n0,base,0.9\n0,var,0.91,extra\n1,base,0.92\n1,var,0.93\n",
     ["Expected 3 fields in line 3, saw 4"]),  # pandas' own words, right already
])
def test_a_malformed_table_is_named_as_such(text, words, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    _refused(run_in_process(evaluate, EVAL, str(path)), *words)


def test_unnamed_trailing_columns_are_no_repeated_name(tmp_path):
    """A spreadsheet's trailing commas leave unnamed columns: not a column named twice."""
    plain = _per_seed(tmp_path / "plain.csv")
    lines = (tmp_path / "plain.csv").read_text().splitlines()
    trailing = tmp_path / "trailing.csv"
    trailing.write_text("".join(line + ",,\n" for line in lines))
    got = run_in_process(evaluate, EVAL, str(trailing))
    assert got.returncode == 0, got.stderr
    assert got.stdout.replace(str(trailing), "X") == run_in_process(
        evaluate, EVAL, plain).stdout.replace(plain, "X")


def test_an_arm_log_that_is_a_link_loop_is_named(tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    log = FIXTURES / "logs" / "inspect_eval" / "tiny.eval"
    _refused(run_in_process(evaluate, EVAL, "--arm", f"a={tmp_path / 'loop'}", "--arm",
                            f"b={log}"), "arm 'a': ", "a symbolic link loop")


@pytest.mark.parametrize("results", [pd.Series([0.1, 0.2]), 42, b"seed,arm\n", ["r.csv"]])
def test_compare_names_a_results_of_the_wrong_type(results):
    with pytest.raises(ValueError, match=r"^The 'results' parameter of compare\(\) must be a "
                                         r"results CSV path \(str or os\.PathLike\) or a pandas "
                                         r"DataFrame\. Got a value of type \w+ instead\.$"):
        evalcal.compare(results)


def test_compare_names_a_frames_repeated_column():
    frame = pd.DataFrame([[0, "a", 0.9, 0.1], [0, "b", 0.8, 0.2]],
                         columns=["seed", "arm", "metric", "metric"])
    with pytest.raises(ValueError, match="results DataFrame: the column 'metric' is named "
                                         "twice in the header"):
        evalcal.compare(frame)


def test_a_keyword_of_the_wrong_type_is_named_in_one_line():
    with pytest.raises(ValueError) as info:
        evalcal.plan(from_pilot=pd.DataFrame({"a": range(30)}))
    assert str(info.value) == ("The 'from_pilot' parameter of plan() must be a string or a "
                               "path. Got a value of type DataFrame instead.")


def test_a_path_keyword_is_read_as_its_string(tmp_path):
    """The rule says 'or a path' because a path is read as the string it names: a missing
    pilot given as a Path is refused as that file, not as a type."""
    missing = tmp_path / "missing.csv"
    with pytest.raises(ValueError, match=f"results file '{re.escape(str(missing))}' does not "
                                         "exist"):
        evalcal.plan(from_pilot=missing)


CAL = "python -m sim.calibrate"


@pytest.mark.parametrize(("argv", "words"), [
    (["--k", "3", "--k", "5"], ["The '--k' option must be given once", "Got --k 3, then --k 5"]),
    (["--k", "3", "--assurance", "0.9"], ["--assurance sets the assurance of a pilot's seed "
                                          "budget; it goes with --from-pilot or --arm"]),
    (["--k", "3", "--effects", "1e308"],
     ["--effects 1e+308 pp is outside [-100, 100] pp, the most two fractions of correct "
      "answers can differ"]),
    (["--k", "3", "--generator", "seed_question", "--effects", "99"],
     ["--effects 99 pp cannot be simulated by generator seed_question (the effect as a "
      "fraction of the score: "]),
    (["--k", "3", "--generator", "real_pool", "--pool", "{file}"],
     ["The '--pool' option must be a run store folder (", "is a file)"]),
    (["--k", "3", "--generator", "real_pool", "--pool", "{fake}"],
     ["The '--pool' option must be a run store holding a real-run pool"]),
])
def test_calibrate_refuses_in_the_users_terms(argv, words, tmp_path):
    (tmp_path / "file").write_text("x\n")
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "manifest.json").write_text("{}")
    argv = [a.format(file=tmp_path / "file", fake=tmp_path / "fake") for a in argv]
    got = run_in_process(calibrate.main, CAL, *argv, "--sims", "20", "--quiet", "--no-plot",
                         "--out", str(tmp_path / "o"))
    _refused(got, *words)
    assert not (tmp_path / "o").exists()


def test_a_constant_pilot_is_named_not_an_internal_bound(tmp_path):
    pilot = tmp_path / "const.csv"
    pilot.write_text("seed,arm,question,score\n" + "".join(
        f"{s},{a},q{q},1\n" for a in ("base", "new") for s in range(3) for q in range(20)))
    got = run_in_process(calibrate.main, CAL, "--k", "3", "--from-pilot", str(pilot),
                         "--sims", "20", "--quiet", "--no-plot", "--out", str(tmp_path / "o"))
    _refused(got, f"--from-pilot: every score in {pilot} is 1 in the baseline and 1 in the "
             "variant: a pilot without variance has nothing to fit a generator to")


def test_design_check_complete_models_needs_pools(tmp_path):
    got = run_in_process(design_check.main, "python -m sim.design_check", "--design", "models",
                         "--complete-models", "--questions", "20", "--repeats", "1", "--sims",
                         "20", "--quiet", "--out", str(tmp_path / "o"))
    _refused(got, "The '--complete-models' option of sim.design_check must be given with "
             "--llm-pools", "Got no --llm-pools instead.")


def test_plan_refuses_a_seed_component_for_fixed_models():
    got = run_in_process(plan.main, "python -m sim.plan", "--design", "models",
                         "--sd-question", "8", "--sd-seed", "0.5", "--sims", "0")
    _refused(got, "The '--sd-seed' option must be left out with --design models: fixed models "
             "have no training seeds")


@pytest.mark.parametrize(("make", "words"), [
    (lambda tmp: tmp / "nope", ["(", "nope does not exist)"]),
    (lambda tmp: (tmp / "f").write_text("x") and tmp / "f",
     ["is a file, not evalcal-data.npz)"]),
])
def test_verify_names_a_missing_path_or_a_file(make, words, tmp_path, capsys):
    assert pack_data.main(["--verify", str(make(tmp_path))]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "The '--verify' option must be a pack folder" in err
    for word in words:
        assert word in err, err


def test_export_refuses_an_empty_out(tmp_path):
    from evalcal_cli import main as front_door

    got = run_in_process(front_door, "evalcal", "export", _per_seed(tmp_path / "r.csv"),
                         "--out", "")
    _refused(got, "The '--out' option must be a file name ending in .csv")
