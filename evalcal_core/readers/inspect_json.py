"""Inspect AI JSON logs (``--log-format json``): one ``.json`` object.

Top level ``{"version", "status", "eval": {...}, "samples": [...]}``; each sample has ``id``,
``epoch``, ``scores`` and ``metadata``, as in the ``.eval`` archive. Each epoch is a run.
"""

from __future__ import annotations

import re
from pathlib import Path

from evalcal_core.validate import InvalidParameterError

from . import register
from ._base import Reader, ReadOptions, RunLog
from ._files import head, read_json_file
from ._inspect import check_spec, check_task, run_log, sample_entry

# The top-level keys Inspect writes first (EvalLog field order: version, status, eval).
_START = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')


@register
class InspectJsonReader(Reader):
    name = "inspect-json"
    suffixes = (".json",)
    folder_glob = "*.json"
    #: Inspect's default metric stderr() (clustered: stderr(cluster=...)), read by eye as
    #: two intervals that do or do not overlap
    harness_default = "harness_inspect_stderr"
    harness_default_clustered = "harness_inspect_stderr_cluster"

    @classmethod
    def sniff(cls, path: Path) -> bool:
        return path.suffix.lower() in cls.suffixes and bool(_START.match(head(path, 512)))

    @classmethod
    def task_of(cls, path: Path, opts: ReadOptions) -> str:
        log = read_json_file(path, "an Inspect JSON log", opts.max_member_bytes)
        return str(check_spec(path, log).get("task"))

    @classmethod
    def read(cls, path: Path, opts: ReadOptions) -> RunLog:
        log = read_json_file(path, "an Inspect JSON log", opts.max_member_bytes)
        spec = check_spec(path, log)
        check_task(path, spec, opts)
        samples = log.get("samples")
        if not isinstance(samples, list) or not samples:
            status = log.get("status")
            raise InvalidParameterError(f"{path}: field 'samples' is missing or empty (status "
                                        f"{status!r}; was the eval run with samples logged?)")
        entries = [sample_entry(path, s, cluster=opts.cluster) for s in samples]
        del log, samples  # keep only what the protocols need while the matrix is built
        return run_log(path, spec, entries, opts, cls.name)
