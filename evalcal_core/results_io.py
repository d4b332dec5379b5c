"""Read a user's results from a tidy CSV into paired ``(k, n)`` score arrays.

Two layouts are accepted:

* per seed: columns ``seed``, ``arm``, ``metric`` (one row per seed and arm);
* per question: columns ``seed``, ``arm``, ``question``, ``score`` (one row per seed, arm and
  question).

``arm`` is ``baseline`` or ``variant``. Every seed must have both arms, and per-question
files the same questions in every run. Rows are aligned by seed (sorted) and question.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ARMS = ("baseline", "variant")
SEED_COLUMNS = ("seed", "arm", "metric")
QUESTION_COLUMNS = ("seed", "arm", "question", "score")


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


def _row(index) -> str:
    # +2: one for the header line, one because people count lines from 1.
    return f"row {int(index) + 2}"


def read_results(path, *, scale: float = 1.0) -> PairedResults:
    """Read a results CSV.

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
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"results file {str(path)!r} does not exist")
    try:
        frame = pd.read_csv(path, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a readable CSV ({first})") from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    columns = set(frame.columns)
    if set(QUESTION_COLUMNS) <= columns:
        per_question, value = True, "score"
    elif set(SEED_COLUMNS) <= columns:
        per_question, value = False, "metric"
    else:
        raise ValueError(f"{path}: needs columns {', '.join(SEED_COLUMNS)} (per seed) or "
                         f"{', '.join(QUESTION_COLUMNS)} (per question); "
                         f"found {', '.join(frame.columns) or 'none'}")
    if frame.empty:
        raise ValueError(f"{path}: has a header but no rows")
    for column in ("seed", "arm") + (("question",) if per_question else ()):
        missing = frame[column].isna()
        if missing.any():
            raise ValueError(f"{path}: {_row(missing.idxmax())}: column {column!r} is empty")
    arm = frame["arm"].astype(str).str.strip().str.lower()
    bad_arm = ~arm.isin(ARMS)
    if bad_arm.any():
        i = bad_arm.idxmax()
        raise ValueError(f"{path}: {_row(i)}: column 'arm' must be 'baseline' or 'variant', "
                         f"got {frame['arm'][i]!r}")
    values = pd.to_numeric(frame[value], errors="coerce")
    bad_value = values.isna() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
    if bad_value.any():
        i = bad_value.idxmax()
        raise ValueError(f"{path}: {_row(i)}: column {value!r} must be a finite number, "
                         f"got {frame[value][i]!r}")
    tidy = pd.DataFrame({"seed": frame["seed"], "arm": arm, "value": values * scale})
    keys = ["seed", "arm"]
    if per_question:
        tidy["question"] = frame["question"]
        keys.append("question")
    duplicated = tidy.duplicated(keys)
    if duplicated.any():
        i = duplicated.idxmax()
        raise ValueError(f"{path}: {_row(i)}: duplicate entry for "
                         + ", ".join(f"{c}={tidy[c][i]!r}" for c in keys))
    return _to_arrays(tidy, per_question, str(path))


def _to_arrays(tidy: pd.DataFrame, per_question: bool, source: str) -> PairedResults:
    # Plain Python labels, so messages and PairedResults.seeds read 3, not np.int64(3).
    seeds = sorted((getattr(s, "item", lambda s=s: s)() for s in tidy["seed"].unique()),
                   key=lambda s: (str(type(s)), s))
    questions = (sorted((getattr(q, "item", lambda q=q: q)() for q in tidy["question"].unique()),
                        key=str) if per_question else [0])
    if not per_question:
        tidy = tidy.assign(question=0)
    arrays = {}
    for arm in ARMS:
        part = tidy[tidy["arm"] == arm]
        table = part.pivot(index="seed", columns="question", values="value")
        table = table.reindex(index=seeds, columns=questions)
        if table.isna().any().any():
            seed, question = next(
                (s, q) for s in seeds for q in questions if pd.isna(table.loc[s, q]))
            where = f"seed {seed!r}" + (f", question {question!r}" if per_question else "")
            raise ValueError(f"{source}: arm {arm!r} has no score for {where}: every seed needs "
                             f"both arms" + (" and every question" if per_question else ""))
        arrays[arm] = table.to_numpy(dtype=float)
    return PairedResults(base=arrays["baseline"], variant=arrays["variant"],
                         seeds=tuple(seeds), per_question=per_question, source=source)


#: scores of a fraction metric (accuracy): the default declared range
FRACTION_RANGE = (0.0, 1.0)
#: largest magnitude a declared metric range may have (keeps differences and sums finite)
MAX_RANGE = 1e12


def from_logs(paired) -> PairedResults:
    """:class:`PairedResults` of a :class:`core.harness_logs.PairedLogs` (per question).

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

    Parameters
    ----------
    path : str or Path
        A tidy CSV with both arms (:func:`read_results`); or the baseline's harness log
        (lm-eval, Inspect, HELM, a one-arm CSV; see :func:`evalcal_core.harness_logs.read_log`),
        then ``variant`` is needed. ``"BASELINE,VARIANT"`` (two existing paths joined by a
        comma) names both logs in one string, for options that take one path.
    variant : str or Path, optional
        The variant's harness log.
    metric, task, filter : str, optional
        Passed to :func:`evalcal_core.harness_logs.read_log`.
    scale : float
        Multiply every score by this (0.01 reads percentages as fractions).
    logs : list, optional
        When given, the :class:`~core.harness_logs.PairedLogs` read is appended to it (for
        its summary of matched and dropped questions).

    Returns
    -------
    PairedResults
    """
    from evalcal_core.harness_logs import pair_logs, read_log

    text = str(path)
    if variant is None and not Path(text).exists() and "," in text:
        first, _, second = text.partition(",")
        if Path(first).exists() and Path(second).exists():
            text, variant = first, second
    path = Path(text)
    if not path.exists():
        raise ValueError(f"results file {text!r} does not exist")
    if variant is None:
        if path.is_dir():
            raise ValueError(f"{path} is a directory; a harness log folder holds one arm, "
                             f"so name the variant's log too (--variant, or "
                             f"'BASELINE,VARIANT')")
        if _is_table(path) and not any((metric, task, filter)) and _has_arms(path):
            return read_results(path, scale=scale)
        raise ValueError(f"{path} holds one arm's log; name the variant's log too "
                         f"(--variant, or 'BASELINE,VARIANT')")
    base_log = read_log(path, metric=metric, task=task,
                        filter=filter if filter is not None else _arm_filter(path, "baseline"))
    var_log = read_log(variant, metric=metric, task=task,
                       filter=filter if filter is not None
                       else _arm_filter(Path(variant), "variant"))
    paired = pair_logs(base_log, var_log)
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


def _arm_filter(path: Path, arm: str) -> str | None:
    """The arm of a two-arm tidy CSV given as one side of a pair; None for other logs."""
    if not _is_table(path):
        return None
    try:
        header = pd.read_csv(path, nrows=0).columns
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
        return None
    return arm if "arm" in {str(c).strip().lower() for c in header} else None


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
    low, high = value_range
    scores = np.concatenate([results.base.ravel(), results.variant.ravel()])
    if not np.isfinite(scores).all():
        raise ValueError(f"{results.source}: scores must be finite numbers; "
                         f"found {_plain(scores[~np.isfinite(scores)][0])}")
    outside = (scores < low) | (scores > high)
    if outside.any():
        arm, seed, question, value = _first(results, lambda a: (a < low) | (a > high))
        where = (f"{results.source}: {arm} seed {seed!r}"
                 + (f", question {question}" if results.per_question else "")
                 + f": score {_plain(value)} is outside [{_plain(low)}, {_plain(high)}]")
        if declared:
            raise ValueError(f"{where} (the --metric-range declared)")
        if percent:
            raise ValueError(f"{where} after reading it as a percentage (--percent)")
        share = outside.mean()
        if (scores <= 100).all() and (scores >= 0).all():
            if share > 0.5:
                raise ValueError(f"{where}: the scores look like percentages (up to "
                                 f"{_plain(scores.max())}); pass --percent, or declare the "
                                 f"metric's range with --metric-range LOW HIGH")
            raise ValueError(f"{where}: most scores are fractions but {int(outside.sum())} "
                             f"look like percentages; write every score in one unit")
        raise ValueError(f"{where}; accuracy-like metrics are fractions in [0, 1]; for "
                         f"another metric declare its range with --metric-range LOW HIGH")
    if percent and not declared and scores.max() <= 0.01 and scores.max() > 0:
        raise ValueError(f"{results.source}: --percent was given but every score is at most "
                         f"1 (already fractions?); drop --percent")
    if results.per_question and not declared and not partial:
        binary = np.isin(scores, (0.0, 1.0))
        odd = ~binary
        if odd.any() and odd.mean() < 0.05:
            arm, seed, question, value = _first(results, lambda a: ~np.isin(a, (0.0, 1.0)))
            raise ValueError(f"{results.source}: {arm} seed {seed!r}, question {question}: "
                             f"score {_plain(value)} in a file of 0/1 scores "
                             f"({int(odd.sum())} of {scores.size} are not 0 or 1); fix them, "
                             f"or pass --partial-credit if partial scores are meant")
    return results


def _plain(x) -> str:
    from evalcal_core.validate import plain

    return plain(float(x))


def _first(results: PairedResults, bad):
    for arm, array in (("baseline", results.base), ("variant", results.variant)):
        hits = np.argwhere(bad(array))
        if hits.size:
            i, j = hits[0]
            question = f"#{j + 1}" if results.per_question else None
            return arm, results.seeds[i], question, array[i, j]
    raise AssertionError("no bad score")  # pragma: no cover
