"""``--lower-is-better`` (issue 47 item 1): a loss or an error metric. The difference is
still ``variant - base``; the claims read lower as better (superiority: the variant's loss
lower by more than the margin; non-inferiority: not higher by the margin), the ranking puts
the lowest first, and no relative error reduction is printed."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process
from scipy import stats

from reports.evaluate.cli import main

PROG = "python -m reports.evaluate"


def _evaluate(*argv):
    return run_in_process(main, PROG, *argv)


def _seeds(tmp_path, shift: float, name="loss.csv", k=8, seed=0):
    """Per-seed losses of two methods; the variant's mean moved by ``shift``."""
    rng = np.random.default_rng(seed)
    base = 0.30 + 0.01 * rng.standard_normal(k)
    variant = base + shift + 0.004 * rng.standard_normal(k)
    path = tmp_path / name
    pd.DataFrame({"seed": list(range(k)) * 2, "arm": ["base"] * k + ["new"] * k,
                  "loss": np.r_[base, variant]}).to_csv(path, index=False)
    return path, variant - base


def _json(*argv) -> dict:
    done = _evaluate(*argv, "--json")
    assert done.returncode in (0, 1, 3), done.stderr
    return json.loads(done.stdout)


def _t_interval(deltas, level):
    """The paired t interval of the mean difference, from scipy (the reference)."""
    return stats.t.interval(level, len(deltas) - 1, loc=deltas.mean(),
                            scale=stats.sem(deltas))


@pytest.mark.parametrize("shift, verdict", [(-0.02, "shown"), (+0.02, "refuted")])
def test_superiority_on_a_loss_that_went_down_is_shown(tmp_path, shift, verdict):
    """Superiority at margin 0: a loss that went down is shown, one that went up refuted;
    the claim's interval is scipy's 90% paired t interval of variant - base."""
    path, deltas = _seeds(tmp_path, shift)
    body = _json(path, "--score-column", "loss", "--lower-is-better",
                 "--claim", "superiority")
    comp = body["comparisons"][0]
    assert comp["claim"] == verdict and body["lower_is_better"] is True
    assert np.sign(comp["estimate"]) == np.sign(shift)  # still variant - base
    low, high = _t_interval(deltas, 0.90)
    assert comp["claim_ci_low"] == pytest.approx(100 * low, abs=1e-3)
    assert comp["claim_ci_high"] == pytest.approx(100 * high, abs=1e-3)
    # and the same data read as higher-is-better says the opposite
    assert _json(path, "--score-column", "loss", "--claim", "superiority")[
        "comparisons"][0]["claim"] == {"shown": "refuted", "refuted": "shown"}[verdict]


def test_non_inferiority_on_a_loss_means_not_higher_by_the_margin(tmp_path):
    """A loss 0.5 pp higher (CI well inside +-2 pp): non-inferior at margin 2 pp; at margin
    0.1 pp the CI's upper end is above the margin, so not shown."""
    path, deltas = _seeds(tmp_path, +0.005, k=12)
    low, high = _t_interval(deltas, 0.90)
    assert high < 0.02 and high > 0.001  # the cases below are what they say
    wide = _json(path, "--score-column", "loss", "--lower-is-better", "--claim",
                 "non-inferiority", "--margin", "0.02")
    assert wide["comparisons"][0]["claim"] == "shown"
    narrow = _json(path, "--score-column", "loss", "--lower-is-better", "--claim",
                   "non-inferiority", "--margin", "0.001")
    assert narrow["comparisons"][0]["claim"] != "shown"


def test_fixed_models_claim_is_the_reflected_accuracy_claim(tmp_path):
    """0/1 errors of fixed models (Tango's score test at the margin): the lower-is-better
    claim on the errors is the higher-is-better claim on 1 - error (an independent route),
    with the interval negated."""
    rng = np.random.default_rng(3)
    rows = [{"arm": arm, "question": f"q{q}", "error": int(rng.random() < p)}
            for arm, p in (("base", 0.35), ("new", 0.30)) for q in range(300)]
    errors = pd.DataFrame(rows)
    loss, acc = tmp_path / "err.csv", tmp_path / "acc.csv"
    errors.to_csv(loss, index=False)
    errors.assign(score=1 - errors["error"]).drop(columns="error").to_csv(acc, index=False)
    claim = ["--claim", "non-inferiority", "--margin", "0.03"]
    lower = _json(loss, "--score-column", "error", "--lower-is-better", *claim)
    higher = _json(acc, *claim)
    a, b = lower["comparisons"][0], higher["comparisons"][0]
    assert a["claim"] == b["claim"]
    assert a["estimate"] == pytest.approx(-b["estimate"])
    assert (a["claim_ci_low"], a["claim_ci_high"]) == pytest.approx(
        (-b["claim_ci_high"], -b["claim_ci_low"]))


def test_the_wording_of_a_loss(tmp_path):
    """Text: 'lower is better' where it judges; no relative error reduction; the ranking of
    three arms lowest first."""
    rng = np.random.default_rng(5)
    k = 6
    means = {"a": 0.40, "b": 0.30, "c": 0.20}
    rows = [{"seed": s, "arm": arm, "metric": m + 0.005 * rng.standard_normal()}
            for arm, m in means.items() for s in range(k)]
    path = tmp_path / "three.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    done = _evaluate(path, "--lower-is-better")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "arms (mean score, lower is better)" in out
    assert "relative error reduction" not in out
    ranked = out.split("lowest first):")[1].strip().splitlines()[:3]
    assert [line.split()[0] for line in ranked] == ["c", "b", "a"]
    two, _ = _seeds(tmp_path, -0.02)
    claim = _evaluate(two, "--score-column", "loss", "--lower-is-better", "--claim",
                      "superiority")
    assert "claim: superiority (lower is better)" in claim.stdout
    assert "relative error reduction" in _evaluate(path).stdout  # the default keeps it
    md = _evaluate(path, "--lower-is-better", "--format", "markdown")
    assert md.returncode == 0 and "relative error reduction" not in md.stdout


@pytest.mark.parametrize("design, extra", [
    ("methods", ["--correction", "maxt", "--reference", "base"]),
    ("models", ["--correction", "maxt", "--reference", "base"]),
])
def test_max_t_claims_on_losses_are_the_reflected_claims(tmp_path, design, extra):
    """Max-T claims (exact sign-flip tests at the margin, or the exact unpaired ones): on a
    loss, each verdict is the reflected accuracies' one and each interval negated."""
    rng = np.random.default_rng(8)
    if design == "methods":
        k, means = 8, {"base": 0.40, "b": 0.37, "c": 0.41}
        frame = pd.DataFrame([{"seed": s, "arm": a, "loss": m + 0.01 * rng.standard_normal()}
                              for a, m in means.items() for s in range(k)])
    else:
        frame = pd.DataFrame([{"arm": a, "question": f"q{q}", "loss": int(rng.random() < p)}
                              for a, p in (("base", 0.4), ("b", 0.3), ("c", 0.42))
                              for q in range(300)])
    loss, acc = tmp_path / "loss.csv", tmp_path / "acc.csv"
    frame.to_csv(loss, index=False)
    frame.assign(loss=1 - frame["loss"]).to_csv(acc, index=False)
    claim = ["--claim", "non-inferiority", "--margin", "0.02", *extra]
    lower = _json(loss, "--score-column", "loss", "--lower-is-better", *claim)
    higher = _json(acc, "--score-column", "loss", *claim)
    verdicts = []
    for a, b in zip(lower["comparisons"], higher["comparisons"]):
        assert a["claim"] == b["claim"]
        assert (a["claim_ci_low"], a["claim_ci_high"]) == pytest.approx(
            (-b["claim_ci_high"], -b["claim_ci_low"]))
        verdicts.append(a["claim"])
    assert "shown" in verdicts  # the cases decide something


def test_a_board_of_losses_is_the_board_of_their_reflection(tmp_path):
    """``--leaderboard --lower-is-better`` on 0/1 errors decides exactly as the board of
    1 - error (the user's own reflection, the reference): same order, tiers, rank intervals
    and possibly-best set; the means shown are the errors' own (100 - the accuracy's)."""
    rng = np.random.default_rng(11)
    rows = [{"model": m, "question": f"q{q}", "error": int(rng.random() < p)}
            for m, p in (("a", 0.2), ("b", 0.25), ("c", 0.4), ("d", 0.42), ("e", 0.6))
            for q in range(150)]
    errors = pd.DataFrame(rows)
    loss, acc = tmp_path / "err.csv", tmp_path / "acc.csv"
    errors.to_csv(loss, index=False)
    errors.assign(score=1 - errors["error"]).drop(columns="error").to_csv(acc, index=False)
    lower = _json(loss, "--model-column", "model", "--score-column", "error",
                  "--lower-is-better", "--leaderboard")["leaderboard"]
    higher = _json(acc, "--model-column", "model", "--leaderboard")["leaderboard"]
    assert lower.pop("lower_is_better") is True and "lower_is_better" not in higher
    assert lower["separated"] == higher["separated"]
    means = [r["mean"] for r in lower["rows"]]
    assert means == sorted(means)  # the lowest loss first
    assert means == pytest.approx(sorted(100 * errors.groupby("model")["error"].mean()))
    for a, b in zip(lower["rows"], higher["rows"]):
        assert a.pop("mean") == pytest.approx(100 - b.pop("mean"))
        assert a == b
    text = _evaluate(loss, "--model-column", "model", "--score-column", "error",
                     "--lower-is-better", "--leaderboard").stdout
    assert "leaderboard (lower is better: the best has the lowest mean)" in text


def test_a_stream_of_losses(tmp_path):
    """``--stream --claim`` on 0/1 errors: the anytime-valid verdict is the reflected
    accuracies' one, its interval negated onto variant - base, and the text names the arm
    whose loss went down as the better one."""
    rng = np.random.default_rng(4)
    rows = [{"arm": arm, "question": f"q{q}", "error": int(rng.random() < p)}
            for arm, p in (("base", 0.45), ("new", 0.2)) for q in range(400)]
    errors = pd.DataFrame(rows)
    loss, acc = tmp_path / "err.csv", tmp_path / "acc.csv"
    errors.to_csv(loss, index=False)
    errors.assign(score=1 - errors["error"]).drop(columns="error").to_csv(acc, index=False)
    claim = ["--stream", "--claim", "non-inferiority", "--margin", "0.02"]
    lower = _json(loss, "--score-column", "error", "--lower-is-better", *claim)["stream"]
    higher = _json(acc, *claim)["stream"]
    assert lower["claim"]["verdict"] == higher["claim"]["verdict"] == "shown"
    assert (lower["claim"]["low"], lower["claim"]["high"]) == pytest.approx(
        (-higher["claim"]["high"], -higher["claim"]["low"]))
    assert lower["direction"] == -higher["direction"] == -1  # variant - base went down
    text = _evaluate(loss, "--score-column", "error", "--lower-is-better", *claim).stdout
    assert "(new better; there" in text
    assert "non-inferiority at margin 2 pp (lower is better), anytime-valid: shown" in text
