"""``evaluate``: the study design, declared or inferred, printed first; labels per design;
bad designs refused with one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from in_process import run_in_process

from evalcal_core import designs
from evalcal_core.designs import (
    KINDS,
    METHODS_INDEPENDENT,
    METHODS_PAIRED,
    MODELS,
    MODELS_CLUSTERED,
)
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


@pytest.mark.parametrize("r, n, runs_are, kind, why, others", [
    (1, 100, "unknown", MODELS, "one run per arm",
     f"{MODELS_CLUSTERED} with --cluster COLUMN"),
    (5, 100, "repeats", MODELS, "runs are repeats",
     f"{METHODS_PAIRED}, {METHODS_INDEPENDENT}, {MODELS_CLUSTERED} with --cluster COLUMN"),
    (5, 1, "seeds", METHODS_PAIRED, "paired by seed", METHODS_INDEPENDENT),
    (5, 100, "unknown", METHODS_PAIRED, "unknown kind",
     f"{METHODS_INDEPENDENT}, {MODELS}, {MODELS_CLUSTERED} with --cluster COLUMN"),
])
def test_design_is_inferred_with_its_reason(r, n, runs_are, kind, why, others):
    """The reason says how to override it and lists the other kinds the data allows (models
    need questions, methods two seeds, a clustered kind --cluster)."""
    design = infer_design(scores(r, n, runs_are))
    assert design.kind == kind
    assert why in design_line(design) and "inferred:" in design_line(design)
    assert design_line(design).endswith(f"; override with --design NAME ({others}))")


@pytest.mark.parametrize("kind", [METHODS_PAIRED, METHODS_INDEPENDENT, MODELS])
def test_declared_design_overrides_inference(kind):
    design = infer_design(scores(5, 100, "seeds"), design=kind)
    assert design.kind == kind and design_line(design).endswith("(declared)")


def test_design_line_is_printed_first_in_every_output(tmp_path):
    path = per_question(tmp_path / "m.csv", n=1136)
    code, out, _ = run([path])
    assert code == 0
    line = out.splitlines()[1]
    assert line == ("design: models, 1 run, 1,136 questions, clusters: none (inferred: one "
                    "run per arm; override with --design NAME (models_clustered with --cluster "
                    "COLUMN))")
    code, out, _ = run([path, "--format", "markdown"])
    assert out.splitlines()[0].startswith("**design: models, 1 run")
    code, out, _ = run([path, "--format", "latex"])
    assert out.splitlines()[0].startswith("% design: models")
    code, out, _ = run([path, "--json"])
    body = json.loads(out)
    assert list(body)[0] == "design" and body["design"]["kind"] == "models"


@pytest.mark.parametrize("argv_extra, kind, primary", [
    ([], "methods_paired", "paired_t"),
    (["--design", METHODS_INDEPENDENT], "methods_independent", "welch_t"),
])
def test_seed_designs_choose_their_protocol(tmp_path, argv_extra, kind, primary):
    code, out, _ = run([per_seed(tmp_path / "s.csv"), "--json", *argv_extra])
    body = json.loads(out)
    assert body["design"]["kind"] == kind and body["primary_protocol"] == primary


def _fits(kind, path):
    """A file of per-question scores, 4 runs per arm, questions in 6 clusters: every kind can
    be declared on it (the clustered one with its --cluster)."""
    path = per_question(path, runs=4, n=60, clusters=lambda q, arm: f"t{q % 6}")
    return [path, "--design", kind] + (["--cluster", "task"] if designs.get(kind).clustered
                                       else [])


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_is_accepted_by_design(tmp_path, kind):
    """``--design NAME`` for every registered kind: declared, of that kind, its primary
    protocol reported; the keyword ``design=`` of ``compare()`` gives the same body."""
    from reports.evaluate import compare

    argv = _fits(kind, tmp_path / "q.csv")
    code, out, err = run([*argv, "--json"])
    assert code == 0, err
    body = json.loads(out)
    assert body["design"]["kind"] == kind and body["design"]["inferred"] == []
    assert body["primary_protocol"] == designs.get(kind).primary
    cluster = "task" if designs.get(kind).clustered else None
    assert compare(argv[0], design=kind, cluster=cluster).to_dict() == body


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


@pytest.mark.parametrize("argv_extra", [[], ["--design", METHODS_INDEPENDENT],
                                        ["--design", MODELS]])
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
    _, out, _ = run([path, "--json", "--design", MODELS])
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
    # inferred methods (repeated seeds) with clusters
    (lambda p: per_question(p, runs=2, clusters=lambda q, a: f"t{q % 3}"), ["--cluster", "task"],
     [f"--cluster task applies to --design {MODELS_CLUSTERED}", f"with {METHODS_PAIRED}"]),
    # --cluster with a declared kind that has no clusters: the two options, named together
    *((lambda p: per_question(p, runs=2, clusters=lambda q, a: f"t{q % 3}"),
       ["--cluster", "task", "--design", kind],
       ["'--cluster' and '--design' options", f"Got --cluster task with --design {kind}"])
      for kind in (METHODS_PAIRED, METHODS_INDEPENDENT, MODELS)),
    (lambda p: per_question(p), ["--design", MODELS_CLUSTERED],
     [f"'--cluster' option must be given with --design {MODELS_CLUSTERED}", "no --cluster"]),
    # a methods design on one run per arm
    *((lambda p: per_question(p), ["--design", kind],
       [f"--design {kind} needs two or more seeds per arm, got 1"])
      for kind in (METHODS_PAIRED, METHODS_INDEPENDENT)),
    # a models design on per-seed metrics
    (lambda p: per_seed(p), ["--design", MODELS],
     [f"--design {MODELS} needs per-question scores"]),
    # the flags --design replaced, and a name that is no kind
    (lambda p: per_seed(p), ["--compare", "models"], ["unrecognized arguments: --compare"]),
    (lambda p: per_seed(p), ["--unpaired"], ["unrecognized arguments: --unpaired"]),
    (lambda p: per_seed(p), ["--design", "methods"],
     ["argument --design: invalid choice: 'methods'", *KINDS]),
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
    code, _, err = run([str(path), "--cluster", "task", "--design", MODELS_CLUSTERED])
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
