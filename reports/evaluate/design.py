"""The study design: declared with flags, or inferred from the scores where unambiguous.

Inference (each reason is printed with the design line, with how to override it):

* one run per arm -> ``models`` (fixed checkpoints; questions are the sample);
* runs that are repeats of one model (Inspect epochs, HELM trials) -> ``models`` with repeats;
* runs that are seeds (a ``seed`` column) -> ``methods``, paired unless ``--unpaired``;
* runs of unknown kind (a one-arm log's ``run`` column) -> ``methods``, paired, said so.

``--cluster COLUMN`` makes a ``models`` design ``models_clustered``; the clusters must be
more than one, and every question in exactly one.
"""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import Design
from evalcal_core.scores import ArmScores

COMPARE = ("methods", "models")


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

    Raises
    ------
    ValueError
        For contradictory flags or unusable clusters (one line, the CLI exits 2).
    """
    inferred = []
    if scores.r == 1 and scores.n == 1:
        raise ValueError(f"{scores.source}: one run per arm with one score each: there is no "
                         f"noise to estimate; give several seeds or per-question scores")
    if compare is None:
        if scores.r == 1:
            compare = "models"
            inferred.append("one run per arm; override with --compare")
        elif scores.runs_are == "repeats":
            compare = "models"
            inferred.append(f"runs are repeats ({runs_from or 'repeated decoding'}) of "
                            f"fixed models; override with --compare")
        elif scores.runs_are == "seeds":
            compare = "methods"
            inferred.append(f"runs are training seeds ({runs_from or 'seeds'}); "
                            + ("independent by --unpaired" if unpaired else
                               "paired by seed; --unpaired if they are not")
                            + "; override with --compare")
        else:
            compare = "methods"
            inferred.append("runs of unknown kind treated as paired training seeds; "
                            "--compare models if they are repeats of fixed models")
    if compare not in COMPARE:
        raise ValueError(f"--compare must be methods or models, got {compare!r}")
    if unpaired and compare == "models":
        raise ValueError("--unpaired applies to --compare methods (independent seeds); "
                         "models are compared on the same questions, always paired")
    if compare == "models" and scores.n < 2:
        raise ValueError("--compare models needs per-question scores (the questions are the "
                         "units); a file of per-seed metrics compares methods")
    if compare == "methods" and scores.r < 2:
        raise ValueError(f"--compare methods needs two or more seeds per arm, got "
                         f"{scores.r}; with one run per arm compare models")
    cluster, n_clusters = None, 0
    if scores.clusters is not None:
        if compare == "methods":
            raise ValueError("--cluster applies to --compare models (questions clustered); "
                             "with methods the seeds are the units")
        labels = np.asarray(scores.clusters)
        n_clusters = len(np.unique(labels))
        cluster = scores.cluster_name or "cluster"
        if n_clusters < 2:
            raise ValueError(f"--cluster {cluster}: every question is in one cluster "
                             f"({labels[0]!r}); cluster-robust inference needs two or more")
    return Design(compare=compare, paired=not unpaired, runs=scores.r,
                  n_questions=scores.n, cluster=cluster, n_clusters=n_clusters,
                  inferred=tuple(inferred))


def design_line(design: Design) -> str:
    """``design: models, 1 run, 1,136 questions, clusters: none (inferred: ...)``."""
    why = f" (inferred: {'; '.join(design.inferred)})" if design.inferred else " (declared)"
    return f"design: {design.describe()}{why}"


def design_json(design: Design) -> dict:
    """The ``"design"`` object of ``--json``."""
    return {"compare": design.compare, "kind": design.kind, "paired": design.paired,
            "runs": design.runs, "n_questions": design.n_questions,
            "cluster": design.cluster, "n_clusters": design.n_clusters,
            "inferred": list(design.inferred), "line": design_line(design)}


def cluster_codes(scores: ArmScores) -> np.ndarray | None:
    """Integer codes ``(n,)`` of the questions' clusters (for ``clusters=``), or None."""
    if scores.clusters is None:
        return None
    _, codes = np.unique(np.asarray(scores.clusters), return_inverse=True)
    return codes.astype(np.int64)
