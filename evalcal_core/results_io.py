"""Read a user's results from a tidy CSV into aligned score arrays.

Two layouts are accepted:

* per seed: columns ``seed``, ``arm``, ``metric`` (one row per seed and arm);
* per question: columns ``seed``, ``arm``, ``question``, ``score`` (one row per seed, arm and
  question), optionally with a cluster column (``--cluster``).

:func:`read_results_arms` reads any arm names into :class:`~evalcal_core.scores.ArmScores`
(``runs_are="seeds"``) and checks the scores (:func:`check_arm_scores`). The older two-arm
API (:func:`read_results`, :func:`read_any`, :class:`PairedResults`, arms ``baseline`` and
``variant``) is kept for its callers. Every seed must have every arm (unless
``read_results_arms(..., ragged=True)``: independent seeds, see
:class:`~evalcal_core.scores.ArmScores`), and per-question files the same questions in every
run. Rows are aligned by seed (sorted) and question.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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


@dataclass(frozen=True)
class PairedResults:
    """Scores of the two arms aligned by seed.

    Attributes
    ----------
    base, variant : ndarray, shape (k, n)
        Scores (fraction for accuracy); ``n = 1`` for per-seed files.
    seeds : tuple
        Seed labels in row order.
    per_question : bool
        Whether the file had per-question scores.
    source : str
        Where the results came from.
    """

    base: np.ndarray
    variant: np.ndarray
    seeds: tuple
    per_question: bool
    source: str

    @property
    def k(self) -> int:
        return self.base.shape[0]

    @property
    def n(self) -> int:
        return self.base.shape[1]


def _show(value) -> str:
    """A cell as the user wrote it: ``nan``, ``0``, ``'baseline'`` (never ``np.float64(nan)``)."""
    return repr(value.item() if hasattr(value, "item") else value)


def _row(index) -> str:
    # +2: one for the header line, one because people count lines from 1.
    return f"row {int(index) + 2}"


def read_results(path, *, scale: float = 1.0) -> PairedResults:
    """Read a results CSV whose arms are ``baseline`` and ``variant``.

    Kept for the callers of the two-arm layout; :func:`read_results_arms` reads any arm
    names into :class:`~evalcal_core.scores.ArmScores`.

    Parameters
    ----------
    path : str or Path
        The CSV file.
    scale : float, default 1.0
        Multiply every score by this (0.01 converts percentages to fractions).

    Returns
    -------
    PairedResults

    Raises
    ------
    ValueError
        Naming the file and the offending row or column.
    """
    arms = _read_tidy(path, scale=scale, allowed=ARMS)
    return _paired(arms)


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
    scores = _read_tidy(path, scale=0.01 if percent else 1.0, cluster=cluster, ragged=ragged)
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


def _read_tidy(path, *, scale: float = 1.0, allowed=None, cluster=None,
               ragged: bool = False) -> ArmScores:
    path = Path(path)
    if not path.exists():
        raise InvalidParameterError(f"results file {str(path)!r} does not exist")
    from evalcal_core.readers import check_regular

    check_regular(path)
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
            raise InvalidParameterError(f"{path}: {_row(i)}: column 'arm' must be 'baseline' or "
                                        f"'variant', got {frame['arm'][i]!r}")
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


def _paired(arms: ArmScores, runs=None) -> PairedResults:
    """The two-arm :class:`PairedResults` view of :class:`ArmScores` (first arm = baseline)."""
    return PairedResults(base=np.array(arms.scores[0]), variant=np.array(arms.scores[1]),
                         seeds=tuple(runs if runs is not None else arms.run_ids),
                         per_question=arms.question_ids != ("metric",), source=arms.source)


def from_logs(paired) -> PairedResults:
    """:class:`PairedResults` of a :class:`evalcal_core.harness_logs.PairedLogs`.

    ``seeds`` are the ``(baseline run, variant run)`` label pairs.
    """
    return PairedResults(base=np.array(paired.base, dtype=float),
                         variant=np.array(paired.variant, dtype=float),
                         seeds=tuple(paired.runs), per_question=True, source=paired.source)


def _is_table(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in (".csv", ".tsv", ".txt")


def read_any(path, variant=None, *, metric: str | None = None, task: str | None = None,
             filter: str | None = None, scale: float = 1.0, logs: list | None = None
             ) -> PairedResults:
    """Read paired results from a tidy CSV or from a pair of harness logs.

    Kept for its callers; new code calls :func:`read_results_arms` (a tidy CSV, any arms)
    or :func:`evalcal_core.readers.read_arms` (one harness log per arm), which return
    :class:`~evalcal_core.scores.ArmScores`.

    Parameters
    ----------
    path : str or Path
        A tidy CSV with both arms (:func:`read_results`); or the baseline's harness log
        (see :func:`evalcal_core.readers.read_log`), then ``variant`` is needed.
        ``"BASELINE,VARIANT"`` (two existing paths joined by a comma) names both logs in one
        string, for options that take one path.
    variant : str or Path, optional
        The variant's harness log.
    metric, task, filter : str, optional
        Passed to :func:`evalcal_core.readers.read_log`.
    scale : float
        Multiply every score by this (0.01 reads percentages as fractions).
    logs : list, optional
        When given, the :class:`~evalcal_core.harness_logs.PairedLogs` read is appended to
        it (for its summary of matched and dropped questions).

    Returns
    -------
    PairedResults
    """
    from evalcal_core.harness_logs import paired_from_alignment
    from evalcal_core.readers import read_logs

    text = str(path)
    if variant is None and not Path(text).exists() and "," in text:
        first, _, second = text.partition(",")
        if Path(first).exists() and Path(second).exists():
            text, variant = first, second
    path = Path(text)
    if not path.exists() and not path.is_symlink():
        raise InvalidParameterError(f"results file {text!r} does not exist")
    from evalcal_core.readers import check_path

    check_path(path)  # a symbolic-link loop or a broken link is named as such
    if variant is None:
        if path.is_dir():
            raise InvalidParameterError(f"{path} is a directory; a harness log folder holds one "
                                        "arm, so name the variant's log too (--variant, or "
                                        f"'BASELINE,VARIANT')")
        if _is_table(path) and not any((metric, task, filter)) and _has_arms(path):
            return read_results(path, scale=scale)
        raise InvalidParameterError(f"{path} holds one arm's log; name the variant's log too "
                                    f"(--variant, or 'BASELINE,VARIANT')")
    alignment = read_logs({"baseline": path, "variant": variant}, metric=metric, task=task,
                          filter=filter)
    paired = paired_from_alignment(alignment)
    if logs is not None:
        logs.append(paired)
    results = from_logs(paired)
    if scale != 1.0:
        results = PairedResults(base=results.base * scale, variant=results.variant * scale,
                                seeds=results.seeds, per_question=True, source=results.source)
    return results


def _has_arms(path: Path) -> bool:
    """Whether a table names both arms (an ``arm`` column), or cannot be read (so that
    :func:`read_results` reports why)."""
    try:
        header = pd.read_csv(path, nrows=0, skipinitialspace=True).columns
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError):
        return True
    names = {str(c).strip().lower() for c in header}
    return "arm" in names or not {"question", "score"} <= names


def check_scores(results: PairedResults, *, value_range=FRACTION_RANGE, percent: bool = False,
                 declared: bool = False, partial: bool = False) -> PairedResults:
    """``results`` if every score is a plausible value of its metric, else ``ValueError``.

    Parameters
    ----------
    results : PairedResults
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
    ValueError
        Naming the seed (and question), the value and how to fix the file or the options.
    """
    check_score_arrays([("baseline", results.base), ("variant", results.variant)],
                       results.seeds, results.per_question, results.source,
                       value_range, percent, declared, partial)
    return results
