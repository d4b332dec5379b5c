"""protocols.streaming against a direct, loop-by-loop transcription of Waudby-Smith &
Ramdas (2024), Theorem 2, and its anytime guarantee by simulation (binomial bound)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from protocols.streaming import eb_confidence_sequence


def _theorem2(x, alpha):
    """The PrPl-EB sequence for x in [0, 1], one time at a time (no running intersection)."""
    lows, highs = [], []
    s_x = s_sq = s_lam = s_lx = s_vpsi = 0.0
    mu_prev, sig_prev = 0.5, 0.25
    for t, xt in enumerate(x, start=1):
        lam = min(math.sqrt(2 * math.log(2 / alpha) / (sig_prev * t * math.log(1 + t))), 0.5)
        v = 4 * (xt - mu_prev) ** 2
        psi = (-math.log(1 - lam) - lam) / 4
        s_lam += lam
        s_lx += lam * xt
        s_vpsi += v * psi
        center = s_lx / s_lam
        half = (math.log(2 / alpha) + s_vpsi) / s_lam
        lows.append(max(center - half, 0.0))
        highs.append(min(center + half, 1.0))
        s_x += xt
        mu = (0.5 + s_x) / (t + 1)
        s_sq += (xt - mu) ** 2
        mu_prev, sig_prev = mu, (0.25 + s_sq) / (t + 1)
    return np.array(lows), np.array(highs)


def test_equals_a_transcription_of_theorem_2():
    rng = np.random.default_rng(0)
    d = rng.choice([-1.0, 0.0, 0.0, 1.0], size=300)
    cs = eb_confidence_sequence(d, 0.05)
    low, high = _theorem2((d + 1) / 2, 0.05)
    np.testing.assert_allclose(cs.low, 2 * np.maximum.accumulate(low) - 1, atol=1e-12)
    np.testing.assert_allclose(cs.high, 2 * np.minimum.accumulate(high) - 1, atol=1e-12)


def test_holds_the_mean_at_every_time():
    """Paired 0/1 differences with mean +0.05: the share of sequences that ever miss it is
    <= alpha within 4 binomial SE (looking after every one of 300 questions)."""
    rng = np.random.default_rng(1)
    sims, t = 2000, 300
    d = np.where(rng.random((sims, t)) < 0.3,
                 np.where(rng.random((sims, t)) < 0.5 + 0.05 / 0.6, 1.0, -1.0), 0.0)
    cs = eb_confidence_sequence(d, 0.05)
    miss = ((cs.low > 0.05) | (cs.high < 0.05)).any(axis=-1).mean()
    assert miss <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / sims)


def test_decision_names_the_first_exclusion_and_its_side():
    d = np.r_[np.ones(200), np.zeros(10)]
    cs = eb_confidence_sequence(d, 0.05)
    stopped, sign = cs.decision(0.0)
    assert stopped == int(np.argmax(cs.low > 0)) + 1 and sign == 1
    assert eb_confidence_sequence(np.zeros(50)).decision(0.0) == (0, 0)


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match=r"deltas.*\[-1, 1\]"):
        eb_confidence_sequence(np.array([0.5, 2.0]))
    with pytest.raises(ValueError, match="alpha"):
        eb_confidence_sequence(np.zeros(5), alpha=1.5)
