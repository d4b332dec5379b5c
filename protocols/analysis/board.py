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
    if x.shape[1] < 3:
        raise InvalidParameterError(f"--leaderboard needs at least 3 paired {unit}; got "
                                    f"{x.shape[1]}")
    from tqdm import tqdm

    # a bar on stderr only when it is a terminal (tqdm's disable=None) and only after 1 s:
    # 500 systems take seconds, not the minutes of --correction on 124,750 pairs
    # (2^n sign vectors are enumerated when they number at most DEFAULT_DRAWS)
    draws = min(lb.DEFAULT_DRAWS, 2 ** min(x.shape[1], 62))
    with tqdm(total=draws, desc=f"sign flips over {x.shape[0]} systems' pairs",
              unit="draw", file=sys.stderr, disable=None, delay=1.0, leave=False) as bar:
        board = lb.leaderboard(x, alpha, rng=np.random.default_rng(seed), progress=bar.update)
    return board, unit
