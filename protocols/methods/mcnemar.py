"""``mcnemar``: McNemar's test on the per-question outcomes of seed 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from evalcal_core.designs import METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED
from evalcal_core.validate import check_bool, check_choice, fail

from .._base import CLUSTERS_IGNORED, SEEDS_IGNORED, Protocol, register
from .._result import make_result

#: with ``exact=None`` the binomial test is used up to this many discordant questions
EXACT_MAX_DISCORDANT = 25

#: the intervals on the difference: the default ``bonferroni`` has guaranteed coverage and
#: agrees with the printed verdict; ``matched`` (Newcombe's, cut at the verdict) is the old one
CI_METHODS = ("bonferroni", "matched", "newcombe", "wald")

#: share of ``alpha`` the ``bonferroni`` interval spends on the discordance rate; the rest
#: goes to the conditional split of the discordant questions (see
#: :func:`bonferroni_paired_interval` for why a half)
DISCORDANCE_SHARE = 0.5


def wilson_interval(x, n, z):
    """Wilson score interval of a binomial proportion ``x / n`` (arrays), ``(low, high)``."""
    p = x / n
    centre = (x + z**2 / 2.0) / (n + z**2)
    half = z * np.sqrt(x * (n - x) / n + z**2 / 4.0) / (n + z**2)
    # The interval contains p; clip rounding so the square-and-add terms are >= 0.
    return np.minimum(centre - half, p), np.maximum(centre + half, p)


def newcombe_paired_interval(a, b, c, d, alpha):
    """Newcombe's (1998) square-and-add score interval for a difference of paired proportions.

    Method 10 of Newcombe, "Improved confidence intervals for the difference between binomial
    proportions based on paired data", *Stat. Med.* 17:2635-2650 (1998), as Fagerland,
    Lydersen & Laake, *Statistical Analysis of Contingency Tables* (2017, Sec. 8.5) state
    it. The difference is ``p1 - p2`` with ``p1 = (a + c) / N`` (the variant's accuracy) and
    ``p2 = (a + b) / N`` (the baseline's), ``N = a + b + c + d``; ``(l_i, u_i)`` are their
    Wilson intervals and ``psi`` the correlation of the two estimates, from
    ``A = a d - b c``: ``(A - N / 2) / sqrt(prod of margins)`` if ``A > N / 2``, 0 if
    ``0 <= A <= N / 2``, ``A / sqrt(...)`` if ``A < 0`` (0 when a margin is 0)::

        L = D - sqrt((p1 - l1)**2 + (u2 - p2)**2 - 2 psi (p1 - l1)(u2 - p2))
        U = D + sqrt((p2 - l2)**2 + (u1 - p1)**2 - 2 psi (p2 - l2)(u1 - p1))

    Parameters
    ----------
    a, b, c, d : ndarray of int
        Questions both arms get right; baseline only; variant only; neither.
    alpha : float

    Returns
    -------
    low, high : ndarray
        Fractions; within [-1, 1].
    """
    a, b, c, d = (np.asarray(x, dtype=float) for x in (a, b, c, d))
    n = a + b + c + d
    z = special.ndtri(1.0 - alpha / 2.0)
    p1, p2 = (a + c) / n, (a + b) / n
    l1, u1 = wilson_interval(a + c, n, z)
    l2, u2 = wilson_interval(a + b, n, z)
    margins = (a + c) * (b + d) * (a + b) * (c + d)
    cross = a * d - b * c
    numerator = np.where(cross > n / 2.0, cross - n / 2.0, np.where(cross < 0, cross, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        psi = np.where(margins > 0, numerator / np.sqrt(margins), 0.0)
    estimate = p1 - p2
    down = (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2.0 * psi * (p1 - l1) * (u2 - p2)
    up = (p2 - l2) ** 2 + (u1 - p1) ** 2 - 2.0 * psi * (p2 - l2) * (u1 - p1)
    low = np.maximum(estimate - np.sqrt(np.maximum(down, 0.0)), -1.0)
    high = np.minimum(estimate + np.sqrt(np.maximum(up, 0.0)), 1.0)
    return low, high


def mcnemar_exact_p(b, c):
    """Two-sided exact McNemar p: ``min(1, 2 * Binom(b + c, 1/2).cdf(min(b, c)))``.

    As ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``; ``b + c = 0``
    gives 1.
    """
    return np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5))


def clopper_pearson(x, m, alpha):
    """Two-sided Clopper-Pearson interval of a binomial proportion ``x / m`` (arrays).

    Each tail has probability at most ``alpha / 2`` for every true proportion; ``m = 0``
    gives ``(0, 1)``.

    Returns
    -------
    low, high : ndarray
        Fractions in [0, 1].
    """
    x, m = np.asarray(x, dtype=float), np.asarray(m, dtype=float)
    # The beta quantiles; the ends at x = 0 and x = m are 0 and 1 (the max() only keeps the
    # unused branch of np.where finite).
    low = np.where(x > 0, stats.beta.ppf(alpha / 2.0, np.maximum(x, 1.0), m - x + 1.0), 0.0)
    high = np.where(x < m, stats.beta.ppf(1.0 - alpha / 2.0, x + 1.0, np.maximum(m - x, 1.0)),
                    1.0)
    return low, high


def conditional_interval(b, c, alpha, exact):
    """Interval on ``r = pi_c / (pi_b + pi_c)`` given the ``b + c`` discordant questions.

    It inverts the conditional test the verdict uses: Clopper-Pearson where ``exact`` (it
    excludes 1/2 exactly when :func:`mcnemar_exact_p` < ``alpha``), the Wilson score
    interval otherwise (it excludes 1/2 exactly when the uncorrected chi-square p <
    ``alpha``, and so whenever the continuity-corrected one is). ``b + c = 0`` gives
    ``(0, 1)``.

    Parameters
    ----------
    b, c : ndarray of int
        Discordant counts: baseline only right, variant only right.
    alpha : float
    exact : ndarray of bool
        Per table: whether its verdict is the exact binomial test.

    Returns
    -------
    low, high : ndarray
        Fractions in [0, 1].
    """
    b, c = np.asarray(b, dtype=float), np.asarray(c, dtype=float)
    m = b + c
    safe_m = np.maximum(m, 1.0)
    cp_low, cp_high = clopper_pearson(c, m, alpha)
    w_low, w_high = wilson_interval(c, safe_m, special.ndtri(1.0 - alpha / 2.0))
    low, high = np.where(exact, cp_low, w_low), np.where(exact, cp_high, w_high)
    return np.where(m > 0, low, 0.0), np.where(m > 0, high, 1.0)


def matched_interval(a, b, c, d, alpha, p, exact):
    """Newcombe's interval made to agree with the McNemar verdict ``p < alpha`` beside it.

    The exact McNemar test conditions on the ``b + c`` discordant questions; Newcombe's
    interval (:func:`newcombe_paired_interval`) is unconditional, so the two disagree on a
    few tables (1-5%: b = 0, c = 5 of n = 20 has exact p = 0.0625 and Newcombe interval
    [+0.89, +18.67] pp). Mapping the conditional Clopper-Pearson interval of ``r = c / (b +
    c)`` to the difference, ``(2 r - 1)(b + c) / n``, is not a remedy: it treats ``b + c``
    as fixed, so it is narrower than the difference's sampling law and undercovers away from
    0. Instead this interval inverts a family of tests: the verdict's own test at
    ``theta = 0`` and Newcombe's at every ``theta != 0``. Hence:

    * the test keeps 0 (p >= alpha) but Newcombe excludes it: the near bound moves to 0
      (only wider, so coverage is never below Newcombe's);
    * the test rejects but Newcombe holds 0: the near bound moves to the conditional bound
      mapped to the difference (:func:`conditional_interval`), on the estimate's side of 0.
      This drops the sliver between Newcombe's bound and it, the one place where coverage
      can fall below Newcombe's. By exact enumeration of all tables it never happens with
      the exact test for n <= 40 at alpha in {0.05, 0.01, 0.001}; at n = 100, alpha = 0.001
      (116 tables) it costs at most 1.2e-4 of coverage over 231 cells with theta near 0.

    Coverage at ``theta = 0`` is the test's: at least ``1 - alpha`` for the exact test.

    Parameters
    ----------
    a, b, c, d : ndarray of int
        Questions both arms get right; baseline only; variant only; neither.
    alpha : float
    p : ndarray of float
        The verdict's two-sided p-value per table.
    exact : ndarray of bool
        Per table: whether ``p`` is the exact binomial test (else chi-square).

    Returns
    -------
    low, high : ndarray
        Fractions within [-1, 1]; 0 lies inside exactly when ``p >= alpha``.
    """
    a, b, c, d = (np.asarray(x, dtype=float) for x in (a, b, c, d))
    n = a + b + c + d
    low, high = newcombe_paired_interval(a, b, c, d, alpha)
    keep = ~(np.asarray(p) < alpha)
    excludes = (low > 0.0) | (high < 0.0)
    widen = keep & excludes
    low, high = np.where(widen, np.minimum(low, 0.0), low), np.where(widen, np.maximum(high, 0.0),
                                                                      high)
    r_low, r_high = conditional_interval(b, c, alpha, exact)
    m = b + c
    cut = ~keep & ~excludes
    # (2 r - 1) m / n lies between 0 and the estimate (c - b) / n, so the cut interval still
    # holds the estimate.
    low = np.where(cut & (c > b), np.maximum(low, (2.0 * r_low - 1.0) * m / n), low)
    high = np.where(cut & (c < b), np.minimum(high, (2.0 * r_high - 1.0) * m / n), high)
    return low, high


def bonferroni_paired_interval(b, c, n, alpha, p, exact, *, share=DISCORDANCE_SHARE):
    """Interval on ``delta = pi_c - pi_b`` with guaranteed coverage, agreeing with the verdict.

    The difference factors as ``delta = pi (2 r - 1)``: ``pi = pi_b + pi_c`` the discordance
    rate and ``r = pi_c / pi`` the discordant questions' split. ``m = b + c`` is
    Binomial(n, pi) and, given ``m``, ``c`` is Binomial(m, r), so each has an exact
    Clopper-Pearson interval (:func:`clopper_pearson`): ``[pi_l, pi_u]`` at level
    ``share * alpha`` on ``m / n`` and ``[r_l, r_u]`` at ``(1 - share) * alpha`` on
    ``c / m``. The rectangle holds ``(pi, r)`` with probability at least ``1 - alpha``
    (Bonferroni: the two misses have probability at most ``share * alpha`` and, given any
    ``m``, ``(1 - share) * alpha``), and its image under ``pi (2 r - 1)`` is::

        low  = pi_l (2 r_l - 1) if r_l >= 1/2 else pi_u (2 r_l - 1)
        high = pi_u (2 r_u - 1) if r_u >= 1/2 else pi_l (2 r_u - 1)

    so the interval covers ``delta`` with probability at least ``1 - alpha`` at every
    ``(pi_b, pi_c)`` and every ``n``. With no discordant question it is ``[-pi_u, pi_u]``:
    the data bound how often the arms can differ, not that they never do (100 identical
    answers: ``[-4.29, +4.29]`` pp at 95%).

    To agree with the verdict beside it (the exact test of ``r = 1/2``, or the chi-square
    one), the near bound follows that test: when it rejects, ``r_l`` (``r_u`` below 1/2) is
    replaced, if it does not already exclude 1/2, by the bound of
    :func:`conditional_interval` at level ``alpha``, which does; when it does not reject,
    ``r_l <= 1/2 <= r_u`` is enforced (only wider; needed only for the chi-square verdict
    with continuity correction). Hence 0 lies inside exactly when ``p >= alpha``. At
    ``delta = 0`` the coverage is the test's (``>= 1 - alpha`` for the exact one); the
    Bonferroni guarantee does not extend to the replaced bound, whose coverage is checked by
    exact enumeration of every table (``tests/protocols/test_mcnemar_bonferroni.py``): over
    ``(pi_b, pi_c)`` on a 0.005 grid the minimum is 95.8%, 96.3%, 95.9% at n = 20, 50, 100,
    at or beside ``delta = 0`` (where it tends to the exact test's own coverage); where the
    discordance runs one way (``pi_b = 0``) it is at least 98.7%.

    ``share = 1/2`` is the split the expected widths favour on small discordance (n = 100,
    ``pi_b = pi_c = 0.02``: 17.9 pp against 18.6 pp at ``share = 0.3``) and costs little
    on large (``pi_b = 0.2, pi_c = 0.3``: 38.8 against 37.6 pp). The price of the guarantee
    is width: about 1.7 times Newcombe's at n = 100, ``pi_b = 0.05``, ``pi_c = 0.1``.

    Parameters
    ----------
    b, c : ndarray of int
        Baseline only right; variant only right.
    n : ndarray of int
        Questions.
    alpha : float
        Two-sided level: the interval has level ``1 - alpha``.
    p : ndarray of float
        The verdict's two-sided p-value per table.
    exact : ndarray of bool
        Per table: whether ``p`` is the exact binomial test (else chi-square).
    share : float
        Part of ``alpha`` spent on the discordance rate, in (0, 1).

    Returns
    -------
    low, high : ndarray
        Fractions within [-1, 1]; 0 lies inside exactly when ``p >= alpha``.
    """
    b, c, n = (np.asarray(x, dtype=float) for x in (b, c, n))
    m = b + c
    pi_low, pi_high = clopper_pearson(m, n, share * alpha)
    r_low, r_high = clopper_pearson(c, m, (1.0 - share) * alpha)
    v_low, v_high = conditional_interval(b, c, alpha, exact)
    significant = np.asarray(p) < alpha
    # A rejection of r = 1/2 puts the whole interval on the estimate's side of 0 ...
    r_low = np.where(significant & (c > b) & (r_low <= 0.5), v_low, r_low)
    r_high = np.where(significant & (c < b) & (r_high >= 0.5), v_high, r_high)
    # ... and no rejection keeps 0 inside.
    r_low = np.where(significant, r_low, np.minimum(r_low, 0.5))
    r_high = np.where(significant, r_high, np.maximum(r_high, 0.5))
    # pi (2 r - 1) grows with pi where r > 1/2 and falls where r < 1/2: the rectangle's
    # extreme corners.
    low = np.where(r_low >= 0.5, pi_low, pi_high) * (2.0 * r_low - 1.0)
    high = np.where(r_high >= 0.5, pi_high, pi_low) * (2.0 * r_high - 1.0)
    return low, high


@register
@dataclass(frozen=True)
class McNemar(Protocol):
    """McNemar's test on the 2x2 table of seed 0's per-question outcomes.

    With ``b`` = questions the baseline gets right and the variant wrong and ``c`` the
    reverse, the chi-square form is ``(|b - c| - corr)**2 / (b + c)`` on 1 degree of
    freedom, as ``statsmodels.stats.contingency_tables.mcnemar(exact=False)``; the exact
    form is the two-sided binomial test ``min(1, 2 * Binom(b + c, 1/2).cdf(min(b, c)))``
    (``mcnemar(exact=True)``). By default the exact test is used while ``b + c <= 25``
    (:data:`EXACT_MAX_DISCORDANT`), where the chi-square approximation is poor (b = 0,
    c = 5: exact p = 0.0625, chi-square 0.025), and the chi-square form beyond.

    The CI on the difference of paired proportions ``(c - b) / n`` is, by default
    (``ci='bonferroni'``), the image of exact Clopper-Pearson intervals for the discordance
    rate and for the discordant questions' split (:func:`bonferroni_paired_interval`): its
    coverage is at least ``1 - alpha`` at every true table, and it holds 0 exactly when
    p >= alpha. ``ci='matched'`` (the former default) is Newcombe's (1998) square-and-add
    score interval (method 10, :func:`newcombe_paired_interval`) cut at the verdict
    (:func:`matched_interval`); like the plain ``ci='newcombe'`` (which disagrees with the
    exact verdict on 1-5% of tables) it covers less than its level where the discordance
    runs one way (88.5% at n = 100, ``pi_b = 0``, by enumeration) and prints
    ``[-1.92, +1.92]`` pp for 100 identical answers. The Wald interval ``estimate +- z *
    sqrt(b + c - (c - b)**2 / n) / n`` (Agresti, *Categorical Data Analysis*, 3rd ed.,
    2013, Sec. 11.1.1), ``ci='wald'``, has zero width at ``b + c = 0`` and covers the true
    difference far less often than its level when discordant pairs are rare (86-87% at 95%
    for ``b = 0``, small n).

    The honest test between two fixed models on independent questions (design ``models``)
    from one run each: the questions are the sample. With several runs it reads the first
    only (``paired_t_questions`` averages them).

    Parameters
    ----------
    exact : bool or None, default None
        True: binomial test; False: chi-square; None: binomial while b + c <= 25.
    correction : bool, default False
        Continuity correction of the chi-square form. Unlike statsmodels, ``|b - c| - 1`` is
        floored at 0, so ``b == c`` gives p = 1 rather than slightly less.
    ci : {'bonferroni', 'matched', 'newcombe', 'wald'}, default 'bonferroni'
        The interval on the difference of proportions (the Wald one clipped to [-1, 1]).

    Notes
    -----
    ``b + c = 0`` (the arms agree on every question) gives p = 1, where statsmodels
    returns NaN for the chi-square form.
    """

    exact: bool | None = None
    correction: bool = False
    ci: str = "bonferroni"

    name = "mcnemar"
    summary = "McNemar's test on seed 0's per-question outcomes"
    binary = True
    needs_questions = True
    paired = True
    pitfall = "one run, " + SEEDS_IGNORED.replace(", ", ": ")
    uses_first_seed_only = True
    valid_for = frozenset({MODELS})
    pitfall_for = {METHODS_INDEPENDENT: pitfall, MODELS_CLUSTERED: CLUSTERS_IGNORED}

    def __post_init__(self):
        if self.exact is not None and not isinstance(self.exact, (bool, np.bool_)):
            raise fail("exact", "True, False or None", self.exact, self.name)
        check_bool(self.correction, "correction", self.name)
        check_choice(self.ci, "ci", CI_METHODS, self.name)

    def decision_note(self, batch) -> str:
        """Which run the table read, when there are several: its estimate is run 1's alone
        and so differs from the averaged protocols' beside it (the statistics are unchanged:
        the first run, as always)."""
        if batch.k < 2:
            return ""
        return (f"read run 1 of {batch.k} only (the first in the runs' order; the other "
                f"{batch.k - 1} ignored), so its estimate is that run's difference; "
                "paired_t_questions averages every run")

    def _evaluate(self, batch, alpha, rng):
        b0 = batch.base[..., 0, :]
        v0 = batch.variant[..., 0, :]
        a = ((b0 == 1) & (v0 == 1)).sum(axis=-1)
        b = ((b0 == 1) & (v0 == 0)).sum(axis=-1)
        c = ((b0 == 0) & (v0 == 1)).sum(axis=-1)
        d = b0.shape[-1] - a - b - c
        t = mcnemar_tables(a, b, c, d, alpha, exact=self.exact, correction=self.correction,
                           ci=self.ci)
        return make_result(t.estimate, t.ci_low, t.ci_high, t.p_value, t.p_value < alpha)


@dataclass(frozen=True)
class McNemarTables:
    """McNemar on a batch of 2x2 tables (arrays over the tables).

    Attributes
    ----------
    estimate, ci_low, ci_high : ndarray of float
        ``(c - b) / n`` and its interval, fractions.
    p_value : ndarray of float
    exact : ndarray of bool
        Whether each table's p is the exact binomial test (else chi-square).
    """

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    p_value: np.ndarray
    exact: np.ndarray


def mcnemar_tables(a, b, c, d, alpha, *, exact=None, correction=False, ci="bonferroni"):
    """:class:`McNemar` on counts: vectorized over tables (the decision grid calls it).

    Parameters
    ----------
    a, b, c, d : ndarray of int
        Questions both arms get right; baseline only; variant only; neither.
    alpha : float
    exact, correction, ci
        As :class:`McNemar`.

    Returns
    -------
    McNemarTables
    """
    a, b, c, d = np.broadcast_arrays(*(np.asarray(x) for x in (a, b, c, d)))
    n = a + b + c + d
    discordant = b + c
    estimate = (c - b) / n
    gap = np.abs(b - c).astype(float)
    if correction:
        gap = np.maximum(gap - 1.0, 0.0)
    statistic = np.where(discordant > 0, gap**2 / np.maximum(discordant, 1), 0.0)
    p = stats.chi2.sf(statistic, 1)
    use_exact = (discordant <= EXACT_MAX_DISCORDANT if exact is None
                 else np.full(np.shape(discordant), bool(exact)))
    if use_exact.any():
        p = np.where(use_exact, mcnemar_exact_p(b, c), p)
    if ci == "wald":
        # Var((c - b) / n) = [(b + c) / n - ((c - b) / n)**2] / n, estimated without the
        # null's constraint b = c; never negative since |c - b| <= b + c <= n. Clipped to
        # [-1, 1], where a difference of proportions lies (b = 3, n = 4 reaches -1.17).
        var_n2 = np.maximum(discordant - (c - b) ** 2 / n, 0.0)
        half = special.ndtri(1.0 - alpha / 2.0) * np.sqrt(var_n2) / n
        low, high = np.maximum(estimate - half, -1.0), np.minimum(estimate + half, 1.0)
    elif ci == "newcombe":
        low, high = newcombe_paired_interval(a, b, c, d, alpha)
    elif ci == "matched":
        low, high = matched_interval(a, b, c, d, alpha, p, use_exact)
    else:
        low, high = bonferroni_paired_interval(b, c, n, alpha, p, use_exact)
    return McNemarTables(estimate=estimate, ci_low=low, ci_high=high, p_value=p,
                         exact=use_exact)
