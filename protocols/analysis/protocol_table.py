"""Two arms: every applicable protocol on the same data, labelled for the study's design.

A protocol's label comes from :meth:`protocols.Protocol.label` for the design's kind (never
its fixed ``pitfall`` attribute): the same test is reportable under one design and a pitfall
under another. Rows are sorted reportable first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import METHODS_PAIRED, MODELS
from evalcal_core.validate import check_alpha
from protocols import PROTOCOLS, ScoreBatch, get, min_sign_flip_pvalue, names, protocol_class

#: what a degenerate verdict (no variance estimate) means, shown with the row
NO_VARIANCE = ("no variance estimate (zero standard error with a non-zero estimate): no "
               "evidence either way, so p = NaN and not significant")
#: more per-seed deltas than this are summarised, not listed
MAX_LISTED = 12
#: parameters the comparisons above the table run a protocol with (compare.py's primary
#: row): the table runs it the same way, so one output prints one p per protocol
AS_PRIMARY = {"mcnemar": {"exact": True}}


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
    # The harness reproductions (``Protocol.harness``) run only when named.
    chosen = ([n for n in names() if not protocol_class(n).harness] if protocols is None
              else list(protocols))
    rows, skipped = [], {}
    for name in chosen:
        own = {k: v for k, v in (params or {}).items() if PROTOCOLS.accepts(name, k)}
        # --protocol-param wins; where it changes the primary row's setting, say so
        changed = {k: v for k, v in own.items() if k in AS_PRIMARY.get(name, {})
                   and v != AS_PRIMARY[name][k]}
        protocol = get(name, **{**AS_PRIMARY.get(name, {}), **own})
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
        r = protocol.evaluate(batch, alpha=alpha, rng=np.random.default_rng(rng))
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
            pitfall=protocol_class(name).label(kind),
            degenerate=degenerate,
            note=note,
        ))
    rows.sort(key=lambda r: bool(r.pitfall))
    return rows, skipped


def _sign_flip_note(k: int, alpha: float) -> str:
    """What the sign-flip p of ``paired_bca_perm`` can reach with ``k`` seeds."""
    p_min = min_sign_flip_pvalue(k)
    if k > get("sign_flip").max_exact_k:
        n_perm = get("sign_flip").n_permutations
        return (f"With k = {k} the sign-flip p is sampled from {n_perm} random sign "
                f"patterns, a Monte Carlo estimate; its smallest value is {p_min:.4g}.")
    if p_min < alpha:
        return (f"With k = {k} the smallest attainable exact sign-flip p is {p_min:.4g}, "
                f"below alpha = {alpha:g}: the paired protocol (paired_bca_perm) can reach "
                f"significance.")
    needed = next(j for j in range(k + 1, 64) if min_sign_flip_pvalue(j) < alpha)
    return (f"With k = {k} the smallest attainable exact sign-flip p is {p_min:.4g}, so the "
            f"paired protocol (paired_bca_perm) can NEVER be significant at alpha = "
            f"{alpha:g}: k >= {needed} seeds are needed.")


def summarise_deltas(deltas, unit: str) -> str:
    """All deltas when few; otherwise their count, range, quartiles and signs."""
    d = np.asarray(deltas, dtype=float)
    if d.size <= MAX_LISTED:
        return f"Per-seed deltas ({unit}): " + ", ".join(f"{x:+.2f}" for x in d) + "."
    q1, med, q3 = np.quantile(d, [0.25, 0.5, 0.75])
    return (f"Per-seed deltas ({unit}), {d.size} seeds: min {d.min():+.2f}, quartiles "
            f"{q1:+.2f} / {med:+.2f} / {q3:+.2f}, max {d.max():+.2f}; "
            f"{int((d > 0).sum())} positive, {int((d < 0).sum())} negative.")


#: fewer questions than this differing between two fixed models: the per-question t is not
#: shown to hold its level (sim.design_check on the MathArena A/A pool, n = 15)
FEW_DIFFERING = 30


def notes_for(base, variant, alpha, rows=(), *, kind=METHODS_PAIRED, factor=100.0,
              unit="pp", names_=("baseline", "variant")) -> list[str]:
    """Advice a user needs to read the table (``rows``: the verdicts, for their notes)."""
    k, n = base.shape
    b_name, v_name = names_
    notes = [f"{k} runs, {n} question(s) per run; estimates are {v_name} minus {b_name} "
             f"in {unit}."]
    if k >= 2 and kind == METHODS_PAIRED:
        notes.append(_sign_flip_note(k, alpha))
        r_b, r_v = base.mean(axis=1), variant.mean(axis=1)
        if k >= 3 and r_b.std() > 0 and r_v.std() > 0:
            rho = float(np.corrcoef(r_b, r_v)[0, 1])
            notes.append(f"Correlation of the arms' per-seed metrics: {rho:.2f}; pairing "
                         f"helps when it is clearly positive.")
        notes.append(summarise_deltas(factor * (r_v - r_b), unit))
        if n >= 2:
            notes.append("Per-question scores from several seeds: paired_two_level counts "
                         "both the seeds and the questions as noise; the per-question "
                         "protocols marked as pitfalls count only the questions.")
    if kind == MODELS and n >= 2:
        differ = int((np.abs(variant.mean(axis=0) - base.mean(axis=0)) > 0).sum())
        if differ < FEW_DIFFERING:
            notes.append(f"Only {differ} of {n} questions differ between the arms: the t test "
                         f"alone (paired_t_questions) is not shown to hold its level with so "
                         f"few (it over-rejects on a real A/A pool of 15 questions: "
                         f"docs/harness_defaults.md); the verdict (t_signflip_questions) "
                         f"needs the exact sign-flip test (signflip_questions) to agree.")
    notes.extend(f"{r.protocol}: {r.note}." for r in rows if r.note)
    notes.append("Rows marked with a pitfall (for this design) are shown for teaching: do not "
                 "report them.")
    return notes
