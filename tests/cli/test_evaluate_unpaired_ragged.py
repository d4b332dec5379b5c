"""``evaluate --design methods_independent`` with arms of different seed counts
(independent seeds, Welch).

References: ``scipy.stats.ttest_ind(equal_var=False)`` (p and ``confidence_interval``) for
each comparison, ``statsmodels``' Holm for ``--correction maxt`` (Welch), and
``scipy.stats.tukey_hsd`` (Tukey-Kramer) and ``scipy.stats.dunnett`` for ``--correction maxt
--equal-variances``. The JSON rounds to 10 significant digits, hence ``rtol=1e-8``; the
differences are in pp (100 x the fractions' differences).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from in_process import run_in_process
from scipy import stats
from welch_reference import welch_reference

from evalcal_core.designs import METHODS_INDEPENDENT, METHODS_PAIRED, MODELS
from evalcal_core.results_io import read_results_arms
from evalcal_core.scores import ArmScores
from reports.evaluate import main

PROG = "python -m reports.evaluate"
#: per-seed metrics (fractions); the arms have 5, 3 and 4 seeds, with overlapping labels
BASE = [0.81, 0.83, 0.80, 0.84, 0.82]
NEW = [0.85, 0.86, 0.83]
BIG = [0.86, 0.84, 0.88, 0.87]
RTOL = 1e-8


def per_seed(path, values: dict, first_seed: dict | None = None) -> str:
    """values: arm -> its per-seed metrics (seeds 1, 2, ... unless ``first_seed``)."""
    rows = ["seed,arm,metric"]
    for arm, xs in values.items():
        start = (first_seed or {}).get(arm, 1)
        rows += [f"{start + s},{arm},{x!r}" for s, x in enumerate(xs)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def run(argv):
    done = run_in_process(main, PROG, *argv)
    return done.returncode, done.stdout, done.stderr


def body(argv) -> dict:
    code, out, err = run([*argv, "--json"])
    assert code == 0, err
    return json.loads(out)


def test_two_arms_welch_equals_scipy(tmp_path):
    """p and CI of ``welch_t`` with 5 and 3 seeds: ``ttest_ind(new, base,
    equal_var=False)``; d is Cohen's d with the pooled sd of 5 + 3 seeds."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW})
    out = body([path, "--design", METHODS_INDEPENDENT])
    p, low, high = welch_reference(NEW, BASE, 0.05)
    (c,) = out["comparisons"]
    assert (c["base"], c["variant"], c["protocol"]) == ("base", "new", "welch_t")
    np.testing.assert_allclose(c["p_value"], p, rtol=RTOL)
    np.testing.assert_allclose([c["ci_low"], c["ci_high"]], [100 * low, 100 * high],
                               rtol=RTOL)
    np.testing.assert_allclose(c["estimate"], 100 * (np.mean(NEW) - np.mean(BASE)), rtol=RTOL)
    pooled = np.sqrt((4 * np.var(BASE, ddof=1) + 2 * np.var(NEW, ddof=1)) / 6)
    np.testing.assert_allclose(c["d"], (np.mean(NEW) - np.mean(BASE)) / pooled, rtol=RTOL)
    np.testing.assert_allclose([a["mean"] for a in out["arms"]],
                               [np.mean(BASE), np.mean(NEW)], rtol=RTOL)
    assert out["k"] == {"base": 5, "new": 3}
    assert out["design"]["kind"] == "methods_independent"
    assert out["design"]["runs_per_arm"] == {"base": 5, "new": 3}
    assert "rows" not in out  # the all-protocols table pairs seeds: not shown
    code, text, err = run([path, "--design", METHODS_INDEPENDENT])
    assert code == 0, err
    assert "design: methods, independent seeds: base 5, new 3, one metric per run" in text


def test_seed_labels_need_not_overlap(tmp_path):
    """Independent seeds: disjoint labels (1-5 and 11-13) give the same result as
    overlapping ones (reference: ``ttest_ind``)."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW}, {"new": 11})
    c = body([path, "--design", METHODS_INDEPENDENT])["comparisons"][0]
    np.testing.assert_allclose(c["p_value"], welch_reference(NEW, BASE, 0.05)[0], rtol=RTOL)


def test_per_question_seeds_use_their_own_means(tmp_path):
    """Per-question scores: each seed's mean over its 4 questions, then Welch on 5 vs 3
    seed means (``ttest_ind``)."""
    rng = np.random.default_rng(3)
    scores = {"base": rng.integers(0, 2, (5, 4)), "new": rng.integers(0, 2, (3, 4))}
    rows = ["seed,arm,question,score"]
    for arm, x in scores.items():
        rows += [f"{s},{arm},q{q},{int(x[s, q])}" for s in range(len(x)) for q in range(4)]
    (tmp_path / "q.csv").write_text("\n".join(rows) + "\n")
    c = body([str(tmp_path / "q.csv"), "--design", METHODS_INDEPENDENT])["comparisons"][0]
    p, _, high = welch_reference(scores["new"].mean(axis=1), scores["base"].mean(axis=1),
                                 0.05)
    np.testing.assert_allclose(c["p_value"], p, rtol=RTOL)
    np.testing.assert_allclose(c["ci_high"], 100 * high, rtol=RTOL)


def test_three_arms_holm_intervals_at_alpha_over_c(tmp_path):
    """Holm: raw p from ``ttest_ind`` adjusted by Holm (3 comparisons, computed here), and
    Bonferroni-simultaneous intervals: ``ttest_ind``'s CI at level 1 - alpha / 3."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW, "big": BIG})
    out = body([path, "--design", METHODS_INDEPENDENT])
    arms = {"base": BASE, "new": NEW, "big": BIG}
    raw = []
    for c in out["comparisons"]:
        p, _, _ = welch_reference(arms[c["variant"]], arms[c["base"]], 0.05)
        _, low, high = welch_reference(arms[c["variant"]], arms[c["base"]], 0.05 / 3)
        np.testing.assert_allclose(c["p_value"], p, rtol=RTOL)
        np.testing.assert_allclose([c["simultaneous_ci_low"], c["simultaneous_ci_high"]],
                                   [100 * low, 100 * high], rtol=RTOL)
        raw.append(p)
    order = np.argsort(raw)
    holm = np.maximum.accumulate([(3 - i) * raw[j] for i, j in enumerate(order)])
    expected = np.empty(3)
    expected[order] = np.minimum(holm, 1.0)
    np.testing.assert_allclose([c["p_adjusted"] for c in out["comparisons"]], expected,
                               rtol=RTOL)


@pytest.mark.parametrize("extra", [[], ["--reference", "base"]])
def test_maxt_is_holm_welch_unless_variances_are_declared_equal(tmp_path, extra):
    """``--correction maxt`` without ``--equal-variances`` (5/3/4 seeds): each comparison's
    Welch p (:func:`welch_reference`) adjusted by ``statsmodels``' ``multipletests(...,
    "holm")``, intervals Welch's at 1 - alpha / C (Bonferroni); a note says why and names
    the pooled-variance test ``--equal-variances`` gives."""
    from statsmodels.stats.multitest import multipletests

    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW, "big": BIG})
    out = body([path, "--design", METHODS_INDEPENDENT, "--correction", "maxt", *extra])
    arms = {"base": BASE, "new": NEW, "big": BIG}
    c_count = len(out["comparisons"])
    raw = []
    for c in out["comparisons"]:
        p, _, _ = welch_reference(arms[c["variant"]], arms[c["base"]], 0.05)
        _, low, high = welch_reference(arms[c["variant"]], arms[c["base"]], 0.05 / c_count)
        np.testing.assert_allclose([c["simultaneous_ci_low"], c["simultaneous_ci_high"]],
                                   [100 * low, 100 * high], rtol=RTOL)
        raw.append(p)
    np.testing.assert_allclose([c["p_adjusted"] for c in out["comparisons"]],
                               multipletests(raw, method="holm")[1], rtol=RTOL)
    name = "Dunnett" if extra else "Tukey"
    assert any(n.startswith("max-T for independent seeds: Holm-adjusted Welch p") and
               f"--equal-variances (declared by design) gives {name}'s" in n
               for n in out["comparison_notes"])
    assert out["correction"] == "maxt"


def test_maxt_two_arms_is_welch_and_says_so(tmp_path):
    """One comparison under ``--correction maxt``: Welch's own p (``welch_reference``),
    unadjusted; the note says max-T of one comparison is the test itself, no step-down."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW})
    out = body([path, "--design", METHODS_INDEPENDENT, "--correction", "maxt"])
    (c,) = out["comparisons"]
    p, low, high = welch_reference(NEW, BASE, 0.05)
    np.testing.assert_allclose([c["p_value"], c["p_adjusted"]], [p, p], rtol=RTOL)
    np.testing.assert_allclose([c["simultaneous_ci_low"], c["simultaneous_ci_high"]],
                               [100 * low, 100 * high], rtol=RTOL)
    notes = " ".join(out["comparison_notes"])
    assert "max-T with one comparison is Welch's t itself" in notes
    assert "step-down" not in notes


@pytest.mark.parametrize("argv, got", [
    (["--design", METHODS_INDEPENDENT, "--equal-variances"], "Got --correction holm instead"),
    (["--correction", "maxt", "--equal-variances"], "Got --correction maxt with --design "
                                                    "(inferred) instead"),
    (["--design", METHODS_PAIRED, "--correction", "maxt", "--equal-variances"],
     f"Got --correction maxt with --design {METHODS_PAIRED} instead"),
])
def test_equal_variances_needs_unpaired_maxt(tmp_path, argv, got):
    """The option's rule, one line on stderr, exit 2."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW, "big": BIG})
    code, out, err = run([path, *argv])
    assert code == 2 and out == ""
    assert ("'--equal-variances' option must be given with --design methods_independent and "
            "--correction maxt") in err
    assert got in err


def test_maxt_all_pairs_is_tukey_kramer(tmp_path):
    """``--correction maxt --equal-variances``, all pairs, 5/3/4 seeds: ``tukey_hsd`` p-values
    and ``confidence_interval(0.95)`` (Tukey-Kramer for unequal groups)."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW, "big": BIG})
    out = body([path, "--design", METHODS_INDEPENDENT, "--correction", "maxt", "--equal-variances"])
    groups = [BASE, NEW, BIG]
    res = stats.tukey_hsd(*groups)
    ci = res.confidence_interval(0.95)
    index = {"base": 0, "new": 1, "big": 2}
    assert len(out["comparisons"]) == 3
    for c in out["comparisons"]:
        i, j = index[c["variant"]], index[c["base"]]
        np.testing.assert_allclose(c["p_adjusted"], res.pvalue[i, j], rtol=RTOL)
        np.testing.assert_allclose([c["simultaneous_ci_low"], c["simultaneous_ci_high"]],
                                   [100 * ci.low[i, j], 100 * ci.high[i, j]], rtol=RTOL)
    assert any("Tukey-Kramer" in n and "9 df" in n for n in out["comparison_notes"])


def test_maxt_many_to_one_is_dunnett(tmp_path):
    """``--correction maxt --equal-variances --reference base``: ``scipy.stats.dunnett`` p and
    ``confidence_interval(0.95)``. Dunnett's p integrates a multivariate t by randomized
    quasi-Monte Carlo, so the reference uses the same ``rng`` (``--seed 7``): the check is
    of the pipeline against scipy, not of scipy's integration error."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW, "big": BIG})
    out = body([path, "--design", METHODS_INDEPENDENT, "--correction", "maxt", "--equal-variances",
                "--reference", "base", "--seed", "7"])
    res = stats.dunnett(NEW, BIG, control=BASE, rng=np.random.default_rng(7))
    ci = res.confidence_interval(0.95)
    assert [c["variant"] for c in out["comparisons"]] == ["new", "big"]
    np.testing.assert_allclose([c["p_adjusted"] for c in out["comparisons"]], res.pvalue,
                               rtol=RTOL)
    np.testing.assert_allclose([c["simultaneous_ci_low"] for c in out["comparisons"]],
                               100 * np.asarray(ci.low), rtol=RTOL)
    np.testing.assert_allclose([c["simultaneous_ci_high"] for c in out["comparisons"]],
                               100 * np.asarray(ci.high), rtol=RTOL)


def test_claim_reads_welch_interval_at_one_minus_two_alpha(tmp_path):
    """A non-inferiority claim reads Welch's 90% interval (Hsu df: 5 vs 3 seeds) (1 - 2 alpha, one
    comparison); the verdict is the interval's against the margin."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW})
    out = body([path, "--design", METHODS_INDEPENDENT, "--claim", "non-inferiority",
                "--margin", "0.01"])
    _, low, high = welch_reference(NEW, BASE, 0.10)
    c = out["comparisons"][0]
    np.testing.assert_allclose([c["claim_ci_low"], c["claim_ci_high"]],
                               [100 * low, 100 * high], rtol=RTOL)
    assert c["claim"] == ("shown" if low > -0.01 else "inconclusive")


@pytest.mark.parametrize("extra", [[], ["--design", METHODS_PAIRED], ["--design", MODELS]])
def test_without_unpaired_the_old_error(tmp_path, extra):
    """Paired seeds (or models) still need every seed in every arm: one line naming the arm
    and the seed it lacks, exit 2."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW})
    code, out, err = run([path, *extra])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "arm 'new' has no score for seed 4: every seed needs every arm" in err


def test_unpaired_refusals(tmp_path):
    """One seed in an arm (no variance for Welch) and a seed with some questions missing:
    one-line errors, exit 2."""
    one = per_seed(tmp_path / "one.csv", {"base": BASE, "new": [0.85]})
    code, _, err = run([one, "--design", METHODS_INDEPENDENT])
    assert code == 2 and "arm 'new' has 1" in err and "two or more seeds" in err, err
    (tmp_path / "part.csv").write_text(
        "seed,arm,question,score\n"
        + "".join(f"{s},base,q{q},1\n" for s in range(3) for q in range(2))
        + "0,new,q0,1\n0,new,q1,0\n1,new,q0,1\n")
    code, _, err = run([str(tmp_path / "part.csv"), "--design", METHODS_INDEPENDENT])
    assert code == 2 and "arm 'new' has no score for seed 1, question 'q1'" in err, err


def test_reader_and_container(tmp_path):
    """``read_results_arms(ragged=True)``: NaN rows where an arm lacks a seed, its own rows
    from ``arm``; without ``ragged`` the old error; ``ArmScores`` checks the padding."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": NEW})
    with pytest.raises(ValueError, match="arm 'new' has no score for seed 4"):
        read_results_arms(path)
    s = read_results_arms(path, ragged=True)
    assert s.ragged and s.seed_counts == (5, 3) and s.r == 5
    np.testing.assert_array_equal(s.arm("new")[:, 0], NEW)
    assert np.isnan(s.scores[1, 3:]).all()
    dense = per_seed(tmp_path / "d.csv", {"base": BASE, "new": BASE})
    d = read_results_arms(dense, ragged=True)
    assert not d.ragged and d.runs_per_arm is None and d.seed_counts == (5, 5)
    x = np.array(s.scores)
    with pytest.raises(ValueError, match="runs_per_arm must count"):
        ArmScores(arms=s.arms, scores=x, question_ids=s.question_ids, run_ids=s.run_ids,
                  runs_per_arm=(5, 2))
    part = np.zeros((2, 2, 2))
    part[1, 1, 0] = np.nan
    with pytest.raises(ValueError, match="whole row of NaN"):
        ArmScores(arms=("a", "b"), scores=part, question_ids=("q0", "q1"),
                  run_ids=(0, 1), runs_per_arm=(2, 1))


def test_scores_are_checked_per_arm(tmp_path):
    """A bad score in a ragged file is named by its own arm and seed (not a padded row)."""
    path = per_seed(tmp_path / "r.csv", {"base": BASE, "new": [0.85, 1.7, 0.83]},
                    {"new": 11})
    with pytest.raises(ValueError, match="new seed 12: score 1.7 is outside"):
        read_results_arms(path, ragged=True)
