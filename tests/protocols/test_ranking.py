"""Tests of protocols.ranking: compact letter display (insert-absorb) and rank intervals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocols import joint_null as jn
from protocols import multiplicity as M
from protocols import ranking as R


def _matrix(a, significant_pairs):
    p = np.ones((a, a))
    for i, j in significant_pairs:
        p[i, j] = p[j, i] = 0.001
    return p


def test_hand_example_non_transitive():
    """Reference: insert-absorb worked by hand (Piepho 2004's procedure): A-C, A-D, B-D
    separable gives letters {AB}, {BC}, {CD}: A 'a', B 'ab', C 'bc', D 'c'."""
    cld = R.compact_letter_display(_matrix(4, [(0, 2), (0, 3), (1, 3)]),
                                   names=["A", "B", "C", "D"])
    assert cld.as_dict() == {"A": "a", "B": "ab", "C": "bc", "D": "c"}


def test_no_and_all_separable():
    assert R.compact_letter_display(np.ones((3, 3))).letters == ("a", "a", "a")
    all_sep = _matrix(3, itertools.combinations(range(3), 2))
    assert R.compact_letter_display(all_sep).letters == ("a", "b", "c")


def test_letters_follow_estimates():
    """The best arm gets 'a' when estimates are given."""
    p = _matrix(3, [(0, 2)])
    cld = R.compact_letter_display(p, estimates=[0.1, 0.2, 0.3])
    assert cld.letters[2] == "a" and cld.letters[0] == "b" and cld.letters[1] == "ab"


@given(st.integers(2, 8).flatmap(
    lambda a: st.tuples(st.just(a), st.lists(st.booleans(), min_size=a * (a - 1) // 2,
                                             max_size=a * (a - 1) // 2))))
def test_share_letter_iff_not_separable(case):
    """Structure property (exact equivalence): arms i, j share a letter iff p_ij >= alpha;
    and no letter is a subset of another (absorbed)."""
    a, flags = case
    pairs = [pr for pr, f in zip(itertools.combinations(range(a), 2), flags) if f]
    p = _matrix(a, pairs)
    cld = R.compact_letter_display(p)
    share = (cld.columns.astype(int) @ cld.columns.T.astype(int)) > 0
    np.testing.assert_array_equal(share, p >= 0.05)
    cols = cld.columns.T
    for x, y in itertools.permutations(range(cols.shape[0]), 2):
        assert not np.all(cols[x] <= cols[y])


def test_from_maxt_pairwise():
    """Consistency: a display built from max-T all-pairs p-values on clearly ordered arms."""
    rng = np.random.default_rng(0)
    means = np.array([0.0, 0.0, 1.5, 3.0])
    scores = means[:, None] + rng.normal(0, 0.5, size=(4, 10))
    comps = M.all_pairs(4)
    joint = jn.paired_signflip_null(M.pair_deltas(scores, comps))
    p = R.pairwise_matrix(M.maxt_adjust(joint), comps, 4)
    cld = R.compact_letter_display(p, estimates=scores.mean(-1))
    assert cld.letters[0] == cld.letters[1] and len(set(cld.letters)) == 3
    ranks = R.rank_intervals(scores.mean(-1), p)
    np.testing.assert_array_equal(ranks.low, [3, 3, 2, 1])
    np.testing.assert_array_equal(ranks.high, [4, 4, 2, 1])


def test_messages():
    with pytest.raises(ValueError, match="The 'p_adjusted' parameter of compact_letter_display "
                                         "must be a square matrix"):
        R.compact_letter_display(np.ones(3))
    with pytest.raises(ValueError, match="must be symmetric"):
        R.compact_letter_display(np.array([[1, 0.01], [0.5, 1]]))
    with pytest.raises(ValueError, match="The 'names' parameter"):
        R.compact_letter_display(np.ones((2, 2)), names=["a"])
