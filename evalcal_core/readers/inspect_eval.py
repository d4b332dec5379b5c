"""Inspect AI ``.eval`` logs: a zip archive of JSON members.

``header.json`` (``eval.task``, ``eval.model``, ``eval.config.epochs``, written when the eval
finishes) and ``samples/<id>_epoch_<n>.json``, one per sample and epoch. inspect-ai 0.3.285
compresses the members with Zstandard (zip method 93), which Python's ``zipfile`` cannot read
before 3.14; they are inflated with the ``zstandard`` package. Members are inflated as streams
under a size cap (``--max-member-mb``, default 256 MiB), so a zip bomb is refused early.
"""

from __future__ import annotations

import re
from pathlib import Path

from evalcal_core.validate import InvalidParameterError

from . import register
from ._base import Reader, ReadOptions, RunLog
from ._files import Archive, head
from ._inspect import check_spec, check_task, run_log, sample_entry

_SAMPLE = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json$")


def _header(archive: Archive) -> dict:
    path = archive.path
    if "header.json" not in archive.infos:
        raise InvalidParameterError(f"{path}: the archive has no header.json, which Inspect "
                                    "writes when the eval finishes (an unfinished or crashed run?)")
    header = archive.read_json("header.json", "Inspect's eval header")
    return check_spec(f"{path}: header.json", header)


@register
class InspectEvalReader(Reader):
    name = "inspect"
    suffixes = (".eval",)
    folder_glob = "*.eval"
    #: Inspect's default metric stderr() (clustered: stderr(cluster=...)), read by eye as
    #: two intervals that do or do not overlap
    harness_default = "harness_inspect_stderr"
    harness_default_clustered = "harness_inspect_stderr_cluster"

    @classmethod
    def sniff(cls, path: Path) -> bool:
        return path.suffix.lower() in cls.suffixes or head(path, 4).startswith(b"PK\x03\x04")

    @classmethod
    def task_of(cls, path: Path, opts: ReadOptions) -> str:
        with Archive(path, opts.max_member_bytes, "an Inspect .eval log") as archive:
            return str(_header(archive).get("task"))

    @classmethod
    def read(cls, path: Path, opts: ReadOptions) -> RunLog:
        with Archive(path, opts.max_member_bytes, "an Inspect .eval log") as archive:
            spec = _header(archive)
            check_task(path, spec, opts)
            members = [n for n in archive.names() if _SAMPLE.match(n)]
            if not members:
                raise InvalidParameterError(f"{path}: no samples/<id>_epoch_<n>.json in the "
                                            "archive (was the eval run with samples logged?)")
            samples = []
            for name in members:
                match = _SAMPLE.match(name)
                sample = archive.read_json(name, "an Inspect sample")
                where = path if isinstance(sample, dict) else f"{path}: member {name}"
                samples.append(sample_entry(where, sample, match.group("id"),
                                            int(match.group("epoch")), opts.cluster))
        return run_log(path, spec, samples, opts, cls.name)
