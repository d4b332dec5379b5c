"""Local stand-ins for shared pieces not landed yet (``protocols.ranking``'s compact letter
display); :func:`adjust` is :func:`protocols.multiplicity.adjust`."""

from __future__ import annotations

CORRECTIONS = ("holm", "maxt", "bh", "bonferroni", "none")


def _cld(arms, separable) -> dict:
    """Compact letter display: arms sharing a letter are not separable.

    ``arms`` in display order (best first); ``separable``: set of frozenset pairs.
    Insert-and-absorb (Piepho 2004).
    """
    groups = [set(arms)]
    for pair in separable:
        i, j = tuple(pair)
        new = []
        for g in groups:
            if i in g and j in g:
                new += [g - {i}, g - {j}]
            else:
                new.append(g)
        groups = [g for g in new if g and not any(g < h for h in new)]
        uniq = []
        for g in groups:
            if g not in uniq:
                uniq.append(g)
        groups = uniq
    pos = {a: i for i, a in enumerate(arms)}
    groups.sort(key=lambda g: min(pos[a] for a in g))
    letters = {a: "" for a in arms}
    for k, g in enumerate(groups):
        ch = chr(ord("a") + k) if k < 26 else f"[{k}]"
        for a in arms:
            if a in g:
                letters[a] += ch
    return letters


from protocols.multiplicity import adjust  # noqa: E402, F401  (the shared implementation)

cld = _cld
