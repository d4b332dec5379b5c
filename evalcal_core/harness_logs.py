"""Read evaluation harnesses' per-sample logs into per-question score matrices.

Researchers have the logs their harness wrote, not tidy CSVs. :func:`read_log` turns one run
log into a :class:`RunLog` (scores of shape ``(runs, questions)``) and :func:`pair_logs` aligns
a baseline log with a variant log by question id into a :class:`PairedLogs`.

Formats (``fmt`` values) and what a "run" is in each:

``"lm-eval"``
    lm-evaluation-harness ``--log_samples``: ``samples_<task>_<date>.jsonl``, one JSON object
    per document and filter with ``doc_id``, ``filter``, ``metrics`` (the metric names) and one
    key per metric. ``repeats`` are already reduced to one value per document, so a file is one
    run. The model comes from ``results_<date>.json`` beside it (``model_name`` or
    ``config.model_args``), else from the folder name.
``"inspect"``
    Inspect AI ``.eval`` logs: a zip with ``header.json`` (``eval.task``, ``eval.model``,
    ``eval.config.epochs``) and ``samples/<id>_epoch_<n>.json``, each with ``id``, ``epoch`` and
    ``scores`` = ``{scorer: {"value": ...}}``. Each epoch is a run. Values are read as Inspect's
    default ``value_to_float`` reads them: ``"C"`` 1, ``"P"`` 0.5, ``"I"`` and ``"N"`` 0,
    numbers and booleans as numbers, ``"yes"``/``"true"`` 1, ``"no"``/``"false"`` 0, numeric
    strings as numbers.
``"helm"``
    HELM ``per_instance_stats.json``: a list of ``{instance_id, train_trial_index,
    perturbation?, stats: [{name: {name: ...}, mean, count, ...}]}``. Each train trial is a
    run. Perturbed entries are skipped unless ``filter`` names the perturbation. Task and model
    come from ``run_spec.json`` beside it (``name``, ``adapter_spec.model``).
``"csv"``, ``"parquet"``
    A tidy table: ``seed, arm, question, score`` (both arms; ``filter`` picks the arm) or
    ``question, score`` with an optional ``run`` (or ``seed``) column for one arm. Each seed or
    run is a run. Parquet needs pyarrow or fastparquet, which this project does not install.

The ``filter`` argument picks the rows that make up one run log: the lm-eval filter
(``"strict-match"``), the HELM perturbation name (``"typos"``) or the CSV arm
(``"baseline"``). Every problem is a one-line ``ValueError`` naming the file, the question
(``doc_id``, ``id``, ``instance_id`` or row) and the field.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

FORMATS = ("lm-eval", "inspect", "helm", "csv", "parquet")

# Keys lm-evaluation-harness writes on every sample line besides the metric values
# (lm_eval/evaluator.py, the ``example`` dict built when ``log_samples`` is on).
_LM_EVAL_FIELDS = frozenset({
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
    "doc_hash", "prompt_hash", "target_hash",
})
# ``date_id`` is ``datetime.now().isoformat().replace(":", "-")``: 2024-05-13T13-53-11.123456
_LM_EVAL_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)$")
_INSPECT_SAMPLE = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json$")
_INSPECT_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_ZIP_MAGIC = b"PK\x03\x04"
_SHOW_IDS = 5


@dataclass(frozen=True)
class RunLog:
    """Per-question scores of one arm read from a harness log.

    Attributes
    ----------
    scores : ndarray of float, shape (runs, questions)
        The metric per run and question, in the metric's own units (a fraction for accuracy);
        read-only.
    questions : tuple of str
        Question ids (``doc_id``, sample ``id``, ``instance_id``, CSV ``question``), column order.
    runs : tuple of str
        Run labels (``"epoch 2"``, ``"trial 0"``, the CSV seed, the lm-eval file's date), row
        order.
    metric : str
        The metric, scorer or column read.
    task : str or None
        The task or run name, when the log names one.
    model : str or None
        The model, when the log names one.
    format : str
        One of ``"lm-eval"``, ``"inspect"``, ``"helm"``, ``"csv"``, ``"parquet"``.
    source : str
        The file read.
    """

    scores: np.ndarray
    questions: tuple
    runs: tuple
    metric: str
    task: str | None
    model: str | None
    format: str
    source: str

    @property
    def k(self) -> int:
        """Number of runs."""
        return self.scores.shape[0]

    @property
    def n(self) -> int:
        """Number of questions."""
        return self.scores.shape[1]

    @property
    def score_range(self) -> tuple[float, float]:
        """Smallest and largest score, in the metric's units."""
        return float(self.scores.min()), float(self.scores.max())

    def describe(self) -> str:
        """One line: source, format, task, model, metric and its range."""
        low, high = self.score_range
        about = ", ".join([self.format] + [f"{name} {value}" for name, value in
                                           (("task", self.task), ("model", self.model))
                                           if value is not None])
        return (f"{self.source} ({about}): {self.k} run(s) x {self.n} questions, "
                f"metric {self.metric!r} in [{_num(low)}, {_num(high)}], "
                f"mean {_num(self.scores.mean())}")


@dataclass(frozen=True)
class PairedLogs:
    """A baseline and a variant log aligned by question id and run position.

    Attributes
    ----------
    base, variant : ndarray of float, shape (k, n)
        Scores of the matched questions, columns in ``questions`` order, row ``i`` of both
        from run ``i`` of each log; read-only.
    questions : tuple of str
        The ``n`` question ids present in both logs, in the baseline's order.
    runs : tuple of (str, str)
        ``(baseline run label, variant run label)`` for each of the ``k`` rows.
    dropped_baseline, dropped_variant : tuple of str
        Question ids present only in the baseline, only in the variant (left out).
    metric : str
        The metric both logs score.
    source : str
        ``"<baseline source> vs <variant source>"``.
    baseline_log, variant_log : RunLog
        The logs as read, for their task, model and format.
    """

    base: np.ndarray
    variant: np.ndarray
    questions: tuple
    runs: tuple
    dropped_baseline: tuple
    dropped_variant: tuple
    metric: str
    source: str
    baseline_log: RunLog
    variant_log: RunLog

    @property
    def k(self) -> int:
        """Number of paired runs."""
        return self.base.shape[0]

    @property
    def n(self) -> int:
        """Number of matched questions."""
        return self.base.shape[1]

    def summary_lines(self) -> list[str]:
        """What was matched and what was left out, one finding per line.

        Returns
        -------
        list of str
            Matched and dropped questions (with the first few dropped ids), how runs were
            paired, and each arm's source, metric range and mean over the matched questions.
        """
        lines = [f"{self.n} questions matched; "
                 f"{_dropped(self.dropped_baseline, 'the baseline')}; "
                 f"{_dropped(self.dropped_variant, 'the variant')}"]
        pairs = ", ".join(f"{b} with {v}" for b, v in self.runs[:_SHOW_IDS])
        more = f", ... ({self.k - _SHOW_IDS} more)" if self.k > _SHOW_IDS else ""
        lines.append(f"{self.k} run(s) paired by position (baseline with variant): {pairs}{more}")
        for arm, log, scores in (("baseline", self.baseline_log, self.base),
                                 ("variant", self.variant_log, self.variant)):
            about = ", ".join([log.format] + [f"{name} {value}" for name, value in
                                              (("task", log.task), ("model", log.model))
                                              if value is not None])
            lines.append(f"{arm}: {log.source} ({about}): metric {self.metric!r} in "
                         f"[{_num(scores.min())}, {_num(scores.max())}], "
                         f"mean {_num(scores.mean())} over the matched questions")
        return lines


def read_log(path, *, metric: str | None = None, task: str | None = None,
             filter: str | None = None, fmt: str | None = None) -> RunLog:
    """Read one arm's per-question scores from a harness log.

    Parameters
    ----------
    path : str or Path
        A log file, or a folder to search: lm-eval output (``samples_<task>_*.jsonl``, any
        depth), Inspect ``*.eval`` files, HELM run folders (``per_instance_stats.json``).
    metric : str, optional
        The lm-eval metric key, Inspect scorer, HELM stat name or CSV column. Needed when the
        log holds several; the error lists them. Default for CSV/Parquet: ``"score"``.
    task : str, optional
        The task to read when ``path`` holds several (lm-eval task, Inspect ``eval.task``,
        HELM run name or its scenario part before ``:``, CSV ``task`` column).
    filter : str, optional
        lm-eval filter, HELM perturbation name or CSV arm. Needed when the log holds several
        lm-eval filters or CSV arms; HELM reads unperturbed instances without it.
    fmt : {"lm-eval", "inspect", "helm", "csv", "parquet"}, optional
        The format; detected from the file name and content when omitted.

    Returns
    -------
    RunLog

    Raises
    ------
    ValueError
        One line naming the file, the question and the field at fault.
    """
    path, fmt = _read_log_iv(path, metric, task, filter, fmt)
    if fmt == "lm-eval":
        return _read_lm_eval(_find_lm_eval(path, task) if path.is_dir() else path,
                             metric=metric, task=task, filter=filter)
    if fmt == "inspect":
        return _read_inspect(_find_inspect(path, task) if path.is_dir() else path,
                             metric=metric, task=task, filter=filter)
    if fmt == "helm":
        return _read_helm(_find_helm(path, task) if path.is_dir() else path,
                          metric=metric, task=task, filter=filter)
    return _read_table(path, fmt, metric=metric, task=task, filter=filter)


def pair_logs(baseline: RunLog, variant: RunLog) -> PairedLogs:
    """Align a baseline and a variant log by question id; pair runs by position.

    Parameters
    ----------
    baseline, variant : RunLog
        Logs of the same metric with the same number of runs.

    Returns
    -------
    PairedLogs
        The questions present in both, in the baseline's order; the others are listed in
        ``dropped_baseline`` and ``dropped_variant``.

    Raises
    ------
    ValueError
        If the metrics differ, the run counts differ, or no question is in both.
    """
    _pair_logs_iv(baseline, variant)
    in_variant = {q: j for j, q in enumerate(variant.questions)}
    common = [q for q in baseline.questions if q in in_variant]
    if not common:
        raise ValueError(
            f"no questions in common between baseline {baseline.source} "
            f"(ids {_ids(baseline.questions)}) and variant {variant.source} "
            f"(ids {_ids(variant.questions)}); are they the same task?")
    in_baseline = set(baseline.questions)
    base_index = {q: i for i, q in enumerate(baseline.questions)}
    base = baseline.scores[:, [base_index[q] for q in common]]
    var = variant.scores[:, [in_variant[q] for q in common]]
    return PairedLogs(
        base=_frozen(base), variant=_frozen(var), questions=tuple(common),
        runs=tuple(zip(baseline.runs, variant.runs)),
        dropped_baseline=tuple(q for q in baseline.questions if q not in in_variant),
        dropped_variant=tuple(q for q in variant.questions if q not in in_baseline),
        metric=baseline.metric, source=f"{baseline.source} vs {variant.source}",
        baseline_log=baseline, variant_log=variant)


# --- validation -------------------------------------------------------------------------------

def _read_log_iv(path, metric, task, filter, fmt) -> tuple[Path, str]:
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"The 'path' parameter of read_log must be a str or Path. "
                         f"Got {path!r} instead.")
    for name, value in (("metric", metric), ("task", task), ("filter", filter), ("fmt", fmt)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"The {name!r} parameter of read_log must be a str or None. "
                             f"Got {value!r} instead.")
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"The 'fmt' parameter of read_log must be one of "
                         f"{', '.join(map(repr, FORMATS))}. Got {fmt!r} instead.")
    path = Path(path)
    if not path.exists():
        raise ValueError(f"{path}: no such file or folder")
    fmt = fmt if fmt is not None else _detect(path)
    if fmt in ("csv", "parquet") and path.is_dir():
        raise ValueError(f"{path}: is a folder; fmt={fmt!r} reads one file, so pass the file")
    return path, fmt


def _pair_logs_iv(baseline, variant) -> None:
    for name, log in (("baseline", baseline), ("variant", variant)):
        if not isinstance(log, RunLog):
            raise ValueError(f"The {name!r} parameter of pair_logs must be a RunLog "
                             f"(from read_log). Got {type(log).__name__} instead.")
    if baseline.metric != variant.metric:
        raise ValueError(
            f"metric mismatch: baseline {baseline.source} scores {baseline.metric!r} but "
            f"variant {variant.source} scores {variant.metric!r}; read both with the same "
            f"metric=")
    if baseline.k != variant.k:
        raise ValueError(
            f"runs are paired by position, so both arms need the same number: baseline "
            f"{baseline.source} has {baseline.k} ({_ids(baseline.runs)}), variant "
            f"{variant.source} has {variant.k} ({_ids(variant.runs)})")


def _detect(path: Path) -> str:
    if path.is_dir():
        found = [fmt for fmt, pattern in (("lm-eval", "samples_*.jsonl"), ("inspect", "*.eval"),
                                          ("helm", "per_instance_stats.json"))
                 if next(path.rglob(pattern), None) is not None]
        if not found:
            raise ValueError(f"{path}: found no harness logs in this folder "
                             f"(samples_*.jsonl, *.eval, per_instance_stats.json)")
        if len(found) > 1:
            raise ValueError(f"{path}: holds logs of several formats ({', '.join(found)}); "
                             f"pass fmt= or a file")
        return found[0]
    suffix = path.suffix.lower()
    by_suffix = {".jsonl": "lm-eval", ".eval": "inspect", ".csv": "csv", ".parquet": "parquet",
                 ".pq": "parquet"}
    if suffix in by_suffix:
        return by_suffix[suffix]
    with path.open("rb") as fh:
        head = fh.read(4096)
    if head.startswith(_ZIP_MAGIC):
        return "inspect"
    if suffix == ".json" and (path.name == "per_instance_stats.json"
                              or head.lstrip().startswith(b"[")):
        return "helm"
    raise ValueError(f"{path}: cannot tell the log format from the name or content "
                     f"(known: .jsonl lm-eval, .eval Inspect, per_instance_stats.json HELM, "
                     f".csv, .parquet); pass fmt=")


# --- shared helpers ---------------------------------------------------------------------------

def _num(x) -> str:
    return f"{float(x):.4g}"


def _show(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _ids(ids: Iterable, limit: int = _SHOW_IDS) -> str:
    ids = list(ids)
    shown = ", ".join(str(i) for i in ids[:limit])
    return shown + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "")


def _dropped(ids: tuple, where: str) -> str:
    return f"{len(ids)} only in {where}" + (f" ({_ids(ids)})" if ids else "")


def _qname(word: str, qid: str) -> str:
    return f"{word} {qid}" if qid.isdigit() else f"{word} {qid!r}"


def _sort_key(label: str):
    # Natural order: doc_id 2 before 10, then the non-numeric ids as text.
    return (0, int(label), label) if label.isdigit() else (1, 0, label)


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=float)
    array.setflags(write=False)
    return array


def _choose(kind: str, present: list, chosen: str | None, where: str, argument: str) -> str:
    """The one value of ``kind`` to read: the chosen one, or the only one present."""
    if chosen is not None:
        if chosen not in present:
            raise ValueError(f"{where}: {kind} {chosen!r} is absent; {kind}s present: "
                             f"{', '.join(map(str, present)) or 'none'}")
        return chosen
    if len(present) > 1:
        raise ValueError(f"{where}: holds several {kind}s ({', '.join(map(str, present))}); "
                         f"pass {argument}= to pick one")
    return present[0]


def _number(value, where: str, field: str) -> float:
    """A JSON score as float; non-finite values are left for :func:`_matrix` to report."""
    if isinstance(value, (bool, int, float)):
        return float(value)
    raise ValueError(f"{where}: field {field!r} must be a number, got {_show(value)}")


def _matrix(cells: dict, source: str, word: str, field: str) -> tuple:
    """Scores ``(runs, questions)`` from ``{(question, run): value}``, every cell filled.

    ``cells`` keys are strings; ``word`` names a question in messages (``doc_id``).
    """
    questions = sorted({q for q, _ in cells}, key=_sort_key)
    runs = sorted({r for _, r in cells}, key=_run_key)
    q_index = {q: j for j, q in enumerate(questions)}
    r_index = {r: i for i, r in enumerate(runs)}
    scores = np.full((len(runs), len(questions)), np.nan)
    filled = np.zeros(scores.shape, dtype=bool)
    for (q, r), value in cells.items():
        scores[r_index[r], q_index[q]] = value
        filled[r_index[r], q_index[q]] = True
    if not filled.all():
        i, j = np.argwhere(~filled)[0]
        raise ValueError(f"{source}: {_qname(word, questions[j])} has no {field!r} score in "
                         f"{runs[i]} (every question needs a score in each of the "
                         f"{len(runs)} runs: {_ids(runs)})")
    finite = np.isfinite(scores)
    if not finite.all():
        i, j = np.argwhere(~finite)[0]
        rest = scores[finite]
        span = (f"the other scores lie in [{_num(rest.min())}, {_num(rest.max())}]"
                if rest.size else "no score is finite")
        raise ValueError(f"{source}: {_qname(word, questions[j])} ({runs[i]}): field "
                         f"{field!r} is {scores[i, j]}; scores must be finite ({span})")
    return _frozen(scores), tuple(questions), tuple(runs)


def _run_key(label: str):
    # "epoch 10" after "epoch 2": compare the trailing number when there is one.
    match = re.fullmatch(r"(.*?)(\d+)", label)
    return (match.group(1), int(match.group(2)), "") if match else (label, -1, label)


def _put(cells: dict, key: tuple, value: float, where: str, first_seen: dict,
         what: str) -> None:
    if key in cells:
        raise ValueError(f"{where}: duplicate entry for {what} (first at {first_seen[key]})")
    cells[key] = value


def _pick_file(root: Path, by_task: dict, task: str | None, kind: str) -> Path:
    """The one log file under ``root`` for ``task`` (``by_task``: task -> files)."""
    tasks = sorted(by_task)
    if not tasks:
        raise ValueError(f"{root}: no {kind} in this folder")
    if task is None and len(tasks) > 1:
        raise ValueError(f"{root}: holds several tasks ({', '.join(tasks)}); pass task= "
                         f"to pick one")
    name = tasks[0] if task is None else task
    if name not in by_task:
        raise ValueError(f"{root}: task {task!r} is absent; tasks present: {', '.join(tasks)}")
    files = sorted(by_task[name])
    if len(files) > 1:
        raise ValueError(f"{root}: several {kind} for task {name!r} "
                         f"({', '.join(str(f.relative_to(root)) for f in files)}); "
                         f"pass the file to read")
    return files[0]


def _load_json(path: Path, what: str):
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason})") from None
    if not text.strip():
        raise ValueError(f"{path}: empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column "
                         f"{exc.colno}); expected {what}") from None


# --- lm-evaluation-harness --------------------------------------------------------------------

def _lm_eval_name(path: Path) -> tuple[str, str | None]:
    match = _LM_EVAL_NAME.match(path.stem)
    if match:
        return match.group("task"), match.group("date")
    stem = path.stem
    return (stem[len("samples_"):] if stem.startswith("samples_") else stem), None


def _find_lm_eval(root: Path, task: str | None) -> Path:
    by_task: dict = {}
    for file in root.rglob("samples_*.jsonl"):
        by_task.setdefault(_lm_eval_name(file)[0], []).append(file)
    if not by_task:
        raise ValueError(f"{root}: no lm-eval sample files (samples_<task>_<date>.jsonl) here")
    return _pick_file(root, by_task, task, "sample files")


def _lm_eval_model(path: Path, date: str | None) -> str | None:
    """The model named by the ``results_<date>.json`` beside a samples file, else the folder."""
    exact = path.parent / f"results_{date}.json"
    candidates = [exact] if exact.is_file() else sorted(path.parent.glob("results_*.json"))
    if len(candidates) == 1:
        try:
            results = json.loads(candidates[0].read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            results = None  # metadata only: the scores do not depend on it
        if isinstance(results, dict):
            if isinstance(results.get("model_name"), str) and results["model_name"]:
                return results["model_name"]
            config = results.get("config")
            args = config.get("model_args") if isinstance(config, dict) else None
            if isinstance(args, str):
                args = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
            if isinstance(args, dict):
                for key in ("pretrained", "model", "model_name", "path"):
                    if isinstance(args.get(key), str):
                        return args[key]
    # lm-eval writes into <output_path>/<model_name_sanitized>/, "/" written as "__".
    folder = path.parent.name
    return folder.replace("__", "/") if folder else None


def _read_lm_eval(path: Path, *, metric, task, filter) -> RunLog:
    file_task, date = _lm_eval_name(path)
    if task is not None and task != file_task:
        raise ValueError(f"{path}: task {task!r} is absent; this file holds task {file_task!r}")
    lines = []
    try:
        with path.open(encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}: line {line_no}: not valid JSON ({exc.msg} at "
                                     f"column {exc.colno})") from None
                if not isinstance(obj, dict):
                    raise ValueError(f"{path}: line {line_no}: expected a JSON object per "
                                     f"line, got {type(obj).__name__}")
                if "doc_id" not in obj:
                    raise ValueError(f"{path}: line {line_no}: field 'doc_id' is missing")
                lines.append((line_no, obj))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason})") from None
    if not lines:
        raise ValueError(f"{path}: empty file (no sample lines)")

    # Files from before lm-eval wrote "filter" hold one unnamed filter, "none".
    filters = list(dict.fromkeys(str(obj.get("filter", "none")) for _, obj in lines))
    chosen_filter = _choose("filter", filters, filter, str(path), "filter")
    lines = [(n, obj) for n, obj in lines if str(obj.get("filter", "none")) == chosen_filter]

    def metrics_of(obj) -> list:
        if isinstance(obj.get("metrics"), list):
            return [str(m) for m in obj["metrics"]]
        # Older files have no "metrics" list: every other key holding a number is one.
        return [k for k, v in obj.items() if k not in _LM_EVAL_FIELDS
                and isinstance(v, (bool, int, float))]

    metrics = list(dict.fromkeys(m for _, obj in lines for m in metrics_of(obj)))
    if not metrics:
        raise ValueError(f"{path}: field 'metrics' is missing and no line holds a numeric "
                         f"metric; is this an lm-eval samples file?")
    chosen = _choose("metric", metrics, metric, str(path), "metric")

    cells: dict = {}
    seen: dict = {}
    run = date if date is not None else path.stem
    for line_no, obj in lines:
        qid = str(obj["doc_id"])
        where = f"{path}: line {line_no}: {_qname('doc_id', qid)}"
        if chosen not in obj:
            raise ValueError(f"{where}: field {chosen!r} is missing (this line's metrics: "
                             f"{', '.join(metrics_of(obj)) or 'none'})")
        value = obj[chosen]
        if isinstance(value, (list, tuple, dict)):
            raise ValueError(f"{where}: field {chosen!r} is {_show(value)}, not a number: the "
                             f"harness aggregates this metric over the corpus, so it has no "
                             f"per-question score")
        key = (qid, run)
        _put(cells, key, _number(value, where, chosen), where, seen,
             f"filter {chosen_filter!r}")
        seen.setdefault(key, f"line {line_no}")
    scores, questions, runs = _matrix(cells, str(path), "doc_id", chosen)
    return RunLog(scores=scores, questions=questions, runs=runs, metric=chosen,
                  task=file_task, model=_lm_eval_model(path, date), format="lm-eval",
                  source=str(path))


# --- Inspect AI -------------------------------------------------------------------------------

def _open_eval(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ValueError(f"{path}: not a zip archive, so not an Inspect .eval log") from None


def _zip_json(archive: zipfile.ZipFile, name: str, path: Path):
    try:
        raw = archive.read(name)
    except (zipfile.BadZipFile, NotImplementedError, OSError) as exc:
        raise ValueError(f"{path}: member {name}: cannot be read ({exc})") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: member {name}: not valid JSON "
                         f"({str(exc).splitlines()[0]})") from None


def _inspect_header(path: Path, archive: zipfile.ZipFile) -> dict:
    if "header.json" not in archive.namelist():
        raise ValueError(f"{path}: the archive has no header.json, which Inspect writes when "
                         f"the eval finishes (an unfinished or crashed run?)")
    header = _zip_json(archive, "header.json", path)
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise ValueError(f"{path}: header.json: field 'eval' is missing or not an object")
    return header


def _find_inspect(root: Path, task: str | None) -> Path:
    by_task: dict = {}
    for file in root.rglob("*.eval"):
        with _open_eval(file) as archive:
            header = _inspect_header(file, archive)
        by_task.setdefault(str(header["eval"].get("task")), []).append(file)
    return _pick_file(root, by_task, task, ".eval logs")


def _inspect_value(value, where: str, field: str) -> float:
    """Inspect's default ``value_to_float`` (inspect_ai/scorer/_metric.py), strict."""
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str):
        if value in _INSPECT_LETTERS:
            return _INSPECT_LETTERS[value]
        lowered = value.strip().lower()
        if lowered in ("yes", "true"):
            return 1.0
        if lowered in ("no", "false"):
            return 0.0
        try:
            return float(lowered)
        except ValueError:
            pass
        raise ValueError(f"{where}: field {field!r} is {_show(value)}, not C, I, P, N or a "
                         f"number")
    if value is None:
        # Score.unscored() stores NaN, which Inspect's JSON writer turns into null.
        raise ValueError(f"{where}: field {field!r} is null, an unscored sample that Inspect "
                         f"leaves out of its metrics; re-score it or drop the question")
    if isinstance(value, dict):
        raise ValueError(f"{where}: field {field!r} holds several values "
                         f"({', '.join(map(str, value))}), not one score")
    raise ValueError(f"{where}: field {field!r} must be a number or C/I/P/N, got "
                     f"{_show(value)}")


def _read_inspect(path: Path, *, metric, task, filter) -> RunLog:
    if filter is not None:
        raise ValueError(f"{path}: Inspect logs have no filters; got filter={filter!r}")
    with _open_eval(path) as archive:
        header = _inspect_header(path, archive)
        spec = header["eval"]
        file_task = spec.get("task")
        if task is not None and task != file_task:
            raise ValueError(f"{path}: task {task!r} is absent; this log holds task "
                             f"{file_task!r}")
        members = [name for name in archive.namelist()
                   if name.startswith("samples/") and name.endswith(".json")]
        if not members:
            raise ValueError(f"{path}: no samples/<id>_epoch_<n>.json in the archive (was the "
                             f"eval run with samples logged?)")
        samples = []
        for name in members:
            sample = _zip_json(archive, name, path)
            if not isinstance(sample, dict):
                raise ValueError(f"{path}: member {name}: expected a JSON object")
            match = _INSPECT_SAMPLE.match(name)
            qid = str(sample.get("id", match.group("id") if match else name))
            epoch = sample.get("epoch", int(match.group("epoch")) if match else 1)
            where = f"{path}: {_qname('id', qid)} epoch {epoch}"
            scores = sample.get("scores")
            if not isinstance(scores, dict) or not scores:
                error = " (the sample errored)" if sample.get("error") else ""
                raise ValueError(f"{where}: field 'scores' is missing or empty{error}")
            samples.append((qid, epoch, where, scores))

    scorers = list(dict.fromkeys(s for *_, scores in samples for s in scores))
    chosen = _choose("scorer", scorers, metric, str(path), "metric")
    cells: dict = {}
    seen: dict = {}
    for qid, epoch, where, scores in samples:
        field = f"scores.{chosen}.value"
        score = scores.get(chosen)
        if not isinstance(score, dict) or "value" not in score:
            raise ValueError(f"{where}: field {field!r} is missing (this sample's scorers: "
                             f"{', '.join(scores)})")
        key = (qid, f"epoch {epoch}")
        _put(cells, key, _inspect_value(score["value"], where, field), where, seen,
             f"epoch {epoch}")
        seen.setdefault(key, where)
    result, questions, runs = _matrix(cells, str(path), "id", chosen)
    config = spec.get("config") if isinstance(spec.get("config"), dict) else {}
    epochs = config.get("epochs")
    if isinstance(epochs, int) and not isinstance(epochs, bool) and epochs != len(runs):
        raise ValueError(f"{path}: header.json: field 'eval.config.epochs' is {epochs} but "
                         f"the samples hold {len(runs)} epoch(s) ({_ids(runs)})")
    model = spec.get("model")
    return RunLog(scores=result, questions=questions, runs=runs, metric=chosen,
                  task=None if file_task is None else str(file_task),
                  model=None if model is None else str(model), format="inspect",
                  source=str(path))


# --- HELM -------------------------------------------------------------------------------------

def _helm_run(path: Path) -> tuple[str, str | None]:
    """Run name and model of a HELM run folder, from ``run_spec.json`` or the folder name."""
    name, model = path.parent.name, None
    spec_file = path.parent / "run_spec.json"
    if spec_file.is_file():
        try:
            spec = json.loads(spec_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            spec = None  # metadata only: the scores do not depend on it
        if isinstance(spec, dict):
            name = spec.get("name") if isinstance(spec.get("name"), str) else name
            adapter = spec.get("adapter_spec")
            if isinstance(adapter, dict) and isinstance(adapter.get("model"), str):
                model = adapter["model"]
    if model is None:
        # Run folders are named like "mmlu:subject=anatomy,method=...,model=openai_gpt2".
        match = re.search(r"(?:^|[:,])model=([^,]+)", name)
        model = match.group(1) if match else None
    return name, model


def _helm_task_matches(run_name: str, task: str) -> bool:
    return task in (run_name, run_name.split(":", 1)[0])


def _find_helm(root: Path, task: str | None) -> Path:
    files = sorted(root.rglob("per_instance_stats.json"))
    if not files:
        raise ValueError(f"{root}: no HELM per_instance_stats.json here")
    names = {file: _helm_run(file)[0] for file in files}
    if task is None:
        if len(files) > 1:
            raise ValueError(f"{root}: holds several HELM runs ({', '.join(sorted(names.values()))}"
                             f"); pass task= to pick one")
        return files[0]
    picked = [file for file in files if names[file] == task] or [
        file for file in files if _helm_task_matches(names[file], task)]
    if not picked:
        raise ValueError(f"{root}: task {task!r} is absent; tasks present: "
                         f"{', '.join(sorted(names.values()))}")
    if len(picked) > 1:
        raise ValueError(f"{root}: several HELM runs match task {task!r} "
                         f"({', '.join(names[f] for f in picked)}); pass the full run name")
    return picked[0]


def _read_helm(path: Path, *, metric, task, filter) -> RunLog:
    run_name, model = _helm_run(path)
    if task is not None and not _helm_task_matches(run_name, task):
        raise ValueError(f"{path}: task {task!r} is absent; this file holds run {run_name!r}")
    entries = _load_json(path, "a list of per-instance stats")
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a JSON list of per-instance stats, got "
                         f"{type(entries).__name__}")
    if not entries:
        raise ValueError(f"{path}: empty file (the list holds no instances)")

    def perturbation_of(index: int, entry) -> str | None:
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: entry {index}: expected an object, got "
                             f"{type(entry).__name__}")
        if "instance_id" not in entry:
            raise ValueError(f"{path}: entry {index}: field 'instance_id' is missing")
        described = entry.get("perturbation")
        if described is None:
            return None
        return str(described.get("name")) if isinstance(described, dict) else str(described)

    tagged = [(i, e, perturbation_of(i, e)) for i, e in enumerate(entries)]
    perturbations = sorted({p for *_, p in tagged if p is not None})
    if filter is not None and filter not in perturbations:
        raise ValueError(f"{path}: perturbation {filter!r} is absent; perturbations present: "
                         f"{', '.join(perturbations) or 'none'}")
    kept = [(i, e) for i, e, p in tagged if p == filter]
    if not kept:
        raise ValueError(f"{path}: all {len(entries)} instances are perturbed; pass "
                         f"filter= with one of: {', '.join(perturbations)}")

    def stats_of(index: int, entry) -> dict:
        stats = entry.get("stats")
        where = f"{path}: {_qname('instance_id', str(entry['instance_id']))}"
        if not isinstance(stats, list):
            raise ValueError(f"{where}: field 'stats' is missing or not a list")
        named = {}
        for stat in stats:
            name = stat.get("name") if isinstance(stat, dict) else None
            label = name.get("name") if isinstance(name, dict) else None
            if not isinstance(label, str):
                raise ValueError(f"{where}: field 'stats[].name.name' is missing")
            named.setdefault(label, stat)
        return named

    stats = [(i, e, stats_of(i, e)) for i, e in kept]
    names = list(dict.fromkeys(n for *_, s in stats for n in s))
    chosen = _choose("stat", names, metric, str(path), "metric")
    cells: dict = {}
    seen: dict = {}
    for index, entry, named in stats:
        qid = str(entry["instance_id"])
        trial = entry.get("train_trial_index", 0)
        where = f"{path}: entry {index}: {_qname('instance_id', qid)}"
        if chosen not in named:
            raise ValueError(f"{where}: stat {chosen!r} is missing (this instance's stats: "
                             f"{_ids(named, 8)})")
        stat = named[chosen]
        if "mean" in stat:
            value = _number(stat["mean"], where, f"{chosen}.mean")
        elif "sum" in stat and "count" in stat:
            count = _number(stat["count"], where, f"{chosen}.count")
            if count <= 0:
                raise ValueError(f"{where}: field '{chosen}.count' is {stat['count']}, so the "
                                 f"stat has no mean")
            value = _number(stat["sum"], where, f"{chosen}.sum") / count
        else:
            raise ValueError(f"{where}: field '{chosen}.mean' is missing")
        key = (qid, f"trial {trial}")
        _put(cells, key, value, where, seen, f"train_trial_index {trial}")
        seen.setdefault(key, f"entry {index}")
    scores, questions, runs = _matrix(cells, str(path), "instance_id", chosen)
    return RunLog(scores=scores, questions=questions, runs=runs, metric=chosen, task=run_name,
                  model=model, format="helm", source=str(path))


# --- CSV and Parquet --------------------------------------------------------------------------

def _load_table(path: Path, fmt: str) -> pd.DataFrame:
    if fmt == "parquet":
        if not any(importlib.util.find_spec(m) for m in ("pyarrow", "fastparquet")):
            raise ValueError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow) or "
                             f"fastparquet, which this environment lacks; or save the table "
                             f"as CSV")
        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ValueError(f"{path}: not a readable Parquet file ({first})") from None
        return frame
    try:
        # Ids stay text ("007" is not 7); scores are parsed below, column by column.
        return pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: empty file") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a readable CSV ({first})") from None


def _text_column(frame: pd.DataFrame, column: str, path: Path) -> pd.Series:
    values = frame[column]
    text = values.astype(str).str.strip()
    blank = values.isna().to_numpy() | (text == "").to_numpy()
    if blank.any():
        raise ValueError(f"{path}: row {int(np.argmax(blank)) + 2}: column {column!r} is empty")
    return text


def _read_table(path: Path, fmt: str, *, metric, task, filter) -> RunLog:
    frame = _load_table(path, fmt)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    frame = frame.reset_index(drop=True)
    value_column = "score" if metric is None else metric.strip().lower()
    two_arm = "arm" in frame.columns
    needed = ("seed", "arm", "question", value_column) if two_arm else ("question", value_column)
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: column {missing[0]!r} is missing: needs columns "
                         f"seed, arm, question, {value_column} (both arms) or question, "
                         f"{value_column}[, run] (one arm); found "
                         f"{', '.join(frame.columns) or 'none'}")
    if frame.empty:
        raise ValueError(f"{path}: empty file (a header but no rows)")
    questions = _text_column(frame, "question", path)
    keep = np.ones(len(frame), dtype=bool)
    chosen_task = None
    if "task" in frame.columns:
        tasks = _text_column(frame, "task", path)
        chosen_task = _choose("task", list(dict.fromkeys(tasks)), task, str(path), "task")
        keep &= (tasks == chosen_task).to_numpy()
    elif task is not None:
        raise ValueError(f"{path}: task {task!r} is absent; the table has no 'task' column")
    run_column = "seed" if two_arm else next((c for c in ("run", "seed") if c in frame.columns),
                                             None)
    if two_arm:
        arms = _text_column(frame, "arm", path).str.lower()
        chosen_arm = _choose("arm", list(dict.fromkeys(arms[keep])), filter, str(path),
                             "filter")
        keep &= (arms == chosen_arm).to_numpy()
    elif filter is not None:
        raise ValueError(f"{path}: arm {filter!r} is absent; the table has no 'arm' column")
    runs = (_text_column(frame, run_column, path) if run_column is not None
            else pd.Series(["0"] * len(frame)))
    raw = frame[value_column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    # "nan" and "inf" parse as numbers and are reported by _matrix with the metric's range.
    spelled_nan = raw.astype(str).str.strip().str.lower().isin(["nan", "-nan"]).to_numpy()
    bad = np.isnan(values) & ~spelled_nan & keep
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{path}: row {i + 2}: {_qname('question', questions[i])}: column "
                         f"{value_column!r} must be a number, got {_show(raw.iloc[i])}")
    cells: dict = {}
    seen: dict = {}
    label = "seed" if run_column == "seed" else "run"
    for i in np.flatnonzero(keep):
        where = f"{path}: row {i + 2}: {_qname('question', questions[i])}"
        key = (questions[i], f"{label} {runs[i]}")
        _put(cells, key, float(values[i]), where, seen, f"{label} {runs[i]}")
        seen.setdefault(key, f"row {i + 2}")
    scores, question_ids, run_labels = _matrix(cells, str(path), "question", value_column)
    model = None
    if "model" in frame.columns:
        models = frame["model"][keep].astype(str).str.strip().unique()
        model = str(models[0]) if len(models) == 1 else None
    return RunLog(scores=scores, questions=question_ids, runs=run_labels, metric=value_column,
                  task=chosen_task, model=model, format=fmt, source=str(path))
