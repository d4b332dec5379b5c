"""Which arms are separable: compact letter displays and rank intervals.

:func:`compact_letter_display` turns adjusted pairwise p-values (all pairs, e.g. max-T or
Holm over :func:`protocols.multiplicity.all_pairs`) into letters such that two arms share
a letter exactly when their difference is *not* significant (adjusted p >= alpha). It
uses the insert-absorb algorithm of Piepho (2004, J. Comput. Graph. Stat. 13:456-466):
start with one letter for all arms; for each significant pair split every letter holding
both into two (one without each arm), then drop letters whose arms are a subset of
another letter's. Non-transitive results need more letters than groups ("a", "ab", "b").

:func:`rank_intervals` gives each arm the ranks it may hold given the same decisions.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

from evalcal_core.validate import check_alpha, fail

from .multiplicity import _comparisons_iv


@dataclass(frozen=True)
class LetterDisplay:
    """A compact letter display.

    Attributes
    ----------
    names : tuple of str
        Arm names, in input order.
    letters : tuple of str
        Each arm's letters (e.g. ``"ab"``); arms sharing a letter are not separable.
    columns : ndarray of bool, shape (n_arms, n_letters)
        ``columns[i, l]``: arm ``i`` carries letter ``l``.
    """

    names: tuple
    letters: tuple
    columns: np.ndarray

    def as_dict(self) -> dict:
        """``{name: letters}``."""
        return dict(zip(self.names, self.letters))


def _labels(n):
    # a..z, A..Z, then aa, ab, ...
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    out = []
    for i in range(n):
        label, i2 = "", i
        while True:
            label = alphabet[i2 % len(alphabet)] + label
            i2 = i2 // len(alphabet) - 1
            if i2 < 0:
                break
        out.append(label)
    return out


def pairwise_matrix(p, comparisons, n_arms: int) -> np.ndarray:
    """Symmetric ``(n_arms, n_arms)`` matrix of pairwise p-values (diagonal 1).

    Pairs not in ``comparisons`` are NaN (treated as not separable).
    """
    comparisons = _comparisons_iv(comparisons, n_arms)
    p = np.asarray(p, dtype=float)
    if p.shape != (len(comparisons),):
        raise fail("p", f"one p-value per comparison, shape ({len(comparisons)},)",
                   owner="pairwise_matrix", got=f"shape {p.shape}")
    out = np.full((n_arms, n_arms), np.nan)
    np.fill_diagonal(out, 1.0)
    for (i, j), v in zip(comparisons, p):
        out[i, j] = out[j, i] = v
    return out


def _matrix_iv(p_adjusted, owner):
    p = np.asarray(p_adjusted, dtype=float)
    if p.ndim != 2 or p.shape[0] != p.shape[1] or p.shape[0] < 1:
        raise fail("p_adjusted", "a square matrix of pairwise adjusted p-values",
                   owner=owner, got=f"shape {p.shape}")
    if not np.array_equal(np.isnan(p), np.isnan(p.T)) or not np.allclose(
            np.nan_to_num(p), np.nan_to_num(p.T), rtol=0, atol=1e-12):
        raise fail("p_adjusted", "symmetric", "an asymmetric matrix", owner)
    return p


def compact_letter_display(p_adjusted, alpha: float = 0.05, *, names=None,
                           estimates=None) -> LetterDisplay:
    """Letters per arm from adjusted pairwise p-values (insert-absorb, Piepho 2004).

    Parameters
    ----------
    p_adjusted : ndarray, shape (a, a)
        Symmetric adjusted p-values (e.g. from :func:`pairwise_matrix`); a pair is
        separable when its p < ``alpha``. NaN is "not separable".
    alpha : float
    names : sequence of str, optional
        Arm names (default ``"0", "1", ...``).
    estimates : array_like, shape (a,), optional
        Arm means; letters are then given from the best arm down ("a" for the letter of
        the highest mean), otherwise in arm order.

    Returns
    -------
    LetterDisplay
        Two arms share a letter if and only if their adjusted p >= alpha.
    """
    alpha = check_alpha(alpha)
    p = _matrix_iv(p_adjusted, "compact_letter_display")
    a = p.shape[0]
    names = tuple(str(i) for i in range(a)) if names is None else tuple(str(n) for n in names)
    if len(names) != a:
        raise fail("names", f"{a} names, one per arm", list(names), "compact_letter_display")
    rank = np.arange(a) if estimates is None else np.argsort(
        -np.asarray(estimates, dtype=float), kind="stable")
    position = np.empty(a, dtype=int)
    position[rank] = np.arange(a)

    cols = {(1 << a) - 1}
    with np.errstate(invalid="ignore"):
        separable = p < alpha
    for i in range(a):
        for j in range(i + 1, a):
            if not separable[i, j]:
                continue
            both = (1 << i) | (1 << j)
            new = set()
            for c in cols:
                if c & both == both:   # insert: split the letter holding both arms
                    new.add(c & ~(1 << i))
                    new.add(c & ~(1 << j))
                else:
                    new.add(c)
            # absorb: a letter whose arms all carry another letter adds nothing
            cols = {c for c in new if c and not any(c != o and c & o == c for o in new)}

    def first_arm(c):
        return min(position[i] for i in range(a) if c >> i & 1)

    ordered = sorted(cols, key=lambda c: (first_arm(c), -c.bit_count()))
    columns = np.array([[bool(c >> i & 1) for c in ordered] for i in range(a)]).reshape(
        a, len(ordered))
    labels = _labels(len(ordered))
    letters = tuple("".join(lab for lab, on in zip(labels, columns[i]) if on)
                    for i in range(a))
    return LetterDisplay(names, letters, columns)


@dataclass(frozen=True)
class RankIntervals:
    """Ranks each arm may hold (1 = best) given the pairwise decisions.

    Attributes
    ----------
    low, high : ndarray of int, shape (a,)
        ``low = 1 + #arms significantly better``, ``high = a - #arms significantly worse``.
    """

    low: np.ndarray
    high: np.ndarray


def rank_intervals(estimates, p_adjusted, alpha: float = 0.05, *,
                   higher_is_better: bool = True) -> RankIntervals:
    """Rank intervals from adjusted pairwise p-values and the arms' estimates.

    When the decisions control the FWER and make no sign errors (a significant pair is
    ordered as its estimates are), the true ranks all lie in these intervals with
    probability at least ``1 - alpha``; the sign-error part is not controlled here.
    """
    alpha = check_alpha(alpha)
    p = _matrix_iv(p_adjusted, "rank_intervals")
    est = np.asarray(estimates, dtype=float)
    if est.shape != (p.shape[0],):
        raise fail("estimates", f"one value per arm, shape ({p.shape[0]},)",
                   owner="rank_intervals", got=f"shape {est.shape}")
    if not higher_is_better:
        est = -est
    with np.errstate(invalid="ignore"):
        sep = p < alpha
    better = sep & (est[None, :] > est[:, None])     # [i, j]: j significantly above i
    worse = sep & (est[None, :] < est[:, None])
    a = est.size
    return RankIntervals(1 + better.sum(axis=1), a - worse.sum(axis=1))
