"""What holds about training determinism: the same machine and settings give identical
records (the README's "Reproducibility" section states the rest)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from real_runs import store, train  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.mark.parametrize("dataset", ["ag_news", "cifar10"])
def test_two_smoke_runs_give_identical_records(dataset, shared_like_root, tmp_path, capsys):
    """Two fresh runs of the CLI in this process environment: bit-identical arrays."""
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        argv = ["--dataset", dataset, "--scenario", "S1,S2", "--seeds", "0-1", "--profile",
                "smoke", "--data-root", str(shared_like_root), "--out", str(out),
                "--device", "cpu", "--no-progress"]
        assert train.main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    paths = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("seed-*.npz"))
    assert len(paths) == 6
    for rel in paths:
        a, b = (store.read_record(out / rel) for out in outs)
        np.testing.assert_array_equal(a.correct, b.correct)
        np.testing.assert_array_equal(a.predictions, b.predictions)
        # exact equality of floats: the same kernels summed in the same order
        assert a.epoch_accuracy.tobytes() == b.epoch_accuracy.tobytes()
        assert (a.config_hash, a.data_fingerprint) == (b.config_hash, b.data_fingerprint)
        assert a.environment["cpu_capability"] == b.environment["cpu_capability"]
        assert a.environment["deterministic"] is True


def test_cpu_isa_avx2_pins_the_kernels_in_a_fresh_process(tmp_path):
    """``--cpu-isa avx2`` takes effect when torch starts after it (a fresh process)."""
    import subprocess
    import sys

    code = ("from real_runs.runtime import pin_cpu_isa, environment; pin_cpu_isa('avx2'); "
            "e = environment('cpu'); print(e['cpu_capability'], e['onednn_max_cpu_isa'])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0 and "no AVX2" in proc.stderr:
        pytest.skip("this CPU has no AVX2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["AVX2", "AVX2"]


def test_cpu_isa_unknown_is_refused():
    from real_runs.runtime import pin_cpu_isa

    with pytest.raises(ValueError, match="'--cpu-isa' option must be one of native, avx2"):
        pin_cpu_isa("sse")
