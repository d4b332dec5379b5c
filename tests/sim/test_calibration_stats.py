"""Calibration results against analytic references (statsmodels TTestPower, exact facts)."""

import numpy as np
import pytest
from scipy import integrate, stats
from statsmodels.stats.power import TTestPower

from sim import generators
from sim.grid import calibrate

ALPHA = 0.05
Z_999 = stats.norm.ppf(0.9995)  # two-sided 99.9% band for MC checks: rare false alarms


def mc_band(p, sims):
    """Half-width of a 99.9% normal band for a rate p estimated from ``sims`` draws."""
    return Z_999 * np.sqrt(max(p * (1 - p), 1e-12) / sims) + 0.5 / sims


def paired_t_power(effect_size, k, alpha):
    """Power of the two-sided one-sample t-test, by integrating over the sample variance.

    Independent of statsmodels, and finite where its noncentral t returns NaN (large
    noncentrality): P(|Z + ncp| > t_c sqrt(V / df)), V ~ chi2(df).
    """
    df = k - 1
    ncp = effect_size * np.sqrt(k)
    t_c = stats.t.ppf(1 - alpha / 2, df)

    def integrand(v):
        c = t_c * np.sqrt(v / df)
        return (stats.norm.sf(c - ncp) + stats.norm.cdf(-c - ncp)) * stats.chi2.pdf(v, df)

    value, _ = integrate.quad(integrand, 0, np.inf, limit=200)
    return value


@pytest.mark.parametrize("k", [3, 6])
def test_integrated_power_matches_statsmodels_where_it_is_finite(k):
    for es in (0.2, 0.8, 1.5):
        ref = TTestPower().power(effect_size=es, nobs=k, alpha=ALPHA, alternative="two-sided")
        assert paired_t_power(es, k, ALPHA) == pytest.approx(ref, abs=1e-6)


@pytest.fixture(scope="module")
def gaussian_grid():
    g = generators.get("seed_gaussian")
    frame = calibrate(g, [3, 4, 5, 6, 8], [0, 0.5, 1], sims=3000, seed=11, progress=False,
                      protocol_names=["paired_t", "paired_bca_perm", "welch_t"])
    return g, frame


def test_paired_t_false_positive_rate_is_alpha(gaussian_grid):
    _, frame = gaussian_grid
    null = frame[(frame.protocol == "paired_t") & (frame.effect_pp == 0)]
    for row in null.itertuples():
        assert abs(row.rate - ALPHA) < mc_band(ALPHA, row.sims), row


def test_paired_t_power_matches_noncentral_t(gaussian_grid):
    """Power at effect size delta / (sigma sqrt(2 (1 - rho))) equals the t-test's power."""
    g, frame = gaussian_grid
    cells = frame[(frame.protocol == "paired_t") & (frame.effect_pp > 0)]
    for row in cells.itertuples():
        es = row.effect_pp / 100 / g.delta_sd()
        ref = TTestPower().power(effect_size=es, nobs=row.k, alpha=ALPHA,
                                 alternative="two-sided")
        if not np.isfinite(ref):
            ref = paired_t_power(es, row.k, ALPHA)
        assert abs(row.rate - ref) < mc_band(ref, row.sims), (row, ref)


def test_paired_bca_perm_cannot_reject_below_six_seeds(gaussian_grid):
    _, frame = gaussian_grid
    rows = frame[frame.protocol == "paired_bca_perm"]
    assert (rows[rows.k <= 5].rejections == 0).all()
    assert (rows[(rows.k >= 6) & (rows.effect_pp > 0)].rate > 0).all()
    null = rows[(rows.k >= 6) & (rows.effect_pp == 0)]
    for row in null.itertuples():
        assert row.rate <= ALPHA + mc_band(ALPHA, row.sims), row


@pytest.mark.slow
def test_question_mixture_pitfall():
    """Run bootstrap with SE / sqrt(B) fabricates precision; the unpaired question bootstrap
    is conservative when both arms share the questions (k = 8, n = 4000)."""
    g = generators.get("question_mixture")
    frame = calibrate(g, [8], [0], sims=300, seed=3, progress=False,
                      protocol_names=["run_bootstrap_sqrt_b", "question_bootstrap"])
    rate = dict(zip(frame.protocol, frame.rate))
    assert rate["run_bootstrap_sqrt_b"] > 0.5
    assert rate["question_bootstrap"] < ALPHA / 2
