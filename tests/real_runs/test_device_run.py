"""The one prepared device command (``python -m real_runs.device_run``), run on the CPU with a
tiny smoke plan: it verifies the pack, checks, trains and accounts in ``$OUT``; it stops
before training when the deadline is spent or a step fails; bad input is one line."""

import json

import pytest

torch = pytest.importorskip("torch")

from real_runs import device_run, gpu_batch, pack_data  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture
def pack(shared_like_root, tmp_path):
    pack_data.build_pack(shared_like_root, tmp_path / "data_pack")
    return tmp_path / "data_pack"


@pytest.fixture
def plan(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps([{"dataset": "cifar10", "scenarios": ["S0", "S2"],
                                 "seeds": "0-1", "profile": "smoke"}]))
    return path


def _argv(pack, plan, out, tmp_path, deadline="300"):
    return ["--pack", str(pack), "--out", str(out), "--deadline-s", deadline, "--plan",
            str(plan), "--workers", "2", "--device", "cpu", "--pool", "none",
            "--check-profile", "smoke", "--check-steps", "2", "--check-subset", "32",
            "--cache-dir", str(tmp_path / "cache")]


def test_one_call_verifies_checks_trains_and_accounts(pack, plan, tmp_path):
    out = tmp_path / "out"
    assert device_run.main(_argv(pack, plan, out, tmp_path)) == 0
    account = json.loads((out / device_run.SUMMARY).read_text())
    assert account["final"] and account["stopped"] is None
    assert [s["step"] for s in account["steps"]] == ["verify pack", "gpu check", "gpu batch"]
    assert all(s["exit"] == 0 for s in account["steps"])
    assert account["environment"]["torch"] == torch.__version__
    assert account["environment"]["code_version"]
    # the batch's own summary and records: 2 seeds x (baseline, S0, S2)
    summary = json.loads((out / gpu_batch.SUMMARY).read_text())
    assert summary["final"] and len(summary["finished"]) == 6
    speed = account["throughput"]
    assert speed["runs_finished"] == 6
    assert speed["call_s"] <= account["elapsed_s"] + 0.05  # (0.1 s and 0.01 s rounding)
    assert speed["runs_per_minute_of_call"] == pytest.approx(6 * 60 / speed["call_s"], rel=1e-2)
    assert sorted(out.glob("records-*.tar"))
    assert (out / "check" / "gpu_check.json").is_file()
    # it stopped itself within its deadline (the batch was given what the checks left)
    budget = float(account["steps"][2]["argv"][account["steps"][2]["argv"].index(
        "--budget-s") + 1])
    # (the budget is printed to 0.1 s, the steps' seconds to 0.01 s)
    spent = account["steps"][0]["seconds"] + account["steps"][1]["seconds"]
    assert budget <= 300 - spent + 0.06
    assert account["elapsed_s"] < 300


def test_no_training_when_the_checks_spent_the_deadline(pack, plan, tmp_path):
    """A clock that has run past the deadline by the time the checks end: no batch step,
    exit 1, and the account says why."""
    opts = device_run.DeviceRunOptions(
        pack=str(pack), out=tmp_path / "out", deadline_s=20.0, plan=str(plan), device="cpu",
        pool="none", check_profile="smoke", check_steps=2, check_subset=32,
        cache_dir=str(tmp_path / "cache"))
    ticks = iter([0.0] + [100.0] * 50)
    account = device_run.run_device(opts, clock=lambda: next(ticks))
    assert account["final"] and "no time left to train" in account["stopped"]
    assert [s["step"] for s in account["steps"]] == ["verify pack", "gpu check"]
    assert not list((tmp_path / "out").glob("records-*.tar"))


def test_a_corrupt_pack_stops_before_the_checks(pack, plan, tmp_path):
    victim = next(p for p in sorted(pack.rglob("*")) if p.is_file() and p.suffix != ".json")
    victim.write_bytes(victim.read_bytes()[:-1] + b"\x00")
    out = tmp_path / "out"
    assert device_run.main(_argv(pack, plan, out, tmp_path)) == 1
    account = json.loads((out / device_run.SUMMARY).read_text())
    assert [s["step"] for s in account["steps"]] == ["verify pack"]
    assert account["stopped"].startswith("verify pack failed")


@pytest.mark.parametrize("change, message", [
    (("--deadline-s", "0"), "--deadline-s"),
    (("--workers", "0"), "--workers"),
])
def test_bad_input_is_one_line_and_exit_2(pack, plan, tmp_path, capsys, change, message):
    argv = _argv(pack, plan, tmp_path / "out", tmp_path)
    argv[argv.index(change[0]) + 1] = change[1]
    assert device_run.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "out").exists()


def test_a_bad_plan_is_refused_before_any_work(pack, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    assert device_run.main(_argv(pack, bad, tmp_path / "out", tmp_path)) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_paper_profile_trains_through_the_call_and_merges(pack, tmp_path, monkeypatch):
    """The committed plan's profile (airbench94, full width) end to end on the CPU: one
    seed of S0p on the tiny test data, merged into a pool and read back as a pair. In
    float32: bf16 is 13x slower on this CPU (test_gpu_path checks bf16 on the smoke model)."""
    import dataclasses

    import numpy as np

    from real_runs import merge_records, store, sweep

    profile_config = sweep.profile_config
    monkeypatch.setattr(sweep, "profile_config", lambda *a, **k: dataclasses.replace(
        profile_config(*a, **k), precision="fp32"))

    plan = tmp_path / "paper.json"
    plan.write_text(json.dumps([{"dataset": "cifar10", "scenarios": ["S0p"], "seeds": "0",
                                 "profile": "paper"}]))
    out, pool = tmp_path / "out", tmp_path / "pool"
    assert device_run.main(_argv(pack, plan, out, tmp_path)) == 0
    summary = json.loads((out / gpu_batch.SUMMARY).read_text())
    assert len(summary["finished"]) == 2
    assert all(len(run["epoch_accuracy"]) == 10 for run in summary["finished"])
    merged = merge_records.merge([*sorted(out.glob("records-*.tar")), out / gpu_batch.SUMMARY],
                                 pool)
    assert len(merged.added) == 2 and not merged.refused
    base, variant = store.load_pairs(pool, "cifar10", "S0p", profile="paper")
    assert base.shape == variant.shape == (1, 20) and base.dtype == np.bool_
    record = store.read_record(pool / "cifar10" / "paper" / "baseline" / "seed-00000.npz")
    assert record.config["model"] == "airbench94" and record.config["tta"] == 2
