"""Two arms: every applicable protocol on the same data, labelled for the study's design.

A protocol's label comes from :meth:`protocols.Protocol.label` for the design's kind (never
its fixed ``pitfall`` attribute): the same test is reportable under one design and a pitfall
under another; and a reportable protocol over its level on a real pool at the data's shape
is a pitfall there (:func:`protocols.analysis.evidence.real_pitfall`). Rows are sorted
reportable first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import METHODS_PAIRED
from evalcal_core.validate import check_alpha
from protocols import PROTOCOLS, ScoreBatch, get, names, protocol_class

from .evidence import real_pitfall
from .primary import AS_PRIMARY  # the comparisons' parameters: one p per protocol printed

#: what a degenerate verdict (no variance estimate) means, shown with the row
NO_VARIANCE = ("no variance estimate (zero standard error with a non-zero estimate): no "
               "evidence either way, so p = NaN and not significant")


@dataclass(frozen=True)
class ProtocolRow:
    """One protocol's verdict (``estimate_pp`` etc. in the display unit: pp for fractions).

    ``pitfall``: why the protocol misleads under the study's design, "" if reportable.
    """

    protocol: str
    estimate_pp: float
    ci_low_pp: float | None
    ci_high_pp: float | None
    p_value: float | None
    significant: bool
    pitfall: str
    degenerate: bool = False
    note: str = ""


def _or_none(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def evaluate_protocols(base, variant, *, kind=METHODS_PAIRED, alpha=0.05, protocols=None,
                       rng=0, params=None, clusters=None, factor=100.0):
    """Apply protocols to two arms' ``(k, n)`` scores.

    Parameters
    ----------
    base, variant : ndarray, shape (k, n)
    kind : str
        The design's kind, for each protocol's label.
    alpha : float
    protocols : list of str or None
        Names to apply; default all that can run on the data, except the harness
        reproductions (non-empty ``Protocol.harness``), which run only when named.
    rng : int
        Seed of the resampling protocols (each starts a fresh stream from it).
    params : dict or None
        Parameters set on every selected protocol that has them.
    clusters : ndarray of int or None
        Cluster codes of the questions, for protocols that need them.
    factor : float
        Display unit per score unit (100: fractions shown in pp).

    Returns
    -------
    rows : list of ProtocolRow
        Reportable rows first.
    skipped : dict
        Protocol name -> why it cannot run on these data.
    """
    alpha = check_alpha(alpha)
    batch = ScoreBatch.from_arrays(base, variant, clusters=clusters)
    # a protocol over its level on a real pool at this shape is labelled a pitfall there
    n_clusters = 0 if clusters is None else len(np.unique(clusters))
    # The harness reproductions (``Protocol.harness``) run only when named.
    chosen = ([n for n in names() if not protocol_class(n).harness] if protocols is None
              else list(protocols))
    rows, skipped = [], {}
    for name in chosen:
        own = _own_params(name, params)
        # --protocol-param wins; where it changes the primary row's setting, say so
        changed = {k: v for k, v in own.items() if k in AS_PRIMARY.get(name, {})
                   and v != AS_PRIMARY[name][k]}
        protocol = _row_protocol(name, params)
        why = protocol.applicable(batch.k, batch.n, batch.binary, clusters)
        if why is not None and protocol_class(name).needs_clusters and clusters is None:
            why = "needs question clusters (--cluster COLUMN)"
        if why is not None:
            skipped[name] = why
            continue
        try:
            note = protocol.decision_note(batch)
        except ValueError as exc:
            # e.g. single_run without a threshold on a metric that is not a fraction
            skipped[name] = str(exc)
            continue
        # A fresh stream per protocol from the same seed: a protocol's verdict does not
        # depend on which others ran, and bca shows the CI that paired_bca_perm uses. The
        # batch carries the clusters for the protocols that read them.
        r = row_result(name, batch, alpha=alpha, rng=rng, params=params)
        degenerate = bool(r.degenerate)
        # a refusal (cluster_cr2's dominant cluster) is no zero SE: its note says why
        if degenerate and not getattr(protocol, "refusal", lambda _: "")(batch):
            note = "; ".join(filter(None, [NO_VARIANCE, note]))
        if changed:
            what = ", ".join(f"{k}={v}" for k, v in changed.items())
            usual = ", ".join(f"{k}={v}" for k, v in AS_PRIMARY[name].items())
            note = "; ".join(filter(None, [note, f"run with {what} (--protocol-param), a "
                                           f"different protocol from the comparison "
                                           f"above, which uses {usual}"]))
        rows.append(ProtocolRow(
            protocol=name,
            estimate_pp=factor * float(r.estimate),
            ci_low_pp=_or_none(factor * float(r.ci_low)),
            ci_high_pp=_or_none(factor * float(r.ci_high)),
            p_value=_or_none(float(r.p_value)),
            significant=bool(r.significant),
            pitfall=(protocol_class(name).label(kind)
                     or real_pitfall(kind, name, batch.n, batch.k, n_clusters)),
            degenerate=degenerate,
            note=note,
        ))
    rows.sort(key=lambda r: bool(r.pitfall))
    return rows, skipped


def _own_params(name: str, params) -> dict:
    """The entries of ``params`` (``--protocol-param``) that protocol ``name`` takes."""
    return {k: v for k, v in (params or {}).items() if PROTOCOLS.accepts(name, k)}


def _row_protocol(name: str, params=None):
    """Protocol ``name`` as the table runs it: the comparisons' parameters
    (:data:`AS_PRIMARY`), then ``params``."""
    return get(name, **{**AS_PRIMARY.get(name, {}), **_own_params(name, params)})


def row_result(name: str, base, variant=None, *, alpha: float = 0.05, rng=0, params=None,
               clusters=None):
    """One row of the table on one experiment or a batch of them: protocol ``name`` run
    as :func:`evaluate_protocols` runs it (the decision grid's families that score a row
    call this).

    Parameters
    ----------
    name : str
    base, variant : ndarray, shape (..., k, n), or a ScoreBatch and ``None``
        The two arms' scores; leading axes are experiments.
    alpha : float
    rng : int or numpy.random.Generator
        The resampling stream: a seed starts a fresh one (as each row of the table does),
        a Generator is drawn from.
    params : dict or None
        ``--protocol-param`` values; those the protocol takes are set on it.
    clusters : ndarray of int or None
        Cluster code per question.

    Returns
    -------
    protocols.ProtocolResult
    """
    batch = ScoreBatch.from_arrays(base, variant, clusters=clusters)
    return _row_protocol(name, params).evaluate(batch, alpha=alpha,
                                                rng=np.random.default_rng(rng))


#: fewer questions than this differing between two fixed models: the per-question t is not
#: shown to hold its level (sim.design_check on the MathArena A/A pool, n = 15)
FEW_DIFFERING = 30


def notes_for(base, variant, alpha, rows=(), *, study, factor=100.0, unit="pp",
              names_=("baseline", "variant"), run_ids=()) -> list[str]:
    """Advice a user needs to read the table (``rows``: the verdicts, for their notes;
    ``study``: the design's :class:`~protocols.analysis.designs.DesignAnalysis`, whose
    :meth:`~protocols.analysis.designs.DesignAnalysis.table_notes` come after the shape;
    ``run_ids``: the runs' labels, so that a protocol reading the first run only names it,
    e.g. ``epoch 1``)."""
    k, n = base.shape
    b_name, v_name = names_
    notes = [f"{k} run{'' if k == 1 else 's'}, {n} question(s) per run; estimates are "
             f"{v_name} minus {b_name} in {unit}."]
    notes.extend(study.table_notes(base, variant, alpha, factor, unit))
    first = ""
    if k > 1 and len(run_ids) == k:
        label = run_ids[0]
        # the protocols reading only run 1 name it: "epoch 1" from logs, a CSV's seed value
        first = f"; its run 1 is {label if isinstance(label, str) else f'seed {label}'}"
    notes.extend(f"{r.protocol}: {r.note}"
                 + (first if protocol_class(r.protocol).uses_first_seed_only else "") + "."
                 for r in rows if r.note)
    notes.append("Rows marked with a pitfall (for this design) are shown for teaching: do not "
                 "report them.")
    return notes
