"""The one type every reader returns: scores of m arms on the same questions, aligned.

Results CSVs (:mod:`evalcal_core.results_io`) and harness logs (:mod:`evalcal_core.readers`)
are read into :class:`ArmScores`; the ``evaluate`` application turns it into comparisons. Two
arms are the special case ``m = 2`` (``arms = ("baseline", "variant")``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: what the runs of one arm are: independent training seeds, repeated decoding of one fixed
#: model (Inspect epochs, HELM trials, several lm-eval runs of one checkpoint), or not known
RUN_KINDS = ("seeds", "repeats", "unknown")


@dataclass(frozen=True)
class ArmScores:
    """Scores of ``m`` arms, ``r`` runs each, on the same ``n`` questions.

    Attributes
    ----------
    arms : tuple of str
        Arm names, in the order the user gave them (the first is the default reference).
    scores : ndarray of float, shape (m, r, n)
        ``scores[a, i, q]``: arm ``a``, run ``i``, question ``q``, in the metric's units
        (fractions for accuracies). ``n = 1`` for per-seed metrics. Read-only.
    question_ids : tuple of str
        The ``n`` question ids (``("metric",)`` for per-seed metrics).
    run_ids : tuple of str
        The ``r`` run labels (seeds, epochs), as the input names them.
    runs_are : {"seeds", "repeats", "unknown"}
        What the runs are (see :data:`RUN_KINDS`); decides the design's default.
    clusters : ndarray of str, shape (n,), or None
        Cluster label of each question (task, category) when the input has one and the user
        asked for it (``--cluster``); ``None`` otherwise.
    cluster_name : str or None
        The column or metadata field the clusters came from.
    metric : str
        Name of the metric scored.
    source : str
        Where the scores came from, for the first line of the output.
    notes : tuple of str
        Findings of the reader the user must see (questions dropped, runs matched by seed).
    """

    arms: tuple
    scores: np.ndarray
    question_ids: tuple
    run_ids: tuple
    runs_are: str = "unknown"
    clusters: np.ndarray | None = None
    cluster_name: str | None = None
    metric: str = "score"
    source: str = ""
    notes: tuple = field(default=())

    def __post_init__(self):
        scores = np.asarray(self.scores, dtype=float)
        if scores.ndim != 3:
            raise ValueError(f"scores must have shape (arms, runs, questions), got "
                             f"{scores.shape}")
        m, r, n = scores.shape
        if len(self.arms) != m or len(set(self.arms)) != m:
            raise ValueError(f"arms must be {m} distinct names, got {self.arms!r}")
        if len(self.question_ids) != n or len(self.run_ids) != r:
            raise ValueError("question_ids and run_ids must match the scores' shape")
        if self.runs_are not in RUN_KINDS:
            raise ValueError(f"runs_are must be one of {RUN_KINDS}, got {self.runs_are!r}")
        if self.clusters is not None and np.shape(self.clusters) != (n,):
            raise ValueError(f"clusters must have one label per question ({n}), got shape "
                             f"{np.shape(self.clusters)}")
        scores.setflags(write=False)
        object.__setattr__(self, "scores", scores)

    @property
    def m(self) -> int:
        """Number of arms."""
        return self.scores.shape[0]

    @property
    def r(self) -> int:
        """Runs per arm."""
        return self.scores.shape[1]

    @property
    def n(self) -> int:
        """Questions per run."""
        return self.scores.shape[2]

    def arm(self, name: str) -> np.ndarray:
        """Scores of one arm, shape (r, n)."""
        return self.scores[self.arms.index(name)]
