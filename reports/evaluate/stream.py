"""``evaluate --stream``: the anytime-valid reading of two arms' paired differences in the
order the units arrived — by question or seed id, numerically when the ids are numbers, the
order harnesses number their samples (numbers: :mod:`protocols.streaming`).

The units are the design's: questions for fixed models, paired seeds for methods, and
clusters (each the mean delta of its questions, in the order of its first question) when
the questions are clustered. With ``--claim`` the claim is decided on the ``1 - 2 alpha``
sequence at the first unit where it is shown or refuted, and ``--gate`` reads that
verdict.
"""

from __future__ import annotations

from protocols.claims import EXIT_STATUS

from .render import Units


def stream_lines(s: dict, names, units: Units, gate: bool = False) -> list[str]:
    """The streaming reading as text lines."""
    level = f"{100 * (1 - s['alpha']):g}%"
    lines = [f"anytime-valid ({s['label']}; {level}, valid however often you look): after "
             f"{s['n']:,} {s['unit']} {names[1]} - {names[0]} lies in "
             f"{units.interval(s['low'], s['high'])} {units.short}".rstrip()]
    if s["stopped_at"]:
        better = names[1] if s["direction"] > 0 else names[0]
        lines.append(f"0 left the sequence after {s['unit'][:-1]} {s['stopped_at']:,} "
                     f"({better} better; there "
                     f"{units.interval(s['low_at_stop'], s['high_at_stop'])}): a watcher "
                     "could have stopped there")
    else:
        lines.append("0 never left the sequence: no anytime-valid decision yet (more "
                     f"{s['unit']} or a larger difference needed)")
    c = s.get("claim")
    if c is not None:
        margin = f"{units.factor * c['margin']:g} {units.short}".rstrip()
        where = (f"after {s['unit'][:-1]} {c['decided_at']:,}" if c["decided_at"]
                 else f"after all {s['n']:,} {s['unit']}")
        lines.append(f"{c['claim']} at margin {margin}, anytime-valid: {c['verdict']} {where} "
                     f"({100 * c['level']:g}% sequence there: "
                     f"{units.interval(c['low'], c['high'])} {units.short})".rstrip())
        if gate:
            status = EXIT_STATUS[c["verdict"]]
            lines.append(f"--gate exit status {status}: from this anytime-valid verdict (valid "
                         "after any number of looks), not from the fixed-n claim above (valid "
                         "for one look only)")
    return lines
