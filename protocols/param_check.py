"""One refusal for a protocol parameter (``--protocol-param KEY=VALUE``) that the selected
protocols cannot take, in the key the user typed.

A key may mean different fields in different protocols (``B`` is ``n_resamples`` in the
bootstraps and ``n_permutations`` in the sign-flip tests), with different rules. Each
protocol's own refusal names its field and itself only; the user typed the key once for
every selected protocol, so the refusal names the key, each rule with the protocols that
state it, and how many of those taking the key refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from evalcal_core.validate import InvalidParameterError

from ._base import PROTOCOLS

#: the RULE and VALUE of :func:`evalcal_core.validate.fail`'s template
_TEMPLATE = re.compile(r"must be (?P<rule>.+)\. Got (?P<got>.+) instead\.$")


def check_protocol_param(key: str, value, selected: Iterable[str], typed: str) -> list[str]:
    """Build every protocol of ``selected`` taking ``key`` with ``value``; one
    :class:`~evalcal_core.validate.InvalidParameterError` naming them all if any refuses.

    Parameters
    ----------
    key : str
        The parameter as typed (a field or an alias of one).
    value : object
        Its value, as the option parser read it.
    selected : iterable of str
        Protocol names the run may use.
    typed : str
        How the user gave it (``"--protocol-param B=abc"``, ``"--threshold 0.5"``), the
        message's first words.

    Returns
    -------
    list of str
        The selected protocols taking ``key`` (empty if none does; the caller says so).
    """
    takers = [name for name in selected if PROTOCOLS.accepts(name, key)]
    refusals = {}
    for name in takers:
        try:
            PROTOCOLS.get(name, **{key: value})
        except InvalidParameterError as exc:
            refusals[name] = str(exc)
    if refusals:
        raise InvalidParameterError(f"{typed}: {_refusal(key, refusals, len(takers))}")
    return takers


def _refusal(key: str, refusals: dict[str, str], n_takers: int) -> str:
    """One sentence for ``key`` refused by the protocols ``refusals`` names (their messages
    by name), ``n_takers`` of the selected protocols taking it; protocols that state the
    same rule are named together."""
    parsed = {name: _TEMPLATE.search(text) for name, text in refusals.items()}
    if any(match is None for match in parsed.values()):
        # a message outside the template: each protocol's own words
        return "; ".join(f"{name}: {text}" for name, text in refusals.items())
    by_rule: dict[str, list[str]] = {}
    for name, match in parsed.items():
        by_rule.setdefault(match.group("rule"), []).append(name)
    rules = "; ".join(f"{rule} for {', '.join(names)}" for rule, names in by_rule.items())
    of = "" if len(refusals) == n_takers else f" ({len(refusals)} of the {n_takers} taking it)"
    got = next(iter(parsed.values())).group("got")
    return f"{key} must be {rules}{of}. Got {got} instead."
