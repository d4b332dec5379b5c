"""``cluster_cr2``, ``cluster_cr1``, ``cluster_wild``: paired tests of fixed models on
clustered questions.

Design ``models_clustered``: two fixed models answer ``n`` questions grouped in ``G``
clusters (tasks, categories, passages) whose questions are correlated, so the clusters, not
the questions, are the independent units. Both protocols regress the per-question paired
differences on an intercept,

    d_q = mean_k variant[:, q] - mean_k base[:, q] = mu + u_q,

(the k runs of a model are measurement noise averaged within a question), estimate ``mu``
by OLS, i.e. the question-weighted mean ``mean_q d_q`` (every question counts once; large
clusters count more), and differ in the cluster-robust variance of that mean.

With an intercept only, ``X = 1``, ``X'X = N`` (``N = n`` questions) and the hat matrix is
``H = 11'/N``; its block on cluster ``g`` (``n_g`` questions) is ``H_gg = J_g / N`` with
``J_g`` the ``n_g x n_g`` matrix of ones. Writing ``e_q = d_q - mean(d)`` for the residuals
and ``S_g = sum_{q in g} e_q`` for their cluster sums:

* CR0 is ``sum_g S_g**2 / N**2``; CR1 (Stata's ``vce(cluster)``, statsmodels'
  ``cov_type='cluster'`` with ``use_correction=True``) multiplies it by
  ``G / (G - 1) * (N - 1) / (N - K)``, which is ``G / (G - 1)`` for ``K = 1``.
* CR2 (Bell & McCaffrey 2002; Pustejovsky & Tipton 2018) adjusts each cluster's residuals
  by ``A_g = (I - H_gg)**(-1/2)``. ``J_g`` has eigenvalue ``n_g`` on the vector of ones and
  0 on its complement, so ``I - J_g / N`` has eigenvalue ``1 - n_g / N`` on the ones and 1
  elsewhere, and ``A_g = I + ((1 - n_g / N)**(-1/2) - 1) J_g / n_g``: no eigen-decomposition
  is needed. Since ``1' A_g = (1 - n_g / N)**(-1/2) 1'``, the sandwich is::

      V_CR2 = sum_g S_g**2 / (1 - n_g / N) / N**2,

  unbiased when the errors are independent and homoskedastic (each term's expectation is
  ``sigma**2 n_g / N**2``).
* Bell–McCaffrey degrees of freedom (the Satterthwaite approximation of clubSandwich's
  ``coef_test(vcov="CR2", test="Satterthwaite")`` with a working identity covariance):
  ``V_CR2 = u' M u`` with ``M = sum_g p_g p_g'`` and ``p_g = (I - H)[:, g] A_g X_g
  (X'X)**-1 = (1 - n_g / N)**(-1/2) (1_g - (n_g / N) 1) / N``, so
  ``df = tr(P'P)**2 / tr((P'P)**2)`` with ``(P'P)_gh = w_g**(1/2) w_h**(1/2) (delta_gh n_g -
  n_g n_h / N) / N**2`` and ``w_g = 1 / (1 - n_g / N)``. Summing::

      tr(P'P) = 1 / N,
      tr((P'P)**2) = [sum_g w_g**2 n_g**2 (1 - 2 n_g / N) + (sum_g w_g n_g**2 / N)**2] / N**4,
      df = N**2 / [sum_g w_g**2 n_g**2 (1 - 2 n_g / N) + (sum_g w_g n_g**2 / N)**2],

  which is ``G - 1`` for equal clusters and smaller for unequal ones. It depends on the
  cluster sizes only, so it is computed once per batch.

The test is ``t = mean(d) / sqrt(V)``, two-sided, against Student t (CR2, BM df) or the
normal (CR1, as statsmodels' default ``use_t=False``); the CI is ``mean(d) +- q * sqrt(V)``.
``cluster_wild`` refers the CR1 t statistic to its wild cluster bootstrap distribution
instead (null imposed, Webb's six-point weights).

A dominant cluster: when one cluster holds most of the questions, the variance of the mean
is mostly that cluster's own random effect, and a cluster-robust variance can only see it
through the *contrast* of that cluster with the others: ``V_CR2`` then estimates about
``(1 - s)`` times the true variance (``s``: the largest cluster's share of the questions),
which no df correction makes up for. ``cluster_cr2`` refuses its verdict there
(:func:`dominance_check`, on the effective number of clusters of Carter, Schnepel &
Steigerwald 2017).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED
from evalcal_core.validate import check_choice, check_number

from .._base import (
    NEEDS_CLUSTERS,
    SEEDS_IGNORED,
    Protocol,
    check_draws,
    register,
)
from .._decisions import _no_variance_estimate, data_scale, t_decision, z_decision
from .._resample import CHUNK_ELEMENTS, TIE_RTOL, _chunks
from .._result import make_result

#: fewest effective clusters G*(0) (:func:`effective_clusters`) ``cluster_cr2`` gives a
#: verdict on. Calibrated on ``sim.decisions.clusters`` (n = 500, one cluster of share s, the
#: rest equal, 10 or 30 clusters; icc 0.15-0.5, sd_effect 2-4 logits; 4,000 null
#: experiments per cell): CR2 with IK df rejected at most 3.6% at alpha = 5% up to s = 0.85
#: (G* = 1.38) and 4.9% at s = 0.9 (G* = 1.23); with 10 clusters, icc 0.3-0.9, sd_effect 2
#: (2,000 per cell) 6.5-8.8% at s = 0.95 (G* = 1.11) and 15-17% at s = 0.98 (G* = 1.04).
#: 1.5 (s above about 0.81 refused) keeps a margin below the share where the level breaks;
#: a share of 0.5 has G* = 3.6-3.9, the generator's broken-stick sizes of 10-30 clusters
#: 6.4-14.6.
MIN_EFFECTIVE_CLUSTERS = 1.5

#: Webb's (2023) six-point distribution of wild-bootstrap weights, each with probability 1/6
WEBB_WEIGHTS = np.array([-np.sqrt(1.5), -1.0, -np.sqrt(0.5), np.sqrt(0.5), 1.0, np.sqrt(1.5)])


def cluster_sums(x, codes, n_clusters):
    """Sums of ``x`` over each cluster, along the last axis.

    Parameters
    ----------
    x : ndarray, shape (..., n)
    codes : ndarray of int, shape (n,)
        Cluster of each question, ``0 .. n_clusters - 1``, every code present.
    n_clusters : int

    Returns
    -------
    ndarray, shape (..., n_clusters)
    """
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(n_clusters))
    return np.add.reduceat(x[..., order], starts, axis=-1)


def cr2_intercept(d, codes, n_clusters):
    """Mean of ``d`` over its last axis, its CR2 variance and Bell–McCaffrey df.

    See the module docstring for the algebra (intercept-only regression, working identity
    covariance).

    Parameters
    ----------
    d : ndarray, shape (..., n)
        Per-question values (fraction).
    codes : ndarray of int, shape (n,)
        Cluster of each question, ``0 .. n_clusters - 1``; at least 2 clusters.
    n_clusters : int

    Returns
    -------
    estimate, variance : ndarray, shape (...)
        ``mean(d)`` and ``V_CR2`` (squared units of ``d``).
    df : float
        Bell–McCaffrey degrees of freedom (fixed by the cluster sizes).
    """
    n = d.shape[-1]
    sizes = np.bincount(codes, minlength=n_clusters).astype(float)
    f = sizes / n
    w = 1.0 / (1.0 - f)
    estimate = d.mean(axis=-1)
    sums = cluster_sums(d - estimate[..., None], codes, n_clusters)
    variance = (sums**2 * w).sum(axis=-1) / n**2
    spread = (w**2 * sizes**2 * (1.0 - 2.0 * f)).sum() + (w * sizes * f).sum() ** 2
    return estimate, variance, float(n**2 / spread)


def effective_clusters(sizes) -> float:
    """Effective number of clusters G*(0) of the mean (Carter, Schnepel & Steigerwald 2017).

    Carter, Schnepel & Steigerwald (2017, Rev. Econ. Stat. 99(4):698-709) measure how far
    unequal clusters are from ``G`` equal ones by ``G* = G / (1 + Gamma)``, with ``Gamma``
    the squared coefficient of variation of ``gamma_g = xi' (X'X)**-1 X_g' Omega_g X_g
    (X'X)**-1 xi`` over the clusters. For the mean (``X = 1``) with ``Omega_g = I`` (their
    rho = 0) ``gamma_g`` is proportional to ``n_g``, and ``G* = G mean(n)**2 / mean(n**2) =
    N**2 / sum_g n_g**2 = 1 / sum_g s_g**2`` (``s_g = n_g / N``, the cluster's share): ``G``
    for equal clusters, close to 1 when one cluster holds nearly every question. Their
    rho = 1 version, ``(sum n_g**2)**2 / sum n_g**4``, is not used: it is about 1.1 already
    when one cluster holds half the questions, where the test still holds its level.

    Parameters
    ----------
    sizes : array_like of int, shape (G,)
        Questions per cluster, all positive.

    Returns
    -------
    float
        In ``[1, G]``.
    """
    sizes = np.asarray(sizes, dtype=float)
    return float(sizes.sum() ** 2 / (sizes**2).sum())


def dominance_check(clusters, min_effective: float = MIN_EFFECTIVE_CLUSTERS
                    ) -> tuple[bool, str]:
    """Whether a cluster-robust test of the mean cannot be supported: one cluster dominates.

    Refuses when the effective number of clusters G*(0) (:func:`effective_clusters`) is
    below ``min_effective``. It depends on the cluster sizes only, so it is the same for
    every experiment of a batch (the clusters are fixed) and selects nothing by the data:
    the verdicts it lets through are a fixed set of designs, not a data-driven subset.

    Parameters
    ----------
    clusters : array_like of int, shape (n,)
        Cluster code of each question (any integers).
    min_effective : float, default :data:`MIN_EFFECTIVE_CLUSTERS`
        Fewest effective clusters a verdict is given on; at most 1 never refuses.

    Returns
    -------
    refuse : bool
    reason : str
        One line saying why (``""`` when not refused).
    """
    _, sizes = np.unique(np.asarray(clusters), return_counts=True)
    g_star = effective_clusters(sizes)
    if g_star >= min_effective:
        return False, ""
    share = sizes.max() / sizes.sum()
    return True, (f"one cluster holds {100 * share:.1f}% of the {sizes.sum():,} questions "
                  f"({g_star:.2f} effective clusters, G* < {min_effective:g}): the mean's "
                  f"variance is mostly that cluster's own effect, which a cluster-robust SE "
                  f"cannot estimate; no verdict")


def cr1_intercept(d, codes, n_clusters):
    """Mean of ``d`` and its CR1 variance ``G / (G - 1) * sum_g S_g**2 / N**2``.

    Equal to statsmodels' ``OLS(d, ones).fit(cov_type='cluster', cov_kwds={'groups':
    codes})`` (``use_correction=True``: ``G / (G - 1) * (N - 1) / (N - K)``, K = 1).
    """
    n = d.shape[-1]
    estimate = d.mean(axis=-1)
    sums = cluster_sums(d - estimate[..., None], codes, n_clusters)
    g = n_clusters
    return estimate, g / (g - 1) * (sums**2).sum(axis=-1) / n**2


@dataclass(frozen=True)
class _ClusterProtocol(Protocol):
    needs_questions = True
    needs_clusters = True
    paired = True
    reads_runs = False
    pitfall = "clusters of questions as the only noise, seeds ignored"
    pitfall_for = {METHODS_INDEPENDENT: SEEDS_IGNORED, MODELS: NEEDS_CLUSTERS}

    def decision_note(self, batch) -> str:
        return (f"{batch.n_clusters:,} clusters of questions are the units; the estimate is "
                f"the mean over questions")


def _df_matrices(sizes):
    """``P'P`` and ``P' B P`` of the intercept-only CR2 test (``B``: block ones by cluster).

    ``p_g = w_g**(1/2) (1_g - (n_g / N) 1) / N`` (module docstring); its sum over the
    questions of cluster ``c`` is ``a_gc = w_g**(1/2) (delta_gc n_g - n_g n_c / N) / N``, so
    ``(P'BP)_gh = sum_c a_gc a_hc``.
    """
    n = sizes.sum()
    root = np.sqrt(1.0 / (1.0 - sizes / n))
    core = np.diag(sizes) - np.outer(sizes, sizes) / n
    identity_part = np.outer(root, root) * core / n**2
    a = root[:, None] * core / n
    return identity_part, a @ a.T


def one_way_icc(d, codes, n_clusters):
    """Intra-cluster correlation of ``d`` by one-way ANOVA, truncated at 0.

    ``rho = s2_between / (s2_between + MS_within)`` with ``s2_between = max(MS_between -
    MS_within, 0) / n0`` and ``n0 = (N - sum_g n_g**2 / N) / (G - 1)`` (the unbalanced
    one-way random-effects estimator, e.g. Searle, Casella & McCulloch 1992, sec. 3.6).

    This is not the estimator of Imbens & Kolesár's reference implementation: R's
    ``dfadjust::dfadjustSE`` fits Moulton's (1986) model to the OLS residuals ``u``,
    ``rho_M = (sum_g S_g**2 - sum_q u_q**2) / (sum_g n_g**2 - N)`` (the mean within-cluster
    cross-product, a covariance) and ``sigma**2 = max(sum_q u_q**2 / N - rho_M, 0)``, with
    ``rho_M`` not truncated by default (``rho0 = FALSE``). The two give different df on
    small data sets (an outside audit: 1.46 against 1.65, 5.65 against 1.55); the truncated
    ANOVA is kept because it held the level better in this package's simulations.

    Returns
    -------
    ndarray, shape (...)
        In [0, 1]; 0 where the within-cluster mean square is 0 and the between one too.
    """
    n = d.shape[-1]
    sizes = np.bincount(codes, minlength=n_clusters).astype(float)
    means = cluster_sums(d, codes, n_clusters) / sizes
    grand = d.mean(axis=-1, keepdims=True)
    ms_between = (sizes * (means - grand) ** 2).sum(axis=-1) / (n_clusters - 1)
    ms_within = ((d - means[..., codes]) ** 2).sum(axis=-1) / max(n - n_clusters, 1)
    n0 = (n - (sizes**2).sum() / n) / (n_clusters - 1)
    between = np.maximum(ms_between - ms_within, 0.0) / n0
    total = between + ms_within
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, between / np.where(total > 0, total, 1.0), 0.0)


def ik_df(d, codes, n_clusters):
    """Imbens–Kolesár (2016) degrees of freedom of the CR2 t-test, per experiment.

    The Bell–McCaffrey df of :func:`cr2_intercept` assumes a working covariance of
    independent questions; when the clusters carry much of the variance (large, unequal
    clusters with an intra-cluster correlation) that df is too large and the test slightly
    liberal (``sim.design_check``: 5.5-6.0% at alpha = 5% with 20-50 clusters of 5,000
    questions at icc 0.3). Imbens & Kolesár take the working covariance of a random cluster
    effect, ``Omega = (1 - rho) I + rho B`` (``B``: ones within a cluster) with ``rho``
    estimated, and ``df = tr(P' Omega P)**2 / tr((P' Omega P)**2)``. With ``rho = 0`` it is
    the Bell–McCaffrey df. ``rho`` is the one-way ANOVA intra-cluster correlation truncated
    at 0 (:func:`one_way_icc`), not the Moulton estimator of R's ``dfadjust``: the df can
    differ from ``dfadjustSE(..., IK = TRUE)`` (see :func:`one_way_icc`).

    Returns
    -------
    ndarray, shape (...)
        At least 1.
    """
    sizes = np.bincount(codes, minlength=n_clusters).astype(float)
    m0, m1 = _df_matrices(sizes)
    rho = one_way_icc(d, codes, n_clusters)
    tr = (1.0 - rho) * np.trace(m0) + rho * np.trace(m1)
    tr2 = ((1.0 - rho) ** 2 * np.sum(m0 * m0.T) + 2.0 * rho * (1.0 - rho) * np.sum(m0 * m1.T)
           + rho**2 * np.sum(m1 * m1.T))
    return np.maximum(tr**2 / tr2, 1.0)


@register
@dataclass(frozen=True)
class ClusterCR2(_ClusterProtocol):
    """Cluster-robust paired t-test of fixed models: CR2 variance, small-sample df.

    Estimate: the mean over questions of ``d_q`` (variant minus baseline k-run means,
    fraction). SE: CR2 (bias-reduced linearization) of that mean, clusters given by
    ``evaluate(..., clusters=codes)``; t-test and CI on the Bell–McCaffrey degrees of
    freedom (module docstring). Holds its level with few clusters of unequal size, where
    CR1 with normal quantiles (``cluster_cr1``) does not: on 4,000 null experiments per
    layout (normal cluster and question effects on the delta, k = 2 repeats), it rejected
    4.0-5.2% at alpha = 5% with 5 clusters of 3 to 20 questions, 4.1-6.0% with 8 clusters
    of 2 to 40, 1.9-4.4% with 5 clusters of 5, 5, 5, 5, 40, 5.1-5.4% with 6 clusters of 10
    and 4.5-5.0% with 20 of 4.

    Parameters
    ----------
    df : {"ik", "bm"}, default "ik"
        Degrees of freedom: ``"ik"`` Imbens–Kolesár (:func:`ik_df`: Bell–McCaffrey under a
        random-cluster-effect working covariance with the estimated intra-cluster
        correlation), ``"bm"`` Bell–McCaffrey under independent questions (clubSandwich's
        ``coef_test(vcov="CR2", test="Satterthwaite")`` for ``lm``). ``"bm"`` was slightly
        liberal on large, unequal clusters with icc 0.3 (5.5-6.0% at 20-50 clusters of
        5,000 questions, ``sim.design_check``); ``"ik"`` held 5% there, conservatively with
        few dominant clusters. The IK ``rho`` is the one-way ANOVA estimate truncated at 0
        (:func:`one_way_icc`), not ``dfadjust``'s Moulton estimate.
    min_effective_clusters : float, default 1.5
        No verdict (p and CI NaN, ``degenerate``, not significant; the reason in
        :meth:`decision_note`) when the effective number of clusters G*(0) of Carter,
        Schnepel & Steigerwald (2017) is below it (:func:`dominance_check`): one cluster
        holds most of the questions (above about 81% at 1.5) and the CR2 SE misses most of
        the mean's variance. Without this rule, with one cluster of 500 questions holding
        95% (98%) of them, the test rejected 6.5-8.8% (15-17%) at alpha = 5%
        (:data:`MIN_EFFECTIVE_CLUSTERS`). At most 1: never refuse.
    """

    name = "cluster_cr2"
    summary = "cluster-robust paired t-test: CR2 SE, Imbens-Kolesar df"
    valid_for = frozenset({MODELS_CLUSTERED})
    df: str = "ik"
    min_effective_clusters: float = MIN_EFFECTIVE_CLUSTERS

    def __post_init__(self):
        check_choice(self.df, "df", ("ik", "bm"), self.name)
        check_number(self.min_effective_clusters, "min_effective_clusters", self.name, low=0)

    def decision_note(self, batch) -> str:
        return "; ".join(filter(None, [super().decision_note(batch), self.refusal(batch)]))

    def refusal(self, batch) -> str:
        """Why no verdict is given on ``batch`` (one cluster dominates), ``""`` where one
        is: what a comparison's row refers to instead of "no variance estimate"."""
        return dominance_check(batch.clusters, self.min_effective_clusters)[1]

    def _evaluate(self, batch, alpha, rng):
        d = batch.question_deltas
        refuse, _ = dominance_check(batch.clusters, self.min_effective_clusters)
        if refuse:
            # No test the data can support: the convention of "no variance estimate".
            nan = np.full(d.shape[:-1], np.nan)
            return make_result(d.mean(axis=-1), nan, nan, nan, np.zeros(nan.shape, bool))
        estimate, variance, df = cr2_intercept(d, batch.clusters, batch.n_clusters)
        if self.df == "ik":
            df = ik_df(d, batch.clusters, batch.n_clusters)
        scale = data_scale(batch.question_base, batch.question_variant)
        p, lo, hi, sig = t_decision(estimate, np.sqrt(variance), df, alpha, scale)
        return make_result(estimate, lo, hi, p, sig)


@register
@dataclass(frozen=True)
class ClusterCR1(_ClusterProtocol):
    """Cluster-robust paired z-test with the plain CR1 variance (Stata's small-G factor).

    As ``cluster_cr2`` but with ``V = G / (G - 1) * sum_g S_g**2 / N**2`` (statsmodels'
    ``cov_type='cluster'``) and normal quantiles: it over-rejects with few clusters, the
    more so the more unequal their sizes. In the layouts of ``cluster_cr2``'s docstring it
    rejected 15-20% (5 clusters of 3 to 20), 13-18% (8 of 2 to 40), 20-40% (5, 5, 5, 5,
    40), 11% (6 of 10) and 6-7% (20 of 4).
    """

    name = "cluster_cr1"
    summary = "cluster-robust paired z-test: CR1 SE, normal quantiles"
    valid_for = frozenset()
    pitfall_for = {**_ClusterProtocol.pitfall_for,
                   MODELS_CLUSTERED: "CR1 with normal quantiles over-rejects with few "
                                     "clusters"}

    def _evaluate(self, batch, alpha, rng):
        estimate, variance = cr1_intercept(batch.question_deltas, batch.clusters,
                                           batch.n_clusters)
        scale = data_scale(batch.question_base, batch.question_variant)
        p, lo, hi, sig = z_decision(estimate, np.sqrt(variance), alpha, scale)
        return make_result(estimate, lo, hi, p, sig)


def _t_from_cluster_totals(totals, sizes):
    """``mean / sqrt(sum_g S_g**2)`` from cluster totals ``T_g`` of the per-question values
    (``S_g = T_g - n_g mean``): the CR0/CR1 t statistic up to a constant factor."""
    n = sizes.sum()
    mean = totals.sum(axis=-1) / n
    spread = ((totals - sizes * mean[..., None]) ** 2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return mean / np.sqrt(spread)


def webb_weight_blocks(n_clusters, n_resamples, rng):
    """Wild-bootstrap weights in blocks of shape ``(b, G)`` (at most ``CHUNK_ELEMENTS``
    numbers each), and whether they enumerate all ``6**G`` weight vectors.

    Every weight vector is enumerated (each with probability ``6**-G``, no Monte Carlo
    error) while ``6**G <= n_resamples``; otherwise ``n_resamples`` vectors are drawn, block
    after block from ``rng`` (the stream does not depend on the block size's use).

    Returns
    -------
    blocks : iterator of ndarray, shape (b, G)
    exact : bool
    total : int
        Weight vectors in all blocks.
    """
    exact = 6**n_clusters <= n_resamples
    total = 6**n_clusters if exact else n_resamples
    step = max(1, CHUNK_ELEMENTS // n_clusters)

    def blocks():
        for start in range(0, total, step):
            stop = min(start + step, total)
            if exact:
                index = np.stack(np.unravel_index(np.arange(start, stop), (6,) * n_clusters),
                                 axis=-1)
            else:
                index = rng.integers(0, 6, size=(stop - start, n_clusters))
            yield WEBB_WEIGHTS[index]

    return blocks(), exact, total


@register
@dataclass(frozen=True)
class ClusterWild(_ClusterProtocol):
    """Wild cluster bootstrap-t of the mean per-question delta, null imposed (WCR).

    Under H0 (mean delta 0) the restricted residuals are the deltas ``d_q`` themselves;
    each bootstrap sample multiplies every question of cluster ``g`` by one weight ``w_g``
    from Webb's six-point distribution (``+-sqrt(1/2), +-1, +-sqrt(3/2)``, which with few
    clusters gives many more distinct samples than Rademacher's ``2**G``), recomputes the
    CR1 t statistic and counts ``|t*| >= |t|``: ``p = (1 + count) / (1 + B)``, or the exact
    proportion when all ``6**G`` weight vectors are enumerated (``6**G <= n_resamples``:
    G <= 5 by default). Cameron, Gelbach & Miller (2008); Webb (2023). A p-value only, no
    CI. All in cluster totals: ``O(B G)`` per experiment, whatever n. The same weight draws
    serve every experiment of a batch.

    Labelled a pitfall for clustered questions, on measurement: 4,000 null experiments per
    layout (cluster effect and question effect of equal sd, k = 2), it rejected 6.1-6.3% at
    alpha = 5% with 6 equal clusters of 10 and 0.3-0.5% with 3 clusters of 10, where
    ``cluster_cr2`` rejected 5.1-5.3% and 4.5-5.0%; with 5 unequal clusters (3 to 20
    questions) 4.4-5.8% against 4.0-5.2%.

    Parameters
    ----------
    n_resamples : int, default 9999
        Bootstrap samples B (alias ``B``), at most 10,000,000.
    """

    n_resamples: int = 9999

    name = "cluster_wild"
    summary = "wild cluster bootstrap-t (Webb weights, null imposed)"
    stochastic = True
    valid_for = frozenset()
    pitfall_for = {**_ClusterProtocol.pitfall_for,
                   MODELS_CLUSTERED: "off its level with few clusters (6.3% at 5% with 6, "
                                     "0.4% with 3); use cluster_cr2"}
    aliases = {"B": "n_resamples"}

    def __post_init__(self):
        check_draws(self.n_resamples, "n_resamples", self.name, low=2)

    def _evaluate(self, batch, alpha, rng):
        d = batch.question_deltas
        g = batch.n_clusters
        sizes = np.bincount(batch.clusters, minlength=g).astype(float)
        totals = cluster_sums(d, batch.clusters, g)
        estimate = d.mean(axis=-1)
        t = _t_from_cluster_totals(totals, sizes)
        blocks, exact, b = webb_weight_blocks(g, self.n_resamples, rng)
        flat_totals = totals.reshape(-1, g)
        flat_t = np.abs(t).reshape(-1)
        count = np.zeros(flat_t.shape[0])
        # Memory is bounded by blocks of weights times chunks of experiments, whatever B.
        for weights in blocks:
            for sl in _chunks(flat_t.shape[0], weights.shape[0] * g):
                t_star = _t_from_cluster_totals(flat_totals[sl, None, :] * weights, sizes)
                # ties (the identity weights reproduce t) count, rounding aside
                count[sl] += (np.abs(t_star) >= flat_t[sl, None] * (1.0 - TIE_RTOL)).sum(-1)
        count = count.reshape(estimate.shape)
        p = count / b if exact else (1.0 + count) / (1.0 + b)
        p = np.minimum(p, 1.0)
        # No variance estimate (the cluster totals' spread is rounding): as the t-tests.
        se = np.sqrt(cr1_intercept(d, batch.clusters, g)[1])
        scale = data_scale(batch.question_base, batch.question_variant)
        p, _ = _no_variance_estimate(estimate, se, p, np.zeros_like(p), scale)
        with np.errstate(invalid="ignore"):
            return make_result(estimate, p_value=p, significant=p < alpha)
