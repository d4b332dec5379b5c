"""Compatibility module: harness logs are read by :mod:`evalcal_core.readers`.

New code calls :func:`evalcal_core.readers.read_log` (one log) and
:func:`evalcal_core.readers.read_arms` (one log per arm, aligned into
:class:`~evalcal_core.scores.ArmScores`). This module keeps the two-arm names of the first
version: :func:`read_log` (with ``fmt=``), :func:`pair_logs` and :class:`PairedLogs`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.readers import LogAlignment, RunLog, align_logs, names
from evalcal_core.readers import read_log as _read_log
from evalcal_core.validate import InvalidParameterError

__all__ = ["FORMATS", "PairedLogs", "RunLog", "pair_logs", "paired_from_alignment",
           "read_log"]

#: the registered ``--log-format`` values
FORMATS = tuple(names())


@dataclass(frozen=True)
class PairedLogs:
    """A baseline and a variant log aligned by question id and run (two-arm view).

    Attributes
    ----------
    base, variant : ndarray of float, shape (k, n)
        Scores of the matched questions; read-only.
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
        The logs as read.
    alignment : LogAlignment
        The m-arm alignment this view was made from (its ``scores`` is the ArmScores).
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
    alignment: LogAlignment | None = None

    @property
    def k(self) -> int:
        """Number of paired runs."""
        return self.base.shape[0]

    @property
    def n(self) -> int:
        """Number of matched questions."""
        return self.base.shape[1]

    def summary_lines(self) -> list[str]:
        """What was matched and what was left out, one finding per line."""
        return self.alignment.summary_lines()


def paired_from_alignment(alignment: LogAlignment) -> PairedLogs:
    """The two-arm :class:`PairedLogs` view of a two-arm :class:`LogAlignment`."""
    scores = alignment.scores
    base_arm, var_arm = scores.arms
    return PairedLogs(
        base=scores.scores[0], variant=scores.scores[1], questions=scores.question_ids,
        runs=tuple(tuple(p) for p in alignment.run_pairs),
        dropped_baseline=alignment.dropped[base_arm],
        dropped_variant=alignment.dropped[var_arm], metric=scores.metric,
        source=scores.source, baseline_log=alignment.logs[base_arm],
        variant_log=alignment.logs[var_arm], alignment=alignment)


def read_log(path, *, metric: str | None = None, task: str | None = None,
             filter: str | None = None, fmt: str | None = None, **options) -> RunLog:
    """:func:`evalcal_core.readers.read_log` (same options)."""
    return _read_log(path, fmt=fmt, task=task, metric=metric, filter=filter, **options)


def pair_logs(baseline: RunLog, variant: RunLog) -> PairedLogs:
    """Align a baseline and a variant log by question id and run label (or position)."""
    for name, log in (("baseline", baseline), ("variant", variant)):
        if not isinstance(log, RunLog):
            raise InvalidParameterError(f"The {name!r} parameter of pair_logs must be a RunLog "
                                        f"(from read_log). Got {type(log).__name__} instead.")
    return paired_from_alignment(align_logs({"baseline": baseline, "variant": variant}))
