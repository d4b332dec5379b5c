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


def test_clusters_stream_their_mean_deltas_in_order_of_arrival(tmp_path, capsys):
    n = 400
    clusters = np.random.default_rng(5).integers(0, 40, n)
    path, d = _two_models(tmp_path, n=n, clusters=clusters)
    assert call_main(main, "evaluate", [str(path), "--cluster", "task", "--stream",
                                        "--json"]) == 0
    body = json.loads(capsys.readouterr().out)["stream"]
    order = list(dict.fromkeys(clusters))            # first question of each cluster
    means = np.array([d[clusters == c].mean() for c in order])
    low, high = confidence_sequence(means, 0.05).interval_at(means.size)
    assert body["unit"] == "clusters" and body["n"] == means.size
    assert body["low"] == pytest.approx(low, abs=1e-12)
    assert body["high"] == pytest.approx(high, abs=1e-12)


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
