"""Anytime-valid comparisons (:mod:`protocols.streaming`) against peeking, checked after
every item.

Generators (design ``models``: two fixed models, one paired delta per question, in
arrival order):

``binary``
    ``T`` binary questions; the pair is discordant with probability ``discordance``, and
    on a discordant question the variant is the right one with probability ``1/2 + effect
    / (2 discordance)`` (so the mean paired delta is exactly ``effect``).
``uniform``
    seqbench's simulation (Leite, Ospina & Ferraz 2026, ``experiments/configs/
    main_sim_2026-09-25.R``, paired, one seed): per-item losses ``u_i`` and ``u_i - effect
    + e_i``, ``e_i ~ U(-h, h)``, so the paired delta is ``effect + U(-h, h)`` (sd ``h /
    sqrt(3)``); ``h = 0.052`` is their low-noise setting, ``0.173`` the high one.

``topics``
    Questions grouped by topic in the file (``topics`` topics of ``per_topic`` questions,
    each topic's questions contiguous): topic effects ``spread (2 U - 1)`` centred to
    average exactly 0 in every experiment, plus ``effect``, plus ``U(-h, h)`` per question.
    ``arrival="grouped"`` keeps the topics contiguous in file order (the audit's case);
    ``"shuffled"`` reads the same questions in random order. A sequence over questions is
    valid only when they arrive exchangeably, so on grouped files the decision scored is
    the one ``evaluate --cluster topic --stream`` prints: the topics' mean deltas, streamed
    in the order they are complete (:func:`protocols.analysis.stream.cluster_stream`). The
    question-level stream of the grouped file, which ``evaluate`` prints without
    ``--cluster`` beside a warning that it needs random arrival, is scored beside it,
    marked ``(old)``.

Outcomes, for each sequence of :data:`protocols.streaming.METHODS`: the ``1 - alpha``
sequence missing the truth at some look (judged); its three-way decision at the margin
(a false declaration: "better" while ``effect <= M``, "worse" while ``effect >= -M``,
"equivalent" while ``|effect| > M``, seqbench's convention; judged); each claim at the
margin on the ``1 - 2 alpha`` sequence (a false claim where its null holds, judged; power
elsewhere); "0 left the sequence" (judged at effect 0). Beside them, marked ``(old)``, the
same decisions read off a fixed-n t interval recomputed after every item from the second
one (a look with zero variance decides nothing): naive peeking. Where seqbench published a
median stopping n (:data:`SEQBENCH_MEDIAN`), the share of experiments decided by then is
reported (>= 50%: our median is at or below theirs); :func:`stopping_medians` gives the
medians themselves (``python -m sim.decisions.streaming``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.designs import MODELS
from evalcal_core.options import (
    MAX_SIMS,
    add_options,
    check_options,
    config_from_args,
    seed_option,
    sims_option,
)
from evalcal_core.validate import Interval, InvalidParameterError
from protocols.analysis.stream import cluster_stream, stream_sequences
from protocols.claims import EXIT_STATUS
from protocols.streaming import (
    CLAIMS,
    METHODS,
    ConfidenceSequence,
    confidence_sequence,
    decide_claim,
    three_way,
)
from sim.end_to_end import GATE, Sample, tidy

NAME = "streaming"
DESIGN = MODELS
ALPHA = 0.05
#: the margin of every claim and three-way decision (fractions: 2 pp), seqbench's
MARGIN = 0.02
#: items per watched evaluation (seqbench's n_max)
LOOKS = 2000

#: seqbench's published median stopping n of its three-way decision (alpha 5%, margin
#: 0.02, n_max 2,000, paired, one seed, h = 0.052), ``paper/rjournal/data/T2_cost.csv``
#: of castlaboratory/seqbench, by effect and sequence (Hoeffding: 2,000, the cap, at every
#: effect below 0.2)
SEQBENCH_MEDIAN = {0.0: {"betting": 388, "empirical-bernstein": 773},
                   0.01: {"betting": 737, "empirical-bernstein": 1497},
                   0.05: {"betting": 254.5, "empirical-bernstein": 495},
                   0.1: {"betting": 97, "empirical-bernstein": 186},
                   0.2: {"betting": 44, "empirical-bernstein": 83}}
#: the noise of seqbench's setting that :data:`SEQBENCH_MEDIAN` is for
SEQBENCH_H = 0.052

CELLS = ([{"data": "binary", "questions": LOOKS // 2, "discordance": dsc, "effect": e}
          for dsc in (0.2, 0.05) for e in (0.0, -MARGIN, MARGIN, 0.04)]
         + [{"data": "uniform", "questions": LOOKS, "h": h, "effect": e}
            for h in (SEQBENCH_H, 0.173) for e in (0.0, -MARGIN, MARGIN, 0.05)])
#: topics of the grouped-file cells, questions per topic, the topic effects' half-range
#: and the question noise (fractions); -0.15 is the audit's 15 pp regression
TOPICS, PER_TOPIC, TOPIC_SPREAD, TOPIC_H = 30, 20, 0.1, 0.173
CELLS += [{"data": "topics", "topics": TOPICS, "per_topic": PER_TOPIC, "spread": TOPIC_SPREAD,
           "h": TOPIC_H, "effect": e, "arrival": arrival}
          for arrival in ("grouped", "shuffled") for e in (0.0, -MARGIN, -0.15)]
QUICK_CELLS = [{"data": "uniform", "questions": 300, "h": SEQBENCH_H, "effect": MARGIN},
               {"data": "topics", "topics": TOPICS, "per_topic": PER_TOPIC,
                "spread": TOPIC_SPREAD, "h": TOPIC_H, "effect": 0.0, "arrival": "grouped"}]


def _outcome(decision, measure, hits, sims):
    return {"decision": decision, "measure": measure, "hits": int(hits), "sims": int(sims),
            "alpha": ALPHA}


def draw(params: dict, sims: int, rng) -> np.ndarray:
    """``sims`` watched streams of paired deltas, shape ``(sims, questions)``."""
    t, effect = params["questions"], params["effect"]
    if params["data"] == "binary":
        disc = params["discordance"]
        if abs(effect) > disc:
            raise InvalidParameterError(f"effect {effect} needs discordance >= |effect|, "
                                        f"got {disc}")
        discordant = rng.random((sims, t)) < disc
        variant_right = rng.random((sims, t)) < 0.5 + effect / (2.0 * disc)
        # a discordant pair has exactly one right answer: delta +1 or -1
        return np.where(discordant, np.where(variant_right, 1.0, -1.0), 0.0)
    if params["data"] == "uniform":
        h = params["h"]
        if abs(effect) + h > 1.0:
            raise InvalidParameterError(f"effect {effect} + h {h} must stay within [-1, 1]")
        return effect + rng.uniform(-h, h, size=(sims, t))
    if params["data"] == "topics":
        return draw_topics(params, sims, rng)[0]
    raise InvalidParameterError(f"data {params['data']!r} is not a generator of {NAME}; "
                                "allowed: binary, uniform, topics")


def draw_topics(params: dict, sims: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``(deltas, labels)``: ``sims`` files of questions grouped by topic, deltas of shape
    ``(sims, topics * per_topic)`` in file order, and each question's topic, shape
    ``(topics * per_topic,)`` (``arrival="grouped"``: contiguous) or ``(sims, topics *
    per_topic)`` (``"shuffled"``: each file in its own random order)."""
    c, per, h = params["topics"], params["per_topic"], params["h"]
    effect, spread = params["effect"], params["spread"]
    if abs(effect) + 2 * spread + h > 1.0:
        raise InvalidParameterError(f"effect {effect} + 2 spread {spread} + h {h} must stay "
                                    "within [-1, 1]")
    b = spread * (2.0 * rng.random((sims, c)) - 1.0)
    # centred: the topics' effects average exactly 0 in every file
    topic_mean = effect + b - b.mean(axis=1, keepdims=True)
    d = np.repeat(topic_mean, per, axis=1) + rng.uniform(-h, h, size=(sims, c * per))
    labels = np.repeat(np.arange(c), per)
    if params["arrival"] == "grouped":
        return d, labels
    order = np.argsort(rng.random((sims, c * per)), axis=1)
    return np.take_along_axis(d, order, axis=1), labels[order]


def _false_three_way(verdict, effect):
    """A declaration whose statement about ``effect`` is false (seqbench's truth: at
    ``|effect| = M`` "equivalent" is true, "better" and "worse" are false)."""
    return (((verdict == "better") & (effect <= MARGIN))
            | ((verdict == "worse") & (effect >= -MARGIN))
            | ((verdict == "equivalent") & (abs(effect) > MARGIN)))


def _claim_null(claim, effect) -> bool:
    """Whether ``claim``'s null hypothesis holds at ``effect`` (its false claims judged)."""
    return {"superiority": effect <= MARGIN, "non-inferiority": effect <= -MARGIN,
            "equivalence": abs(effect) >= MARGIN}[claim]


class PeekingT:
    """The fixed-n t interval recomputed after every item (not a confidence sequence):
    the same :meth:`sides` as a sequence, so the same decision code reads it."""

    def __init__(self, d: np.ndarray, alpha: float):
        n = np.arange(1, d.shape[-1] + 1, dtype=float)
        mean = np.cumsum(d, axis=-1) / n
        with np.errstate(divide="ignore", invalid="ignore"):
            var = (np.cumsum(d * d, axis=-1) - n * mean**2) / (n - 1)
            half = stats.t.ppf(1 - alpha / 2, np.maximum(n - 1, 1)) * np.sqrt(var / n)
        decided = (n >= 2) & (var > 1e-12)
        self.low = np.where(decided, mean - half, -np.inf)
        self.high = np.where(decided, mean + half, np.inf)

    def empty_after(self, locate: bool = True) -> np.ndarray:
        """Never: each look's interval stands alone (no running intersection)."""
        return np.zeros(self.low.shape[:-1], dtype=np.int64)

    def sides(self, value):
        """``(under, over)`` at each look, running (a peeker stops at the first)."""
        return (np.logical_or.accumulate(self.low > value, axis=-1),
                np.logical_or.accumulate(self.high < value, axis=-1))

    #: where ``value`` first left, read off :meth:`sides` as a sequence's is
    decision = ConfidenceSequence.decision


def stream_decisions(cs, cs_claims, effect: float) -> dict:
    """Each stream's decisions on one sequence (or on :class:`PeekingT`), arrays over the
    streams: the ``1 - alpha`` sequence covering ``effect`` at every look (``"covered"``),
    ``0`` leaving it (``"0 left"``, and the look where it did, ``"0 left at"``, 0: never),
    its running intersection emptying (``"emptied"``), the three-way decision at the
    margin (``"three-way false"``: a false declaration, ``"three-way stopped"``: its look)
    and, per claim of :data:`CLAIMS` at the margin on the ``1 - 2 alpha`` sequence
    ``cs_claims``, its verdict (``"<claim>"``), the look it was reached at (``"<claim>
    at"``, 0: never) and whether that sequence's intersection emptied (``"<claim>
    emptied"``)."""
    under, over = cs.sides(effect)
    way = three_way(cs, MARGIN)
    stopped, _ = cs.decision(0.0)
    out = {"covered": ~(under | over).any(axis=-1),
           "three-way false": _false_three_way(way.verdict, effect),
           "three-way stopped": way.stopped_at,
           "0 left": stopped > 0, "0 left at": stopped,
           "emptied": cs.empty_after(False) > 0}
    for claim in CLAIMS:
        # as evaluate decides it: inconclusive where the running intersection emptied
        verdict = decide_claim(cs_claims, claim, MARGIN, locate=False)
        out[claim] = verdict.verdict
        out[f"{claim} at"] = verdict.stopped_at
        out[f"{claim} emptied"] = verdict.empty_after > 0
    return out


def _score(name, decided, effect, sims, seqbench=None):
    """Every outcome of one sequence (or of peeking) on the cell's streams, from its
    :func:`stream_decisions`."""
    measure0 = "rejection" if effect == 0 else "power"
    out = [_outcome(f"{name}: misses the truth at some look", "rejection",
                    (~decided["covered"]).sum(), sims),
           _outcome(f"{name}: three-way at {100 * MARGIN:g} pp, false declaration",
                    "rejection", decided["three-way false"].sum(), sims)]
    if seqbench is not None:
        stopped = decided["three-way stopped"]
        done = (stopped > 0) & (stopped <= seqbench)
        out.append(_outcome(f"{name}: three-way decided by look {int(seqbench)} "
                            f"(seqbench median {seqbench:g})", "power", done.sum(), sims))
    for claim in CLAIMS:
        out.append(_outcome(f"{name}: {claim} at {100 * MARGIN:g} pp shown",
                            "rejection" if _claim_null(claim, effect) else "power",
                            (decided[claim] == "shown").sum(), sims))
    out.append(_outcome(f"{name}: stop when 0 leaves", measure0, decided["0 left"].sum(),
                        sims))
    return out


def _decide(d, method: str, effect: float) -> dict:
    """:func:`stream_decisions` of ``method``'s sequences (``1 - alpha`` and, for the
    claims, ``1 - 2 alpha``) on the streams ``d`` (units in arrival order), built by the
    function ``evaluate --stream`` builds them with
    (:func:`protocols.analysis.stream.stream_sequences`)."""
    return stream_decisions(*stream_sequences(d, ALPHA, method), effect)


def _score_all(name, d, effect, sims, median=None, old=False):
    """Every sequence's outcomes on the streams ``d`` (units in arrival order)."""
    out = []
    for method in METHODS:
        out += _score(f"{method} sequence{name}", _decide(d, method, effect), effect, sims,
                      None if median is None else median[method])
    return [dict(o, decision=o["decision"] + " (old)") for o in out] if old else out


def _streams(params: dict, sims: int, rng):
    """``(d, labels, units)``: the cell's files as :func:`draw` / :func:`draw_topics` draw
    them (``labels``: each question's topic, None off the topic cells) and the streams
    ``evaluate`` reads on them in arrival order (``units``): the topics' means, complete
    topics first, on topic-grouped files (``--cluster``), else the questions."""
    if params["data"] != "topics":
        d = draw(params, sims, rng)
        return d, None, d
    d, labels = draw_topics(params, sims, rng)
    if params["arrival"] == "shuffled":
        return d, labels, d
    return d, labels, cluster_stream(d, labels)[0]


def _simulate_topics(params: dict, sims: int, rng) -> list[dict]:
    """The topic cells: on grouped files the topics streamed (``--cluster``) and, marked
    old, the questions in file order; on shuffled files the questions in file order."""
    d, _, units = _streams(params, sims, rng)
    effect = params["effect"]
    if params["arrival"] == "shuffled":
        return _score_all(" over questions in random file order", units, effect, sims)
    return (_score_all(" over topics (--cluster, complete topics in file order)", units,
                       effect, sims)
            + _score_all(" over questions of a topic-grouped file (no --cluster; evaluate "
                         "warns)", d, effect, sims, old=True))


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Score the streaming decisions on ``sims`` evaluations watched after every item."""
    if params["data"] == "topics":
        return _simulate_topics(params, sims, rng)
    d, _, _ = _streams(params, sims, rng)
    effect = params["effect"]
    median = (SEQBENCH_MEDIAN.get(effect) if params["data"] == "uniform"
              and params.get("h") == SEQBENCH_H and params["questions"] == LOOKS else None)
    out = _score_all("", d, effect, sims, median)
    peeking = stream_decisions(PeekingT(d, ALPHA), PeekingT(d, 2 * ALPHA), effect)
    out += [dict(o, decision=o["decision"] + " (old)") for o in
            _score("peeking t interval after every item", peeking, effect, sims)]
    return out


def _reading(params: dict) -> tuple[str, str]:
    """The sequence (``--stream-method``) and the claim (``--claim``) a cell's sampled
    files are read with: one pair per cell (a user types one), taken in turn along
    :data:`CELLS` (then :data:`QUICK_CELLS`), so that the cells cover every pair."""
    cells = CELLS + QUICK_CELLS
    i = cells.index(params) if params in cells else 0
    return METHODS[i % len(METHODS)], CLAIMS[(i // len(METHODS)) % len(CLAIMS)]


def sample(params: dict, sims: int, rng) -> Sample:
    """``sims`` of the cell's evaluations as users' files (:mod:`sim.end_to_end`), read with
    ``--stream --stream-method METHOD --claim CLAIM --margin 0.02 --gate`` (:func:`_reading`);
    the same draws and decisions as :func:`simulate` (:func:`stream_decisions`).

    Each question's scores are ``max(-d, 0)`` (base) and ``max(d, 0)`` (variant), whose
    difference is the drawn delta ``d`` exactly. The questions are written in arrival order
    under ids in a random order (a stream must not be sorted by id), except on the shuffled
    topic cells, where the rows are grouped by topic and a column ``t`` gives the arrival
    order (``--order-by t``); on the grouped topic cells each question's topic is in a
    ``topic`` column (``--cluster topic``: the topics streamed).

    Compared: the ``1 - alpha`` sequence covering the true effect (its last interval, a
    running intersection, holds it: ``low``/``high``), the look where ``0`` left it
    (``stopped_at``), its intersection emptying, the claim's look (``decided_at``) and its
    sequence emptying, and the claim's verdict as the exit status (``"gate"``). Not
    compared: the three-way decision and the seqbench stopping looks (``evaluate`` prints
    neither), the peeking t interval and the question-level stream of a topic-grouped file
    (``(old)``: not printed as a decision)."""
    d, labels, units = _streams(params, sims, rng)
    method, claim = _reading(params)
    effect = float(params["effect"])
    decided = _decide(units, method, effect)
    # the ids' order: a stream spawned off rng, so the draws above are simulate's
    layout = rng.spawn(1)[0]
    n = d.shape[-1]
    options = {"stream": True, "stream_method": method, "claim": claim, "margin": MARGIN}
    shuffled = params["data"] == "topics" and params["arrival"] == "shuffled"
    if shuffled:
        options["order_by"] = "t"
    elif labels is not None:
        options["cluster"] = "topic"
    frames = []
    for i in range(sims):
        delta = d[i]
        ids = np.array([f"q{q:05d}" for q in layout.permutation(n)])
        rows, topics = np.arange(n), None
        if shuffled:
            # rows grouped by topic; t is each question's place in the stream
            rows = np.argsort(labels[i], kind="stable")
            delta, ids = delta[rows], ids[rows]
        elif labels is not None:
            topics = np.array([f"t{c:02d}" for c in labels])
        frame = tidy({"base": np.maximum(-delta, 0.0)[None],
                      "variant": np.maximum(delta, 0.0)[None]}, question_ids=ids,
                     clusters=topics)
        if shuffled:
            frame["t"] = np.tile(rows, 2)
        frames.append(frame)

    def read(body: dict) -> dict:
        s = body["stream"]
        empty = s["intersection_empty_after"] > 0
        return {"covered": (not empty) and s["low"] <= effect <= s["high"],
                "0 left at": s["stopped_at"], "emptied": empty,
                f"{claim} at": s["claim"]["decided_at"],
                f"{claim} emptied": s["claim"]["intersection_empty_after"] > 0,
                GATE: body["claim"]["gate_exit_status"]}

    compared = {k: decided[k] for k in ("covered", "0 left at", "emptied", f"{claim} at",
                                        f"{claim} emptied")}
    compared[GATE] = np.array([EXIT_STATUS[v] for v in decided[claim]])
    return Sample(frames, options, compared, read)


def stopping_times(effect: float, sims: int = 2000, *, rng=None, looks: int = LOOKS,
                   h: float = SEQBENCH_H) -> dict:
    """The look at which the three-way decision at the margin stops (``looks`` when it
    never does), per sequence, on ``sims`` of seqbench's ``uniform`` streams (alpha 5%,
    margin 2 pp): ``{method: ndarray of shape (sims,)}``, the same streams for both."""
    d = draw({"data": "uniform", "questions": looks, "h": h, "effect": effect}, sims,
             np.random.default_rng(rng))
    out = {}
    for method in METHODS:
        stop = three_way(confidence_sequence(d, ALPHA, method), MARGIN).stopped_at
        out[method] = np.where(stop > 0, stop, looks)
    return out


def stopping_medians(effects=tuple(SEQBENCH_MEDIAN), sims: int = 2000, *, rng=None,
                     looks: int = LOOKS, h: float = SEQBENCH_H) -> dict:
    """Median stopping look of :func:`stopping_times`, ``{effect: {method: median}}``.

    Parameters
    ----------
    effects : sequence of float
        Mean paired deltas (fractions).
    sims : int
        Watched evaluations per effect.
    rng : numpy.random.Generator, int or None
        Split into one child stream per effect (``SeedSequence.spawn``).
    looks, h : int, float
        Items per evaluation (the cap) and the noise half-width (fractions).
    """
    seed = np.random.default_rng(rng).bit_generator.seed_seq
    return {effect: {m: float(np.median(t)) for m, t in
                     stopping_times(effect, sims, rng=child, looks=looks, h=h).items()}
            for effect, child in zip(effects, seed.spawn(len(effects)))}


@dataclass(frozen=True)
class StreamingOptions:
    """What ``python -m sim.decisions.streaming`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`), checked when built."""

    sims: int = sims_option(2000, constraint=Interval("int", 10, MAX_SIMS),
                            help="evaluations per effect (2000)")
    seed: int = seed_option()

    def __post_init__(self):
        check_options(self)


def build_parser() -> ArgumentParser:
    """The options of :class:`StreamingOptions`, as declared there."""
    return add_options(ArgumentParser(
        prog="python -m sim.decisions.streaming",
        description="Median stopping n of the three-way decision at a 2 pp margin on "
                    "seqbench's setting, beside its published figures."), StreamingOptions)


def main(argv=None) -> int:
    """Print the median stopping looks beside seqbench's published ones (Markdown)."""
    config = config_from_args(StreamingOptions, build_parser().parse_args(argv))
    sims = config.sims
    medians = stopping_medians(sims=sims, rng=config.seed)
    print(f"| effect | {' | '.join(f'{m} (seqbench)' for m in METHODS)} |")
    print("|---|" + "---|" * len(METHODS))
    for effect, row in medians.items():
        cells = [f"{row[m]:g} ({SEQBENCH_MEDIAN[effect][m]:g})" for m in METHODS]
        print(f"| {effect:g} | {' | '.join(cells)} |")
    print(f"{sims:,} evaluations per effect, {LOOKS:,} items at most, h = {SEQBENCH_H}, "
          f"margin {MARGIN}, alpha {ALPHA}")
    return 0


if __name__ == "__main__":
    run_main(main, "python -m sim.decisions.streaming")
