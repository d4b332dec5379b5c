"""``reports.figures``: the power-curve figure is chosen by the grid's shape and keeps its promises
(recommended protocol on top, pitfalls grey, null panel zoomed on alpha, off-scale values
written at the edge, titles in words). Consistency checks of the drawing, no reference."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

import protocols  # noqa: E402
from evalcal_core.designs import METHODS_PAIRED  # noqa: E402
from reports import figure_styles as FS  # noqa: E402
from reports import figures  # noqa: E402
from reports import words as setting_text  # noqa: E402
from reports._save import save_png  # noqa: E402

PROTOCOLS = ["bca", "paired_bca_perm", "paired_t", "sign_flip", "welch_t"]
#: the primary protocol of paired seeds (the design's module names it), drawn on top
RECOMMENDED = protocols.recommended_for(METHODS_PAIRED)


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
    order = FS.protocol_order(PROTOCOLS)
    assert order[0] == RECOMMENDED and order[-2:] == ["bca", "welch_t"]
    styles = FS.protocol_styles(PROTOCOLS)
    top = styles[RECOMMENDED]
    assert all(top["lw"] > s["lw"] and top["zorder"] > s["zorder"]
               for n, s in styles.items() if n != RECOMMENDED)
    assert styles["bca"]["color"] in FS.PITFALL_GRAYS
    assert styles["paired_t"]["color"] not in FS.PITFALL_GRAYS


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


def test_every_off_scale_point_is_labelled():
    """Each k where bca leaves the zoomed panel has a caret and its value, not only the
    worst k."""
    frame = _frame(range(3, 8), (0.0,))
    bca = (frame.protocol == "bca")
    frame.loc[bca, "rate"] = frame.loc[bca, "k"].map({3: 0.30, 4: 0.196, 5: 0.04, 6: 0.25,
                                                      7: 0.18})
    fig = figures._curves_one_setting(frame, "")
    null = fig.axes[0]
    texts = [t.get_text() for t in null.texts]
    assert "bca 30%" in texts
    assert {"20%", "25%", "18%"} <= set(texts)  # k = 4, 6, 7 labelled too
    assert not any(t.startswith("4%") for t in texts)  # k = 5 is on scale: no label
    top = null.get_ylim()[1]
    carets = [line for line in null.get_lines() if line.get_marker() == "^"
              and line.get_linestyle() == "None" and set(line.get_ydata()) == {top}]
    assert len(carets) == 1 and sorted(carets[0].get_xdata()) == [3, 4, 6, 7]
    plt.close(fig)


def test_identical_curves_stay_visible():
    """sign_flip and paired_t reject exactly where paired_bca_perm does (_frame): drawn hollow
    over it and named in the panel titles."""
    frame = _frame(range(3, 7), (0.0, 1.0))
    frame.loc[frame.protocol == "paired_t", "rate"] += 0.01  # paired_t differs
    fig = figures._curves_one_setting(frame, "")
    for ax in fig.axes[:2]:
        assert "sign_flip: same curve as paired_bca_perm" in ax.get_title()
        assert "paired_t" not in ax.get_title().split("same curve")[0]
        hollow = [line for line in ax.get_lines()
                  if line.get_marker() == "^" and line.get_markerfacecolor() == "none"]
        assert len(hollow) == 1 and list(hollow[0].get_xdata()) == [3, 4, 5, 6]
    plt.close(fig)


@pytest.mark.parametrize("budget_k, ks, expected, drop_at", [
    (None, range(3, 11), "≥ 80% from k = 8", 8),  # power 0.1 k: first k measured >= 80%
    ("9", range(3, 11), "seed budget: k = 9", 9),
    ("14", range(3, 11), "seed budget: k = 14 →", None),  # beyond the panel
    (None, range(3, 7), f"{RECOMMENDED}: 80% not reached by k = 6", None),
])
def test_power_panel_marks_where_the_recommended_protocol_reaches_80(budget_k, ks, expected,
                                                                     drop_at):
    frame = _frame(ks, (0.0, 1.0))
    budget = None
    if budget_k is not None:
        budget = pd.DataFrame([dict(protocol=RECOMMENDED, effect_pp=1.0,
                                    generator_params=frame.generator_params.iloc[0],
                                    k_needed=budget_k, target_power=0.8)])
    fig = figures._curves_one_setting(frame, "", budget)
    power = fig.axes[1]
    assert expected in [t.get_text() for t in power.texts]
    assert any(list(line.get_ydata()) == [0.8, 0.8] for line in power.get_lines())  # target
    drops = [line for line in power.get_lines() if list(line.get_ydata()) == [0, 0.8]]
    assert [line.get_xdata()[0] for line in drops] == ([drop_at] if drop_at else [])
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
    save_png(figures.power_curves_figure(frame, title="seed_gaussian: mu=0.9;sigma=0.005"), path)
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


def test_labels_follow_the_design_of_the_frames_generator():
    """Between fixed models on clustered questions cluster_cr2 is the recommended protocol
    and paired_bca_perm a pitfall; for paired seeds the other way round, the recommended one
    being paired_t, the primary protocol evaluate reports for paired seeds."""
    frame = pd.DataFrame({"generator": ["clustered_questions"], "protocol": ["cluster_cr2"]})
    with FS.drawing_for(FS.frame_design(frame)):
        assert FS.recommended_name() == "cluster_cr2"
        assert FS.is_pitfall("paired_bca_perm") and not FS.is_pitfall("cluster_cr2")
        assert FS.protocol_order(["paired_t", "cluster_cr2"])[0] == "cluster_cr2"
    assert FS.recommended_name() == "paired_t"
    assert FS.is_pitfall("cluster_cr2") and not FS.is_pitfall("paired_bca_perm")
    mixed = pd.DataFrame({"generator": ["seed_gaussian", "question_mixture"]})
    assert FS.frame_design(mixed) == "methods_paired"
