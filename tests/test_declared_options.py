"""Every option of the listed commands is declared once, on a config dataclass.

For each command (imported by name: walking every module would run the ones that write
reports), the parser holds only options made by :func:`evalcal_core.options.add_options`
from declared fields (no hand-written ``add_argument`` left), and a config asked for on the
command line comes back equal from :func:`evalcal_core.options.to_argv` (plus the options
that change no number, which ``to_argv`` leaves out by design). Consistency checks only:
there is no outside reference for a parser.
"""

from __future__ import annotations

import dataclasses
import importlib

import pytest

from evalcal_core.options import config_from_args, declared, to_argv

#: module, parser builder, the config classes whose options make its parser, and a command
#: line with values away from the defaults
COMMANDS = [
    ("reports.sequential", "build_parser", ["SequentialOptions"],
     ["--k", "3", "8", "--effects", "0", "2", "--param", "sigma=0.004", "--designs", "peek",
      "fixed", "--alpha", "0.1", "--no-plot", "--out", "o"]),
    ("sim.decision_grid", "build_parser", ["GridConfig"],
     ["--families", "maxt", "clusters", "--quick", "--seed", "3", "--jobs", "1", "--out", "o"]),
    ("sim.seed_power_bound", "build_parser", ["BoundOptions"],
     ["--ks", "3", "5", "--power", "0.9", "--alpha", "0.1"]),
    ("reports.build", "build_parser", ["BuildOptions"],
     ["--quick", "--alpha", "0.1", "--profile", "cpu", "--pool", "STORE", "--jobs", "1"]),
    ("reports.pitfalls", "build_parser", ["PitfallsOptions"],
     ["--quick", "--seed", "2", "--pool", "STORE", "--out", "o"]),
    ("reports.paper_table", "build_parser", ["PaperTableOptions"],
     ["--seed", "4", "--alpha", "0.1", "--pool", "STORE"]),
    ("reports.paper_figures", "build_parser", ["PaperFiguresOptions"],
     ["--profile", "cpu", "--pool", "STORE"]),
    ("reports.pool_profiles", "build_parser", ["PoolProfilesOptions"],
     ["--ks", "3", "10", "--sims", "100", "--profiles", "cpu", "--pool", "STORE"]),
    ("sim.llm_pools.build", "build_parser", ["BuildOptions"],
     ["livecodebench", "--input", "a.json", "b.json", "--out", "o.csv.gz"]),
    ("sim.llm_pools.describe", "build_parser", ["DescribeOptions"], ["p.csv", "--json"]),
    ("sim.llm_pools.from_logs", "build_parser", ["FromLogsOptions"],
     ["--arm", "a=x.eval", "--arm", "b=y.eval", "--metric", "acc", "--cluster", "topic",
      "--out", "p.csv.gz"]),
    ("sim.decisions.streaming", "build_parser", ["StreamingOptions"],
     ["--sims", "100", "--seed", "5"]),
    ("reports.plan_figure", "build_parser", ["sim.plan:PlanOptions", "FigureOptions"],
     ["--effect", "1", "--sd-seed", "0.5", "--figure", "f.png"]),
    ("sim.multiarm", "build_parser", ["MultiarmConfig", "Output"],
     ["--m", "2", "5", "--k", "6", "--out", "o"]),
    ("sim.design_check", "build_parser", ["CheckGrid", "Output"],
     ["--sims", "100", "--seeds", "3", "--quiet"]),
    ("sim.harness_defaults", "build_parser", ["DefaultsConfig"],
     ["--questions", "30", "60", "--seeds", "4", "--clusters", "0", "--llm-pools",
      "--effect", "2.5", "--sims", "500", "--power-sims", "0", "--jobs", "1", "--quiet"]),
    ("reports.calibrate", "build_parser", ["sim.calibration:CalibrationConfig"],
     ["--k", "3", "4", "--generator", "real", "--pool", "STORE", "--sims", "100"]),
    ("real_runs.gpu_batch", "build_parser", ["BatchOptions"],
     ["--pack", "p", "--out", "o", "--budget-s", "60", "--workers", "2", "--dataset",
      "cifar10", "--scenarios", "S1", "S2", "--seeds", "0-3", "--pool", "none", "--shard-mib",
      "8", "--work-dir", "w"]),
    ("real_runs.train", "build_parser", ["TrainOptions"],
     ["--dataset", "ag_news", "--scenario", "S1", "--seeds", "0-3", "--data-root", "d",
      "--out", "o", "--jobs", "2", "--cpu-isa", "avx2", "--no-progress"]),
    ("real_runs.build_pool", "build_parser", ["BuildPoolOptions"],
     ["--datasets", "ag_news", "cifar10", "--block", "2", "--jobs", "1", "--out", "o"]),
    ("real_runs.gpu_check", "build_parser", ["CheckOptions"],
     ["--pack", "p", "--out", "o", "--profile", "smoke", "--steps", "2", "--device", "cpu"]),
    ("real_runs.merge_records", "build_parser", ["MergeOptions"],
     ["a.tar", "b.tar", "--pool", "STORE", "--dry-run", "--wait", "0.5"]),
    ("real_runs.pack_data", "build_parser", ["PackOptions"], ["--data-root", "d", "--out", "o"]),
]
IDS = [c[0] for c in COMMANDS]


def _command(module_name, builder, class_names):
    module = importlib.import_module(module_name)
    classes = []
    for name in class_names:
        owner, _, cls = name.rpartition(":")
        classes.append(getattr(importlib.import_module(owner) if owner else module, cls))
    return getattr(module, builder)(), classes


def _flag(action) -> str:
    """An option's last spelling; a positional argument's name."""
    return action.option_strings[-1] if action.option_strings else action.dest


def _rest(config) -> list[str]:
    """The options ``to_argv`` leaves out (they change no number), where not at default."""
    args = []
    for f, opt in declared(config):
        value = getattr(config, f.name)
        if opt.in_argv or value == f.default:
            continue
        if opt.switch:
            args.append(opt.flag)
        else:
            args += [opt.flag, *map(str, value if isinstance(value, tuple) else (value,))]
    return args


@pytest.mark.parametrize(("module_name", "builder", "class_names", "argv"), COMMANDS, ids=IDS)
def test_every_parser_option_is_declared(module_name, builder, class_names, argv):
    parser, classes = _command(module_name, builder, class_names)
    flags = {(f.name, opt.flag) for cls in classes for f, opt in declared(cls)}
    hand_made = [_flag(a) for a in parser._actions
                 if a.dest != "help" and (a.dest, _flag(a)) not in flags]
    assert hand_made == []
    # and every declared option is on the parser, once
    on_parser = [(a.dest, _flag(a)) for a in parser._actions if a.dest != "help"]
    assert sorted(on_parser) == sorted(flags)


@pytest.mark.parametrize(("module_name", "builder", "class_names", "argv"), COMMANDS, ids=IDS)
def test_to_argv_round_trips(module_name, builder, class_names, argv):
    parser, classes = _command(module_name, builder, class_names)
    parsed = parser.parse_args(argv)
    for cls in classes:
        config = config_from_args(cls, parsed)
        again = config_from_args(cls, parser.parse_args(
            to_argv(config) + _rest(config) + [a for other in classes if other is not cls
                                               for a in _required(other, parsed)]))
        assert again == config, cls.__name__
        # the command line asked for something: the round trip is not of defaults alone
        assert any(getattr(config, f.name) != f.default for f, _ in declared(cls)), cls


def _required(cls, parsed) -> list[str]:
    """The required options of ``cls`` as parsed (another config's round trip needs them)."""
    args = []
    for f, opt in declared(cls):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            value = getattr(parsed, f.name)
            flag = [opt.flag] if opt.flag.startswith("-") else []  # a positional has none
            args += [*flag, *map(str, value if isinstance(value, list) else [value])]
    return args


def test_the_run_store_is_one_option():
    """``--pool ROOT`` wherever a command reads or writes the real-run store; no ``--root``
    left. A store that is read defaults to the committed pool and says so; a merge's target
    is required."""
    helps, required = set(), []
    for module_name, builder, class_names, _ in COMMANDS:
        parser, _ = _command(module_name, builder, class_names)
        actions = {a.option_strings[-1]: a for a in parser._actions if a.option_strings}
        assert "--root" not in actions, module_name
        if "--pool" in actions:
            pool = actions["--pool"]
            assert pool.metavar == "ROOT" and "run store" in pool.help, module_name
            if pool.required:
                required.append(module_name)
            else:
                assert pool.default is None, module_name
                helps.add(pool.help.rpartition(" (")[-1])
    assert helps == {"default: the committed pool)"}
    assert required == ["real_runs.merge_records"]


def test_a_merge_names_its_store():
    """``real_runs.merge_records`` writes into a store: ``--pool`` is required, and a
    positional argument round-trips through ``to_argv`` ahead of the options."""
    from real_runs.merge_records import MergeOptions, build_parser

    parser = build_parser()
    config = config_from_args(MergeOptions, parser.parse_args(["--pool", "S", "a.tar", "b"]))
    assert config.inputs == ("a.tar", "b") and config.pool == "S"
    assert to_argv(config) == ["a.tar", "b", "--pool", "S"]
    with pytest.raises(SystemExit):
        parser.parse_args(["a.tar"])


@pytest.mark.parametrize("module_name", ["sim.seed_power_bound", "reports.pool_profiles"])
def test_a_list_of_seed_counts_is_ks_never_k(module_name, capsys):
    """``--k`` is a range (K_MIN K_MAX) in sim.calibrate and sim.sequential; a list of seed
    counts is ``--ks``, and ``--k`` is not read as its abbreviation."""
    parser = importlib.import_module(module_name).build_parser()
    assert parser.parse_args(["--ks", "3", "5"]).ks == [3, 5]
    with pytest.raises(SystemExit):
        parser.parse_args(["--k", "3"])
    assert "unrecognized arguments: --k 3" in capsys.readouterr().err
