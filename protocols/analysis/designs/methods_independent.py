"""``methods_independent``: training procedures on independent seeds; no paired units.

Every protocol takes each seed's metric; the effect size is Cohen's d of two independent
samples; max-T is Holm's Welch unless the variances are declared equal, where it is
Dunnett's or Tukey's exact single-step test on the pooled variance; the leaderboard and the
stream, which need paired units, are refused.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from evalcal_core.designs import METHODS_INDEPENDENT
from evalcal_core.validate import InvalidParameterError
from protocols import dunnett_tukey as dtk
from protocols import joint_null as jn

from ._base import N_FLIPS, DesignAnalysis, register


def cohen_d(a: np.ndarray, b: np.ndarray, alpha: float):
    """Cohen's d (pooled sd) of two independent samples, with a normal-approximation CI."""
    na, nb = a.size, b.size
    pooled = np.sqrt(((na - 1) * a.var(ddof=1) + (nb - 1) * b.var(ddof=1)) / (na + nb - 2))
    if pooled == 0:
        return np.nan, np.nan, np.nan
    d = (b.mean() - a.mean()) / pooled
    se = np.sqrt((na + nb) / (na * nb) + d**2 / (2 * (na + nb)))
    z = stats.norm.ppf(1 - alpha / 2)
    return d, d - z * se, d + z * se


def exact_intervals(metrics, comps, alpha: float, family: str):
    """Dunnett's (``family="many_to_one"``) or Tukey's (``"all_pairs"``) exact
    simultaneous ``1 - alpha`` intervals of the comparisons ``comps`` of the arms' per-seed
    metrics ``(..., m, k)`` (equal seed counts; leading axes are experiments, as the
    decision grid draws them): :func:`protocols.dunnett_tukey.unpaired_exact_ci`, what
    :func:`unpaired_exact` prints. The single-step test at ``alpha`` rejects where an interval
    excludes 0 (the test's critical value is the intervals')."""
    return dtk.unpaired_exact_ci(metrics, comps, alpha, family)


def unpaired_exact(scores, comps, reference, alpha, claim_alpha, seed):
    """Dunnett (many-to-one) or Tukey (all pairs) single-step p, intervals and claim
    intervals for independent seeds: exact for normal arms with a common variance."""
    if scores.ragged:
        return unpaired_exact_unequal(scores, comps, reference, alpha, claim_alpha, seed)
    x = scores.scores.mean(axis=2)
    family = "many_to_one" if reference is not None else "all_pairs"
    if family == "many_to_one":
        control = comps[0][1]
        res = stats.dunnett(*[x[i] for i, _ in comps], control=x[control],
                            rng=np.random.default_rng(seed))
        p_adj = np.asarray(res.pvalue, dtype=float)
    else:
        res = stats.tukey_hsd(*x)
        p_adj = np.array([res.pvalue[i, j] for i, j in comps], dtype=float)
    ci = exact_intervals(x, comps, alpha, family)
    cl = []
    if claim_alpha is not None:
        ci2 = exact_intervals(x, comps, claim_alpha, family)
        cl = [(None, lo, hi) for lo, hi in zip(ci2.low, ci2.high)]
    name = "Dunnett" if family == "many_to_one" else "Tukey"
    note = (f"max-T for independent seeds: {name}'s exact single-step test and intervals "
            f"(normal arms, variance pooled over the {x.shape[0]} arms, "
            f"{x.shape[0] * (x.shape[1] - 1)} df).")
    return p_adj, list(zip(ci.low, ci.high)), cl, note


def unpaired_exact_unequal(scores, comps, reference, alpha, claim_alpha, seed):
    """:func:`unpaired_exact` for arms of unequal seed counts: Dunnett's or Tukey-Kramer's
    single-step p and intervals as ``scipy.stats.dunnett`` / ``tukey_hsd`` give them
    (``confidence_interval(1 - alpha)``); no variance at all gives NaN p and intervals."""
    x = [scores.arm(a).mean(axis=1) for a in scores.arms]
    family = "many_to_one" if reference is not None else "all_pairs"
    levels = [1 - alpha] + ([1 - claim_alpha] if claim_alpha is not None else [])
    p_adj, cis = dtk.unpaired_exact_unequal(x, comps, levels, family, rng=seed)
    df = sum(len(v) for v in x) - len(x)
    bounds = list(zip(*cis[0]))
    cl = [(None, lo, hi) for lo, hi in zip(*cis[1])] if claim_alpha is not None else []
    name = "Dunnett" if family == "many_to_one" else "Tukey-Kramer"
    note = (f"max-T for independent seeds: {name}'s single-step test and intervals for "
            f"unequal seed counts (normal arms, variance pooled over the {len(x)} arms, {df} df).")
    return p_adj, bounds, cl, note


class MethodsIndependent(DesignAnalysis):
    """Training procedures on independent seeds (possibly unequally many per arm)."""

    kind = METHODS_INDEPENDENT
    d_kind = "d"
    equal_variances_ok = True

    def unit_deltas(self, base, variant):
        """Independent seeds pair nothing: no per-unit deltas."""
        raise InvalidParameterError("independent seeds have no paired units")

    def unit_count(self, design, scores, k):
        """The seeds (the smallest arm's count)."""
        return k

    def effect_count(self, scores, k):
        """The seeds (the smallest arm's count)."""
        return k

    def board_units(self, scores, codes):
        """Refused: the leaderboard ranks on paired units."""
        raise InvalidParameterError("--leaderboard compares systems on paired units (questions, "
                                    "paired seeds or clusters); with independent seeds (--design "
                                    f"{self.kind}) there are "
                                    "none: compare the arms without --leaderboard")

    def stream_units(self, scores):
        """Refused: a stream reads paired differences."""
        raise InvalidParameterError("--stream needs paired units (questions or paired seeds); with "
                                    f"independent seeds (--design {self.kind}) there are none")

    def run_inputs(self, name, base, variant):
        """Each seed's metric ``(..., runs, 1)``, for every protocol (the seeds are the
        sample)."""
        return base.mean(axis=-1, keepdims=True), variant.mean(axis=-1, keepdims=True)

    def maxt_is_holm(self, correction, equal_variances):
        """``maxt`` on variances not declared equal (``WELCH_MAXT_NOTE`` of
        :mod:`protocols.analysis.compare`)."""
        return correction == "maxt" and not equal_variances

    def joint_null(self, x, comps, codes, rng, n_draws=N_FLIPS):
        """A bootstrap of each arm's centred seeds (not what ``maxt`` decides on:
        :meth:`exact_maxt` does, with variances declared equal, else Holm's Welch)."""
        return jn.unpaired_bootstrap_null(x.mean(axis=-1), comps, n_draws, rng=rng)

    def exact_maxt(self, scores, comps, reference, alpha, claim_alpha, seed):
        """Dunnett's or Tukey's exact single-step test (:func:`unpaired_exact`)."""
        return unpaired_exact(scores, comps, reference, alpha, claim_alpha, seed)

    def effect_sizes(self, scores, pairs, raw, alpha):
        """Cohen's d of the two arms' per-seed metrics."""
        d = [cohen_d(scores.arm(b).mean(axis=1), scores.arm(v).mean(axis=1), alpha)
             for b, v in pairs]
        return tuple(np.array(x, dtype=float) for x in zip(*d))

    def relative_error_reduction(self, base, variant, estimate, sim_low, sim_high, err,
                                 alpha):
        """The Welch simultaneous interval over the base's error."""
        return estimate / err, sim_low / err, sim_high / err, ""


DESIGN = register(MethodsIndependent())
