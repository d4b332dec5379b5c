"""evaluate's claims for fixed models are the score tests of protocols.claims (Tango's for one
0/1 run; ratesci's pairbinci is their outside reference in tests/protocols)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcal_core.cli import call_main
from protocols import claims
from reports.evaluate import main


def _one_run(tmp_path, n=300, seed=0):
    rng = np.random.default_rng(seed)
    base = (rng.random(n) < 0.85).astype(int)
    variant = np.where(rng.random(n) < 0.9, base, 1 - base)
    rows = [{"seed": 0, "arm": arm, "question": q, "score": int(s[q])}
            for q in range(n) for arm, s in (("base", base), ("new", variant))]
    path = tmp_path / "m.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path, base, variant


@pytest.mark.parametrize("claim", ["non-inferiority", "equivalence"])
def test_models_claim_is_tango(tmp_path, capsys, claim):
    path, base, variant = _one_run(tmp_path)
    assert call_main(main, "evaluate", [str(path), "--claim", claim, "--margin", "0.1",
                                        "--json"]) == 0
    comp = json.loads(capsys.readouterr().out)["comparisons"][0]
    ref = claims.paired_proportion_claim(base, variant, claim.replace("-", "_"), 0.1, 0.05)
    assert comp["claim"] == str(ref.verdict)
    assert comp["claim_ci_low"] == pytest.approx(100 * float(ref.ci_low), rel=1e-9)
    assert comp["claim_ci_high"] == pytest.approx(100 * float(ref.ci_high), rel=1e-9)


def test_models_claim_under_maxt_is_the_score_test_too(tmp_path, capsys):
    """max-T has no joint law for score tests: the claim is Tango's at alpha / C."""
    path, base, variant = _one_run(tmp_path)
    assert call_main(main, "evaluate", [str(path), "--claim", "non-inferiority", "--margin",
                                        "0.1", "--correction", "maxt", "--json"]) == 0
    comp = json.loads(capsys.readouterr().out)["comparisons"][0]
    ref = claims.paired_proportion_claim(base, variant, "non_inferiority", 0.1, 0.05)
    assert comp["claim"] == str(ref.verdict)
    assert comp["claim_ci_low"] == pytest.approx(100 * float(ref.ci_low), rel=1e-9)
