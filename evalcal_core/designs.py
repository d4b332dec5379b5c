"""Study designs: what a comparison's units are, which decides which test is honest.

A protocol is reportable or a pitfall *for a design*, never in general: a per-question paired
test is the honest test between two fixed checkpoints (the questions are the sample) and a
pitfall between two training methods (it ignores the seed-to-seed variance of each method).

The four kinds of study, with the protocols reportable for each (``Protocol.valid_for``;
every other protocol carries a one-line reason, ``Protocol.label(kind)``):

``methods_paired``
    Training procedures compared on the same k seeds; seed ``i`` of both arms shares its
    randomness (data order, initialisation). The seeds are the units; per-question scores,
    if any, are a second level inside each seed. Reportable: ``paired_bca_perm``
    (recommended), ``paired_t``, ``sign_flip``, ``wilcoxon``, ``paired_two_level``
    (per-question scores, seeds and questions both random).
``methods_independent``
    Training procedures compared on independent seeds (no pairing): seeds are the units, the
    arms are two independent samples. Reportable: ``welch_t``.
``models``
    Fixed models (released checkpoints) compared on one benchmark: the questions are the
    sample, independent of each other; repeated runs of a model (decoding repeats, Inspect
    epochs) are measurement noise averaged within a question. Reportable:
    ``paired_t_questions`` (t-test on the per-question differences of the run means),
    ``mcnemar`` (one binary run: exact while few questions differ, Newcombe score CI).
``models_clustered``
    As ``models``, with questions grouped in clusters (tasks, categories, passages) whose
    questions are correlated: the clusters are the independent units. Reportable:
    ``cluster_cr2`` (CR2 SE, Imbens–Kolesár df; the clusters are passed as
    ``evaluate(..., clusters=codes)``).
"""

from __future__ import annotations

from dataclasses import dataclass

from evalcal_core.validate import InvalidParameterError

#: every kind of study, in the order tables list them
KINDS = ("methods_paired", "methods_independent", "models", "models_clustered")

#: what each kind is called in the first line of every output
KIND_WORDS = {
    "methods_paired": "methods, paired seeds",
    "methods_independent": "methods, independent seeds",
    "models": "models",
    "models_clustered": "models, clustered questions",
}


@dataclass(frozen=True)
class Design:
    """One study's design, declared by the user or inferred from the input.

    Attributes
    ----------
    compare : {"methods", "models"}
        ``methods``: training procedures, seeds are the units. ``models``: fixed checkpoints,
        questions (or clusters of them) are the units.
    paired : bool
        For ``methods``: seed ``i`` of every arm shares its randomness. Ignored for models.
    runs : int
        Seeds per arm (``methods``) or repeated runs per question (``models``).
    n_questions : int
        Questions per run (1 for per-seed metrics).
    cluster : str or None
        Name of the column or metadata field the questions are clustered by.
    n_clusters : int
        Number of clusters (0 when not clustered).
    inferred : tuple of str
        Which of the fields were inferred rather than declared, with the reason, for the
        printed design line (e.g. ``"models: one run per arm"``).
    """

    compare: str = "methods"
    paired: bool = True
    runs: int = 1
    n_questions: int = 1
    cluster: str | None = None
    n_clusters: int = 0
    inferred: tuple[str, ...] = ()

    def __post_init__(self):
        if self.compare not in ("methods", "models"):
            raise InvalidParameterError("compare must be 'methods' or 'models', got "
                                        f"{self.compare!r}")

    @property
    def kind(self) -> str:
        """One of :data:`KINDS`."""
        if self.compare == "models":
            return "models_clustered" if self.cluster else "models"
        return "methods_paired" if self.paired else "methods_independent"

    def describe(self) -> str:
        """The design line printed first in every output, e.g.
        ``"models, 1 run, 1,136 questions, clusters: none"``."""
        runs = f"{self.runs:,} {'run' if self.runs == 1 else 'runs'}"
        if self.compare == "methods":
            seeds = "paired" if self.paired else "independent"
            head = f"methods, {self.runs:,} {seeds} seed{'s' if self.runs != 1 else ''} per arm"
        else:
            head = f"models, {runs}" + (" per question" if self.runs > 1 else "")
        questions = (f"{self.n_questions:,} questions" if self.n_questions > 1
                     else "one metric per run")
        clusters = (f"clusters: {self.n_clusters:,} by {self.cluster!r}" if self.cluster
                    else "clusters: none")
        return f"{head}, {questions}, {clusters}"
