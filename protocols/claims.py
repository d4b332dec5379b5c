"""Claims beyond "the variant differs": superiority, non-inferiority and equivalence.

Every claim is a one-sided test at level ``alpha`` (equivalence: two of them, TOST) on the
difference ``delta = variant - base`` in the metric's units, and reads off one interval,
the two-sided ``1 - 2 alpha`` CI (:func:`claim_ci_level`):

=================  =====================  =============================================
claim              null hypothesis        shown when (p < alpha, equivalently)
=================  =====================  =============================================
superiority        delta <= margin (>= 0)  CI low > margin
non_inferiority    delta <= -margin        CI low > -margin
equivalence        |delta| >= margin       -margin < CI low and CI high < margin (TOST)
=================  =====================  =============================================

``alpha = 0.05`` so reads a 90% CI; the ICH E9 convention of a 95% CI for
non-inferiority is ``alpha = 0.025``. Superiority at ``alpha / 2`` is the two-sided
significance test of the ``paired_t``/``welch_t`` protocols, in the positive direction.

The estimate, its SE and its degrees of freedom come from one of four designs:
:func:`paired_claim` (per-seed deltas, t with k - 1 df; statsmodels ``ttost_paired``),
:func:`welch_claim` (unpaired seeds, Welch t; ``ttost_ind(usevar="unequal")``),
:func:`question_claim` (per-question deltas of one fixed model, z or t) and
:func:`claim_from_estimate` (any estimate, SE and df, e.g. a cluster-robust protocol's).

Fixed models at a margin need more than a Wald-type interval: at ``delta = -margin`` the
Newcombe and t intervals showed false claims in up to 11.8% / 7.5% of experiments
(``python -m sim.decision_grid --families models_margin``). :func:`models_claim` decides
them by score tests whose variance is taken at the margin (:func:`paired_proportion_claim`,
Tango's, for one 0/1 run; :func:`mean_score_claim` for repeats or partial credit), and
``evaluate`` uses it for every fixed-model claim with a margin. Claims over several paired
comparisons under ``--correction maxt`` are the exact one-sided max-T tests of
:func:`protocols.maxt_claims.maxt_claim`.

A gate maps the verdict to an exit status with :data:`EXIT_STATUS`: 0 the claim is shown,
1 it is refuted (the CI lies entirely on the wrong side: for non-inferiority a regression
larger than the margin is shown), 3 inconclusive (2 is a usage error, as for every
command of this project).

A zero standard error (no variance estimate) gives p = NaN and CI NaN: inconclusive, as
in :mod:`protocols._decisions`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evalcal_core.validate import (
    InvalidParameterError,
    check_alpha,
    check_bool,
    check_choice,
    check_number,
    fail,
)
from protocols.methods.welch_t import welch_df

#: the claims, in the order reports list them
CLAIMS = ("superiority", "non_inferiority", "equivalence")

#: the verdicts of :func:`claim_verdict`
VERDICTS = ("shown", "refuted", "inconclusive")

#: exit status of a gate for each verdict (2 is reserved for usage errors)
EXIT_STATUS = {"shown": 0, "refuted": 1, "inconclusive": 3}


def claim_ci_level(alpha: float) -> float:
    """Confidence level of the interval every claim at level ``alpha`` reads: ``1 - 2 alpha``."""
    return 1.0 - 2.0 * check_alpha(alpha)


def check_margin(margin, score_range=(0.0, 1.0), name: str = "--margin") -> float:
    """A margin in the metric's units, or ``ValueError``.

    Parameters
    ----------
    margin : float
        Must be a finite number > 0.
    score_range : (float, float)
        Lowest and highest possible score (e.g. ``(0, 1)`` for accuracies as fractions).
        On a fraction scale (width <= 1) a margin >= 1 is taken for percentage points.
    name : str
        The option or parameter named in messages.

    Returns
    -------
    float
    """
    margin = check_number(margin, name, low=0.0, low_open=True)
    low, high = (float(v) for v in score_range)
    if high - low <= 1.0 and margin >= 1.0:
        kind = "option" if name.startswith("--") else "parameter"
        raise InvalidParameterError(
            f"The {name!r} {kind} must be in the metric's units: {margin:g} is "
            f"{100 * margin:g} pp on accuracies; did you mean {margin / 100:g}? (scores lie "
            f"in [{low:g}, {high:g}])")
    return margin


@dataclass(frozen=True)
class ClaimResult:
    """A claim tested on a batch of experiments.

    Attributes
    ----------
    claim : str
        One of :data:`CLAIMS`.
    margin : float
        In the metric's units (0 for plain superiority).
    alpha : float
        Level of each one-sided test.
    estimate, se, df : ndarray, shape (...)
        The difference ``variant - base`` (metric units), its SE, and df (``inf``: z).
    p_value : ndarray, shape (...)
        One-sided p (equivalence: the larger of the two TOST p-values).
    ci_low, ci_high : ndarray, shape (...)
        The two-sided ``1 - 2 alpha`` CI.
    verdict : ndarray of str, shape (...)
        ``"shown"``, ``"refuted"`` or ``"inconclusive"``.
    """

    claim: str
    margin: float
    alpha: float
    estimate: np.ndarray
    se: np.ndarray
    df: np.ndarray
    p_value: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    verdict: np.ndarray

    @property
    def shown(self) -> np.ndarray:
        """Boolean mask of the experiments where the claim is shown."""
        return self.verdict == "shown"

    @property
    def exit_status(self) -> np.ndarray:
        """:data:`EXIT_STATUS` of each verdict (int array)."""
        return _exit_codes(self.verdict)


def _exit_codes(verdict):
    out = np.full(np.shape(verdict), EXIT_STATUS["inconclusive"])
    out[np.asarray(verdict) == "shown"] = EXIT_STATUS["shown"]
    out[np.asarray(verdict) == "refuted"] = EXIT_STATUS["refuted"]
    return out


def _claim_iv(claim, margin, alpha, owner):
    check_choice(claim, "claim", CLAIMS, owner=owner)
    alpha = check_alpha(alpha, owner=owner)
    if claim == "superiority":
        margin = 0.0 if margin is None else check_number(margin, "margin", owner, low=0.0)
    else:
        if margin is None:
            raise fail("margin", f"a finite number > 0 for {claim}", margin, owner)
        margin = check_number(margin, "margin", owner, low=0.0, low_open=True)
    return claim, margin, alpha


def claim_verdict(claim: str, estimate, ci_low, ci_high, margin=None):
    """``"shown"``, ``"refuted"`` or ``"inconclusive"`` from a ``1 - 2 alpha`` CI.

    Parameters
    ----------
    claim : {"superiority", "non_inferiority", "equivalence"}
    estimate : array_like
        Not used by the rule (kept so a caller passes what a protocol returns); NaN there
        with a finite CI is allowed.
    ci_low, ci_high : array_like
        The two-sided ``1 - 2 alpha`` CI of ``variant - base`` (metric units).
    margin : float
        > 0 (metric units); superiority takes ``None`` or a margin >= 0.

    Returns
    -------
    str or ndarray of str
        Superiority: shown if low > margin, refuted if high < margin. Non-inferiority:
        shown if low > -margin, refuted if high < -margin (a regression beyond the margin).
        Equivalence: shown if -margin < low and high < margin, refuted if the CI lies
        entirely outside (low > margin or high < -margin). NaN bounds: inconclusive.
    """
    claim, margin, _ = _claim_iv(claim, margin, 0.05, "claim_verdict")
    lo = np.asarray(ci_low, dtype=float)
    hi = np.asarray(ci_high, dtype=float)
    if claim == "superiority":
        shown, refuted = lo > margin, hi < margin
    elif claim == "non_inferiority":
        shown, refuted = lo > -margin, hi < -margin
    else:
        shown = (lo > -margin) & (hi < margin)
        refuted = (lo > margin) | (hi < -margin)
    out = np.where(shown, "shown", np.where(refuted, "refuted", "inconclusive"))
    return str(out) if out.ndim == 0 else out


def claim_from_estimate(estimate, se, df, claim: str, margin=None,
                        alpha: float = 0.05) -> ClaimResult:
    """Test a claim from an estimate of ``variant - base``, its SE and df.

    Composes with any protocol that returns a standard error, e.g. a cluster-robust one
    (CR2 SE with Satterthwaite df).

    Parameters
    ----------
    estimate, se : array_like
        Difference and SE (metric units).
    df : array_like or float
        Degrees of freedom; ``inf`` for a normal (z) reference.
    claim : str
        One of :data:`CLAIMS`.
    margin : float, optional
        In the metric's units; required (> 0) for non-inferiority and equivalence.
    alpha : float
        Level of each one-sided test.

    Returns
    -------
    ClaimResult
    """
    claim, margin, alpha = _claim_iv(claim, margin, alpha, "claim_from_estimate")
    est = np.asarray(estimate, dtype=float)
    se = np.asarray(se, dtype=float)
    df = np.broadcast_to(np.asarray(df, dtype=float), np.broadcast(est, se).shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        dfx = np.where(np.isfinite(df) & (df > 0), df, np.inf)
        se_ok = np.where(se > 0, se, np.nan)
        t_low = (est - (margin if claim == "superiority" else -margin)) / se_ok
    p = stats.t.sf(t_low, dfx)
    if claim == "equivalence":
        with np.errstate(divide="ignore", invalid="ignore"):
            t_high = (est - margin) / se_ok
        p = np.maximum(p, stats.t.cdf(t_high, dfx))
    half = stats.t.isf(alpha, dfx) * se_ok
    lo, hi = est - half, est + half
    verdict = claim_verdict(claim, est, lo, hi, margin)
    return ClaimResult(claim, margin, alpha, est, se, np.asarray(dfx), np.asarray(p),
                       np.asarray(lo), np.asarray(hi), np.asarray(verdict))


def paired_claim(deltas, claim: str, margin=None, alpha: float = 0.05) -> ClaimResult:
    """Claim on per-seed paired deltas (variant - base), t with ``k - 1`` df.

    Equivalence p equals ``statsmodels.stats.weightstats.ttost_paired(variant, base,
    -margin, margin)[0]``; non-inferiority p its lower test's p.

    Parameters
    ----------
    deltas : ndarray, shape (..., k)
    """
    d = _units_iv(deltas, "deltas", "paired_claim")
    k = d.shape[-1]
    return claim_from_estimate(d.mean(axis=-1), d.std(axis=-1, ddof=1) / math.sqrt(k), k - 1,
                               claim, margin, alpha)


def welch_claim(variant, base, claim: str, margin=None, alpha: float = 0.05) -> ClaimResult:
    """Claim on unpaired per-seed metrics, Welch t on :func:`protocols.methods.welch_t.welch_df`.

    Equivalence p equals ``ttost_ind(variant, base, -margin, margin,
    usevar="unequal")[0]`` where that df is Welch-Satterthwaite's; it is lower (bounded, or
    Hsu's ``min(k_b, k_v) - 1``) where the plug-in df errs with the SE.

    Parameters
    ----------
    variant : ndarray, shape (..., k_v)
    base : ndarray, shape (..., k_b)
    """
    v = _units_iv(variant, "variant", "welch_claim")
    b = _units_iv(base, "base", "welch_claim")
    vv = v.var(axis=-1, ddof=1) / v.shape[-1]
    vb = b.var(axis=-1, ddof=1) / b.shape[-1]
    df = welch_df(vb, vv, b.shape[-1], v.shape[-1])
    return claim_from_estimate(v.mean(axis=-1) - b.mean(axis=-1), np.sqrt(vv + vb), df,
                               claim, margin, alpha)


def question_claim(question_deltas, claim: str, margin=None, alpha: float = 0.05, *,
                   reference: str = "z") -> ClaimResult:
    """Claim on per-question deltas of one fixed model pair (questions are the units).

    Parameters
    ----------
    question_deltas : ndarray, shape (..., n)
        ``score_variant - score_base`` per question (e.g. -1, 0, 1 for 0/1 scores).
    reference : {"z", "t"}
        Normal reference (as ``paired_t_questions``) or t with ``n - 1`` df.
    """
    check_choice(reference, "reference", ("z", "t"), owner="question_claim")
    d = _units_iv(question_deltas, "question_deltas", "question_claim")
    n = d.shape[-1]
    return claim_from_estimate(d.mean(axis=-1), d.std(axis=-1, ddof=1) / math.sqrt(n),
                               np.inf if reference == "z" else n - 1, claim, margin, alpha)


def _units_iv(x, name, owner):
    x = np.asarray(x, dtype=float)
    if x.ndim < 1 or x.shape[-1] < 2:
        raise fail(name, "an array with at least 2 values on its last axis",
                   owner=owner, got=f"shape {x.shape}")
    return x


# --- fixed models: the questions are the sample ---------------------------------------

#: bisection steps of the score interval's bounds (on [-1, 1]: 2**-50 ~ 1e-15 wide)
_BOUND_STEPS = 50
#: bisection steps of the Lagrange multiplier of the constrained MLE (mean_score_claim)
_TILT_STEPS = 50


def paired_proportion_claim(base, variant, claim: str, margin=None, alpha: float = 0.05, *,
                            exact_size: bool = True) -> ClaimResult:
    """Claim on one 0/1 run per model: Tango's (1998) score test for paired proportions.

    With ``b`` the questions only the baseline gets right, ``c`` those only the variant
    gets right and ``n`` questions, ``delta = (c - b) / n`` (variant - base, a fraction).
    The statistic for ``H0: delta = d0`` is Tango's score statistic, whose variance is
    estimated under the null's constraint::

        z(d0) = (c - b - n d0) / sqrt(n (2 q + d0 (1 - d0)))
        q = (W + sqrt(W**2 + 8 n b d0 (1 - d0))) / (4 n),  W = b + c - d0 (2 n - c + b)

    (``q``: the constrained MLE of P(base only right)). Where few questions are discordant
    the Wald/t variance ``(b + c)/n - delta**2`` is near 0 and shows claims it should not;
    the constrained variance cannot fall below what ``delta = d0`` itself requires.
    Each one-sided test is ``p = P(Z > z(-margin))`` (non-inferiority), ``P(Z < z(margin))``
    (equivalence's upper test); the interval is Tango's score interval, the inversion
    ``{d0 : |z(d0)| < z_(1 - alpha)}`` found by bisection (``1 - 2 alpha`` level).
    Tango, *Stat. Med.* 17:891-908 (1998); as ratesci's ``pairbinci(skew = FALSE,
    bcf = FALSE)`` and contingencytables' ``Tango_asymptotic_score_CI_paired_2x2``.

    With the normal critical value ``z_(1 - alpha)`` the test rejects more often than
    ``alpha`` at the margin: 5.2-5.6% at n = 50-100 and 5.4% at n = 500 (exact enumeration
    of the trinomial over the discordance rate). With ``exact_size=True`` (the default) the
    critical value is calibrated instead (:func:`tango_critical_value`): the smallest
    ``c >= z_(1 - alpha)`` whose rejection ``z(d0) > c`` has probability at most ``alpha``
    at ``delta = d0`` for every discordance rate on a grid of 401 (exact unconditional
    calibration over the nuisance, as Chan et al., *Stat. Med.* 22:1217 (2003), for
    non-inferiority of paired proportions). Each one-sided test, and the interval's bound
    it is read from, uses the critical value calibrated at its own null value (``-margin``
    for non-inferiority, ``+-margin`` for equivalence; the two are equal by symmetry).
    The p-value shown is then ``P(Z > z(d0) z_(1 - alpha) / c)``: below ``alpha`` exactly
    when the claim is shown, and Tango's asymptotic p where ``c = z_(1 - alpha)``; it is not
    an exact p-value at other levels.

    Parameters
    ----------
    base, variant : array_like of 0/1, shape (..., n)
        Per-question correctness of one run of each model; leading axes are a batch.
    claim : {"superiority", "non_inferiority", "equivalence"}
    margin : float, optional
        Fraction (0.01 = 1 pp); required (> 0) for non-inferiority and equivalence.
    alpha : float
        Level of each one-sided test.
    exact_size : bool, default True
        Calibrate the critical value by exact enumeration (above); False: Tango's normal
        critical value (his asymptotic test and interval).

    Returns
    -------
    ClaimResult
        ``estimate = (c - b) / n``; ``se`` the unconstrained SE
        ``sqrt((b + c) / n - estimate**2) / sqrt(n)`` (shown, not used by the test);
        ``df = inf``; ``verdict == claim_verdict(claim, estimate, ci_low, ci_high)``.
    """
    owner = "paired_proportion_claim"
    claim, margin, alpha = _claim_iv(claim, margin, alpha, owner)
    b0, v0 = _scores_iv(base, variant, owner, binary=True)
    n = b0.shape[-1]
    b = np.sum(b0 > v0, axis=-1).astype(float)
    c = np.sum(v0 > b0, axis=-1).astype(float)

    def z_of(d0):
        return _tango_z(b, c, n, d0)

    est = (c - b) / n
    se = np.sqrt(np.maximum((b + c) / n - est**2, 0.0) / n)
    check_bool(exact_size, "exact_size", owner)
    crit = None
    if exact_size:
        # The lower bound is read against the lower null value; the upper bound against the
        # upper one, whose lower-tail size at d0 is the upper-tail size at -d0 (swap arms).
        lower_null = margin if claim == "superiority" else -margin
        upper_null = -margin if claim == "non_inferiority" else margin
        crit = (tango_critical_value(n, lower_null, alpha),
                tango_critical_value(n, -upper_null, alpha))
    return _score_claim(z_of, est, se, claim, margin, alpha, crit)


#: nuisance grid of the exact calibration: discordance rates from |d0| to 1
_CALIBRATION_GRID = 401


@functools.lru_cache(maxsize=256)
def tango_critical_value(n: int, d0: float, alpha: float) -> float:
    """Smallest ``c >= z_(1 - alpha)`` with ``P(z(d0) > c) <= alpha`` at ``delta = d0``.

    Exact enumeration: with ``pi`` the discordance rate, ``m = b + c`` is Binomial(n, pi)
    and, given ``m``, ``c`` is Binomial(m, (pi + d0) / (2 pi)); Tango's ``z(d0)`` grows with
    ``c`` at fixed ``m``, so ``z(d0) > c`` given ``m`` is ``c >= c_m`` and its probability
    a binomial tail. The size is the largest over ``pi`` on an even grid of
    :data:`_CALIBRATION_GRID` points in ``[|d0|, 1]`` (the rates with ``pi_b, pi_c >= 0``);
    the critical value is found by bisection to 1e-7.

    Parameters
    ----------
    n : int
        Questions.
    d0 : float
        Null difference (fraction); the test rejects for large ``z(d0)`` (upper tail).
    alpha : float
        One-sided level.

    Returns
    -------
    float
        The critical value (unitless, a z).
    """
    z_alpha = float(stats.norm.isf(alpha))
    size = _tango_size_function(int(n), float(d0))
    if size(z_alpha) <= alpha:
        return z_alpha
    low, high = z_alpha, z_alpha + 0.25
    while size(high) > alpha:
        low, high = high, high + 0.25
    while high - low > 1e-7:
        mid = 0.5 * (low + high)
        low, high = (mid, high) if size(mid) > alpha else (low, mid)
    return high


def _tango_size_function(n, d0):
    """``crit -> max over pi of P(z(d0) > crit)`` at ``delta = d0`` (tango_critical_value).

    The binomial weights of ``m`` are computed once; only the ``m`` within 12 sd of each
    rate's mean (mass outside < 1e-30) enter the sums, so the cost grows like ``sqrt(n)``
    per rate.
    """
    m_all = np.arange(n + 1.0)
    rates = np.linspace(max(abs(d0), 1e-12), 1.0, _CALIBRATION_GRID)
    half = np.ceil(12.0 * np.sqrt(n * rates * (1.0 - rates))) + 2.0
    first = np.maximum(np.floor(n * rates - half), 0.0).astype(int)
    last = np.minimum(np.ceil(n * rates + half), n).astype(int)
    row = np.repeat(np.arange(rates.size), last - first + 1)
    m = np.concatenate([np.arange(f, t + 1.0) for f, t in zip(first, last)])
    weight = stats.binom.pmf(m, n, rates[row])
    split = (rates[row] + d0) / (2.0 * rates[row])   # P(variant only | discordant)

    def size(crit):
        # c_m: the smallest c in [0, m] with z > crit (m + 1: none), by bisection on
        # integers; z(d0) grows with c at fixed m
        low, high = np.zeros_like(m_all), m_all + 1.0
        for _ in range(int(math.ceil(math.log2(n + 2))) + 1):
            mid = np.floor(0.5 * (low + high))
            above = (mid <= m_all) & (_tango_z(m_all - mid, mid, n, d0) > crit)
            low, high = np.where(above, low, mid + 1.0), np.where(above, mid, high)
        tail = stats.binom.sf(high[m.astype(int)] - 1.0, m, split)
        return float(np.bincount(row, weight * tail, minlength=rates.size).max())

    return size


def mean_score_claim(base, variant, claim: str, margin=None,
                     alpha: float = 0.05) -> ClaimResult:
    """Claim on per-question mean scores in [0, 1] (repeats or partial credit).

    The per-question deltas ``d_i = variant_i - base_i`` lie in [-1, 1]. The test is the
    score test of ``H0: E d = d0`` in the nonparametric model "any distribution on
    [-1, 1]": the variance under the null is that of the constrained maximum-likelihood
    distribution, which reweights the observed deltas, ``p_i = (1/n) / (1 + t (d_i - d0))``
    (empirical likelihood), and where the observed deltas cannot reach mean ``d0`` puts the
    missing mass at the bound -1 or +1 (``t`` then sits at the end of its range
    ``-1/(1 - d0) <= t <= 1/(1 + d0)``)::

        z(d0) = (mean(d) - d0) / sqrt(sum_i p_i (d_i - d0)**2 + m (e - d0)**2) * sqrt(n)

    (``m`` the mass at the bound ``e``). On 0/1 scores this is exactly Tango's statistic
    (:func:`paired_proportion_claim`): there the model is the paired 2x2 table. Like it,
    it cannot show a claim from a run of zero deltas, where the t on deltas (zero SE) does;
    the one-sided tests and the ``1 - 2 alpha`` interval (inverted by nested bisection) are
    read as in :func:`paired_proportion_claim`. A z reference: at n = 100 and 1,000
    (accuracy 0.9, 4 runs, correlated models) its size at the margin measured 4.9-5.1%
    where the t on deltas gave 5.4-6.6% (``sim.decisions.models_margin``).

    Parameters
    ----------
    base, variant : array_like, shape (..., n)
        Per-question mean scores (fractions in [0, 1], e.g. the mean over runs).
    claim, margin, alpha
        As :func:`paired_proportion_claim` (margin a fraction).

    Returns
    -------
    ClaimResult
        ``estimate = mean(d)``; ``se = std(d, ddof=0) / sqrt(n)`` (shown, not used);
        ``df = inf``.
    """
    owner = "mean_score_claim"
    claim, margin, alpha = _claim_iv(claim, margin, alpha, owner)
    b0, v0 = _scores_iv(base, variant, owner, binary=False)
    d = v0 - b0
    n = d.shape[-1]
    values, weights = _support(d)
    est = d.mean(axis=-1)

    def z_of(d0):
        return _bounded_score_z(values, weights, est, d0) * math.sqrt(n)

    return _score_claim(z_of, est, d.std(axis=-1) / math.sqrt(n), claim, margin, alpha)


def models_claim(base, variant, claim: str, margin=None, alpha: float = 0.05, *,
                 binary_one_run: bool) -> ClaimResult:
    """Claim between two fixed models (design ``models``): questions are the sample.

    Parameters
    ----------
    base, variant : array_like, shape (..., runs, n)
        Scores (fractions in [0, 1]) of each run on each question.
    claim, margin, alpha
        As :func:`paired_proportion_claim` (margin a fraction).
    binary_one_run : bool
        True: one 0/1 run per model (``runs == 1``), Tango's test
        (:func:`paired_proportion_claim`). False: the per-question means over the runs,
        :func:`mean_score_claim` (which equals Tango's asymptotic test on 0/1 single runs).

    Returns
    -------
    ClaimResult
    """
    owner = "models_claim"
    check_bool(binary_one_run, "binary_one_run", owner)
    b = _runs_iv(base, "base", owner, binary_one_run)
    v = _runs_iv(variant, "variant", owner, binary_one_run)
    if binary_one_run:
        return paired_proportion_claim(b[..., 0, :], v[..., 0, :], claim, margin, alpha)
    return mean_score_claim(b.mean(axis=-2), v.mean(axis=-2), claim, margin, alpha)


def _runs_iv(x, name, owner, binary_one_run):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2:
        raise fail(name, "an array of shape (..., runs, n)", owner=owner, got=f"shape {x.shape}")
    if binary_one_run and x.shape[-2] != 1:
        raise fail(name, "an array of shape (..., 1, n) with binary_one_run=True (one run "
                   "per model)", owner=owner, got=f"shape {x.shape}")
    return x


def _scores_iv(base, variant, owner, binary):
    b = _units_iv(base, "base", owner)
    v = _units_iv(variant, "variant", owner)
    if b.shape != v.shape:
        raise fail("variant", f"an array of the shape of 'base' {b.shape}",
                   owner=owner, got=f"shape {v.shape}")
    for name, x in (("base", b), ("variant", v)):
        if binary and not np.isin(x, (0.0, 1.0)).all():
            bad = x[~np.isin(x, (0.0, 1.0))].flat[0]
            raise fail(name, "0/1 scores", bad, owner)
        if not binary and not ((x >= 0.0) & (x <= 1.0)).all():
            bad = x[~((x >= 0.0) & (x <= 1.0))].flat[0]
            raise fail(name, "scores in [0, 1] (fractions)", bad, owner)
    return b, v


def _tango_z(b, c, n, d0):
    """Tango's score statistic at ``delta = d0`` (arrays broadcast)."""
    w = b + c - d0 * (2.0 * n - c + b)
    q = (w + np.sqrt(np.maximum(w**2 + 8.0 * n * b * d0 * (1.0 - d0), 0.0))) / (4.0 * n)
    num = c - b - n * d0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = num / np.sqrt(n * (2.0 * q + d0 * (1.0 - d0)))
    # num == 0: the data sit at the null value (z = 0), also where the variance is 0.
    return np.where(num == 0, 0.0, z)


def _support(d):
    """Distinct deltas shared by the batch and each experiment's weights on them.

    Repeats give deltas on a grid (multiples of 1/runs), so the constrained MLE's
    root-finding works on a few values instead of n; without a short grid every
    question is its own support point (weight 1/n).
    """
    values, index = np.unique(d, return_inverse=True)
    n = d.shape[-1]
    if values.size >= n:
        return d, np.full(d.shape, 1.0 / n)
    rows = int(np.prod(d.shape[:-1], dtype=int))
    flat = index.reshape(rows, n) + values.size * np.arange(rows)[:, None]
    counts = np.bincount(flat.ravel(), minlength=rows * values.size)
    return values, counts.reshape(d.shape[:-1] + (values.size,)) / n


def _bounded_score_z(values, weights, est, d0):
    """Score statistic / sqrt(n) for ``E d = d0`` over distributions on [-1, 1]: the
    compiled bisection of :func:`protocols._claim_kernels.bounded_score_z`."""
    # imported on first use: numba (about 0.2 s) is paid by the claims on mean scores, not
    # by every command that imports this module
    from protocols._claim_kernels import bounded_score_z

    return bounded_score_z(values, weights, est, d0, _TILT_STEPS)


def _decreasing_root(f, target, shape):
    """``d0`` in [-1, 1] where the decreasing ``f(d0)`` crosses ``target`` (bisection)."""
    low, high = np.full(shape, -1.0), np.full(shape, 1.0)
    for _ in range(_BOUND_STEPS):
        mid = 0.5 * (low + high)
        up = f(mid) > target
        low, high = np.where(up, mid, low), np.where(up, high, mid)
    return 0.5 * (low + high)


def _score_claim(z_of, est, se, claim, margin, alpha, crit=None):
    """ClaimResult of a score statistic ``z_of(d0)`` that decreases in ``d0``.

    ``crit``: the critical values ``(c_low, c_high)`` of the tests the lower and upper bound
    invert (default both ``z_(1 - alpha)``); a p-value is read on the scale that puts
    ``alpha`` at its test's critical value.
    """
    shape = np.shape(est)
    z_alpha = stats.norm.isf(alpha)
    c_low, c_high = (z_alpha, z_alpha) if crit is None else crit
    lower_null = margin if claim == "superiority" else -margin
    p = stats.norm.sf(z_of(np.full(shape, lower_null)) * (z_alpha / c_low))
    if claim == "equivalence":
        p = np.maximum(p, stats.norm.cdf(z_of(np.full(shape, margin)) * (z_alpha / c_high)))
    lo = _decreasing_root(z_of, c_low, shape)
    hi = _decreasing_root(z_of, -c_high, shape)
    verdict = claim_verdict(claim, est, lo, hi, margin)
    return ClaimResult(claim, margin, alpha, np.asarray(est), np.asarray(se),
                       np.full(shape, np.inf), np.asarray(p), lo, hi, np.asarray(verdict))
