"""The power bound for tests valid at every seed variance (:mod:`sim.seed_power_bound`)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from sim.seed_power_bound import (
    optimal_test,
    paired_t_power,
    questions_only_power,
    seed_power_bound,
    theta_for_power,
)

ALPHA = 0.05
#: numerical tolerance of the 120-cell program and the 1,500-cell bound integral: their
#: largest measured error was 2.3e-4 (against 350 / 4,000 cells, and against the analytic
#: 0.8 of the one-constraint case); 4x that
GRID_TOL = 1e-3
#: the effect the question-only z test detects with 80% power (2.802 SEs)
THETA = theta_for_power(0.8, ALPHA)


def test_one_constraint_gives_the_z_test():
    """With the size constrained only at lam = 1 (seed variance known to be 0), u is
    ancillary and the likelihood ratio cosh(theta z) grows with |z|: by the Neyman-Pearson
    lemma the best test is |z| > z_{1-alpha/2}, power 0.800 (analytic). The grid and the
    dual bound must reproduce it."""
    r = seed_power_bound(3, THETA, ALPHA, grid=120, check_grid=1500, lambdas=[1.0])
    assert r.bound == pytest.approx(0.8, abs=GRID_TOL)
    assert r.attained == pytest.approx(0.8, abs=GRID_TOL)


@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_bound_sits_between_paired_t_and_the_question_only_test(k):
    """paired_t is valid at every seed variance, so its power (scipy's noncentral t) is at
    most the bound; the bound is attained by the linear program's test within the grid
    error; and it stays far below the question-only z test's 80% for small k (the gap is
    what assuming seed variance 0 buys)."""
    r = seed_power_bound(k, THETA, ALPHA, grid=120, check_grid=1500)
    reference = stats.nct.sf(stats.t.isf(ALPHA / 2, k - 1), k - 1, THETA) \
        + stats.nct.cdf(-stats.t.isf(ALPHA / 2, k - 1), k - 1, THETA)
    assert r.paired_t == pytest.approx(reference, rel=1e-12)
    assert r.paired_t <= r.bound + GRID_TOL
    assert abs(r.bound - r.attained) <= GRID_TOL
    assert r.questions_only == pytest.approx(0.8, abs=1e-9)
    assert r.bound < r.questions_only - 0.05


def test_bound_approaches_the_z_test_with_many_seeds():
    """With many seeds u pins the seed variance down: at k = 200 the bound and paired_t are
    within 1 pp of the z test (t_{199} critical value 1.972 against 1.960)."""
    r = seed_power_bound(200, THETA, ALPHA, grid=120, check_grid=1500)
    assert r.questions_only - 0.01 < r.paired_t <= r.bound + GRID_TOL
    assert r.bound <= r.questions_only + GRID_TOL


def test_tabulated_test_keeps_alpha_off_the_grid_by_simulation():
    """Monte Carlo check, independent of the quadrature: 200,000 draws of (z, u) at nuisance
    values between and beyond the constrained grid; the tabulated k = 3 test rejects at most
    alpha + 3 binomial SEs (0.0515), and at lam = 1 its simulated power matches the linear
    program's value within 3 SEs."""
    test = optimal_test(3, THETA, ALPHA, grid=120)
    rng = np.random.default_rng(5)
    draws = 200_000
    limit = ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / draws)
    for lam in (1.0, 1.37, 3.3, 4.05, 27.0, 3e5):
        z = rng.normal(0.0, np.sqrt(lam), draws)
        u = lam * rng.chisquare(2, draws) / 2
        assert test.reject_probability(z, u).mean() <= limit, lam
    z = rng.normal(THETA, 1.0, draws)
    u = rng.chisquare(2, draws) / 2
    power = test.reject_probability(z, u).mean()
    assert abs(power - test.power) <= 3 * np.sqrt(test.power * (1 - test.power) / draws)


def test_helpers_against_closed_forms():
    """theta_for_power inverts the two-sided z power. It differs from z_{0.975} + z_{0.8} only
    by the far tail's share, Phi(-1.96 - 2.8) ~ 1e-6 of power (3.4e-6 in theta). At k =
    10,000 the t critical value 1.9602 against 1.9600 costs 7.5e-5 of power."""
    assert questions_only_power(theta_for_power(0.9, 0.01), 0.01) == pytest.approx(0.9)
    assert THETA == pytest.approx(stats.norm.isf(0.025) + stats.norm.ppf(0.8), abs=2e-5)
    assert paired_t_power(10_000, THETA, ALPHA) == pytest.approx(0.8, abs=2e-4)


@pytest.mark.parametrize("kwargs, match", [
    (dict(k=1, theta=1.0), r"The 'k' parameter must be an integer >= 2 and <= 1000\. Got 1 "),
    (dict(k=2.5, theta=1.0), r"The 'k' parameter must be an integer .* Got 2\.5 "),
    (dict(k=3, theta=0.0), r"The 'theta' parameter must be a finite number > 0 and <= 40\. "
                           r"Got 0\.0 "),
    (dict(k=3, theta=1.0, alpha=1.2), r"The 'alpha' parameter must be a number in \(0, 1\)\. "
                                      r"Got 1\.2 "),
    (dict(k=3, theta=1.0, grid=5), r"The 'grid' parameter must be an integer >= 20\. Got 5 "),
    (dict(k=3, theta=1.0, lambdas=[0.5]),
     r"The 'lambdas' parameter must be a non-empty list of finite nuisance values >= 1\. "),
    (dict(k=3, theta=1.0, grid=40, check_grid=30),
     r"The 'check_grid' parameter must be an integer >= 40\. Got 30 "),
])
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        seed_power_bound(**kwargs)


def test_cli_prints_the_table_and_refuses_bad_input():
    ok = subprocess.run([sys.executable, "-m", "sim.seed_power_bound", "--ks", "3"],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    row = [line.split() for line in ok.stdout.splitlines() if line.strip().startswith("3 ")]
    assert row and row[0][2] == "35.2%" and row[0][3] == "80.0%"
    bad = subprocess.run([sys.executable, "-m", "sim.seed_power_bound", "--power", "1.5"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "python -m sim.seed_power_bound: error: The '--power' option must be a finite number "
        "> 0.05 and < 1. Got 1.5 instead."]
