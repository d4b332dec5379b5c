"""Training: paired seeding, determinism, S0 delta = 0, resume, CLI."""

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from real_runs import augment, engine, store, sweep, train  # noqa: E402
from real_runs.config import config_hash, profile_config  # noqa: E402
from real_runs.data import load_for_config  # noqa: E402
from real_runs.models import build_model, init_weights  # noqa: E402
from real_runs.runtime import deterministic  # noqa: E402
from real_runs.scenarios import SCENARIOS, variant_config  # noqa: E402
from real_runs.seeding import make_generator, stream_seed  # noqa: E402

pytestmark = pytest.mark.torch


def test_streams_are_distinct_per_seed_stream_and_replica():
    seeds = {stream_seed(s, st, r) for s in (0, 1) for st in ("init", "order") for r in (0, 1)}
    assert len(seeds) == 8
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        stream_seed(-1, "init")
    with pytest.raises(ValueError, match="stream must be one of"):
        stream_seed(0, "colour")


@pytest.mark.parametrize("dataset", ["cifar10", "ag_news"])
def test_init_weights_depends_only_on_the_generator(dataset):
    config = profile_config(dataset, "smoke")
    vocab = 50 if dataset == "ag_news" else None
    nets = [init_weights(build_model(config, 10, vocab), make_generator(s, "init"))
            for s in (0, 0, 1)]
    sd = [n.state_dict() for n in nets]
    assert all(torch.equal(sd[0][k], sd[1][k]) for k in sd[0])
    assert not all(torch.equal(sd[0][k], sd[2][k]) for k in sd[0])


def test_augmentations_are_reproducible_and_leave_global_rng_alone():
    x = torch.randint(0, 256, (4, 3, 32, 32), dtype=torch.uint8)
    state = torch.random.get_rng_state()
    a = augment.trivial_augment(augment.crop_flip(x, make_generator(0, "augment")),
                                make_generator(0, "strong_augment"))
    b = augment.trivial_augment(augment.crop_flip(x, make_generator(0, "augment")),
                                make_generator(0, "strong_augment"))
    assert torch.equal(a, b) and a.shape == x.shape and a.dtype == torch.uint8
    assert torch.equal(state, torch.random.get_rng_state())
    tokens = torch.tensor([[5, 6, 7, 0, 0]] * 200)
    dropped = augment.word_dropout(tokens, 0.1, make_generator(0, "word_dropout"))
    assert (dropped[:, 3:] == 0).all()
    assert 0.05 < (dropped[:, :3] == 0).float().mean() < 0.15


def test_scenarios_change_only_what_they_say():
    for dataset in ("cifar10", "ag_news"):
        base = profile_config(dataset, "cpu")
        assert variant_config(base, "S0") == base
        diff = {s: {k for k, v in variant_config(base, s).to_dict().items()
                    if base.to_dict()[k] != v} for s in SCENARIOS}
        assert diff["S0p"] == {"stream_replica"}
        assert diff["S1"] == {"label_smoothing"}
        extra = "word_dropout" if dataset == "ag_news" else "strong_augment"
        assert diff["S2"] == {"label_smoothing", extra}


@pytest.mark.parametrize("dataset", ["cifar10", "ag_news"])
def test_same_config_and_seed_train_identically(dataset, shared_like_root):
    config = variant_config(profile_config(dataset, "smoke"), "S2")
    data = load_for_config(config, shared_like_root)
    with deterministic(1):
        runs = [engine.train_run(config, 5, data) for _ in range(2)]
    np.testing.assert_array_equal(runs[0].predictions, runs[1].predictions)
    np.testing.assert_array_equal(runs[0].epoch_accuracy, runs[1].epoch_accuracy)
    assert runs[0].epoch_accuracy.shape == (config.epochs,)
    assert runs[0].final_accuracy == runs[0].epoch_accuracy[-1]


def sweep_kwargs(root, out, **kw):
    return dict(profile="smoke", data_root=root, out=out, device="cpu", **kw)


@pytest.mark.parametrize("dataset", ["cifar10", "cifar10n", "ag_news"])
def test_s0_delta_is_exactly_zero_and_baseline_is_shared(dataset, shared_like_root, tmp_path):
    out = tmp_path / "runs"
    res = sweep.train_sweep(dataset, ["S0", "S0p", "S1"], [0, 1, 2], **sweep_kwargs(
        shared_like_root, out))
    assert len(res.trained) == 3 * 4  # one baseline + three variants per seed
    base, var = store.load_pairs(out, dataset, "S0")
    assert base.shape == (3, 20 if dataset != "ag_news" else 16)
    np.testing.assert_array_equal(base, var)
    assert all(p.delta == 0.0 for p in res.pairs if p.scenario == "S0")
    pairs = store.load_pair_records(out, dataset, "S0p")
    if dataset != "ag_news":  # the tiny text task is too easy for any run to differ
        assert any(not np.array_equal(b.predictions, v.predictions) for b, v in pairs)
    assert len(list((out / dataset / "smoke" / "baseline").glob("*.npz"))) == 3
    rec = pairs[0][0]
    assert rec.config_hash == config_hash(profile_config(dataset, "smoke"))
    assert "scenario" not in rec.config and rec.environment["threads"] == 1


def test_interrupted_sweep_resumes_without_retraining(shared_like_root, tmp_path,
                                                      monkeypatch):
    out = tmp_path / "runs"
    calls = []
    real_train = engine.train_run

    def counting(config, seed, data, **kw):
        calls.append((config_hash(config), seed))
        if len(calls) == 4:
            raise KeyboardInterrupt  # the 4th run is "in progress" when interrupted
        return real_train(config, seed, data, **kw)

    monkeypatch.setattr(engine, "train_run", counting)
    with pytest.raises(KeyboardInterrupt):
        sweep.train_sweep("ag_news", ["S1"], range(3), **sweep_kwargs(shared_like_root, out))
    assert len(list(out.rglob("seed-*.npz"))) == 3
    assert not list(out.rglob("*.tmp"))
    res = sweep.train_sweep("ag_news", ["S1"], range(3), **sweep_kwargs(shared_like_root, out))
    assert len(res.skipped) == 3 and len(res.trained) == 3
    finished = calls[:3] + calls[4:]
    assert len(finished) == len(set(finished)) == 6  # no finished run trained twice
    again = sweep.train_sweep("ag_news", "S1", range(3), **sweep_kwargs(shared_like_root, out))
    assert again.trained == () and len(calls) == 7


def test_sweep_refuses_records_of_another_config(shared_like_root, tmp_path, monkeypatch):
    out = tmp_path / "runs"
    sweep.train_sweep("ag_news", ["S1"], [0], **sweep_kwargs(shared_like_root, out))
    smoke = profile_config("ag_news", "smoke")
    monkeypatch.setattr(sweep, "profile_config",
                        lambda *a, **k: dataclasses.replace(smoke, lr=0.5))
    with pytest.raises(ValueError, match="different config"):
        sweep.train_sweep("ag_news", ["S1"], [0], **sweep_kwargs(shared_like_root, out))


def test_sweep_reports_a_corrupt_record(shared_like_root, tmp_path):
    out = tmp_path / "runs"
    sweep.train_sweep("ag_news", ["S1"], [0], **sweep_kwargs(shared_like_root, out))
    path = store.record_path(out, "ag_news", "smoke", "variant", "S1", 0)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(store.CorruptRecordError, match="seed-00000"):
        sweep.train_sweep("ag_news", ["S1"], [0], **sweep_kwargs(shared_like_root, out))


def test_parallel_jobs_match_serial_results(shared_like_root, tmp_path):
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    sweep.train_sweep("cifar10", ["S0p"], [0, 1], **sweep_kwargs(shared_like_root, serial))
    res = sweep.train_sweep("cifar10", ["S0p"], [0, 1], jobs=2,
                            **sweep_kwargs(shared_like_root, parallel))
    assert len(res.trained) == 4
    for a, b in zip(store.load_pairs(serial, "cifar10", "S0p"),
                    store.load_pairs(parallel, "cifar10", "S0p"), strict=True):
        np.testing.assert_array_equal(a, b)


def test_cli_trains_and_prints_summary(shared_like_root, tmp_path, capsys):
    argv = ["--dataset", "ag_news", "--scenario", "S0,S2", "--seeds", "0-1", "--profile",
            "smoke", "--data-root", str(shared_like_root), "--out", str(tmp_path / "o"),
            "--device", "cpu", "--no-progress"]
    assert train.main(argv) == 0
    out = capsys.readouterr().out
    assert "trained 6 run(s), 0 already stored" in out
    assert "S0 delta" in out and "+0.0000" in out and out.count("\n") >= 4
    assert train.main(argv) == 0
    assert "trained 0 run(s), 6 already stored" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--data-root", "{tmp}/missing"], "missing"),
    (["--seeds", "5-1"], "seeds range"),
    (["--scenario", "S9"], "'scenario' parameter must be one of"),
    (["--jobs", "0"], "The '--jobs' option must be an integer >= 1 and <= 4096. Got 0 instead."),
])
def test_cli_bad_input_is_one_line_and_exit_2(shared_like_root, tmp_path, capsys, args,
                                              message):
    argv = {"--dataset": "ag_news", "--scenario": "S1", "--seeds": "0", "--profile": "smoke",
            "--data-root": str(shared_like_root), "--out": str(tmp_path / "o")}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        argv[flag] = value.format(tmp=tmp_path)
    code = train.main([x for kv in argv.items() for x in kv] + ["--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


def test_run_entry_point_exits_with_main_code(monkeypatch):
    monkeypatch.setattr(train, "main", lambda argv=None: 2)
    with pytest.raises(SystemExit) as info:
        train.run()
    assert info.value.code == 2
