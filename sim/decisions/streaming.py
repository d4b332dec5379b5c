"""Anytime-valid comparisons (:mod:`protocols.streaming`) against peeking.

Generator (design ``models``): two fixed models answer ``T`` binary questions one after
another; base correct with probability ``accuracy``; the pair is discordant with
probability ``discordance``, and on a discordant question the variant is the right one with
probability ``1/2 + effect / (2 discordance)`` (so the mean paired delta is exactly
``effect``). The watcher looks after every question.

Outcomes: ``confidence sequence misses the truth at some time`` (judged against alpha: the
sequence's guarantee), ``stop: 0 left the sequence`` (a false stop at effect 0, judged;
power otherwise), and ``peeking t-test every 50 questions (old)`` (what looking at a fixed-n
test does, for contrast).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from evalcal_core.validate import InvalidParameterError
from protocols.streaming import eb_confidence_sequence

NAME = "streaming"
DESIGN = "models"
ALPHA = 0.05
#: questions between two looks of the peeking t-test shown for contrast
PEEK_EVERY = 50

CELLS = [{"questions": t, "accuracy": a, "discordance": dsc, "effect": e}
         for t in (200, 1000) for a, dsc in ((0.7, 0.2), (0.9, 0.05))
         for e in (0.0, 0.03)]
QUICK_CELLS = [CELLS[0]]


def _outcome(decision, measure, hits, sims):
    return {"decision": decision, "measure": measure, "hits": int(hits), "sims": int(sims),
            "alpha": ALPHA}


def simulate(params: dict, sims: int, rng) -> list[dict]:
    """Score the streaming decisions on ``sims`` watched evaluations."""
    t, disc, effect = params["questions"], params["discordance"], params["effect"]
    if abs(effect) > disc:
        raise InvalidParameterError(f"effect {effect} needs discordance >= |effect|, got {disc}")
    base = rng.random((sims, t)) < params["accuracy"]
    discordant = rng.random((sims, t)) < disc
    variant_right = rng.random((sims, t)) < 0.5 + effect / (2.0 * disc)
    # a discordant pair has exactly one right answer: delta +1 or -1
    d = np.where(discordant, np.where(variant_right, 1.0, -1.0), 0.0)
    del base          # concordant pairs add 0 whatever the base answered
    cs = eb_confidence_sequence(d, ALPHA)
    miss = ((cs.low > effect) | (cs.high < effect)).any(axis=-1)
    stopped = cs.first_exclusion(0.0) > 0
    looks = np.arange(PEEK_EVERY, t + 1, PEEK_EVERY)
    csum, csq = np.cumsum(d, axis=-1), np.cumsum(d * d, axis=-1)
    n = looks.astype(float)
    mean = csum[:, looks - 1] / n
    var = (csq[:, looks - 1] - n * mean**2) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = mean / np.sqrt(var / n)
    peek = (np.abs(np.nan_to_num(tstat)) > stats.t.ppf(1 - ALPHA / 2, n - 1)).any(axis=-1)
    measure = "rejection" if effect == 0 else "power"
    return [_outcome("confidence sequence misses the truth at some time", "rejection",
                     miss.sum(), sims),
            _outcome("stop: 0 left the confidence sequence", measure, stopped.sum(), sims),
            _outcome(f"peeking t-test every {PEEK_EVERY} questions (old)", measure,
                     peek.sum(), sims)]
