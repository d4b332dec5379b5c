"""The leaderboard of ``evaluate --leaderboard``: every pair of many systems at once, as
tiers, simultaneous rank intervals and the set of possibly-best systems (numbers:
:mod:`protocols.leaderboard`).

The paired units follow the design: questions of fixed models (each system's mean over its
repeats), seeds of training methods paired by seed, or clusters of questions (each cluster's
mean, so a cluster is one unit). Independent seeds have no pairing to exploit: refused.
"""

from __future__ import annotations

import sys

import numpy as np

from evalcal_core.designs import Design
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError
from protocols import leaderboard as lb

from . import designs


def board_units(scores: ArmScores, design: Design, codes) -> tuple[np.ndarray, str]:
    """``(x, unit)``: each system's score per paired unit, shape (systems, units), as the
    design's :meth:`~.designs.DesignAnalysis.board_units` gives them (refused where the
    design has no paired units)."""
    return designs.of(design).board_units(scores, codes)


def rank_board(scores: ArmScores, design: Design, codes, *, alpha: float, seed: int):
    """The :class:`protocols.leaderboard.Leaderboard` of the arms, and the unit's name."""
    x, unit = board_units(scores, design, codes)
    from tqdm import tqdm

    # a bar on stderr only when it is a terminal (tqdm's disable=None) and only after 1 s:
    # 500 systems take seconds, not the minutes of --correction on 124,750 pairs
    # (2^n sign vectors are enumerated when they number at most DEFAULT_DRAWS)
    draws = min(lb.DEFAULT_DRAWS, 2 ** min(x.shape[1], 62))
    with tqdm(total=draws, desc=f"sign flips over {x.shape[0]} systems' pairs",
              unit="draw", file=sys.stderr, disable=None, delay=1.0, leave=False) as bar:
        board = rank_units(x, alpha=alpha, seed=seed, unit=unit, progress=bar.update)
    return board, unit


def rank_units(x: np.ndarray, *, alpha: float, seed: int, unit: str = "questions",
               progress=None):
    """The leaderboard of the systems' scores per paired unit, as ``evaluate --leaderboard
    --seed SEED`` ranks them once the units are read (:func:`rank_board`; the decision
    grid's board families call it on each drawn board).

    Parameters
    ----------
    x : ndarray, shape (systems, units)
        Each system's score per paired unit (fractions or metric units).
    alpha : float
        Level of the simultaneous decisions.
    seed : int
        The board's sign flips come from ``numpy.random.default_rng(seed)``.
    unit : str
        The units' name, for the error on too few.
    progress : callable or None
        Called with the number of sign draws done.

    Returns
    -------
    protocols.leaderboard.Leaderboard
    """
    if x.shape[1] < 3:
        raise InvalidParameterError(f"--leaderboard needs at least 3 paired {unit}; got "
                                    f"{x.shape[1]}")
    return lb.leaderboard(x, alpha, rng=np.random.default_rng(seed), progress=progress)
