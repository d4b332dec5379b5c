"""The validity rule: is a protocol's false-positive rate shown <= alpha, shown > alpha, or
neither?

A protocol's null cells (effect 0, one per k measured) are judged together:

* **invalid** at a k when its rate is *shown above alpha*: the one-sided exact binomial test
  of ``rate <= alpha`` (a normal test with the pool-sampling variance added for a real
  pool) is rejected by Holm's step-down procedure at family-wise level ``invalid_level``
  (0.001) over **every** null cell of the setting (every protocol, every k measured), each
  cell's p-value Bonferroni-corrected over the looks of the sequential stop below;
* **shown valid** at a k when the rate's one-sided upper confidence bound (Clopper-Pearson
  at ``1 - level / looks``, ``level`` 0.05; for a real pool widened in quadrature by
  ``z * pool_sd``) is <= ``alpha + tolerance`` (``--fpr-tolerance``, default ``alpha / 5``);
  a cell both shown valid and shown above alpha (a rate within the tolerance) is valid;
* otherwise the cell is *borderline*: its simulations are doubled (``sims``, ``2 sims``,
  ``4 sims``, ... up to ``--max-sims``, default ``16 sims``), each added chunk being a cached
  cell of its own random stream (named by the root seed and the look, so the result depends
  only on ``--seed``), until it is shown valid, shown invalid, or the cap is reached: then it
  is **undecided (cap reached)**, never "invalid". A real pool's cell whose own sampling
  error puts both verdicts out of reach at any number of simulations (:func:`pool_limited`)
  stops at once as **undecided (the pool is too small)**. Cells of declared pitfalls and of
  protocols already surely invalid at another k are not extended.

A protocol is recommended only if it is shown valid at every k measured.

Error rates (bounds by exact binomial sums, :func:`error_rates`; alpha = 0.05, 2,000
simulations at the first look, the default tolerance and cap, i.e. looks at 2,000, 4,000,
8,000, 16,000 and 32,000 simulations):

* a run calls *some* protocol invalid although every rate is <= alpha with probability
  <= ``invalid_level`` = 0.001 (Holm; Bonferroni over the looks);
* a cell whose true rate is ``alpha + tolerance`` (6%) or more is shown valid with
  probability <= 0.047 (each look's bound at ``level / looks``); at ``2 alpha`` < 1e-17;
* a cell whose true rate is exactly alpha ends undecided at the cap with probability
  < 2e-8 (it is shown valid at the first look with probability 0.33, and takes about 5,000
  simulations on average).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .grid.seeding import cell_seed

#: per-cell error of "shown valid" (a cell at alpha + tolerance is shown valid at most this often)
DEFAULT_LEVEL = 0.05
#: family-wise level of "invalid": strict, since a borderline cell is extended instead (a
#: protocol at 1.2 alpha is shown above alpha with p < 1e-15 by the cap)
DEFAULT_INVALID_LEVEL = 0.001
#: --max-sims is this many times --sims unless given
MAX_SIMS_FACTOR = 16


def default_tolerance(alpha: float) -> float:
    """How far above alpha a false-positive rate's upper bound may reach: alpha / 5."""
    return alpha / 5


def default_max_sims(sims: int) -> int:
    """The sequential stop's cap on a null cell's simulations: 16 times ``sims``."""
    return MAX_SIMS_FACTOR * int(sims)


@dataclass(frozen=True)
class ValidityRule:
    """The rule's constants (fractions; simulations per cell).

    Parameters
    ----------
    alpha : float
        The protocols' nominal level.
    tolerance : float
        A rate is shown valid when its upper bound is <= ``alpha + tolerance``.
    sims : int
        Simulations of a cell's first look.
    max_sims : int
        Cap of the sequential stop (>= ``sims``).
    level : float
        Per-cell error of "shown valid" (split over the looks).
    invalid_level : float
        Family-wise level of "invalid" (Holm over the family, Bonferroni over the looks).
    """

    alpha: float
    tolerance: float
    sims: int
    max_sims: int
    level: float = DEFAULT_LEVEL
    invalid_level: float = DEFAULT_INVALID_LEVEL

    @classmethod
    def make(cls, alpha, sims, *, tolerance=None, max_sims=None, level=DEFAULT_LEVEL,
             invalid_level=DEFAULT_INVALID_LEVEL):
        """The rule with the documented defaults for ``None`` arguments."""
        tolerance = default_tolerance(alpha) if tolerance is None else float(tolerance)
        max_sims = default_max_sims(sims) if max_sims is None else int(max_sims)
        return cls(float(alpha), tolerance, int(sims), max(int(max_sims), int(sims)),
                   float(level), float(invalid_level))

    @property
    def limit(self) -> float:
        return self.alpha + self.tolerance

    @property
    def schedule(self) -> tuple[int, ...]:
        """Cumulative simulations at each look: doubling from ``sims``, ending at the cap."""
        out = [self.sims]
        while out[-1] < self.max_sims:
            out.append(min(2 * out[-1], self.max_sims))
        return tuple(out)

    @property
    def looks(self) -> int:
        return len(self.schedule)

    @property
    def z(self) -> float:
        """One-sided normal quantile of each look's bound."""
        return float(stats.norm.isf(self.level / self.looks))

    def upper(self, rejections, sims, pool_sd=math.nan):
        """One-sided upper bound of the rate at ``1 - level / looks`` (Clopper-Pearson;
        widened in quadrature by ``z * pool_sd`` where that is known)."""
        x, n = np.asarray(rejections, float), np.asarray(sims, float)
        cp = np.where(x >= n, 1.0, stats.beta.isf(self.level / self.looks, x + 1,
                                                  np.maximum(n - x, 1)))
        sd = np.nan_to_num(np.asarray(pool_sd, float), nan=0.0)
        rate = x / n
        return np.minimum(1.0, rate + np.hypot(cp - rate, self.z * sd))

    def p_above(self, rejections, sims, pool_sd=math.nan):
        """One-look p-value of ``rate <= alpha``: exact binomial; with a pool-sampling sd,
        a normal test on the Monte Carlo and pool variances together."""
        x, n = np.asarray(rejections, float), np.asarray(sims, float)
        exact = stats.binom.sf(x - 1, n, self.alpha)
        sd = np.asarray(pool_sd, float)
        pooled = np.isfinite(sd) & (sd > 0)
        var = self.alpha * (1 - self.alpha) / n + np.where(pooled, sd, 0.0) ** 2
        normal = stats.norm.sf((x / n - self.alpha) / np.sqrt(var))
        return np.where(pooled, normal, exact)

    def next_sims(self, sims: int) -> int | None:
        """Simulations of the chunk that takes a cell from ``sims`` to the next look."""
        later = [s for s in self.schedule if s > sims]
        return later[0] - int(sims) if later else None


def holm(p, level: float) -> np.ndarray:
    """Holm's step-down rejections of the p-values ``p`` at family-wise ``level``."""
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    m = p.size
    reject = np.zeros(m, bool)
    for i, j in enumerate(order):
        if p[j] > level / (m - i):
            break
        reject[j] = True
    return reject


#: cell states
VALID, INVALID, PENDING, UNDECIDED = "valid", "invalid", "pending", "undecided"


def judge(null: pd.DataFrame, rule: ValidityRule) -> pd.DataFrame:
    """Each null cell's state under ``rule``; Holm over all rows of ``null`` (the family).

    Parameters
    ----------
    null : pandas.DataFrame
        Effect-0 rows (``rejections``, ``sims``; optional ``pool_sd``, and ``fpr_p_min``:
        the smallest one-look p-value over the looks taken, default that of the counts).

    Returns
    -------
    pandas.DataFrame
        ``null`` with ``fpr_n`` and ``fpr_rate`` (simulations and rate, added chunks
        included), ``fpr_upper``, ``fpr_p`` (Bonferroni over the looks), ``state``
        (valid, invalid, pending: more looks possible, undecided: cap reached or
        :func:`pool_limited`) and ``pool_limited``.
    """
    x, n = _counts(null)
    sd = null["pool_sd"].to_numpy(float) if "pool_sd" in null else np.full(len(null), np.nan)
    p = rule.p_above(x, n, sd)
    if "fpr_p_min" in null:
        p = np.fmin(p, null["fpr_p_min"].to_numpy(float))
    p_adj = np.minimum(1.0, rule.looks * p)
    upper = rule.upper(x, n, sd)
    valid = upper <= rule.limit + 1e-12
    invalid = holm(p_adj, rule.invalid_level) & ~valid
    limited = pool_limited(x, n, sd, rule) & ~valid & ~invalid
    state = np.where(valid, VALID, np.where(invalid, INVALID, np.where(
        (n >= rule.max_sims) | limited, UNDECIDED, PENDING)))
    return null.assign(fpr_n=n, fpr_rate=x / n, fpr_upper=upper, fpr_p=p_adj, state=state,
                       pool_limited=limited)


def pool_limited(rejections, sims, pool_sd, rule: ValidityRule) -> np.ndarray:
    """Cells no number of simulations can decide: the real pool's own sampling error is too
    large for "shown valid" and for "shown invalid".

    With infinitely many simulations the upper bound of :meth:`ValidityRule.upper` tends to
    ``rate + z * pool_sd`` and the p of :meth:`ValidityRule.p_above` to a normal test on
    ``pool_sd`` alone. A cell is pool-limited when even the Monte Carlo interval's favourable
    end leaves both out of reach: ``rate_low + z * pool_sd > alpha + tolerance`` and
    ``looks * P(Z > (rate_high - alpha) / pool_sd) > invalid_level`` (rate bounds:
    Clopper-Pearson at ``1 - level / looks``). Such cells stop at once instead of running to
    the cap; a larger pool (more seeds) can decide them. Synthetic cells (no ``pool_sd``)
    are never pool-limited.
    """
    x, n = np.asarray(rejections, float), np.asarray(sims, float)
    sd = np.asarray(pool_sd, float)
    known = np.isfinite(sd) & (sd > 0)
    tail = rule.level / rule.looks
    low = np.where(x > 0, stats.beta.ppf(tail, np.maximum(x, 1), n - x + 1), 0.0)
    high = np.where(x < n, stats.beta.isf(tail, x + 1, np.maximum(n - x, 1)), 1.0)
    sd_safe = np.where(known, sd, 1.0)
    never_valid = low + rule.z * sd_safe > rule.limit
    never_invalid = rule.looks * stats.norm.sf((high - rule.alpha) / sd_safe) > rule.invalid_level
    return known & never_valid & never_invalid


def surely_invalid(judged: pd.DataFrame, rule: ValidityRule) -> pd.Series:
    """Cells Holm rejects whatever the others show (p below its strictest threshold)."""
    return judged["fpr_p"] <= rule.invalid_level / max(1, len(judged))


def chunk_seed(seed: int, look: int) -> int:
    """Root seed of the chunk that a null cell adds at ``look`` (1, 2, ...): named by the
    run's seed and the look, so the added simulations depend only on ``--seed``."""
    return int(cell_seed(seed, "fpr_sequential_look", int(look)).generate_state(1, np.uint64)[0]
               >> np.uint64(1))


def _counts(null: pd.DataFrame):
    """Rejections and simulations of each null cell, its added chunks included."""
    x, n = null["rejections"].to_numpy(float), null["sims"].to_numpy(float)
    if "fpr_sims" in null:
        more = null["fpr_sims"].notna().to_numpy()
        x = np.where(more, null["fpr_rejections"].to_numpy(float), x)
        n = np.where(more, null["fpr_sims"].to_numpy(float), n)
    return x, n


def fold(row: pd.Series, chunk, rule: ValidityRule) -> dict:
    """The sequential-stop columns of ``row`` (a null cell) once a chunk of more simulations
    is added: ``fpr_sims`` and ``fpr_rejections`` (all looks together), ``fpr_looks`` and
    ``fpr_p_min`` (the smallest one-look p-value). The row's own counts (its first look, as
    the grid measured it) are left as they are."""
    x, n = (int(v[0]) for v in _counts(row.to_frame().T))
    sims, rejections = n + int(chunk["sims"]), x + int(chunk["rejections"])
    sd = float(row["pool_sd"]) if "pool_sd" in row else math.nan
    old = row["fpr_p_min"] if "fpr_p_min" in row else math.nan
    old = float(rule.p_above(x, n, sd)) if old != old else float(old)
    looks = row["fpr_looks"] if "fpr_looks" in row else 1
    looks = 1 if looks != looks else int(looks)  # NaN: a row of one look
    return dict(fpr_sims=sims, fpr_rejections=rejections, fpr_looks=looks + 1,
                fpr_p_min=min(old, float(rule.p_above(rejections, sims, sd))))


def error_rates(alpha: float, sims: int, *, tolerance=None, max_sims=None,
                level=DEFAULT_LEVEL, invalid_level=DEFAULT_INVALID_LEVEL,
                cells: int = 1) -> dict:
    """The rule's error rates at one cell, by exact binomial sums over its looks (looks
    treated as independent draws of their cumulative counts: an upper bound by Bonferroni).

    Returns
    -------
    dict
        ``false_invalid`` (bound on calling an exactly-alpha cell invalid, with ``cells``
        cells in the Holm family), ``first_look_valid_at_alpha`` (shown valid at the first
        look when the rate is alpha), ``valid_at_limit`` (bound on showing valid a cell at
        alpha + tolerance), ``valid_at_2alpha`` (same at 2 alpha), ``undecided_at_alpha``
        (reaching the cap undecided at rate alpha, bounded by failing the last look).
    """
    rule = ValidityRule.make(alpha, sims, tolerance=tolerance, max_sims=max_sims, level=level,
                             invalid_level=invalid_level)

    def p_valid(rate, n):
        x = np.arange(n + 1)
        ok = rule.upper(x, np.full(x.shape, n)) <= rule.limit + 1e-12
        return float(stats.binom.pmf(x, n, rate)[ok].sum())

    def p_invalid(rate, n, threshold):
        x = np.arange(n + 1)
        ok = np.minimum(1, rule.looks * rule.p_above(x, np.full(x.shape, n))) <= threshold
        return float(stats.binom.pmf(x, n, rate)[ok].sum())

    looks = rule.schedule
    return dict(
        looks=rule.looks, schedule=looks,
        false_invalid=min(1.0, sum(p_invalid(alpha, n, invalid_level / cells)
                                   for n in looks)),
        first_look_valid_at_alpha=p_valid(alpha, looks[0]),
        valid_at_limit=min(1.0, sum(p_valid(rule.limit, n) for n in looks)),
        valid_at_2alpha=min(1.0, sum(p_valid(2 * alpha, n) for n in looks)),
        undecided_at_alpha=1 - p_valid(alpha, looks[-1]))


def to_extend(judged: pd.DataFrame, rule: ValidityRule, honest) -> pd.Series:
    """Null cells that get another chunk: pending cells of honest protocols (``honest``:
    protocol name -> bool) none of whose cells is already surely invalid."""
    sure = surely_invalid(judged, rule)
    lost = set(judged.loc[sure, "protocol"])
    keep = judged["protocol"].map(lambda p: bool(honest(p)) and p not in lost)
    return (judged["state"] == PENDING) & keep


NULL_KEY = ["generator_params", "protocol", "protocol_params", "k"]


def extend_null_cells(frame: pd.DataFrame, *, rule_of, generator_of, honest, run,
                      seed: int) -> pd.DataFrame:
    """The sequential stop: add chunks to borderline null cells until each is decided.

    Parameters
    ----------
    frame : pandas.DataFrame
        A calibration frame (every setting).
    rule_of : callable
        ``rule_of(alpha) -> ValidityRule``.
    generator_of : callable
        ``generator_of(null_params) -> Generator or None`` (None: not extended).
    honest : callable
        ``honest(protocol, generator_name) -> bool``: only the cells of a protocol honest
        for the generator's design are extended.
    run : callable
        ``run(requests, sims=..., seed=..., pool_reps=0) -> frame`` (:func:`run_cells`).
    seed : int
        The run's root seed; chunk ``j`` of a cell uses :func:`chunk_seed` ``(seed, j)``.

    Returns
    -------
    pandas.DataFrame
        ``frame`` with the sequential-stop columns of the extended null rows (
        ``fpr_sims``, ``fpr_rejections``, ``fpr_looks``, ``fpr_p_min``; the grid's own counts
        unchanged).
    """
    from .grid import CellRequest

    frame = frame.copy()
    for column in ("fpr_sims", "fpr_rejections", "fpr_looks", "fpr_p_min"):
        if column not in frame:
            frame[column] = math.nan
    while True:
        by_look = {}
        null = frame[frame["effect_pp"] == 0]
        for (params, alpha), family in null.groupby(["generator_params", "alpha"]):
            generator = generator_of(params)
            if generator is None:
                continue
            rule = rule_of(float(alpha))
            judged = judge(family, rule)
            for i in judged.index[to_extend(judged, rule,
                                            lambda p, g=generator: honest(p, g.name))]:
                row = judged.loc[i]
                chunk = rule.next_sims(int(row["fpr_n"]))
                look = 1 if row["fpr_looks"] != row["fpr_looks"] else int(row["fpr_looks"])
                by_look.setdefault((look, chunk), []).append(
                    (i, CellRequest(generator, row["protocol"], row["protocol_params"],
                                    int(row["k"]), 0.0)))
        if not by_look:
            return frame
        for (look, chunk), items in sorted(by_look.items()):
            got = run([r for _, r in items], sims=chunk, seed=chunk_seed(seed, look),
                      pool_reps=0)
            got = got.set_index(NULL_KEY)
            for i, _ in items:
                row = frame.loc[i]
                key = (row["generator_params"], row["protocol"], row["protocol_params"],
                       int(row["k"]))
                folded = fold(row, got.loc[key], rule_of(float(row["alpha"])))
                for name, value in folded.items():
                    frame.loc[i, name] = value


def simulate_decisions(null: pd.DataFrame, rates, rule: ValidityRule, *, honest,
                       rng=None) -> pd.DataFrame:
    """The rule run on simulated counts: each cell's rejections drawn as Binomial(sims,
    rate) look by look, with the same judging and stopping as :func:`extend_null_cells`.

    Parameters
    ----------
    null : pandas.DataFrame
        The family's cells (``protocol``, ``k``; other columns kept).
    rates : array_like
        True false-positive rate of each cell (fractions).
    rule : ValidityRule
    honest : callable
        ``honest(protocol) -> bool`` (only honest protocols' cells are extended).
    rng : numpy.random.Generator or seed

    Returns
    -------
    pandas.DataFrame
        :func:`judge` of the final counts (``state`` per cell).
    """
    rng = np.random.default_rng(rng)
    rates = np.asarray(rates, float)
    cells = null.assign(sims=rule.sims, rejections=rng.binomial(rule.sims, rates),
                        fpr_sims=math.nan, fpr_rejections=math.nan, fpr_looks=math.nan,
                        fpr_p_min=math.nan).reset_index(drop=True)
    while True:
        judged = judge(cells, rule)
        grow = np.flatnonzero(to_extend(judged, rule, honest).to_numpy())
        if grow.size == 0:
            return judged
        for i in grow:
            chunk = rule.next_sims(int(judged.at[i, "fpr_n"]))
            added = {"sims": chunk, "rejections": rng.binomial(chunk, rates[i])}
            for name, value in fold(cells.loc[i], added, rule).items():
                cells.at[i, name] = value


def settle(null: pd.DataFrame, rule: ValidityRule, *, generator_of, honest, run,
           seed: int) -> pd.DataFrame:
    """Judge a table's null cells as one family, with the sequential stop for the honest ones.

    The cells of ``honest`` protocols that no look decided get more simulations
    (:func:`extend_null_cells`), then every row is judged (:func:`judge`; Holm over all
    rows) and its counts restated over all its looks.

    Parameters
    ----------
    null : pandas.DataFrame
        Effect-0 rows of :func:`sim.grid.run_cells`.
    rule : ValidityRule
    generator_of, honest, run, seed
        As in :func:`extend_null_cells`.

    Returns
    -------
    pandas.DataFrame
        ``null`` with ``rejections``, ``sims``, ``rate`` and its Wilson interval
        ``rate_low``/``rate_high`` over every look, ``looks``, ``fpr_upper``, ``fpr_p`` and
        ``state`` (valid, invalid or undecided: a cell the stop did not extend and no look
        decided is undecided).
    """
    from .grid import wilson

    extended = extend_null_cells(null, rule_of=lambda _alpha: rule, generator_of=generator_of,
                                 honest=honest, run=run, seed=seed)
    judged = judge(extended, rule)
    more = judged["fpr_sims"].notna()
    x = (judged["fpr_n"] * judged["fpr_rate"]).round().astype(int)
    n = judged["fpr_n"].astype(int)
    bounds = [wilson(int(a), int(b)) for a, b in zip(x, n)]
    return judged.assign(
        rejections=x, sims=n, rate=judged["fpr_rate"],
        rate_low=[b[0] for b in bounds], rate_high=[b[1] for b in bounds],
        looks=judged["fpr_looks"].where(more, 1).astype(int),
        state=judged["state"].replace(PENDING, UNDECIDED))
