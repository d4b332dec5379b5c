"""``paired_two_level``: a t-test on the mean delta with seeds and questions both random."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import METHODS_INDEPENDENT, METHODS_PAIRED, MODELS, MODELS_CLUSTERED

from .._base import REPEATS_NOT_SEEDS, UNPAIRED_SEEDS, Protocol, register
from .._decisions import data_scale, t_decision
from .._resample import TIE_RTOL
from .._result import make_result
from .welch_t import DF_CONFIDENCE, upper_variance_bound


def two_level_variance(deltas):
    """Variance of the grand mean delta under the crossed random-effects model, and its df.

    Model (two-way crossed, no replication), for the delta ``D[s, q] = v[s, q] - b[s, q]``
    of seed ``s`` (k seeds, paired across arms) on question ``q`` (n questions)::

        D[s, q] = mu + a[s] + c[q] + e[s, q],
        a ~ (0, sigma_a**2),  c ~ (0, sigma_c**2),  e ~ (0, sigma_e**2), all independent,

    so ``Var(mean D) = sigma_a**2 / k + sigma_c**2 / n + sigma_e**2 / (k n)``. The two-way
    ANOVA mean squares have expectations ``E[MS_seed] = sigma_e**2 + n sigma_a**2`` (df
    k - 1; from the per-seed deltas ``d_s = mean_q D[s, q]``), ``E[MS_question] =
    sigma_e**2 + k sigma_c**2`` (df n - 1; from the per-question deltas averaged over the
    seeds) and ``E[MS_resid] = sigma_e**2`` (df (k - 1)(n - 1)). With the method-of-moments
    components ``sigma_a**2 = (MS_seed - MS_resid) / n``, ``sigma_c**2 = max(MS_question -
    MS_resid, 0) / k`` and ``sigma_e**2 = MS_resid``::

        V = sigma_a**2 / k + sigma_c**2 / n + sigma_e**2 / (k n)
          = [MS_seed + max(MS_question - MS_resid, 0)] / (k n)
          = var(d_s) / k + sigma_c**2 / n

    i.e. ``paired_t``'s variance (seeds, with the questions held fixed) plus the sampling
    variance of the question set. Only the question component is truncated at 0. The seed
    component is not: it enters ``V`` only through ``MS_seed >= 0``, whose scaled
    chi-square law on k - 1 df is what keeps the test valid at small k. (Truncating
    ``sigma_a**2`` too, i.e. flooring ``MS_seed`` at ``MS_resid``, swaps k - 1 df for
    (k - 1)(n - 1) exactly when the seeds happen to agree, and rejected a true null in 9.7%
    of experiments at k = 2 and 5.7% at k = 3 with ``n sigma_a**2 = 8 sigma_e**2``.)
    Without truncation ``V`` is unbiased.

    Degrees of freedom: Satterthwaite (1946) for ``L = MS_seed + w (MS_question -
    MS_resid)`` (``w`` = 1 if the question component is kept, else 0),
    ``df = L**2 / [MS_seed**2 / (k - 1) + w (MS_question**2 / (n - 1) + MS_resid**2 /
    ((k - 1)(n - 1)))]``. Without a question component (``w = 0``) this is exactly
    ``paired_t`` (k - 1 df). The negative coefficient of ``MS_resid`` lets the plug-in df
    fall toward 0 (a question component barely above 0 is a small difference of two large
    noisy mean squares); it is raised to :func:`min_two_level_df`, the least df any
    parameter value gives.

    That plug-in df errs together with ``V`` where a mean square with few df matters: a
    question set that happens to agree gives a small ``MS_question``, hence a small ``V``
    *and* a df drawn toward the seeds' k - 1 (or, below ``MS_resid``, no question
    component at all and k - 1 df); likewise a small ``MS_seed`` with few seeds. With 4-6
    questions and 20-40 seeds that rejected a true null in 5.4-6.3% of experiments at
    alpha = 5% (worst with a question component that dominates ``V`` beside a seed
    component). So the df is also computed with ``MS_question``, then ``MS_seed``, at its
    one-sided 75% upper confidence bound
    (:func:`protocols.methods.welch_t.upper_variance_bound`: ``MS (m) / chi2.ppf(0.25,
    m)`` on m df; the question component kept when its bound exceeds ``MS_resid``), and the
    least of the three df is used (the rule of :func:`protocols.methods.welch_t.welch_df`);
    ``V`` itself is unchanged. The cost in power vanishes as k and n grow (each bound tends
    to its mean square). Sizes: :mod:`sim.decisions.two_level` and ``docs/protocols.md``.

    Parameters
    ----------
    deltas : ndarray, shape (..., k, n)
        Paired deltas, k >= 2 and n >= 2.

    Returns
    -------
    variance, df, seed_variance : ndarray, shape (...)
        ``V`` (squared units of the deltas), its Satterthwaite degrees of freedom, at least
        :func:`min_two_level_df` (NaN where every mean square is 0), and the seed part
        ``MS_seed / (k n) = var(d_s) / k`` (``paired_t``'s squared SE).
    """
    k, n = deltas.shape[-2:]
    grand = deltas.mean(axis=(-2, -1), keepdims=True)
    seed_means = deltas.mean(axis=-1, keepdims=True)
    question_means = deltas.mean(axis=-2, keepdims=True)
    ss_s = n * ((seed_means - grand) ** 2).sum(axis=(-2, -1))
    ss_q = k * ((question_means - grand) ** 2).sum(axis=(-2, -1))
    resid = deltas - seed_means - question_means + grand
    return _from_sums_of_squares(ss_s, ss_q, (resid**2).sum(axis=(-2, -1)), k, n)


#: largest k * n whose sums-of-squares numerators (<= (k n)**3) fit in int64
MAX_EXACT_KN = 2_000_000


def two_level_variance_binary(seed_deltas, question_delta_counts, seed_discordant, n):
    """:func:`two_level_variance` of 0/1 scores from counts, without the ``(k, n)`` deltas.

    For 0/1 scores ``D**2 = |v - b|``, so the total sum of squares is the number of
    discordant (seed, question) pairs less ``k n mean**2``; the residual sum of squares is
    what the seed and question sums of squares leave of it (the two-way ANOVA identity).
    The sums of squares are formed as exact int64 numerators over ``(k n)**2``, which holds
    while ``k n <= 2,000,000`` (:data:`MAX_EXACT_KN`; the caller uses the array path above).

    Parameters
    ----------
    seed_deltas : ndarray, shape (..., k)
        Per-seed mean deltas (fraction).
    question_delta_counts : ndarray of int, shape (..., n)
        Variant minus baseline correct counts per question (over the k seeds).
    seed_discordant : ndarray of int, shape (..., k)
        Questions on which each seed's arms differ.
    n : int
        Questions.

    Returns
    -------
    variance, df, seed_variance : ndarray, shape (...)
    """
    k = seed_deltas.shape[-1]
    # Exact integer numerators (every quantity is a multiple of 1/(k n)), so that a sum of
    # squares that is 0 is exactly 0: a rounding residue would pose as a tiny SE.
    a = np.rint(np.asarray(seed_deltas) * n).astype(np.int64)   # per-seed count deltas
    total = a.sum(axis=-1, keepdims=True)
    c = np.asarray(question_delta_counts, dtype=np.int64)
    n_s = ((k * a - total) ** 2).sum(axis=-1)
    n_q = ((n * c - total) ** 2).sum(axis=-1)
    total = total[..., 0]
    n_e = (k * n) * ((k * n) * np.asarray(seed_discordant).sum(axis=-1) - total**2) \
        - n * n_s - k * n_q
    return _from_sums_of_squares(n_s / (n * k**2), n_q / (k * n**2), n_e / (k * n) ** 2, k, n)


def _satterthwaite(ms_s, ms_q, ms_e, df_s, df_q, df_e):
    """``L = MS_seed + w (MS_question - MS_resid)`` and its plug-in Satterthwaite df."""
    # A tie ms_q = ms_e (common on lattice data) drops the question component whichever way
    # rounding leans, so the count and array paths agree (TIE_RTOL: rounding only).
    keep_q = (ms_q > ms_e * (1.0 + TIE_RTOL)).astype(float)
    combo = ms_s + keep_q * (ms_q - ms_e)
    spread = ms_s**2 / df_s + keep_q * (ms_q**2 / df_q + ms_e**2 / df_e)
    with np.errstate(divide="ignore", invalid="ignore"):
        return combo, combo**2 / spread


def _from_sums_of_squares(ss_s, ss_q, ss_e, k, n):
    df_s, df_q, df_e = k - 1, n - 1, (k - 1) * (n - 1)
    ms_s, ms_q, ms_e = ss_s / df_s, ss_q / df_q, ss_e / df_e
    combo, df = _satterthwaite(ms_s, ms_q, ms_e, df_s, df_q, df_e)
    # The df again with the question, then the seed, mean square at its upper bound (see
    # two_level_variance): lower exactly where a small mean square made V and the plug-in
    # df err the same way. np.minimum keeps a 0/0 NaN.
    _, df_q_high = _satterthwaite(ms_s, upper_variance_bound(ms_q, df_q, DF_CONFIDENCE), ms_e,
                                  df_s, df_q, df_e)
    _, df_s_high = _satterthwaite(upper_variance_bound(ms_s, df_s, DF_CONFIDENCE), ms_q, ms_e,
                                  df_s, df_q, df_e)
    df = np.minimum(df, np.minimum(df_q_high, df_s_high))
    # The plug-in df falls toward 0 where ms_q barely exceeds ms_e (the negative term makes
    # the spread large and the combination small: df 0.03 and a CI of +-2e39 on seeds that
    # agree within 1 pp). No parameter value of the model has a df that low: project it
    # onto the model's range (see min_two_level_df). np.maximum keeps a 0/0 NaN.
    df = np.maximum(df, min_two_level_df(k, n))
    return combo / (k * n), df, ms_s / (k * n)


def min_two_level_df(k, n):
    """Smallest Satterthwaite df of :func:`two_level_variance` that the model allows.

    With ``A = E[MS_seed] = sigma_e**2 + n sigma_a**2``, ``B = E[MS_question] = sigma_e**2
    + k sigma_c**2`` and ``sigma_e**2 = 1`` (df is scale-free), the population df of ``L =
    MS_seed + MS_question - MS_resid`` is ``(A + B - 1)**2 / (A**2 / a + B**2 / b +
    1 / (a b))`` with ``a = k - 1``, ``b = n - 1``. Writing ``A = 1 + x``, ``B = 1 + y``
    (``x, y >= 0``), ``(a + b + 1)(1 + x + y)**2 - [b (1 + x)**2 + a (1 + y)**2 + 1] =
    2 (a + 1) x + 2 (b + 1) y + (a + 1) x**2 + (b + 1) y**2 + 2 (a + b + 1) x y >= 0``,
    so the df is at least ``a b / (a + b + 1)``, attained at ``sigma_a = sigma_c = 0``.
    (Without the question component the df is ``k - 1``, above this bound.) A plug-in df
    below it estimates something no parameter value has; raising it to the bound moves
    the estimate toward every possible truth and only widens the CI.

    Parameters
    ----------
    k, n : int
        Seeds and questions (k, n >= 2).

    Returns
    -------
    float
        ``(k - 1)(n - 1) / (n + k - 1)``, just below ``k - 1`` for ``n >> k``.
    """
    return (k - 1) * (n - 1) / (n + k - 1)


@register
@dataclass(frozen=True)
class PairedTwoLevel(Protocol):
    """t-test on the mean delta with seeds *and* questions as random effects (paired arms).

    The honest test for per-question scores from several seeds: the per-question protocols
    (``paired_t_questions``, ``paired_question_bootstrap``, ``mcnemar``) count only the
    questions as noise and reject a true null far too often when seeds differ; ``paired_t``
    on per-seed deltas counts only the seeds (valid, but blind to how precisely n questions
    pin each seed's delta down, and blind to the sampling of the questions). Estimate: the
    grand mean of ``D[s, q] = v[s, q] - b[s, q]`` (= the mean per-seed delta). SE and
    degrees of freedom: :func:`two_level_variance` (crossed random-effects model, ANOVA
    method-of-moments components, Satterthwaite df). CI ``estimate +- t_{1-alpha/2, df} SE``.
    Its power is at most ``paired_t``'s, which it requires to reject: without assuming
    that seeds do not matter, k seeds cannot tell a seed variance of 0 from one of the size
    of the within-seed question noise. :mod:`sim.seed_power_bound` computes how little any
    test valid at every seed variance can gain over ``paired_t`` at seed variance 0. Where
    ``paired_t`` has no variance estimate (per-seed deltas equal up to rounding, e.g. every
    seed answers every question alike) neither has this protocol: p and CI NaN,
    ``degenerate``, not significant (the question component alone would give a tiny p
    from k copies of one seed).
    """

    name = "paired_two_level"
    summary = "t-test on the mean delta, seed and question variance components"
    min_k = 2
    needs_questions = True
    #: With 2 or 3 questions the question component has 1-2 df and is dropped whenever
    #: its mean square falls below the residual's: false-positive rate 11-13% at n = 2 and
    #: 5.5-6% at n = 3 with a question component (``python -m sim.decision_grid
    #: --families two_level``); from n = 4 on it holds its level.
    min_n = 4
    paired = True
    valid_for = frozenset({METHODS_PAIRED})
    pitfall_for = {METHODS_INDEPENDENT: UNPAIRED_SEEDS, MODELS: REPEATS_NOT_SEEDS,
                   MODELS_CLUSTERED: REPEATS_NOT_SEEDS}

    def _evaluate(self, batch, alpha, rng):
        if batch.binary and batch.k * batch.n <= MAX_EXACT_KN:
            # From counts the batch shares with the other protocols: no (k, n) pass.
            variance, df, seed_variance = two_level_variance_binary(
                batch.seed_deltas, batch.correct_deltas,
                batch.seed_discordant, batch.n)
        else:
            variance, df, seed_variance = two_level_variance(
                np.subtract(batch.variant, batch.base, dtype=float))
        estimate = batch.seed_deltas.mean(axis=-1)
        scale = data_scale(batch.seed_base, batch.seed_variant)
        p, lo, hi, _ = t_decision(estimate, np.sqrt(variance), df, alpha, scale)
        p_seed, lo_seed, hi_seed, _ = t_decision(estimate, np.sqrt(seed_variance),
                                                 batch.k - 1, alpha, scale)
        # Both tests must reject. Without paired_t's variance estimate (the seeds agree up
        # to rounding) there is none: the two-level variance alone would then rest on k
        # copies of one seed's questions.
        p = np.where(np.isnan(p_seed), np.nan, np.fmax(p, p_seed))
        lo = np.where(np.isnan(p_seed), np.nan, np.fmin(lo, lo_seed))
        hi = np.where(np.isnan(p_seed), np.nan, np.fmax(hi, hi_seed))
        with np.errstate(invalid="ignore"):
            return make_result(estimate, lo, hi, p, p < alpha)
