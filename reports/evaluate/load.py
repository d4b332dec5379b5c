"""Read the user's results into :class:`evalcal_core.scores.ArmScores` (m arms, r runs, n).

Two sources:

* a tidy CSV with an ``arm`` column holding any arm names (``seed,arm,metric`` per seed or
  ``seed,arm,question,score`` per question; an optional cluster column named by
  ``--cluster``);
* harness logs, one per arm (``--arm NAME=PATH``, or ``--baseline``/``--variant``), read with
  :func:`evalcal_core.readers.read_logs` and aligned by question id (questions missing
  from any arm are dropped and counted) and by run label or position.

Both return :class:`ArmScores` (:func:`evalcal_core.results_io.read_results_arms` for the CSV).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core.results_io import (
    FrameSource,
    read_results_arms,
    read_tidy_frame,
    tidy_layout,
)
from evalcal_core.scores import ArmScores, Arrival
from evalcal_core.validate import InvalidParameterError, fail
from protocols.analysis.design import NO_SEED_COLUMN

SEED_COLUMNS = ("seed", "arm", "metric")
QUESTION_COLUMNS = ("seed", "arm", "question", "score")
#: log formats whose runs are repeated decoding of one fixed model
#: how the stream names the order of harness logs' questions (their ids, naturally sorted)
LOG_ID_ORDER = "log question ids"
REPEAT_FORMATS = {"inspect": "Inspect epochs", "inspect-json": "Inspect epochs",
                  "helm": "HELM trials", "lm-eval": "lm-eval runs of one model"}


@dataclass(frozen=True)
class Loaded:
    """What was read: the scores, whether per question, and the log matching (or None)."""

    scores: ArmScores
    per_question: bool
    paired_logs: object = None
    runs_from: str = ""


def _row(index) -> str:
    return f"row {int(index) + 2}"


def _item(x):
    return getattr(x, "item", lambda: x)()


def read_tidy(path, *, percent=False, metric_range=None, partial_credit=False,
              cluster: str | None = None, order_by: str | None = None,
              columns: dict | None = None, common: bool = False) -> Loaded:
    """A tidy CSV (or the same table as a DataFrame) with any arm names, through
    :func:`evalcal_core.results_io.read_results_arms` (checked scores; ``baseline`` first).

    With ``--cluster`` the column is checked here first, so that the message says which of
    the two faults it is: a question filed under two clusters within one arm, or clusters
    that differ between arms.

    Arms whose seed sets differ are read ragged (NaN-padded, ``runs_per_arm``):
    :func:`~protocols.analysis.design.infer_design` accepts them only for independent seeds
    (``--design methods_independent``) and otherwise raises the reader's error naming the arm
    and the seed.

    The scores keep the order the units arrived in (:class:`evalcal_core.scores.Arrival`):
    the file's rows, or with ``order_by`` that column (:func:`arrival_by_column`).

    ``columns`` names the file's own columns for the reader's (``--score-column`` and the
    like: :func:`evalcal_core.results_io.reader_names`). A per-question file without a seed
    column is one run per arm (fixed models), and the design's reason says so
    (:data:`protocols.analysis.design.NO_SEED_COLUMN`). ``common`` (``--common-questions``)
    keeps the questions every arm has and drops exact duplicate rows, saying both in the
    scores' notes (:func:`evalcal_core.results_io.read_results_arms`).
    """
    if isinstance(path, pd.DataFrame):
        path = FrameSource(path)
    in_memory = isinstance(path, FrameSource)
    if not in_memory and Path(path).is_dir():
        raise InvalidParameterError(f"{path} is a directory, not a results CSV; a harness log "
                                    "folder is one arm: --arm NAME=PATH (or --baseline and "
                                    "--variant)")
    if cluster is not None and (in_memory or Path(path).is_file()):
        try:
            # arms, questions and clusters as written: "NA" is a name, "1" and "1.0" two
            frame = read_tidy_frame(path, (cluster,), columns=columns)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError,
                InvalidParameterError):
            frame = None  # the reader below names the fault
        if frame is not None:
            name = cluster.strip().lower()
            if {"question", "arm", name} <= set(frame.columns) and not frame.empty:
                _clusters_of(frame, name, frame["arm"].astype(str).str.strip(), str(path))
    scores = read_results_arms(path, percent=percent, metric_range=metric_range,
                               partial_credit=partial_credit, cluster=cluster, ragged=True,
                               columns=columns, common=common)
    if order_by is not None:
        scores = replace(scores, arrival=arrival_by_column(path, order_by, scores, columns))
    seeded = tidy_layout(path, columns)[1]
    return Loaded(scores, scores.question_ids != ("metric",),
                  runs_from="a seed column" if seeded else NO_SEED_COLUMN)


def arrival_by_column(path, column: str, scores: ArmScores, columns=None) -> Arrival:
    """The arrival order ``--order-by COLUMN`` states: each question and each seed arrives
    at its smallest value of the column (its first row once the rows are sorted by it).

    The column holds numbers (a position, a Unix time) or ISO 8601 times; either is read
    as written, never as text sorted (``q10`` before ``q9``).

    Raises
    ------
    InvalidParameterError
        One line: the column is absent, or a cell is empty, not a number or time, or not
        finite (naming the row and the value).
    """
    name = column.strip().lower()
    frame = read_tidy_frame(path, (name,), columns=columns)
    if name not in frame.columns:
        raise fail("--order-by", f"a column of {path} ({', '.join(frame.columns)})", column)
    cells = frame[name].astype(str)
    values = pd.to_numeric(cells, errors="coerce")
    if values.isna().any():
        times = pd.to_datetime(cells, format="ISO8601", errors="coerce", utc=True)
        if times.notna().all():
            # nanoseconds since 1970: exact as int64, ordered as the times are
            values = pd.Series((times - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(1, "ns"))
    bad = (values.isna() | ~np.isfinite(values.astype(float))).to_numpy()
    if bad.any():
        i = int(bad.argmax())
        where = path.row(i) if isinstance(path, FrameSource) else _row(i)
        raise fail("--order-by", "a column holding a finite number or an ISO 8601 time on "
                   "every row", got=f"{cells.iloc[i]!r} in column {column!r} on {where} of "
                   f"{path}")
    values = values.to_numpy()
    runs = pd.Series(values).groupby(frame["seed"].map(lambda v: str(_item(v))).to_numpy()).min()
    run_times = runs.reindex([str(r) for r in scores.run_ids]).to_numpy()
    if scores.question_ids == ("metric",):
        question_times = np.zeros(1, dtype=values.dtype)
    else:
        questions = pd.Series(values).groupby(frame["question"].to_numpy()).min()
        question_times = questions.reindex(list(scores.question_ids)).to_numpy()
    unmatched = pd.isna(run_times).any() or pd.isna(question_times).any()
    if unmatched:  # the frame's seed cells and the reader's seeds disagree on a label
        raise InvalidParameterError(f"--order-by {column!r}: the seeds of {path} could not be "
                                    "matched to the column's rows; write seeds as integers")
    return Arrival(question_times, run_times, f"column {column}")


def _clusters_of(frame, column, arm, source) -> None:
    """A question filed under two clusters (within an arm), or clusters that differ between
    arms, are errors."""
    labels = frame[column].astype(str).str.strip()
    q = frame["question"].map(_item)
    both = pd.DataFrame({"q": q, "c": labels, "arm": arm})
    per_arm = both.groupby(["arm", "q"])["c"].nunique()
    if (per_arm > 1).any():
        a, question = per_arm[per_arm > 1].index[0]
        found = sorted(both[(both.arm == a) & (both.q == question)]["c"].unique())
        raise InvalidParameterError(f"{source}: question {question!r} is filed under two clusters "
                                    f"({', '.join(found[:2])}) in column {column!r}")
    per_q = both.groupby("q")["c"].nunique()
    if (per_q > 1).any():
        question = per_q[per_q > 1].index[0]
        rows = both[both.q == question].drop_duplicates(["arm", "c"])
        where = ", ".join(f"{r.arm}: {r.c}" for r in rows.itertuples())
        raise InvalidParameterError(f"{source}: clusters differ between arms for question "
                                    f"{question!r} ({where}) in column {column!r}")


def read_log_arms(paths: dict, *, metric=None, task=None, filter=None, scale=1.0,
                  cluster=None, partial_credit=False, fmt=None,
                  max_member_bytes=None) -> Loaded:
    """Read one harness log per arm with :func:`evalcal_core.readers.read_logs` (questions
    aligned by id, runs by label or position; what was dropped is in the notes)."""
    from evalcal_core.readers import check_path, read_logs

    for name, path in paths.items():
        if not Path(path).exists() and not Path(path).is_symlink():
            raise InvalidParameterError(f"arm {name!r}: log {path!r} does not exist")
        try:
            check_path(Path(path))  # a symbolic-link loop or a broken link, named as such
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"arm {name!r}: {exc}") from None
    extra = {} if max_member_bytes is None else {"max_member_bytes": max_member_bytes}
    aligned = read_logs(paths, fmt=fmt, task=task, metric=metric, filter=filter,
                        cluster=cluster, partial_credit=partial_credit, **extra)
    scores = aligned.scores
    if scale != 1.0:
        scores = replace(scores, scores=scores.scores * scale)
    if scores.arrival is None:
        # the readers keep ids, not the samples' order: say so rather than call it arrival
        scores = replace(scores, arrival=Arrival(np.arange(scores.n), np.arange(scores.r),
                                                 LOG_ID_ORDER))
    formats = sorted({log.format for log in aligned.logs.values()})
    runs_from = ", ".join(dict.fromkeys(REPEAT_FORMATS.get(f, f"{f} runs") for f in formats))
    return Loaded(scores, True, paired_logs=aligned, runs_from=runs_from)
