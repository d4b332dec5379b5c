"""Bad input to every command line is one stderr line, exit code 2, no traceback.

Each case names the command, its arguments (built in a temporary folder) and the words the
message must contain. Most run ``main(argv)`` in-process through :func:`evalcal_core.cli.call_main`
(what ``run_main`` does before exiting); a few go through ``subprocess`` to check the real
entry points.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from in_process import run_in_process

from evalcal_core.outdir import locked_out

REPO = Path(__file__).resolve().parents[2]
POOL_RECORD = REPO / "real_runs" / "pool" / "ag_news" / "cpu" / "baseline" / "seed-00000.npz"


def _per_seed(values_b, values_v) -> str:
    rows = ["seed,arm,metric"]
    for s, (b, v) in enumerate(zip(values_b, values_v)):
        rows += [f"{s},baseline,{b}", f"{s},variant,{v}"]
    return "\n".join(rows) + "\n"


def _per_question(odd=None) -> str:
    rng = np.random.default_rng(0)
    rows = ["seed,arm,question,score"]
    for s in range(4):
        for arm in ("baseline", "variant"):
            rows += [f"{s},{arm},{q},{int(rng.random() < 0.7)}" for q in range(40)]
    if odd is not None:
        rows[5] = rows[5].rsplit(",", 1)[0] + f",{odd}"
    return "\n".join(rows) + "\n"


def _crafted_store(root: Path, how: str) -> Path:
    """A store with one ag_news pair copied from the pool, the baseline record crafted."""
    for arm in ("baseline", "S1"):
        src = POOL_RECORD.parents[1] / arm / "seed-00000.npz"
        dst = root / "ag_news" / "cpu" / arm / "seed-00000.npz"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
    target = root / "ag_news" / "cpu" / "baseline" / "seed-00000.npz"
    with np.load(POOL_RECORD, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    buffer = io.BytesIO()
    if how == "meta":
        meta = json.loads(str(arrays["meta"]))
        del meta["config_hash"]
        arrays["meta"] = np.array(json.dumps(meta))
        np.savez(buffer, **arrays)
    else:
        np.savez(buffer, **arrays)
        # Rewrite the predictions member with a header declaring 10**12 elements.
        src = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as out:
            for info in src.infolist():
                data = src.read(info)
                if info.filename == "predictions.npy":
                    header = io.BytesIO()
                    np.lib.format.write_array_header_1_0(
                        header, {"descr": "|u1", "fortran_order": False,
                                 "shape": (10**12,)})
                    data = header.getvalue() + b"\0" * 16
                out.writestr(info.filename, data)
    target.write_bytes(buffer.getvalue())
    return root


@pytest.fixture
def files(tmp_path):
    """Input files of the cases, by name."""
    f = {}

    def put(name, text):
        path = tmp_path / name
        path.write_text(text)
        f[name] = str(path)

    put("good.csv", _per_seed([0.90, 0.91, 0.92, 0.905], [0.91, 0.92, 0.925, 0.915]))
    put("percent.csv", _per_seed([90.1, 91.2, 92.0, 90.5], [91.0, 92.3, 92.5, 91.5]))
    put("near_one.csv", _per_seed([0.95, 0.99, 0.92], [0.96, 0.99, 0.94]))
    put("one_percent.csv", _per_seed([0.90, 0.91, 0.92, 0.905], [0.91, 92.0, 0.925, 0.915]))
    put("huge.csv", _per_seed([1e300, 0.91, 0.92, 0.905], [-1e300, 0.92, 0.925, 0.915]))
    put("half.csv", _per_question(0.5))
    put("two.csv", _per_question(2))
    put("columns.csv", "a,b\n1,2\n")
    put("afile", "not a folder\n")
    deep = 100_000  # past Python's recursion limit
    put("deep.json", "[" * deep + "]" * deep)
    (tmp_path / "binary.json").write_bytes(bytes(range(256)) * 4)
    f["binary.json"] = str(tmp_path / "binary.json")
    (tmp_path / "adir").mkdir()
    f["adir"] = str(tmp_path / "adir")
    f["under"] = str(tmp_path / "afile" / "out")
    f["tmp"] = str(tmp_path)
    return f


#: marks of a case that needs torch: ``real_runs.train`` looks for torch before it checks
#: ``--out`` and ``--data-root`` (tox's ``py`` environment has no torch)
NEEDS_TORCH = [pytest.mark.torch,
               pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                  reason="real_runs.train checks this option once torch is "
                                         "found; torch is not installed")]


def _after_torch(module, argv, words):
    return pytest.param(module, argv, words, marks=NEEDS_TORCH)


def _case_id(i, case) -> str:
    module = case.values[0] if isinstance(case, type(pytest.param())) else case[0]
    return f"{module.split('.')[-1]}-{i}"


# (command, argv with {name} placeholders for ``files``, words the message must contain)
CASES = [
    # protocols.evaluate: the values
    ("protocols.evaluate", ["{percent.csv}"], ["percentages", "--percent"]),
    ("protocols.evaluate", ["{one_percent.csv}"], ["92.0", "one unit"]),
    ("protocols.evaluate", ["{huge.csv}"], ["1e+300", "outside [0.0, 1.0]"]),
    ("protocols.evaluate", ["{half.csv}"], ["0.5", "0/1 scores", "--partial-credit"]),
    ("protocols.evaluate", ["{two.csv}"], ["2.0", "outside"]),
    ("protocols.evaluate", ["{good.csv}", "--percent"], ["drop --percent"]),
    ("protocols.evaluate", ["{percent.csv}", "--metric-range", "0", "50"],
     ["--metric-range", "outside"]),
    ("protocols.evaluate", ["{good.csv}", "--metric-range", "1", "0"], ["--metric-range"]),
    ("protocols.evaluate", ["{good.csv}", "--metric-range", "0", "inf"],
     ["--metric-range", "inf"]),
    ("protocols.evaluate", ["{good.csv}", "--metric-range", "0", "1", "--percent"],
     ["'--percent' and '--metric-range'"]),
    # protocols.evaluate: the options and files
    ("protocols.evaluate", ["{good.csv}", "--protocol-param", "nope=1"],
     ["'nope'", "a parameter of a selected protocol"]),
    ("protocols.evaluate", ["{good.csv}", "--protocol-param", "B"], ["KEY=VALUE"]),
    ("protocols.evaluate", ["{tmp}/missing.csv"], ["does not exist"]),
    ("protocols.evaluate", ["{adir}"], ["is a directory"]),
    ("protocols.evaluate", ["{columns.csv}"], ["needs columns"]),
    ("protocols.evaluate", ["{good.csv}", "--seed", "-1"], ["'--seed'", "-1"]),
    ("protocols.evaluate", ["{good.csv}", "--seed", "x"], ["--seed", "invalid int"]),
    ("protocols.evaluate", ["{good.csv}", "--alpha", "nan"], ["'--alpha'", "Got nan"]),
    ("protocols.evaluate", ["{good.csv}", "--protocols", "nope"], ["invalid choice"]),
    ("protocols.evaluate", ["--baseline", "{good.csv}"], ["--variant"]),
    ("protocols.evaluate", ["{good.csv}", "--metric", "acc"], ["--baseline"]),
    ("protocols.evaluate", ["{good.csv}", "--baseline", "{good.csv}", "--variant",
                            "{good.csv}"], ["not both"]),
    ("protocols.evaluate", ["--baseline", "{tmp}/nope.jsonl", "--variant", "{good.csv}"],
     ["nope.jsonl", "does not exist"]),
    # sim.calibrate
    ("sim.calibrate", ["--k", "3", "--sims", "1000000000000"], ["'--sims'", "10000000"]),
    ("sim.calibrate", ["--k", "3", "--sims", "0"], ["'--sims'", ">= 1"]),
    ("sim.calibrate", ["--k", "0"], ["--k", ">= 1"]),
    ("sim.calibrate", ["--k", "2", "100000"], ["--k", "10000"]),
    ("sim.calibrate", ["--k", "3", "--param", "sigma=5"], ["'sigma'", "<= 0.5", "Got 5 "]),
    ("sim.calibrate", ["--k", "3", "--param", "mu=91.2"], ["'mu'", "<= 1"]),
    # named for what they are, not as single_run's threshold (scores left [0, 1])
    ("sim.calibrate", ["--k", "3", "--param", "sigma=0.5"],
     ["'sigma'", "at most 0.02 at mu = 0.9", "Got 0.5"]),
    ("sim.calibrate", ["--k", "3", "--effects", "50"], ["mu + effect = 1.4", "Got 50 pp"]),
    ("sim.calibrate", ["--k", "3", "--param", "sigma=nan"], ["'sigma'", "Got nan"]),
    ("sim.calibrate", ["--k", "3", "--param", "nope=1"], ["has no parameter 'nope'"]),
    ("sim.calibrate", ["--k", "3", "--generator", "nope"], ["must be one of", "seed_gaussian"]),
    ("sim.calibrate", ["--k", "3", "--generator", "real_pool", "--param", "dataset=nope"],
     ["'dataset'", "ag_news", "cifar10"]),
    ("sim.calibrate", ["--k", "3", "--generator", "question_mixture", "--param",
                       "n_questions=1000000000000"], ["'n_questions'", "10000000"]),
    ("sim.calibrate", ["--k", "9000", "--k-max", "9000", "--generator", "question_mixture",
                       "--param", "n_questions=10000000", "--out", "{tmp}/o"],
     ["GiB", "available"]),
    ("sim.calibrate", ["--k", "3", "--out", "{afile}"], ["--out", "is a file"]),
    ("sim.calibrate", ["--k", "3", "--out", "{under}"], ["--out", "under the file"]),
    # an empty path was the current folder: every output written there (issue 47's hostile run)
    ("sim.calibrate", ["--k", "3", "--out", ""], ["argument --out", "an empty path"]),
    ("reports.paper_table", ["--out", ""], ["argument --out", "an empty path"]),
    ("reports.pool_profiles", ["--out", " "], ["argument --out", "an empty path"]),
    ("sim.calibrate", ["--k", "3", "--seed", "-3"], ["'--seed'", "-3"]),
    ("sim.calibrate", ["--k", "3", "--alpha", "2"], ["'--alpha'", "Got 2.0"]),
    ("sim.calibrate", ["--k", "3", "--from-pilot", "{tmp}/missing.csv"], ["does not exist"]),
    ("sim.calibrate", ["--k", "3", "--from-pilot", "{percent.csv}"], ["percent", "above 1"]),
    ("sim.calibrate", ["--k", "3", "--from-pilot", "{adir}"], ["is a directory"]),
    ("sim.calibrate", ["--k", "3", "--from-pilot", "{near_one.csv}"],
     ["--from-pilot", "too close to 0% or 100%", "real_pool"]),
    ("sim.calibrate", ["--k", "3", "--protocol-param", "nope=1"], ["not a parameter"]),
    ("sim.calibrate", ["--k", "3", "--scheduler", "tcp://x:1"], ["--scheduler", "dask"]),
    ("sim.calibrate", ["--k", "3", "--generator", "real_pool", "--param",
                       "csv={tmp}/missing.csv", "scenario=S1", "null=false"],
     ["does not exist"]),
    # real_runs.train
    ("real_runs.train", ["--dataset", "ag_news", "--scenario", "S1", "--seeds",
                         "0-99999999999", "--data-root", "{tmp}", "--out", "{tmp}/o"],
     ["--seeds", "4294967295"]),
    ("real_runs.train", ["--dataset", "ag_news", "--scenario", "S1", "--seeds",
                         "0-20000", "--data-root", "{tmp}", "--out", "{tmp}/o"],
     ["--seeds", "limit is 10000"]),
    ("real_runs.train", ["--dataset", "ag_news", "--scenario", "S1", "--seeds", "x",
                         "--data-root", "{tmp}", "--out", "{tmp}/o"], ["seeds must look like"]),
    ("real_runs.train", ["--dataset", "nope", "--scenario", "S1", "--seeds", "0",
                         "--data-root", "{tmp}", "--out", "{tmp}/o"],
     ["invalid choice", "ag_news", "cifar10"]),
    ("real_runs.train", ["--dataset", "ag_news", "--scenario", "S9", "--seeds", "0",
                         "--data-root", "{tmp}", "--out", "{tmp}/o"], ["scenario", "S9"]),
    _after_torch("real_runs.train", ["--dataset", "ag_news", "--scenario", "S1", "--seeds", "0",
                 "--profile", "smoke", "--data-root", "{tmp}", "--out", "{afile}"],
                 ["--out", "is a file"]),
    _after_torch("real_runs.train", ["--dataset", "ag_news", "--scenario", "S1", "--seeds", "0",
                 "--profile", "smoke", "--data-root", "{tmp}/nope", "--out", "{tmp}/o"],
                 ["does not exist"]),
    ("real_runs.train", ["--dataset", "ag_news", "--scenario", "S1", "--seeds", "0", "--jobs",
                         "0", "--data-root", "{tmp}", "--out", "{tmp}/o"], ["'--jobs'", ">= 1"]),
    # decision grid: --llm-pools with no family that reads a pool was never read, so a
    # missing file ran the whole grid (issue 47's hostile run)
    ("reports.decision_grid", ["--quick", "--families", "maxt", "--llm-pools", "{tmp}/nope.csv"],
     ["'--llm-pools'", "real_claims", "nope.csv"]),
    # sim.evidence: --cache checked before the workers start (its line was followed by
    # joblib's warnings; issue 47's hostile run)
    ("sim.evidence", ["--quick", "--quiet", "--out", "{tmp}/o", "--cache", "{afile}"],
     ["'--cache'", "is a file"]),
    # real_runs.build_pool
    ("real_runs.build_pool", ["--block", "0"], ["'--block'"]),
    ("real_runs.build_pool", ["--seeds", "0-99999999999"], ["--seeds", "4294967295"]),
    ("real_runs.build_pool", ["--s0-seeds", "x"], ["seeds must look like"]),
    ("real_runs.build_pool", ["--datasets", "nope"], ["invalid choice"]),
    ("real_runs.build_pool", ["--data-root", "{tmp}/nope"], ["--data-root", "not a folder"]),
    # the GPU path: real_runs.pack_data, gpu_check, gpu_batch, merge_records
    ("real_runs.pack_data", ["--data-root", "{tmp}/nope", "--out", "{tmp}/o"],
     ["--data-root' option must be a folder", "/nope' instead"]),
    ("real_runs.pack_data", ["--data-root", "{adir}", "--out", "{tmp}/o"],
     ["does not have the expected layout"]),
    ("real_runs.pack_data", ["--verify", "{adir}"], ["--verify", "holds no evalcal-data.npz"]),
    # an empty path is named as the option given wrong (not "only --out given")
    ("real_runs.pack_data", ["--data-root", "", "--out", "{tmp}/o"],
     ["--data-root' option must be a folder path", "Got '' instead"]),
    ("real_runs.gpu_check", ["--pack", "{tmp}/nope", "--out", "{tmp}/o"],
     ["--pack' option must be an existing data pack", "/nope' instead"]),
    ("real_runs.gpu_check", ["--pack", "{adir}", "--out", "{tmp}/o", "--steps", "0"],
     ["--steps"]),
    ("real_runs.gpu_batch", ["--pack", "{adir}", "--out", "{tmp}/o", "--budget-s", "60",
                             "--dataset", "cifar10", "--scenarios", "S1", "--seeds", "0",
                             "--workers", "0"], ["--workers"]),
    ("real_runs.gpu_batch", ["--pack", "{adir}", "--out", "{tmp}/o", "--budget-s", "60",
                             "--dataset", "cifar10", "--scenarios", "S1", "--seeds", "0",
                             "--shard-mib", "20"], ["--shard-mib", "16"]),
    ("real_runs.gpu_batch", ["--pack", "{adir}", "--out", "{tmp}/o", "--budget-s", "10",
                             "--dataset", "cifar10", "--scenarios", "S1", "--seeds", "0"],
     ["--budget-s", "16"]),
    ("real_runs.gpu_batch", ["--pack", "{adir}", "--out", "{tmp}/o", "--budget-s", "60"],
     ["--plan"]),
    # a --plan file: read with the readers' checks (issue 47's hostile run: a deep list was a
    # RecursionError, bytes a UnicodeDecodeError, /dev/zero 1.6 GB, a FIFO a hang)
    ("real_runs.gpu_batch", ["--pack", "{adir}", "--out", "{tmp}/o", "--budget-s", "60",
                             "--plan", "{deep.json}"], ["deep.json", "nested too deeply"]),
    ("real_runs.gpu_batch", ["--pack", "{adir}", "--out", "{tmp}/o", "--budget-s", "60",
                             "--plan", "{binary.json}"], ["binary.json", "not UTF-8"]),
    ("real_runs.gpu_batch", ["--pack", "{adir}", "--out", "{tmp}/o", "--budget-s", "60",
                             "--plan", "/dev/zero"], ["/dev/zero", "a device"]),
    ("real_runs.merge_records", ["{tmp}/nope.tar", "--pool", "{tmp}/pool"], ["nope.tar"]),
    # reports.pitfalls: a store the user names must exist and hold a pool
    ("reports.pitfalls", ["--pool", "{tmp}/nope", "--out", "{tmp}/o", "--quick"],
     ["'--pool'", "does not exist"]),
    ("reports.pitfalls", ["--pool", "{adir}", "--out", "{tmp}/o", "--quick"],
     ["'--pool'", "holding a real-run pool", "real_runs.build_pool"]),
    ("reports.pitfalls", ["--pool", "{store_meta}", "--profile", "tpu", "--out", "{tmp}/o",
                          "--quick"], ["no real-run pool of profile 'tpu'",
                                       "or pass --pool STORE"]),
    # reports.paper_table
    ("reports.paper_table", ["--pool", "{tmp}/nope", "--out", "{tmp}/o"],
     ["'--pool'", "does not exist"]),
    ("reports.paper_table", ["--pool", "{adir}", "--out", "{tmp}/o"],
     ["'--pool'", "holding a real-run pool", "real_runs.build_pool"]),
    ("reports.paper_figures", ["--pool", "{tmp}/nope", "--out", "{tmp}/o"],
     ["'--pool'", "does not exist"]),
    ("reports.pool_profiles", ["--pool", "{tmp}/nope", "--out", "{tmp}/o"],
     ["'--pool'", "does not exist"]),
    ("reports.pool_profiles", ["--pool", "{adir}", "--out", "{tmp}/o"],
     ["'--pool'", "holding a real-run pool", "real_runs.build_pool"]),
    ("reports.paper_table", ["--pool", "{store_meta}", "--out", "{tmp}/o"],
     ["meta lacks config_hash"]),
    ("reports.paper_table", ["--pool", "{store_huge}", "--out", "{tmp}/o"],
     ["declares shape", "1000000000000"]),
]


def _fill(argv, files, tmp_path):
    out = []
    for a in argv:
        if "{store_meta}" in a:
            a = str(_crafted_store(tmp_path / "store_meta", "meta"))
        elif "{store_huge}" in a:
            a = str(_crafted_store(tmp_path / "store_huge", "huge"))
        for name, value in files.items():
            a = a.replace("{" + name + "}", value)
        out.append(a)
    return out


def invoke(module: str, argv) -> tuple[int, str]:
    """Exit code and stderr of ``python -m module argv``, run in this process."""
    done = run_in_process(importlib.import_module(module).main, module, *argv)
    return done.returncode, done.stderr


def check_one_line(code, err, words):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and "np.float64" not in err
    for word in words:
        assert word.lower() in err.lower(), (word, err)


@pytest.mark.parametrize(("module", "argv", "words"), CASES,
                         ids=[_case_id(i, c) for i, c in enumerate(CASES)])
def test_bad_input_is_one_line_exit_2(module, argv, words, files, tmp_path):
    code, err = invoke(module, _fill(argv, files, tmp_path))
    check_one_line(code, err, words)


def test_missing_torch_says_how_to_install(files, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    code, err = invoke("real_runs.train", ["--dataset", "ag_news", "--scenario", "S1",
                                           "--seeds", "0", "--data-root", files["tmp"],
                                           "--out", files["tmp"] + "/o"])
    check_one_line(code, err, ["pip install '.[real]'"])


def test_gpu_check_without_torch_says_how_to_install(files, monkeypatch):
    """A ModuleNotFoundError traceback before (issue 47's hostile run)."""
    monkeypatch.setitem(sys.modules, "torch", None)
    code, err = invoke("real_runs.gpu_check", ["--pack", files["adir"], "--out",
                                               files["tmp"] + "/o"])
    check_one_line(code, err, ["torch", "pip install '.[real]'"])


def test_unreachable_dask_scheduler(monkeypatch, files):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr("sim.grid.parallel.CONNECT_TIMEOUT_S", 1)
    code, err = invoke("sim.calibrate", ["--k", "2", "--sims", "10", "--backend", "dask",
                                         "--scheduler", "tcp://127.0.0.1:9", "--no-plot",
                                         "--quiet", "--out", files["tmp"] + "/o"])
    check_one_line(code, err, ["cannot reach the dask scheduler", "within 1 s"])


def test_second_run_into_a_locked_out_is_refused(files):
    out = Path(files["tmp"]) / "o"
    with locked_out(out):
        code, err = invoke("sim.calibrate", ["--k", "2", "--sims", "10", "--out", str(out),
                                             "--quiet", "--no-plot"])
    check_one_line(code, err, ["another run is writing to", str(out)])


def test_cache_cell_that_is_a_directory(files):
    out = Path(files["tmp"]) / "o"
    argv = ["--k", "2", "--sims", "10", "--effects", "0", "--protocols", "paired_t",
            "--jobs", "1", "--out", str(out), "--quiet", "--no-plot"]
    assert invoke("sim.calibrate", argv)[0] == 0
    # the validity rule's sequential stop may add chunk cells: each is read on a rerun
    cell = sorted((out / "cells").glob("*.json"))[0]
    cell.unlink()
    cell.mkdir()
    code, err = invoke("sim.calibrate", argv)
    check_one_line(code, err, ["is a directory", cell.name])


@pytest.mark.parametrize(("module", "argv", "words"), [
    ("protocols.evaluate", ["{tmp}/missing.csv"], ["does not exist"]),
    ("protocols.evaluate", ["{percent.csv}"], ["--percent"]),
    ("sim.calibrate", ["--k", "3", "--sims", "1000000000000"], ["10000000"]),
    ("real_runs.train", ["--dataset", "ag_news", "--scenario", "S1", "--seeds",
                         "0-99999999999", "--data-root", "{tmp}", "--out", "{tmp}/o"],
     ["4294967295"]),
    ("real_runs.build_pool", ["--block", "0"], ["--block"]),
])
def test_entry_points_in_a_subprocess(module, argv, words, files, tmp_path):
    proc = subprocess.run([sys.executable, "-m", module, *_fill(argv, files, tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    check_one_line(proc.returncode, proc.stderr, words)


def test_import_protocols_with_nothing_writable(tmp_path):
    """numba's cache goes to a temporary folder when the package and HOME are read-only.

    The process runs as root here, so "read-only" is made of paths no one can write: a
    ``__pycache__`` that is a file, and a HOME under a file.
    """
    import shutil

    for package in ("evalcal_core", "protocols"):
        shutil.copytree(REPO / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "protocols" / "__pycache__").write_text("")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "protocols" / "__pycache__" / "h"),
           "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    code = "import protocols, protocols._bca_kernels; print('ok')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def _read_only_folder(tmp_path) -> Path:
    """A folder this process cannot write: chmod for a normal user, /sys for root."""
    import os

    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        return folder / "out"
    folder = Path("/sys") / "evalcal-read-only-test"
    try:
        folder.mkdir()
    except OSError:
        return folder
    folder.rmdir()
    pytest.skip("no read-only folder available to root here")


@pytest.mark.parametrize(("module", "argv"), [
    ("sim.calibrate", ["--k", "3", "--out"]),
    pytest.param("real_runs.train", ["--dataset", "ag_news", "--scenario", "S1", "--seeds",
                                     "0", "--profile", "smoke", "--data-root", "{tmp}/nope",
                                     "--out"], marks=NEEDS_TORCH),
    ("real_runs.gpu_check", ["--pack", "{adir}", "--out"]),
    ("real_runs.gpu_batch", ["--pack", "{adir}", "--budget-s", "60", "--dataset", "cifar10",
                             "--scenarios", "S1", "--seeds", "0", "--out"]),
])
def test_read_only_out_is_refused_before_any_work(module, argv, files, tmp_path):
    out = _read_only_folder(tmp_path)
    code, err = invoke(module, _fill(argv, files, tmp_path) + [str(out)])
    check_one_line(code, err, ["--out", "not writable"])
