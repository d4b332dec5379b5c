"""HELM ``per_instance_stats.json``: per-instance stats of one run.

A list of ``{instance_id, train_trial_index, perturbation?, stats: [{name: {name: ...}, mean,
count, sum, ...}]}``. Each train trial is a run (repeats of one model). Perturbed entries are
skipped unless ``--filter`` names the perturbation. Task and model come from
``run_spec.json`` beside it (``name``, ``adapter_spec.model``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from evalcal_core.validate import InvalidParameterError

from . import register
from ._base import (
    Reader,
    ReadOptions,
    RunLog,
    choose,
    ids,
    matrix,
    note_cluster,
    number,
    put,
    qname,
)
from ._files import head, read_json_file, read_side_json


def _run(path: Path) -> tuple[str, str | None, str | None]:
    """Run name, model and a note of a HELM run folder, from ``run_spec.json`` or its name.

    ``run_spec.json`` is metadata only (HELM names the run folder after the run spec), so
    one past :data:`~evalcal_core.readers._files.SIDE_FILE_CAP` is skipped with the note.
    """
    name, model = path.parent.name, None
    spec, note = read_side_json(path.parent / "run_spec.json")
    if isinstance(spec, dict):
        name = spec.get("name") if isinstance(spec.get("name"), str) else name
        adapter = spec.get("adapter_spec")
        if isinstance(adapter, dict) and isinstance(adapter.get("model"), str):
            model = adapter["model"]
    if model is None:
        # Run folders are named like "mmlu:subject=anatomy,method=...,model=openai_gpt2".
        match = re.search(r"(?:^|[:,])model=([^,]+)", name)
        model = match.group(1) if match else None
    return name, model, note


def _task_matches(run_name: str, task: str) -> bool:
    return task in (run_name, run_name.split(":", 1)[0])


def _mean(stat: dict, chosen: str, where: str) -> float:
    if "mean" in stat:
        return number(stat["mean"], where, f"{chosen}.mean")
    if "sum" in stat and "count" in stat:
        count = number(stat["count"], where, f"{chosen}.count")
        if not math.isfinite(count) or count <= 0:
            # Python's json reads Infinity and NaN; sum / inf would be a silent 0.0.
            raise InvalidParameterError(f"{where}: field '{chosen}.count' is {stat['count']}; a "
                                        "count must be a finite positive number, so the stat has "
                                        "no mean")
        return number(stat["sum"], where, f"{chosen}.sum") / count
    raise InvalidParameterError(f"{where}: field '{chosen}.mean' is missing")


@register
class HelmReader(Reader):
    name = "helm"
    suffixes = (".json",)
    folder_glob = "per_instance_stats.json"

    @classmethod
    def sniff(cls, path: Path) -> bool:
        return path.suffix.lower() in cls.suffixes and (
            path.name == "per_instance_stats.json" or head(path, 64).lstrip().startswith(b"["))

    @classmethod
    def read_folder(cls, root: Path, opts: ReadOptions) -> RunLog:
        files = cls.find(root)
        if not files:
            raise InvalidParameterError(f"{root}: no HELM per_instance_stats.json here")
        names = {file: _run(file)[0] for file in files}
        if opts.task is None:
            if len(files) > 1:
                raise InvalidParameterError(f"{root}: holds several HELM runs "
                                            f"({', '.join(sorted(names.values()))}); pass --task "
                                            "to pick one")
            return cls.read(files[0], opts)
        picked = [f for f in files if names[f] == opts.task] or [
            f for f in files if _task_matches(names[f], opts.task)]
        if not picked:
            raise InvalidParameterError(f"{root}: task {opts.task!r} (--task) is absent; tasks "
                                        f"present: {', '.join(sorted(names.values()))}")
        if len(picked) > 1:
            raise InvalidParameterError(f"{root}: several HELM runs match task {opts.task!r} "
                                        f"({', '.join(names[f] for f in picked)}); pass the full "
                                        "run name to --task")
        return cls.read(picked[0], opts)

    @classmethod
    def read(cls, path: Path, opts: ReadOptions) -> RunLog:
        run_name, model, side_note = _run(path)
        if opts.task is not None and not _task_matches(run_name, opts.task):
            raise InvalidParameterError(f"{path}: task {opts.task!r} (--task) is absent; this "
                                        f"file holds run {run_name!r}")
        entries = read_json_file(path, "a list of per-instance stats",
                                 opts.max_member_bytes)
        if not isinstance(entries, list):
            raise InvalidParameterError(f"{path}: expected a JSON list of per-instance stats, got "
                                        f"{type(entries).__name__}")
        if not entries:
            raise InvalidParameterError(f"{path}: empty file (the list holds no instances)")
        tagged = [(i, e, cls._perturbation(path, i, e)) for i, e in enumerate(entries)]
        perturbations = sorted({p for *_, p in tagged if p is not None})
        if opts.filter is not None and opts.filter not in perturbations:
            raise InvalidParameterError(f"{path}: perturbation {opts.filter!r} (--filter) is "
                                        "absent; perturbations present: "
                                        f"{', '.join(perturbations) or 'none'}")
        kept = [(i, e) for i, e, p in tagged if p == opts.filter]
        if not kept:
            raise InvalidParameterError(f"{path}: all {len(entries)} instances are perturbed; pass "
                                        f"--filter with one of: {', '.join(perturbations)}")
        stats = [(i, e, cls._stats(path, e)) for i, e in kept]
        names = list(dict.fromkeys(n for *_, s in stats for n in s))
        chosen = choose("stat", names, opts.metric, str(path), "--metric")
        cells: dict = {}
        seen: dict = {}
        clusters: dict = {}
        for index, entry, named in stats:
            qid = str(entry["instance_id"])
            trial = entry.get("train_trial_index", 0)
            where = f"{path}: entry {index}: {qname('instance_id', qid)}"
            if chosen not in named:
                raise InvalidParameterError(f"{where}: stat {chosen!r} is missing (this instance's "
                                            f"stats: {ids(named, 8)})")
            put(cells, (qid, f"trial {trial}"), _mean(named[chosen], chosen, where), where,
                seen, f"train_trial_index {trial}", f"entry {index}")
            if opts.cluster is not None:
                if opts.cluster not in entry:
                    raise InvalidParameterError(f"{where}: --cluster {opts.cluster!r} is not a "
                                                "field of the instance (fields: "
                                                f"{', '.join(map(str, entry))})")
                note_cluster(clusters, qid, entry[opts.cluster], where, opts.cluster)
        scores, questions, runs = matrix(cells, str(path), "instance_id", chosen)
        return RunLog(scores=scores, questions=questions, runs=runs, metric=chosen,
                      task=run_name, model=model, format=cls.name, source=str(path),
                      runs_are="repeats",
                      clusters=tuple(clusters[q] for q in questions) if opts.cluster else None,
                      cluster_name=opts.cluster, notes=(side_note,) if side_note else ())

    @staticmethod
    def _perturbation(path: Path, index: int, entry) -> str | None:
        if not isinstance(entry, dict):
            raise InvalidParameterError(f"{path}: entry {index}: expected an object, got "
                                        f"{type(entry).__name__}")
        if "instance_id" not in entry:
            raise InvalidParameterError(f"{path}: entry {index}: field 'instance_id' is missing")
        described = entry.get("perturbation")
        if described is None:
            return None
        return str(described.get("name")) if isinstance(described, dict) else str(described)

    @staticmethod
    def _stats(path: Path, entry: dict) -> dict:
        stats = entry.get("stats")
        where = f"{path}: {qname('instance_id', str(entry['instance_id']))}"
        if not isinstance(stats, list):
            raise InvalidParameterError(f"{where}: field 'stats' is missing or not a list")
        named = {}
        for stat in stats:
            name = stat.get("name") if isinstance(stat, dict) else None
            label = name.get("name") if isinstance(name, dict) else None
            if not isinstance(label, str):
                raise InvalidParameterError(f"{where}: field 'stats[].name.name' is missing")
            named.setdefault(label, stat)
        return named
