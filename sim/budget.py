"""The seed budget: which protocols to trust, and how many seeds each needs.

The validity rule
-----------------
A protocol is *recommended* for a generator setting only if

1. it is no pitfall for the design its generator simulates (:mod:`sim.labels`);
2. its false-positive rate was measured (effect-0 cells of the setting named in the rows'
   ``null_params``: the same setting, or for a real pool the null pool of its dataset);
3. at **every** k measured there (the requested grid's and each k the budget names), its
   false-positive rate is *shown valid*: the rate's
   one-sided upper confidence bound (Clopper-Pearson, widened by the pool-sampling error
   for a real pool) is <= alpha + tolerance (``--fpr-tolerance``, default alpha / 5);
4. the false-positive rate was measured at the k it is recommended with.

A protocol whose rate is *shown above alpha* at some k (a one-sided binomial test, Holm over
every null cell of the setting) is ``invalid``; a borderline cell gets more simulations
(doubling, up to ``--max-sims``) until one or the other is shown, else it is "undecided (cap
reached)", never invalid. :mod:`sim.validity` states the rule and its error rates.
Only a recommended protocol gets a k.

The k search
------------
For every recommended protocol and effect, the smallest k with power >= the target is
searched beyond the requested range (:func:`sim.solve.solve` over :mod:`sim.search`: steps
up to a normal-theory guess of the crossing, each at most a doubling, then bisection, then
a walk to the k range over which the power's Wilson interval straddles the target), up to
``--k-max`` or the generator's cap. A protocol that reads the first run only (``mcnemar``)
is not searched: its power does not change with k, so the requested grid answers. Each k
the budget reports (the crossing of every curve) gets its effect-0 cell as well, so the
rule above covers it; the k a search passes through on its way do not (they only locate
the crossing). Cells are cached like any other, and a cell drawn for one protocol is scored
for every protocol searched, its other rows held back until asked for
(:func:`sharing_runner`: the same rows, a draw fewer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

import protocols
from evalcal_core.designs import KIND_WORDS
from evalcal_core.params import decode

from . import generators
from . import validity as _validity
from .grid import CellRequest
from .labels import design_of, is_reportable, pitfall_reason
from .search import Point, crossing
from .solve import Curve, MeasuredPoints, solve
from .validity import ValidityRule

#: power levels the seed budget always reports (besides ``--target-power``)
POWER_TARGETS = (0.8, 0.9)
#: upper end of the k search unless ``--k-max`` says otherwise
DEFAULT_K_MAX = 50
#: rounds of the search before giving up (each round measures one more k per curve)
MAX_ROUNDS = 100


def default_tolerance(alpha: float) -> float:
    """How far above alpha a false-positive rate's upper bound may reach: alpha / 5
    (:func:`sim.validity.default_tolerance`)."""
    return _validity.default_tolerance(alpha)


@dataclass(frozen=True)
class Verdict:
    """Whether a protocol is recommended on a setting, and why (fractions)."""

    recommended: bool
    why: str
    max_fpr: float
    fpr_upper: float
    null_ks: frozenset
    #: not recommended only because some null cell awaits more simulations
    pending: bool = False


def _family(calibration: pd.DataFrame, generator: str, null_params: str) -> pd.DataFrame:
    """Every effect-0 row of the null setting: the family the Holm correction runs over."""
    return calibration[(calibration["generator"] == generator)
                       & (calibration["generator_params"] == null_params)
                       & (calibration["effect_pp"] == 0)]


def verdict(calibration: pd.DataFrame, generator: str, null_params: str, protocol: str,
            alpha: float, tolerance: float, *, rule: ValidityRule | None = None) -> Verdict:
    """Apply the validity rule (:mod:`sim.validity`) to one protocol on one setting.

    ``rule`` defaults to :meth:`ValidityRule.make` with the frame's smallest ``sims`` as the
    first look and the default cap (16 times that).
    """
    pitfall = pitfall_reason(protocol, generator)
    if pitfall:
        return Verdict(False, f"a pitfall for {KIND_WORDS[design_of(generator)]}: {pitfall}",
                       math.nan, math.nan, frozenset())
    family = _family(calibration, generator, null_params)
    null = family[family["protocol"] == protocol]
    if null.empty:
        return Verdict(False, "validity unknown: no effect-0 cells of its null setting "
                       f"({null_params})", math.nan, math.nan, frozenset())
    if rule is None:
        rule = ValidityRule.make(alpha, int(calibration["sims"].min()), tolerance=tolerance)
    judged = _validity.judge(family, rule).loc[null.index]
    ks = frozenset(int(k) for k in null["k"])
    max_fpr = float(judged["fpr_rate"].max())
    fpr_upper = float(judged["fpr_upper"].max())
    worst = judged.loc[judged["fpr_upper"].idxmax()]
    limit = rule.limit
    where = (f"{len(family)} null cells, Bonferroni over {rule.looks} looks of up to "
             f"{rule.max_sims} simulations")
    bad = judged[judged["state"] == _validity.INVALID]
    if not bad.empty:
        b = bad.loc[bad["fpr_p"].idxmin()]
        return Verdict(False, f"invalid: false-positive rate {_pct(b['fpr_rate'])} at k = "
                       f"{int(b['k'])} is shown above alpha = {_pct(alpha)} (p = "
                       f"{b['fpr_p']:.2g}, Holm at {rule.invalid_level:g} over {where}; "
                       f"{int(b['fpr_n'])} simulations)", max_fpr, fpr_upper, ks)
    open_ = judged[judged["state"] != _validity.VALID]
    if not open_.empty:
        w = open_.loc[open_["fpr_upper"].idxmax()]
        capped = (open_["state"] == _validity.UNDECIDED).all()
        limited = bool(open_.get("pool_limited", pd.Series(False, index=open_.index)).all())
        head = ("undecided: the pool's own sampling error is too large for either verdict; "
                "more simulations cannot decide it, a pool with more seeds can" if limited
                else "undecided (cap reached)" if capped else
                "not shown valid (more simulations, up to --max-sims "
                f"{rule.max_sims}, may settle it)")
        return Verdict(False, f"{head}: false-positive rate {_pct(w['fpr_rate'])} at k = "
                       f"{int(w['k'])} has upper bound {_pct(w['fpr_upper'])} > alpha + "
                       f"tolerance = {_pct(limit)} after {int(w['fpr_n'])} simulations, and "
                       f"is not shown above alpha", max_fpr, fpr_upper, ks,
                       pending=not capped and not limited)
    return Verdict(True, f"false-positive rate <= {_pct(limit)} at every k measured "
                   f"({len(ks)} between {min(ks)} and {max(ks)}; largest upper bound "
                   f"{_pct(fpr_upper)} at k = {int(worst['k'])})", max_fpr, fpr_upper, ks)


def _pct(x: float) -> str:
    return f"{100 * float(x):.1f}%"


def _label(target: float) -> str:
    return f"k_power_{round(100 * target):d}"


def _points(rows: pd.DataFrame) -> dict[int, Point]:
    return {int(r.k): Point(float(r.rate), float(r.rate_low), float(r.rate_high))
            for r in rows.itertuples()}


def _double(k: int, _point: Point) -> int:
    return 2 * k


def _k_text(c, points, floor, cap, null_ks, *, within: bool, first_only: bool) -> str:
    """A k answer in words or as a number (see :func:`seed_budget`)."""
    if c.at is None:
        if first_only:
            return "not reached: it reads the first run only, so no k helps"
        if within:
            return f"not reached by k = {cap}"
        return f"not reached within the k tried (up to {c.top})"
    if c.at > floor and c.at - 1 not in points:
        return f"<= {c.at} (smaller k not tried)"
    if c.at not in null_ks:
        return f"{c.at} (false-positive rate not measured at this k)"
    return str(c.at)


def seed_budget(calibration: pd.DataFrame, *, target_power: float = 0.8, caps=None,
                tolerance: float | None = None, max_sims: int | None = None) -> pd.DataFrame:
    """One row per (setting, protocol, nonzero effect): recommended or not, why, and k.

    A pure function of the calibration frame: it reads the cells there (run
    :func:`search_budget` first to add the cells the k search needs).

    Parameters
    ----------
    calibration : pandas.DataFrame
        ``calibrate`` rows (with ``null_params``; ``pool_low``/``pool_high`` optional).
    target_power : float
        Power the ``k_needed`` columns answer for (fraction).
    caps : dict or int or None
        Largest k of the search per ``generator_params`` (or for all): "not reached by
        k = CAP" once the cap is measured; without it "not reached within the k tried".
    tolerance : float or None
        Of the validity rule; default alpha / 5.
    max_sims : int or None
        Cap of the validity rule's sequential stop (default 16 times the frame's smallest
        ``sims``, its first look).

    Returns
    -------
    pandas.DataFrame
        Columns ``generator, generator_params, protocol, effect_pp, null_params,
        recommended`` (yes/no), ``why, max_fpr, fpr_upper, target_power, k_needed`` (a number
        or words), ``k_needed_low, k_needed_high`` (the k range over which the power's
        Wilson interval straddles the target; NaN when not known), and ``k_power_80``,
        ``k_power_90`` (numbers or words).
    """
    rows = []
    targets = sorted({*POWER_TARGETS, float(target_power)})
    keys = ["generator", "generator_params", "protocol"]
    first = int(calibration["sims"].min()) if len(calibration) else 1
    for (generator, params, protocol), part in calibration.groupby(keys, sort=True):
        alpha = float(part["alpha"].iloc[0])
        tol = default_tolerance(alpha) if tolerance is None else tolerance
        null_params = part["null_params"].iloc[0] if "null_params" in part else params
        rule = ValidityRule.make(alpha, first, tolerance=tol, max_sims=max_sims)
        v = verdict(calibration, generator, null_params, protocol, alpha, tol, rule=rule)
        cap = caps.get(params) if isinstance(caps, dict) else caps
        cls = protocols.protocol_class(protocol)
        floor = cls.min_k
        for effect, cells in part[part["effect_pp"] != 0].groupby("effect_pp", sort=True):
            points = _points(cells)
            row = {"generator": generator, "generator_params": params, "protocol": protocol,
                   "effect_pp": effect, "null_params": null_params,
                   "recommended": "yes" if v.recommended else "no", "why": v.why,
                   "max_fpr": v.max_fpr, "fpr_upper": v.fpr_upper,
                   "target_power": float(target_power)}
            for target in targets:
                c = crossing(points, target, floor, cap or max(points), _double)
                within = cap is not None and c.complete
                text = _k_text(c, points, floor, cap, v.null_ks, within=within,
                               first_only=cls.uses_first_seed_only)
                if not v.recommended:
                    text = "not recommended"
                if target == float(target_power):
                    row["k_needed"] = text
                    ok = v.recommended and c.at is not None
                    row["k_needed_low"] = c.low if ok and c.low is not None else math.nan
                    row["k_needed_high"] = c.high if ok and c.high is not None else math.nan
                if target in POWER_TARGETS:
                    row[_label(target)] = text
            if v.recommended and "not measured" in row["k_needed"]:
                row["recommended"] = "no"
                row["why"] = "false-positive rate not measured at the k it would need"
            rows.append(row)
    columns = ["generator", "generator_params", "protocol", "effect_pp", "null_params",
               "recommended", "why", "max_fpr", "fpr_upper", "target_power", "k_needed",
               "k_needed_low", "k_needed_high"] + [_label(t) for t in POWER_TARGETS]
    return pd.DataFrame(rows, columns=columns)


def null_generator(generator, by_setting: dict):
    """The generator whose effect-0 cells validate ``generator``'s protocols (``None``: no
    such setting exists)."""
    setting = generator.null_setting()
    if setting is None:
        return None
    if setting == generator.describe():
        return generator
    if setting in by_setting:
        return by_setting[setting]
    return generators.get(generator.name, **decode(setting))


#: the columns :func:`sim.grid.run_cells` sorts its rows by (stable)
_ROW_ORDER = ["generator_params", "protocol", "k", "effect_pp"]


def _row_key(name, params, protocol, protocol_params, k, effect_pp, over) -> tuple:
    return (name, params, protocol, protocol_params, int(k), float(effect_pp), over)


def _request_key(request, over) -> tuple:
    g = request.generator
    return _row_key(g.name, g.describe(), request.protocol, request.protocol_params,
                    request.k, request.effect_pp, over)


def sharing_runner(run, siblings):
    """``run`` that scores every protocol the search may ask of a cell when it draws it.

    The search asks for cells one curve at a time: two protocols whose power curves differ
    by Monte Carlo noise ask for the same (k, effect) in different rounds, and the
    sequential stop extends their null cells in different passes, so the same experiments
    would be drawn again for each (38% of the draws of ``--generator question_mixture --k
    8``). A protocol's row does not depend on which others are scored on the cell (each
    has its own resampling stream, :func:`sim.grid.protocol_rng`), so the protocols of
    ``siblings(request)`` are scored along with the first request for the cell and their
    rows held back until asked for. The rows returned, and so the search's path, are
    exactly those of ``run`` alone.

    Parameters
    ----------
    run : callable
        ``run(requests, **overrides) -> frame`` (:func:`sim.calibration.cells_runner`).
    siblings : callable
        ``siblings(request) -> iterable of CellRequest``: the cell's other requests worth
        scoring at once (they must be able to run on it).
    """
    held = {}

    def shared(requests, **over):
        over_key = tuple(sorted(over.items()))
        wanted = list(dict.fromkeys(requests))  # run_cells computes a duplicate once
        todo = [r for r in wanted if _request_key(r, over_key) not in held]
        if todo:
            asked = set(todo)
            extra = {s for r in todo for s in siblings(r)
                     if s not in asked and _request_key(s, over_key) not in held}
            frame = run(todo + sorted(extra, key=_request_order), **over)
            for i, row in enumerate(frame.itertuples(index=False)):
                held[_row_key(row.generator, row.generator_params, row.protocol,
                              row.protocol_params, row.k, row.effect_pp, over_key)] = (
                    frame.iloc[i:i + 1])
        rows = [held[_request_key(r, over_key)] for r in wanted]
        if not rows:
            return run([], **over)
        return pd.concat(rows, ignore_index=True).sort_values(
            _ROW_ORDER, kind="stable", ignore_index=True)
    return shared


def _request_order(r):
    return (r.generator.describe(), r.protocol, r.protocol_params, r.k, r.effect_pp)


def search_budget(calibration: pd.DataFrame, chosen, *, caps: dict, target_power: float,
                  tolerance: float | None, run, max_sims: int | None = None,
                  seed: int | None = None) -> pd.DataFrame:
    """Add the cells the k search needs to ``calibration`` (see the module docstring).

    Parameters
    ----------
    calibration : pandas.DataFrame
        The requested grid, all generators together.
    chosen : list of Generator
        The generators of the frame.
    caps : dict
        ``generator_params`` -> largest k to search.
    target_power : float
    tolerance : float or None
    run : callable
        ``run(requests) -> frame`` computing :class:`sim.grid.CellRequest` cells (cached),
        e.g. :func:`sim.grid.run_cells` with the run's options (it must take ``sims``,
        ``seed`` and ``pool_reps`` overrides: the sequential stop's chunks).
    max_sims : int or None
        Cap of the validity rule's sequential stop (default 16 times the first look).
    seed : int or None
        Root seed (default the frame's): names the sequential stop's chunks.

    Returns
    -------
    pandas.DataFrame
        ``calibration`` plus the searched cells, marked ``searched = True``; borderline null
        cells carry the simulations the sequential stop added (``sims``, ``fpr_looks``,
        ``fpr_p_min``; :func:`sim.validity.extend_null_cells`).
    """
    frame = calibration.assign(searched=False)
    by_setting = {g.describe(): g for g in chosen}
    targets = sorted({*POWER_TARGETS, float(target_power)})
    asked = set()  # null cells asked for once (a guard: each is computed once)
    first = int(calibration["sims"].min())
    seed = int(calibration["seed"].min()) if seed is None else int(seed)

    def rule_of(alpha):
        return ValidityRule.make(alpha, first, tolerance=tolerance, max_sims=max_sims)

    # (generator setting) -> the protocols searched on it so far, with their parameters and
    # objects: a cell drawn for one of them is scored for all (sharing_runner)
    searched = {}

    def siblings(request):
        g = request.generator
        if g.from_pool:
            return ()  # a pool's rows may carry per-request extras (--pool-method halves)
        return [CellRequest(g, name, params, request.k, request.effect_pp)
                for name, params, obj in searched.get(g.describe(), ())
                if g.why_not(obj, request.k) is None]

    run = sharing_runner(run, siblings)

    def groups(current):
        """(generator, protocol, its rows, tolerance) of every honest protocol searched."""
        keys = ["generator", "generator_params", "protocol"]
        for (name, params, protocol), part in current.groupby(keys, sort=True):
            if params not in by_setting or not is_reportable(protocol, name):
                continue  # a null pool measured for another setting, or a pitfall
            alpha = float(part["alpha"].iloc[0])
            yield by_setting[params], protocol, part, (
                default_tolerance(alpha) if tolerance is None else tolerance)

    def curves(current):
        # Only a recommended protocol is searched (the verdict may change as null cells
        # are added), or one whose null cells await the sequential stop's next look: it
        # usually ends valid, and searching on meanwhile saves a round.
        for g, protocol, part, tol in groups(current):
            alpha = float(part["alpha"].iloc[0])
            v = verdict(current, g.name, part["null_params"].iloc[0], protocol, alpha, tol,
                        rule=rule_of(alpha))
            if not (v.recommended or v.pending):
                continue
            cls = protocols.protocol_class(protocol)
            if cls.uses_first_seed_only:
                continue  # its power does not change with k: no k to search for
            floor = cls.min_k
            pparams = part["protocol_params"].iloc[0]
            mine = searched.setdefault(g.describe(), [])
            if all(name != protocol or params != pparams for name, params, _ in mine):
                mine.append((protocol, pparams, protocols.get(protocol, **decode(pparams))))
            for effect in sorted(set(part.loc[part["effect_pp"] != 0, "effect_pp"])):
                for target in targets:
                    yield Curve(g, protocol, part["protocol_params"].iloc[0], target,
                                caps[g.describe()], effect_pp=float(effect), floor=floor,
                                alpha=alpha)

    def null_cells(current, requests):
        # The effect-0 cell of every k the budget reports: the requested grid's k, and each
        # curve's crossing once its bisection has found it (a real pool's null pool may not
        # have been calibrated at all), measured alongside the walk that brackets it. The k
        # a search passes through on its way only locate the crossing; their false-positive
        # rate would judge advice never given.
        crossings = {}
        measured = MeasuredPoints(current)
        for c in curves(current):
            at = c.crossing(measured).at
            if at is not None and (at <= c.floor or at - 1 in c.points(measured)):
                crossings.setdefault((c.generator.describe(), c.protocol), set()).add(at)
        out = set()
        for g, protocol, part, _ in groups(current):
            null_g = null_generator(g, by_setting)
            if null_g is None:
                continue
            null_params = part["null_params"].iloc[0]
            null_rows = current[(current["generator_params"] == null_params)
                                & (current["protocol"] == protocol)
                                & (current["effect_pp"] == 0)]
            grid = part[(part["effect_pp"] != 0) & ~part["searched"].astype(bool)]
            wanted = set(int(k) for k in grid["k"])
            wanted |= crossings.get((g.describe(), protocol), set())
            pparams = part["protocol_params"].iloc[0]
            for k in wanted - set(int(k) for k in null_rows["k"]):
                if null_g.max_k is not None and k > null_g.max_k:
                    continue  # the null pool is smaller: that k stays unvalidated
                request = CellRequest(null_g, protocol, pparams, int(k), 0.0)
                if request not in asked:
                    asked.add(request)
                    out.add(request)
        return out

    nulls = {}
    for g in chosen:
        null_g = null_generator(g, by_setting)
        if null_g is not None:
            nulls[null_g.describe()] = null_g
    while True:
        # The k search, then the sequential stop on the null cells it left borderline; a
        # protocol the stop shows valid is searched in the next pass.
        found = solve(curves, frame, run=run, also=null_cells, max_rounds=MAX_ROUNDS)
        frame = pd.concat([frame, found], ignore_index=True)
        before = frame["fpr_sims"].sum() if "fpr_sims" in frame else 0
        frame = _validity.extend_null_cells(
            frame, rule_of=rule_of, generator_of=nulls.get, run=run, seed=seed,
            honest=is_reportable)
        if frame["fpr_sims"].sum() == before:
            return frame
