"""Harness-log readers, one module per format, found through a registry.

A reader is a :class:`Reader` subclass in a module of this package, decorated with
:func:`register`; the package imports every module here (``pkgutil``), so a new format is one
new file and no edit elsewhere. Each reader declares ``name`` (the ``--log-format`` value),
``suffixes``, a ``sniff(path)`` rule and ``read(path, opts)`` returning a per-file
:class:`RunLog`. :func:`read_arms` reads one log per arm and aligns them into the shared
:class:`~evalcal_core.scores.ArmScores`.

>>> from evalcal_core import readers
>>> readers.names()  # doctest: +SKIP
['csv', 'helm', 'inspect', 'inspect-json', 'lm-eval', 'parquet']

Every problem is a one-line ``ValueError`` that names the file and, where an option fixes it,
the command-line option (``--task``, ``--metric``, ``--filter``, ``--log-format``,
``--cluster``, ``--max-member-mb``).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import stat
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalcal_core.registry import Registry
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError

from ._base import Reader, ReadOptions, RunLog, ids, num
from ._files import (
    DEFAULT_MAX_MEMBER_BYTES,
    check_path,
    check_regular,
    check_text_table,
    read_json_file,
)

__all__ = ["DEFAULT_MAX_MEMBER_BYTES", "LogAlignment", "ReadOptions", "Reader", "RunLog",
           "align_logs", "check_path", "check_regular", "check_text_table", "detect",
           "discover", "get", "names", "parse_arm_options", "read_arms", "read_json_file",
           "read_log", "read_logs", "register"]

READERS = Registry("log format", "--log-format", "evaluate")
register = READERS.register


def discover(package: str = __name__) -> None:
    """Import every module of ``package`` (default: this one) so their readers register.

    Modules whose names start with ``_`` are helpers and are skipped. Called on import; call
    it again after adding a folder to ``evalcal_core.readers.__path__``.
    """
    module = importlib.import_module(package)
    for info in pkgutil.iter_modules(module.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package}.{info.name}")


def names() -> list[str]:
    """Registered ``--log-format`` values, sorted."""
    return READERS.names()


def get(name: str) -> type[Reader]:
    """The reader registered as ``name``; ``ValueError`` naming ``--log-format`` otherwise."""
    if name not in READERS.names():
        raise InvalidParameterError(f"--log-format {name!r} is not a known log format; known: "
                                    f"{', '.join(names())}")
    return READERS.cls(name)


def detect(path) -> type[Reader]:
    """The reader for ``path``: a file by suffix and sniffing, a folder by what it holds.

    Raises
    ------
    ValueError
        When nothing or several readers claim it (pass ``--log-format``), or the path cannot be
        read (missing, a symbolic-link loop, a FIFO).
    """
    path = Path(path)
    info = check_path(path)
    readers = [READERS.cls(n) for n in names()]
    if stat.S_ISDIR(info.st_mode):
        found = [r for r in readers if r.folder_glob is not None and r.find(path)]
        if not found:
            globs = ", ".join(r.folder_glob for r in readers if r.folder_glob)
            raise InvalidParameterError(f"{path}: found no harness logs in this folder ({globs})")
        if len(found) > 1:
            raise InvalidParameterError(f"{path}: holds logs of several formats "
                                        f"({', '.join(r.name for r in found)}); pass --log-format "
                                        "or a file")
        return found[0]
    if not stat.S_ISREG(info.st_mode):
        check_regular(path)
    sniffed = [r for r in readers if r.sniff(path)]
    by_suffix = [r for r in sniffed if path.suffix.lower() in r.suffixes]
    claimed = by_suffix or sniffed
    if len(claimed) == 1:
        return claimed[0]
    known = "; ".join(f"{r.name} {'/'.join(r.suffixes)}" for r in readers)
    if not claimed:
        raise InvalidParameterError(f"{path}: cannot tell the log format from the name or content "
                                    f"(known: {known}); pass --log-format")
    raise InvalidParameterError(f"{path}: could be several log formats "
                                f"({', '.join(r.name for r in claimed)}); pass --log-format")


def _options_iv(owner: str, fmt, task, metric, filter, cluster, max_member_bytes) -> None:
    for flag, value in (("--log-format", fmt), ("--task", task), ("--metric", metric),
                        ("--filter", filter), ("--cluster", cluster)):
        if value is not None and (not isinstance(value, str) or not value):
            raise InvalidParameterError(f"{flag}: must be a non-empty name; got {value!r} "
                                        f"({owner})")
    if (not isinstance(max_member_bytes, (int, np.integer)) or isinstance(max_member_bytes, bool)
            or max_member_bytes < 1):
        raise InvalidParameterError(f"--max-member-mb: must be a positive size; got "
                                    f"{max_member_bytes!r} bytes ({owner})")


def read_log(path, *, fmt: str | None = None, task: str | None = None,
             metric: str | None = None, filter: str | None = None,
             partial_credit: bool = False, cluster: str | None = None,
             max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES) -> RunLog:
    """Read one arm's per-question scores from a harness log file or folder.

    Parameters
    ----------
    path : str or Path
        A log file, or a folder to search (any depth) for one format's logs.
    fmt : str, optional
        ``--log-format``: a name from :func:`names`; detected from the name and content when
        omitted.
    task : str, optional
        ``--task``: the task to read when the log or folder holds several.
    metric : str, optional
        ``--metric``: metric key, scorer, stat or column; needed when the log holds several.
    filter : str, optional
        ``--filter``: lm-eval filter, HELM perturbation or arm of a tidy CSV.
    partial_credit : bool
        Not used by one log (its scores are not range-checked); :func:`read_arms` checks the
        aligned scores with it. Accepted so that every reader entry point takes the same
        options.
    cluster : str, optional
        ``--cluster``: the field whose value groups questions (Inspect sample metadata field,
        ``task`` for lm-eval folders, a CSV column).
    max_member_bytes : int
        Largest size in bytes one zip member may inflate to, one JSON log may have and one
        JSONL line may run to (``--max-member-mb`` x 2**20); default 256 MiB.

    Returns
    -------
    RunLog
    """
    _options_iv("read_log", fmt, task, metric, filter, cluster, max_member_bytes)
    path = Path(path)
    info = check_path(path)
    reader = get(fmt) if fmt is not None else detect(path)
    opts = ReadOptions(task=task, metric=metric, filter=filter, cluster=cluster,
                       max_member_bytes=int(max_member_bytes))
    if stat.S_ISDIR(info.st_mode):
        if reader.folder_glob is None:
            raise InvalidParameterError(f"{path}: is a folder; --log-format {reader.name} reads "
                                        "one file, so pass the file")
        return reader.read_folder(path, opts)
    return reader.read(path, opts)


# --- aligning arms ----------------------------------------------------------------------------

@dataclass(frozen=True)
class LogAlignment:
    """Logs of m arms aligned by question id and run label (or position).

    Attributes
    ----------
    scores : ArmScores
        The aligned scores (questions present in every arm, in the first arm's order).
    logs : dict of str to RunLog
        Each arm's log as read.
    dropped : dict of str to tuple of str
        Per arm, the question ids left out because another arm lacks them.
    run_pairs : tuple of tuple of str
        Per aligned run, the run label of each arm (in arm order).
    matched_by : str
        ``"label"`` (runs with the same seed, epoch or trial label) or ``"position"``.
    """

    scores: ArmScores
    logs: dict
    dropped: dict
    run_pairs: tuple
    matched_by: str

    def summary_lines(self) -> list[str]:
        """What was matched and what was left out, one finding per line."""
        arms = self.scores.arms
        # with more than two arms only the arms that lost questions are named: "; " only
        # when something follows
        lines = ["; ".join([f"{self.scores.n} questions matched"] + [
            f"{len(self.dropped[a])} only in {_arm_words(a)}"
            + (f" ({ids(self.dropped[a])})" if self.dropped[a] else "")
            for a in arms if len(arms) == 2 or self.dropped[a]])]
        shown = ", ".join(" with ".join(pair) for pair in self.run_pairs[:5])
        more = f", ... ({len(self.run_pairs) - 5} more)" if len(self.run_pairs) > 5 else ""
        lines.append(f"{len(self.run_pairs)} run(s) paired by {self.matched_by} "
                     f"({' with '.join(arms)}): {shown}{more}")
        for a, arm in enumerate(arms):
            log, values = self.logs[arm], self.scores.scores[a]
            lines.append(f"{arm}: {log.source} ({log.about()}): metric "
                         f"{self.scores.metric!r} in [{num(values.min())}, "
                         f"{num(values.max())}], mean {num(values.mean())} over the matched "
                         f"questions")
        return lines


def _arm_words(arm: str) -> str:
    return f"the {arm}" if arm in ("baseline", "variant") else f"arm {arm!r}"


def align_logs(logs: Mapping[str, RunLog]) -> LogAlignment:
    """Align per-arm logs: questions by id, runs by label when every arm has the same labels.

    Runs are matched by label (seed, epoch, trial) when the arms' labels overlap, and the
    runs some arm lacks are dropped with a note; otherwise by position, which needs the same
    number of runs in every arm.

    Parameters
    ----------
    logs : mapping of arm name to RunLog
        At least two arms, all scoring the same metric.

    Returns
    -------
    LogAlignment
    """
    arms = tuple(logs)
    if len(arms) < 2:
        raise InvalidParameterError(f"need logs of at least two arms to compare; got {len(arms)}")
    for arm, log in logs.items():
        if not isinstance(log, RunLog):
            raise InvalidParameterError(f"arm {arm!r}: expected a RunLog (from read_log), got "
                                        f"{type(log).__name__}")
    first = logs[arms[0]]
    for arm in arms[1:]:
        if logs[arm].metric != first.metric:
            raise InvalidParameterError(f"metric mismatch: {arms[0]} {first.source} scores "
                                        f"{first.metric!r} but {arm} {logs[arm].source} scores "
                                        f"{logs[arm].metric!r}; read both with the same --metric")
    notes: list = [n for log in logs.values() for n in log.notes]
    # questions
    present = [set(log.questions) for log in logs.values()]
    common = [q for q in first.questions if all(q in s for s in present)]
    if not common:
        described = " and ".join(f"{a} {logs[a].source} (ids {ids(logs[a].questions)})"
                                 for a in arms)
        raise InvalidParameterError(f"no questions in common between {described}; are they the "
                                    "same task?")
    common_set = set(common)
    dropped = {a: tuple(q for q in logs[a].questions if q not in common_set) for a in arms}
    for a in arms:
        if dropped[a]:
            notes.append(f"{len(dropped[a])} question(s) only in {a} were dropped: "
                         f"{ids(dropped[a])}")
    # runs
    labels = [log.runs for log in logs.values()]
    shared = [r for r in labels[0] if all(r in set(other) for other in labels[1:])]
    if shared and not all(len(set(lab)) == len(shared) and set(lab) == set(shared)
                          for lab in labels) and not _labelled(labels):
        shared = []
    if shared:
        matched_by = "label"
        rows = {a: [logs[a].runs.index(r) for r in shared] for a in arms}
        run_pairs = tuple((r,) * len(arms) for r in shared)
        for a in arms:
            extra = [r for r in logs[a].runs if r not in set(shared)]
            if extra:
                notes.append(f"{len(extra)} run(s) only in {a} were dropped: {ids(extra)}")
    else:
        counts = {a: logs[a].k for a in arms}
        if len(set(counts.values())) > 1:
            raise InvalidParameterError(
                "runs are paired by position, so both arms need the same number: "
                + ", ".join(f"{a} {logs[a].source} has {logs[a].k} ({ids(logs[a].runs)})"
                            for a in arms))
        matched_by = "position"
        rows = {a: list(range(logs[a].k)) for a in arms}
        run_pairs = tuple(zip(*(logs[a].runs for a in arms)))
        if first.k > 1:
            notes.append("runs paired by position (their labels differ): "
                         + ", ".join(" with ".join(p) for p in run_pairs[:5]))
    stacked = []
    for a in arms:
        index = {q: j for j, q in enumerate(logs[a].questions)}
        stacked.append(logs[a].scores[np.ix_(rows[a], [index[q] for q in common])])
    clusters, cluster_name = _clusters(logs, common)
    runs_are = {log.runs_are for log in logs.values()}
    scores = ArmScores(
        arms=arms, scores=np.stack(stacked), question_ids=tuple(common),
        run_ids=tuple(p[0] if len(set(p)) == 1 else " / ".join(p) for p in run_pairs),
        runs_are=runs_are.pop() if len(runs_are) == 1 else "unknown",
        clusters=clusters, cluster_name=cluster_name, metric=first.metric,
        source=" vs ".join(logs[a].source for a in arms), notes=tuple(notes))
    return LogAlignment(scores=scores, logs=dict(logs), dropped=dropped, run_pairs=run_pairs,
                        matched_by=matched_by)


def _labelled(labels: list) -> bool:
    """Whether run labels name seeds, epochs or trials (so partial overlap may be matched)."""
    return all(str(r).split(" ")[0] in ("seed", "epoch", "trial") for lab in labels for r in lab)


def _clusters(logs: Mapping[str, RunLog], common: list):
    with_clusters = [log for log in logs.values() if log.clusters is not None]
    if not with_clusters:
        return None, None
    first = with_clusters[0]
    maps = [dict(zip(log.questions, log.clusters)) for log in with_clusters]
    for q in common:
        labels = {m[q] for m in maps}
        if len(labels) > 1:
            raise InvalidParameterError(f"--cluster {first.cluster_name!r}: question {q} has "
                                        "different clusters in the arms "
                                        f"({', '.join(sorted(labels))})")
    return np.array([maps[0][q] for q in common], dtype=str), first.cluster_name


def parse_arm_options(values, value_name: str = "PATH") -> dict:
    """``["NAME=PATH", ...]`` (the values of ``--arm``) -> ``{name: path}``, in order; names
    distinct. Read the same way by ``evaluate``, ``export``, ``sim.calibrate``, ``sim.plan``
    (a pilot's logs) and ``pools from-logs`` (``value_name``: what the error calls the
    value, ``LOG`` there)."""
    arms = {}
    for text in values or ():
        name, sep, path = str(text).partition("=")
        name, path = name.strip(), path.strip()
        if not sep or not name or not path:
            raise InvalidParameterError(f"--arm must be NAME={value_name}, got {text!r}")
        if any(unicodedata.category(ch) == "Cc" for ch in name):
            # a name is printed in tables, JSON keys and file names: a newline there forges
            # a row, an escape sequence recolours a terminal
            raise InvalidParameterError(f"--arm name {name!r} holds a control character; "
                                        "arm names must be printable text")
        if name in arms:
            raise InvalidParameterError(f"--arm {name!r} is given twice; arm names must be "
                                        "distinct")
        arms[name] = path
    return arms


def read_logs(paths: Mapping[str, str | os.PathLike], *, fmt: str | None = None,
              task: str | None = None, metric: str | None = None, filter: str | None = None,
              partial_credit: bool = False, cluster: str | None = None,
              max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES) -> LogAlignment:
    """Read one log per arm (:func:`read_log`) and align them (:func:`align_logs`), unchecked.

    A two-arm tidy CSV (``seed, arm, question, score``) given as an arm's log is read for
    that arm's rows (``--filter`` overrides which arm).
    """
    if not isinstance(paths, Mapping) or len(paths) < 2:
        raise InvalidParameterError("read_arms: give a mapping of at least two arm names to log "
                                    "paths")
    logs = {}
    for arm, path in paths.items():
        arm_filter = filter
        if arm_filter is None and _two_arm_table(Path(path)):
            arm_filter = arm
        logs[str(arm)] = read_log(path, fmt=fmt, task=task, metric=metric, filter=arm_filter,
                                  partial_credit=partial_credit, cluster=cluster,
                                  max_member_bytes=max_member_bytes)
    return align_logs(logs)


def _two_arm_table(path: Path) -> bool:
    from ._files import head

    if path.suffix.lower() not in (".csv", ".tsv", ".txt"):
        return False
    first = head(path, 4096).split(b"\n", 1)[0].decode("utf-8", "replace").lower()
    return "arm" in {c.strip() for c in first.split(",")}


def read_arms(paths: Mapping[str, str | os.PathLike], *, fmt: str | None = None,
              task: str | None = None, metric: str | None = None, filter: str | None = None,
              partial_credit: bool = False, cluster: str | None = None,
              max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES, percent: bool = False,
              metric_range=None) -> ArmScores:
    """Scores of m arms, one harness log each, aligned by question id and run, checked.

    Parameters
    ----------
    paths : mapping of str to str or Path
        Arm name -> log file or folder, in the order the arms should have (the first is the
        reference).
    fmt, task, metric, filter, cluster, max_member_bytes
        As for :func:`read_log`, applied to every arm.
    partial_credit : bool
        Allow a few non-0/1 scores among 0/1 scores (``--partial-credit``).
    percent : bool
        The logs' scores are percentages (``--percent``): divided by 100.
    metric_range : (float, float), optional
        Valid scores, inclusive (``--metric-range``); default fractions in [0, 1].

    Returns
    -------
    ArmScores
        Questions present in every arm, runs matched by label or position; ``notes`` say
        what was dropped and how runs were matched. Scores are checked as
        :func:`evalcal_core.score_checks.check_arm_scores` checks them; :func:`read_logs`
        returns them unchecked with the per-arm logs.
    """
    import dataclasses

    from evalcal_core.score_checks import FRACTION_RANGE, check_arm_scores

    scores = read_logs(paths, fmt=fmt, task=task, metric=metric, filter=filter,
                       partial_credit=partial_credit, cluster=cluster,
                       max_member_bytes=max_member_bytes).scores
    if percent:
        scores = dataclasses.replace(scores, scores=scores.scores * 0.01)
    declared = metric_range is not None
    return check_arm_scores(scores, value_range=tuple(metric_range) if declared
                            else FRACTION_RANGE, percent=percent, declared=declared,
                            partial=partial_credit)


discover()
