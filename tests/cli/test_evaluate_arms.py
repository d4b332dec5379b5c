"""``evaluate`` with N arms: all pairs or many-to-one, multiplicity, claims and --gate,
effect sizes, ranking, the output formats and the forest plot."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from multitest_reference import multipletests
from scipy import stats

from evalcal_core.cli import call_main
from evalcal_core.designs import METHODS_INDEPENDENT
from reports.evaluate import main

PROG = "python -m reports.evaluate"
ARMS3 = ("base", "lora", "full")


def per_seed(path, values: dict):
    """values: arm -> per-seed metrics (same seeds in every arm)."""
    rows = ["seed,arm,metric"]
    for arm, xs in values.items():
        rows += [f"{s},{arm},{x!r}" for s, x in enumerate(xs)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def three_arms(path, k=8, seed=1, means=(0.80, 0.81, 0.83)):
    rng = np.random.default_rng(seed)
    common = rng.normal(0, 0.004, k)
    return per_seed(path, {a: np.round(m + common + rng.normal(0, 0.003, k), 5).tolist()
                           for a, m in zip(ARMS3, means)})


def run(argv, capsys):
    try:
        code = call_main(main, PROG, argv)
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def body(argv, capsys):
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def test_three_arms_all_pairs_and_ranking(tmp_path, capsys):
    path = three_arms(tmp_path / "r.csv")
    out = body([path], capsys)
    pairs = [(c["base"], c["variant"]) for c in out["comparisons"]]
    assert pairs == [("base", "lora"), ("base", "full"), ("lora", "full")]
    assert out["comparisons_mode"] == "all pairs" and set(out["ranking"]) == set(ARMS3)
    code, text, _ = run([path], capsys)
    assert "ranking (arms sharing a letter" in text
    assert "All protocols on these two arms" not in text  # only for two arms


def test_raw_p_is_scipy_and_adjusted_p_is_statsmodels(tmp_path, capsys):
    """Raw p: scipy.stats.ttest_rel on the per-seed metrics; adjusted: statsmodels
    multipletests on the same raw p (holm, bonferroni, fdr_bh)."""
    path = three_arms(tmp_path / "r.csv", means=(0.80, 0.802, 0.803))
    frame = pd.read_csv(path).pivot(index="seed", columns="arm", values="metric")
    for correction, sm in (("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")):
        out = body([path, "--correction", correction], capsys)
        raw = [c["p_value"] for c in out["comparisons"]]
        ref = [stats.ttest_rel(frame[c["variant"]], frame[c["base"]]).pvalue
               for c in out["comparisons"]]
        np.testing.assert_allclose(raw, ref, rtol=1e-8)
        np.testing.assert_allclose([c["p_adjusted"] for c in out["comparisons"]],
                                   multipletests(ref, method=sm)[1], rtol=1e-8)


def test_bonferroni_simultaneous_interval_is_the_t_interval_at_alpha_over_c(tmp_path, capsys):
    """Analytic reference: mean(d) +- t_{1 - alpha/(2C), k-1} sd(d) / sqrt(k), C = 3."""
    path = three_arms(tmp_path / "r.csv")
    frame = pd.read_csv(path).pivot(index="seed", columns="arm", values="metric")
    out = body([path, "--correction", "holm"], capsys)
    c = out["comparisons"][0]
    d = (frame[c["variant"]] - frame[c["base"]]).to_numpy()
    half = stats.t.ppf(1 - 0.05 / 6, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size)
    assert c["simultaneous_ci_low"] == pytest.approx(100 * (d.mean() - half), rel=1e-8)
    assert out["simultaneous_level"] == pytest.approx(1 - 0.05 / 3)


def test_many_to_one_against_a_reference(tmp_path, capsys):
    out = body([three_arms(tmp_path / "r.csv"), "--reference", "lora"], capsys)
    assert [(c["base"], c["variant"]) for c in out["comparisons"]] == [
        ("lora", "base"), ("lora", "full")]
    assert out["ranking"] is None


def test_maxt_is_no_less_powerful_than_bonferroni(tmp_path, capsys):
    path = three_arms(tmp_path / "r.csv", k=12)
    mx = body([path, "--correction", "maxt"], capsys)
    bf = body([path, "--correction", "bonferroni"], capsys)
    for a, b in zip(mx["comparisons"], bf["comparisons"]):
        # max-T intervals are never wider than Bonferroni's beyond resampling error
        width = lambda c: c["simultaneous_ci_high"] - c["simultaneous_ci_low"]  # noqa: E731
        assert width(a) <= 1.05 * width(b)


def test_correction_none_warns(tmp_path, capsys):
    code, out, _ = run([three_arms(tmp_path / "r.csv"), "--correction", "none"], capsys)
    assert code == 0 and "warning: --correction none: 3 comparisons" in out
    out = body([three_arms(tmp_path / "r.csv"), "--correction", "none"], capsys)
    assert out["warnings"]


def _gate_data(tmp_path, shift, k=10, noise=0.002):
    rng = np.random.default_rng(3)
    base = 0.8 + rng.normal(0, 0.005, k)
    return per_seed(tmp_path / f"g{shift}.csv", {
        "baseline": base.tolist(),
        "variant": (base + shift + rng.normal(0, noise, k)).tolist()})


@pytest.mark.parametrize("shift, claim, margin, status", [
    (0.02, "superiority", "0", 0),           # +2 pp, tight: shown
    (-0.02, "superiority", "0", 1),          # -2 pp: refuted
    (0.0005, "superiority", "0", 3),         # +0.05 pp in noise: inconclusive
    (0.0, "non-inferiority", "0.01", 0),     # 0 +- small, margin 1 pp: shown
    (-0.03, "non-inferiority", "0.01", 1),   # a 3 pp regression: refuted
    (0.0, "equivalence", "0.01", 0),
    (0.05, "equivalence", "0.01", 1),
    (0.01, "equivalence", "0.01", 3),
])
def test_gate_exit_status(tmp_path, capsys, shift, claim, margin, status):
    path = _gate_data(tmp_path, shift)
    code, out, err = run([path, "--claim", claim, "--margin", margin, "--gate"], capsys)
    assert code == status, out + err
    assert f"--gate exit status {status}" in out
    # without --gate the verdict is printed and the exit status is 0
    assert run([path, "--claim", claim, "--margin", margin], capsys)[0] == 0


@pytest.mark.parametrize("argv, words", [
    (["--claim", "non-inferiority", "--margin", "5"], ["did you mean 0.05"]),
    (["--gate"], ["'--gate' option must be given with a --claim"]),
    (["--margin", "0.01"], ["'--margin' option must be given with a --claim"]),
    (["--claim", "equivalence"], ["'--margin' option", "Got no --margin"]),
    (["--reference", "nope"], ["--reference 'nope' is not an arm", "base, lora, full"]),
    (["--correction", "nope"], ["invalid choice"]),
])
def test_bad_options_are_one_line_exit_2(tmp_path, capsys, argv, words):
    code, _, err = run([three_arms(tmp_path / "r.csv"), *argv], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert all(w in err for w in words), err


def test_bad_arms_are_one_line_exit_2(tmp_path, capsys):
    one = per_seed(tmp_path / "one.csv", {"base": [0.8, 0.81]})
    code, _, err = run([one], capsys)
    assert code == 2 and "names one arm ('base')" in err
    (tmp_path / "gap.csv").write_text("seed,arm,metric\n0,a,0.8\n1,a,0.81\n0,b,0.8\n0,c,0.8\n"
                                      "1,c,0.82\n")
    code, _, err = run([str(tmp_path / "gap.csv")], capsys)
    assert code == 2 and "arm 'b' has no score for seed 1" in err
    code, _, err = run(["--arm", "a=x.csv"], capsys)
    assert code == 2 and "'--arm' option must be given once per arm" in err
    code, _, err = run(["--arm", "a"], capsys)
    assert code == 2 and "NAME=PATH" in err


def _one_arm_log(path, p, n=80, runs=1, seed=0):
    rng = np.random.default_rng(seed)
    rows = ["run,question,score"]
    for r in range(runs):
        rows += [f"{r},q{q},{int(rng.random() < p)}" for q in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_arm_logs_three_arms(tmp_path, capsys):
    argv = [f"--arm=m{i}={_one_arm_log(tmp_path / f'm{i}.csv', p, seed=i)}"
            for i, p in enumerate((0.5, 0.6, 0.8))]
    out = body([*argv, "--reference", "m0"], capsys)
    assert out["design"]["kind"] == "models" and len(out["comparisons"]) == 2
    assert out["comparisons"][1]["significant"]


def test_effect_sizes_and_units(tmp_path, capsys):
    path = three_arms(tmp_path / "r.csv")
    code, text, _ = run([path], capsys)
    assert "difference (pp)" in text and "d_z" in text and "relative error reduction" in text
    assert "d_z from 8 units (fewer than 10)" in text
    out = body([path], capsys)
    c = out["comparisons"][0]
    assert c["unit"] == "pp" and c["relative_error_reduction"] is not None
    # a loss in its own units: never "pp", no error reduction
    loss = per_seed(tmp_path / "loss.csv", {"a": [2.31, 2.30, 2.33, 2.35],
                                             "b": [2.29, 2.28, 2.30, 2.31]})
    code, text, _ = run([loss, "--metric-range", "0", "10"], capsys)
    assert code == 0 and "pp" not in text.split("All protocols")[0]
    out = body([loss, "--metric-range", "0", "10"], capsys)
    assert out["comparisons"][0]["unit"] == "metric units"
    assert out["comparisons"][0]["estimate"] == pytest.approx(-0.0275)
    assert out["comparisons"][0]["relative_error_reduction"] is None
    assert not any("_pp" in key for row in out["rows"] for key in row)
    assert {row["unit"] for row in out["rows"]} == {"metric units"}


def test_d_z_matches_its_definition(tmp_path, capsys):
    """d_z = mean(d) / sd(d); its CI inverts the noncentral t (scipy.stats.nct)."""
    path = three_arms(tmp_path / "r.csv", k=12)
    frame = pd.read_csv(path).pivot(index="seed", columns="arm", values="metric")
    c = body([path], capsys)["comparisons"][0]
    d = (frame[c["variant"]] - frame[c["base"]]).to_numpy()
    assert c["d_z"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-8)
    lo = c["d_z_ci"][0] * math.sqrt(d.size)
    assert stats.nct.cdf(d.mean() / d.std(ddof=1) * math.sqrt(d.size), d.size - 1,
                         lo) == pytest.approx(0.975, abs=1e-6)


def _floats(x):
    if isinstance(x, dict):
        for v in x.values():
            yield from _floats(v)
    elif isinstance(x, list):
        for v in x:
            yield from _floats(v)
    elif isinstance(x, float):
        yield x


def test_json_floats_are_rounded(tmp_path, capsys):
    code, out, _ = run([three_arms(tmp_path / "r.csv"), "--json"], capsys)
    assert "np.float64" not in out and "NaN" not in out
    for x in _floats(json.loads(out)):
        assert len(repr(x).lstrip("-").replace("e-", "").replace(".", "")) <= 16, x
    # the shipped example's mean delta is 0.724 pp, not 0.7239999999999991
    ex = body([], capsys)
    assert ex["comparisons"][0]["estimate"] == 0.724


def test_markdown_latex_and_forest(tmp_path, capsys):
    path = three_arms(tmp_path / "r.csv")
    code, md, _ = run([path, "--format", "markdown"], capsys)
    assert code == 0 and "| comparison |" in md and "| arm | mean | group |" in md
    code, tex, _ = run([path, "--format", "latex"], capsys)
    assert "\\begin{tabular}" in tex and "\\end{tabular}" in tex
    png = tmp_path / "forest.png"
    code, _, _ = run([path, "--forest", str(png), "--claim", "superiority", "--margin",
                      "0.005"], capsys)
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_many_seeds_deltas_are_summarised(tmp_path, capsys):
    rng = np.random.default_rng(0)
    base = 0.8 + rng.normal(0, 0.005, 192)
    path = per_seed(tmp_path / "k192.csv", {"baseline": base.tolist(),
                                            "variant": (base + 0.001).tolist()})
    code, text, _ = run([path], capsys)
    line = next(x for x in text.splitlines() if x.startswith("* Per-seed deltas"))
    assert "192 seeds" in line and len(line) < 250


def test_help_documents_the_gate_and_the_designs(capsys):
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "0 the claim is shown" in text and "1 the claim is refuted" in text
    assert "3 inconclusive" in text and "--gate" in text
    assert "models, clustered questions: cluster_cr2" in text


def test_output_format_and_log_format_are_two_options(tmp_path, capsys):
    logs = [f"--arm=m{i}={_one_arm_log(tmp_path / f'm{i}.csv', p, seed=i)}"
            for i, p in enumerate((0.5, 0.7))]
    code, out, err = run([*logs, "--log-format", "csv", "--format", "markdown"], capsys)
    assert code == 0, err
    assert out.startswith("**design: models")
    code, _, err = run([*logs, "--format", "nope"], capsys)
    assert code == 2 and "'--format' option must be one of" in err and "latex" in err
    code, _, err = run([*logs, "--log-format", "nope"], capsys)
    assert code == 2 and "'--log-format' option" in err and "lm-eval" in err


def test_run_config_is_callable_without_the_cli(tmp_path):
    """The CLI only parses: a script builds an EvalConfig and gets the exit status."""
    import io

    from reports.evaluate import EvalConfig, run_config

    out = io.StringIO()
    config = EvalConfig(results=three_arms(tmp_path / "r.csv"), json=True, reference="base",
                        claim="superiority", margin=0.0, gate=True)
    assert run_config(config, out=out) == 0
    assert json.loads(out.getvalue())["claim"]["verdict"] == "shown"


@pytest.mark.parametrize("reference", [None, "lora"])
def test_unpaired_maxt_is_exact_tukey_or_dunnett(tmp_path, capsys, reference):
    """Independent seeds under max-T with --equal-variances: scipy.stats.tukey_hsd /
    dunnett, p and intervals."""
    path = three_arms(tmp_path / "r.csv", k=3)
    extra = ["--reference", reference] if reference else []
    out = body([path, "--correction", "maxt", "--design", METHODS_INDEPENDENT,
                "--equal-variances", *extra], capsys)
    frame = pd.read_csv(path)
    arms = {a: g.sort_values("seed").metric.to_numpy() for a, g in frame.groupby("arm")}
    for c in out["comparisons"]:
        base, variant = arms[c["base"]], arms[c["variant"]]
        if reference is None:
            names = [a["name"] if isinstance(a, dict) else a for a in out["arms"]]
            res = stats.tukey_hsd(*[arms[a] for a in names])
            i, j = names.index(c["variant"]), names.index(c["base"])
            low, p = res.confidence_interval().low[i, j], res.pvalue[i, j]
            assert c["p_adjusted"] == pytest.approx(p, rel=1e-6)
            assert c["simultaneous_ci_low"] == pytest.approx(100 * low, rel=1e-6)
        else:
            names = [a["name"] if isinstance(a, dict) else a for a in out["arms"]]
            others = [a for a in names if a != reference]
            res = stats.dunnett(*[arms[a] for a in others], control=arms[reference],
                                rng=np.random.default_rng(0))
            k = others.index(c["variant"])
            # scipy's multivariate t is a randomized quadrature: 1e-3 of the half width
            half = 100 * (res.confidence_interval().high[k] - (variant.mean() - base.mean()))
            got = c["simultaneous_ci_high"] - 100 * (variant.mean() - base.mean())
            assert got == pytest.approx(half, rel=2e-3)
