"""What the two Inspect AI log formats (``.eval`` archives, ``.json`` logs) share.

A sample is ``{"id", "epoch", "scores": {scorer: {"value": ...}}, "metadata": {...}}``;
each epoch is a run (decoding repeats of one model). Values are read as Inspect's default
``value_to_float`` reads them: ``"C"`` 1, ``"P"`` 0.5, ``"I"`` and ``"N"`` 0, numbers and
booleans as numbers, ``"yes"``/``"true"`` 1, ``"no"``/``"false"`` 0, numeric strings as
numbers.
"""

from __future__ import annotations

from evalcal_core.validate import InvalidParameterError

from ._base import (
    ReadOptions,
    RunLog,
    choose,
    ids,
    matrix,
    note_cluster,
    put,
    qname,
    show,
    to_float,
)

_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


def value(value, where: str, field: str) -> float:
    """Inspect's default ``value_to_float`` (inspect_ai/scorer/_metric.py), strict."""
    if isinstance(value, (bool, int, float)):
        return to_float(value, where, field)
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value]
        lowered = value.strip().lower()
        if lowered in ("yes", "true"):
            return 1.0
        if lowered in ("no", "false"):
            return 0.0
        try:
            return float(lowered)
        except ValueError:
            pass
        raise InvalidParameterError(f"{where}: field {field!r} is {show(value)}, not C, I, P, N "
                                    "or a number")
    if value is None:
        # Score.unscored() stores NaN, which Inspect's JSON writer turns into null.
        raise InvalidParameterError(f"{where}: field {field!r} is null, an unscored sample that "
                                    "Inspect leaves out of its metrics; re-score it or drop the "
                                    "question")
    if isinstance(value, dict):
        raise InvalidParameterError(f"{where}: field {field!r} holds several values "
                                    f"({', '.join(map(str, value))}), not one score; pass --metric "
                                    f"with a scorer of one value")
    raise InvalidParameterError(f"{where}: field {field!r} must be a number or C/I/P/N, got "
                                f"{show(value)}")


def check_spec(path, header) -> dict:
    """The ``eval`` object of a header (``header.json`` or the JSON log's top level)."""
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise InvalidParameterError(f"{path}: field 'eval' is missing or not an object; not an "
                                    "Inspect log?")
    return header["eval"]


def check_task(path, spec: dict, opts: ReadOptions) -> None:
    if opts.filter is not None:
        raise InvalidParameterError(f"{path}: Inspect logs have no filters; drop --filter "
                                    f"{opts.filter!r}")
    task = spec.get("task")
    if opts.task is not None and opts.task != task:
        raise InvalidParameterError(f"{path}: task {opts.task!r} (--task) is absent; this log "
                                    f"holds task {task!r}")


def sample_entry(path, sample, name_id=None, name_epoch=None, cluster=None) -> tuple:
    """``(id, epoch, where, scores, metadata)`` of one sample object, checked.

    Only what the protocols need is kept: each scorer's ``value`` (not its answer and
    explanation) and the ``cluster`` metadata field (the other fields' names only).
    """
    if not isinstance(sample, dict):
        raise InvalidParameterError(f"{path}: a sample is {type(sample).__name__}, not a JSON "
                                    "object")
    qid = str(sample.get("id", name_id))
    epoch = sample.get("epoch", name_epoch if name_epoch is not None else 1)
    where = f"{path}: {qname('id', qid)} epoch {epoch}"
    scores = sample.get("scores")
    if not isinstance(scores, dict) or not scores:
        error = " (the sample errored)" if sample.get("error") else ""
        raise InvalidParameterError(f"{where}: field 'scores' is missing or empty{error}")
    metadata = sample.get("metadata")
    metadata = ({k: (v if k == cluster else None) for k, v in metadata.items()}
                if isinstance(metadata, dict) else {})
    scores = {name: ({"value": score["value"]} if isinstance(score, dict) and "value" in score
                     else score if not isinstance(score, dict) else {})
              for name, score in scores.items()}
    return qid, epoch, where, scores, metadata


def run_log(path, spec: dict, samples: list, opts: ReadOptions, fmt: str) -> RunLog:
    """The :class:`RunLog` of checked samples (from :func:`sample_entry`)."""
    if not samples:
        raise InvalidParameterError(f"{path}: the log holds no samples (was the eval run with "
                                    "samples logged?)")
    scorers = list(dict.fromkeys(s for *_, scores, _ in samples for s in scores))
    chosen = choose("scorer", scorers, opts.metric, str(path), "--metric")
    cells: dict = {}
    seen: dict = {}
    clusters: dict = {}
    for qid, epoch, where, scores, metadata in samples:
        field = f"scores.{chosen}.value"
        score = scores.get(chosen)
        if not isinstance(score, dict) or "value" not in score:
            raise InvalidParameterError(f"{where}: field {field!r} is missing (this sample's "
                                        f"scorers: {', '.join(scores)})")
        put(cells, (qid, f"epoch {epoch}"), value(score["value"], where, field), where, seen,
            f"epoch {epoch}", where)
        if opts.cluster is not None:
            if opts.cluster not in metadata:
                raise InvalidParameterError(f"{where}: --cluster {opts.cluster!r} is not a field "
                                            "of the sample's metadata (fields: "
                                            f"{', '.join(metadata) or 'none'})")
            note_cluster(clusters, qid, metadata[opts.cluster], where, opts.cluster)
    result, questions, runs = matrix(cells, str(path), "id", chosen)
    config = spec.get("config") if isinstance(spec.get("config"), dict) else {}
    epochs = config.get("epochs")
    if isinstance(epochs, int) and not isinstance(epochs, bool) and epochs != len(runs):
        raise InvalidParameterError(f"{path}: field 'eval.config.epochs' is {epochs} but the "
                                    f"samples hold {len(runs)} epoch(s) ({ids(runs)}); a truncated "
                                    "log?")
    model = spec.get("model")
    task = spec.get("task")
    return RunLog(scores=result, questions=questions, runs=runs, metric=chosen,
                  task=None if task is None else str(task),
                  model=None if model is None else str(model), format=fmt,
                  source=str(path), runs_are="repeats",
                  clusters=tuple(clusters[q] for q in questions) if opts.cluster else None,
                  cluster_name=opts.cluster)
