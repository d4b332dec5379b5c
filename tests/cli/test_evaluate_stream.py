"""``evaluate --stream``: the numbers of protocols.streaming on the design's units (questions,
seeds or clusters, in arrival order), the sequence chosen by ``--stream-method`` and the
anytime-valid claim that ``--gate`` reads."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcal_core.cli import call_main
from protocols.claims import EXIT_STATUS
from protocols.streaming import confidence_sequence, stream_claim
from reports.evaluate import main


def _two_models(tmp_path, n=600, shift=0.0, seed=0, clusters=None):
    rng = np.random.default_rng(seed)
    base = (rng.random(n) < 0.7).astype(int)
    flip = rng.random(n) < 0.15
    variant = np.where(flip, (rng.random(n) < 0.5 + shift).astype(int), base)
    rows = [(0, arm, q, int(x[q])) for arm, x in (("base", base), ("new", variant))
            for q in range(n)]
    frame = pd.DataFrame(rows, columns=["seed", "arm", "question", "score"])
    if clusters is not None:
        frame["task"] = [f"t{clusters[q]:02d}" for q in frame.question]
    path = tmp_path / "two.csv"
    frame.to_csv(path, index=False)
    return path, (variant - base).astype(float)


@pytest.mark.parametrize("method", ["betting", "empirical-bernstein"])
def test_json_equals_the_library_for_each_method(tmp_path, capsys, method):
    path, d = _two_models(tmp_path)
    args = [str(path), "--stream", "--json"]
    if method != "betting":
        args += ["--stream-method", method]
    assert call_main(main, "evaluate", args) == 0
    body = json.loads(capsys.readouterr().out)["stream"]
    cs = confidence_sequence(d, 0.05, method)
    low, high = cs.interval_at(d.size)
    assert body["method"] == method and body["n"] == d.size
    assert body["low"] == pytest.approx(low, abs=1e-12)
    assert body["high"] == pytest.approx(high, abs=1e-12)
    assert body["stopped_at"] == int(cs.first_exclusion(0.0))


@pytest.mark.parametrize("claim, margin", [("non-inferiority", "0.05"),
                                           ("equivalence", "0.03"),
                                           ("superiority", "0")])
def test_gate_reads_the_anytime_valid_claim(tmp_path, capsys, claim, margin):
    path, d = _two_models(tmp_path, n=1500, shift=0.1)
    args = [str(path), "--stream", "--claim", claim, "--margin", margin, "--gate"]
    status = call_main(main, "evaluate", args + ["--json"])
    body = json.loads(capsys.readouterr().out)["stream"]["claim"]
    ref = stream_claim(d, claim, float(margin), 0.05)
    assert body["verdict"] == str(ref.verdict) and body["decided_at"] == int(ref.stopped_at)
    assert status == EXIT_STATUS[str(ref.verdict)]
    assert call_main(main, "evaluate", args) == status
    out = capsys.readouterr().out
    assert f"--gate exit status {status}: from this anytime-valid verdict" in out


def test_clusters_stream_their_mean_deltas_once_complete(tmp_path, capsys):
    """Each cluster's mean delta enters when its last question is in (hand-built from the
    file's rows); the order of their first questions would give another interval."""
    n = 1200
    clusters = np.random.default_rng(5).integers(0, 150, n)
    path, d = _two_models(tmp_path, n=n, clusters=clusters)
    assert call_main(main, "evaluate", [str(path), "--cluster", "task", "--stream",
                                        "--alpha", "0.1", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)["stream"]
    last = {c: q for q, c in enumerate(clusters)}    # the last question of each cluster
    order = sorted(last, key=last.get)
    means = np.array([d[clusters == c].mean() for c in order])
    cs = confidence_sequence(means, 0.1)
    low, high = cs.interval_at(means.size)
    assert body["unit"] == "clusters" and body["n"] == means.size
    assert body["order"] == "file rows"
    assert body["low"] == pytest.approx(low, abs=1e-12)
    assert body["high"] == pytest.approx(high, abs=1e-12)
    first = list(dict.fromkeys(clusters))            # the order of each first question
    other = confidence_sequence(np.array([d[clusters == c].mean() for c in first]), 0.1)
    assert abs(other.interval_at(means.size)[0] - body["low"]) > 1e-6


def _rows(deltas, ids, extra=None):
    """A one-seed file whose questions appear in the order given (both arms' rows of a
    question side by side), with paired deltas ``deltas`` in {-1, 0, 1}."""
    rows = []
    for k, (q, dq) in enumerate(zip(ids, deltas)):
        base = 1 if dq < 0 else (0 if dq > 0 else k % 2)
        new = base + int(dq)
        for arm, score in (("base", base), ("new", new)):
            rows.append({"seed": 0, "arm": arm, "question": q, "score": score,
                         **({} if extra is None else {"t": extra[k]})})
    return pd.DataFrame(rows)


def _stream(tmp_path, capsys, frame, *args):
    path = tmp_path / "stream.csv"
    frame.to_csv(path, index=False)
    status = call_main(main, "evaluate", [str(path), "--stream", "--json", *args])
    return status, json.loads(capsys.readouterr().out)


def test_the_file_rows_are_the_order_not_the_sorted_ids(tmp_path, capsys):
    """Question ids written in a shuffled order: the stream reads the deltas as the rows
    give them (a hand-built sequence), which differs from the ids sorted."""
    rng = np.random.default_rng(4)
    n = 800
    # a drift: the variant's wins come first in the file, its losses later
    d = np.where(np.arange(n) < 400, rng.choice([0, 1], n, p=[0.6, 0.4]),
                 rng.choice([0, -1], n, p=[0.6, 0.4])).astype(float)
    ids = [f"q{i}" for i in rng.permutation(n)]
    status, body = _stream(tmp_path, capsys, _rows(d, ids))
    s = body["stream"]
    cs = confidence_sequence(d, 0.05)
    assert s["order"] == "file rows" and s["unit"] == "questions"
    assert s["stopped_at"] == int(cs.first_exclusion(0.0)) > 0
    by_id = confidence_sequence(d[np.argsort(ids, kind="stable")], 0.05)
    assert int(by_id.first_exclusion(0.0)) != s["stopped_at"]


def test_order_by_sorts_the_units_by_that_column(tmp_path, capsys):
    """``--order-by t`` reads the questions by ``t`` (numbers, then ISO 8601 times): the
    hand-built sequence of the deltas sorted by ``t``."""
    rng = np.random.default_rng(8)
    n = 600
    d = rng.choice([-1.0, 0.0, 1.0], n, p=[0.1, 0.6, 0.3])
    t = rng.permutation(n) * 7 + 3
    frame = _rows(d, [f"q{i}" for i in range(n)], extra=t)
    status, body = _stream(tmp_path, capsys, frame, "--order-by", "t")
    cs = confidence_sequence(d[np.argsort(t)], 0.05)
    low, high = cs.interval_at(n)
    assert body["stream"]["order"] == "column t"
    assert body["stream"]["low"] == pytest.approx(low, abs=1e-12)
    assert body["stream"]["high"] == pytest.approx(high, abs=1e-12)
    assert body["stream"]["stopped_at"] == int(cs.first_exclusion(0.0))
    times = pd.Timestamp("2024-05-01") + pd.to_timedelta(t, unit="s")
    frame["t"] = np.repeat(times.strftime("%Y-%m-%dT%H:%M:%S").to_numpy(), 2)
    _, again = _stream(tmp_path, capsys, frame, "--order-by", "t")
    assert again["stream"]["low"] == body["stream"]["low"]


def test_an_empty_running_intersection_is_a_finding_not_an_interval(tmp_path, capsys):
    """All wins, then all losses: the sequence's running intersection empties (checked on
    the library's exact bounds, ``low > high``); the output gives no interval, names the
    unit, and the claim is inconclusive (exit 3) whatever it showed before."""
    d = np.r_[np.ones(150), -np.ones(150)]
    cs = confidence_sequence(d, 0.05)
    first = next(t for t in range(1, d.size + 1)
                 if np.greater(*cs.interval_at(t)))
    args = ["--claim", "non-inferiority", "--margin", "0.02", "--gate"]
    status, body = _stream(tmp_path, capsys, _rows(d, [f"q{i}" for i in range(300)]), *args)
    s = body["stream"]
    assert s["intersection_empty_after"] == first
    assert s["low"] is None and s["high"] is None
    assert s["claim"]["verdict"] == "inconclusive" and s["claim"]["low"] is None
    assert s["claim"]["intersection_empty_after"] > 0
    assert status == 3 == body["claim"]["gate_exit_status"]
    assert call_main(main, "evaluate", [str(tmp_path / "stream.csv"), "--stream", *args]) == 3
    out = capsys.readouterr().out
    assert f"became empty after question {first}" in out and "[" not in out.split(
        "anytime-valid")[1].splitlines()[0]


@pytest.mark.parametrize("shift, expected", [(0.3, 0), (-0.3, 1), (0.0, 3)])
def test_json_gate_is_the_process_exit_status(tmp_path, capsys, shift, expected):
    """Shown, refuted, inconclusive: the JSON's ``gate_exit_status``, the stream's verdict
    (through :data:`protocols.claims.EXIT_STATUS`) and the process's exit status agree."""
    path, d = _two_models(tmp_path, n=1500 if shift else 40, shift=shift, seed=3)
    args = [str(path), "--stream", "--claim", "non-inferiority", "--margin", "0.02",
            "--gate"]
    status = call_main(main, "evaluate", args + ["--json"])
    body = json.loads(capsys.readouterr().out)
    assert status == expected == body["claim"]["gate_exit_status"]
    assert EXIT_STATUS[body["stream"]["claim"]["verdict"]] == expected
    assert call_main(main, "evaluate", args) == expected
    assert f"--gate exit status {expected}:" in capsys.readouterr().out


def _subjects(tmp_path, shuffled: bool):
    """The audit's file: 30 subjects of 20 questions, ids ``sNN_JJJ`` (sorted ids group
    them by subject, the first subjects favouring the variant), an overall 15 pp
    regression."""
    rng = np.random.default_rng(1)
    effect = np.linspace(0.35, -0.65, 30)
    effect = effect - effect.mean() - 0.15
    ids = [f"s{k:02d}_{j:03d}" for k in range(30) for j in range(20)]
    mean = np.repeat(effect, 20)
    u = rng.random(600)
    d = np.where(u < (0.7 + mean) / 2, 1.0, np.where(u < 0.7, -1.0, 0.0))
    order = rng.permutation(600) if shuffled else np.arange(600)
    frame = _rows(d[order], [ids[i] for i in order])
    frame["subject"] = frame["question"].str[:3]
    return frame, d[order]


def test_the_audits_regression_no_longer_passes_the_gate(tmp_path, capsys):
    """ids grouped by subject, a 15 pp regression, rows in random order: read in file
    order the non-inferiority gate is refuted (exit 1, the hand-built sequence's
    verdict), where the ids sorted would show it (exit 0); with the subjects as units it
    is at least not shown."""
    frame, d = _subjects(tmp_path, shuffled=True)
    args = ["--claim", "non-inferiority", "--margin", "0.02", "--gate"]
    status, body = _stream(tmp_path, capsys, frame, *args)
    assert status == 1 == EXIT_STATUS[str(stream_claim(d, "non-inferiority", 0.02).verdict)]
    by_id = d[np.argsort(frame["question"].to_numpy()[::2], kind="stable")]
    assert str(stream_claim(by_id, "non-inferiority", 0.02).verdict) == "shown"
    status, _ = _stream(tmp_path, capsys, frame, "--cluster", "subject", *args)
    assert status != 0


@pytest.mark.parametrize("extra, message", [
    (["--stream", "--order-by", "nope"], "'--order-by' option must be a column of"),
    (["--stream", "--order-by", "question"], "a finite number or an ISO 8601 time"),
    (["--stream", "--order-by", "t"], "its own value"),
    (["--order-by", "t"], "'--order-by' option must be given with --stream"),
])
def test_bad_order_by_is_one_line(tmp_path, capsys, extra, message):
    frame = _rows(np.zeros(20), [f"q{i}" for i in range(20)], extra=np.arange(20) // 2)
    path = tmp_path / "ties.csv"
    frame.to_csv(path, index=False)
    assert call_main(main, "evaluate", [str(path), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_paired_seeds_are_the_units(tmp_path, capsys):
    rng = np.random.default_rng(2)
    base = 0.7 + 0.01 * rng.standard_normal(12)
    new = base + 0.02 + 0.005 * rng.standard_normal(12)
    rows = [(s, a, float(x[s])) for a, x in (("base", base), ("new", new)) for s in range(12)]
    path = tmp_path / "seeds.csv"
    pd.DataFrame(rows, columns=["seed", "arm", "metric"]).to_csv(path, index=False)
    assert call_main(main, "evaluate", [str(path), "--stream", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)["stream"]
    low, _ = confidence_sequence(new - base, 0.05).interval_at(12)
    assert body["unit"] == "seeds" and body["n"] == 12
    assert body["low"] == pytest.approx(low, abs=1e-12)


@pytest.mark.parametrize("extra, message", [
    (["--stream-method", "betting"], "'--stream-method' option must be given with --stream"),
    (["--stream", "--stream-method", "hoeffding"], "invalid choice: 'hoeffding'"),
    (["--stream", "--claim", "superiority", "--alpha", "0.6"],
     "'--alpha' option must be < 0.5 with --stream"),
])
def test_bad_stream_options_are_one_line(tmp_path, capsys, extra, message):
    path, _ = _two_models(tmp_path, n=50)
    try:
        status = call_main(main, "evaluate", [str(path), *extra])
    except SystemExit as stop:                       # argparse's own refusals
        status = stop.code
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_logs_name_their_order_as_ids_not_arrival(tmp_path, capsys):
    """Harness logs keep question ids, not the samples' order: the stream says it reads
    the ids (``"log question ids"``) and the text that this is valid only for ids given
    in random order (consistency check: the hand-built sequence in natural id order)."""
    rng = np.random.default_rng(6)
    n = 300
    d = rng.choice([-1.0, 0.0, 1.0], n, p=[0.1, 0.6, 0.3])
    frame = _rows(d, [str(i) for i in rng.permutation(n)])
    paths = []
    for arm in ("base", "new"):
        part = frame[frame.arm == arm][["question", "score"]]
        paths.append(tmp_path / f"{arm}.csv")
        part.to_csv(paths[-1], index=False)
    args = ["--baseline", str(paths[0]), "--variant", str(paths[1]), "--stream"]
    assert call_main(main, "evaluate", [*args, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)["stream"]
    ids = frame.question.to_numpy()[::2].astype(int)
    low, _ = confidence_sequence(d[np.argsort(ids)], 0.05).interval_at(n)
    assert body["order"] == "log question ids"
    assert body["low"] == pytest.approx(low, abs=1e-12)
    assert call_main(main, "evaluate", args) == 0
    assert "valid only if the ids were assigned in random order" in capsys.readouterr().out
