"""Read a user's results from a tidy CSV into aligned score arrays.

Two layouts are accepted:

* per seed: columns ``seed``, ``arm``, ``metric`` (one row per seed and arm);
* per question: columns ``seed``, ``arm``, ``question``, ``score`` (one row per seed, arm and
  question), optionally with a cluster column (``--cluster``).

:func:`read_results_arms` reads any arm names into :class:`~evalcal_core.scores.ArmScores`
(``runs_are="seeds"``) and checks the scores (:func:`check_arm_scores`);
:func:`read_tidy_arms` reads them unchecked, optionally holding the file to given arm names
(``arms=ARMS``: ``baseline`` and ``variant``). Every seed must have every arm (unless
``ragged=True``: independent seeds, see :class:`~evalcal_core.scores.ArmScores`), and
per-question files the same questions in every run. Rows are aligned by seed (sorted) and
question.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core.score_checks import (  # noqa: F401 (re-exported for callers)
    FRACTION_RANGE,
    MAX_RANGE,
    check_arm_scores,
    check_score_arrays,
)
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError

ARMS = ("baseline", "variant")
SEED_COLUMNS = ("seed", "arm", "metric")
QUESTION_COLUMNS = ("seed", "arm", "question", "score")
#: columns whose cells are names, read as written (``read_csv``'s documented ``na_values``
#: default is kept for the number columns only)
NAME_COLUMNS = ("arm", "question")
_NA_SPELLINGS = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                 "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan",
                 "null")


def read_tidy_frame(path, names=()) -> pd.DataFrame:
    """A tidy CSV as a DataFrame whose name columns are text, exactly as written.

    ``arm``, ``question`` and the columns in ``names`` (a ``--cluster`` column) are read as
    strings with no missing-value spellings, so an arm named ``NA``, ``null``, ``None`` or
    ``nan`` is a name and the labels ``1`` and ``1.0`` stay two labels (pandas would read
    the first as missing and merge the second as the float 1.0). Their cells are stripped;
    an empty one is ``""``. Other columns are parsed as ``pandas.read_csv`` does. Column
    names are stripped and lower-cased.

    Parameters
    ----------
    path : str or Path
        The CSV file (a regular file; checked by the caller).
    names : iterable of str
        More columns to read as names (matched stripped and lower-cased).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    pandas.errors.ParserError, pandas.errors.EmptyDataError, UnicodeDecodeError
        As ``pandas.read_csv`` does; callers turn them into one-line messages.
    """
    wanted = set(NAME_COLUMNS) | {str(n).strip().lower() for n in names}
    header = pd.read_csv(path, nrows=0, skipinitialspace=True).columns
    text = [c for c in header if str(c).strip().lower() in wanted]
    frame = pd.read_csv(path, skipinitialspace=True, dtype={c: str for c in text},
                        keep_default_na=False,
                        na_values={c: list(_NA_SPELLINGS) for c in header if c not in text})
    for column in text:
        frame[column] = frame[column].astype(str).str.strip()
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    return frame


def _show(value) -> str:
    """A cell as the user wrote it: ``nan``, ``0``, ``'baseline'`` (never ``np.float64(nan)``)."""
    return repr(value.item() if hasattr(value, "item") else value)


def _row(index) -> str:
    # +2: one for the header line, one because people count lines from 1.
    return f"row {int(index) + 2}"


def read_results_arms(path, *, percent: bool = False, metric_range=None,
                      partial_credit: bool = False, cluster: str | None = None,
                      ragged: bool = False) -> ArmScores:
    """Read a tidy results CSV with any arm names into checked :class:`ArmScores`.

    Parameters
    ----------
    path : str or Path
        A CSV with columns ``seed, arm, metric`` (one row per seed and arm) or ``seed, arm,
        question, score`` (one row per seed, arm and question), plus optionally the cluster
        column. Arms keep the order they first appear in, except that ``baseline`` (when
        present) comes first.
    percent : bool
        Scores are percentages (``--percent``): they are divided by 100.
    metric_range : (float, float), optional
        Valid scores, inclusive, in the file's units (``--metric-range``); default: fractions
        in [0, 1] with the guesses of :func:`check_arm_scores`.
    partial_credit : bool
        Allow a few non-0/1 scores among 0/1 per-question scores (``--partial-credit``).
    cluster : str, optional
        Column holding each question's cluster (``--cluster``); per-question files only.
    ragged : bool
        Accept arms whose seed sets differ (only for independent seeds, design
        ``methods_independent``): a seed an arm lacks entirely becomes a NaN row and
        ``runs_per_arm`` counts each arm's seeds. A seed with only some of the questions is
        still an error. ``False``: every seed needs every arm.

    Returns
    -------
    ArmScores
        ``scores`` of shape (arms, seeds, questions) (``n = 1`` for per-seed files),
        ``runs_are="seeds"``; ragged (NaN-padded) only when ``ragged`` and the seed sets
        differ.

    Raises
    ------
    ValueError
        One line naming the file and the offending row, column or score.
    """
    scores = read_tidy_arms(path, scale=0.01 if percent else 1.0, cluster=cluster,
                            ragged=ragged)
    declared = metric_range is not None
    value_range = tuple(metric_range) if declared else FRACTION_RANGE
    if not scores.ragged:
        return check_arm_scores(scores, value_range=value_range, percent=percent,
                                declared=declared, partial=partial_credit)
    per_question = scores.question_ids != ("metric",)
    for a, name in enumerate(scores.arms):
        # one arm at a time: the checks name a bad score by row, and each arm's rows are
        # its own seeds (the NaN padding dropped)
        own = [s for s, gap in zip(scores.run_ids, np.isnan(scores.scores[a, :, 0])) if not gap]
        check_score_arrays([(name, scores.arm(name))], own, per_question, scores.source,
                           value_range, percent, declared, partial_credit)
    return scores


def read_tidy_arms(path, *, arms=None, scale: float = 1.0, cluster: str | None = None,
                   ragged: bool = False) -> ArmScores:
    """Read a tidy results CSV into :class:`ArmScores` without checking the scores' values.

    :func:`read_results_arms` is this read followed by :func:`check_arm_scores`; call this
    one where the caller judges the units itself before checking (``--from-pilot``).

    Parameters
    ----------
    path : str or Path
        A CSV in either layout of this module.
    arms : sequence of str, optional
        The only arm names the file may use, matched case-insensitively, in the order the
        arms should have (``ARMS``: ``baseline`` then ``variant``); every one must be present.
        Default: any names, in the order they first appear, ``baseline`` (when present)
        first; at least two.
    scale : float
        Multiply every score by this (0.01 reads percentages as fractions).
    cluster : str, optional
        Column holding each question's cluster (``--cluster``); per-question files only.
    ragged : bool
        Accept arms whose seed sets differ (see :func:`read_results_arms`).

    Returns
    -------
    ArmScores
        ``scores`` of shape (arms, seeds, questions), ``n = 1`` and ``question_ids ==
        ("metric",)`` for per-seed files; ``runs_are="seeds"``.

    Raises
    ------
    InvalidParameterError
        One line naming the file and the offending row or column.
    """
    allowed = None if arms is None else tuple(str(a).lower() for a in arms)
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise InvalidParameterError(f"results file {str(path)!r} does not exist")
    from evalcal_core.readers import check_regular

    check_regular(path)  # names a symbolic-link loop, a broken link, a folder, a FIFO
    try:
        frame = read_tidy_frame(path, () if cluster is None else (cluster,))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidParameterError(f"{path}: not a readable CSV ({first})") from None
    columns = set(frame.columns)
    if set(QUESTION_COLUMNS) <= columns:
        per_question, value = True, "score"
    elif set(SEED_COLUMNS) <= columns:
        per_question, value = False, "metric"
    else:
        raise InvalidParameterError(f"{path}: needs columns {', '.join(SEED_COLUMNS)} (per seed) "
                                    f"or {', '.join(QUESTION_COLUMNS)} (per question); "
                                    f"found {', '.join(frame.columns) or 'none'}")
    if frame.empty:
        raise InvalidParameterError(f"{path}: has a header but no rows")
    if cluster is not None:
        cluster = cluster.strip().lower()
        if not per_question:
            raise InvalidParameterError(f"{path}: --cluster {cluster!r} needs per-question scores "
                                        f"(columns {', '.join(QUESTION_COLUMNS)})")
        if cluster not in columns:
            raise InvalidParameterError(f"{path}: --cluster {cluster!r} is not a column; columns: "
                                        f"{', '.join(frame.columns)}")
    for column in ("seed", "arm") + (("question",) if per_question else ()) + (
            (cluster,) if cluster is not None else ()):
        # name columns hold "" where empty; the others NaN (pandas' missing spellings); a
        # number column has no text to be empty (and writing a million numbers as text costs)
        missing = frame[column].isna()
        if not pd.api.types.is_numeric_dtype(frame[column]):
            missing |= frame[column].astype(str).str.strip() == ""
        if missing.any():
            raise InvalidParameterError(f"{path}: {_row(missing.idxmax())}: column {column!r} is "
                                        "empty")
    arm = frame["arm"].astype(str).str.strip()
    if allowed is not None:
        arm = arm.str.lower()
        bad_arm = ~arm.isin(allowed)
        if bad_arm.any():
            i = bad_arm.idxmax()
            names = [repr(a) for a in allowed]
            names = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
            raise InvalidParameterError(f"{path}: {_row(i)}: column 'arm' must be {names}, got "
                                        f"{frame['arm'][i]!r}")
    values = pd.to_numeric(frame[value], errors="coerce")
    bad_value = values.isna() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
    if bad_value.any():
        i = bad_value.idxmax()
        raise InvalidParameterError(f"{path}: {_row(i)}: column {value!r} must be a finite number, "
                                    f"got {_show(frame[value][i])}")
    tidy = pd.DataFrame({"seed": frame["seed"], "arm": arm, "value": values * scale})
    keys = ["seed", "arm"]
    if per_question:
        tidy["question"] = frame["question"]
        keys.append("question")
    # each key column hashed once into integer codes (labels in first-appearance order): the
    # duplicate check and the alignment in _to_arrays work on the codes, since iterating or
    # comparing a column of a million Arrow strings row by row takes seconds
    codes = {c: pd.factorize(tidy[c]) for c in keys}
    duplicated = pd.Series(_row_key([codes[c] for c in keys])).duplicated()
    if duplicated.any():
        i = duplicated.idxmax()
        raise InvalidParameterError(f"{path}: {_row(i)}: duplicate entry for "
                                    + ", ".join(f"{c}={_show(tidy[c][i])}" for c in keys))
    arms = [str(a) for a in codes["arm"][1]]
    if allowed is not None:
        arms = [a for a in allowed if a in arms] or list(allowed)
    elif "baseline" in arms:
        arms.remove("baseline")
        arms.insert(0, "baseline")
    if allowed is None and len(arms) < 2:
        raise InvalidParameterError(f"{path}: column 'arm' names one arm ({arms[0]!r}); a "
                                    "comparison needs at least two")
    labels = None
    if cluster is not None:
        labels = _cluster_of(frame, cluster, path)
    return _to_arrays(tidy, codes, per_question, str(path),
                      arms if allowed is None else list(allowed), labels, cluster, ragged=ragged)


def _row_key(found) -> np.ndarray:
    """One integer per row, equal exactly where every key's code is: the codes of
    ``pd.factorize`` (``(codes, uniques)`` per key) in mixed radix, or, where the product
    of the label counts would not fit an int64, the row's index among the distinct tuples."""
    sizes = [max(len(uniques), 1) for _, uniques in found]
    if math.prod(sizes) < 2**62:
        key = np.zeros(len(found[0][0]), dtype=np.int64)
        for (codes, _), size in zip(found, sizes):
            key = key * size + codes
        return key
    return pd.MultiIndex.from_arrays([codes for codes, _ in found]).factorize()[0]


def _cluster_of(frame: pd.DataFrame, cluster: str, path: Path) -> dict:
    labels: dict = {}
    for i, (question, label) in enumerate(zip(frame["question"], frame[cluster])):
        question, label = _plain_label(question), str(label).strip()
        if labels.setdefault(question, label) != label:
            raise InvalidParameterError(f"{path}: {_row(i)}: question {question!r} is in cluster "
                                        f"{label!r} here but {labels[question]!r} on another row")
    return labels


def _plain_label(value):
    return value.item() if hasattr(value, "item") else value


def _sorted_labels(found, key) -> tuple[list, np.ndarray]:
    """``(labels, place)``: the labels of ``pd.factorize``'s ``(codes, uniques)`` as plain
    Python values sorted by ``key``, and each row's position among them."""
    codes, uniques = found
    # Plain Python labels, so messages and run ids read 3, not np.int64(3).
    plain = [_plain_label(u) for u in uniques]
    order = sorted(range(len(plain)), key=lambda i: key(plain[i]))
    place = np.empty(len(plain), dtype=np.intp)
    place[order] = np.arange(len(plain))
    return [plain[i] for i in order], place[codes]


def _to_arrays(tidy: pd.DataFrame, codes: dict, per_question: bool, source: str, arms: list,
               labels: dict | None = None, cluster: str | None = None,
               ragged: bool = False) -> ArmScores:
    """Scatter the rows into one (arms, seeds, questions) array, NaN where a row is absent;
    ``codes`` holds ``pd.factorize`` of the ``seed``, ``arm`` (and ``question``) columns."""
    seeds, seed_at = _sorted_labels(codes["seed"], lambda s: (str(type(s)), s))
    if per_question:
        questions, question_at = _sorted_labels(codes["question"], str)
    else:
        questions, question_at = [0], np.zeros(len(tidy), dtype=np.intp)
    index = {a: i for i, a in enumerate(arms)}
    arm_codes, arm_labels = codes["arm"]
    arm_at = np.array([index[str(a)] for a in arm_labels], dtype=np.intp)[arm_codes]
    table = np.full((len(arms), len(seeds), len(questions)), np.nan)
    table[arm_at, seed_at, question_at] = tidy["value"].to_numpy(dtype=float)
    counts = []
    for a, arm in enumerate(arms):
        missing = np.isnan(table[a])
        # ragged: a seed the arm lacks entirely is padding; a partly missing seed is not
        absent = missing.all(axis=1) if ragged else np.zeros(len(seeds), dtype=bool)
        counts.append(len(seeds) - int(absent.sum()))
        gaps = missing & ~absent[:, None]
        if gaps.any():
            s, q = np.argwhere(gaps)[0]          # the first in seed, then question order
            where = f"seed {seeds[s]!r}" + (f", question {questions[q]!r}" if per_question
                                            else "")
            raise InvalidParameterError(f"{source}: arm {arm!r} has no score for {where}: every "
                                        "seed needs every arm"
                                        + (" and every question" if per_question else ""))
    clusters = (np.array([labels[q] for q in questions], dtype=str) if labels is not None
                else None)
    return ArmScores(arms=tuple(arms), scores=table,
                     question_ids=tuple(map(str, questions)) if per_question else ("metric",),
                     run_ids=tuple(seeds), runs_are="seeds", clusters=clusters,
                     cluster_name=cluster, metric="score" if per_question else "metric",
                     source=source,
                     runs_per_arm=tuple(counts) if min(counts) < len(seeds) else None)
