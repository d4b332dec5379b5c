"""Plausibility checks on scores: every score a value its metric can take.

Shared by the tidy-CSV reader (:mod:`evalcal_core.results_io`) and the harness-log readers
(:mod:`evalcal_core.readers`), which is why it is a module of its own below both.
"""

from __future__ import annotations

import numpy as np

from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError

#: scores of a fraction metric (accuracy): the default declared range
FRACTION_RANGE = (0.0, 1.0)
#: largest magnitude a declared metric range may have (keeps differences and sums finite)
MAX_RANGE = 1e12


def check_arm_scores(scores: ArmScores, *, value_range=FRACTION_RANGE, percent: bool = False,
                     declared: bool = False, partial: bool = False) -> ArmScores:
    """``scores`` if every score is a plausible value of its metric, else ``ValueError``.

    The checks of :func:`check_score_arrays`, for any number of arms.

    Parameters
    ----------
    scores : ArmScores
        Scores after scaling (fractions for accuracy).
    value_range : (float, float)
        Valid scores, inclusive (default ``[0, 1]``: a fraction such as accuracy).
    percent : bool
        Whether the scores were read as percentages (``--percent``).
    declared : bool
        Whether ``value_range`` was given by the user (``--metric-range``), which turns off
        the guesses about percentages and 0/1 files.
    partial : bool
        Allow a few non-0/1 scores in a per-question file of otherwise 0/1 scores
        (``--partial-credit``).

    Raises
    ------
    InvalidParameterError
        Naming the arm, the seed (and question), the value and how to fix the file or the
        options.
    """
    per_question = scores.question_ids != ("metric",)
    check_score_arrays([(arm, scores.scores[a]) for a, arm in enumerate(scores.arms)],
                       scores.run_ids, per_question, scores.source,
                       value_range, percent, declared, partial)
    return scores


def check_score_arrays(arrays, seeds, per_question, source, value_range, percent, declared,
                       partial):
    """Raise ``ValueError`` naming the first implausible score of ``arrays``.

    Parameters
    ----------
    arrays : list of (str, ndarray of shape (k, n))
        Each arm's name and scores.
    seeds : sequence
        Run labels of the ``k`` rows.
    per_question : bool
        Whether the columns are questions (else one metric per run).
    source : str
        Where the scores came from, for the message.
    value_range, percent, declared, partial
        As in :func:`check_arm_scores`.
    """
    low, high = value_range
    scores = np.concatenate([np.asarray(a, dtype=float).ravel() for _, a in arrays])
    if not np.isfinite(scores).all():
        raise InvalidParameterError(f"{source}: scores must be finite numbers; "
                                    f"found {_plain(scores[~np.isfinite(scores)][0])}")
    outside = (scores < low) | (scores > high)
    if outside.any():
        arm, seed, question, value = _first(arrays, seeds, per_question,
                                            lambda a: (a < low) | (a > high))
        where = (f"{source}: {arm} seed {seed!r}"
                 + (f", question {question}" if per_question else "")
                 + f": score {_plain(value)} is outside [{_plain(low)}, {_plain(high)}]")
        if declared:
            raise InvalidParameterError(f"{where} (the --metric-range declared)")
        if percent:
            raise InvalidParameterError(f"{where} after reading it as a percentage (--percent)")
        share = outside.mean()
        if (scores <= 100).all() and (scores >= 0).all():
            if share > 0.5:
                raise InvalidParameterError(f"{where}: the scores look like percentages (up to "
                                            f"{_plain(scores.max())}); pass --percent, or declare "
                                            "the metric's range with --metric-range LOW HIGH")
            raise InvalidParameterError(f"{where}: most scores are fractions but "
                                        f"{int(outside.sum())} look like percentages; write every "
                                        "score in one unit")
        raise InvalidParameterError(f"{where}; accuracy-like metrics are fractions in [0, 1]; for "
                                    "another metric declare its range with --metric-range LOW HIGH")
    if percent and not declared and scores.max() <= 0.01 and scores.max() > 0:
        raise InvalidParameterError(f"{source}: --percent was given but every score is at most "
                                    f"1 (already fractions?); drop --percent")
    if per_question and not declared and not partial:
        odd = ~np.isin(scores, (0.0, 1.0))
        if odd.any() and odd.mean() < 0.05:
            arm, seed, question, value = _first(arrays, seeds, per_question,
                                                lambda a: ~np.isin(a, (0.0, 1.0)))
            raise InvalidParameterError(f"{source}: {arm} seed {seed!r}, question {question}: "
                                        f"score {_plain(value)} in a file of 0/1 scores "
                                        f"({int(odd.sum())} of {scores.size} are not 0 or 1); fix "
                                        "them, or pass --partial-credit if partial scores are "
                                        "meant")


def _plain(x) -> str:
    from evalcal_core.validate import plain

    return plain(float(x))


def _first(arrays, seeds, per_question, bad):
    for arm, array in arrays:
        hits = np.argwhere(bad(np.asarray(array)))
        if hits.size:
            i, j = hits[0]
            question = f"#{j + 1}" if per_question else None
            return arm, seeds[i], question, array[i, j]
    raise AssertionError("no bad score")  # pragma: no cover
