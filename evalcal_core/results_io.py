"""Read a user's results from a tidy CSV into aligned score arrays.

Two layouts are accepted:

* per seed: columns ``seed``, ``arm``, ``metric`` (one row per seed and arm);
* per question: columns ``seed``, ``arm``, ``question``, ``score`` (one row per seed, arm and
  question), optionally with a cluster column (``--cluster``); without a ``seed`` column each
  arm is one run (fixed models: one row per arm and question).

A file whose columns have other names names them (``--score-column``, ``--arm-column``,
``--question-column``, ``--seed-column``: the ``columns`` argument); they are read as the
reader's names, and a named column that is absent, or that clashes with one the file already
has under the reader's name, is refused in one line.

:func:`read_results_arms` reads any arm names into :class:`~evalcal_core.scores.ArmScores`
(``runs_are="seeds"``) and checks the scores (:func:`check_arm_scores`);
:func:`read_tidy_arms` reads them unchecked, optionally holding the file to given arm names
(``arms=ARMS``: ``baseline`` and ``variant``). Every seed must have every arm (unless
``ragged=True``: independent seeds, see :class:`~evalcal_core.scores.ArmScores`), and
per-question files the same questions in every run. Rows are aligned by seed (sorted) and
question.

The file is streamed :data:`CHUNK_ROWS` rows at a time and kept as integer codes, so memory
follows the rows held, not the file's size; a file past :data:`MAX_ROWS` rows or
:data:`MAX_LABELS` distinct seeds, arms, questions or clusters is refused in one line (at the
limits ``python -m protocols.evaluate`` peaks near 650 MB).
"""

from __future__ import annotations

import csv
import io
import math
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core.score_checks import (  # noqa: F401 (re-exported for callers)
    FRACTION_RANGE,
    MAX_RANGE,
    check_arm_scores,
    check_score_arrays,
)
from evalcal_core.scores import ArmScores, Arrival
from evalcal_core.validate import InvalidParameterError

ARMS = ("baseline", "variant")
SEED_COLUMNS = ("seed", "arm", "metric")
QUESTION_COLUMNS = ("seed", "arm", "question", "score")
#: the columns a file may give other names, and the option naming each (``columns`` keys)
COLUMN_OPTIONS = {"score": "--score-column", "arm": "--arm-column",
                  "question": "--question-column", "seed": "--seed-column"}
#: the seed given to every row of a file without a seed column (one run per arm)
ONE_RUN = "1"
#: columns whose cells are names, read as written (``read_csv``'s documented ``na_values``
#: default is kept for the number columns only)
NAME_COLUMNS = ("arm", "question")
_NA_SPELLINGS = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                 "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan",
                 "null")
#: rows parsed at a time: the reader's working memory follows this, not the file's size
CHUNK_ROWS = 1 << 18
#: the most rows a tidy CSV may hold (a valid file has one row per score): the reader keeps
#: about 20 bytes per row (int32 codes of seed, arm and question, and the score) and 8 per
#: score of the (arms, seeds, questions) table, and a bigger file is refused once this many
#: rows are read, so its size cannot exhaust memory (a 2 GB file of 100M rows included)
MAX_ROWS = 1 << 22
#: the most distinct labels of one column (seeds, arms, questions or clusters): each is a
#: Python string of about 100 bytes with its index entry
MAX_LABELS = 1 << 20
#: the most bytes a results CSV may hold: :data:`MAX_ROWS` rows of up to 512 bytes (a bigger
#: file is refused before it is opened; one of zeros once took 10-16 GB to refuse)
MAX_BYTES = 2 * 2**30
#: the most rows :func:`read_tidy_frame` returns (a DataFrame costs 100-200 bytes per row)
MAX_FRAME_ROWS = 1 << 21


class FrameSource:
    """A pandas DataFrame given in place of a results CSV (``evalcal.compare(frame)``).

    It is read by the same code as a file, chunk by chunk, with the same checks; its
    messages name it ``name`` and its rows by position and index label (``row 3 (index
    'q17')``; the position alone when the index is the default ``0, 1, ...``), not by the
    line numbers a CSV would have.
    """

    def __init__(self, frame: pd.DataFrame, name: str = "results DataFrame"):
        self.frame, self.name = frame, name

    def __str__(self) -> str:
        return self.name

    def row(self, position: int) -> str:
        """How a message names the row at ``position`` (0-based, as ``frame.iloc``)."""
        index = self.frame.index
        plain = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
        return (f"row {position}" if plain
                else f"row {position} (index {_show(index[position])})")

    def chunks(self, text, other, chunk_rows):
        """The frame's rows ``chunk_rows`` at a time, as :func:`_tidy_chunks` yields a CSV's:
        name columns (``text``) as stripped strings with a missing cell ``""``, ``other``
        text columns stripped with missing cells kept missing, the rest as given."""
        frame = self.frame
        for start in range(0, len(frame), chunk_rows):
            chunk = frame.iloc[start:start + chunk_rows].reset_index(drop=True)
            chunk.columns = [str(c) for c in chunk.columns]
            for column in text:
                chunk[column] = (chunk[column].astype(object).where(chunk[column].notna(), "")
                                 .astype(str).str.strip())
            for column in other:
                missing = chunk[column].isna()
                chunk[column] = chunk[column].astype(str).str.strip().where(~missing)
            chunk.columns = [_norm(c) for c in chunk.columns]
            yield chunk


def check_results_file(path) -> None:
    """Refuse, in one line, a path that is no regular file of text of at most
    :data:`MAX_BYTES` (a FIFO, a device, binary content, a first line past 64 KiB), before
    the CSV parser opens it."""
    from evalcal_core.readers import check_text_table

    check_text_table(Path(path), "a results CSV", MAX_BYTES)


def _header(path) -> list:
    if isinstance(path, FrameSource):
        header = [str(c) for c in path.frame.columns]
    else:
        check_results_file(path)
        header = list(pd.read_csv(path, nrows=0, skipinitialspace=True).columns)
        # pandas renames a repeated name ('metric', 'metric.1'): read the names as written
        with open(path, newline="", encoding="utf-8", errors="replace") as fh:
            written = next(csv.reader(fh, skipinitialspace=True), [])
        if len(written) == len(header):
            _check_distinct(path, written)
    _check_distinct(path, header)
    return header


def _check_distinct(path, names) -> None:
    """Refuse a header that names one column twice (compared stripped and lower-cased, as
    the reader reads them): which of the two is scored would be a guess."""
    seen: set = set()
    for name in names:
        key = _norm(name)
        if not key:
            continue  # unnamed columns (trailing commas): pandas numbers them, none is read
        if key in seen:
            raise InvalidParameterError(f"{path}: the column {key!r} is named twice in the "
                                        "header; name each column once")
        seen.add(key)


def _long_row(path, width: int) -> InvalidParameterError:
    """The first row of ``path`` with more fields than its header's ``width``, named."""
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        for number, row in enumerate(csv.reader(fh, skipinitialspace=True), start=1):
            if len(row) > width:
                return InvalidParameterError(f"{path}: row {number} has {len(row)} fields, the "
                                             f"header {width}; every row has one field per "
                                             "column")
    return InvalidParameterError(f"{path}: a row has more fields than the header's {width}")


def _norm(column) -> str:
    return str(column).strip().lower()


def reader_names(path, columns=None) -> dict:
    """Each column of ``path``'s header (stripped, lower-cased) -> the name the reader reads
    it as: ``columns`` (``{"score": "acc", "arm": "model", ...}``, the keys of
    :data:`COLUMN_OPTIONS`) renames the user's columns to the reader's.

    The score column becomes ``score`` when the file has a question column (after renaming),
    else ``metric`` (the per-seed layout).

    Raises
    ------
    InvalidParameterError
        One line naming the option: a named column the file lacks, one column named for two
        roles, or a named column whose reader's name the file already uses for another column.
    """
    names = [_norm(c) for c in _header(path)]
    given = {role: _norm(name) for role, name in (columns or {}).items() if name is not None}
    if not given:
        return {n: n for n in names}
    shown = ", ".join(names) or "none"
    roles: dict = {}
    for role, name in given.items():
        if name in roles:
            raise InvalidParameterError(
                f"{COLUMN_OPTIONS[roles[name]]} and {COLUMN_OPTIONS[role]} both name column "
                f"{name!r} of {path}: each names a different column")
        roles[name] = role
        if name not in names:
            raise InvalidParameterError(f"{COLUMN_OPTIONS[role]} {name!r} is not a column of "
                                        f"{path}; its columns: {shown}")
    per_question = "question" in given or "question" in names
    target = {role: "metric" if role == "score" and not per_question else role
              for role in given}
    for role, name in given.items():
        clash = target[role]
        if clash != name and clash in names and clash not in roles:
            raise InvalidParameterError(
                f"{COLUMN_OPTIONS[role]} {name!r}: {path} also has a column {clash!r}, which "
                f"would be read as the {role} too; rename or drop one of them")
    return {n: target[roles[n]] if n in roles else n for n in names}


def tidy_layout(path, columns=None) -> tuple[bool, bool]:
    """``(per_question, seeded)``: whether ``path`` holds per-question scores, and whether it
    has a seed column (a per-question file without one is one run per arm).

    Raises
    ------
    InvalidParameterError
        One line: the columns fit neither layout (or a ``columns`` name is wrong, see
        :func:`reader_names`).
    """
    renamed = reader_names(path, columns)
    found = set(renamed.values())
    if set(QUESTION_COLUMNS[1:]) <= found:
        return True, "seed" in found
    if set(SEED_COLUMNS) <= found:
        return False, True
    raise InvalidParameterError(f"{path}: needs columns {', '.join(SEED_COLUMNS)} (per seed) "
                                f"or {', '.join(QUESTION_COLUMNS)} (per question; without "
                                "seed, one run per arm), or yours named with "
                                f"{', '.join(COLUMN_OPTIONS.values())}; found "
                                f"{', '.join(renamed) or 'none'}")


def _tidy_chunks(path, names=(), as_text=(), chunk_rows=None, columns=None):
    """The rows of a tidy CSV, ``chunk_rows`` at a time, as :func:`read_tidy_frame` reads them.

    ``as_text`` names more columns read as text, stripped, but with the missing-value
    spellings still missing (``seed``: its type is decided once for the whole file, see
    :func:`_seed_values`, not chunk by chunk). Memory follows ``chunk_rows``
    (:data:`CHUNK_ROWS`), not the file's size. Columns are renamed to the reader's names
    (``columns``: :func:`reader_names`); a per-question file without a seed column gets one
    holding :data:`ONE_RUN` (text, as ``as_text`` reads a seed).
    """
    wanted = set(NAME_COLUMNS) | {_norm(n) for n in names}
    header = _header(path)
    renamed = reader_names(path, columns)
    text = [c for c in header if renamed[_norm(c)] in wanted or _norm(c) in wanted]
    other = [c for c in header if c not in text
             and renamed[_norm(c)] in {_norm(n) for n in as_text}]
    one_run = (set(QUESTION_COLUMNS[1:]) <= set(renamed.values())
               and "seed" not in renamed.values())
    if isinstance(path, FrameSource):
        chunks = path.chunks(text, other, chunk_rows or CHUNK_ROWS)
    else:
        chunks = _csv_chunks(path, header, text, other, chunk_rows)
    for frame in chunks:
        frame.columns = [renamed.get(c, c) for c in frame.columns]
        if one_run:
            frame["seed"] = ONE_RUN
        yield frame


def _csv_chunks(path, header, text, other, chunk_rows):
    # index_col=False: a row with one field too many would otherwise turn the first column
    # into the index and shift every field left (an error then blamed the wrong column);
    # pandas warns of such a row instead, and the warning is made the error that names it
    reader = pd.read_csv(path, skipinitialspace=True, dtype={c: str for c in text + other},
                         keep_default_na=False, index_col=False,
                         na_values={c: list(_NA_SPELLINGS) for c in header if c not in text},
                         chunksize=chunk_rows or CHUNK_ROWS)
    with reader:
        while True:
            with warnings.catch_warnings():
                warnings.simplefilter("error", pd.errors.ParserWarning)
                try:
                    frame = next(reader)
                except StopIteration:
                    return
                except pd.errors.ParserWarning:
                    raise _long_row(path, len(header)) from None
            for column in text:
                frame[column] = frame[column].astype(str).str.strip()
            frame.columns = [_norm(c) for c in frame.columns]
            yield frame


def _too_many_rows(path, limit: int) -> InvalidParameterError:
    return InvalidParameterError(f"{path}: more than {limit:,} rows, the most a tidy results "
                                 "CSV may hold (memory grows with every score held); evaluate "
                                 "fewer arms, seeds or questions per file")


def read_tidy_frame(path, names=(), *, max_rows: int | None = None,
                    columns=None) -> pd.DataFrame:
    """A tidy CSV as a DataFrame whose name columns are text, exactly as written.

    ``arm``, ``question`` and the columns in ``names`` (a ``--cluster`` column) are read as
    strings with no missing-value spellings, so an arm named ``NA``, ``null``, ``None`` or
    ``nan`` is a name and the labels ``1`` and ``1.0`` stay two labels (pandas would read
    the first as missing and merge the second as the float 1.0). Their cells are stripped;
    an empty one is ``""``. Other columns are parsed as ``pandas.read_csv`` does. Column
    names are stripped and lower-cased. The file is read in chunks and refused past
    ``max_rows`` rows, so a huge file costs one chunk of memory, not the whole file.

    Parameters
    ----------
    path : str or Path
        The CSV file (a regular file; checked by the caller).
    names : iterable of str
        More columns to read as names (matched stripped and lower-cased).
    max_rows : int, optional
        The most rows read into the frame; default :data:`MAX_FRAME_ROWS` (a frame costs
        about 100-200 bytes per row).
    columns : dict, optional
        The user's names of the reader's columns (:func:`reader_names`); the frame's columns
        carry the reader's names.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    pandas.errors.ParserError, pandas.errors.EmptyDataError, UnicodeDecodeError
        As ``pandas.read_csv`` does; callers turn them into one-line messages.
    InvalidParameterError
        The file holds more than ``max_rows`` rows.
    """
    limit = MAX_FRAME_ROWS if max_rows is None else max_rows
    parts, rows = [], 0
    for frame in _tidy_chunks(path, names, columns=columns):
        rows += len(frame)
        if rows > limit:
            raise _too_many_rows(path, limit)
        parts.append(frame)
    if not parts:  # a header and no rows
        return pd.DataFrame(columns=list(reader_names(path, columns).values()))
    return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)


def _show(value) -> str:
    """A cell as the user wrote it: ``nan``, ``0``, ``'baseline'`` (never ``np.float64(nan)``)."""
    return repr(value.item() if hasattr(value, "item") else value)


def _row(path, index) -> str:
    """How a message names row ``index`` (0-based) of ``path``."""
    if isinstance(path, FrameSource):
        return path.row(int(index))
    # +2: one for the header line, one because people count lines from 1.
    return f"row {int(index) + 2}"


def read_results_arms(path, *, percent: bool = False, metric_range=None,
                      partial_credit: bool = False, cluster: str | None = None,
                      ragged: bool = False, columns=None,
                      common: bool = False) -> ArmScores:
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
    columns : dict, optional
        The file's names of the reader's columns, keys of :data:`COLUMN_OPTIONS`
        (``{"score": "acc"}`` for ``--score-column acc``); see :func:`reader_names`.
    common : bool
        ``--common-questions``: keep the questions every arm has (in each of its seeds),
        drop exact duplicate rows (same seed, arm, question and score), and say both in
        ``notes`` (how many questions each arm lost, how many rows were dropped). A duplicate
        with another score is still an error. ``False``: a missing question or any
        duplicate is an error.

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
                            ragged=ragged, columns=columns, common=common)
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
                   ragged: bool = False, columns=None, common: bool = False) -> ArmScores:
    """Read a tidy results CSV into :class:`ArmScores` without checking the scores' values.

    :func:`read_results_arms` is this read followed by :func:`check_arm_scores`; call this
    one where the caller judges the units itself before checking (``--from-pilot``).

    Parameters
    ----------
    path : str, Path, pandas.DataFrame or FrameSource
        A CSV in either layout of this module, or the same table as a DataFrame (read by the
        same checks; its messages name rows by position and index label).
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
    columns : dict, optional
        The file's names of the reader's columns (see :func:`read_results_arms`).
    common : bool
        Keep the questions every arm has and drop exact duplicate rows, said in ``notes``
        (see :func:`read_results_arms`).

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
    if isinstance(path, pd.DataFrame):
        path = FrameSource(path)
    if not isinstance(path, FrameSource):
        path = Path(path)
        if not path.exists() and not path.is_symlink():
            raise InvalidParameterError(f"results file {str(path)!r} does not exist")
        # names a symbolic-link loop, a broken link, a folder, a FIFO, a device, a binary
        # or oversized file
        check_results_file(path)
    try:
        return _read_stream(path, allowed, scale, cluster, ragged, columns, common)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidParameterError(f"{path}: not a readable CSV ({first})") from None


def read_two_arms(path, *, option: str = "--from-pilot") -> ArmScores:
    """A pilot's two arms with any names, its scores unchecked (the caller judges the units).

    The baseline is the arm named ``baseline`` (any case) when there is one, else the file's
    first arm; the other is the variant.

    Raises
    ------
    InvalidParameterError
        One line naming ``option``: the file holds more than two arms (or what
        :func:`read_tidy_arms` reports: one arm, a missing file, a bad row).
    """
    scores = read_tidy_arms(path)
    if scores.m != 2:
        shown = ", ".join(map(repr, scores.arms[:4])) + (", ..." if scores.m > 4 else "")
        raise InvalidParameterError(f"{option} {path}: a pilot has two arms (the baseline: the "
                                    "arm named 'baseline', else the file's first; the "
                                    f"variant: the other), got {scores.m} ({shown})")
    if scores.arms[1].lower() == "baseline" and scores.arms[0].lower() != "baseline":
        # read_tidy_arms puts an exact 'baseline' first; 'Baseline' is one too
        scores = replace(scores, arms=scores.arms[::-1], scores=scores.scores[::-1],
                         runs_per_arm=None if scores.runs_per_arm is None
                         else scores.runs_per_arm[::-1])
    return scores


class _Codes:
    """Labels of one column numbered in order of first appearance, across chunks.

    Each chunk is factorized on its own (codes and its distinct labels, compact text); the
    chunks' labels are joined and factorized once at the end, which maps every chunk's codes
    to the file's. No Python object per row or per label is made while streaming.
    """

    def __init__(self, path, column: str):
        self.path, self.column = path, column
        self.local: list = []
        self.uniques: list = []

    def add(self, values) -> None:
        local, uniques = pd.factorize(values)
        self.local.append(local.astype(np.int32))
        self.uniques.append(pd.Series(uniques, dtype=values.dtype))

    def result(self) -> tuple[np.ndarray, list]:
        """``(codes, labels)``: every row's code and the labels by code, the chunks let go."""
        if not self.uniques:
            return np.zeros(0, dtype=np.int32), []
        found, labels = pd.factorize(pd.concat(self.uniques, ignore_index=True))
        self.uniques = []
        if len(labels) > MAX_LABELS:
            raise InvalidParameterError(f"{self.path}: more than {MAX_LABELS:,} distinct "
                                        f"values in column {self.column!r}, the most a tidy "
                                        "results CSV may hold; evaluate fewer per file")
        found = found.astype(np.int32)
        codes = np.empty(sum(len(c) for c in self.local), dtype=np.int32)
        at = start = 0
        for local in self.local:
            codes[at:at + len(local)] = found[start:start + local.max(initial=-1) + 1][local]
            at, start = at + len(local), start + local.max(initial=-1) + 1
        self.local = []
        return codes, labels.tolist()


def _read_stream(path: Path, allowed, scale: float, cluster: str | None,
                 ragged: bool, names=None, common: bool = False) -> ArmScores:
    """:func:`read_tidy_arms` on a checked path: the file read :data:`CHUNK_ROWS` rows at a
    time, each chunk checked in row order and kept as integer codes and scores."""
    per_question, _ = tidy_layout(path, names)
    value = "score" if per_question else "metric"
    renamed = reader_names(path, names)
    columns = list(renamed)
    if cluster is not None:
        cluster = cluster.strip().lower()
        if renamed.get(cluster, cluster) in QUESTION_COLUMNS + SEED_COLUMNS:
            # the cluster must be a column of its own: one of the reader's would file every
            # question (or seed, arm, score) under itself
            raise InvalidParameterError(f"{path}: --cluster {cluster!r} is the "
                                        f"{renamed.get(cluster, cluster)} column; name the "
                                        "column holding each question's cluster")
    keys = ["seed", "arm"] + (["question"] if per_question else [])
    found = {c: _Codes(path, c) for c in keys + ([cluster] if cluster is not None else [])}
    values, rows, checked = [], 0, False
    for frame in _tidy_chunks(path, () if cluster is None else (cluster,), as_text=("seed",),
                              columns=names):
        if not checked:
            if frame.empty:
                raise InvalidParameterError(f"{path}: has a header but no rows")
            if cluster is not None and not per_question:
                raise InvalidParameterError(f"{path}: --cluster {cluster!r} needs per-question "
                                            f"scores (columns {', '.join(QUESTION_COLUMNS)})")
            if cluster is not None and cluster not in columns:
                raise InvalidParameterError(f"{path}: --cluster {cluster!r} is not a column; "
                                            f"columns: {', '.join(columns)}")
            checked = True
        if rows + len(frame) > MAX_ROWS:
            raise _too_many_rows(path, MAX_ROWS)
        arm, score = _check_chunk(frame, rows, path, per_question, cluster, allowed, value,
                                  {v: k for k, v in renamed.items()})
        found["seed"].add(frame["seed"])
        found["arm"].add(arm)
        if per_question:
            found["question"].add(frame["question"])
        if cluster is not None:
            found[cluster].add(frame[cluster])
        values.append(score * scale)
        rows += len(frame)
    if not checked:  # a header and no rows (pandas yields no chunk at all)
        raise InvalidParameterError(f"{path}: has a header but no rows")
    values = np.concatenate(values)
    codes = {c: found[c].result() for c in keys}
    clusters = _Clusters(path, *found[cluster].result()) if cluster is not None else None
    codes["seed"] = _seed_values(*codes["seed"])
    arms = [str(a) for a in codes["arm"][1]]
    cells = math.prod(max(len(labels), 1) for _, labels in codes.values())
    if cells > 2 * MAX_ROWS:
        # a sparse file: its (arms, seeds, questions) table would not fit, and most of it
        # would be missing anyway
        raise InvalidParameterError(
            f"{path}: {len(arms)} arms, {len(codes['seed'][1])} seeds"
            + (f" and {len(codes['question'][1])} questions" if per_question else "")
            + f" make {cells:,} scores but the file has {rows:,} rows: every seed needs every "
            "arm" + (" and every question" if per_question else ""))
    if allowed is not None:
        arms = [a for a in allowed if a in arms] or list(allowed)
    elif "baseline" in arms:
        arms.remove("baseline")
        arms.insert(0, "baseline")
    return _to_arrays(values, codes, per_question, path,
                      arms if allowed is None else list(allowed), clusters, cluster,
                      ragged=ragged, allowed=allowed, common=common)


def _check_chunk(frame, offset: int, path, per_question: bool, cluster, allowed, value,
                 written=None):
    """One chunk's empty cells, arm names and scores checked in row order; ``(arm, score)``
    (the arm names lower-cased where ``allowed`` holds them, the scores as floats).
    ``written``: the file's name of each reader's column (messages name the user's)."""
    written = written or {}
    for column in ("seed", "arm") + (("question",) if per_question else ()) + (
            (cluster,) if cluster is not None else ()):
        # name columns hold "" where empty; the others NaN (pandas' missing spellings)
        missing = frame[column].isna().to_numpy(dtype=bool, copy=True)
        if not pd.api.types.is_numeric_dtype(frame[column]):
            missing |= (frame[column].astype(str).str.strip() == "").to_numpy(dtype=bool)
        if missing.any():
            at = _row(path, offset + missing.argmax())
            raise InvalidParameterError(f"{path}: {at}: column "
                                        f"{written.get(column, column)!r} is empty")
    arm = frame["arm"]
    if allowed is not None:
        arm = arm.str.lower()
        bad_arm = (~arm.isin(allowed)).to_numpy(dtype=bool)
        if bad_arm.any():
            i = int(bad_arm.argmax())
            names = [repr(a) for a in allowed]
            names = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
            raise InvalidParameterError(f"{path}: {_row(path, offset + i)}: column "
                                        f"{written.get('arm', 'arm')!r} must be {names}, got "
                                        f"{frame['arm'].iloc[i]!r}")
    score = pd.to_numeric(frame[value], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad_value = ~np.isfinite(score)
    if bad_value.any():
        i = int(bad_value.argmax())
        raise InvalidParameterError(f"{path}: {_row(path, offset + i)}: column "
                                    f"{written.get(value, value)!r} must be a finite number, "
                                    f"got {_show(frame[value].iloc[i])}")
    return arm, score


def _seed_values(codes: np.ndarray, raw: list) -> tuple[np.ndarray, list]:
    """The seed column's ``(codes, labels)`` with each label parsed as ``pandas.read_csv``
    parses the whole column: the distinct cells as written go through the same parser once,
    so the column's type (integers, floats, text) is decided by all its cells, as for a file
    read whole, and not chunk by chunk. Cells that parse equal (``1`` and ``1.0`` in a float
    column) become one seed."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(["seed"])
    writer.writerows([r] for r in raw)
    buffer.seek(0)
    parsed = pd.read_csv(buffer, skipinitialspace=True, keep_default_na=False,
                         na_values=list(_NA_SPELLINGS))["seed"]
    merged, labels = pd.factorize(parsed)
    return merged.astype(np.int32)[codes], labels.tolist()


class _Clusters:
    """Each row's cluster ``(codes, labels)``; each question's cluster is the one of its
    first row, and a later row filing it under another is an error."""

    def __init__(self, path, codes: np.ndarray, labels: list):
        self.path, self.codes, self.labels = path, codes, labels
        self.first = self.error = None

    def find(self, question: np.ndarray, questions: list) -> None:
        """Find the first row (in file order) that files its question (``question``: each
        row's code; ``questions``: labels by code) under a second cluster; :meth:`check`
        raises for it (after the checks that come first)."""
        _, first_at = np.unique(question, return_index=True)
        self.first = np.full(len(questions), -1, dtype=np.int64)
        self.first[question[first_at]] = self.codes[first_at]
        wrong = self.codes != self.first[question]
        if wrong.any():
            i = int(wrong.argmax())
            self.error = (f"{self.path}: {_row(self.path, i)}: question "
                          f"{questions[question[i]]!r} is in cluster "
                          f"{self.labels[self.codes[i]]!r} here but "
                          f"{self.labels[self.first[question[i]]]!r} on another row")
        self.codes = None

    def check(self) -> None:
        if self.error is not None:
            raise InvalidParameterError(self.error)

    def of_questions(self, order) -> np.ndarray:
        """The cluster labels of the questions with codes ``order``."""
        return np.array([self.labels[c] for c in self.first[np.asarray(order)]], dtype=str)


def _plain_label(value):
    return value.item() if hasattr(value, "item") else value


def _sorted_labels(uniques: list, by_type: bool = False) -> tuple[list, np.ndarray, np.ndarray]:
    """``(labels, place, order)``: ``uniques`` (labels by code) sorted, each code's position
    among them, and the code at each position. ``by_type``: labels of mixed types (seeds
    ``1`` and ``s1``) are sorted by type name first, then by value."""
    # Plain Python labels, so messages and run ids read 3, not np.int64(3).
    plain = [_plain_label(u) for u in uniques]
    groups: dict = {}
    if by_type and len({type(label) for label in plain}) > 1:
        for i, label in enumerate(plain):
            groups.setdefault(str(type(label)), []).append(i)
    if groups:
        order = np.array([i for name in sorted(groups)
                          for i in sorted(groups[name], key=plain.__getitem__)], dtype=np.int64)
    else:
        # a stable sort of one array of objects: no key object per label
        order = np.argsort(np.array(plain, dtype=object), kind="stable")
    place = np.empty(len(plain), dtype=np.int64)
    place[order] = np.arange(len(plain))
    return [plain[i] for i in order], place, order


def _to_arrays(values: np.ndarray, codes: dict, per_question: bool, path, arms: list,
               clusters=None, cluster: str | None = None, ragged: bool = False,
               allowed=None, common: bool = False) -> ArmScores:
    """Scatter the rows into one (arms, seeds, questions) array, NaN where a row is absent;
    ``codes`` holds ``(codes, labels)`` of the ``seed``, ``arm`` (and ``question``) columns,
    labels in first-appearance order. Emptied as it goes: each row's codes are let go once
    folded into the row's place in the table."""
    # codes number the labels in order of first appearance: the code at each sorted
    # position is that label's arrival (its first row), kept for --stream
    seeds, seed_place, seed_order = _sorted_labels(codes["seed"][1], by_type=True)
    if per_question:
        questions, question_place, question_order = _sorted_labels(codes["question"][1])
    else:
        questions, question_place, question_order = [0], np.zeros(1, dtype=np.int64), [0]
    if clusters is not None:
        clusters.find(codes["question"][0], codes["question"][1])
    index = {a: i for i, a in enumerate(arms)}
    shape = (len(arms), len(seeds), len(questions))
    # one flat table index per row, built in place (a temporary per step, not per key)
    flat = np.array([index[str(a)] for a in codes["arm"][1]], dtype=np.int64)[
        codes.pop("arm")[0]]
    flat *= shape[1]
    flat += seed_place[codes.pop("seed")[0]]
    flat *= shape[2]
    if per_question:
        flat += question_place[codes.pop("question")[0]]
    table = np.full(shape, np.nan)
    table.reshape(-1)[flat] = values
    notes = []
    if np.count_nonzero(~np.isnan(table)) < len(flat):
        # a row lands where another did (scores are finite, so NaN is "no row yet")
        rows = pd.DataFrame({"cell": flat, "value": values})
        again = rows["cell"].duplicated().to_numpy()
        # a duplicate is exact when its score is its cell's first one
        differs = (rows["value"] != rows.groupby("cell")["value"].transform("first")).to_numpy()
        i = int((differs if common else again).argmax())
        if not common or differs.any():
            a, s, q = np.unravel_index(int(flat[i]), shape)
            shown = [("seed", seeds[s]), ("arm", arms[a])] + (
                [("question", questions[q])] if per_question else [])
            tail = (" with another score, a conflicting duplicate (keep one of them: "
                    "--common-questions drops only exact duplicates)" if differs[i]
                    else " (--common-questions drops exact duplicates)")
            raise InvalidParameterError(f"{path}: {_row(path, i)}: duplicate entry for "
                                        + ", ".join(f"{c}={_show(v)}" for c, v in shown)
                                        + tail)
        same = "seed, arm, question and score" if per_question else "seed, arm and metric"
        notes.append(f"--common-questions: {int(again.sum()):,} exact duplicate row(s) "
                     f"dropped (same {same})")
        del rows
    del values, flat
    if allowed is None and len(arms) < 2:
        raise InvalidParameterError(f"{path}: column 'arm' names one arm ({arms[0]!r}); a "
                                    "comparison needs at least two")
    if clusters is not None:
        clusters.check()
    if common and per_question:
        table, questions, question_order, dropped = _common_questions(
            table, questions, np.asarray(question_order), arms, path)
        if dropped:
            notes.append(dropped)
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
            raise InvalidParameterError(f"{path}: arm {arm!r} has no score for {where}: every "
                                        "seed needs every arm"
                                        + (" and every question" if per_question else ""))
    return ArmScores(arms=tuple(arms), scores=table,
                     question_ids=tuple(map(str, questions)) if per_question else ("metric",),
                     run_ids=tuple(seeds), runs_are="seeds",
                     clusters=(clusters.of_questions(np.asarray(question_order))
                               if clusters is not None else None),
                     cluster_name=cluster, metric="score" if per_question else "metric",
                     source=str(path),
                     runs_per_arm=tuple(counts) if min(counts) < len(seeds) else None,
                     notes=tuple(notes),
                     arrival=Arrival(np.asarray(question_order, dtype=np.int64),
                                     np.asarray(seed_order, dtype=np.int64), "file rows"))


#: arms named in ``--common-questions``' note before "... and N more"
_NAMED_ARMS = 10


def _common_questions(table: np.ndarray, questions: list, order: np.ndarray, arms: list,
                      path) -> tuple:
    """``--common-questions``: the questions every arm has in every seed it has (a seed an
    arm lacks entirely, ragged padding, is not held against a question).

    Returns
    -------
    (table, questions, order, note)
        The table and the questions' labels and arrival order kept; ``note`` says how many
        questions were kept and how many of its own each arm lost ("" when none was).
    """
    present = ~np.isnan(table)                          # (arms, seeds, questions)
    padding = ~present.any(axis=2, keepdims=True)       # a seed the arm lacks entirely
    keep = (present | padding).all(axis=(0, 1))
    if not keep.any():
        have = present.any(axis=1).sum(axis=1)          # each arm's questions
        fewest = ", ".join(f"{arms[a]!r} {int(have[a]):,}" for a in np.argsort(have)[:3])
        raise InvalidParameterError(f"{path}: --common-questions: no question is in every "
                                    f"arm (and every seed of each); the arms with the fewest "
                                    f"questions: {fewest} (leave out their rows)")
    if keep.all():
        return table, questions, order, ""
    lost = (present.any(axis=1) & ~keep).sum(axis=1)    # each arm's own questions dropped
    named = [f"{a} {int(n):,}" for a, n in zip(arms, lost) if n]
    more = (f", ... and {len(named) - _NAMED_ARMS} more arms" if len(named) > _NAMED_ARMS
            else "")
    note = (f"--common-questions: {int(keep.sum()):,} of {len(questions):,} questions are "
            "in every arm and kept; dropped, of each arm's own: "
            + ", ".join(named[:_NAMED_ARMS]) + more)
    return (table[:, :, keep], [q for q, k in zip(questions, keep) if k], order[keep], note)
