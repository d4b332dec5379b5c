"""sim.decisions.streaming: the streaming gate's stopping n against seqbench's published
table, its false declarations at the margin against alpha, and naive peeking beside it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from sim.decisions import streaming as fam


@pytest.mark.parametrize("method", ["betting", "empirical-bernstein"])
def test_median_stopping_n_matches_seqbench(method):
    """seqbench's published median (``paper/rjournal/data/T2_cost.csv``: 254.5 betting, 495
    empirical Bernstein at effect 0.05, h = 0.052, margin 0.02) lies inside the
    distribution-free 99.9% interval of our median (order statistics from the binomial
    law), and our median is within 10% of it."""
    sims = 600
    times = np.sort(fam.stopping_times(0.05, sims, rng=11)[method])
    lo_k, hi_k = stats.binom.ppf([0.0005, 0.9995], sims, 0.5).astype(int)
    published = fam.SEQBENCH_MEDIAN[0.05][method]
    assert times[lo_k - 1] <= published <= times[hi_k]
    assert abs(np.median(times) - published) <= 0.1 * published


def test_false_claims_at_the_margin_stay_below_alpha_and_peeking_does_not():
    """Binary deltas with mean -2 pp, looked at after every one of 1,000 questions, 2,000
    evaluations: non-inferiority at 2 pp shown in <= alpha + 4 binomial SE for both
    sequences; the t interval recomputed after every item shows it far more often (its
    rate's lower 4-SE bound above alpha)."""
    sims = 2000
    params = {"data": "binary", "questions": 1000, "discordance": 0.05, "effect": -0.02}
    out = {o["decision"]: o for o in fam.simulate(params, sims, np.random.default_rng(3))}
    se = math.sqrt(0.05 * 0.95 / sims)
    for method in ("betting", "empirical-bernstein"):
        o = out[f"{method} sequence: non-inferiority at 2 pp shown"]
        assert o["measure"] == "rejection" and o["hits"] / sims <= 0.05 + 4 * se
        o = out[f"{method} sequence: misses the truth at some look"]
        assert o["hits"] / sims <= 0.05 + 4 * se
    peek = out["peeking t interval after every item: non-inferiority at 2 pp shown (old)"]
    rate = peek["hits"] / sims
    assert rate - 4 * math.sqrt(rate * (1 - rate) / sims) > 0.05


def test_outcomes_keep_the_family_contract():
    cell = fam.QUICK_CELLS[0]
    out = fam.simulate(cell, 50, np.random.default_rng(0))
    assert {o["measure"] for o in out} <= {"rejection", "power"}
    assert all(o["sims"] == 50 and 0 <= o["hits"] <= 50 for o in out)
    assert sum(o["decision"].endswith("(old)") for o in out) == len(out) // 3


def test_topic_files_average_the_effect_exactly_and_keep_topics_contiguous():
    """Grouped: each topic's questions are contiguous and the topic means average exactly
    ``effect`` in every file (analytic: centred effects); the question noise has mean 0
    (4 SE of 60,000 draws). Shuffled: the same multiset of labels per file."""
    rng = np.random.default_rng(2)
    params = {"data": "topics", "topics": 30, "per_topic": 20, "spread": 0.1, "h": 0.173,
              "effect": -0.15, "arrival": "grouped"}
    d, labels = fam.draw_topics(params, 100, rng)
    assert (np.diff(labels) >= 0).all() and np.bincount(labels).tolist() == [20] * 30
    noise_sd = 0.173 / math.sqrt(3)
    assert abs(d.mean() + 0.15) <= 4 * noise_sd / math.sqrt(d.size)
    d2, labels2 = fam.draw_topics(dict(params, arrival="shuffled"), 5, rng)
    assert labels2.shape == d2.shape and (np.sort(labels2, axis=1) == labels).all()


def test_grouped_questions_break_the_sequence_and_topics_as_units_do_not():
    """On topic-grouped files with a -2 pp effect (non-inferiority's null), 2,000 files:
    the question-level betting sequence in file order shows non-inferiority more often
    than alpha (lower 4-SE bound above 5%), and is marked old; the topics streamed as
    units (``--cluster``) stay within alpha + 4 SE."""
    sims = 2000
    params = {"data": "topics", "topics": 30, "per_topic": 20, "spread": 0.1, "h": 0.173,
              "effect": -0.02, "arrival": "grouped"}
    out = {o["decision"]: o for o in fam.simulate(params, sims, np.random.default_rng(5))}
    se = math.sqrt(0.05 * 0.95 / sims)
    grouped = out["betting sequence over questions of a topic-grouped file (no --cluster; "
                  "evaluate warns): non-inferiority at 2 pp shown (old)"]
    rate = grouped["hits"] / sims
    assert rate - 4 * math.sqrt(rate * (1 - rate) / sims) > 0.05
    for method in ("betting", "empirical-bernstein"):
        o = out[f"{method} sequence over topics (--cluster, complete topics in file order): "
                "non-inferiority at 2 pp shown"]
        assert o["measure"] == "rejection" and o["hits"] / sims <= 0.05 + 4 * se


def test_generators_have_the_stated_mean():
    """Both generators' deltas average ``effect`` (4 SE of the mean of 200,000 draws)."""
    rng = np.random.default_rng(1)
    for params in ({"data": "binary", "questions": 1000, "discordance": 0.2, "effect": -0.02},
                   {"data": "uniform", "questions": 1000, "h": 0.173, "effect": 0.05}):
        d = fam.draw(params, 200, rng)
        assert abs(d.mean() - params["effect"]) <= 4 * d.std() / math.sqrt(d.size)
    with pytest.raises(ValueError, match="discordance"):
        fam.draw({"data": "binary", "questions": 5, "discordance": 0.01, "effect": 0.02}, 2, rng)


def test_command_prints_the_table(capsys):
    assert fam.main(["--sims", "20"]) == 0
    out = capsys.readouterr().out
    assert "| 0.05 |" in out and "(254.5)" in out
