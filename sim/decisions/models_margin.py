"""``models_margin``: non-inferiority and equivalence claims between two fixed models.

Two fixed models answer ``n`` questions (the questions are the sample), one 0/1 run each
or ``runs = 4`` repeats. Each question has a latent type per model, right or wrong, drawn
from a paired 2x2 table whose correlation (phi) is ``rho`` and whose margins put the true
difference of accuracies at exactly ``delta`` (:func:`draw_fixed_models`); a run answers
right with probability ``p_right`` on a right-type question and ``p_wrong`` on a
wrong-type one (1 and 0 for one binary run, where the types are the correctness).

Per cell three data sets are drawn, with ``delta = -margin``, ``0`` and ``+margin``, and
every claim is scored on the same data, for the score tests of
:func:`protocols.claims.models_claim` (``"tango"`` for one binary run, with its critical
value calibrated by exact enumeration, ``"bounded score"`` for repeats) and for the rules
they replace (``"tango asymptotic (old)"``: Tango's test with the normal critical value;
``"newcombe (old)"``: Newcombe's 1 - 2 alpha paired interval; ``"t on deltas (old)"``:
:func:`protocols.claims.question_claim` with a t reference on the run means):

* ``non_inferiority`` rejection: claim shown at ``delta = -margin`` (judged against alpha);
* ``equivalence at -margin`` / ``at +margin`` rejection: shown at either margin;
* ``non_inferiority`` and ``equivalence`` power at ``delta = 0`` (reported).

The base cells use accuracy 0.9 and ``rho = 0.9`` at a 1 pp margin; at 5 pp ``rho = 0.5``
(0.9 is not reachable with margins 0.9 and 0.85 or 0.95). The stress cells (accuracy 0.5,
``rho = 0.9``, 5 pp) are where the old Newcombe rule claimed non-inferiority in 10.8% of
experiments at n = 100 (20,000 sims); with repeats they use ``rho = 0.8`` (the latent
margins 0.29 and 0.22 allow at most 0.82).
"""

from __future__ import annotations

import math

import numpy as np

from evalcal_core.designs import COMPARE_MODELS, MODELS, Design
from evalcal_core.validate import check_int, check_number, fail
from protocols import claims
from protocols.analysis import designs
from protocols.methods.mcnemar import newcombe_paired_interval
from sim.end_to_end import GATE, Sample, tidy

NAME = "models_margin"
DESIGN = MODELS

#: level of each one-sided test of every claim scored here
ALPHA = 0.05
#: experiments per vectorized chunk (bounds memory: runs x n x chunk scores per model)
CHUNK = 1000
#: per-run accuracy on right- and wrong-type questions with repeats (spread within a
#: question, so runs disagree); one binary run uses 1 and 0
_REPEATS = {"runs": 4, "p_right": 0.98, "p_wrong": 0.3}
_ONE_RUN = {"runs": 1, "p_right": 1.0, "p_wrong": 0.0}

CELLS = [
    {**design, "n": n, "margin": margin, "accuracy": 0.9, "rho": 0.9 if margin < 0.05 else 0.5}
    for design in (_ONE_RUN, _REPEATS)
    for margin in (0.01, 0.05)
    for n in (30, 100, 1000)
] + [
    {**design, "n": n, "margin": 0.05, "accuracy": 0.5, "rho": rho}
    for design, rho in ((_ONE_RUN, 0.9), (_REPEATS, 0.8))
    for n in (30, 100, 1000)
] + [
    # Tango's size at the margin at n = 50 and 75 (n = 100 is above), where its normal
    # critical value rejected 5.2-5.6% by exact enumeration
    {**_ONE_RUN, "n": n, "margin": margin, "accuracy": accuracy, "rho": rho}
    for margin, accuracy, rho in ((0.01, 0.9, 0.9), (0.05, 0.5, 0.9))
    for n in (50, 75)
]

QUICK_CELLS = [
    {**_ONE_RUN, "n": 100, "margin": 0.05, "accuracy": 0.5, "rho": 0.9},
    {**_REPEATS, "n": 100, "margin": 0.01, "accuracy": 0.9, "rho": 0.9},
]


def type_table(p_base: float, p_variant: float, rho: float) -> np.ndarray:
    """The paired 2x2 table with margins ``p_base``, ``p_variant`` and phi ``rho``.

    Returns
    -------
    ndarray, shape (4,)
        Probabilities of (both right, base only, variant only, neither), fractions.

    Raises
    ------
    ValueError
        When no table has these margins and correlation (a cell would be negative).
    """
    p11 = p_base * p_variant + rho * math.sqrt(
        p_base * (1 - p_base) * p_variant * (1 - p_variant))
    table = np.array([p11, p_base - p11, p_variant - p11, 1 - p_base - p_variant + p11])
    if (table < -1e-12).any():
        raise fail("rho", f"a correlation that margins {p_base:g} and {p_variant:g} allow "
                          "(every cell of the 2x2 table >= 0)", rho, "type_table")
    return np.clip(table, 0.0, 1.0) / np.clip(table, 0.0, 1.0).sum()


def draw_fixed_models(sims: int, n: int, runs: int, accuracy: float, delta: float,
                      rho: float, rng, *, p_right: float = 1.0, p_wrong: float = 0.0):
    """Scores of two fixed models whose true accuracies differ by exactly ``delta``.

    Each question's latent types (right/wrong per model) come from :func:`type_table` with
    base margin ``(accuracy - p_wrong) / (p_right - p_wrong)`` and variant margin that plus
    ``delta / (p_right - p_wrong)``; each run is right with probability ``p_right`` on a
    right-type question, ``p_wrong`` otherwise. So the expected accuracies are ``accuracy``
    and ``accuracy + delta`` exactly.

    Parameters
    ----------
    sims, n, runs : int
        Experiments, questions, runs per model.
    accuracy : float
        The baseline's expected accuracy (fraction).
    delta : float
        The variant's minus the baseline's (fraction: -0.01 = -1 pp).
    rho : float
        Correlation of the two models' latent types over questions.
    rng : numpy.random.Generator
    p_right, p_wrong : float
        Per-run accuracy on right- and wrong-type questions, ``p_wrong < p_right``.

    Returns
    -------
    base, variant : ndarray of float, shape (sims, runs, n)
        0/1 scores.
    """
    owner = "draw_fixed_models"
    sims = check_int(sims, "sims", owner, low=1)
    n = check_int(n, "n", owner, low=2)
    runs = check_int(runs, "runs", owner, low=1)
    p_wrong = check_number(p_wrong, "p_wrong", owner, low=0.0, high=1.0)
    p_right = check_number(p_right, "p_right", owner, low=p_wrong, high=1.0, low_open=True)
    scale = p_right - p_wrong
    p_base = (check_number(accuracy, "accuracy", owner) - p_wrong) / scale
    p_variant = p_base + check_number(delta, "delta", owner) / scale
    for name, p in (("accuracy", p_base), ("delta", p_variant)):
        if not 0.0 <= p <= 1.0:
            raise fail(name, f"such that both models' accuracies lie in [{p_wrong:g}, "
                             f"{p_right:g}]", accuracy if name == "accuracy" else delta, owner)
    table = type_table(p_base, p_variant, check_number(rho, "rho", owner, low=-1, high=1))
    rng = np.random.default_rng(rng)
    kind = rng.choice(4, size=(sims, 1, n), p=table)
    right_b = (kind == 0) | (kind == 1)
    right_v = (kind == 0) | (kind == 2)
    if p_right == 1.0 and p_wrong == 0.0:
        return (np.broadcast_to(right_b, (sims, runs, n)).astype(float),
                np.broadcast_to(right_v, (sims, runs, n)).astype(float))
    base = rng.random((sims, runs, n)) < np.where(right_b, p_right, p_wrong)
    variant = rng.random((sims, runs, n)) < np.where(right_v, p_right, p_wrong)
    return base.astype(float), variant.astype(float)


def _intervals(base, variant, margin):
    """``{rule: (estimate, 1 - 2 alpha CI low, high)}`` on one chunk, the new rule first."""
    binary = base.shape[-2] == 1
    new = margin_claim(base, variant, "equivalence", margin)
    out = {"tango" if binary else "bounded score": (new.estimate, new.ci_low, new.ci_high)}
    if binary:
        b0, v0 = base[..., 0, :], variant[..., 0, :]
        # Tango's normal critical value, before the exact calibration of its size
        asym = claims.paired_proportion_claim(b0, v0, "equivalence", margin, ALPHA,
                                              exact_size=False)
        out["tango asymptotic (old)"] = (asym.estimate, asym.ci_low, asym.ci_high)
        a = ((b0 == 1) & (v0 == 1)).sum(-1)
        b = ((b0 == 1) & (v0 == 0)).sum(-1)
        c = ((b0 == 0) & (v0 == 1)).sum(-1)
        # mcnemar prints a two-sided (1 - level) interval: 2 alpha gives the 1 - 2 alpha CI
        low, high = newcombe_paired_interval(a, b, c, b0.shape[-1] - a - b - c, 2 * ALPHA)
        out["newcombe (old)"] = ((c - b) / b0.shape[-1], low, high)
    else:
        r = claims.question_claim(variant.mean(-2) - base.mean(-2), "equivalence", margin,
                                  ALPHA, reference="t")
        out["t on deltas (old)"] = (r.estimate, r.ci_low, r.ci_high)
    return out


def claim_verdict(base, variant, claim: str, margin: float) -> np.ndarray:
    """Each experiment's verdict of ``claim`` at ``margin`` as ``evaluate --design models
    --claim C --margin M`` prints it: :func:`margin_claim` on the runs (Tango's test for one
    0/1 run, the bounded score test on repeats) at :data:`ALPHA`.

    Parameters
    ----------
    base, variant : ndarray, shape (experiments, runs, n)
        0/1 scores (or fractions) of each run on each question.
    claim : str
        ``"non_inferiority"``, ``"equivalence"``, ...
    margin : float
        Fraction (0.02 = 2 pp).

    Returns
    -------
    ndarray of str, shape (experiments,)
        ``"shown"``, ``"refuted"`` or ``"inconclusive"`` (the gate's exit status:
        :data:`protocols.claims.EXIT_STATUS`).
    """
    return margin_claim(base, variant, claim, margin).verdict


def margin_claim(base, variant, claim: str, margin: float):
    """The claim's score test at the margin on a batch of experiments, by the design's hook
    ``evaluate``'s comparisons call (:meth:`protocols.analysis.designs.DesignAnalysis.
    margin_claim`: Tango's test for one 0/1 run, the bounded score test otherwise), for
    fixed models with the batch's runs and questions."""
    design = Design(compare=COMPARE_MODELS, runs=base.shape[-2], n_questions=base.shape[-1])
    binary = bool(np.isin(base, (0.0, 1.0)).all() and np.isin(variant, (0.0, 1.0)).all())
    return designs.of(design).margin_claim(base, variant, claim, margin, ALPHA, binary,
                                           design)


#: the true deltas of every cell's three data sets, in units of its margin
_DELTAS = (("low", -1.0), ("zero", 0.0), ("high", 1.0))


def _draw(params: dict, sims: int, rng):
    """Chunks of ``sims`` experiments at each of ``delta = -margin, 0, +margin``.

    Yields
    ------
    label : str
        ``"low"``, ``"zero"`` or ``"high"``.
    base, variant : ndarray, shape (chunk, runs, n)
        0/1 scores of one chunk.
    verdicts : dict
        ``{(rule, claim): ndarray of str}``: each experiment's verdict per rule (the new
        rule first) and claim.
    """
    rng = np.random.default_rng(rng)
    margin = float(params["margin"])
    for label, sign in _DELTAS:
        for start in range(0, sims, CHUNK):
            size = min(CHUNK, sims - start)
            base, variant = draw_fixed_models(
                size, params["n"], params["runs"], params["accuracy"], sign * margin,
                params["rho"], rng, p_right=params["p_right"], p_wrong=params["p_wrong"])
            # One interval per old rule; both claims read it (claim_verdict).
            rules = _intervals(base, variant, margin)
            verdicts = {(name, claim): claims.claim_verdict(claim, est, low, high, margin)
                        for name, (est, low, high) in rules.items()
                        for claim in ("non_inferiority", "equivalence")}
            # The new rule as evaluate calls it, once per claim: a non-inferiority claim is
            # refuted by its own one-sided test at -margin, whose calibrated critical value
            # (Tango's, exact size) is not that of equivalence's upper test at +margin
            # (1.84 and 1.70 at n = 100, margin 5 pp: read off the equivalence interval, 9
            # of 100 questions won by the baseline alone was "refuted", evaluate says
            # "inconclusive"). Whether a claim is shown reads the lower bound, equal in both.
            new = next(iter(rules))
            verdicts[(new, "non_inferiority")] = claim_verdict(base, variant,
                                                               "non_inferiority", margin)
            yield label, base, variant, verdicts


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Draw ``sims`` experiments at ``delta = -margin, 0, +margin`` and score the claims.

    Parameters
    ----------
    params : dict
        One of :data:`CELLS`: ``n``, ``runs``, ``margin`` (fraction), ``accuracy``,
        ``rho``, ``p_right``, ``p_wrong``.
    sims : int
        Experiments per true delta, drawn in chunks of :data:`CHUNK`.
    rng : numpy.random.Generator

    Returns
    -------
    list of dict
        Outcomes (see :mod:`sim.decisions`), for the new and the old rule.
    """
    counts, names = {}, []
    for label, _, _, verdicts in _draw(params, sims, rng):
        names = list(dict.fromkeys(name for name, _ in verdicts))
        for (name, claim), verdict in verdicts.items():
            key = (name, claim, label)
            counts[key] = counts.get(key, 0) + int(np.sum(verdict == "shown"))
    out = []
    for name in names:
        rows = [(f"non_inferiority, {name}", "rejection", ("non_inferiority", "low")),
                (f"equivalence at -margin, {name}", "rejection", ("equivalence", "low")),
                (f"equivalence at +margin, {name}", "rejection", ("equivalence", "high")),
                (f"non_inferiority, {name}", "power", ("non_inferiority", "zero")),
                (f"equivalence, {name}", "power", ("equivalence", "zero"))]
        out += [{"decision": decision, "measure": measure, "hits": counts[(name, *key)],
                 "sims": int(sims), "alpha": ALPHA} for decision, measure, key in rows]
    return out


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` experiments of the cell as users' files (:mod:`sim.end_to_end`): a third at
    each true delta (the draws and verdicts of :func:`simulate` with ``ceil(sims / 3)``
    experiments per delta), each the two models' 0/1 scores per run and question, run
    with ``--design models --claim C --margin M --gate``.

    ``C`` is non-inferiority and equivalence by turns over :data:`CELLS` (a file is run
    under one claim); compared: the new rule's verdict (the old rules are not printed) and
    the exit status.
    """
    claim = ("non_inferiority", "equivalence")[CELLS.index(params) % 2]
    frames, verdicts = [], []
    for _, base, variant, rules in _draw(params, -(-sims // 3), rng):
        new = next(iter(rules))[0]
        verdicts.append(rules[(new, claim)])
        frames += [tidy({"base": base[i], "variant": variant[i]}) for i in range(len(base))]
    return claim_sample(frames, np.concatenate(verdicts), claim, float(params["margin"]))


def claim_sample(frames: list, verdict: np.ndarray, claim: str, margin: float) -> Sample:
    """The users' files of two fixed models and the grid's ``verdict`` of ``claim`` at
    ``margin`` for each, as :mod:`sim.end_to_end` runs them: ``evaluate --design models
    --claim CLAIM --margin M``, the comparison's claim and the gate's exit status read back
    from the ``--json`` body."""
    decided = {"claim": verdict,
               GATE: np.vectorize(claims.EXIT_STATUS.get, otypes=[int])(verdict)}
    options = {"design": DESIGN, "claim": claim.replace("_", "-"), "margin": margin}

    def read(body: dict) -> dict:
        return {"claim": body["comparisons"][0]["claim"],
                GATE: body["claim"]["gate_exit_status"]}

    return Sample(frames, options, decided, read)
