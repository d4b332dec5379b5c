"""A pilot's harness logs as ``--arm NAME=PATH`` (issue 47 item 1): ``sim.plan`` and
``sim.calibrate`` read them as ``evaluate`` reads its arms.

Consistency checks: the reference is the same pilot given the older ways (``--from-pilot
'BASELINE,VARIANT'``, and the tidy CSV ``evalcal export --arm ...`` writes from the same
logs); the planner's and the fit's statistics are tested against their references in
``tests/sim/test_plan.py`` and ``tests/sim/test_pilot_budget.py``.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from in_process import run_in_process
from tests_paths import FIXTURES

import evalcal
from reports.evaluate import export
from sim import calibrate, plan
from sim.pilot import pilot_source, read_pilot

LOGS = FIXTURES / "logs"


@pytest.fixture
def lm_eval_pair(tmp_path):
    """The fixture's two real lm-eval runs (seeds 1 and 2, six questions) as the baseline,
    and a copy with the answers of every third question flipped as the variant."""
    base = LOGS / "lm_eval" / "dummy"
    variant = tmp_path / "variant"
    shutil.copytree(base, variant)
    for i, path in enumerate(sorted(variant.glob("samples_*.jsonl"))):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for j, row in enumerate(rows):
            if (i + j) % 3 == 0:
                row["acc"] = 1.0 - row["acc"]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(base), str(variant)


@pytest.fixture
def inspect_pair(tmp_path):
    """The fixture's real Inspect log (five questions, two epochs) as the baseline, and its
    JSON twin with two answers marked the other way as the variant."""
    log = json.loads((LOGS / "inspect_json" / "tiny.json").read_text())
    for sample in log["samples"][:2]:
        score = sample["scores"]["includes"]
        score["value"] = "I" if score["value"] == "C" else "C"
    variant = tmp_path / "variant.json"
    variant.write_text(json.dumps(log))
    return str(LOGS / "inspect_eval" / "tiny.eval"), str(variant)


def _components(study):
    c = study.plan.config.components
    return np.array([c.sd_seed, c.sd_question, c.sd_inter, c.sd_repeat])


def test_plan_reads_lm_eval_logs_given_by_arm(lm_eval_pair, tmp_path):
    base, variant = lm_eval_pair
    by_arm = evalcal.plan(arm=(f"base={base}", f"new={variant}"), sims=0)
    by_pair = evalcal.plan(from_pilot=f"{base},{variant}", sims=0)
    tidy = tmp_path / "tidy.csv"
    assert run_in_process(export.main, export.PROG, "--arm", f"base={base}", "--arm",
                          f"new={variant}", "--out", tidy).returncode == 0
    by_csv = evalcal.plan(from_pilot=str(tidy), sims=0)
    for other in (by_pair, by_csv):
        np.testing.assert_allclose(_components(by_arm), _components(other), rtol=1e-12)
        assert by_arm.chosen == other.chosen
    assert _components(by_arm)[2] > 0  # the flipped answers are interaction, not zero
    # the pilot is named as the user gave it
    assert f"--arm base={base} --arm new={variant}" in by_arm.plan.config.components.source


def test_plan_reads_inspect_logs_given_by_arm(inspect_pair):
    base, variant = inspect_pair
    argv = ["--design", "models", "--sims", "0"]
    by_arm = run_in_process(plan.main, "python -m sim.plan", *argv, "--arm", f"a={base}",
                            "--arm", f"b={variant}")
    by_pair = run_in_process(plan.main, "python -m sim.plan", *argv, "--from-pilot",
                             f"{base},{variant}")
    assert by_arm.returncode == 0 and by_pair.returncode == 0, by_arm.stderr
    label = f"--arm a={base} --arm b={variant}"
    assert label in by_arm.stdout
    assert by_arm.stdout.replace(label, "PILOT") == by_pair.stdout.replace(
        f"{base},{variant}", "PILOT")


def test_the_arm_named_baseline_is_the_baseline(inspect_pair):
    """As a CSV's arms (``read_two_arms``): the arm named ``baseline``, else the first."""
    base, variant = inspect_pair
    named = read_pilot({"variant": variant, "baseline": base})
    assert named.arms == ("baseline", "variant")
    np.testing.assert_array_equal(named.scores, read_pilot(f"{base},{variant}").scores)
    assert read_pilot({"new": variant, "old": base}).arms == ("new", "old")


def _one_arm_log(path, p, runs=4, questions=40, seed=0):
    rng = np.random.default_rng(seed)
    rows = ["run,question,score"] + [f"{r},q{q},{int(rng.random() < p)}"
                                     for r in range(runs) for q in range(questions)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_calibrate_reads_logs_given_by_arm(tmp_path):
    """One-arm logs of four runs (runs of unknown kind, as the comma form takes them)."""
    base = _one_arm_log(tmp_path / "base.csv", 0.6, seed=1)
    variant = _one_arm_log(tmp_path / "var.csv", 0.7, seed=2)
    argv = ["--k", "3", "--sims", "10", "--protocols", "paired_t", "--jobs", "1", "--no-plot"]
    by_arm = run_in_process(calibrate.main, "python -m sim.calibrate", *argv, "--arm",
                            f"baseline={base}", "--arm", f"variant={variant}", "--out",
                            tmp_path / "a")
    by_pair = run_in_process(calibrate.main, "python -m sim.calibrate", *argv,
                             "--from-pilot", f"{base},{variant}", "--out", tmp_path / "b")
    assert by_arm.returncode == 0 and by_pair.returncode == 0, by_arm.stderr
    fitted = [line for line in by_arm.stdout.splitlines() if "fitted seed_question" in line]
    label = f"--arm baseline={base} --arm variant={variant}"
    assert len(fitted) == 1 and label in fitted[0]  # named as the user gave it
    assert fitted[0].replace(label, f"{base},{variant}") in by_pair.stdout  # the same fit
    assert (tmp_path / "a" / "calibration.csv").read_text() == (
        tmp_path / "b" / "calibration.csv").read_text()


def test_calibrate_refuses_lm_eval_repeats_by_arm_as_by_pair(lm_eval_pair, tmp_path):
    base, variant = lm_eval_pair
    got = run_in_process(calibrate.main, "python -m sim.calibrate", "--k", "3", "--sims",
                         "10", "--arm", f"base={base}", "--arm", f"new={variant}", "--out",
                         tmp_path / "o", "--no-plot")
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and len(lines) == 1, got.stderr
    assert lines[0].startswith(f"python -m sim.calibrate: error: --arm: --arm base={base} "
                               f"--arm new={variant} are harness logs of repeated runs")


@pytest.mark.parametrize(("argv", "message"), [
    (["--arm", "a={log}", "--from-pilot", "{log},{log}"],
     "The '--from-pilot' and '--arm' options must be given one at a time: "),
    (["--arm", "a={log}"], "The '--arm' option must be given twice for a pilot, once per arm"
                           ": the baseline's log and the variant's. Got 1 arm (a) instead."),
    (["--arm", "a={log}", "--arm", "b={log}", "--arm", "c={log}"],
     "Got 3 arms (a, b, c) instead."),
    (["--arm", "a={log}", "--arm", "b={tmp}/nope.json"], "arm 'b': log '{tmp}/nope.json' does "
                                                         "not exist"),
    (["--arm", "a", "--arm", "b={log}"], "--arm must be NAME=PATH, got 'a'"),
    (["--arm", "a={log}", "--arm", "a={log}"], "--arm 'a' is given twice"),
])
@pytest.mark.parametrize("command", ["plan", "calibrate"])
def test_bad_arms_are_one_line(command, argv, message, tmp_path):
    log = LOGS / "inspect_eval" / "tiny.eval"
    argv = [a.format(log=log, tmp=tmp_path) for a in argv]
    message = message.format(log=log, tmp=tmp_path)
    extra = (["--k", "3", "--out", str(tmp_path / "o")] if command == "calibrate" else [])
    module = {"plan": plan, "calibrate": calibrate}[command]
    got = run_in_process(module.main, f"python -m sim.{command}", *extra, *argv)
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and len(lines) == 1, got.stderr
    assert message in lines[0], lines[0]
    assert not (tmp_path / "o").exists()


def test_plan_arm_with_param_is_refused_naming_arm(inspect_pair):
    base, variant = inspect_pair
    got = run_in_process(plan.main, "python -m sim.plan", "--arm", f"a={base}", "--arm",
                         f"b={variant}", "--param", "theta=1")
    assert got.returncode == 2
    assert "The '--arm' option must be not combined with --param" in got.stderr


def test_pilot_source():
    assert pilot_source("x.csv") == "x.csv" and pilot_source(None) is None
    assert pilot_source(None, ("b=2", "a=1")) == {"b": "2", "a": "1"}


def test_log_options_reach_a_pilots_logs(lm_eval_pair, tmp_path):
    """--metric (and --task, --filter, --log-format) read a pilot's logs as they read
    evaluate's arms: the metric the logs hold gives the same plan as the default, one they
    lack is the reader's one-line error, in sim.plan and sim.calibrate alike."""
    base, variant = lm_eval_pair
    arms = ("--arm", f"base={base}", "--arm", f"new={variant}")
    named = evalcal.plan(arm=arms[1::2], metric="acc", log_format="lm-eval", sims=0)
    plain = evalcal.plan(arm=arms[1::2], sims=0)
    np.testing.assert_allclose(_components(named), _components(plain), rtol=1e-12)
    for command, prog, extra in ((plan.main, "python -m sim.plan", ("--sims", "0")),
                                 (calibrate.main, "python -m sim.calibrate",
                                  ("--k", "3", "--sims", "10", "--no-plot", "--out",
                                   str(tmp_path / "o")))):
        got = run_in_process(command, prog, *extra, *arms, "--metric", "nope")
        lines = got.stderr.strip().splitlines()
        assert got.returncode == 2 and len(lines) == 1, got.stderr
        assert "metric 'nope' (--metric) is absent; metrics present: acc" in lines[0]


def test_log_options_are_refused_without_logs(tmp_path):
    """A tidy CSV pilot is no log: a log option there would do nothing, so it is refused
    in one line naming how logs are given."""
    pilot = tmp_path / "pilot.csv"
    pilot.write_text("seed,arm,question,score\n" + "".join(
        f"{s},{a},q{q},{(s + q + i) % 2}\n" for i, a in enumerate(("baseline", "variant"))
        for s in range(3) for q in range(10)))
    for command, prog, extra in ((plan.main, "python -m sim.plan", ("--sims", "0")),
                                 (calibrate.main, "python -m sim.calibrate",
                                  ("--k", "3", "--sims", "10", "--no-plot", "--out",
                                   str(tmp_path / "o")))):
        got = run_in_process(command, prog, *extra, "--from-pilot", str(pilot), "--task", "t")
        lines = got.stderr.strip().splitlines()
        assert got.returncode == 2 and len(lines) == 1, got.stderr
        assert ("'--task' option must be used with harness logs (--arm NAME=PATH per arm, "
                "or --from-pilot 'BASELINE,VARIANT'): it reads them") in lines[0], lines[0]


@pytest.mark.parametrize(("value", "message"), [
    ("", "The '--from-pilot' option must be a results CSV, or two harness logs as "
         "'BASELINE,VARIANT'. Got '' instead."),
    (",", "must be a results CSV, or two harness logs as 'BASELINE,VARIANT' (two paths "
          "joined by one comma). Got ',' instead."),
    ("{log},", "(two paths joined by one comma). Got '{log},' instead."),
    ("{log},{log},{log}", "(two paths joined by one comma). Got '{log},{log},{log}' instead."),
    ("{tmp}/nope,{log}", "--from-pilot: log '{tmp}/nope' does not exist"),
    ("{tmp}/loop,{log}", "{tmp}/loop: a symbolic link loop"),
])
@pytest.mark.parametrize("command", ["plan", "calibrate"])
def test_a_malformed_from_pilot_is_named(command, value, message, tmp_path):
    """--from-pilot's comma form is two paths: an empty value, a stray comma, three logs or
    a link loop are each named in one line (they were read as the folder '.', or as one
    missing results file)."""
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    log = LOGS / "inspect_eval" / "tiny.eval"
    extra = (["--k", "3", "--out", str(tmp_path / "o")] if command == "calibrate" else [])
    module = {"plan": plan, "calibrate": calibrate}[command]
    got = run_in_process(module.main, f"python -m sim.{command}", *extra, "--from-pilot",
                         value.format(log=log, tmp=tmp_path))
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and len(lines) == 1, got.stderr
    assert message.format(log=log, tmp=tmp_path) in lines[0], lines[0]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["plan", "calibrate"])
def test_one_log_with_a_log_option_is_named_as_one_arm(command, tmp_path):
    """One arm's log folder with --metric: the missing second arm is what is wrong, not the
    option (it was refused as given to a results CSV)."""
    extra = (["--k", "3", "--out", str(tmp_path / "o")] if command == "calibrate" else [])
    module = {"plan": plan, "calibrate": calibrate}[command]
    got = run_in_process(module.main, f"python -m sim.{command}", *extra, "--from-pilot",
                         str(LOGS / "lm_eval" / "dummy"), "--metric", "acc")
    assert got.returncode == 2
    assert "is a directory; a harness log folder holds one arm, so name both arms' logs" in \
        got.stderr


def test_a_pilot_of_identical_arms_is_named_as_such(inspect_pair):
    """The same log for both arms has no variance: said so, not as an --sd-seed of 0 that
    the user never gave; a stated component plans."""
    base, _ = inspect_pair
    got = run_in_process(plan.main, "python -m sim.plan", "--arm", f"a={base}", "--arm",
                         f"b={base}")
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and len(lines) == 1, got.stderr
    assert lines[0].startswith("python -m sim.plan: error: --arm: the pilot's arms differ by "
                               "+0 pp on every run and question")
    assert "--sd-seed' option" not in lines[0]
    stated = run_in_process(plan.main, "python -m sim.plan", "--arm", f"a={base}", "--arm",
                            f"b={base}", "--sd-repeat", "1", "--sims", "0")
    assert stated.returncode == 0, stated.stderr


def test_calibrate_warnings_name_arm_for_arm_pilots(tmp_path):
    """A pilot of two seeds given by --arm: its warnings name --arm, as given."""
    rng = np.random.default_rng(3)
    pilot = tmp_path / "two_seeds.csv"
    pilot.write_text("seed,arm,question,score\n" + "".join(
        f"{s},{a},q{q},{int(rng.random() < 0.6 + 0.05 * i)}\n"
        for i, a in enumerate(("baseline", "variant")) for s in range(2) for q in range(40)))
    got = run_in_process(calibrate.main, "python -m sim.calibrate", "--k", "3", "--sims", "10",
                         "--no-plot", "--quiet", "--protocols", "paired_t", "--out",
                         tmp_path / "o", "--arm", f"baseline={pilot}", "--arm",
                         f"variant={pilot}")
    assert got.returncode == 0, got.stderr
    warnings = [line for line in got.stderr.splitlines() if line.startswith("warning:")]
    assert warnings and all(w.startswith("warning: --arm: ") for w in warnings), warnings


@pytest.mark.parametrize("name", ["a\nb", "a\x1b[31m", "tab\there"])
def test_arm_names_with_control_characters_are_refused(name):
    from evalcal_core.readers import parse_arm_options
    from evalcal_core.validate import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="holds a control character; arm names "
                                                    "must be printable text"):
        parse_arm_options([f"{name}=x.json", "b=y.json"])
    assert parse_arm_options(["modèle-α=x.json"]) == {"modèle-α": "x.json"}
