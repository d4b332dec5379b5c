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

A gate maps the verdict to an exit status with :data:`EXIT_STATUS`: 0 the claim is shown,
1 it is refuted (the CI lies entirely on the wrong side: for non-inferiority a regression
larger than the margin is shown), 3 inconclusive (2 is a usage error, as for every
command of this project).

A zero standard error (no variance estimate) gives p = NaN and CI NaN: inconclusive, as
in :mod:`protocols._decisions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evalcal_core.validate import check_alpha, check_choice, check_number, fail

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
        raise ValueError(
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
    """Claim on unpaired per-seed metrics, Welch t with Welch–Satterthwaite df.

    Equivalence p equals ``ttost_ind(variant, base, -margin, margin,
    usevar="unequal")[0]``.

    Parameters
    ----------
    variant : ndarray, shape (..., k_v)
    base : ndarray, shape (..., k_b)
    """
    v = _units_iv(variant, "variant", "welch_claim")
    b = _units_iv(base, "base", "welch_claim")
    vv = v.var(axis=-1, ddof=1) / v.shape[-1]
    vb = b.var(axis=-1, ddof=1) / b.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (vv + vb) ** 2 / (vv**2 / (v.shape[-1] - 1) + vb**2 / (b.shape[-1] - 1))
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
                   f"shape {x.shape}", owner)
    return x
