"""The planner's fits reproduce what the user reads in their pilot (issue 47, item 3).

References, each independent of the code under test:

* the pilot's own per-seed deltas: their sample sd by numpy, its two-sided 95% interval and
  one-sided 80% limit from the chi-square law of a normal sample variance (scipy.stats.chi2);
* the pilot's own arm correlation (pooled over the arms' variances) by ``numpy.cov``;
* a fitted ``seed_question``'s delta sd against a simulation of that model (Monte Carlo
  tolerance: 4 standard errors of the mean of per-experiment sample variances);
* the two-way ANOVA residual mean square by the textbook formula (numpy);
* a sign-flip test's smallest p-value over k seeds, 2 / 2**k (exact enumeration), above
  alpha: its power is 0 at every effect.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import sim.plan as P
from sim import generators
from sim.calibrate import main as calibrate_main
from sim.generators.seed_question import fit_moments
from sim.pilot import generator_from_pilot


def _question_pilot(path, base, variant):
    rows = [(s, arm, f"q{q}", int(x[s, q])) for s in range(base.shape[0])
            for arm, x in (("baseline", base), ("variant", variant))
            for q in range(base.shape[1])]
    pd.DataFrame(rows, columns=["seed", "arm", "question", "score"]).to_csv(path, index=False)
    return path


def _issue_pilot(n=100):
    """3 seeds, 100 questions, per-seed deltas 24, 25, 24 pp: each seed's right answers at
    fixed counts on questions drawn at random (the arms agree on questions only by chance)."""
    rng = np.random.default_rng(47)
    base = np.zeros((3, n))
    variant = np.zeros((3, n))
    for s, (b, v) in enumerate(zip((50, 52, 48), (74, 77, 72))):
        base[s, rng.choice(n, b, replace=False)] = 1
        variant[s, rng.choice(n, v, replace=False)] = 1
    return base, variant


def _chi2_interval(sd, k, level=0.95):
    df = k - 1
    return (sd * np.sqrt(df / stats.chi2.ppf(1 - (1 - level) / 2, df)),
            sd * np.sqrt(df / stats.chi2.ppf((1 - level) / 2, df)))


def test_question_pilot_fit_reproduces_its_own_delta_spread(tmp_path):
    """The issue's pilot (deltas 24, 25, 24 pp): seed_question's questions-driven delta sd
    (4.5-5.5 pp) lies outside the deltas' 95% interval (0.30-3.63 pp), so the pilot is
    simulated by seed_gaussian on its per-seed accuracies, whose delta sd is the deltas'
    80%-assurance limit (1.22 pp): inside the interval, and so in a simulation of it."""
    base, variant = _issue_pilot()
    deltas = variant.mean(axis=1) - base.mean(axis=1)
    assert np.allclose(deltas, [0.24, 0.25, 0.24])
    sd = deltas.std(ddof=1)
    low, high = _chi2_interval(sd, 3)
    upper = sd * np.sqrt(2 / stats.chi2.ppf(0.2, 2))
    fit = generator_from_pilot(_question_pilot(tmp_path / "p.csv", base, variant))
    assert fit.generator.name == "seed_gaussian"
    # a simulation of the fitted model: per-seed deltas of 20,000 seeds
    b, v = fit.generator.draw(1, 20_000, 0.02, np.random.default_rng(1))
    simulated = float((v - b).std(ddof=1))
    se = simulated / np.sqrt(2 * (20_000 - 1))
    assert abs(simulated - upper) <= 4 * se
    assert low <= simulated <= high
    warning = " ".join(fit.warnings)
    implied = float(re.search(r"gives one seed's delta sd ([\d.]+) pp", warning).group(1))
    assert implied / 100 > high  # why seed_question was not used, in numbers
    assert f"({100 * sd:.3f} pp; {100 * low:.2f}-{100 * high:.2f} pp)" in warning
    assert "per-seed protocols only" in warning
    assert f"one seed's delta has sd {100 * upper:.3f} pp in the simulation" in fit.text


def test_well_specified_question_pilot_keeps_seed_question(tmp_path):
    """A pilot drawn from seed_question keeps it; the delta sd the text states for the fit
    is the fitted model's own (checked by simulating it) and lies in the pilot's interval."""
    g = generators.get("seed_question", n_questions=300, sd_seed=0.3, rho=0.5)
    base, variant = (x[0] for x in g.draw(1, 6, 0.03, np.random.default_rng(2)))
    deltas = variant.mean(axis=1) - base.mean(axis=1)
    low, high = _chi2_interval(deltas.std(ddof=1), 6)
    fit = generator_from_pilot(_question_pilot(tmp_path / "p.csv", base, variant))
    assert fit.generator.name == "seed_question"
    stated = float(re.search(r"the fitted model gives one seed's delta sd ([\d.]+) pp",
                             fit.text).group(1)) / 100
    assert low <= stated <= high
    m = fit.generator
    # the simulation at the fit's own variant shift (the moment fit's beta), as stated
    effect = m.expected_accuracy(fit_moments(base, variant).beta) - m.expected_accuracy()
    sims = 2000
    b, v = m.draw(sims, 6, effect, np.random.default_rng(3))
    per_seed = v.mean(axis=2) - b.mean(axis=2)
    variances = per_seed.var(axis=1, ddof=1)
    mc_se = variances.std(ddof=1) / np.sqrt(sims)
    # the stated sd is rounded to 0.001 pp
    assert abs(variances.mean() - stated**2) <= 4 * mc_se + 2 * stated * 5e-6


def _seed_pilot(path, b, v):
    rows = ["seed,arm,metric"] + [f"{s},baseline,{x:.8f}" for s, x in enumerate(b)]
    rows += [f"{s},variant,{y:.8f}" for s, y in enumerate(v)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_seeds_only_pilot_keeps_its_own_correlation(tmp_path):
    """Per-seed metrics whose own correlation is 0.27: rho stays the pilot's own (once
    back-solved to -0.99, its floor), and one seed's delta has the 80%-assurance sd."""
    b = np.array([0.700, 0.712, 0.694])
    v = np.array([0.717, 0.728, 0.727])
    cov = np.cov(b, v, ddof=1)
    assert cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1]) == pytest.approx(0.27, abs=0.005)
    # one sd for both arms: the correlation that keeps the mean arm variance and the delta
    # variance both is the covariance over the mean arm variance
    own = 2 * cov[0, 1] / (cov[0, 0] + cov[1, 1])
    sd = (v - b).std(ddof=1)
    upper = sd * np.sqrt(2 / stats.chi2.ppf(0.2, 2))
    s_arm = np.sqrt((cov[0, 0] + cov[1, 1]) / 2)
    assert 1 - upper**2 / (2 * s_arm**2) < -0.99  # the old back-solve hit its floor here
    fit = generator_from_pilot(_seed_pilot(tmp_path / "s.csv", b, v))
    g = fit.generator
    assert g.rho == pytest.approx(own, abs=1e-12)
    assert g.sigma * np.sqrt(2 * (1 - g.rho)) == pytest.approx(upper, rel=1e-9)
    assert f"rho = {own:.2f}, the pilot's own {own:.2f}, pooled" in fit.text
    assert "(Pearson's 0.27)" in fit.text


def _ms_resid(d):
    """Two-way ANOVA without replication: residual sum of squares / ((k-1)(n-1))."""
    k, n = d.shape
    resid = d - d.mean(1, keepdims=True) - d.mean(0, keepdims=True) + d.mean()
    return float((resid**2).sum() / ((k - 1) * (n - 1)))


def _plan_components(*argv):
    return P.config_from_args(P.build_parser().parse_args(list(argv))).components


def test_plan_pilot_gives_identical_repeats_no_variance(tmp_path):
    """One run per (seed, question) of a 0/1 pilot: the residual is interaction, none of it
    repeat noise (greedy repeats are identical); the note says what the seed_question split
    (sampled decoding) would be as an --sd-repeat, and stating it plans with it."""
    base, variant = _issue_pilot()
    path = _question_pilot(tmp_path / "p.csv", base, variant)
    ms_e = _ms_resid(variant - base)
    comp = _plan_components("--from-pilot", str(path), "--effect", "2")
    assert comp.sd_repeat == 0.0
    assert comp.sd_inter == pytest.approx(np.sqrt(ms_e), rel=1e-12)
    note = next(n for n in comp.notes if "one run per (seed, question)" in n)
    assert "greedy decoding" in note and "repeat variance 0" in note
    share, sd_sampled = re.search(r"reads ([\d.]+)% of it as repeat noise: state --sd-repeat "
                                  r"([\d.]+)", note).groups()
    assert float(sd_sampled) == pytest.approx(100 * np.sqrt(float(share) / 100 * ms_e),
                                              rel=2e-3)
    stated = _plan_components("--from-pilot", str(path), "--effect", "2", "--sd-repeat",
                              sd_sampled)
    assert stated.sd_repeat == pytest.approx(float(sd_sampled) / 100)
    assert stated.sd_inter**2 == pytest.approx(ms_e - stated.sd_repeat**2, rel=1e-9)


def test_mde_says_impossible_at_any_effect(tmp_path):
    """sign_flip with 3 seeds: its smallest p-value, 2 / 2**3 = 0.25, is above alpha, so no
    effect reaches 80% power: mde.csv says so in words, with the power at the largest effect
    the generator simulates (0%), not a number."""
    assert 2 / 2**3 > 0.05
    out = tmp_path / "o"
    assert calibrate_main(["--k", "3", "--mde", "--protocols", "sign_flip", "--effects", "0",
                           "--generator", "seed_gaussian", "--param", "mu=0.8", "sigma=0.01",
                           "--sims", "200", "--out", str(out), "--no-plot", "--quiet",
                           "--jobs", "1"]) == 0
    row = pd.read_csv(out / "mde.csv").iloc[0]
    assert np.isnan(row.mde_pp)
    assert row.note.startswith("impossible at any effect: power 0.0% [")
    # seed_gaussian at mu = 0.8, sigma = 0.01 simulates effects up to 20 - 5 x 1 = 15 pp
    top = float(re.search(r"at \+([\d.]+) pp", row.note).group(1))
    assert 14.5 < top <= 15.0
