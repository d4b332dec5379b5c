"""``evaluate``: the study design, declared or inferred, printed first; labels per design;
bad designs refused with one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from in_process import run_in_process

from evalcal_core.scores import ArmScores
from protocols.analysis.design import infer_design
from reports.evaluate import main
from reports.evaluate.design import design_line

PROG = "python -m reports.evaluate"


def per_seed(path, k=6, arms=("baseline", "variant"), shift=0.01, seed=0):
    rng = np.random.default_rng(seed)
    rows = ["seed,arm,metric"]
    for s in range(k):
        common = rng.normal(0, 0.004)
        for a, arm in enumerate(arms):
            rows.append(f"{s},{arm},{0.8 + a * shift + common + rng.normal(0, 0.003):.5f}")
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def per_question(path, arms=("a", "b"), n=200, runs=1, clusters=None, seed=0, p=(0.6, 0.7)):
    rng = np.random.default_rng(seed)
    head = "seed,arm,question,score" + (",task" if clusters else "")
    rows = [head]
    for r in range(runs):
        for a, arm in enumerate(arms):
            for q in range(n):
                row = f"{r},{arm},q{q},{int(rng.random() < p[a % len(p)])}"
                if clusters:
                    row += f",{clusters(q, arm)}"
                rows.append(row)
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def run(argv):
    done = run_in_process(main, PROG, *argv)
    return done.returncode, done.stdout, done.stderr


def scores(r, n, runs_are):
    return ArmScores(arms=("a", "b"), scores=np.zeros((2, r, n)),
                     question_ids=tuple(map(str, range(n))), run_ids=tuple(map(str, range(r))),
                     runs_are=runs_are)


@pytest.mark.parametrize("r, n, runs_are, unpaired, kind, why", [
    (1, 100, "unknown", False, "models", "one run per arm"),
    (5, 100, "repeats", False, "models", "runs are repeats"),
    (5, 1, "seeds", False, "methods_paired", "paired by seed"),
    (5, 1, "seeds", True, "methods_independent", "independent by --unpaired"),
    (5, 100, "unknown", False, "methods_paired", "unknown kind"),
])
def test_design_is_inferred_with_its_reason(r, n, runs_are, unpaired, kind, why):
    design = infer_design(scores(r, n, runs_are), unpaired=unpaired)
    assert design.kind == kind
    assert why in design_line(design) and "inferred:" in design_line(design)


def test_declared_design_overrides_inference():
    design = infer_design(scores(5, 100, "seeds"), compare="models")
    assert design.kind == "models" and design_line(design).endswith("(declared)")


def test_design_line_is_printed_first_in_every_output(tmp_path):
    path = per_question(tmp_path / "m.csv", n=1136)
    code, out, _ = run([path])
    assert code == 0
    line = out.splitlines()[1]
    assert line == ("design: models, 1 run, 1,136 questions, clusters: none (inferred: one "
                    "run per arm; override with --compare)")
    code, out, _ = run([path, "--format", "markdown"])
    assert out.splitlines()[0].startswith("**design: models, 1 run")
    code, out, _ = run([path, "--format", "latex"])
    assert out.splitlines()[0].startswith("% design: models")
    code, out, _ = run([path, "--json"])
    body = json.loads(out)
    assert list(body)[0] == "design" and body["design"]["kind"] == "models"


@pytest.mark.parametrize("argv_extra, kind, primary", [
    ([], "methods_paired", "paired_t"),
    (["--unpaired"], "methods_independent", "welch_t"),
])
def test_seed_designs_choose_their_protocol(tmp_path, argv_extra, kind, primary):
    code, out, _ = run([per_seed(tmp_path / "s.csv"), "--json", *argv_extra])
    body = json.loads(out)
    assert body["design"]["kind"] == kind and body["primary_protocol"] == primary


def test_models_with_one_binary_run_use_exact_mcnemar(tmp_path):
    """The primary p equals the exact binomial McNemar p (scipy.stats.binomtest)."""
    from scipy import stats

    path = per_question(tmp_path / "m.csv", n=300)
    code, out, _ = run([path, "--json"])
    body = json.loads(out)
    assert body["primary_protocol"] == "mcnemar"
    import pandas as pd
    f = pd.read_csv(path).pivot(index="question", columns="arm", values="score")
    b = int(((f.a == 1) & (f.b == 0)).sum())
    c = int(((f.a == 0) & (f.b == 1)).sum())
    ref = stats.binomtest(min(b, c), b + c, 0.5).pvalue
    assert body["comparisons"][0]["p_value"] == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("argv_extra", [[], ["--unpaired"], ["--compare", "models"]])
def test_every_design_shows_a_reportable_row_first(tmp_path, argv_extra):
    path = per_question(tmp_path / "q.csv", runs=4, n=60)
    code, out, _ = run([path, "--json", *argv_extra])
    rows = json.loads(out)["rows"]
    assert rows and rows[0]["pitfall"] == ""
    flags = [bool(r["pitfall"]) for r in rows]
    assert flags == sorted(flags)  # reportable first


def test_labels_depend_on_the_design(tmp_path):
    """paired_t is reportable for paired seeds, a pitfall for fixed models with repeats."""
    path = per_question(tmp_path / "q.csv", runs=4, n=60)
    _, out, _ = run([path, "--json"])
    rows = {r["protocol"]: r for r in json.loads(out)["rows"]}
    assert rows["paired_t"]["pitfall"] == ""
    _, out, _ = run([path, "--json", "--compare", "models"])
    rows = {r["protocol"]: r for r in json.loads(out)["rows"]}
    assert rows["paired_t"]["pitfall"] and rows["paired_t_questions"]["pitfall"] == ""


def test_clustered_models(tmp_path):
    path = per_question(tmp_path / "c.csv", n=120, clusters=lambda q, arm: f"t{q % 6}")
    code, out, _ = run([path, "--cluster", "task"])
    assert code == 0
    assert "clusters: 6 by 'task'" in out.splitlines()[1]
    assert "reportable for models_clustered" in out
    code, out, _ = run([path, "--cluster", "task", "--json"])
    rows = json.loads(out)["rows"]
    assert rows[0]["pitfall"] == "" and rows[0]["protocol"] == "cluster_cr2"


def two_clusters(q, arm):
    return "x" if q == 0 else f"t{q % 3}"


@pytest.mark.parametrize("make, argv_extra, words", [
    (lambda p: per_question(p, clusters=lambda q, a: "t"), ["--cluster", "nope"],
     ["--cluster 'nope' is not a column"]),
    (lambda p: per_question(p, clusters=lambda q, a: "t"), ["--cluster", "task"],
     ["every question is in one cluster"]),
    (lambda p: per_question(p, clusters=lambda q, a: f"t{q % 3}" if a == "a" else f"u{q % 3}"),
     ["--cluster", "task"], ["clusters differ between arms", "'q0'"]),
    (lambda p: per_question(p, runs=2, clusters=lambda q, a: f"t{q % 3}"), ["--cluster", "task",
                                                                           "--compare",
                                                                           "methods"],
     ["--cluster applies to --compare models"]),
    (lambda p: per_question(p), ["--unpaired", "--compare", "models"],
     ["'--unpaired' option must be used with --compare methods"]),
    (lambda p: per_question(p), ["--compare", "methods"], ["two or more seeds"]),
    (lambda p: per_seed(p), ["--compare", "models"], ["needs per-question scores"]),
])
def test_bad_designs_are_one_line_exit_2(tmp_path, make, argv_extra, words):
    path = make(tmp_path / "bad.csv")
    code, out, err = run([path, *argv_extra])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert all(w in err for w in words), err


def test_question_filed_under_two_clusters(tmp_path):
    path = tmp_path / "two.csv"
    rows = ["seed,arm,question,score,task"]
    for r in range(2):
        for arm in ("a", "b"):
            for q in range(30):
                task = f"t{q % 3}" if not (q == 4 and r == 1) else "other"
                rows.append(f"{r},{arm},q{q},{(q + r) % 2},{task}")
    path.write_text("\n".join(rows) + "\n")
    code, _, err = run([str(path), "--cluster", "task", "--compare", "models"])
    assert code == 2 and "filed under two clusters" in err and "'q4'" in err


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


def test_inspect_epochs_are_repeats_of_fixed_models():
    """Real Inspect logs (2 epochs): models with repeats, inferred; --cluster reads the
    metadata field; the design line comes before the log matching."""
    argv = ["--arm", f"a={FIXTURES / 'inspect_eval' / 'tiny.eval'}",
            "--arm", f"b={FIXTURES / 'inspect_json' / 'tiny.json'}"]
    code, out, err = run(argv)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].startswith("design: models, 2 runs per question, 5 questions")
    assert "runs are repeats (Inspect epochs)" in lines[1]
    assert "questions matched" in lines[2]
    code, out, err = run([*argv, "--cluster", "topic", "--json"])
    assert code == 0, err
    design = json.loads(out)["design"]
    assert design["kind"] == "models_clustered" and design["cluster"] == "topic"
