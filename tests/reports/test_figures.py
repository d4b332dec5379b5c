"""``reports.figures``: the power-curve figure is chosen by the grid's shape and keeps its promises
(recommended protocol on top, pitfalls grey, null panel zoomed on alpha, off-scale values
written at the edge, titles in words). Consistency checks of the drawing, no reference."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from reports import figures  # noqa: E402
from reports import words as setting_text  # noqa: E402

PROTOCOLS = ["bca", "paired_bca_perm", "paired_t", "sign_flip", "welch_t"]


def _frame(ks, effects, settings=("mu=0.9;sigma=0.005;rho=0.5;noise=normal",)):
    rows = []
    for params in settings:
        for effect in effects:
            for k in ks:
                for name in PROTOCOLS:
                    rate = 0.3 if (name == "bca" and effect == 0) else (
                        0.05 if effect == 0 else min(1.0, 0.1 * k))
                    rows.append(dict(generator="seed_gaussian", generator_params=params,
                                     protocol=name, k=k, effect_pp=effect, rate=rate,
                                     rate_low=max(0, rate - 0.02), rate_high=rate + 0.02,
                                     alpha=0.05, sims=200))
    return pd.DataFrame(rows)


def test_protocol_order_and_styles():
    order = figures.protocol_order(PROTOCOLS)
    assert order[0] == "paired_bca_perm" and order[-2:] == ["bca", "welch_t"]
    styles = figures.protocol_styles(PROTOCOLS)
    top = styles["paired_bca_perm"]
    assert all(top["lw"] > s["lw"] and top["zorder"] > s["zorder"]
               for n, s in styles.items() if n != "paired_bca_perm")
    assert styles["bca"]["color"] in figures.PITFALL_GRAYS
    assert styles["paired_t"]["color"] not in figures.PITFALL_GRAYS


def test_setting_in_words_with_units():
    words = setting_text.setting_words("mu=0.9;sigma=0.005;rho=0.5;noise=normal")
    assert words == ("mean accuracy 90%, σ = 0.5 pp per seed, ρ = 0.5 between a seed's arms, "
                     "normal noise")
    assert setting_text.setting_words("dataset=cifar10;scenario=S1") == "cifar10 S1"
    assert setting_text.title_words("seed_gaussian: mu=0.9;sigma=0.005") == (
        "seed_gaussian: mean accuracy 90%, σ = 0.5 pp per seed")


def test_null_panel_is_zoomed_and_marks_off_scale_rates():
    fig = figures._curves_one_setting(_frame(range(3, 7), (0.0, 1.0)), "")
    null, power = fig.axes[:2]
    assert null.get_ylim()[1] <= 0.2  # bca's 30% does not set the range
    texts = [t.get_text() for t in null.texts]
    assert "bca 30%" in texts and "α = 5%" in texts
    assert "80%" in [t.get_text() for t in power.texts]
    assert null.get_yticklabels()[-1].get_text().endswith("%")
    plt.close(fig)


@pytest.mark.parametrize("ks, settings, layout", [
    (range(3, 7), ("mu=0.9;sigma=0.005;rho=0.5;noise=normal",), "lines"),
    (range(3, 7), tuple(f"dataset={d};scenario={s}" for d in ("a", "b")
                        for s in ("S0p", "S1")), "grid"),
    ((8,), ("mu=0.9;sigma=0.005;rho=0.5;noise=normal",), "dots"),
])
def test_figure_by_grid_shape(tmp_path, ks, settings, layout):
    frame = _frame(ks, (0.0, 1.0), settings)
    if layout == "grid":  # a real pool has one effect per setting
        frame = frame[(frame.effect_pp == 0) == frame.generator_params.str.endswith("S0p")]
    path = tmp_path / "power_curves.png"
    figures.plot_power_curves(frame, path, title="seed_gaussian: mu=0.9;sigma=0.005")
    with Image.open(path) as image:
        assert image.width >= 900
        colours = image.convert("L").getcolors(maxcolors=1 << 16)
        assert colours is not None and len(colours) > 20
    assert path.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("draw, ks, settings", [
    (figures._curves_one_setting, range(3, 7), ("mu=0.9;sigma=0.005;rho=0.5;noise=normal",)),
    (figures._curves_one_setting, range(3, 5), ("mu=0.9",)),
    (figures._curves_many_settings, range(3, 7),
     tuple(f"dataset={d};scenario=S0p" for d in ("a", "b", "c"))),
    (figures._dots, (8,), ("mu=0.9;sigma=0.005;rho=0.5;noise=normal",)),
])
def test_every_label_inside_the_canvas(draw, ks, settings):
    one_effect = draw is figures._curves_many_settings or settings == ("mu=0.9",)
    fig = draw(_frame(ks, (0.0,) if one_effect else (0.0, 1.0), settings),
               "seed_gaussian: mu=0.9;sigma=0.005")
    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    width, height = fig.get_size_inches()
    tol = 0.02
    assert box.x0 >= -tol and box.y0 >= -tol, box
    assert box.x1 <= width + tol and box.y1 <= height + tol, (box, width, height)
    plt.close(fig)
