"""Describe real-run pools: true effect, pairing correlation, and how well a fit mimics them."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special, stats

from real_runs.store import pool_cells

__all__ = ["correlation_ci", "fit_check", "pool_cells", "pool_summary"]

from .fit_bootstrap import fitted_generator, null_diffs
from .grid import calibrate
from .grid.pool import replicate_sims


def correlation_ci(x, y, alpha=0.05):
    """Pearson correlation with a Fisher-z confidence interval (``nan`` if undefined)."""
    n = len(x)
    if n < 4 or np.std(x) == 0 or np.std(y) == 0:
        return np.nan, np.nan, np.nan
    r = float(np.corrcoef(x, y)[0, 1])
    z = np.arctanh(np.clip(r, -0.999999, 0.999999))
    half = special.ndtri(1 - alpha / 2) / np.sqrt(n - 3)
    return r, float(np.tanh(z - half)), float(np.tanh(z + half))


#: a null pool whose own mean delta is this many standard errors from 0 gets a warning
NULL_T_WARNING = 2.0


#: pool_summary's columns for a fraction metric (% and pp) and for a declared range (its
#: own units), and the value each holds
_PP_COLUMNS = dict(base_acc_pct="base", variant_acc_pct="variant", mean_delta_pp="mean",
                   delta_ci_low_pp="low", delta_ci_high_pp="high", sd_delta_pp="sd",
                   truth_pp="truth", truth_low_pp="truth_low", truth_high_pp="truth_high")
_UNIT_COLUMNS = dict(base_mean="base", variant_mean="variant", mean_delta="mean",
                     delta_ci_low="low", delta_ci_high="high", sd_delta="sd", truth="truth",
                     truth_low="truth_low", truth_high="truth_high")


def pool_summary(pools) -> pd.DataFrame:
    """One row per pool: its name and metric, size, its truth with an interval, and the
    arms' correlation.

    Parameters
    ----------
    pools : list of RealPool generators

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``scenario`` (a CSV pool: its name, and "null" or "effect" as declared),
        ``metric`` (accuracy, a fraction, or a score in a declared range) and ``unit`` (pp,
        or the metric's own units). For a fraction metric: ``base_acc_pct``,
        ``variant_acc_pct``, ``mean_delta_pp`` with a 95% t interval, ``sd_delta_pp``,
        ``truth_pp`` with ``truth_low_pp``/``truth_high_pp`` (0 exactly for a null pool, by
        declaration; else the pool's mean delta and its t interval: the effect the pool's
        power is measured at is itself an estimate); for a metric with a declared range the
        same quantities in its own units (``base_mean``, ``variant_mean``, ``mean_delta``,
        ``delta_ci_low``, ``delta_ci_high``, ``sd_delta``, ``truth``, ``truth_low``,
        ``truth_high``; the pp columns are then NaN, and these NaN for a fraction). Always
        ``t_stat`` (mean delta over its standard error), ``null`` (declared a true null),
        ``rho`` (correlation of the arms' per-seed metrics) with a 95% Fisher-z interval;
        ``warning``: text when a null pool's own mean delta is more than 2 standard errors
        from 0 (the pool may not be the null it is declared to be, and its false-positive
        rates may be off), else empty.
    """
    rows = []
    for g in pools:
        base, variant = g.pool()
        metric, unit, factor = g.units() if hasattr(g, "units") else ("accuracy", "pp", 100.0)
        acc_b, acc_v = base.mean(axis=1), variant.mean(axis=1)
        d = factor * (acc_v - acc_b)
        k = d.size
        sd = d.std(ddof=1) if k > 1 else np.nan
        se = sd / np.sqrt(k) if k > 1 else np.nan
        half = stats.t.ppf(0.975, k - 1) * se if k > 1 else np.nan
        mean = float(d.mean())
        t = mean / se if k > 1 and se > 0 else (0.0 if mean == 0 else np.nan)
        r, r_lo, r_hi = correlation_ci(acc_b, acc_v)
        null = bool(g.declared_null())
        warning = ""
        shown = f"{mean:+.3f} {unit}"
        if null and np.isfinite(t) and abs(t) > NULL_T_WARNING:
            warning = (f"null pool's own mean delta {shown} is {abs(t):.1f} standard "
                       f"errors from 0: it may not be the null it is declared to be; its "
                       f"false-positive rates may be off")
        elif null and not np.isfinite(t):
            warning = f"null pool's seeds all have delta {shown}"
        truth = factor * g.fixed_effect()
        values = dict(base=factor * acc_b.mean(), variant=factor * acc_v.mean(), mean=mean,
                      low=mean - half, high=mean + half, sd=sd, truth=truth,
                      truth_low=truth if null else mean - half,
                      truth_high=truth if null else mean + half)
        pp = unit == "pp"
        row = dict(dataset=g.dataset, scenario=g.scenario, metric=metric, unit=unit, seeds=k,
                   n_test=base.shape[1])
        for column, key in _PP_COLUMNS.items():
            row[column] = values[key] if pp else np.nan
        for column, key in _UNIT_COLUMNS.items():
            row[column] = np.nan if pp else values[key]
        row.update(t_stat=t, null=null, rho=r, rho_low=r_lo, rho_high=r_hi, warning=warning)
        rows.append(row)
    return pd.DataFrame(rows)


def fit_check(pool, real_frame, ks, effects, common, reps=0) -> pd.DataFrame:
    """Calibrate ``seed_question`` fitted to ``pool`` and set its rates beside the pool's.

    The fit (method of moments on the whole pool) is simulated at the pool's true effect;
    ``diff`` = fitted rate - real rate, with ``se`` the two-sample binomial standard error
    (Monte Carlo only). The fitted model predicts the rate of a fresh pool, and the pool's
    own rate differs from that by its pool-sampling error too (:mod:`sim.grid.pool`):
    ``pool_sd`` (NaN unless the pool intervals were computed, ``--pool-reps``) and
    ``se_total = sqrt(se**2 + pool_sd**2)``.

    With ``reps`` > 0 the check is also repeated ``reps`` times in a world where the fit is
    true (:mod:`sim.fit_bootstrap`): ``null_mean`` and ``null_sd`` are the mean and sd of a
    correct model's ``diff``, and ``se_null`` the scale on which ``diff - null_mean`` of a
    correct model falls: the real comparison's Monte Carlo error (Agresti-Coull variances,
    so that two rates of exactly 1 still carry the error of ``sims`` experiments), a
    correct model's spread ``null_sd`` and the error of ``null_mean``.
    """
    base, variant = pool.pool()
    fitted = fitted_generator(base, variant)
    effect = effects[0] / 100
    if effect != 0:
        fitted.check_effect(effect)
    names = sorted(real_frame["protocol"].unique())
    sim_frame = calibrate(fitted, ks, effects, **{**common, "protocol_names": names})
    merged = real_frame.merge(sim_frame, on=["protocol", "k", "effect_pp"],
                              suffixes=("_real", "_fit"))
    out = pd.DataFrame({
        "dataset": pool.dataset, "scenario": pool.scenario, "protocol": merged["protocol"],
        "k": merged["k"], "effect_pp": merged["effect_pp"], "rate_real": merged["rate_real"],
        "rate_fit": merged["rate_fit"], "fit_params": fitted.describe()})
    out["diff"] = out["rate_fit"] - out["rate_real"]
    n1, n2 = merged["sims_real"], merged["sims_fit"]
    out["se"] = np.sqrt(out["rate_real"] * (1 - out["rate_real"]) / n1
                        + out["rate_fit"] * (1 - out["rate_fit"]) / n2)
    out["pool_sd"] = (merged["pool_sd_real"].to_numpy() if "pool_sd_real" in merged
                      else np.nan)
    out["se_total"] = np.sqrt(out["se"] ** 2 + out["pool_sd"] ** 2)
    runner = {key: value for key, value in common.items() if key != "sims"}
    null = null_diffs(fitted, effect, pool.declared_null(), pool.pool_size, ks, names, reps,
                      sims=replicate_sims(common["sims"]), **runner)
    out = out.merge(null, on=["protocol", "k"], how="left")
    out["se_null"] = np.sqrt(_adjusted_variance(out["rate_real"].to_numpy(), n1.to_numpy())
                             + _adjusted_variance(out["rate_fit"].to_numpy(), n2.to_numpy())
                             + out["null_sd"] ** 2 + out["null_mean_se"] ** 2)
    return out


def _adjusted_variance(rate, sims):
    """Agresti-Coull variance of a rate over ``sims`` experiments (two added successes and
    failures): never 0, where the plain binomial one is at rates of 0 and 1."""
    tilde = (rate * sims + 2) / (sims + 4)
    return tilde * (1 - tilde) / (sims + 4)
