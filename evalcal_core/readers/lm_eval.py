"""lm-evaluation-harness ``--log_samples`` files: ``samples_<task>_<date>.jsonl``.

One JSON object per document and filter with ``doc_id``, ``filter``, ``metrics`` (the metric
names) and one key per metric (``lm_eval/evaluator.py``, the ``example`` dict). ``repeats``
are already reduced to one value per document, so a file is one run. A folder holding several
sample files of one task (several runs of the model, e.g. other seeds) is read as several
runs: labelled by the seed that the ``results_<date>.json`` beside each file records
(``config.random_seed``), or by date with a note. With ``--cluster task`` a folder's tasks
(a group's subtasks) are read together, each task a cluster. Lines are parsed one at a time
and only ``doc_id``, the filter and the metric values are kept, so memory follows the number
of documents, not the file size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from evalcal_core.validate import InvalidParameterError

from . import register
from ._base import Reader, ReadOptions, RunLog, choose, matrix, number, put, qname, show
from ._files import (
    DEFAULT_MAX_MEMBER_BYTES,
    check_regular,
    head,
    is_regular,
    load_json,
    read_side_json,
    too_big,
)

# Keys lm-evaluation-harness writes on every sample line besides the metric values.
_FIELDS = frozenset({
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
    "doc_hash", "prompt_hash", "target_hash",
})
# ``date_id`` is ``datetime.now().isoformat().replace(":", "-")``: 2024-05-13T13-53-11.123456
_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)$")
# lm-eval names a model it cannot name otherwise (the dummy model) with 8 random letters.
_RANDOM_NAME = re.compile(r"^[a-z0-9]{8}$")


def _name(path: Path) -> tuple[str, str | None]:
    match = _NAME.match(path.stem)
    if match:
        return match.group("task"), match.group("date")
    stem = path.stem
    return (stem[len("samples_"):] if stem.startswith("samples_") else stem), None


def _results(path: Path, date: str | None) -> tuple[dict | None, str | None]:
    """The ``results_<date>.json`` written with a samples file, and a note or None.

    Metadata only (the seed that labels a run, the model): the scores do not depend on it,
    so an unreadable one is ``None`` and one past
    :data:`~evalcal_core.readers._files.SIDE_FILE_CAP` is not read (``None`` and a note).
    """
    exact = path.parent / f"results_{date}.json"
    candidates = [exact] if is_regular(exact) else sorted(
        p for p in path.parent.glob("results_*.json") if is_regular(p))
    if len(candidates) != 1:
        return None, None
    results, note = read_side_json(candidates[0])
    return (results if isinstance(results, dict) else None), note


def _model(path: Path, results: dict | None) -> str | None:
    """The model of a run: ``model_name``, ``model_args`` (pretrained=...), the model type.

    A ``model_name`` of 8 random letters (what lm-eval calls a model it cannot name, like
    its dummy model; also the output folder) is skipped.
    """
    name = results.get("model_name") if isinstance(results, dict) else None
    if isinstance(name, str) and name and not _RANDOM_NAME.match(name):
        return name
    config = results.get("config") if isinstance(results, dict) else None
    config = config if isinstance(config, dict) else {}
    args = config.get("model_args")
    if isinstance(args, str):
        args = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    if isinstance(args, dict):
        for key in ("pretrained", "model", "model_name", "path"):
            if isinstance(args.get(key), str) and args[key]:
                return args[key]
    if isinstance(config.get("model"), str) and config["model"]:
        return config["model"]  # the model type ("dummy", "hf") when nothing names it better
    if results is None:
        # lm-eval writes into <output_path>/<model_name_sanitized>/, "/" written as "__".
        folder = path.parent.name
        if folder and not _RANDOM_NAME.match(folder):
            return folder.replace("__", "/")
    return None


def _seed(results: dict | None):
    config = results.get("config") if isinstance(results, dict) else None
    seed = config.get("random_seed") if isinstance(config, dict) else None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


@dataclass(frozen=True)
class _NotNumber:
    """What is kept of a metric value that is not a number: its start and its kind.

    A corpus metric's value (BLEU's ``[references, predictions]``) can be large; only the
    error message needs it, so the parsed document is not kept.
    """

    shown: str
    aggregate: bool


def _kept(value):
    if isinstance(value, (bool, int, float)):
        return value
    return _NotNumber(show(value), isinstance(value, (list, tuple, dict)))


def _metrics_of(obj: dict) -> list:
    if isinstance(obj.get("metrics"), list):
        return [str(m) for m in obj["metrics"]]
    # Older files have no "metrics" list: every other key holding a number is one.
    return [k for k, v in obj.items() if k not in _FIELDS and isinstance(v, (bool, int, float))]


def _parse(path: Path, cap: int = DEFAULT_MAX_MEMBER_BYTES) -> list:
    """``(line_no, doc_id, filter, {metric: value})`` per sample line; nothing else kept.

    The file is streamed line by line; one line longer than ``cap`` characters (a file
    with no line breaks, say) is an error rather than a read of the whole file at once.
    Each line and its parsed document are dropped before the next line is read, so memory
    peaks at a few times the longest line.
    """
    check_regular(path)
    lines = []
    line_no = 0
    try:
        with path.open(encoding="utf-8") as fh:
            while line := fh.readline(cap + 1):
                line_no += 1
                if len(line) > cap:
                    raise too_big(path, f"line {line_no} runs past", cap)
                if line.strip():
                    lines.append(_entry(path, line_no, line))
                del line  # not held while the next line is read
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(f"{path}: not UTF-8 text ({exc.reason})") from None
    if not lines:
        raise InvalidParameterError(f"{path}: empty file (no sample lines)")
    return lines


def _entry(path: Path, line_no: int, line: str) -> tuple:
    """``(line_no, doc_id, filter, values, missing)`` of one sample line, checked."""
    obj = load_json(line, f"{path}: line {line_no}", "one sample object per line")
    if not isinstance(obj, dict):
        raise InvalidParameterError(f"{path}: line {line_no}: expected a JSON object per "
                                    f"line, got {type(obj).__name__}")
    if "doc_id" not in obj:
        raise InvalidParameterError(f"{path}: line {line_no}: field 'doc_id' is missing")
    if isinstance(obj["doc_id"], (dict, list)):
        # A document where an id belongs would be kept whole as its text.
        raise InvalidParameterError(f"{path}: line {line_no}: field 'doc_id' must be an "
                                    f"integer or text, got {show(obj['doc_id'])}")
    names = _metrics_of(obj)
    # Only the metric values are kept, and of those only numbers: memory follows the number
    # of documents, not the size of each line.
    values = {m: _kept(obj[m]) for m in names if m in obj}
    missing = () if len(values) == len(names) else tuple(m for m in names if m not in obj)
    return line_no, str(obj["doc_id"]), str(obj.get("filter", "none")), values, missing


def _scores(path: Path, lines: list, opts: ReadOptions) -> tuple[str, str, dict]:
    """The chosen metric, filter and ``{doc_id: score}`` of one parsed file."""
    filters = list(dict.fromkeys(f for _, _, f, _, _ in lines))
    chosen_filter = choose("filter", filters, opts.filter, str(path), "--filter")
    lines = [line for line in lines if line[2] == chosen_filter]
    metrics = list(dict.fromkeys(m for *_, values, missing in lines
                                 for m in (*values, *missing)))
    if not metrics:
        raise InvalidParameterError(f"{path}: field 'metrics' is missing and no line holds a "
                                    "numeric metric; is this an lm-eval samples file?")
    chosen = choose("metric", metrics, opts.metric, str(path), "--metric")
    scores: dict = {}
    seen: dict = {}
    for line_no, qid, _, values, _ in lines:
        where = f"{path}: line {line_no}: {qname('doc_id', qid)}"
        if chosen not in values:
            raise InvalidParameterError(f"{where}: field {chosen!r} is missing (this line's "
                                        f"metrics: {', '.join(values) or 'none'})")
        value = values[chosen]
        if isinstance(value, _NotNumber) and value.aggregate:
            raise InvalidParameterError(f"{where}: field {chosen!r} is {value.shown}, not a "
                                        "number: the harness aggregates this metric over the "
                                        "corpus, so it has no per-question score")
        if isinstance(value, _NotNumber):
            raise InvalidParameterError(f"{where}: field {chosen!r} must be a number, got "
                                        f"{value.shown}")
        put(scores, qid, number(value, where, chosen), where, seen,
            f"filter {chosen_filter!r}", f"line {line_no}")
    return chosen, chosen_filter, scores


@register
class LmEvalReader(Reader):
    name = "lm-eval"
    suffixes = (".jsonl",)
    folder_glob = "samples_*.jsonl"
    #: lm-eval prints acc with acc_stderr per run; two runs are compared by whether those
    #: intervals overlap (it has no clustered default)
    harness_default = "harness_lm_eval_overlap"

    @classmethod
    def sniff(cls, path: Path) -> bool:
        text = head(path, 2048).lstrip()
        return (path.suffix.lower() in cls.suffixes
                and (not text or text.startswith(b"{") or path.name.startswith("samples_")))

    @classmethod
    def task_of(cls, path: Path, opts: ReadOptions) -> str:
        return _name(path)[0]

    @classmethod
    def read(cls, path: Path, opts: ReadOptions) -> RunLog:
        task, _ = _name(path)
        if opts.task is not None and opts.task != task:
            raise InvalidParameterError(f"{path}: task {opts.task!r} (--task) is absent; this "
                                        f"file holds task {task!r}")
        return cls._read_runs({task: [path]}, path, opts)

    @classmethod
    def read_folder(cls, root: Path, opts: ReadOptions) -> RunLog:
        files = cls.find(root)
        if not files:
            raise InvalidParameterError(f"{root}: no lm-eval sample files "
                                        "(samples_<task>_<date>.jsonl) here")
        by_task: dict = {}
        for file in files:
            by_task.setdefault(_name(file)[0], []).append(file)
        tasks = sorted(by_task)
        if opts.task is not None:
            if opts.task not in by_task:
                raise InvalidParameterError(f"{root}: task {opts.task!r} (--task) is absent; "
                                            f"tasks present: {', '.join(tasks)}")
            by_task = {opts.task: by_task[opts.task]}
        elif len(tasks) > 1 and opts.cluster != "task":
            raise InvalidParameterError(f"{root}: holds several tasks ({', '.join(tasks)}); pass "
                                        "--task to pick one, or --cluster task to read them all "
                                        "with each task a cluster")
        return cls._read_runs(by_task, root, opts)

    @classmethod
    def _read_runs(cls, by_task: dict, source: Path, opts: ReadOptions) -> RunLog:
        """Every file of every task in ``by_task``: files of one task are its runs."""
        if opts.cluster not in (None, "task"):
            raise InvalidParameterError(f"{source}: --cluster {opts.cluster!r} is not available "
                                        "for lm-eval logs; the one cluster field is: task")
        counts = {task: len(files) for task, files in by_task.items()}
        if len(set(counts.values())) > 1:
            raise InvalidParameterError(f"{source}: the tasks hold different numbers of runs ("
                                        + ", ".join(f"{t}: {c}" for t, c in sorted(counts.items()))
                                        + "); pass --task to read one")
        several = len(by_task) > 1
        cells: dict = {}
        clusters: dict = {}
        metric = models = None
        notes: list = []
        run_labels = None
        for task, files in sorted(by_task.items()):
            results = {}
            for f in files:
                results[f], note = _results(f, _name(f)[1])
                if note is not None and note not in notes:
                    notes.append(note)
            seeds = [_seed(results[f]) for f in files]
            if len(files) > 1 and None not in seeds and len(set(seeds)) == len(files):
                order = sorted(range(len(files)), key=lambda i: seeds[i])
                labels = [f"seed {seeds[i]}" for i in order]
            else:
                order = sorted(range(len(files)), key=lambda i: (_name(files[i])[1] or "",
                                                                 str(files[i])))
                labels = ([_name(files[0])[1] or files[0].stem] if len(files) == 1 else
                          [f"run {j + 1}" for j in range(len(files))])
                if len(files) > 1:
                    notes.append(f"{source}: {len(files)} runs of task {task!r} with no "
                                 f"distinct seeds recorded; runs are numbered by file date: "
                                 + ", ".join(f"run {j + 1} = {files[i].name}"
                                             for j, i in enumerate(order)))
            if run_labels is None:
                run_labels = labels
            models = models or {_model(f, results[f]) for f in files}
            for label, i in zip(labels if run_labels == labels else run_labels, order):
                file = files[i]
                chosen, _, scores = _scores(file, _parse(file, opts.max_member_bytes), opts)
                if metric is not None and chosen != metric:
                    raise InvalidParameterError(f"{file}: scores metric {chosen!r} but other "
                                                f"files scored {metric!r}; pass --metric")
                metric = chosen
                for qid, value in scores.items():
                    key = f"{task}/{qid}" if several else qid
                    cells[(key, label)] = value
                    clusters[key] = task
        scores, questions, runs = matrix(cells, str(source), "doc_id", metric,
                                         runs_order=run_labels)
        model = next(iter(models)) if models and len(models) == 1 else None
        return RunLog(scores=scores, questions=questions, runs=runs, metric=metric,
                      task=", ".join(sorted(by_task)), model=model, format=cls.name,
                      source=str(source), runs_are="repeats",
                      clusters=tuple(clusters[q] for q in questions) if opts.cluster else None,
                      cluster_name=opts.cluster, notes=tuple(notes))
