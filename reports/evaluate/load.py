"""Read the user's results into :class:`evalcal_core.scores.ArmScores` (m arms, r runs, n).

Two sources:

* a tidy CSV with an ``arm`` column holding any arm names (``seed,arm,metric`` per seed or
  ``seed,arm,question,score`` per question; an optional cluster column named by
  ``--cluster``);
* harness logs, one per arm (``--arm NAME=PATH``, or ``--baseline``/``--variant``), read with
  :func:`evalcal_core.harness_logs.read_log` and aligned by question id (questions missing
  from any arm are dropped and counted) and by run position.

This is the application's adapter until the shared readers (``read_results_arms``,
``evalcal_core.readers.read_arms``) land; both return the same :class:`ArmScores`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core.results_io import FRACTION_RANGE
from evalcal_core.scores import ArmScores
from evalcal_core.validate import plain

SEED_COLUMNS = ("seed", "arm", "metric")
QUESTION_COLUMNS = ("seed", "arm", "question", "score")
#: log formats whose runs are repeated decoding of one fixed model
REPEAT_FORMATS = {"inspect": "Inspect epochs", "helm": "HELM trials"}


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


def read_tidy(path, *, scale: float = 1.0, cluster: str | None = None) -> Loaded:
    """Read a tidy CSV with any arm names (arms in order of first appearance)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a results CSV")
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
    if cluster is not None:
        cluster = cluster.strip().lower()
        if cluster not in columns:
            raise ValueError(f"{path}: --cluster column {cluster!r} is missing; found "
                             f"{', '.join(frame.columns)}")
        if not per_question:
            raise ValueError(f"{path}: --cluster needs per-question scores "
                             f"(seed,arm,question,score,{cluster})")
    needed = ("seed", "arm") + (("question",) if per_question else ()) + (
        (cluster,) if cluster else ())
    for column in needed:
        missing = frame[column].isna()
        if missing.any():
            raise ValueError(f"{path}: {_row(missing.idxmax())}: column {column!r} is empty")
    arm = frame["arm"].astype(str).str.strip()
    values = pd.to_numeric(frame[value], errors="coerce")
    bad = values.isna() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
    if bad.any():
        i = bad.idxmax()
        raise ValueError(f"{path}: {_row(i)}: column {value!r} must be a finite number, "
                         f"got {frame[value][i]!r}")
    tidy = pd.DataFrame({"seed": frame["seed"], "arm": arm, "value": values * scale,
                         "question": frame["question"] if per_question else 0})
    keys = ["seed", "arm"] + (["question"] if per_question else [])
    dup = tidy.duplicated(keys)
    if dup.any():
        i = dup.idxmax()
        raise ValueError(f"{path}: {_row(i)}: duplicate entry for "
                         + ", ".join(f"{c}={tidy[c][i]!r}" for c in keys))
    arms = list(dict.fromkeys(arm))
    if len(arms) < 2:
        raise ValueError(f"{path}: column 'arm' names one arm ({arms[0]!r}); a comparison "
                         f"needs two or more arms")
    seeds = sorted((_item(s) for s in tidy["seed"].unique()), key=lambda s: (str(type(s)), s))
    questions = (sorted((_item(q) for q in tidy["question"].unique()), key=str)
                 if per_question else [0])
    _check_same_units(tidy, arms, seeds, questions, per_question, str(path))
    cube = np.empty((len(arms), len(seeds), len(questions)))
    for a, name in enumerate(arms):
        table = tidy[tidy["arm"] == name].pivot(index="seed", columns="question",
                                                values="value")
        cube[a] = table.reindex(index=seeds, columns=questions).to_numpy(dtype=float)
    clusters = None
    if cluster:
        clusters = _clusters_of(frame, cluster, arm, questions, str(path))
    scores = ArmScores(arms=tuple(arms), scores=cube,
                       question_ids=tuple(str(q) for q in questions) if per_question
                       else ("metric",),
                       run_ids=tuple(str(s) for s in seeds), runs_are="seeds",
                       clusters=clusters, cluster_name=cluster,
                       metric=value, source=str(path))
    return Loaded(scores, per_question, runs_from="a seed column")


def _check_same_units(tidy, arms, seeds, questions, per_question, source) -> None:
    """Every arm has every seed (and question); the error names the arm and what it lacks."""
    for name in arms:
        part = tidy[tidy["arm"] == name]
        have = set(part["seed"].map(_item))
        lacking = [s for s in seeds if s not in have]
        if lacking:
            shown = ", ".join(repr(s) for s in lacking[:5])
            raise ValueError(f"{source}: arm {name!r} has no score for seed {shown}: every "
                             f"seed needs every arm ({len(seeds)} seeds in the file)")
        if per_question:
            pairs = set(zip(part["seed"].map(_item), part["question"].map(_item)))
            for s in seeds:
                for q in questions:
                    if (s, q) not in pairs:
                        raise ValueError(f"{source}: arm {name!r} has no score for seed "
                                         f"{s!r}, question {q!r}: every seed needs every arm "
                                         f"and every question")


def _clusters_of(frame, column, arm, questions, source) -> np.ndarray:
    """One cluster label per question; a question filed under two clusters, or clusters that
    differ between arms, are errors."""
    labels = frame[column].astype(str).str.strip()
    q = frame["question"].map(_item)
    both = pd.DataFrame({"q": q, "c": labels, "arm": arm})
    per_arm = both.groupby(["arm", "q"])["c"].nunique()
    if (per_arm > 1).any():
        a, question = per_arm[per_arm > 1].index[0]
        found = sorted(both[(both.arm == a) & (both.q == question)]["c"].unique())
        raise ValueError(f"{source}: question {question!r} is filed under two clusters "
                         f"({', '.join(found[:2])}) in column {column!r}")
    per_q = both.groupby("q")["c"].nunique()
    if (per_q > 1).any():
        question = per_q[per_q > 1].index[0]
        rows = both[both.q == question].drop_duplicates(["arm", "c"])
        where = ", ".join(f"{r.arm}: {r.c}" for r in rows.itertuples())
        raise ValueError(f"{source}: clusters differ between arms for question "
                         f"{question!r} ({where}) in column {column!r}")
    first = both.drop_duplicates("q").set_index("q")["c"]
    return np.array([first[x] for x in questions], dtype=str)


def parse_arm_options(values) -> dict:
    """``["NAME=PATH", ...]`` -> ``{name: path}``, in order; names distinct."""
    arms = {}
    for text in values or ():
        name, sep, path = str(text).partition("=")
        name, path = name.strip(), path.strip()
        if not sep or not name or not path:
            raise ValueError(f"--arm must be NAME=PATH, got {text!r}")
        if name in arms:
            raise ValueError(f"--arm {name!r} is given twice; arm names must be distinct")
        arms[name] = path
    return arms


def read_log_arms(paths: dict, *, metric=None, task=None, filter=None, scale=1.0,
                  cluster=None, partial_credit=False) -> Loaded:
    """Read one harness log per arm with :func:`evalcal_core.readers.read_logs` (questions
    aligned by id, runs by label or position; what was dropped is in the notes)."""
    from dataclasses import replace

    from evalcal_core.readers import read_logs

    for name, path in paths.items():
        if not Path(path).exists():
            raise ValueError(f"arm {name!r}: log {path!r} does not exist")
    aligned = read_logs(paths, task=task, metric=metric, filter=filter, cluster=cluster,
                        partial_credit=partial_credit)
    scores = aligned.scores
    if scale != 1.0:
        scores = replace(scores, scores=scores.scores * scale)
    formats = sorted({log.format for log in aligned.logs.values()})
    runs_from = ", ".join(REPEAT_FORMATS.get(f, f"{f} runs") for f in formats)
    return Loaded(scores, True, paired_logs=aligned, runs_from=runs_from)


def check_arm_scores(scores: ArmScores, *, per_question: bool, value_range=FRACTION_RANGE,
                     percent=False, declared=False, partial=False) -> None:
    """Refuse implausible scores (one line naming the arm, seed, question and the fix).

    The rules of :func:`evalcal_core.results_io.check_scores`, for any number of arms.
    """
    low, high = value_range
    cube = scores.scores
    flat = cube.ravel()
    src = scores.source

    def first(bad):
        a, i, j = np.argwhere(bad(cube))[0]
        where = f"{src}: {scores.arms[a]} seed {scores.run_ids[i]!r}"
        if per_question:
            where += f", question #{j + 1}"
        return where, cube[a, i, j]

    if not np.isfinite(flat).all():
        raise ValueError(f"{src}: scores must be finite numbers; found "
                         f"{plain(float(flat[~np.isfinite(flat)][0]))}")
    outside = (flat < low) | (flat > high)
    if outside.any():
        where, value = first(lambda c: (c < low) | (c > high))
        where += (f": score {plain(float(value))} is outside "
                  f"[{plain(float(low))}, {plain(float(high))}]")
        if declared:
            raise ValueError(f"{where} (the --metric-range declared)")
        if percent:
            raise ValueError(f"{where} after reading it as a percentage (--percent)")
        if (flat <= 100).all() and (flat >= 0).all():
            if outside.mean() > 0.5:
                raise ValueError(f"{where}: the scores look like percentages (up to "
                                 f"{plain(float(flat.max()))}); pass --percent, or declare "
                                 f"the metric's range with --metric-range LOW HIGH")
            raise ValueError(f"{where}: most scores are fractions but {int(outside.sum())} "
                             f"look like percentages; write every score in one unit")
        raise ValueError(f"{where}; accuracy-like metrics are fractions in [0, 1]; for "
                         f"another metric declare its range with --metric-range LOW HIGH")
    if percent and not declared and 0 < flat.max() <= 0.01:
        raise ValueError(f"{src}: --percent was given but every score is at most 1 (already "
                         f"fractions?); drop --percent")
    if per_question and not declared and not partial:
        odd = ~np.isin(flat, (0.0, 1.0))
        if odd.any() and odd.mean() < 0.05:
            where, value = first(lambda c: ~np.isin(c, (0.0, 1.0)))
            raise ValueError(f"{where}: score {plain(float(value))} in a file of 0/1 scores "
                             f"({int(odd.sum())} of {flat.size} are not 0 or 1); fix them, "
                             f"or pass --partial-credit if partial scores are meant")
