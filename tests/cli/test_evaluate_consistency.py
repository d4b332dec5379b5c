"""One output, one answer: ``evaluate`` prints one p per protocol, and every interval beside
a verdict either agrees with it or carries a note saying why (McNemar, Holm, the claim)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from multitest_reference import multipletests
from scipy import stats

from reports.evaluate import main


def _write(path, arms):
    """One run of 0/1 scores per arm: ``arms`` maps an arm to its per-question scores."""
    rows = ["seed,arm,question,score"]
    for arm, scores in arms.items():
        rows += [f"0,{arm},q{q},{int(s)}" for q, s in enumerate(scores)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _two_arms(tmp_path, b=0, c=5, n=20):
    """Baseline right on the first 10 + b questions; the variant gains c of the rest."""
    base = np.zeros(n)
    base[:10 + b] = 1
    variant = base.copy()
    variant[10:10 + b] = 0
    variant[10 + b:10 + b + c] = 1
    return _write(tmp_path / "two.csv", {"baseline": base, "variant": variant})


def _three_arms(tmp_path):
    """A against B (b = 0, c = 12: exact p = 2 / 2**12) and C (b = 0, c = 6: 2 / 2**6 =
    0.03125), 60 questions: Holm rejects both at 5%, the 97.5% Bonferroni interval of C - A
    holds 0."""
    a = np.r_[np.zeros(30), np.ones(30)]
    b, c = a.copy(), a.copy()
    b[:12], c[:6] = 1, 1
    return _write(tmp_path / "three.csv", {"A": a, "B": b, "C": c})


def _json(capsys, argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_mcnemar_prints_one_exact_p(tmp_path, capsys):
    """b = 0, c = 5 of 20 questions: the comparison and the protocols table both give the
    exact p = 2 / 2**5 = 0.0625 (scipy.stats.binomtest), not the chi-square 0.0253, and the
    interval beside it holds 0 (plain Newcombe gives [+0.89, +18.67] pp here)."""
    path = _two_arms(tmp_path)
    body = _json(capsys, [path])
    ref = stats.binomtest(5, 5, 0.5).pvalue
    comp = body["comparisons"][0]
    row = {r["protocol"]: r for r in body["rows"]}["mcnemar"]
    assert comp["p_value"] == pytest.approx(ref, rel=1e-9) == row["p_value"]
    assert comp["ci_low"] <= 0.0 <= comp["ci_high"]
    assert row["ci_low"] <= 0.0 <= row["ci_high"] and not row["significant"]
    assert comp["interval_agrees"] is True
    assert main([path]) == 0
    text = capsys.readouterr().out
    table = text.split("All protocols on these two arms")[1]
    mcnemar_line = next(x for x in table.splitlines() if x.startswith("mcnemar"))
    assert "0.0625" in mcnemar_line and "0.0253" not in text


def test_protocol_param_that_changes_the_test_is_labelled(tmp_path, capsys):
    """--protocol-param exact=False gives the chi-square p (statsmodels' mcnemar, 0.0253)
    in the table: a different protocol from the comparison, and its note says so."""
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    body = _json(capsys, [_two_arms(tmp_path), "--protocols", "mcnemar",
                          "--protocol-param", "exact=False"])
    row = body["rows"][0]
    ref = sm_mcnemar(np.array([[10, 0], [5, 5]]), exact=False, correction=False).pvalue
    assert row["p_value"] == pytest.approx(ref, rel=1e-9)
    assert "exact=False" in row["note"] and "different protocol" in row["note"]
    assert body["comparisons"][0]["p_value"] == pytest.approx(0.0625, rel=1e-9)


def test_holm_verdict_beside_a_bonferroni_interval_holding_zero_gets_a_note(tmp_path,
                                                                             capsys):
    """The Holm adjusted p's equal statsmodels' ``multipletests(method='holm')`` of the exact
    McNemar p's (scipy.stats.binomtest); C - A is significant (p adj 0.03125) while its
    97.5% interval holds 0, so ``interval_agrees`` is False and every output format prints
    one note saying why; B - A agrees and has none."""
    path = _three_arms(tmp_path)
    body = _json(capsys, [path, "--reference", "A"])
    comps = {c["variant"]: c for c in body["comparisons"]}
    raw = [stats.binomtest(12, 12).pvalue, stats.binomtest(6, 6).pvalue]
    holm = multipletests(raw, alpha=0.05, method="holm")[1]
    assert [comps["B"]["p_adjusted"], comps["C"]["p_adjusted"]] == pytest.approx(holm)
    assert comps["C"]["significant"] and comps["C"]["simultaneous_ci_low"] <= 0.0
    assert comps["C"]["interval_agrees"] is False and comps["B"]["interval_agrees"] is True
    notes = [n for n in body["comparison_notes"] if "step-down" in n]
    assert len(notes) == 1 and notes[0].startswith("C - A")
    for fmt in ([], ["--format", "markdown"], ["--format", "latex"]):
        assert main([path, "--reference", "A", *fmt]) == 0
        out = capsys.readouterr().out
        assert out.count("Holm's step-down rejects more than") == 1, fmt


def test_bonferroni_needs_no_note(tmp_path, capsys):
    """With --correction bonferroni the adjusted p is min(1, 2 p) (analytic) and the
    interval inverts the same exact test at alpha / 2: C - A is not significant (0.0625)
    and its interval holds 0, so nothing disagrees."""
    body = _json(capsys, [_three_arms(tmp_path), "--reference", "A",
                          "--correction", "bonferroni"])
    comps = {c["variant"]: c for c in body["comparisons"]}
    assert comps["C"]["p_adjusted"] == pytest.approx(2 * stats.binomtest(6, 6).pvalue)
    assert all(c["interval_agrees"] for c in body["comparisons"])
    assert not any("step-down" in n for n in body["comparison_notes"])


def test_claim_interval_is_printed_and_in_json(tmp_path, capsys):
    """The superiority claim reads the two-sided 90% interval (1 - 2 alpha): JSON carries
    it, it equals the McNemar protocol's interval at alpha = 0.10 (consistency check), and
    the text prints it beside the verdict."""
    import protocols

    path = _two_arms(tmp_path, b=1, c=9, n=40)
    body = _json(capsys, [path, "--claim", "superiority"])
    comp = body["comparisons"][0]
    base = np.zeros(40)
    base[:11] = 1
    variant = base.copy()
    variant[10], variant[11:20] = 0, 1
    ref = protocols.get("mcnemar", exact=True).evaluate(base[None], variant[None], 0.10)
    assert comp["claim_ci_low"] == pytest.approx(100 * float(ref.ci_low), rel=1e-9)
    assert comp["claim_ci_high"] == pytest.approx(100 * float(ref.ci_high), rel=1e-9)
    assert main([path, "--claim", "superiority"]) == 0
    text = capsys.readouterr().out
    shown = f"[{comp['claim_ci_low']:+.2f}, {comp['claim_ci_high']:+.2f}]"
    claim = next(x for x in text.splitlines() if x.startswith("claim:"))
    assert f"{comp['claim']} {shown}" in claim
