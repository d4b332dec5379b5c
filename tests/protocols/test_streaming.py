"""protocols.streaming against direct, loop-by-loop transcriptions of Waudby-Smith & Ramdas
(2024), Theorems 2 and 3, against the authors' ``confseq`` package where it is installed, and
its anytime guarantee by simulation (binomial bounds)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from protocols import streaming_betting
from protocols.streaming import (
    METHODS,
    betting_confidence_sequence,
    claim_decision,
    confidence_sequence,
    eb_confidence_sequence,
    read_margin,
    stream_claim,
    three_way,
)


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


def _theorem3_capital(x, m, alpha, c=0.5):
    """Hedged capital log K+_t(m), log K-_t(m), t = 1..T, one time at a time (Theorem 3:
    predictable plug-in bets lambda_t = sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1+t))),
    truncated at c/m and c/(1-m))."""
    up, down = [], []
    k_up = k_down = 0.0
    s_x = s_sq = 0.0
    sig_prev = 0.25
    for t, xt in enumerate(x, start=1):
        lam = math.sqrt(2 * math.log(2 / alpha) / (sig_prev * t * math.log(1 + t)))
        lam_up = lam if m == 0 else min(lam, c / m)
        lam_down = lam if m == 1 else min(lam, c / (1 - m))
        k_up += math.log(1 + lam_up * (xt - m))
        k_down += math.log(1 - lam_down * (xt - m))
        up.append(k_up)
        down.append(k_down)
        s_x += xt
        mu = (0.5 + s_x) / (t + 1)
        s_sq += (xt - mu) ** 2
        sig_prev = (0.25 + s_sq) / (t + 1)
    return np.array(up), np.array(down)


def _theorem3_bounds(x, t, alpha):
    """The running-intersection bounds after look t, by bisection on the scalar capital at
    every look s <= t (each look's set is {m: max(K+/2, K-/2) < 1/alpha})."""
    lows, highs = [], []
    thr = math.log(1 / alpha) - math.log(0.5)
    for s in range(1, t + 1):
        def up(m, s=s):
            return _theorem3_capital(x[:s], m, alpha)[0][-1] >= thr

        def down(m, s=s):
            return _theorem3_capital(x[:s], m, alpha)[1][-1] >= thr
        lo, hi = 0.0, 1.0
        if up(0.0):
            for _ in range(40):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if up(mid) else (lo, mid)
            lows.append(lo)
        else:
            lows.append(0.0)
        lo, hi = 0.0, 1.0
        if down(1.0):
            for _ in range(40):
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if down(mid) else (mid, hi)
            highs.append(hi)
        else:
            highs.append(1.0)
    return 2 * max(lows) - 1, 2 * min(highs) - 1


def test_eb_equals_a_transcription_of_theorem_2():
    rng = np.random.default_rng(0)
    d = rng.choice([-1.0, 0.0, 0.0, 1.0], size=300)
    cs = eb_confidence_sequence(d, 0.05)
    low, high = _theorem2((d + 1) / 2, 0.05)
    np.testing.assert_allclose(cs.low, 2 * np.maximum.accumulate(low) - 1, atol=1e-12)
    np.testing.assert_allclose(cs.high, 2 * np.minimum.accumulate(high) - 1, atol=1e-12)


@pytest.mark.parametrize("value", [-0.3, 0.0, 0.02, 0.05, 0.3])
def test_betting_sides_equal_a_transcription_of_theorem_3(value):
    """Whether a value lies below / above the sequence at each look: the scalar capital of
    Theorem 3 crossing 1/alpha (hedged, theta = 1/2), running."""
    rng = np.random.default_rng(1)
    d = np.clip(0.05 + rng.uniform(-0.3, 0.3, 250), -1, 1)
    under, over = betting_confidence_sequence(d, 0.05).sides(value)
    up, down = _theorem3_capital((d + 1) / 2, (value + 1) / 2, 0.05)
    thr = math.log(1 / 0.05) - math.log(0.5)
    np.testing.assert_array_equal(under, np.logical_or.accumulate(up >= thr))
    np.testing.assert_array_equal(over, np.logical_or.accumulate(down >= thr))


@pytest.mark.parametrize("t", [5, 40, 120])
def test_betting_interval_equals_bisection_on_theorem_3(t):
    rng = np.random.default_rng(2)
    d = rng.choice([-1.0, 0.0, 0.0, 1.0], size=120, p=[0.1, 0.4, 0.3, 0.2])
    cs = betting_confidence_sequence(d, 0.05)
    low, high = cs.interval_at(t)
    ref_low, ref_high = _theorem3_bounds((d + 1) / 2, t, 0.05)
    assert low == pytest.approx(ref_low, abs=1e-7) and high == pytest.approx(ref_high, abs=1e-7)
    # the bounds at every look, read on the grid, are never inside the exact ones
    assert cs.low[t - 1] <= low + 1e-12 and cs.high[t - 1] >= high - 1e-12
    assert low - cs.low[t - 1] <= 2 / (cs.grid - 1) + 1e-12


def test_betting_grid_equals_confseq():
    """The authors' package (Waudby-Smith's ``confseq``, the same grid of 2,001 means, max
    hedge, truncation 1/2, running intersection): bounds within one grid step."""
    betting = pytest.importorskip("confseq.betting")
    rng = np.random.default_rng(3)
    d = rng.uniform(-0.002, 0.102, 400)
    low, high = betting.betting_cs((d + 1) / 2, alpha=0.05, breaks=2000,
                                   running_intersection=True)
    cs = betting_confidence_sequence(d, 0.05)
    np.testing.assert_allclose(cs.low, 2 * low - 1, atol=2 / 2000 + 1e-12)
    np.testing.assert_allclose(cs.high, 2 * high - 1, atol=2 / 2000 + 1e-12)


def test_batches_equal_one_by_one_and_chunks_do_not_matter(monkeypatch):
    rng = np.random.default_rng(4)
    d = rng.choice([-1.0, 0.0, 1.0], size=(3, 2, 80))
    whole = betting_confidence_sequence(d, 0.1)
    low, high, (under, over) = whole.low, whole.high, whole.sides(0.05)
    at_low, at_high = whole.interval_at(np.array([[80, 10], [1, 79], [40, 40]]))
    monkeypatch.setattr(streaming_betting, "CHUNK", 50)
    for i in range(3):
        for j in range(2):
            one = betting_confidence_sequence(d[i, j], 0.1)
            np.testing.assert_array_equal(one.low, low[i, j])
            np.testing.assert_array_equal(one.high, high[i, j])
            np.testing.assert_array_equal(one.sides(0.05)[0], under[i, j])
            np.testing.assert_array_equal(one.sides(0.05)[1], over[i, j])
    one = betting_confidence_sequence(d[1, 0], 0.1)
    assert one.interval_at(1) == (at_low[1, 0], at_high[1, 0])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", ["binary", "uniform"])
def test_holds_the_mean_at_every_look(method, kind):
    """Paired deltas with mean +0.05 looked at after every one of 300: the share of
    sequences that ever miss it is <= alpha within 4 binomial SE, and each side <= alpha / 2
    within 4 SE (the hedge splits alpha evenly)."""
    rng = np.random.default_rng(5)
    sims, t = 2000, 300
    if kind == "binary":
        d = np.where(rng.random((sims, t)) < 0.3,
                     np.where(rng.random((sims, t)) < 0.5 + 0.05 / 0.6, 1.0, -1.0), 0.0)
    else:
        d = 0.05 + rng.uniform(-0.5, 0.5, (sims, t))
    under, over = confidence_sequence(d, 0.05, method).sides(0.05)
    se = math.sqrt(0.05 * 0.95 / sims)
    assert (under | over).any(axis=-1).mean() <= 0.05 + 4 * se
    assert under.any(axis=-1).mean() <= 0.025 + 4 * math.sqrt(0.025 * 0.975 / sims)
    assert over.any(axis=-1).mean() <= 0.025 + 4 * math.sqrt(0.025 * 0.975 / sims)


def test_betting_is_tighter_once_the_variance_is_small():
    """Consistency check (no outside reference): at seqbench's low-noise setting the betting
    sequence is narrower than the empirical-Bernstein one after 500 looks in every run."""
    rng = np.random.default_rng(6)
    d = 0.05 + rng.uniform(-0.052, 0.052, (20, 500))
    bet = betting_confidence_sequence(d, 0.05).interval_at(500)
    eb = eb_confidence_sequence(d, 0.05).interval_at(500)
    assert np.all(bet[1] - bet[0] < 0.75 * (eb[1] - eb[0]))


def test_decision_names_the_first_exclusion_and_its_side():
    d = np.r_[np.ones(200), np.zeros(10)]
    for method in METHODS:
        cs = confidence_sequence(d, 0.05, method)
        stopped, sign = cs.decision(0.0)
        assert stopped == int(np.argmax(cs.sides(0.0)[0])) + 1 and sign == 1
        assert stopped == cs.first_exclusion(0.0)
        assert confidence_sequence(np.zeros(50), 0.05, method).decision(0.0) == (0, 0)


@pytest.mark.parametrize("method", METHODS)
def test_claims_read_the_bounds_of_the_1_minus_2_alpha_sequence(method):
    """Consistency check: the look where each claim is decided is the first look where the
    exact bounds of the 1 - 2 alpha sequence clear the margin, as claim_verdict reads a CI."""
    rng = np.random.default_rng(7)
    margin = 0.02
    for effect in (-0.05, 0.0, 0.05):
        d = effect + rng.uniform(-0.1, 0.1, 300)
        cs = confidence_sequence(d, 0.10, method)
        bounds = np.array([cs.interval_at(t) for t in range(1, 301)])
        low, high = bounds[:, 0], bounds[:, 1]
        rules = {"superiority": (low > margin, high < margin),
                 "non-inferiority": (low > -margin, high < -margin),
                 "equivalence": ((low > -margin) & (high < margin),
                                 (low > margin) | (high < -margin))}
        for claim, (shown, refuted) in rules.items():
            v = stream_claim(d, claim, margin, 0.05, method)
            first = np.flatnonzero(shown | refuted)
            assert v.stopped_at == (first[0] + 1 if first.size else 0)
            if first.size:
                assert str(v.verdict) == ("shown" if shown[first[0]] else "refuted")
            assert claim_decision(read_margin(cs, margin), claim).stopped_at == v.stopped_at


def test_three_way_declares_what_the_stream_shows():
    rng = np.random.default_rng(8)
    noise = rng.uniform(-0.05, 0.05, 3000)
    got = {e: three_way(betting_confidence_sequence(e + noise, 0.05), 0.02)
           for e in (-0.1, 0.0, 0.1)}
    assert [str(got[e].verdict) for e in (-0.1, 0.0, 0.1)] == ["worse", "equivalent", "better"]
    assert all(0 < got[e].stopped_at < 3000 for e in got)
    assert str(three_way(betting_confidence_sequence(0.02 + noise[:50], 0.05),
                         0.02).verdict) == "undecided"


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match=r"deltas.*\[-1, 1\]"):
        eb_confidence_sequence(np.array([0.5, 2.0]))
    with pytest.raises(ValueError, match=r"deltas.*\[-1, 1\]"):
        betting_confidence_sequence(np.array([0.5, np.nan]))
    with pytest.raises(ValueError, match="alpha"):
        eb_confidence_sequence(np.zeros(5), alpha=1.5)
    with pytest.raises(ValueError, match="'method'.*betting.*Got 'hoeffding'"):
        confidence_sequence(np.zeros(5), 0.05, "hoeffding")
    with pytest.raises(ValueError, match="'claim'.*Got 'better'"):
        stream_claim(np.zeros(5), "better", 0.02)
    with pytest.raises(ValueError, match="'margin'.*> 0"):
        stream_claim(np.zeros(5), "equivalence", 0.0)
    with pytest.raises(ValueError, match="'margin'"):
        three_way(eb_confidence_sequence(np.zeros(5)), -0.1)


@pytest.mark.parametrize("method", ["betting", "empirical-bernstein"])
def test_empty_after_is_the_first_look_whose_interval_is_empty(method):
    """Streams whose mean drifts (wins, then losses) and honest ones, batched: the first
    empty look equals exhaustive enumeration of ``interval_at(t)`` over every look
    (``low > high``), with ``0`` where no look is empty; ``locate=False`` says whether."""
    rng = np.random.default_rng(12)
    drift = np.concatenate([rng.choice([0.0, 1.0], (3, 120), p=[0.3, 0.7]),
                            rng.choice([0.0, -1.0], (3, 120), p=[0.3, 0.7])], axis=1)
    honest = rng.choice([-1.0, 0.0, 1.0], (2, 240), p=[0.1, 0.7, 0.2])
    d = np.concatenate([drift, honest])
    cs = confidence_sequence(d, 0.05, method)
    low, high = np.stack([np.stack(cs.interval_at(t)) for t in range(1, 241)], axis=-1)
    empty = low > high
    expected = np.where(empty.any(axis=-1), empty.argmax(axis=-1) + 1, 0)
    assert (expected[:3] > 0).all() and (expected[3:] == 0).all()
    np.testing.assert_array_equal(cs.empty_after(), expected)
    np.testing.assert_array_equal(cs.empty_after(locate=False) > 0, expected > 0)


def test_a_claim_on_an_emptied_sequence_is_inconclusive():
    """Non-inferiority is shown early on the wins (the plain reading of the 0.9 sequence,
    :func:`claim_decision`), but the sequence empties later: ``stream_claim`` says
    inconclusive at look 0 and where it emptied."""
    from protocols.streaming import claim_decision, read_margin

    d = np.r_[np.ones(150), -np.ones(150)]
    plain = claim_decision(read_margin(confidence_sequence(d, 0.1), 0.02), "non-inferiority")
    assert str(plain.verdict) == "shown"
    verdict = stream_claim(d, "non-inferiority", 0.02, 0.05)
    assert str(verdict.verdict) == "inconclusive" and int(verdict.stopped_at) == 0
    assert int(verdict.empty_after) == int(confidence_sequence(d, 0.1).empty_after())
