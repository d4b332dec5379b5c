"""The pool builders (``python -m sim.llm_pools.build SOURCE``): each source's format on small
files written here, checked against rows computed by hand; one-line refusals of bad input;
and, where ``../shared`` has the pools, each builder's documented sha256 against the shared
file and each shared pool rebuilt, byte for byte, from a source file written back from its
rows (the builder is the inverse of that writing). No test reads a real source file: the
sources are fetched by the commands the builders document, never by the tests.
"""

from __future__ import annotations

import gzip
import hashlib
import inspect
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from item_pools import shared_pool

from evalcal_core.cli import call_main
from evalcal_core.pools import read_pool
from sim.llm_pools import builders
from sim.llm_pools.build import OWNER, build, main
from sim.llm_pools.builders.matharena import slug

ROOT = Path(builders.__file__).resolve().parents[3]
COLUMNS = ["model", "item", "attempt", "score", "cluster"]


def _rows(*rows) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=COLUMNS)


def _json(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


# ------------------------------------------------------------------------------------------
# A tiny source in each builder's real format, and the rows it must give (by hand)


def matharena_source(tmp_path):
    """Two problems and a summary row; "Model (X)" 75% and 100%, "m2" 0% and 25%."""
    path = tmp_path / "table_data.js"
    path.write_text('var result_data = [{"Model (X)": 75.0, "m2": 0.0, "question": 1},\n'
                    '{"Model (X)": 100.0, "m2": 25.0, "question": 2},\n'
                    '{"Model (X)": 87.5, "m2": 12.5, "question": "Avg"}]')
    c = "aime_2025_i"
    expected = _rows(
        ("m2", 1, 0, 0, c), ("m2", 1, 1, 0, c), ("m2", 1, 2, 0, c), ("m2", 1, 3, 0, c),
        ("m2", 2, 0, 1, c), ("m2", 2, 1, 0, c), ("m2", 2, 2, 0, c), ("m2", 2, 3, 0, c),
        ("model-x", 1, 0, 1, c), ("model-x", 1, 1, 1, c), ("model-x", 1, 2, 1, c),
        ("model-x", 1, 3, 0, c),
        ("model-x", 2, 0, 1, c), ("model-x", 2, 1, 1, c), ("model-x", 2, 2, 1, c),
        ("model-x", 2, 3, 1, c))
    return [path], expected


def livecodebench_source(tmp_path):
    """Two models x two problems, pass@1 in percent of 10 generations, in file order; a
    model marked (n=1) is left out."""
    perf = [
        {"question_id": "q2", "model": "B", "date": 1, "difficulty": "easy", "pass@1": 30.0,
         "platform": "leetcode"},
        {"question_id": "q1", "model": "B", "pass@1": 100, "platform": "atcoder"},
        {"question_id": "q2", "model": "One (n=1)", "pass@1": 100.0, "platform": "leetcode"},
        {"question_id": "q2", "model": "A", "pass@1": 0.0, "platform": "leetcode"},
        {"question_id": "q1", "model": "A", "pass@1": 10.0, "platform": "atcoder"},
    ]
    path = _json(tmp_path / "performances_generation.json",
                 {"performances": perf, "models": [], "date_marks": []})
    expected = _rows(*[("B", "q2", a, int(a < 3), "leetcode") for a in range(10)],
                     *[("B", "q1", a, 1, "atcoder") for a in range(10)],
                     *[("A", "q2", a, 0, "leetcode") for a in range(10)],
                     *[("A", "q1", a, int(a < 1), "atcoder") for a in range(10)])
    return [path], expected


def _trial(task, name, resolved, failure="unset"):
    return {"trial_name": name, "task_id": task, "is_resolved": resolved,
            "failure_mode": failure, "instruction": "...", "parser_results": {}}


def terminal_bench_source(tmp_path):
    """System "s-runs": two runs of 1-of-1 trials in two folders (the second run's agent
    crashed on t1: left out; t2's tests did not parse in run 1: scored 0); system "s-one":
    one file of K-of-2 trials in the ':' folder. Attempts: run index, K - 1."""
    base = tmp_path / "results"
    runs = base / "terminal-bench-core@0.1.1" / "s-runs"
    _json(runs / "run1" / "results.json",
          {"results": [_trial("t2", "t2.1-of-1.run1", None, "parse_error"),
                       _trial("t1", "t1.1-of-1.run1", True)], "accuracy": 0.5})
    _json(runs / "run2" / "results.json",
          {"results": [_trial("t1", "t1.1-of-1.run2", None, "unknown_agent_error"),
                       _trial("t2", "t2.1-of-1.run2", True)]})
    one = base / "terminal-bench-core:0.1.1" / "s-one" / "results.json"
    _json(one, {"results": [_trial("t1", "t1.2-of-2", False), _trial("t2", "t2.1-of-2", True),
                            _trial("t1", "t1.1-of-2", True),
                            _trial("t2", "t2.2-of-2", False, "agent_timeout")]})
    c = "terminal-bench-core-0.1.1"
    expected = _rows(("s-one", "t1", 0, 1, c), ("s-one", "t2", 0, 1, c),
                     ("s-one", "t1", 1, 0, c), ("s-one", "t2", 1, 0, c),
                     ("s-runs", "t1", 0, 1, c), ("s-runs", "t2", 0, 0, c),
                     ("s-runs", "t2", 1, 1, c))
    # the second run's file first: runs are ordered by path, not by argument order
    return [runs / "run2" / "results.json", one, runs / "run1" / "results.json"], expected


def swebench_source(tmp_path):
    """The bash-only leaderboard: two systems with per-instance details, one without (left
    out); another leaderboard's results are not read."""
    def details(django, requests):
        return {"psf__requests-2": {"resolved": requests, "cost": 0.1, "api_calls": 3},
                "django__django-1": {"resolved": django, "cost": 0.2, "api_calls": 5}}
    boards = {"leaderboards": [
        {"name": "Verified", "results": [{"folder": "other", "per_instance_details":
                                          details(True, True)}]},
        {"name": "bash-only", "results": [
            {"folder": "sys-b", "resolved": 50.0,
             "per_instance_details": details(django=True, requests=False)},
            {"folder": "sys-none", "resolved": 10.0},
            {"folder": "sys-a", "per_instance_details": details(django=False,
                                                                requests=True)}]}]}
    path = _json(tmp_path / "leaderboards.json", boards)
    expected = _rows(("sys-b", "psf__requests-2", 0, 0, "psf"),
                     ("sys-b", "django__django-1", 0, 1, "django"),
                     ("sys-a", "psf__requests-2", 0, 1, "psf"),
                     ("sys-a", "django__django-1", 0, 0, "django"))
    return [path], expected


def _sha12(text):
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _annotation(instruction, dataset, preference, generator="x"):
    return {"instruction": instruction, "output_1": "ref", "generator_1": "gpt4_1106_preview",
            "dataset": dataset, "output_2": "out", "generator_2": generator,
            "annotator": "weighted_alpaca_eval_gpt4_turbo", "preference": preference}


def alpacaeval_source(tmp_path):
    """Three model folders ("m-2" before "m" by path, as in the repository's listing): "m"
    and "m-2" have both instructions (preference 1 + p); "short" lacks one and is left
    out. Items are the instructions' sha1 prefixes."""
    base = tmp_path / "results"
    annot = "weighted_alpaca_eval_gpt4_turbo/annotations.json"
    ins = ("Say hi.", "Écris un poème.")
    _json(base / "m" / annot, [_annotation(ins[0], "koala", 1.25),
                               _annotation(ins[1], "oasst", 2)])
    _json(base / "m-2" / annot, [_annotation(ins[1], "oasst", 1.0, "example"),
                                 _annotation(ins[0], "koala", 1.5)])
    _json(base / "short" / annot, [_annotation(ins[0], "koala", 1.5)])
    a, b = _sha12(ins[0]), _sha12(ins[1])
    expected = _rows(("m-2", b, 0, 0.0, "oasst"), ("m-2", a, 0, 0.5, "koala"),
                     ("m", a, 0, 0.25, "koala"), ("m", b, 0, 1.0, "oasst"))
    return [base / name / annot for name in ("short", "m", "m-2")], expected


def _zip(path: Path, records, member=None) -> Path:
    """A zip holding one JSON file (the repository's layout)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member or path.name.replace(".zip", ".json"), json.dumps(records))
    return path


def _question(qid, category, answer, pred):
    return {"question_id": qid, "question": "?", "options": ["a", "b"], "answer": answer,
            "answer_index": 0, "cot_content": "", "category": category, "src": "s",
            "pred": pred, "generated_text": "..."}


def mmlupro_source(tmp_path):
    """Two zips (names give the models, "b" given first); question 9 is missing from "b"
    (left out for every model); "a"'s null prediction scores 0; items by id."""
    a = _zip(tmp_path / "model_outputs_a_5shots.zip",
             [_question(9, "law", "B", "B"), _question(3, "math", "A", None),
              _question(1, "law", "C", "C")])
    b = _zip(tmp_path / "model_outputs_b_5shots.json.zip",
             [_question(1, "law", "C", "D"), _question(3, "math", "A", "A")],
             member="model_outputs_b_5shots.json")
    expected = _rows(("a", 1, 0, 1, "law"), ("a", 3, 0, 0, "math"),
                     ("b", 1, 0, 0, "law"), ("b", 3, 0, 1, "math"))
    return [b, a], expected


#: builder name -> the writer of its tiny source (every registered builder has one)
SOURCES = {"matharena": matharena_source, "livecodebench": livecodebench_source,
           "terminal-bench": terminal_bench_source, "swebench": swebench_source,
           "alpacaeval": alpacaeval_source, "mmlu-pro": mmlupro_source}
NAMES = builders.names()


def test_every_builder_has_a_source_here():
    assert sorted(SOURCES) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_builder_gives_the_hand_computed_rows(name, tmp_path):
    inputs, expected = SOURCES[name](tmp_path)
    built = build(name, inputs)
    got = built.frame.reset_index(drop=True)
    pd.testing.assert_frame_equal(got.astype(str), expected.astype(str))
    assert built.sha256 == hashlib.sha256(built.csv).hexdigest()
    assert not built.matches_shared
    assert built.left_out == LEFT_OUT.get(name, ())


#: what each tiny source's builder leaves out, and why
LEFT_OUT = {"livecodebench": ("One (n=1) (one generation)",),
            "swebench": ("sys-none (no per-instance details)",),
            "alpacaeval": ("short (1 of 2 instructions)",),
            "mmlu-pro": ("1 question(s) some input lacks",)}


@pytest.mark.parametrize("name", NAMES)
def test_builder_documents_its_source(name):
    """Repository, a full pinned commit, path(s), licence, the shared pool's name and sha256,
    and the commands (which fetch at that commit and run this builder) in its docstring."""
    b = builders.get(name)
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", b.repository)
    assert re.fullmatch(r"[0-9a-f]{40}", b.commit)
    assert re.fullmatch(r"[0-9a-f]{64}", b.sha256)
    assert b.paths and b.licence and b.title and b.pool.endswith(".csv.gz")
    assert b.newline in ("\n", "\r\n")
    assert f"C={b.commit}" in b.commands and re.search(r'show "?\$C:', b.commands)
    assert f"python -m sim.llm_pools.build {name} --input" in b.commands
    doc = inspect.getmodule(type(b)).__doc__
    for text in (b.commit, b.sha256, b.pool, b.repository):
        assert text in doc
    doc_lines = {line.strip().rstrip("\\").strip() for line in doc.splitlines()}
    for line in b.commands.splitlines():
        # a long command is wrapped in the docstring: its first part is a line there
        assert any(line.startswith(d) for d in doc_lines if d), line
    # the README shows the same commands, verbatim
    readme = (ROOT / "sim" / "llm_pools" / "README.md").read_text()
    assert f"```bash\n{b.commands}```" in readme


@pytest.mark.parametrize("name", NAMES)
def test_command_writes_a_pool_the_reader_accepts(name, tmp_path):
    """``python -m sim.llm_pools.build``, gzip out: the same bytes twice (no time stamp),
    read back by the pool reader with the builder's rows."""
    inputs, expected = SOURCES[name](tmp_path)
    out = tmp_path / "out" / "pool.csv.gz"
    argv = [name, "--input", *map(str, inputs), "--out", str(out)]
    assert main(argv) == 0
    first = out.read_bytes()
    assert main(argv) == 0
    assert out.read_bytes() == first
    assert pd.read_csv(out).astype(str).equals(expected.astype(str))
    pool = read_pool(out, complete_models=builders.get(name).ragged)
    assert pool.items and set(pool.models) <= set(expected["model"])


def test_front_door_builds_and_exits_2_on_bad_input(tmp_path):
    """``python -m sim.llm_pools build`` (``evalcal pools build``) in a process: exit 0 and
    the pool; a missing input is one line on stderr and exit 2."""
    inputs, _ = livecodebench_source(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "lcb.csv"
    ok = subprocess.run([sys.executable, "-m", "sim.llm_pools", "build", "livecodebench",
                         "--input", str(inputs[0]), "--out", str(out)],
                        capture_output=True, text=True, cwd=tmp_path, env=env)
    assert ok.returncode == 0, ok.stderr
    assert "2 model(s) x 2 items x 10 attempts" in ok.stdout
    assert read_pool(out).scores.shape == (2, 2, 10)
    bad = subprocess.run([sys.executable, "-m", "sim.llm_pools", "build", "livecodebench",
                          "--input", str(tmp_path / "nope.json"), "--out", str(out)],
                         capture_output=True, text=True, cwd=tmp_path, env=env)
    assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1
    assert "nope.json' does not exist" in bad.stderr


# ------------------------------------------------------------------------------------------
# Refusals: one line, exit 2


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


TB = "results/terminal-bench-core@0.1.1/sys/run1/results.json"
AE = "results/m/weighted_alpaca_eval_gpt4_turbo/annotations.json"
#: JSON nesting past Python's recursion limit (1,000) and json's C stack guard
DEEP = 100_000

BAD = [
    ("livecodebench", "perf.json", "", r"is empty"),
    ("livecodebench", "perf.json", "[1, 2]", r"has no key 'performances'; expected "
     r"LiveCodeBench's performances_generation.json"),
    ("livecodebench", "perf.json", '{"performances": "x"}',
     r"has 'performances' of type str, not list"),
    ("livecodebench", "perf.json", '{"performances": []}', r"holds no records"),
    ("livecodebench", "perf.json", "{not json", r"is not JSON \(Expecting property name"),
    ("livecodebench", "perf.json",
     '{"performances": [{"question_id": "q", "model": "m", "platform": "p"}]}',
     r"record 0 has no key 'pass@1'"),
    ("livecodebench", "perf.json", '{"performances": [{"question_id": "q", "model": "m", '
     '"pass@1": 35, "platform": "p"}]}', r"gives 'm' on 'q' pass@1 = 35, not a multiple of "
     r"100/10"),
    ("livecodebench", "perf.json", '{"performances": [{"question_id": "q", "model": "m", '
     '"pass@1": true, "platform": "p"}]}', r"record 0 has 'pass@1' = True"),
    ("matharena", "t.js", 'var result_data = [{"m": 30.0, "question": 1}]',
     r"gives 'm' on problem 1 the rate 30.0%, not a multiple of 100/4"),
    ("matharena", "t.js", "var result_data = 3", r"is not MathArena's table data"),
    ("matharena", "t.js", 'var result_data = [{"question": "Avg", "m": 1}]',
     r"has no per-problem rows"),
    ("terminal-bench", "run1/results.json", '{"results": []}',
     r"is not under a 'terminal-bench-core@VERSION/SYSTEM/' folder"),
    ("terminal-bench", TB, '{"results": [{"task_id": "t", "trial_name": "t.1-of-1", '
     '"is_resolved": true}]}', r"record 0 has no key 'failure_mode'"),
    ("terminal-bench", TB, '{"results": [{"task_id": "t", "trial_name": "t-run", '
     '"is_resolved": true, "failure_mode": "unset"}]}', r"without '.K-of-N'"),
    ("terminal-bench", TB, '{"results": [{"task_id": "t", "trial_name": "t.1-of-1", '
     '"is_resolved": "yes", "failure_mode": "unset"}]}', r"record 0 has 'is_resolved' = 'yes'"),
    ("alpacaeval", AE, '{"instruction": "x"}', r"holds no records; expected AlpacaEval's"),
    ("alpacaeval", AE, '[{"instruction": "x", "dataset": "d", "preference": 2.5}]',
     r"record 0 has preference 2.5, not in \[1, 2\]"),
    ("alpacaeval", AE, '[{"instruction": "x", "dataset": "d", "preference": null}]',
     r"record 0 has 'preference' = None"),
    ("alpacaeval", "annotations.json", '[{"instruction": "x", "dataset": "d", '
     '"preference": 1.5}]', r"is not in a 'MODEL/weighted_alpaca_eval_gpt4_turbo/' folder"),
    ("swebench", "lb.json", '{"leaderboards": [{"name": "Lite", "results": []}]}',
     r"has no leaderboard named 'bash-only'"),
    ("swebench", "lb.json", '{"leaderboards": [{"name": "bash-only", "results": [{"folder": '
     '"s", "per_instance_details": {"a__b-1": {"resolved": 1}}}]}]}',
     r"gives instance 'a__b-1' resolved = 1, not true or false"),
    ("swebench", "lb.json", '{"leaderboards": [{"name": "bash-only", "results": [{"folder": '
     '"s"}]}]}', r"has no system with per_instance_details"),
    # nested past Python's recursion limit: a RecursionError traceback before (issue 47's
    # hostile run)
    ("livecodebench", "perf.json", "[" * DEEP + "]" * DEEP, r"nested too deeply to read"),
    ("swebench", "lb.json", "[" * DEEP + "]" * DEEP, r"nested too deeply to read"),
    ("matharena", "t.js", "var result_data = " + "[" * DEEP + "]" * DEEP,
     r"is not MathArena's table data"),
]


@pytest.mark.parametrize(("name", "file", "text", "match"), BAD,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_source_is_one_line_exit_2(name, file, text, match, tmp_path, capsys):
    path = _write(tmp_path, file, text)
    code = call_main(main, OWNER, [name, "--input", path, "--out", str(tmp_path / "p.csv")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1, err
    assert re.search(match, err), err
    assert str(path) in err
    assert not (tmp_path / "p.csv").exists()


def test_source_past_the_cap_is_refused_unread(tmp_path, capsys):
    """A sparse 5 GiB source: one line naming the cap, where the whole file was read (issue 47's
    hostile run: "out of memory; use fewer simulations")."""
    path = tmp_path / "perf.json"
    path.write_bytes(b"{")
    os.truncate(path, 5 * 2**30)
    code = call_main(main, OWNER, ["livecodebench", "--input", str(path), "--out",
                                   str(tmp_path / "p.csv")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "past the cap of 536,870,912 bytes on a source file" in err and str(path) in err


def test_bad_mmlupro_zip_is_one_line_exit_2(tmp_path, capsys):
    deep = tmp_path / "model_outputs_d_5shots.zip"
    with zipfile.ZipFile(deep, "w") as archive:
        archive.writestr("a.json", "[" * DEEP + "]" * DEEP)
    plain = _write(tmp_path, "model_outputs_m_5shots.zip", "not a zip")
    two = tmp_path / "model_outputs_n_5shots.zip"
    with zipfile.ZipFile(two, "w") as archive:
        archive.writestr("a.json", "[]")
        archive.writestr("b.json", "[]")
    named = _zip(tmp_path / "outputs.zip", [_question(1, "law", "A", "A")])
    bad_id = _zip(tmp_path / "model_outputs_k_5shots.zip", [_question("1", "law", "A", "A")])
    cases = [(plain, r"is not a zip archive"), (two, r"holds 2 JSON files"),
             (named, r"is not named model_outputs_MODEL_5shots.zip"),
             (bad_id, r"record 0 has 'question_id' = '1'"),
             (deep, r"holds JSON nested too deeply to read")]
    for path, match in cases:
        code = call_main(main, OWNER, ["mmlu-pro", "--input", str(path), "--out",
                                       str(tmp_path / "p.csv")])
        err = capsys.readouterr().err
        assert code == 2 and len(err.splitlines()) == 1, err
        assert re.search(match, err) and str(path) in err, err


def test_bad_options_are_one_line_exit_2(tmp_path, capsys):
    src = _write(tmp_path, "t.js", 'var result_data = [{"m": 25.0, "question": 1}]')
    cases = [
        (["nope", "--input", src, "--out", "p.csv"], r"'source' parameter must be one of "
         + re.escape(", ".join(NAMES)) + r"\. Got 'nope'"),
        (["matharena", "--input", src, src, "--out", "p.csv"],
         r"'--input' option of .* matharena must be exactly 1 file\(s\) \(eth-sri/matharena.ai "
         r"@ 8fdd9ab : static/js/table_data.js\)\. Got 2"),
        (["matharena", "--input", src, "--out", str(tmp_path / "p.txt")],
         r"'--out' option must be a file name ending in .csv or .csv.gz. Got '/.*p.txt'"),
        (["matharena", "--input", str(tmp_path), "--out", "p.csv"], r"is a folder"),
        (["matharena", "--input", src, "--out", str(tmp_path / "dir.csv")], r"it is a folder"),
    ]
    (tmp_path / "dir.csv").mkdir()
    for argv, match in cases:
        code = call_main(main, OWNER, argv)
        err = capsys.readouterr().err
        assert code == 2 and len(err.splitlines()) == 1, (argv, err)
        assert re.search(match, err), err


def test_matharena_slug():
    assert slug("o3-mini (high)") == "o3-mini-high"
    assert slug("Claude 3.5 Sonnet, 2024") == "claude-3.5-sonnet-2024"


# ------------------------------------------------------------------------------------------
# The shared pools: documented checksums, and rebuilt from sources written back from them


def _shared(name) -> Path:
    """The shared pool ``name`` builds (skips when ``../shared`` lacks it)."""
    return shared_pool(builders.get(name).pool.removesuffix(".csv.gz"))


def _shared_csv(name) -> bytes:
    return gzip.decompress(_shared(name).read_bytes())


@pytest.mark.parametrize("name", NAMES)
def test_documented_sha256_is_the_shared_pools(name):
    assert hashlib.sha256(_shared_csv(name)).hexdigest() == builders.get(name).sha256


def _matharena_from(frame, tmp_path):
    """A ``table_data.js`` holding ``frame``'s per-problem rates (percent)."""
    rate = 100 * frame.groupby(["item", "model"])["score"].mean()
    models = sorted(frame["model"].unique())
    objs = [{**{m: float(rate[(q, m)]) for m in models}, "question": int(q)}
            for q in sorted(frame["item"].unique())]
    path = tmp_path / "table_data.js"
    path.write_text("var result_data = " + json.dumps(objs))
    return [path]


def _lcb_from(frame, tmp_path):
    """``performances`` records in the pool's (model, item) order, pass@1 from the count."""
    per = frame.groupby(["model", "item"], sort=False).agg(k=("score", "sum"),
                                                           platform=("cluster", "first"))
    perf = [{"question_id": q, "model": m, "pass@1": 10.0 * int(r.k), "platform": r.platform}
            for (m, q), r in per.iterrows()]
    return [_json(tmp_path / "perf.json", {"performances": perf})]


def _tbench_from(frame, tmp_path):
    """One folder per system and attempt; an attempt the pool lacks is a crashed trial."""
    paths = []
    items = sorted(frame["item"].unique())
    dataset = tmp_path / "results" / "terminal-bench-core@0.1.1"
    for model, rows in frame.groupby("model"):
        score = rows.set_index(["attempt", "item"])["score"]
        for a in range(int(frame["attempt"].max()) + 1):
            trials = [_trial(t, f"{t}.1-of-1.r{a}", bool(score[(a, t)]))
                      if (a, t) in score.index else
                      _trial(t, f"{t}.1-of-1.r{a}", None, "unknown_agent_error")
                      for t in items]
            paths.append(_json(dataset / model / f"r{a}" / "results.json",
                               {"results": trials}))
    return paths


def _swebench_from(frame, tmp_path):
    results = [{"folder": m, "per_instance_details": {
        q: {"resolved": bool(s)} for q, s in zip(rows["item"], rows["score"])}}
        for m, rows in frame.groupby("model", sort=False)]
    return [_json(tmp_path / "lb.json",
                  {"leaderboards": [{"name": "bash-only", "results": results}]})]


def _alpacaeval_from(frame, tmp_path):
    """One annotations file per model, preference 1 + score (exact: the shared scores are
    p - 1 for p in [1, 2]). An item name is a sha1 prefix with no known preimage: the
    instruction is "instruction ITEM", and the returned map names the items back."""
    annot = "weighted_alpaca_eval_gpt4_turbo/annotations.json"
    paths = [_json(tmp_path / "results" / m / annot,
                   [_annotation(f"instruction {q}", c, 1.0 + x)
                    for q, x, c in zip(rows["item"], rows["score"], rows["cluster"])])
             for m, rows in frame.groupby("model", sort=False)]
    return paths, {_sha12(f"instruction {q}"): q for q in frame["item"].unique()}


def _mmlupro_from(frame, tmp_path):
    """One zip per model; pred = answer when the score is 1, else null."""
    return [_zip(tmp_path / f"model_outputs_{m}_5shots.zip",
                 [_question(int(q), c, "A", "A" if x else None)
                  for q, x, c in zip(rows["item"], rows["score"], rows["cluster"])])
            for m, rows in frame.groupby("model", sort=False)]


WRITE_BACK = {"matharena": _matharena_from, "livecodebench": _lcb_from,
              "terminal-bench": _tbench_from, "swebench": _swebench_from,
              "alpacaeval": _alpacaeval_from, "mmlu-pro": _mmlupro_from}


def test_every_builder_has_a_write_back():
    assert sorted(WRITE_BACK) == NAMES


#: write-backs that take seconds (28 zips of 12,002 records): run with the slow tests
SLOW_WRITE_BACK = {"mmlu-pro"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow)
                                  if n in SLOW_WRITE_BACK else n for n in NAMES])
def test_shared_pool_is_rebuilt_byte_for_byte(name, tmp_path):
    """The shared CSV from a source written back from its own rows: the builder's row order,
    attempt numbering and line ending are the shared file's (the real source, fetched by the
    documented commands, gives the same bytes: the sha256 above)."""
    csv = _shared_csv(name)
    frame = pd.read_csv(_shared(name), dtype={"item": str})
    if name in ("matharena", "mmlu-pro"):
        frame["item"] = frame["item"].astype(int)
    source = WRITE_BACK[name](frame, tmp_path)
    if isinstance(source, tuple):  # item names that cannot be written back: renamed after
        paths, names = source
        built = build(name, paths)
        renamed = built.frame.assign(item=built.frame["item"].map(names))
        newline = builders.get(name).newline
        assert renamed.to_csv(index=False, lineterminator=newline).encode() == csv
        return
    built = build(name, source)
    assert built.csv == csv
    assert built.matches_shared
