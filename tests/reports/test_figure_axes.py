"""Axes of the report figures say what they show: percent ticks on clean steps with exact
labels (section 6), p-value axes within [0, 1] (``welch_vs_signflip.png``), and section 5
drawn against an honest reference. Consistency checks of the drawing, no reference."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from reports import paper_figures  # noqa: E402
from reports.pitfalls import figures as pitfall_figures  # noqa: E402
from reports.pitfalls.s5_questions import QUESTION_PROTOCOLS, REFERENCE  # noqa: E402


@pytest.fixture
def drawn(monkeypatch):
    """The figures the functions draw, kept open instead of saved."""
    figs = []

    def keep(fig, *args, **kwargs):
        figs.append(fig)
        return b""

    monkeypatch.setattr(pitfall_figures, "png_bytes", keep)
    yield figs
    for fig in figs:
        plt.close(fig)


def _skew_frame(top):
    """Section 6's frame with rates up to about ``top`` (fractions)."""
    rows = []
    for noise in ("normal", "t3", "skewed"):
        for name in ("sign_flip", "paired_t"):
            for k in range(3, 13):
                rate = top / 1.25 if noise == "skewed" else 0.05
                rows.append(dict(noise=noise, protocol=name, k=k, rate=rate,
                                 rate_low=0.8 * rate, rate_high=1.1 * rate * (1 + k / 100)))
    return pd.DataFrame(rows)


@pytest.mark.parametrize("top", [0.045, 0.12, 0.19, 0.26, 0.6])
def test_section6_percent_ticks_sit_on_clean_steps_with_exact_labels(drawn, top):
    """Ticks step by 1, 2 or 5 times a power of ten, and each label is its tick's value: a
    2.5% step under whole-percent labels read 0, 2, 5, 8, 10%."""
    pitfall_figures.skew_figure(_skew_frame(top), 0.05, ("normal", "t3", "skewed"), "0.9")
    (fig,) = drawn
    fig.canvas.draw()
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    ticks = [t for t in ax.get_yticks() if low - 1e-12 <= t <= high + 1e-12]
    assert len(ticks) >= 3
    steps = np.diff(ticks)
    assert np.allclose(steps, steps[0])
    mantissa = steps[0] / 10 ** math.floor(math.log10(steps[0]))
    assert min(abs(mantissa - m) for m in (1, 2, 5)) < 1e-6, steps[0]
    labels = {tick.get_position()[1]: tick.get_text() for tick in ax.get_yticklabels()}
    for t in ticks:
        assert float(labels[t].rstrip("%")) == pytest.approx(100 * t, abs=1e-9), labels[t]


def _paper_table():
    rows = []
    for i, (k, p_flip, p_welch) in enumerate([(3, 0.25, 0.8), (3, 0.25, 0.013), (10, 0.002, 3e-4),
                                              (20, 1e-4, 2e-9), (20, 0.001, 0.4),
                                              (10, 1.0, 1.0)]):
        rows.append(dict(dataset=f"d{i}", scenario="S1", k=k, sign_flip_p=p_flip,
                         welch_p=p_welch))
    return pd.DataFrame(rows)


def test_welch_vs_signflip_axes_are_p_values_up_to_one(drawn):
    table = _paper_table()
    ax = paper_figures.plot_welch_vs_signflip(table)
    drawn.append(ax.figure)
    assert ax.get_xlim()[1] == pytest.approx(1) and ax.get_ylim()[1] == pytest.approx(1)
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert "p" in ax.get_xlabel() and "log10" not in ax.get_xlabel()
    # the points are the p-values themselves, every one on the axes (p = 1 included)
    plotted = np.concatenate([c.get_offsets() for c in ax.collections])
    expected = table[["sign_flip_p", "welch_p"]].to_numpy()
    assert sorted(map(tuple, plotted)) == sorted(map(tuple, expected))
    assert (plotted <= 1).all() and (plotted >= ax.get_xlim()[0]).all()


def _questions_frame():
    rows = []
    for i, name in enumerate(QUESTION_PROTOCOLS):
        for effect, rate in ((0.0, [0.05, 0.06, 0.0, 0.01, 0.88][i]),
                             (1.0, [0.4, 0.95, 0.02, 0.4, 1.0][i])):
            rows.append(dict(protocol=name, effect_pp=effect, rate=rate,
                             rate_low=max(0, rate - 0.03), rate_high=min(1, rate + 0.03),
                             median_ci_width_pp=1.0 + i))
    return pd.DataFrame(rows)


def test_section5_draws_the_pitfalls_against_an_honest_reference(drawn):
    frame = _questions_frame()
    order = list(QUESTION_PROTOCOLS)
    pitfall_figures.protocol_dots_figure(frame, order, 0.05, 1.0, REFERENCE,
                                         "honest for fixed models")
    (fig,) = drawn
    fpr, power, width = fig.axes[:3]
    ref = frame.set_index(["protocol", "effect_pp"])
    for ax, value in ((fpr, ref.at[(REFERENCE, 0.0), "rate"]),
                      (power, ref.at[(REFERENCE, 1.0), "rate"]),
                      (width, ref.at[(REFERENCE, 1.0), "median_ci_width_pp"])):
        verticals = [line for line in ax.get_lines()
                     if REFERENCE in str(line.get_label())]
        assert len(verticals) == 1
        assert list(verticals[0].get_xdata()) == [value, value]
    labels = [t.get_text() for t in fpr.get_yticklabels()]
    assert f"{REFERENCE} (honest for fixed models)" in labels
    assert f"{REFERENCE} (pitfall)" not in labels
