"""What ``python -m sim.plan --from-pilot`` prints (issue 36, item 2).

References: the residual mean square is recomputed here by the textbook two-way ANOVA
formula (no replication) with numpy, independently of
:func:`sim.plan_components.anova_mean_squares`; the largest sd of a delta of 0/1 scores is 1
(deltas in [-1, 1]) by arithmetic; the printed Wilson interval is compared with statsmodels'
``proportion_confint(method="wilson")``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

import sim.plan as P
import sim.plan_components as C


def _alternating_pilot(k=3, n=40):
    """3 seeds of 0/1 scores whose deltas flip sign between questions and between seeds:
    a residual mean square above 1, so a moment estimate of an sd above 100 pp."""
    b = np.zeros((k, n))
    v = np.zeros((k, n))
    b[:, ::2] = 1
    v[:, 1::2] = 1
    b[1] = 1 - b[1]
    v[1] = 1 - v[1]
    return b, v


def _write(path, b, v):
    rows = [(s, arm, q, int(x[s, q])) for s in range(b.shape[0])
            for arm, x in (("baseline", b), ("variant", v)) for q in range(b.shape[1])]
    pd.DataFrame(rows, columns=["seed", "arm", "question", "score"]).to_csv(path, index=False)
    return path


def _ms_resid(d):
    """Two-way ANOVA without replication: residual sum of squares / ((k-1)(n-1))."""
    k, n = d.shape
    resid = d - d.mean(1, keepdims=True) - d.mean(0, keepdims=True) + d.mean()
    return float((resid**2).sum() / ((k - 1) * (n - 1)))


def test_impossible_moment_estimate_is_clipped_with_a_note():
    b, v = _alternating_pilot()
    ms_e = _ms_resid(v - b)
    assert ms_e > 1  # the moment estimate of the residual sd exceeds 100 pp
    comp = C.components_from_pilot(b, v)
    # no share given: the whole residual is interaction, clipped to the 0/1 bound
    assert comp.sd_inter == 1.0
    assert any("sd_inter clipped to 100 pp" in note and f"{100 * np.sqrt(ms_e):.3g} pp"
               in note for note in comp.notes)
    share = C.components_from_pilot(b, v, repeat_share=1.0)
    assert share.sd_repeat == 1.0 and share.sd_inter == 0.0


def test_components_within_range_are_not_clipped():
    rng = np.random.default_rng(5)
    b = (rng.random((4, 300)) < 0.6).astype(float)
    v = (rng.random((4, 300)) < 0.65).astype(float)
    comp = C.components_from_pilot(b, v)
    assert comp.sd_inter == pytest.approx(np.sqrt(_ms_resid(v - b)), rel=1e-12)
    assert not any("clipped" in note for note in comp.notes)


def test_cli_prints_one_power_and_a_labelled_check(tmp_path, capsys):
    """The 3-seed 0/1 pilot whose fit once failed with "'--sd-repeat' option must be <= 1"
    now plans; each line has one power (closed form) and a check with its Wilson interval;
    the model's parameters are printed to 3 significant digits."""
    path = _write(tmp_path / "pilot.csv", *_alternating_pilot())
    sims = 200
    code = P.main(["--from-pilot", str(path), "--n-max", "500", "--k-max", "6", "--r-max", "2",
                   "--sims", str(sims), "--show", "2", "--effect", "20"])
    out = capsys.readouterr().out
    assert code == 0
    assert "--sd-repeat' option" not in out
    # one run per (seed, question): the residual is interaction (greedy repeats are
    # identical), clipped at the 0/1 bound
    assert "warning: sd_inter clipped to 100 pp" in out
    assert "power column: the closed form, the plan's answer" in out
    assert "(closed form)" in out.split("chosen:")[1].splitlines()[0]
    rows = [line for line in out.splitlines() if re.match(r"\s+(best #\d|neighbour) ", line)]
    assert rows
    for line in rows:
        # exactly one bare power, then "check p% [low, high]"
        m = re.search(r"(\d+\.\d)%\s+check\s+(\d+\.\d)% \[\s*(\d+\.\d),\s*(\d+\.\d)\]$", line)
        assert m, line
        hits = round(float(m.group(2)) / 100 * sims)
        low, high = proportion_confint(hits, sims, alpha=0.05, method="wilson")
        assert float(m.group(3)) == pytest.approx(100 * low, abs=0.051)
        assert float(m.group(4)) == pytest.approx(100 * high, abs=0.051)
    # no 16-digit parameter anywhere in the printout
    assert not re.search(r"\d\.\d{6,}", out), out
