"""evaluate prints the evidence for the protocol it reports: the shipped evidence table's
nearest cells, with the same numbers in the text, the JSON, Markdown and LaTeX, and the
API's result; a cell over its level is named as a warning, and where it is a real cell at a
shape inside the real cells' range the protocol is labelled a pitfall and gives no verdict.
The table is read here with pandas, independently of the lookup."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process

from evalcal_core.designs import MODELS, MODELS_CLUSTERED
from protocols.analysis.evidence import TABLE
from reports.evaluate.cli import main

PROG = "python -m protocols.evaluate"


def tidy(path, n=400, runs=2, clusters=0, seed=0, p=(0.3, 0.32)):
    """Two fixed models' 0/1 scores (``runs`` repeats per question), clusters optional."""
    rng = np.random.default_rng(seed)
    frames = []
    for arm, rate in zip(("base", "new"), p):
        q = np.tile(np.arange(n), runs)
        frames.append(pd.DataFrame({
            "seed": np.repeat(np.arange(runs), n), "arm": arm, "question": [f"q{i}" for i in q],
            "score": (rng.random(n * runs) < rate).astype(int),
            **({"topic": [f"t{i % clusters}" for i in q]} if clusters else {})}))
    pd.concat(frames).to_csv(path, index=False)
    return str(path)


def table_row(kind, protocol, n, runs, clusters=0, real=True):
    """The shipped table's effect-0 row of exactly this shape."""
    t = pd.read_csv(TABLE)
    pick = ((t["kind"] == kind) & (t["protocol"] == protocol) & (t["effect_pp"] == 0)
            & (t["n_questions"] == n) & (t["runs"] == runs) & (t["clusters"] == clusters)
            & ((t["pool_models"] > 0) == real))
    rows = t[pick]
    assert len(rows) >= 1, (kind, protocol, n, runs, clusters, real)
    return rows.loc[rows["rate"].idxmax()]


def run(*argv):
    done = run_in_process(main, PROG, *argv)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_two_models_print_the_tables_numbers(tmp_path):
    """At a shape the table holds (400 questions, 2 runs), the real and synthetic lines carry
    the table's rates and intervals, in text and JSON alike."""
    path = tidy(tmp_path / "pair.csv")
    real = table_row(MODELS, "t_signflip_questions", 400, 2)
    body = json.loads(run(path, "--design", MODELS, "--json"))
    ev = body["evidence"]
    assert ev["protocol"] == body["primary_protocol"] == "t_signflip_questions"
    assert ev["real"]["rate"] == pytest.approx(real["rate"], abs=1e-9)
    assert ev["real"]["low"] == pytest.approx(real["rate_low"], abs=1e-9)
    assert ev["real"]["pool_models"] == real["pool_models"]
    assert ev["real"]["sims"] == real["sims"]
    text = run(path, "--design", MODELS)
    line = next(x for x in text.splitlines() if x.strip().startswith("real:"))
    assert (f"{100 * real['rate']:.1f}% [{100 * real['rate_low']:.1f}%, "
            f"{100 * real['rate_high']:.1f}%]") in line
    assert f"{int(real['pool_models'])} models" in line and "400 questions, 2 runs" in line
    assert "nearest" not in line  # the user's shape is in the table
    assert ev["line"].startswith("evidence for t_signflip_questions")
    # power rows of the same cell, in the order of their effects
    t = pd.read_csv(TABLE)
    power = t[(t["source"] == real["source"]) & (t["kind"] == MODELS)
              & (t["protocol"] == "t_signflip_questions") & (t["n_questions"] == 400)
              & (t["runs"] == 2) & (t["effect_pp"] != 0)].sort_values("effect_pp")
    assert [p["rate"] for p in ev["real"]["power"]] == pytest.approx(list(power["rate"]))


def real_range(kind, protocol):
    """The smallest and largest questions, runs and clusters of the table's real A/A cells."""
    t = pd.read_csv(TABLE)
    real = t[(t["kind"] == kind) & (t["protocol"] == protocol) & (t["effect_pp"] == 0)
             & (t["pool_models"] > 0)]
    return {c: (int(real[c].min()), int(real[c].max()))
            for c in ("n_questions", "runs", "clusters")}


def clustered_run(tmp_path, n, runs, *extra):
    path = tidy(tmp_path / f"clustered_{n}_{runs}.csv", n=n, runs=runs, clusters=3)
    args = (path, "--design", MODELS_CLUSTERED, "--cluster", "topic", *extra)
    return run(*args), json.loads(run(*args, "--json"))


@pytest.mark.parametrize("n, runs", [(100, 1), (100, 5), (300, 2), (400, 1)])
def test_a_real_cell_over_its_level_at_the_shape_makes_a_pitfall(tmp_path, n, runs):
    """cluster_cr2 on 3 clusters where the shipped table judged the real cell of exactly
    this shape invalid: labelled a pitfall in the protocol table, no verdict on the
    comparison (no p, no interval, not significant), the claim inconclusive and the gate 3,
    and the cell's rate named."""
    row = table_row(MODELS_CLUSTERED, "cluster_cr2", n, runs, clusters=3)
    assert row["state"] == "invalid"  # the table's own judgement, read with pandas
    text, body = clustered_run(tmp_path, n, runs)
    rate = f"{100 * row['rate']:.1f}%"
    assert rate in body["primary_pitfall"] and body["evidence"]["pitfall"]
    comp = body["comparisons"][0]
    assert comp["degenerate"] and not comp["significant"]
    assert comp["p_value"] is None or np.isnan(comp["p_value"])
    assert any("gives no verdict" in x and rate in x for x in body["comparison_notes"])
    table = {r["protocol"]: r for r in body["rows"]}
    assert table["cluster_cr2"]["pitfall"].startswith("over its level on a real pool")
    assert "a pitfall at this shape on a real pool" in text
    assert any(x.strip().startswith("pitfall: cluster_cr2") for x in text.splitlines())
    claim = clustered_run(tmp_path, n, runs, "--claim", "non-inferiority", "--margin", "0.05")[1]
    assert claim["comparisons"][0]["claim"] == "inconclusive"
    assert claim["claim"]["gate_exit_status"] == 3


def test_outside_the_real_range_it_is_a_warning_only(tmp_path):
    """More questions than any real cell (the nearest, 400 questions and one run, is over
    its level): a warning, the verdict still given, no pitfall label."""
    lo_hi = real_range(MODELS_CLUSTERED, "cluster_cr2")
    n = 2 * lo_hi["n_questions"][1]
    row = table_row(MODELS_CLUSTERED, "cluster_cr2", lo_hi["n_questions"][1], 1, clusters=3)
    assert row["state"] == "invalid"
    text, body = clustered_run(tmp_path, n, 1)
    assert body["evidence"]["inside_real"] is False and body["evidence"]["over_level"]
    assert "primary_pitfall" not in body and "pitfall" not in body["evidence"]
    warned = [x for x in text.splitlines() if x.strip().startswith("warning: cluster_cr2")]
    assert warned and f"{100 * row['rate']:.1f}%" in warned[0]
    assert not body["comparisons"][0]["degenerate"]
    assert np.isfinite(body["comparisons"][0]["p_value"])


def test_inside_the_range_and_valid_gets_its_verdict(tmp_path):
    """30 questions and one run on 3 clusters: the real cell holds its level, so the
    verdict is given and nothing is labelled."""
    row = table_row(MODELS_CLUSTERED, "cluster_cr2", 30, 1, clusters=3)
    assert row["state"] == "valid"
    text, body = clustered_run(tmp_path, 30, 1)
    assert not body["evidence"]["over_level"]
    assert "primary_pitfall" not in body and "pitfall" not in body["evidence"]
    assert "cluster_cr2" not in " ".join(r["protocol"] for r in body["rows"]
                                         if r["pitfall"])
    assert "pitfall: cluster_cr2" not in text and "warning: cluster_cr2" not in text


def test_another_alpha_is_said_uncalibrated(tmp_path):
    path = tidy(tmp_path / "pair.csv")
    text = run(path, "--design", MODELS, "--alpha", "0.01")
    assert "your alpha 0.01 has no cells in the table" in text
    assert "has no cells" not in run(path, "--design", MODELS)


def test_markdown_latex_and_api_carry_it(tmp_path):
    """Markdown lists every line; LaTeX the cells without the command; the API's result has
    the same Evidence as the command's JSON."""
    import evalcal

    path = tidy(tmp_path / "pair.csv")
    md = run(path, "--design", MODELS, "--format", "markdown")
    assert "evidence for t_signflip_questions" in md and "- recompute:" in md
    tex = run(path, "--design", MODELS, "--format", "latex")
    assert "evidence for t\\_signflip\\_questions" in tex and "recompute" not in tex
    result = evalcal.compare(path, design=MODELS)
    body = json.loads(run(path, "--design", MODELS, "--json"))
    assert result.evidence.protocol == "t_signflip_questions"
    assert result.to_dict()["evidence"] == body["evidence"]


def test_what_the_cells_are_not_is_said(tmp_path):
    """Three arms: the rates are per comparison, before the correction; a claim: its test at
    the margin is not in the table; a metric in its own units: no power in accuracy points
    (the false-positive rate is shown: the tests are location-scale invariant)."""
    rng = np.random.default_rng(3)
    rows = [f"{s},{arm},{0.7 + 0.01 * rng.standard_normal():.5f}"
            for s in range(6) for arm in ("a", "b", "c")]
    three = tmp_path / "three.csv"
    three.write_text("seed,arm,metric\n" + "\n".join(rows) + "\n")
    text = run(three)
    assert "the rates are per comparison, before --correction holm" in text
    body = json.loads(run(three, "--json"))
    assert body["evidence"]["scope"] == ["the rates are per comparison, before --correction holm"]
    pair = tidy(tmp_path / "pair.csv")
    text = run(pair, "--design", MODELS, "--claim", "non-inferiority", "--margin", "0.02")
    assert "the non-inferiority claim's test at its margin is not in this table" in text
    loss = tmp_path / "loss.csv"
    loss.write_text("seed,arm,metric\n" + "\n".join(
        f"{s},{arm},{2 + rng.standard_normal():.4f}" for s in range(8) for arm in ("a", "b"))
        + "\n")
    text = run(loss, "--metric-range", "0", "10")
    cell = next(x for x in text.splitlines() if x.strip().startswith("synthetic:"))
    assert "power not shown" in cell and " pp" not in cell
