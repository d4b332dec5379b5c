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
  protocols already shown invalid at another k are not extended.

**Confirmation.** The verdict of the steps above is the *first stage*'s. It is printed only
once a second, independent stage says the same: when the first stage has shown a cell valid
or invalid after ``n`` simulations, the cell gets a confirmation batch of ``n`` fresh
simulations (a cached cell of the stream :func:`confirm_seed` ``(seed, 1)``, named by the
root seed and ``"fpr_confirm"``: independent of the grid's cells and of the first stage's
chunks). The batch is judged by the same rule on its own counts: the same bound, the same
exact test with Holm at ``invalid_level`` over the cells that have a confirmation (which
cells those are depends on the first stage only, so Holm holds its level given it) and
Bonferroni over the looks; while it decides nothing it doubles like the first stage (batch
``j`` from :func:`confirm_seed` ``(seed, j)``) up to the cap. The printed state is

* **valid** / **invalid** when both stages say so;
* **undecided** when they disagree, or the confirmation reaches the cap (or the pool limit)
  undecided;
* pending (more simulations due) while the confirmation runs; a cell the stop does not
  extend is reported undecided by :func:`settle`.

A false verdict therefore needs two independent rare events, and its probability is the
product of the two stages' (bounds by exact binomial sums, :func:`error_rates`; alpha =
0.05, 2,000 simulations at the first look, the default tolerance and cap, i.e. looks at
2,000, 4,000, 8,000, 16,000 and 32,000 simulations):

* a run calls *some* protocol invalid although every rate is <= alpha with probability
  <= ``invalid_level ** 2`` = 1e-6 (each stage: Holm at 0.001, Bonferroni over the looks;
  per exactly-alpha cell in a family of 56, < 3e-10);
* a cell whose true rate is ``alpha + tolerance`` (6%) or more is shown valid with
  probability <= 0.047 ** 2 = 0.0022 (each stage's bound at ``level / looks``); at
  ``2 alpha`` < 1e-34;
* a cell whose true rate is exactly alpha ends undecided with probability < 3e-8 (each stage
  fails its last look with probability < 2e-8); it is shown valid at the first look with
  probability 0.33 and confirmed on 2,000 more with probability 0.33 again, and otherwise
  takes more looks (about 5,000 simulations per stage on average).

The confirmation costs one batch per decided cell of an honest protocol, as many
simulations as its first stage took: ``python -m sim.calibrate --k 3 10`` draws about
twice the effect-0 simulations it drew before (docs/measured.md).

A protocol is recommended only if it is shown valid at every k measured.
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
        A frame with :data:`CONFIRM_COLUMNS` (written by :func:`extend_null_cells`) is
        judged with the confirmation stage (module docstring); one without them (an older
        ``calibration.csv``, a caller without the stage) by the first stage alone.

    Returns
    -------
    pandas.DataFrame
        ``null`` with ``fpr_n`` and ``fpr_rate`` (simulations and rate, added chunks
        included), ``fpr_upper``, ``fpr_p`` (Bonferroni over the looks), ``first_state``
        (the first stage's verdict), ``state`` (valid, invalid, pending: more looks or a
        confirmation due, undecided: cap reached, :func:`pool_limited`, or the two stages
        disagree) and ``pool_limited``; with the stage also ``confirm_state``,
        ``confirm_upper`` and ``confirm_p`` (NaN / "" where no confirmation was drawn).
    """
    x, n = _counts(null)
    sd = null["pool_sd"].to_numpy(float) if "pool_sd" in null else np.full(len(null), np.nan)
    p_min = null["fpr_p_min"].to_numpy(float) if "fpr_p_min" in null else None
    first = _stage(x, n, sd, p_min, rule, np.ones(len(null), bool))
    out = null.assign(fpr_n=n, fpr_rate=x / n, fpr_upper=first.upper, fpr_p=first.p,
                      first_state=first.state, state=first.state,
                      pool_limited=first.limited)
    if not all(c in null for c in CONFIRM_COLUMNS):
        return out
    n_c = null["confirm_sims"].to_numpy(float)
    drawn = ~np.isnan(n_c)
    x_c = np.where(drawn, null["confirm_rejections"].to_numpy(float), 0.0)
    n_c = np.where(drawn, n_c, 1.0)
    # Holm over the cells that have a confirmation: which cells those are depends on the
    # first stage only, and the confirmations are independent of it, so given the first
    # stage Holm holds its family-wise level over them.
    second = _stage(x_c, n_c, sd, null["confirm_p_min"].to_numpy(float), rule, drawn)
    state = np.array(first.state, dtype=object)
    decided = np.isin(first.state, (VALID, INVALID))
    agree = decided & drawn & (second.state == first.state)
    clash = decided & drawn & np.isin(second.state, (VALID, INVALID)) & ~agree
    stuck = decided & drawn & (second.state == UNDECIDED)
    state[decided] = PENDING  # a first-stage verdict awaits its confirmation
    state[agree] = first.state[agree]
    state[clash | stuck] = UNDECIDED
    return out.assign(state=state, confirm_state=np.where(drawn, second.state, ""),
                      confirm_upper=np.where(drawn, second.upper, np.nan),
                      confirm_p=np.where(drawn, second.p, np.nan))


@dataclass(frozen=True)
class _Stage:
    """One stage's judgement of each cell (arrays)."""

    upper: np.ndarray
    p: np.ndarray
    state: np.ndarray
    limited: np.ndarray


def _stage(x, n, sd, p_min, rule: ValidityRule, family) -> _Stage:
    """The rule on one stage's counts: bound, Bonferroni p, Holm over the ``family`` rows
    (the others get state "" and p NaN), state (valid, invalid, pending, undecided)."""
    p = rule.p_above(x, n, sd)
    if p_min is not None:
        p = np.fmin(p, p_min)
    p_adj = np.minimum(1.0, rule.looks * p)
    upper = rule.upper(x, n, sd)
    valid = upper <= rule.limit + 1e-12
    invalid = np.zeros(len(x), bool)
    invalid[family] = holm(p_adj[family], rule.invalid_level)
    invalid &= ~valid
    limited = pool_limited(x, n, sd, rule) & ~valid & ~invalid
    state = np.where(valid, VALID, np.where(invalid, INVALID, np.where(
        (n >= rule.max_sims) | limited, UNDECIDED, PENDING)))
    state = np.where(family, state, "")
    return _Stage(upper, np.where(family, p_adj, np.nan), state, limited)


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
    return _named_seed(seed, "fpr_sequential_look", look)


def confirm_seed(seed: int, look: int) -> int:
    """Root seed of the confirmation stage's ``look``-th batch (1 the first): named by the
    run's seed, ``"fpr_confirm"`` and the look, so it is independent of the grid's cells
    and of the first stage's chunks, and depends only on ``--seed``."""
    return _named_seed(seed, "fpr_confirm", look)


def _named_seed(seed: int, name: str, look: int) -> int:
    return int(cell_seed(seed, name, int(look)).generate_state(1, np.uint64)[0]
               >> np.uint64(1))


#: the confirmation stage's counts (all its batches together), its batches, its smallest
#: one-look p-value
CONFIRM_COLUMNS = ("confirm_sims", "confirm_rejections", "confirm_looks", "confirm_p_min")
#: the first stage's added chunks (the grid's own counts are ``sims``/``rejections``)
FIRST_COLUMNS = ("fpr_sims", "fpr_rejections", "fpr_looks", "fpr_p_min")


def _counts(null: pd.DataFrame):
    """Rejections and simulations of each null cell, its added chunks included."""
    x, n = null["rejections"].to_numpy(float), null["sims"].to_numpy(float)
    if "fpr_sims" in null:
        more = null["fpr_sims"].notna().to_numpy()
        x = np.where(more, null["fpr_rejections"].to_numpy(float), x)
        n = np.where(more, null["fpr_sims"].to_numpy(float), n)
    return x, n


def fold(row: pd.Series, chunk, rule: ValidityRule, *, stage: str = "fpr") -> dict:
    """The sequential-stop columns of ``row`` (a null cell) once a chunk of more simulations
    is added: ``fpr_sims`` and ``fpr_rejections`` (all looks together), ``fpr_looks`` and
    ``fpr_p_min`` (the smallest one-look p-value). The row's own counts (its first look, as
    the grid measured it) are left as they are. ``stage="confirm"``: the confirmation
    stage's columns (:data:`CONFIRM_COLUMNS`), which start from no simulations."""
    if stage == "fpr":
        x, n = (int(v[0]) for v in _counts(row.to_frame().T))
    else:
        done = row.get(f"{stage}_sims", math.nan)
        x, n = (0, 0) if done != done else (int(row[f"{stage}_rejections"]), int(done))
    sims, rejections = n + int(chunk["sims"]), x + int(chunk["rejections"])
    sd = float(row["pool_sd"]) if "pool_sd" in row else math.nan
    old = row.get(f"{stage}_p_min", math.nan)
    if old != old:  # NaN: no earlier look of this stage kept its p
        old = float(rule.p_above(x, n, sd)) if n else 1.0
    looks = row.get(f"{stage}_looks", math.nan)
    looks = (1 if stage == "fpr" else 0) if looks != looks else int(looks)
    return {f"{stage}_sims": sims, f"{stage}_rejections": rejections,
            f"{stage}_looks": looks + 1,
            f"{stage}_p_min": min(float(old), float(rule.p_above(rejections, sims, sd)))}


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
        (reaching the cap undecided at rate alpha, bounded by failing the last look): each
        for one stage. The printed verdict needs both stages (module docstring), so its
        errors are the products ``false_invalid_confirmed`` (``false_invalid ** 2``),
        ``valid_at_limit_confirmed`` and ``valid_at_2alpha_confirmed``; a cell at alpha
        ends undecided when either stage does, ``undecided_at_alpha_confirmed``.
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
    one = dict(
        false_invalid=min(1.0, sum(p_invalid(alpha, n, invalid_level / cells)
                                   for n in looks)),
        valid_at_limit=min(1.0, sum(p_valid(rule.limit, n) for n in looks)),
        valid_at_2alpha=min(1.0, sum(p_valid(2 * alpha, n) for n in looks)),
        undecided_at_alpha=1 - p_valid(alpha, looks[-1]))
    # the two stages draw independent simulations: a printed false verdict needs both
    both = {f"{name}_confirmed": value**2 for name, value in one.items()
            if name != "undecided_at_alpha"}
    both["undecided_at_alpha_confirmed"] = 1 - (1 - one["undecided_at_alpha"])**2
    return dict(looks=rule.looks, schedule=looks,
                first_look_valid_at_alpha=p_valid(alpha, looks[0]), **one, **both)


def invalid_threshold(rule: ValidityRule, sims: int, threshold: float) -> int:
    """Smallest rejection count of ``sims`` simulations that one stage calls above alpha
    when its Holm threshold is ``threshold`` (its Bonferroni p over the looks <= it);
    ``sims + 1`` when none is."""
    x = np.arange(sims + 1)
    ok = np.minimum(1.0, rule.looks * rule.p_above(x, np.full(x.shape, sims))) <= threshold
    return int(x[ok][0]) if ok.any() else sims + 1


def to_extend(judged: pd.DataFrame, rule: ValidityRule, honest, *,
              confirm_all: bool = False) -> pd.Series:
    """Null cells that get another chunk (of either stage): pending cells of honest
    protocols (``honest``: protocol name -> bool) none of whose cells is already lost
    (with the confirmation stage: a confirmed "invalid"; without it: a cell surely
    invalid, :func:`surely_invalid`). With ``confirm_all`` every first-stage verdict is
    confirmed, other protocols' too (a table that prints their verdicts)."""
    if "confirm_state" in judged:
        lost = set(judged.loc[judged["state"] == INVALID, "protocol"])
    else:
        lost = set(judged.loc[surely_invalid(judged, rule), "protocol"])
    keep = judged["protocol"].map(lambda p: bool(honest(p)) and p not in lost)
    if confirm_all and "confirm_state" in judged:
        keep |= judged["first_state"] != PENDING
    return (judged["state"] == PENDING) & keep


def next_chunk(row: pd.Series, rule: ValidityRule, seed: int) -> tuple[str, int, int, int]:
    """``(stage, look, sims, root seed)`` of the chunk a pending judged row gets next: the
    first stage's next look while it has no verdict, else the confirmation's first batch
    (as many simulations as the first stage took) or its next look."""
    if row["first_state"] == PENDING:
        look = 1 if row["fpr_looks"] != row["fpr_looks"] else int(row["fpr_looks"])
        return "fpr", look, rule.next_sims(int(row["fpr_n"])), chunk_seed(seed, look)
    done = row["confirm_sims"]
    look = 0 if done != done else int(row["confirm_looks"])
    sims = int(row["fpr_n"]) if done != done else rule.next_sims(int(done))
    return "confirm", look + 1, sims, confirm_seed(seed, look + 1)


NULL_KEY = ["generator_params", "protocol", "protocol_params", "k"]


def extend_null_cells(frame: pd.DataFrame, *, rule_of, generator_of, honest, run,
                      seed: int, confirm_all: bool = False) -> pd.DataFrame:
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
        The run's root seed; chunk ``j`` of a cell uses :func:`chunk_seed` ``(seed, j)``,
        the confirmation's batch ``j`` :func:`confirm_seed` ``(seed, j)``.
    confirm_all : bool
        Confirm the first-stage verdicts of every protocol, not only ``honest`` ones.

    Returns
    -------
    pandas.DataFrame
        ``frame`` with the sequential-stop columns of the extended null rows (
        ``fpr_sims``, ``fpr_rejections``, ``fpr_looks``, ``fpr_p_min``; the grid's own counts
        unchanged).
    """
    from .grid import CellRequest

    frame = frame.copy()
    for column in FIRST_COLUMNS + CONFIRM_COLUMNS:
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
            grow = to_extend(judged, rule, lambda p, g=generator: honest(p, g.name),
                             confirm_all=confirm_all)
            for i in judged.index[grow]:
                row = judged.loc[i]
                stage, look, chunk, root = next_chunk(row, rule, seed)
                by_look.setdefault((stage, look, chunk, root), []).append(
                    (i, CellRequest(generator, row["protocol"], row["protocol_params"],
                                    int(row["k"]), 0.0)))
        if not by_look:
            return frame
        for (stage, _look, chunk, root), items in sorted(by_look.items()):
            got = run([r for _, r in items], sims=chunk, seed=root, pool_reps=0)
            got = got.set_index(NULL_KEY)
            for i, _ in items:
                row = frame.loc[i]
                key = (row["generator_params"], row["protocol"], row["protocol_params"],
                       int(row["k"]))
                folded = fold(row, got.loc[key], rule_of(float(row["alpha"])), stage=stage)
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
                        **{c: math.nan for c in FIRST_COLUMNS + CONFIRM_COLUMNS}
                        ).reset_index(drop=True)
    while True:
        judged = judge(cells, rule)
        grow = np.flatnonzero(to_extend(judged, rule, honest).to_numpy())
        if grow.size == 0:
            return judged
        for i in grow:
            stage, _, chunk, _ = next_chunk(judged.loc[i], rule, 0)
            added = {"sims": chunk, "rejections": rng.binomial(chunk, rates[i])}
            for name, value in fold(cells.loc[i], added, rule, stage=stage).items():
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
                                 honest=honest, run=run, seed=seed, confirm_all=True)
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
