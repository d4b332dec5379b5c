"""The one type every reader returns: scores of m arms on the same questions, aligned.

Results CSVs (:mod:`evalcal_core.results_io`) and harness logs (:mod:`evalcal_core.readers`)
are read into :class:`ArmScores`; the ``evaluate`` application turns it into comparisons. Two
arms are the special case ``m = 2`` (``arms = ("baseline", "variant")``).

Independent seeds (design ``methods_independent``) need not be equally many per arm: such
*ragged* scores keep the dense ``(m, r, n)`` array with whole rows of NaN where an arm lacks a
seed, and ``runs_per_arm`` says how many each arm has (see :class:`ArmScores`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evalcal_core.validate import InvalidParameterError

#: how the arrival order of units read from a file is named when nothing else set it
GIVEN_ORDER = "as given"


@dataclass(frozen=True)
class Arrival:
    """When each question and each run arrived, for ``evaluate --stream``.

    A unit arrives at its first row: its first row in the file (``source="file rows"``),
    its smallest value of an ``--order-by`` column (``"column NAME"``), or its first
    sample in a harness log (``"log samples"``). Smaller times came first; ties are kept
    (a stream refuses them only along the axis it reads).

    Attributes
    ----------
    questions : ndarray, shape (n,)
        Arrival time of each question, in :attr:`ArmScores.question_ids` order (row
        positions, or the column's numbers or times).
    runs : ndarray, shape (r,)
        Arrival time of each run, in :attr:`ArmScores.run_ids` order.
    source : str
        Where the order came from, as the output names it.
    """

    questions: np.ndarray
    runs: np.ndarray
    source: str


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
    runs_per_arm : tuple of int, or None
        ``None`` (the default, every paired path): every arm has all ``r`` runs. Otherwise
        the scores are *ragged*, as only independent seeds may be: ``r`` is the number of
        distinct run labels over all arms, ``scores[a, i]`` is a whole row of NaN where arm
        ``a`` lacks run ``run_ids[i]``, and ``runs_per_arm[a]`` (>= 1) counts the rows it
        has. :meth:`arm` returns only those rows; code that pairs runs across arms must
        refuse ragged scores (:attr:`ragged`).
    arrival : Arrival or None
        The order questions and runs arrived in (the file's rows, an ``--order-by``
        column); ``None``: the order of the arrays as given.
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
    runs_per_arm: tuple | None = None
    arrival: Arrival | None = None

    def __post_init__(self):
        scores = np.asarray(self.scores, dtype=float)
        if scores.ndim != 3:
            raise InvalidParameterError(f"scores must have shape (arms, runs, questions), got "
                                        f"{scores.shape}")
        m, r, n = scores.shape
        if len(self.arms) != m or len(set(self.arms)) != m:
            raise InvalidParameterError(f"arms must be {m} distinct names, got {self.arms!r}")
        if len(self.question_ids) != n or len(self.run_ids) != r:
            raise InvalidParameterError("question_ids and run_ids must match the scores' shape")
        if self.runs_are not in RUN_KINDS:
            raise InvalidParameterError(f"runs_are must be one of {RUN_KINDS}, got "
                                        f"{self.runs_are!r}")
        if self.clusters is not None and np.shape(self.clusters) != (n,):
            raise InvalidParameterError(f"clusters must have one label per question ({n}), got "
                                        f"shape {np.shape(self.clusters)}")
        if self.arrival is not None and (np.shape(self.arrival.questions) != (n,)
                                         or np.shape(self.arrival.runs) != (r,)):
            raise InvalidParameterError(f"arrival must give one time per question ({n}) and per "
                                        f"run ({r}), got shapes "
                                        f"{np.shape(self.arrival.questions)} and "
                                        f"{np.shape(self.arrival.runs)}")
        if self.runs_per_arm is not None:
            object.__setattr__(self, "runs_per_arm", _runs_per_arm(scores, self.runs_per_arm))
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

    @property
    def ragged(self) -> bool:
        """Whether some arm lacks some of the runs (independent seeds of unequal counts)."""
        return self.runs_per_arm is not None

    @property
    def seed_counts(self) -> tuple:
        """Runs of each arm, in arm order (``r`` each unless :attr:`ragged`)."""
        return self.runs_per_arm if self.ragged else (self.r,) * self.m

    def arm(self, name: str) -> np.ndarray:
        """Scores of one arm, shape (r, n); ``(runs_per_arm[a], n)`` when ragged (its own
        runs only, NaN padding dropped)."""
        a = self.arms.index(name)
        if self.runs_per_arm is None:
            return self.scores[a]
        return self.scores[a][~np.isnan(self.scores[a, :, 0])]


def _runs_per_arm(scores: np.ndarray, counts) -> tuple:
    """``counts`` as ints, if they are the arms' non-NaN rows and every row is whole."""
    m, r, _ = scores.shape
    empty = np.isnan(scores)
    if np.shape(counts) != (m,):
        raise InvalidParameterError(f"runs_per_arm must have one count per arm ({m}), got "
                                    f"{counts!r}")
    whole = empty.all(axis=2)
    if (empty.any(axis=2) != whole).any():
        raise InvalidParameterError("ragged scores must pad a missing run with a whole row of NaN; "
                                    "found a run with some questions NaN")
    found = tuple(int(k) for k in r - whole.sum(axis=1))
    if tuple(int(k) for k in counts) != found or min(found) < 1:
        raise InvalidParameterError(f"runs_per_arm must count each arm's non-NaN runs {found} "
                                    f"(each >= 1), got {tuple(counts)!r}")
    return found
