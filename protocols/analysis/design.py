"""The study design: declared with ``--design NAME``, or inferred from the scores where
unambiguous.

Inference (each reason is printed with the design line, with how to override it and the other
kinds the data allows):

* one run per arm -> ``models`` (fixed checkpoints; questions are the sample);
* runs that are repeats of one model (Inspect epochs, HELM trials) -> ``models`` with repeats;
* runs that are seeds (a ``seed`` column) -> ``methods_paired``; arms with different seed
  sets (ragged :class:`ArmScores`) only with ``--design methods_independent``, where each arm
  keeps its own seed count (:class:`IndependentSeeds`);
* runs of unknown kind (a one-arm log's ``run`` column) -> ``methods_paired``, said so.

Clusters (``--cluster COLUMN``) make an inferred ``models`` design ``models_clustered``; the
clusters must be more than one, and every question in exactly one. A declared kind sets what
the registry says of it (:attr:`StudyDesign.compare`, ``paired``, ``clustered``) and is
checked against the data by the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core import designs as kinds
from evalcal_core.designs import COMPARE_METHODS, COMPARE_MODELS, Design, StudyDesign
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError, fail

#: how a printed reason says to declare the design instead
OVERRIDE = "override with --design NAME"
#: ``runs_from`` of a results file without a seed column: its one run per arm is said so
NO_SEED_COLUMN = "no seed column: each arm is one fixed model"


@dataclass(frozen=True)
class IndependentSeeds(Design):
    """A ``methods_independent`` design whose arms have different numbers of seeds.

    ``runs`` is the smallest count (what the fewest-units notes judge); ``runs_per_arm``
    holds ``(arm, seeds)`` pairs in arm order, printed in the design line.
    """

    runs_per_arm: tuple = ()

    def describe(self) -> str:
        """``methods, independent seeds: base 5, new 3, one metric per run, clusters: none``."""
        counts = ", ".join(f"{arm} {k:,}" for arm, k in self.runs_per_arm)
        questions = (f"{self.n_questions:,} questions" if self.n_questions > 1
                     else "one metric per run")
        return f"methods, independent seeds: {counts}, {questions}, clusters: none"


def infer_design(scores: ArmScores, *, design: str | None = None,
                 runs_from: str = "") -> Design:
    """The :class:`~evalcal_core.designs.Design` of ``scores``.

    Parameters
    ----------
    scores : ArmScores
    design : str or None
        The kind declared with ``--design`` (one of :data:`evalcal_core.designs.KINDS`);
        inferred when ``None``.
    runs_from : str
        Where the runs' kind was read from, for the printed reason.

    Returns
    -------
    Design
        An :class:`IndependentSeeds` when ``scores`` are ragged (seed sets differ).

    Raises
    ------
    ValueError
        One line (the CLI exits 2): an unknown kind; a kind the data contradicts (models on
        per-seed metrics, methods on one run per arm, clusters for a kind without them, a
        clustered kind without clusters, one cluster); seed sets that differ between arms
        unless the kind's seeds are independent (paired seeds need every seed in every arm).
    """
    if scores.r == 1 and scores.n == 1:
        raise InvalidParameterError(f"{scores.source}: one run per arm with one score each: there "
                                    "is no noise to estimate; give several seeds or per-question "
                                    "scores")
    if design is None:
        study, why = _inferred(scores, runs_from)
    else:
        if design not in kinds.KINDS:
            raise fail("--design", f"one of {', '.join(kinds.KINDS)}", design)
        study, why = kinds.get(design), ""
    problem = _contradiction(scores, study)
    if problem:
        raise InvalidParameterError(problem)
    inferred = ()
    if why:
        others = [_alternative(scores, other) for other in kinds.designs() if other is not study]
        others = [o for o in others if o]
        inferred = (f"{why}; {OVERRIDE}" + (f" ({', '.join(others)})" if others else ""),)
    cluster, n_clusters = None, 0
    if study.clustered:
        cluster = scores.cluster_name or "cluster"
        n_clusters = len(np.unique(np.asarray(scores.clusters)))
    if scores.ragged:
        return IndependentSeeds(compare=study.compare, paired=False,
                                runs=min(scores.seed_counts), n_questions=scores.n,
                                inferred=inferred,
                                runs_per_arm=tuple(zip(scores.arms, scores.seed_counts)))
    return Design(compare=study.compare, paired=study.paired, runs=scores.r,
                  n_questions=scores.n, cluster=cluster, n_clusters=n_clusters,
                  inferred=inferred)


def _inferred(scores: ArmScores, runs_from: str) -> tuple[StudyDesign, str]:
    """The kind the data says, and why: the units from the runs' kind, paired seeds, and
    clusters exactly when the questions have them (the registry's rule names the kind)."""
    if scores.r == 1:
        compare, why = COMPARE_MODELS, "one run per arm" + (
            f" ({runs_from})" if runs_from == NO_SEED_COLUMN else "")
    elif scores.runs_are == "repeats":
        compare, why = COMPARE_MODELS, (f"runs are repeats ({runs_from or 'repeated decoding'}) "
                                        "of fixed models")
    elif scores.runs_are == "seeds":
        compare, why = COMPARE_METHODS, (f"runs are training seeds ({runs_from or 'seeds'}); "
                                         "paired by seed")
    else:
        compare, why = COMPARE_METHODS, "runs of unknown kind treated as paired training seeds"
    clustered = scores.clusters is not None and compare == COMPARE_MODELS
    design = Design(compare=compare, paired=True,
                    cluster=(scores.cluster_name or "cluster") if clustered else None)
    return design.study, why


def _contradiction(scores: ArmScores, study: StudyDesign) -> str:
    """Why ``scores`` cannot be of kind ``study`` (one line naming ``--design``), or ``""``."""
    return _units_problem(scores, study) or _clusters_problem(scores, study)


def _units_problem(scores: ArmScores, study: StudyDesign) -> str:
    """Why the runs and questions of ``scores`` rule out ``study``'s units, or ``""``."""
    name = f"--design {study.name}"
    if scores.ragged and study.paired:
        return _missing_seed(scores)
    if study.compare == COMPARE_MODELS and scores.n < 2:
        return (f"{name} needs per-question scores (the questions are the units); a file of "
                "per-seed metrics compares methods")
    if study.compare == COMPARE_METHODS and scores.r < 2:
        return (f"{name} needs two or more seeds per arm, got {scores.r}; with one run per "
                f"arm compare models (--design {kinds.MODELS})")
    if scores.ragged and min(scores.seed_counts) < 2:
        k, arm = min(zip(scores.seed_counts, scores.arms))
        return (f"{name} needs two or more seeds in every arm (Welch's t estimates each arm's "
                f"variance); arm {arm!r} has {k}")
    return ""


def _clusters_problem(scores: ArmScores, study: StudyDesign) -> str:
    """Why the questions' clusters (or their absence) rule out ``study``, or ``""``."""
    column = scores.cluster_name or "cluster"
    if scores.clusters is not None and not study.clustered:
        units = ("the seeds are the units" if study.compare == COMPARE_METHODS
                 else "the questions are independent")
        clustered = " or ".join(d.name for d in kinds.designs() if d.clustered)
        return (f"--cluster {column} applies to --design {clustered} (questions clustered); "
                f"with {study.name} {units}")
    if study.clustered and scores.clusters is None:
        return (f"--design {study.name} needs the questions' clusters: give --cluster COLUMN "
                "(the column or log field naming each question's cluster)")
    if study.clustered:
        labels = np.asarray(scores.clusters)
        if len(np.unique(labels)) < 2:
            return (f"--cluster {column}: every question is in one cluster ({labels[0]!r}); "
                    "cluster-robust inference needs two or more")
    return ""


def _alternative(scores: ArmScores, study: StudyDesign) -> str:
    """``study``'s name as an alternative the printed reason lists, with what it asks of
    ``--cluster`` (``models_clustered with --cluster COLUMN``), or ``""`` where the runs and
    questions rule it out."""
    if _units_problem(scores, study):
        return ""
    if study.clustered and scores.clusters is None:
        return f"{study.name} with --cluster COLUMN"
    if scores.clusters is not None and not study.clustered:
        return f"{study.name} without --cluster"
    return "" if _clusters_problem(scores, study) else study.name


def _missing_seed(scores: ArmScores) -> str:
    """The reader's message for paired seeds: the first arm lacking a seed, and which."""
    a = next(a for a, k in enumerate(scores.seed_counts) if k < scores.r)
    seed = next(s for s, row in zip(scores.run_ids, scores.scores[a, :, 0]) if np.isnan(row))
    return (f"{scores.source}: arm {scores.arms[a]!r} has no score for seed {seed!r}: every "
            f"seed needs every arm; give --design {kinds.METHODS_INDEPENDENT} if the arms' "
            f"seeds are independent")


def cluster_codes(scores: ArmScores) -> np.ndarray | None:
    """Integer codes ``(n,)`` of the questions' clusters (for ``clusters=``), or None."""
    if scores.clusters is None:
        return None
    _, codes = np.unique(np.asarray(scores.clusters), return_inverse=True)
    return codes.astype(np.int64)
