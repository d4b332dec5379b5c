"""The ranked forest plot of a leaderboard (reports.evaluate.board_plot): the Axes'
structure (rows, order, bars, tier bands) against the board it was drawn from; no pixels.
Consistency checks only: the numbers are protocols.leaderboard's, tested there."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from evalcal_core.cli import call_main  # noqa: E402
from protocols import leaderboard as lb  # noqa: E402
from reports.evaluate import main  # noqa: E402
from reports.evaluate.board_plot import plot_board, write_board_plot  # noqa: E402


def _scores(m, n=300, seed=0):
    """Binary answers of ``m`` systems in four steps of accuracy on shared questions."""
    rng = np.random.default_rng(seed)
    p = 0.5 + 0.08 * (np.arange(m) * 4 // m)
    u = rng.normal(0, 1, n)
    return (rng.random((m, n)) < 1 / (1 + np.exp(-(np.log(p / (1 - p))[:, None] + u)))
            ).astype(float)


@pytest.mark.parametrize("m", [5, 20])
def test_rows_are_the_systems_in_rank_order(m):
    x = _scores(m)
    board = lb.leaderboard(x, rng=1)
    names = [f"sys{i}" for i in range(m)]
    ax = plot_board(board, names, unit="questions")
    try:
        labels = [t.get_text().split()[0] for t in ax.get_yticklabels()]
        ticks = list(ax.get_yticks())
        # top to bottom = best to worst: ticks ascend from the worst (y = 0)
        top_down = [label for _, label in sorted(zip(ticks, labels), reverse=True)]
        assert top_down == [names[i] for i in board.order]
        means = [float(t.get_text().split()[1].rstrip("%")) for t in ax.get_yticklabels()]
        assert sorted(means, reverse=True) == [m_ for _, m_ in sorted(zip(ticks, means),
                                                                       reverse=True)]
        (bars,) = [c for c in ax.collections if c.get_gid() == "rank intervals"]
        segments = bars.get_segments()
        assert len(segments) == m
        for r, seg in enumerate(segments):
            i = board.order[r]
            (x0, y0), (x1, y1) = seg
            assert (x0, x1) == (board.rank_low[i], board.rank_high[i])
            assert y0 == y1 == m - 1 - r
        (dots,) = [c for c in ax.collections if c.get_gid() == "rank by mean"]
        assert np.array_equal(dots.get_offsets()[:, 0], np.arange(1, m + 1))
        bands = [p for p in ax.patches if str(p.get_gid()).startswith("tier ")]
        assert len(bands) == int(board.tier.max())
        for band in bands:
            t = int(band.get_gid().split()[1])
            rows = m - 1 - np.nonzero(board.tier[board.order] == t)[0]
            y_low = band.get_y() if hasattr(band, "get_y") else band.get_xy()[0][1]
            assert y_low == pytest.approx(rows.min() - 0.5)
        # the possibly-best systems' bars are the coloured ones
        colours = bars.get_colors()
        red = np.all(np.isclose(colours, matplotlib.colors.to_rgba("C3")), axis=1)
        assert np.array_equal(red, board.best_set[board.order])
    finally:
        plt.close(ax.figure)


def test_draws_on_the_given_axes():
    board = lb.leaderboard(_scores(6), rng=0)
    fig, ax = plt.subplots()
    try:
        assert plot_board(board, list("abcdef"), ax=ax) is ax
    finally:
        plt.close(fig)


def test_write_refuses_a_path_without_png(tmp_path):
    board = lb.leaderboard(_scores(4), rng=0)
    with pytest.raises(ValueError, match="--forest .* is not a PNG path"):
        write_board_plot(board, list("abcd"), tmp_path / "board.pdf")
    assert list(tmp_path.iterdir()) == []


def test_evaluate_leaderboard_writes_the_plot(tmp_path, capsys):
    m, n = 8, 120
    x = _scores(m, n).astype(int)
    rows = [(0, f"s{i}", q, int(x[i, q])) for i in range(m) for q in range(n)]
    path = tmp_path / "board.csv"
    pd.DataFrame(rows, columns=["seed", "arm", "question", "score"]).to_csv(path, index=False)
    png = tmp_path / "board.png"
    assert call_main(main, "evaluate", [str(path), "--leaderboard", "--forest", str(png),
                                        "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["forest"] == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.csv", "board.png"]
