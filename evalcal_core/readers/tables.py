"""Tidy tables, CSV or Parquet: one arm's ``question, score[, run]``, or both arms.

``question, score`` with an optional ``run`` (or ``seed``) column holds one arm; ``seed, arm,
question, score`` holds several and ``--filter`` picks the arm. A ``task`` column is picked
with ``--task``, or with ``--cluster task`` every task is read, each a cluster (questions
named ``task/question`` when there are several); ``--cluster COLUMN`` reads a column as
cluster labels; ``--metric`` names the score column. Runs named by a ``seed`` column are
seeds. Parquet needs pyarrow (the ``parquet`` extra: ``pip install '.[parquet]'``) or
fastparquet.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core.validate import InvalidParameterError

from . import register
from ._base import Reader, ReadOptions, RunLog, choose, matrix, note_cluster, put, qname, show
from ._files import check_regular, check_text_table, head

#: largest tidy CSV read as a log, in bytes (the cap on a results CSV,
#: ``evalcal_core.results_io.MAX_BYTES``)
MAX_CSV_BYTES = 2 * 2**30


def _load(path: Path, fmt: str) -> pd.DataFrame:
    if fmt == "parquet":
        check_regular(path)
    else:
        # Before the CSV parser: it holds a whole line in memory, so a sparse file of zeros
        # or a header of 200,000 columns took 1.5 GB, or minutes, before any message.
        check_text_table(path, "a tidy CSV log", MAX_CSV_BYTES)
    if fmt == "parquet":
        if not any(importlib.util.find_spec(m) for m in ("pyarrow", "fastparquet")):
            raise InvalidParameterError(f"{path}: reading Parquet needs pyarrow (pip install "
                                        "pyarrow, or the [parquet] extra) or fastparquet, which "
                                        "this environment lacks; or save the table as CSV")
        try:
            return pd.read_parquet(path)
        except (OSError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InvalidParameterError(f"{path}: not a readable Parquet file ({first})") from None
    try:
        # Ids stay text ("007" is not 7); scores are parsed below, column by column.
        return pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise InvalidParameterError(f"{path}: empty file") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidParameterError(f"{path}: not a readable CSV ({first})") from None


def _text(frame: pd.DataFrame, column: str, path: Path) -> pd.Series:
    values = frame[column]
    text = values.astype(str).str.strip()
    blank = values.isna().to_numpy() | (text == "").to_numpy()
    if blank.any():
        raise InvalidParameterError(f"{path}: row {int(np.argmax(blank)) + 2}: column {column!r} "
                                    "is empty")
    return text


def read_table(path: Path, fmt: str, opts: ReadOptions) -> RunLog:
    """One arm of a tidy table (see the module docstring)."""
    frame = _load(path, fmt)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    frame = frame.reset_index(drop=True)
    value_column = "score" if opts.metric is None else opts.metric.strip().lower()
    two_arm = "arm" in frame.columns
    needed = ("seed", "arm", "question", value_column) if two_arm else ("question", value_column)
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        flag = " (--metric)" if missing[0] == value_column and opts.metric is not None else ""
        raise InvalidParameterError(f"{path}: column {missing[0]!r}{flag} is missing: needs "
                                    f"columns seed, arm, question, {value_column} (several arms) "
                                    f"or question, {value_column}[, run] (one arm); found "
                                    f"{', '.join(frame.columns) or 'none'}")
    if frame.empty:
        raise InvalidParameterError(f"{path}: empty file (a header but no rows)")
    cluster = None if opts.cluster is None else opts.cluster.strip().lower()
    if cluster is not None and cluster not in frame.columns:
        raise InvalidParameterError(f"{path}: --cluster {opts.cluster!r} is not a column; columns: "
                                    f"{', '.join(frame.columns)}")
    questions = _text(frame, "question", path)
    keep = np.ones(len(frame), dtype=bool)
    chosen_task = None
    if "task" in frame.columns:
        tasks = _text(frame, "task", path)
        present = list(dict.fromkeys(tasks))
        if cluster == "task" and opts.task is None:
            # --cluster task: the tasks are the clusters, so every task is read (as lm-eval
            # folders are), each question named task/question when there are several, since
            # harnesses number questions from 0 within each task.
            chosen_task = ", ".join(sorted(present))
            if len(present) > 1:
                questions = tasks + "/" + questions
        else:
            if opts.task is None and len(present) > 1:
                # two ways out, not one: a user comparing the whole group wants every task
                raise InvalidParameterError(
                    f"{path}: holds several tasks ({', '.join(map(str, present))}); pass "
                    "--task to pick one, or --cluster task to read every task, each a cluster")
            chosen_task = choose("task", present, opts.task, str(path), "--task")
            keep &= (tasks == chosen_task).to_numpy()
    elif opts.task is not None:
        raise InvalidParameterError(f"{path}: task {opts.task!r} (--task) is absent; the table "
                                    "has no 'task' column (drop --task)")
    run_column = "seed" if two_arm else next((c for c in ("run", "seed") if c in frame.columns),
                                             None)
    if two_arm:
        arms = _text(frame, "arm", path).str.lower()
        chosen_arm = choose("arm", list(dict.fromkeys(arms[keep])),
                            None if opts.filter is None else opts.filter.lower(), str(path),
                            "--filter")
        keep &= (arms == chosen_arm).to_numpy()
    elif opts.filter is not None:
        raise InvalidParameterError(f"{path}: arm {opts.filter!r} (--filter) is absent; the table "
                                    "has no 'arm' column (drop --filter)")
    runs = (_text(frame, run_column, path) if run_column is not None
            else pd.Series(["0"] * len(frame)))
    raw = frame[value_column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    # "nan" and "inf" parse as numbers and are reported by matrix() with the metric's range.
    spelled_nan = raw.astype(str).str.strip().str.lower().isin(["nan", "-nan"]).to_numpy()
    bad = np.isnan(values) & ~spelled_nan & keep
    if bad.any():
        i = int(np.argmax(bad))
        raise InvalidParameterError(f"{path}: row {i + 2}: {qname('question', questions[i])}: "
                                    f"column {value_column!r} must be a number, got "
                                    f"{show(raw.iloc[i])}")
    labels_of = _text(frame, cluster, path) if cluster is not None else None
    cells: dict = {}
    seen: dict = {}
    clusters: dict = {}
    label = "seed" if run_column == "seed" else "run"
    for i in np.flatnonzero(keep):
        where = f"{path}: row {i + 2}: {qname('question', questions[i])}"
        put(cells, (questions[i], f"{label} {runs[i]}"), float(values[i]), where, seen,
            f"{label} {runs[i]}", f"row {i + 2}")
        if labels_of is not None:
            note_cluster(clusters, questions[i], labels_of[i], where, cluster)
    scores, question_ids, run_labels = matrix(cells, str(path), "question", value_column)
    model = None
    if "model" in frame.columns:
        models = frame["model"][keep].astype(str).str.strip().unique()
        model = str(models[0]) if len(models) == 1 else None
    return RunLog(scores=scores, questions=question_ids, runs=run_labels, metric=value_column,
                  task=chosen_task, model=model, format=fmt, source=str(path),
                  runs_are="seeds" if run_column == "seed" else "unknown",
                  clusters=(tuple(clusters[q] for q in question_ids) if cluster is not None
                            else None),
                  cluster_name=cluster)


@register
class CsvReader(Reader):
    name = "csv"
    suffixes = (".csv", ".tsv", ".txt")

    @classmethod
    def sniff(cls, path: Path) -> bool:
        # Text that starts like JSON or a zip archive is another format's log, renamed.
        start = head(path, 64).lstrip()
        return path.suffix.lower() in cls.suffixes and not start.startswith((b"{", b"[", b"PK"))

    @classmethod
    def read(cls, path: Path, opts: ReadOptions) -> RunLog:
        return read_table(path, cls.name, opts)


@register
class ParquetReader(Reader):
    name = "parquet"
    suffixes = (".parquet", ".pq")

    @classmethod
    def read(cls, path: Path, opts: ReadOptions) -> RunLog:
        return read_table(path, cls.name, opts)
