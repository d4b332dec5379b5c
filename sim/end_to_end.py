"""What a decision family hands to the end-to-end check (:mod:`reports.end_to_end`).

A family takes part by defining ``sample(params, sims, rng) -> Sample``: the same draws and
the same per-experiment decisions its ``simulate`` scores (both from one function of the
family), each experiment as the tidy table a user would write (:func:`tidy`), the options the
user would type, and how to read the decisions back from ``evaluate``'s ``--json`` body.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: the decision that is the command's exit status (0 shown, 1 refuted, 3 inconclusive)
GATE = "gate"


@dataclass(frozen=True)
class Sample:
    """Some experiments of one cell, as users would bring them.

    Attributes
    ----------
    frames : list of pandas.DataFrame
        One tidy results table per experiment (``seed,arm,metric`` or
        ``seed,arm,question,score`` and any cluster column).
    options : dict
        ``evalcal.compare`` keywords the user types for every experiment of the cell (the
        command's flags are derived from them).
    decisions : dict of str to ndarray
        Per experiment (axis 0), each decision the grid scored on it: booleans (rejected,
        covered, refused, ...) or integers (``"gate"``: the exit status 0/1/3).
    read : callable
        ``read(body) -> dict``: the same decisions of one experiment from ``evaluate``'s
        ``--json`` body.
    """

    frames: list
    options: dict
    decisions: dict
    read: Callable[[dict], dict]


def tidy(arms: dict, *, question_ids=None, clusters=None, cluster_column: str = "topic",
         per_question: bool = True) -> pd.DataFrame:
    """One experiment's scores as the tidy table a user writes.

    Parameters
    ----------
    arms : dict of str to ndarray
        ``{arm: scores}``, each of shape ``(k, n)`` (runs or seeds, questions) per question,
        or ``(k,)`` per seed (``per_question=False``); NaN marks a seed an arm lacks.
    question_ids : sequence, optional
        The questions' labels, in the order they are written (default ``q00000``...).
    clusters : sequence, optional
        Each question's cluster label (written as ``cluster_column``).
    per_question : bool
        ``seed,arm,question,score`` rows (else ``seed,arm,metric``).

    Returns
    -------
    pandas.DataFrame
        Rows arm by arm, seed by seed, question by question.
    """
    parts = []
    for arm, values in arms.items():
        values = np.asarray(values, dtype=float)
        if not per_question:
            keep = ~np.isnan(values)
            parts.append(pd.DataFrame({"seed": np.arange(len(values))[keep], "arm": arm,
                                       "metric": values[keep]}))
            continue
        k, n = values.shape
        ids = (np.array([f"q{q:05d}" for q in range(n)]) if question_ids is None
               else np.asarray(question_ids))
        part = pd.DataFrame({"seed": np.repeat(np.arange(k), n), "arm": arm,
                             "question": np.tile(ids, k), "score": values.reshape(-1)})
        if clusters is not None:
            part[cluster_column] = np.tile(np.asarray(clusters), k)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)
