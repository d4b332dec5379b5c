"""The study design: declared with flags, or inferred from the scores where unambiguous.

Inference (each reason is printed with the design line, with how to override it):

* one run per arm -> ``models`` (fixed checkpoints; questions are the sample);
* runs that are repeats of one model (Inspect epochs, HELM trials) -> ``models`` with repeats;
* runs that are seeds (a ``seed`` column) -> ``methods``, paired unless ``--unpaired``;
  arms with different seed sets (ragged :class:`ArmScores`) only with ``--unpaired``, where
  each arm keeps its own seed count (:class:`IndependentSeeds`);
* runs of unknown kind (a one-arm log's ``run`` column) -> ``methods``, paired, said so.

``--cluster COLUMN`` makes a ``models`` design ``models_clustered``; the clusters must be
more than one, and every question in exactly one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import COMPARE_METHODS, COMPARE_MODELS, COMPARES, Design
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError


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


def infer_design(scores: ArmScores, *, compare: str | None = None, unpaired: bool = False,
                 runs_from: str = "") -> Design:
    """The :class:`~evalcal_core.designs.Design` of ``scores``.

    Parameters
    ----------
    scores : ArmScores
    compare : {"methods", "models"} or None
        Declared with ``--compare``; inferred when ``None``.
    unpaired : bool
        ``--unpaired``: the seeds of different arms are independent (methods only).
    runs_from : str
        Where the runs' kind was read from, for the printed reason.

    Returns
    -------
    Design
        An :class:`IndependentSeeds` when ``scores`` are ragged (seed sets differ).

    Raises
    ------
    ValueError
        For contradictory flags or unusable clusters (one line, the CLI exits 2); for seed
        sets that differ between arms unless ``unpaired`` (paired seeds need every seed in
        every arm).
    """
    inferred = []
    if scores.ragged and not unpaired:
        raise InvalidParameterError(_missing_seed(scores))
    if scores.r == 1 and scores.n == 1:
        raise InvalidParameterError(f"{scores.source}: one run per arm with one score each: there "
                                    "is no noise to estimate; give several seeds or per-question "
                                    "scores")
    if compare is None:
        if scores.r == 1:
            compare = COMPARE_MODELS
            inferred.append("one run per arm; override with --compare")
        elif scores.runs_are == "repeats":
            compare = COMPARE_MODELS
            inferred.append(f"runs are repeats ({runs_from or 'repeated decoding'}) of "
                            f"fixed models; override with --compare")
        elif scores.runs_are == "seeds":
            compare = COMPARE_METHODS
            inferred.append(f"runs are training seeds ({runs_from or 'seeds'}); "
                            + ("independent by --unpaired" if unpaired else
                               "paired by seed; --unpaired if they are not")
                            + "; override with --compare")
        else:
            compare = COMPARE_METHODS
            inferred.append("runs of unknown kind treated as paired training seeds; "
                            "--compare models if they are repeats of fixed models")
    if compare not in COMPARES:
        raise InvalidParameterError(f"--compare must be methods or models, got {compare!r}")
    if unpaired and compare == COMPARE_MODELS:
        raise InvalidParameterError("--unpaired applies to --compare methods (independent seeds); "
                                    "models are compared on the same questions, always paired")
    if compare == COMPARE_MODELS and scores.n < 2:
        raise InvalidParameterError("--compare models needs per-question scores (the questions "
                                    "are the units); a file of per-seed metrics compares methods")
    if compare == COMPARE_METHODS and scores.r < 2:
        raise InvalidParameterError(f"--compare methods needs two or more seeds per arm, got "
                                    f"{scores.r}; with one run per arm compare models")
    if scores.ragged and min(scores.seed_counts) < 2:
        k, arm = min(zip(scores.seed_counts, scores.arms))
        raise InvalidParameterError(f"--unpaired needs two or more seeds in every arm (Welch's t "
                                    f"estimates each arm's variance); arm {arm!r} has {k}")
    cluster, n_clusters = None, 0
    if scores.clusters is not None:
        if compare == COMPARE_METHODS:
            raise InvalidParameterError("--cluster applies to --compare models (questions "
                                        "clustered); with methods the seeds are the units")
        labels = np.asarray(scores.clusters)
        n_clusters = len(np.unique(labels))
        cluster = scores.cluster_name or "cluster"
        if n_clusters < 2:
            raise InvalidParameterError(f"--cluster {cluster}: every question is in one cluster "
                                        f"({labels[0]!r}); cluster-robust inference needs two or "
                                        "more")
    if scores.ragged:
        return IndependentSeeds(compare=compare, paired=False, runs=min(scores.seed_counts),
                                n_questions=scores.n, inferred=tuple(inferred),
                                runs_per_arm=tuple(zip(scores.arms, scores.seed_counts)))
    return Design(compare=compare, paired=not unpaired, runs=scores.r,
                  n_questions=scores.n, cluster=cluster, n_clusters=n_clusters,
                  inferred=tuple(inferred))


def _missing_seed(scores: ArmScores) -> str:
    """The reader's message for paired seeds: the first arm lacking a seed, and which."""
    a = next(a for a, k in enumerate(scores.seed_counts) if k < scores.r)
    seed = next(s for s, row in zip(scores.run_ids, scores.scores[a, :, 0]) if np.isnan(row))
    return (f"{scores.source}: arm {scores.arms[a]!r} has no score for seed {seed!r}: every "
            f"seed needs every arm; give --unpaired if the arms' seeds are independent")


def cluster_codes(scores: ArmScores) -> np.ndarray | None:
    """Integer codes ``(n,)`` of the questions' clusters (for ``clusters=``), or None."""
    if scores.clusters is None:
        return None
    _, codes = np.unique(np.asarray(scores.clusters), return_inverse=True)
    return codes.astype(np.int64)
