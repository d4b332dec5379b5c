"""What every log reader shares: the per-log result, the reader base class, and the helpers
that turn parsed records into a score matrix. Safe file access (size caps, zip members) is
:mod:`evalcal_core.readers._files`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from evalcal_core.validate import InvalidParameterError

from ._files import DEFAULT_MAX_MEMBER_BYTES, is_regular

#: what a reader may say its runs are (see :data:`evalcal_core.scores.RUN_KINDS`)
_SHOW_IDS = 5


@dataclass(frozen=True)
class ReadOptions:
    """What the user asked a reader for (validated once by :func:`evalcal_core.readers.read_log`).

    Attributes
    ----------
    task, metric, filter, cluster : str or None
        ``--task``, ``--metric``, ``--filter``, ``--cluster`` (see ``read_log``).
    max_member_bytes : int
        Largest size, in bytes, one zip member may inflate to (``--max-member-mb``).
    """

    task: str | None = None
    metric: str | None = None
    filter: str | None = None
    cluster: str | None = None
    max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES


@dataclass(frozen=True)
class RunLog:
    """Per-question scores of one arm read from one harness log.

    Attributes
    ----------
    scores : ndarray of float, shape (runs, questions)
        The metric per run and question, in the metric's own units (a fraction for accuracy);
        read-only.
    questions : tuple of str
        Question ids (``doc_id``, sample ``id``, ``instance_id``, CSV ``question``), column order.
    runs : tuple of str
        Run labels (``"epoch 2"``, ``"trial 0"``, ``"seed 3"``, an lm-eval file's date), row
        order.
    metric : str
        The metric, scorer or column read.
    task : str or None
        The task or run name, when the log names one.
    model : str or None
        The model, when the log names one.
    format : str
        The registered reader's name (``"lm-eval"``, ``"inspect"``, ...).
    source : str
        The file or folder read.
    runs_are : {"seeds", "repeats", "unknown"}
        What the runs are: Inspect epochs, HELM trials and several lm-eval runs of one model
        are decoding repeats; CSV seeds are seeds.
    clusters : tuple of str or None
        Cluster label of each question (``--cluster``), or None.
    cluster_name : str or None
        The field or column the clusters came from.
    notes : tuple of str
        Findings the user must see (runs ordered by file date, ...).
    """

    scores: np.ndarray
    questions: tuple
    runs: tuple
    metric: str
    task: str | None
    model: str | None
    format: str
    source: str
    runs_are: str = "unknown"
    clusters: tuple | None = None
    cluster_name: str | None = None
    notes: tuple = field(default=())

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

    def about(self) -> str:
        """Format, task and model, comma-separated."""
        return ", ".join([self.format] + [f"{name} {value}" for name, value in
                                          (("task", self.task), ("model", self.model))
                                          if value is not None])

    def describe(self) -> str:
        """One line: source, format, task, model, metric and its range."""
        low, high = self.score_range
        return (f"{self.source} ({self.about()}): {self.k} run(s) x {self.n} questions, "
                f"metric {self.metric!r} in [{num(low)}, {num(high)}], "
                f"mean {num(self.scores.mean())}")


class Reader:
    """One log format: subclass, set the class attributes, override :meth:`read`.

    Attributes
    ----------
    name : str
        The ``--log-format`` value.
    suffixes : tuple of str
        File-name endings of this format, lower case with the dot (``(".jsonl",)``).
    folder_glob : str or None
        Pattern of this format's files inside a folder (``"samples_*.jsonl"``); None when a
        folder is never read as this format.
    harness_default, harness_default_clustered : str
        The registered protocol (:attr:`protocols.Protocol.harness`) reproducing what this
        format's harness prints by default to compare two runs, without and with question
        clusters; "" where none is registered (HELM, a CSV). ``evaluate --html`` runs it
        beside the verdict.
    """

    name: ClassVar[str] = ""
    suffixes: ClassVar[tuple] = ()
    folder_glob: ClassVar[str | None] = None
    harness_default: ClassVar[str] = ""
    harness_default_clustered: ClassVar[str] = ""

    @classmethod
    def sniff(cls, path: Path) -> bool:
        """Whether ``path`` (a regular file) looks like this format; default: its suffix."""
        return path.suffix.lower() in cls.suffixes

    @classmethod
    def find(cls, root: Path) -> list[Path]:
        """This format's files under folder ``root`` (any depth), sorted."""
        if cls.folder_glob is None:
            return []
        return sorted(p for p in root.rglob(cls.folder_glob) if is_regular(p) and cls.sniff(p))

    @classmethod
    def read(cls, path: Path, opts: ReadOptions) -> RunLog:  # pragma: no cover - abstract
        """Read the file ``path`` into a :class:`RunLog`; ``ValueError`` naming the file."""
        raise NotImplementedError

    @classmethod
    def read_folder(cls, root: Path, opts: ReadOptions) -> RunLog:
        """Read a folder: the one file of the chosen ``--task`` (override for several runs)."""
        files = cls.find(root)
        if not files:
            raise InvalidParameterError(f"{root}: no {cls.name} logs ({cls.folder_glob}) in this "
                                        "folder")
        by_task: dict = {}
        for file in files:
            by_task.setdefault(cls.task_of(file, opts), []).append(file)
        return cls.read(pick_file(root, by_task, opts.task, f"{cls.name} logs"), opts)

    @classmethod
    def task_of(cls, path: Path, opts: ReadOptions) -> str:
        """The task a file holds, for picking files in a folder; default: the file name."""
        return path.stem


# --- shared helpers ---------------------------------------------------------------------------

def num(x) -> str:
    return f"{float(x):.4g}"


def show(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def ids(values: Iterable, limit: int = _SHOW_IDS) -> str:
    values = list(values)
    shown = ", ".join(str(i) for i in values[:limit])
    return shown + (f", ... ({len(values) - limit} more)" if len(values) > limit else "")


def _plain_digits(label: str) -> bool:
    # ASCII digits only: "²".isdigit() is True but int("²") fails.
    return label.isascii() and label.isdigit()


def qname(word: str, qid: str) -> str:
    return f"{word} {qid}" if _plain_digits(qid) else f"{word} {qid!r}"


def sort_key(label: str):
    # Natural order: doc_id 2 before 10, then the non-numeric ids as text.
    return (0, int(label), label) if _plain_digits(label) else (1, 0, label)


def run_key(label: str):
    # "epoch 10" after "epoch 2": compare the trailing number when there is one.
    match = re.fullmatch(r"(.*?)(\d+)", label)
    return (match.group(1), int(match.group(2)), "") if match else (label, -1, label)


def frozen(array) -> np.ndarray:
    array = np.array(array, dtype=float)
    array.setflags(write=False)
    return array


def choose(kind: str, present: list, chosen: str | None, where: str, flag: str) -> str:
    """The one value of ``kind`` to read: the chosen one, or the only one present.

    ``flag`` is the command-line option that picks it (``"--metric"``).
    """
    if chosen is not None:
        if chosen not in present:
            raise InvalidParameterError(f"{where}: {kind} {chosen!r} ({flag}) is absent; {kind}s "
                                        f"present: {', '.join(map(str, present)) or 'none'}")
        return chosen
    if len(present) > 1:
        raise InvalidParameterError(f"{where}: holds several {kind}s "
                                    f"({', '.join(map(str, present))}); "
                                    f"pass {flag} to pick one")
    return present[0]


def number(value, where: str, field: str) -> float:
    """A JSON score as float; non-finite values are left for :func:`matrix` to report."""
    if isinstance(value, (bool, int, float)):
        return to_float(value, where, field)
    raise InvalidParameterError(f"{where}: field {field!r} must be a number, got {show(value)}")


def to_float(value, where: str, field: str) -> float:
    """``float(value)`` of a JSON number; an integer past the float range is a ``ValueError``.

    JSON integers are exact, so ``10**400`` written as digits reaches here as a Python int,
    and ``float`` of it raises ``OverflowError``, not a one-line refusal.
    """
    try:
        return float(value)
    except OverflowError:
        raise InvalidParameterError(f"{where}: field {field!r} is an integer of about "
                                    f"{int(value.bit_length() * 0.30103) + 1} digits, beyond the "
                                    "range of a float (about 1.8e308)") from None


def put(cells: dict, key: tuple, value: float, where: str, first_seen: dict, what: str,
        at: str) -> None:
    """``cells[key] = value``; a duplicate names where the first one was (``at``)."""
    if key in cells:
        raise InvalidParameterError(f"{where}: duplicate entry for {what} (first at "
                                    f"{first_seen[key]})")
    cells[key] = value
    first_seen[key] = at


def matrix(cells: dict, source: str, word: str, field: str, runs_order=None) -> tuple:
    """Scores ``(runs, questions)`` from ``{(question, run): value}``, every cell filled.

    ``cells`` keys are strings; ``word`` names a question in messages (``doc_id``).
    ``runs_order`` fixes the run order (default: natural order of the labels).
    """
    questions = sorted({q for q, _ in cells}, key=sort_key)
    runs = list(runs_order) if runs_order is not None else sorted({r for _, r in cells},
                                                                   key=run_key)
    q_index = {q: j for j, q in enumerate(questions)}
    r_index = {r: i for i, r in enumerate(runs)}
    scores = np.full((len(runs), len(questions)), np.nan)
    filled = np.zeros(scores.shape, dtype=bool)
    for (q, r), value in cells.items():
        scores[r_index[r], q_index[q]] = value
        filled[r_index[r], q_index[q]] = True
    if not filled.all():
        i, j = np.argwhere(~filled)[0]
        raise InvalidParameterError(f"{source}: {qname(word, questions[j])} has no {field!r} score "
                                    f"in {runs[i]} (every question needs a score in each run: "
                                    f"{ids(runs)})")
    finite = np.isfinite(scores)
    if not finite.all():
        i, j = np.argwhere(~finite)[0]
        rest = scores[finite]
        span = (f"the other scores lie in [{num(rest.min())}, {num(rest.max())}]"
                if rest.size else "no score is finite")
        raise InvalidParameterError(f"{source}: {qname(word, questions[j])} ({runs[i]}): field "
                                    f"{field!r} is {scores[i, j]}; scores must be finite ({span})")
    return frozen(scores), tuple(questions), tuple(runs)


def cluster_labels(labels: dict, questions: tuple, source: str, name: str) -> tuple:
    """One cluster label per question from ``{question: label}``, all present."""
    missing = [q for q in questions if q not in labels]
    if missing:
        raise InvalidParameterError(f"{source}: --cluster {name!r}: question {missing[0]} has no "
                                    f"{name!r} label")
    return tuple(labels[q] for q in questions)


def note_cluster(labels: dict, qid: str, label, where: str, name: str) -> None:
    """Record question ``qid``'s cluster; one question must keep one cluster."""
    label = str(label)
    if labels.setdefault(qid, label) != label:
        raise InvalidParameterError(f"{where}: --cluster {name!r} is {label!r} here but "
                                    f"{labels[qid]!r} in another run of this question")


def pick_file(root: Path, by_task: dict, task: str | None, kind: str) -> Path:
    """The one log file under ``root`` for ``task`` (``by_task``: task -> files)."""
    tasks = sorted(by_task)
    if not tasks:
        raise InvalidParameterError(f"{root}: no {kind} in this folder")
    if task is None and len(tasks) > 1:
        raise InvalidParameterError(f"{root}: holds several tasks ({', '.join(tasks)}); pass "
                                    "--task to pick one")
    name = tasks[0] if task is None else task
    if name not in by_task:
        raise InvalidParameterError(f"{root}: task {task!r} (--task) is absent; tasks present: "
                                    f"{', '.join(tasks)}")
    files = sorted(by_task[name])
    if len(files) > 1:
        raise InvalidParameterError(f"{root}: several {kind} for task {name!r} "
                                    f"({', '.join(str(f.relative_to(root)) for f in files)}); "
                                    f"pass the file to read")
    return files[0]
