"""The planner's figure (:mod:`reports.plan_figure`): drawn from :mod:`sim.plan`'s numbers.

Consistency checks only (the numbers are tested in ``tests/sim/test_plan.py``).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from reports import plan_figure  # noqa: E402
from reports._save import save_png  # noqa: E402
from sim import plan_model as M  # noqa: E402
from sim import plan_search as S  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def _plan(design="methods"):
    comp = M.Components(0.005, 0.003, 0.01, 0.45, sd_cluster=0.01)
    costs = M.Costs(seed=4.0, question=0.001, repeat=0.0005, unit="GPU-h")
    clustered = design == "models_clustered"
    return S.run_plan(S.PlanConfig(components=comp, costs=costs, design=design, effect=0.01,
                                   k_max=400 if clustered else 20, n_max=20000, r_max=4,
                                   sims=0, cluster_size=20 if clustered else 1))


@pytest.mark.parametrize("design", ["methods", "models", "models_clustered"])
def test_plot_plan_draws_on_an_axes_the_caller_saves(tmp_path, design):
    plan = _plan(design)
    assert plan.chosen is not None
    ax = plan_figure.plot_plan(plan, S.power_grid(plan))
    assert ax.get_xscale() == "log" and ax.get_title().startswith(plan.config.design)
    path = save_png(ax.figure, tmp_path / "plan.png")
    assert path.read_bytes()[:8] == PNG


def test_power_grid_marks_the_chosen_design_at_target():
    """The grid the figure contours has the chosen design's closed-form power."""
    plan = _plan()
    ks, ns, power, cost = S.power_grid(plan, ns=np.array([plan.chosen["n"]]))
    row = list(ks).index(plan.chosen["k"])
    assert power[row, 0] == pytest.approx(plan.chosen["power"], rel=1e-12)
    assert cost[row, 0] == pytest.approx(plan.chosen["cost"], rel=1e-12)


def test_command_prints_plan_and_draws(tmp_path, capsys):
    figure = tmp_path / "f.png"
    code = plan_figure.main(["--sd-seed", "0.5", "--sd-inter", "1", "--sd-repeat", "45",
                             "--cost", "seed=4", "question=0.001", "repeat=0.0005",
                             "--k-max", "20", "--n-max", "2000", "--r-max", "3", "--sims",
                             "0", "--figure", str(figure)])
    out = capsys.readouterr().out
    assert code == 0 and "chosen: k = " in out and f"figure: {figure}" in out
    assert figure.read_bytes()[:8] == PNG
