"""The ``sim.calibrate`` runner and CLI: outputs, determinism, resume, bad input."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import sim.grid.execute
from reports.evaluate import example_path
from sim import generators
from sim.calibrate import main
from sim.grid import CacheWarning, calibrate

SMALL = ["--k", "3", "6", "--effects", "0", "1", "--sims", "200", "--quiet",
         "--protocol-param", "n_resamples=400", "bootstrap=random"]


def test_cli_writes_tidy_outputs(tmp_path, capsys):
    out = tmp_path / "cal"
    assert main(["--k", "3", "6", "--effects", "0", "1", "--sims", "200", "--out", str(out),
                 "--protocol-param", "n_resamples=400"]) == 0
    frame = pd.read_csv(out / "calibration.csv")
    expected = {"generator", "generator_params", "protocol", "k", "effect_pp", "sims",
                "rejections", "rate", "rate_low", "rate_high", "wrong_sign",
                "median_ci_width_pp"}
    assert expected <= set(frame.columns)
    assert set(frame[~frame.searched].k) == {3, 4, 5, 6}
    # Cells the seed-budget search added are marked, and each has its null cell.
    searched = frame[frame.searched]
    null_ks = set(zip(frame[frame.effect_pp == 0].protocol, frame[frame.effect_pp == 0].k))
    assert set(zip(searched.protocol, searched.k)) <= null_ks
    assert (frame.rate == frame.rejections / frame.sims).all()
    assert ((frame.rate_low <= frame.rate) & (frame.rate <= frame.rate_high)).all()
    # Per-seed data: question-level protocols are left out, seed-level ones are all there.
    assert "mcnemar" not in set(frame.protocol)
    assert {"paired_t", "paired_bca_perm", "welch_t", "single_run"} <= set(frame.protocol)
    assert frame.pool_low.isna().all() and frame.pool_high.isna().all()  # synthetic
    budget = pd.read_csv(out / "seed_budget.csv")
    assert {"protocol", "effect_pp", "k_power_80", "k_power_90", "recommended", "why",
            "k_needed", "k_needed_low", "k_needed_high"} <= set(budget.columns)
    # Declared pitfalls are never recommended.
    assert (budget[budget.protocol.isin(["welch_t", "single_run"])].recommended == "no").all()
    assert (out / "power_curves.png").stat().st_size > 10_000
    printed = capsys.readouterr().out
    assert "false-positive rate" in printed and "seed budget" in printed


def _calibration_bytes(out, *extra, seed="7"):
    assert main(SMALL + ["--no-plot", "--seed", seed, "--out", str(out), *extra]) == 0
    return (out / "calibration.csv").read_bytes()


def test_same_seed_same_bytes_for_any_jobs(tmp_path):
    """--jobs 1 and --jobs 2 give identical CSVs; another seed gives other numbers."""
    one = _calibration_bytes(tmp_path / "one", "--jobs", "1")
    assert _calibration_bytes(tmp_path / "two", "--jobs", "2") == one
    assert _calibration_bytes(tmp_path / "other-seed", seed="8") != one


@pytest.mark.slow  # a local dask.distributed cluster takes 10 s to start and stop
def test_dask_backend_gives_the_same_bytes(tmp_path):
    """A local dask.distributed cluster writes the CSV that --jobs 1 writes."""
    pytest.importorskip("dask.distributed")
    one = _calibration_bytes(tmp_path / "one", "--jobs", "1")
    assert _calibration_bytes(tmp_path / "dask", "--backend", "dask", "--jobs", "2") == one


def test_a_protocols_result_does_not_depend_on_the_others():
    g = generators.get("seed_gaussian")
    alone = calibrate(g, [6], [0.5], sims=300, seed=2, progress=False,
                      protocol_names=["sign_flip"])
    together = calibrate(g, [6], [0.5], sims=300, seed=2, progress=False,
                         protocol_names=["paired_t", "sign_flip"])
    same = together[together.protocol == "sign_flip"]
    assert alone.rejections.tolist() == same.rejections.tolist()


def test_interrupted_run_resumes_without_recomputing(tmp_path, monkeypatch):
    g = generators.get("seed_gaussian")
    calls = []
    real = sim.grid.execute.run_task

    def flaky(generator, k, effect, specs, seed, threads=1):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append((k, effect))
        return real(generator, k, effect, specs, seed, threads)

    monkeypatch.setattr(sim.grid.execute, "run_task", flaky)
    kwargs = dict(sims=100, seed=1, out=tmp_path, progress=False,
                  protocol_names=["paired_t", "welch_t"])
    with pytest.raises(KeyboardInterrupt):
        calibrate(g, [3, 4, 5], [0, 1], **kwargs)
    assert len(list((tmp_path / "cells").glob("*.json"))) == 6
    done_first = list(calls)
    calls.clear()
    monkeypatch.setattr(sim.grid.execute, "run_task", lambda *a: (calls.append(a[1:3]),
                                                                      real(*a))[1])
    resumed = calibrate(g, [3, 4, 5], [0, 1], **kwargs)
    assert len(calls) == 3 and not set(calls) & set(done_first)
    monkeypatch.setattr(sim.grid.execute, "run_task", real)
    fresh = calibrate(g, [3, 4, 5], [0, 1], sims=100, seed=1, progress=False,
                      protocol_names=["paired_t", "welch_t"])
    pd.testing.assert_frame_equal(resumed, fresh)


def test_corrupt_cache_file_is_recomputed(tmp_path):
    g = generators.get("seed_gaussian")
    kwargs = dict(sims=100, seed=1, out=tmp_path, progress=False, protocol_names=["paired_t"])
    first = calibrate(g, [3], [0], **kwargs)
    (cell,) = (tmp_path / "cells").glob("*.json")
    cell.write_text(cell.read_text()[:20])
    with pytest.warns(CacheWarning, match=cell.name):
        again = calibrate(g, [3], [0], **kwargs)
    pd.testing.assert_frame_equal(again, first)


def test_from_pilot_per_seed(tmp_path, capsys):
    out = tmp_path / "pilot"
    assert main(["--k", "4", "--effects", "0", "0.5", "--sims", "100", "--from-pilot",
                 example_path(), "--out", str(out), "--no-plot"]) == 0
    printed = capsys.readouterr().out
    assert "fitted seed_gaussian" in printed
    assert "sigma = " in printed and " pp per arm" in printed and "rho = " in printed
    frame = pd.read_csv(out / "calibration.csv")
    assert set(frame.generator) == {"seed_gaussian"}
    # The pilot's own mean delta is calibrated alongside the requested effects.
    observed = float(printed.split("own mean delta ")[1].split(" pp")[0])
    assert any(abs(e - observed) < 0.01 for e in frame.effect_pp.unique() if e not in (0, 0.5))


def test_from_pilot_per_question(tmp_path, capsys):
    g = generators.get("seed_question", n_questions=300)
    b, v = g.draw(1, 5, 0.02, 0)
    rows = ["seed,arm,question,score"]
    for arm, x in (("baseline", b[0]), ("variant", v[0])):
        rows += [f"{s},{arm},q{q},{int(x[s, q])}" for s in range(5) for q in range(300)]
    pilot = tmp_path / "pilot.csv"
    pilot.write_text("\n".join(rows) + "\n")
    assert main(["--k", "3", "--effects", "0", "--sims", "50", "--from-pilot", str(pilot),
                 "--out", str(tmp_path / "o"), "--no-plot", "--protocols", "paired_t",
                 "mcnemar"]) == 0
    assert "fitted seed_question" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--k", "0"], "'--k' option must be .*an integer >= 1"),
    (["--k", "5", "3"], "MIN <= MAX"),
    (["--k", "3", "--protocols", "nope"], "'name'.*'nope'"),
    (["--k", "3", "--param", "bogus=1"], "no parameter 'bogus'"),
    (["--k", "3", "--sims", "0"], "'--sims' option must be an integer >= 1"),
    (["--k", "3", "--generator", "question_mixture", "--effects", "-1"], "'effect'"),
    (["--k", "3", "--protocols", "mcnemar"], "cannot run on generator"),
    (["--k", "3", "--protocol-param", "Q=3"], "not a parameter"),
    # B is n_resamples in the bootstraps and n_permutations in the sign-flip tests: named as
    # typed, with each rule and the protocols stating it (not the first protocol's field)
    (["--k", "3", "--protocol-param", "B=abc"],
     r"error: --protocol-param B=abc: B must be an integer >= 2 for cluster_wild, .*"
     r"run_bootstrap_sqrt_b; an integer >= 1 for signflip_questions, t_signflip_questions\. "
     r"Got 'abc' instead\.$"),
    (["--k", "3", "--protocol-param", "B=1"],
     r"error: --protocol-param B=1: B must be an integer >= 2 for cluster_wild, .* \(\d+ of the "
     r"\d+ taking it\)\. Got 1 instead\.$"),
    (["--k", "3", "--target-power", "1.5"],
     r"The '--target-power' option must be a finite number > 0 and < 1. Got 1.5 instead."),
    (["--k", "3", "--target-power", "0"], "'--target-power'.*Got 0.0 instead"),
    # a range past the search's default cap: the fix is named, the default said to be one
    (["--k", "17", "64"],
     r"The '--k-max' option must be >= 64, the largest --k \(the seed budget searches up to "
     r"--k-max\): give --k-max 64 or more\. Got 50 \(its default\) instead\.$"),
    (["--k", "3", "12", "--k-max", "10"],
     r"The '--k-max' option must be an integer >= 12 and <= 10000. Got 10 instead."),
    (["--k", "3", "--k-max", "100000000"],
     r"The '--k-max' option must be an integer >= 3 and <= 10000. Got 100000000 instead."),
    (["--k", "3", "--fpr-tolerance", "-0.01"], "'--fpr-tolerance'.*>= 0"),
    (["--k", "3", "--pool-reps", "1"], "'--pool-reps'.*0 \\(off\\) or an integer >= 2"),
    # a replicate is one more pool's cells: a count past the cap would run for days
    (["--k", "3", "--pool-reps", "1001"],
     r"'--pool-reps'.*0 \(off\) or an integer >= 2 and <= 1000\. Got 1001 instead"),
    # the real pools' options, given to a synthetic generator, did nothing
    *[(["--k", "3", *given], rf"error: {given[0]} describes real pools; it goes with --generator "
                             rf"real or real_pool$")
      for given in (["--pool-reps", "30", "--check-fit"], ["--pool-method", "halves"],
                    ["--check-fit"], ["--allow-large-k"])],
    # given at its default it is still given (and still does nothing without them)
    (["--k", "3", "--generator", "real_pool", "--pool", "tests/fixtures/pool",
      "--pool-reps", "30"], "--pool-reps sets the half-sample replicates .* goes with "
                            "--pool-method halves or --check-fit"),
    (["--k", "3", "--percent"], "--percent .* goes with --from-pilot"),
    # the default jackknife intervals draw no replicate: a count there would do nothing
    (["--k", "3", "--generator", "real_pool", "--pool", "tests/fixtures/pool",
      "--pool-reps", "0"], "--pool-reps sets the half-sample replicates .* goes with "
                           "--pool-method halves or --check-fit"),
    (["--k", "3", "--mde", "--generator", "real_pool", "--pool", "tests/fixtures/pool",
      "--param", "scenario=S1"], "'--mde' option needs a generator whose effect can be "
                                 "varied"),
    (["--k", "3", "6", "--generator", "real_pool", "--pool", "tests/fixtures/pool"],
     "above a third of the 12-seed pool"),
    # the run store has one spelling, --pool ROOT
    (["--k", "3", "--generator", "real_pool", "--param", "root=tests/fixtures/pool"],
     r"The '--param' option must be free of root= \(name the run store with --pool ROOT\)\. "
     r"Got 'root=tests/fixtures/pool' instead\."),
])
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "sim.calibrate", *args, "--out",
                           str(tmp_path), "--quiet"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert pytest.importorskip("re").search(message, lines[0]), lines[0]


def test_real_pools_end_to_end(tmp_path, capsys):
    """--generator real over the fixture store: one table, the pool summary, the fit check."""
    from tests_paths import FIXTURE_POOL

    out = tmp_path / "real"
    assert main(["--k", "3", "4", "--generator", "real", "--pool", FIXTURE_POOL,
                 "--sims", "150", "--out", str(out), "--check-fit", "--protocols",
                 "paired_t", "paired_bca_perm", "mcnemar", "--protocol-param",
                 "n_resamples=300", "--pool-reps", "4"]) == 0
    frame = pd.read_csv(out / "calibration.csv")
    assert set(frame.generator_params.map(lambda p: p.split("scenario=")[1].split(";")[0])) \
        == {"S0p", "S1"}
    null = frame[frame.effect_pp == 0]
    assert (null[(null.protocol == "paired_bca_perm") & (null.k <= 5)].rejections == 0).all()
    # The pool interval (half-samples of 6 of the 12 seeds) contains the Wilson interval.
    assert frame.pool_low.notna().all()
    assert ((frame.pool_low <= frame.rate_low + 1e-12)
            & (frame.pool_high >= frame.rate_high - 1e-12)).all()
    # The search stays within a third of the 12-seed pools.
    assert frame.k.max() <= 4
    summary = pd.read_csv(out / "pool_summary.csv")
    assert set(summary.scenario) == {"S0p", "S1"} and (summary.seeds == 12).all()
    assert ((summary.rho_low <= summary.rho) & (summary.rho <= summary.rho_high)).all()
    fit = pd.read_csv(out / "fit_check.csv")
    assert {"rate_real", "rate_fit", "diff", "se", "pool_sd", "se_total"} <= set(fit.columns)
    # The pool-sampling sd is the real row's own, and widens the Monte Carlo SE.
    rows = fit.merge(frame, left_on=["protocol", "k", "effect_pp", "rate_real"],
                     right_on=["protocol", "k", "effect_pp", "rate"])
    assert len(rows) == len(fit) and np.allclose(rows.pool_sd_x, rows.pool_sd_y)
    assert np.allclose(fit.se_total, np.hypot(fit.se, fit.pool_sd))
    # The parametric bootstrap: 4 model pools per real pool (--pool-reps), and a scale that
    # is never 0 (Agresti-Coull Monte Carlo variances).
    assert {"null_mean", "null_sd", "null_mean_se", "se_null"} <= set(fit.columns)
    assert (fit.null_reps == 4).all() and (fit.se_null > 0).all()
    assert (fit.se_null >= fit.null_sd).all()
    budget = pd.read_csv(out / "seed_budget.csv")
    # The S1 pool's validity comes from the S0p pool of the same dataset.
    assert set(budget[budget.protocol == "paired_t"].null_params.map(
        lambda p: p.split("scenario=")[1].split(";")[0])) == {"S0p"}
    assert (budget[budget.protocol == "mcnemar"].recommended == "no").all()  # a pitfall
    assert (out / "power_curves.png").exists()
    assert "pairing correlation" in capsys.readouterr().out


def test_check_fit_without_pool_replicates(tmp_path):
    """--pool-reps 0 turns the parametric bootstrap off: its columns are there, empty."""
    from tests_paths import FIXTURE_POOL

    out = tmp_path / "real"
    assert main(["--k", "3", "4", "--generator", "real", "--pool", FIXTURE_POOL,
                 "--sims", "100", "--out", str(out), "--check-fit", "--protocols",
                 "paired_t", "--pool-reps", "0", "--quiet", "--no-plot"]) == 0
    fit = pd.read_csv(out / "fit_check.csv")
    assert len(fit) > 0 and fit[["null_mean", "null_sd", "se_null"]].isna().all().all()


def test_real_pool_rejects_effects_and_large_k(tmp_path):
    from tests_paths import FIXTURE_POOL

    base = ["--generator", "real_pool", "--pool", FIXTURE_POOL, "--param", "scenario=S1",
            "--sims", "20", "--out", str(tmp_path), "--quiet", "--no-plot"]
    with pytest.raises(ValueError, match="fixed by the pool"):
        main(["--k", "3", "--effects", "1"] + base)
    with pytest.raises(ValueError, match="exceeds the 12 seeds"):
        main(["--k", "3", "13", "--allow-large-k"] + base)
    with pytest.raises(ValueError, match="above a third of the 12-seed pool.*--allow-large-k"):
        main(["--k", "3", "5"] + base)


def test_allow_large_k_warns(tmp_path, capsys):
    from tests_paths import FIXTURE_POOL

    assert main(["--k", "6", "--generator", "real_pool", "--pool", FIXTURE_POOL, "--param",
                 "scenario=S0p", "--sims", "20", "--out", str(tmp_path), "--quiet",
                 "--no-plot", "--allow-large-k", "--protocols", "paired_t",
                 "--pool-reps", "2", "--pool-method", "halves"]) == 0
    err = capsys.readouterr().err
    assert "warning: --allow-large-k: k up to 6 draws more than a third of the 12-seed pool" \
        in err
    frame = pd.read_csv(tmp_path / "calibration.csv")
    # k = 6 is within a half-pool of 6 seeds: the pool interval exists; above it, NaN.
    assert frame[frame.k == 6].pool_low.notna().all()
    assert frame[frame.k > 6].pool_low.isna().all()


def test_an_effect_pool_alone_gets_its_null_pool_measured(tmp_path):
    """--generator real_pool scenario=S1 alone: the search calibrates the S0p pool of the
    same store at the same k, so the validity rule has its effect-0 cells."""
    from tests_paths import FIXTURE_POOL

    assert main(["--k", "3", "4", "--generator", "real_pool", "--pool", FIXTURE_POOL,
                 "--param", "scenario=S1", "--sims", "100", "--out", str(tmp_path), "--quiet",
                 "--no-plot", "--protocols", "paired_t"]) == 0
    frame = pd.read_csv(tmp_path / "calibration.csv")
    null = frame[frame.generator_params.str.contains("scenario=S0p")]
    assert set(null.k) == {3, 4} and (null.effect_pp == 0).all() and null.searched.all()
    budget = pd.read_csv(tmp_path / "seed_budget.csv")
    assert not budget.why.str.startswith("validity unknown").any()
