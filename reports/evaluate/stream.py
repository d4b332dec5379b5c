"""``evaluate --stream``: the anytime-valid reading of two arms' paired differences in the
order the units arrived (the file's rows, an ``--order-by`` column, a log's samples; numbers:
:mod:`protocols.analysis.stream`), written as text.

The units are the design's: questions for fixed models, paired seeds for methods, and
clusters (each the mean delta of its questions, once all of them are in) when the questions
are clustered. With ``--claim`` the claim is decided on the ``1 - 2 alpha`` sequence at the
first unit where it is shown or refuted, and ``--gate`` reads that verdict. A running
intersection that became empty is written as that finding, never as an interval.
"""

from __future__ import annotations

from protocols.claims import EXIT_STATUS

from .render import Units

#: how the text names each source of the arrival order
_ORDER_WORDS = {"file rows": "the file's rows (each unit at its first row)",
                "log samples": "the logs' samples (each question at its first sample)",
                "as given": "the order of the arrays given",
                "log question ids": "the logs' question ids in natural order (the samples' "
                                    "own order is not kept: valid only if the ids were "
                                    "assigned in random order)"}


def _order_words(order: str, unit: str) -> str:
    if order.startswith("column "):
        words = (f"column {order.removeprefix('column ')!r} (each {unit[:-1]} at its "
                 "smallest value)")
    else:
        words = _ORDER_WORDS.get(order, order)
    if unit == "clusters":
        # a cluster's mean is known once its last question is in
        words = words.split(" (")[0] + " (each cluster once its last question is in)"
    return words


def stream_lines(s: dict, names, units: Units, gate: bool = False) -> list[str]:
    """The streaming reading as text lines."""
    level = f"{100 * (1 - s['alpha']):g}%"
    unit, one = s["unit"], s["unit"][:-1]
    head = (f"anytime-valid ({s['label']}; {level}, valid however often you look), "
            f"{unit} in the order of {_order_words(s['order'], unit)}:")
    empty = s["intersection_empty_after"]
    if empty:
        lines = [f"{head} no interval: the data contradict the stream's exchangeability (the "
                 f"sequence's running intersection became empty after {one} {empty:,} of "
                 f"{s['n']:,}: the mean difference drifted as the {unit} arrived)"]
    else:
        lines = [f"{head} after {s['n']:,} {unit} {names[1]} - {names[0]} lies in "
                 f"{units.interval(s['low'], s['high'])} {units.short}".rstrip()]
    if unit == "questions":
        lines.append("valid only if the questions arrived in random order: where the file "
                     "groups them (by topic, subject or source), stream the groups as units "
                     "(--cluster COLUMN)")
    if empty:
        pass  # no stop to read: the sequence it would be read on is void
    elif s["stopped_at"]:
        # a loss: the variant is better where the difference went down
        up = (s["direction"] > 0) != bool(s.get("lower_is_better"))
        better = names[1] if up else names[0]
        lines.append(f"0 left the sequence after {one} {s['stopped_at']:,} "
                     f"({better} better; there "
                     f"{units.interval(s['low_at_stop'], s['high_at_stop'])}): a watcher "
                     "could have stopped there")
    else:
        lines.append("0 never left the sequence: no anytime-valid decision yet (more "
                     f"{unit} or a larger difference needed)")
    c = s.get("claim")
    if c is not None:
        margin = f"{units.factor * c['margin']:g} {units.short}".rstrip()
        if s.get("lower_is_better"):
            margin += " (lower is better)"
        if c["intersection_empty_after"]:
            lines.append(f"{c['claim']} at margin {margin}, anytime-valid: {c['verdict']} (the "
                         f"{100 * c['level']:g}% sequence's running intersection became "
                         f"empty after {one} {c['intersection_empty_after']:,}: the data "
                         "contradict its exchangeability, so nothing it showed is valid)")
        else:
            where = (f"after {one} {c['decided_at']:,}" if c["decided_at"]
                     else f"after all {s['n']:,} {unit}")
            lines.append(f"{c['claim']} at margin {margin}, anytime-valid: {c['verdict']} "
                         f"{where} ({100 * c['level']:g}% sequence there: "
                         f"{units.interval(c['low'], c['high'])} {units.short})".rstrip())
        if gate:
            status = EXIT_STATUS[c["verdict"]]
            lines.append(f"--gate exit status {status}: from this anytime-valid verdict (valid "
                         "after any number of looks), not from the fixed-n claim above (valid "
                         "for one look only)")
    return lines
