"""Long model names are never clipped (issue 47 item 2): the forest's and the board's title,
x-label and row labels lie inside the figure, and a 200-character name is shown whole."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from reports.evaluate import compare  # noqa: E402
from reports.evaluate.board_plot import board_figure  # noqa: E402
from reports.evaluate.forest import forest_figure, wrapped_label  # noqa: E402

LONG = "meta-llama/Llama-3.1-405B-Instruct-Turbo-" + "finetuned-on-a-long-suffix-" * 6
LONG = LONG[:200]
NAMES = ("<script>alert(1)</script>", "A & B $x$", LONG)


def _frame(names=NAMES, n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"seed": 0, "arm": arm, "question": f"q{q}",
                          "score": int(rng.random() < 0.55 + 0.05 * i)}
                         for i, arm in enumerate(names) for q in range(n)])


def _assert_inside(fig):
    """Everything drawn (titles, labels, the tick labels in view) lies inside the figure:
    the figure's tight box, in inches, within its size (0.01 inch of rounding)."""
    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    width, height = fig.get_size_inches()
    assert box.x0 >= -0.01 and box.y0 >= -0.01, box
    assert box.x1 <= width + 0.01 and box.y1 <= height + 0.01, (box, width, height)
    ax = fig.axes[0]
    for text in (ax.title, ax.xaxis.label):
        assert text.get_window_extent().x1 <= fig.bbox.x1 + 0.5, text.get_text()


def _unwrapped(label: str) -> str:
    return label.replace("\n", "").replace(r"\$", "$")


def test_wrapped_label_keeps_a_200_character_name_whole_and_escapes_dollars():
    label = wrapped_label(LONG)
    assert _unwrapped(label) == LONG and max(map(len, label.split("\n"))) <= 40
    # a line break never falls between the backslash and its dollar
    assert wrapped_label("x" * 39 + "$y") == "x" * 39 + r"\$" + "\n" + "y"
    assert _unwrapped(wrapped_label("z" * 5000)).endswith("\u2026")


@pytest.mark.parametrize("names", [NAMES, ("a", "b"), (LONG, LONG[::-1])])
def test_forest_labels_inside_the_figure(names):
    fig = forest_figure((result := compare(_frame(names))).analysis, result.units)
    try:
        _assert_inside(fig)
        ticks = [_unwrapped(t.get_text()) for t in fig.axes[0].get_yticklabels()]
        assert any(LONG in t for t in ticks) == (LONG in names)
    finally:
        plt.close(fig)


@pytest.mark.parametrize("names", [NAMES, tuple(f"{LONG[:150]}-{i}" for i in range(8))])
def test_board_labels_inside_the_figure(names):
    result = compare(_frame(names), leaderboard=True)
    fig = board_figure(result.board, list(result.scores.arms), unit=result.board_unit)
    try:
        _assert_inside(fig)
        ticks = [_unwrapped(t.get_text()) for t in fig.axes[0].get_yticklabels()]
        for name in names:
            assert any(t.startswith(name + "  ") for t in ticks), name
        assert "possibly best" in fig.axes[0].get_title().replace("\n", " ")
    finally:
        plt.close(fig)


def _dominant_frame(n=200, seed=0):
    """3 fixed models, 10 clusters, one holding 95% of the questions: cluster_cr2 refuses
    every comparison (G* < 1.5)."""
    rng = np.random.default_rng(seed)
    sizes = [int(0.95 * n)] + [1] * 9
    sizes[0] = n - 9
    topics = np.repeat([f"t{g}" for g in range(10)], sizes)
    return pd.DataFrame([{"seed": 0, "arm": arm, "question": f"q{q}", "topic": topics[q],
                          "score": int(rng.random() < 0.6)}
                         for arm in ("a0", "a1", "a2") for q in range(n)])


def test_a_comparison_given_no_verdict_is_an_open_dot_said_so():
    """A refused comparison has no interval: its estimate is drawn open with "no verdict"
    beside it, and the x-label says what the open dot is (not a bare dot under a caption
    about intervals)."""
    result = compare(_dominant_frame(), design="models_clustered", cluster="topic",
                     reference="a0")
    assert all(c.refusal for c in result.analysis.comparisons)
    fig = forest_figure(result.analysis, result.units)
    try:
        ax = fig.axes[0]
        notes = [t.get_text() for t in ax.texts]
        assert notes == ["no verdict"] * 2
        dots = [line for line in ax.lines if line.get_marker() == "o"]
        assert len(dots) == 2 and all(d.get_markerfacecolor() == "white" for d in dots)
        assert "open dot: the estimate of a comparison given no verdict" in \
            ax.xaxis.label.get_text()
        # each "no verdict" lies inside the frame, and zero stays in view
        fig.canvas.draw()
        frame = ax.get_window_extent()
        assert all(t.get_window_extent().x1 <= frame.x1 for t in ax.texts)
        assert ax.get_xlim()[0] <= 0 <= ax.get_xlim()[1]
        # no interval is drawn, so none is described
        assert "thick" not in ax.xaxis.label.get_text()
        assert "thin" not in ax.xaxis.label.get_text()
        _assert_inside(fig)
    finally:
        plt.close(fig)
    # a comparison with a verdict keeps its filled dot and no such line
    fig = forest_figure((plain := compare(_frame(("a", "b")))).analysis, plain.units)
    try:
        assert "open dot" not in fig.axes[0].xaxis.label.get_text()
        assert "; thick: 95% Bonferroni-simultaneous interval, thin above: unadjusted" in \
            fig.axes[0].xaxis.label.get_text()
        assert not fig.axes[0].texts
    finally:
        plt.close(fig)
