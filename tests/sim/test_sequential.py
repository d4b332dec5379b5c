"""``sim.sequential``: boundaries against published tables and scipy, the level of the valid
designs, the inflation from peeking, a per-simulation reference loop, validation, the CLI."""

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from reports._save import save_png
from reports.sequential import main, sequential_figure
from sim import generators
from sim.sequential import (
    DESIGNS,
    e_tmix,
    exit_probabilities,
    sequential_table,
    simulate_peeking,
    simulate_sequential,
    spending,
    t_boundaries,
    z_boundaries,
)

ALPHA = 0.05


def _mc_bound(sims, alpha=ALPHA, se=3.0):
    """alpha plus ``se`` binomial standard errors of a rate estimated from ``sims``."""
    return alpha + se * math.sqrt(alpha * (1 - alpha) / sims)


# --------------------------------------------------------------------------------------------
# Boundaries


@pytest.mark.parametrize("K, expected", [(2, 2.178), (3, 2.289), (4, 2.361), (5, 2.413),
                                         (10, 2.555)])
def test_pocock_constant_matches_published_table(K, expected):
    """Pocock (1977) constants, two-sided alpha = 0.05, K equally spaced looks (Jennison and
    Turnbull 2000, Table 2.1); the table rounds to 3 decimals."""
    bounds = z_boundaries(np.arange(1, K + 1), 0.05, "pocock_constant")
    np.testing.assert_allclose(bounds, expected, atol=1e-3)


@pytest.mark.parametrize("K, expected", [(2, 1.977), (3, 2.004), (4, 2.024), (5, 2.040)])
def test_obrien_fleming_constant_matches_published_table(K, expected):
    """O'Brien and Fleming (1979) final critical values, two-sided alpha = 0.05 (Jennison and
    Turnbull 2000, Table 2.3); earlier looks are ``c sqrt(K / k)``."""
    bounds = z_boundaries(np.arange(1, K + 1), 0.05, "obrien_fleming_constant")
    assert bounds[-1] == pytest.approx(expected, abs=1e-3)
    np.testing.assert_allclose(bounds, bounds[-1] * np.sqrt(K / np.arange(1, K + 1)))


def _mvn_exit(bounds, looks, drift=0.0):
    """Cumulative crossing probabilities by scipy's multivariate normal CDF (Genz), an
    integrator independent of the recursion: Z_i has mean drift sqrt(n_i) and
    corr(Z_i, Z_j) = sqrt(n_i / n_j)."""
    looks = np.asarray(looks, dtype=float)
    out = []
    for i in range(1, len(looks) + 1):
        n = looks[:i]
        cov = np.sqrt(np.minimum.outer(n, n) / np.maximum.outer(n, n))
        inside = stats.multivariate_normal.cdf(
            bounds[:i], drift * np.sqrt(n), cov, lower_limit=-bounds[:i], abseps=1e-7,
            releps=1e-7, maxpts=2_000_000, rng=np.random.default_rng(0))
        out.append(1.0 - inside)
    return np.array(out)


@pytest.mark.parametrize("kind", ["pocock", "obrien_fleming"])
@pytest.mark.parametrize("drift", [0.0, 0.4])
def test_recursion_matches_multivariate_normal(kind, drift):
    """Armitage--McPherson--Rowe recursion against scipy's multivariate normal CDF, at
    unequally spaced looks and under a drift (a power computation)."""
    looks = [3, 5, 8, 12]
    bounds = z_boundaries(looks, ALPHA, kind)
    ours = np.cumsum(exit_probabilities(bounds, looks, drift))
    np.testing.assert_allclose(ours, _mvn_exit(bounds, looks, drift), atol=2e-5)


@pytest.mark.parametrize("kind", ["pocock", "obrien_fleming"])
def test_spending_boundaries_spend_the_spending_function(kind):
    """Consistency only: the recursion crosses the Lan--DeMets boundaries with the
    cumulative probability the spending function prescribes (by construction)."""
    looks = np.arange(3, 21)
    bounds = z_boundaries(looks, ALPHA, kind)
    spent = np.cumsum(exit_probabilities(bounds, looks))
    np.testing.assert_allclose(spent, spending(looks / 20, ALPHA, kind), atol=1e-9)


def test_spending_functions_closed_form():
    """Lan and DeMets (1983): alpha at t = 1; O'Brien--Fleming type at t spends
    2 - 2 Phi(z_{alpha/2} / sqrt t)."""
    assert spending(1.0, ALPHA, "pocock") == pytest.approx(ALPHA)
    assert spending(1.0, ALPHA, "obrien_fleming") == pytest.approx(ALPHA)
    assert spending(0.25, ALPHA, "obrien_fleming") == pytest.approx(
        2 * stats.norm.sf(stats.norm.isf(ALPHA / 2) * 2))
    # The first z boundary of a spending design is the quantile of the first spend.
    first = z_boundaries([3, 6], ALPHA, "obrien_fleming")[0]
    assert first == pytest.approx(stats.norm.isf(ALPHA / 2) / math.sqrt(0.5), rel=1e-8)


def test_t_boundaries_exceed_z_boundaries_and_single_look_is_the_t_test():
    """Estimated variance: t boundaries lie above the z ones; at one look the calibrated
    boundary is the t quantile (Monte Carlo error of 2**19 paths: ~1%)."""
    looks = np.arange(3, 11)
    for kind in ("pocock", "obrien_fleming"):
        z = z_boundaries(looks, ALPHA, kind)
        finite = np.isfinite(t_boundaries(looks, ALPHA, kind))
        assert np.all(t_boundaries(looks, ALPHA, kind)[finite] > z[finite])
        assert np.all(t_boundaries(looks, ALPHA, kind, "nominal") > z)
    single = t_boundaries([5], ALPHA, "pocock")[0]
    assert single == pytest.approx(stats.t.isf(ALPHA / 2, 4), rel=0.02)
    # Deterministic: the calibration paths are fixed.
    np.testing.assert_array_equal(t_boundaries(looks, ALPHA, "pocock"),
                                  t_boundaries(looks, ALPHA, "pocock"))


def test_calibration_paths_are_computed_in_blocks(monkeypatch):
    """The null |t| paths behind the calibrated boundaries, computed in blocks of paths, equal
    one :func:`_t_path` call over all of them (consistency check), and the blocks bound the
    memory: the traced peak (tracemalloc, deterministic) stays under 3x the float64 deltas,
    where one call over all paths needs about 11x (ten temporaries the size of the deltas)."""
    import tracemalloc

    from sim.sequential import boundaries

    paths, width = 2**15 + 123, 20  # 16 full blocks and a ragged one
    monkeypatch.setattr(boundaries, "CALIBRATION_PATHS", paths)
    monkeypatch.setattr(boundaries, "_CALIBRATION_BLOCK", 2**11)
    monkeypatch.setattr(boundaries, "_NULL_PATHS", {})
    tracemalloc.start()
    try:
        got = boundaries._null_abs_t(width)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    root = np.random.SeedSequence(boundaries.CALIBRATION_ENTROPY)
    d = np.column_stack([np.random.default_rng(child).standard_normal(paths)
                         for child in root.spawn(width)])
    expected = np.abs(boundaries._t_path(d)[0]).astype(np.float32)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float32
    assert peak < 3 * d.nbytes


def test_e_tmix_matches_numerical_integration():
    """The closed form (Rouder et al. 2009) against the Bayes factor integrated numerically:
    normal likelihood, delta ~ N(0, g) on the standardized effect, prior 1/sigma."""
    d = np.array([0.8, -0.1, 1.3, 0.4, 0.9])
    k, g = d.size, 1.0

    s1, s2 = float(d.sum()), float((d * d).sum())

    def lik(sigma, delta):
        # prod_i N(d_i; delta sigma, sigma^2) times the prior 1/sigma, in plain floats
        squares = s2 - 2 * delta * sigma * s1 + k * (delta * sigma) ** 2
        return math.exp(-0.5 * squares / sigma**2) / sigma ** (k + 1)

    def prior(delta):
        return math.exp(-0.5 * delta**2 / g) / math.sqrt(2 * math.pi * g)

    h1, _ = integrate.dblquad(lambda sigma, delta: lik(sigma, delta) * prior(delta), -9, 9,
                              0.02, 20, epsabs=0, epsrel=1e-8)
    h0, _ = integrate.quad(lambda sigma: lik(sigma, 0.0), 0.02, 20, epsabs=0, epsrel=1e-10)
    t = d.mean() / (d.std(ddof=1) / math.sqrt(k))
    assert float(e_tmix(t, k, g)) == pytest.approx(h1 / h0, rel=1e-5)
    # Limits: no signal gives the prior's penalty; a constant non-zero delta is finite.
    assert float(e_tmix(0.0, 4)) == pytest.approx(1 / math.sqrt(5))
    assert float(e_tmix(np.inf, 4)) == pytest.approx(5 ** 1.5)


# --------------------------------------------------------------------------------------------
# Simulation


def _gaussian(**params):
    return generators.get("seed_gaussian", **params)


def test_peeking_matches_a_per_simulation_loop():
    """Independent reference: one experiment at a time, scipy.stats.ttest_rel after each
    seed, stop at the first p < alpha; the group-sequential and e-process designs from the
    scipy t statistic. Same data (the first spawned child stream), identical decisions."""
    g, sims, k_min, k_max, effect = _gaussian(), 300, 3, 9, 0.25
    results = simulate_sequential(g, "paired_t", k_min, k_max, effect, sims, ALPHA, rng=7)
    data_rng, _ = np.random.default_rng(7).spawn(2)
    base, variant = g.draw(sims, k_max, effect / 100, data_rng)
    looks = np.arange(k_min, k_max + 1)
    crit = {d: t_boundaries(looks, ALPHA, kind) for d, kind in
            (("gs_pocock", "pocock"), ("gs_obf", "obrien_fleming"))}
    expected = {d: [] for d in DESIGNS}
    for b, v in zip(base[:, :, 0], variant[:, :, 0]):
        stopped = dict.fromkeys(DESIGNS)
        for i, j in enumerate(looks):
            res = stats.ttest_rel(v[:j], b[:j])
            checks = {"peek": res.pvalue < ALPHA,
                      "fixed": j == k_max and res.pvalue < ALPHA,
                      "gs_pocock": abs(res.statistic) >= crit["gs_pocock"][i],
                      "gs_obf": abs(res.statistic) >= crit["gs_obf"][i],
                      "e_tmix": e_tmix(res.statistic, j) >= 1 / ALPHA}
            for design, hit in checks.items():
                if stopped[design] is None and hit:
                    stopped[design] = (int(j), np.sign(res.statistic))
        for design in DESIGNS:
            expected[design].append(stopped[design] or (k_max, 0.0))
    for design in DESIGNS:
        seeds, signs = (np.array(x) for x in zip(*expected[design]))
        r = results[design]
        np.testing.assert_array_equal(r.seeds_used, seeds, err_msg=design)
        assert r.rejections == int((signs != 0).sum()), design
        assert r.power == pytest.approx((signs > 0).mean()), design
        assert r.wrong_sign == int((signs < 0).sum()), design


def test_peeking_false_positive_rate_is_far_above_alpha():
    """Adding seeds 3..20 and stopping at the first p < 0.05: the level is above 0.2 (4000
    sims; with known variance the recursion gives 0.206 for z-tests at 1.96)."""
    r = simulate_peeking(_gaussian(), "paired_t", 3, 20, 0.0, 4000, ALPHA, rng=1)
    assert r.rate_low > 2 * ALPHA
    assert r.rate > 0.18
    z_peek = exit_probabilities(np.full(18, stats.norm.isf(ALPHA / 2)), np.arange(3, 21))
    assert z_peek.sum() == pytest.approx(0.2055, abs=1e-3)
    assert r.mean_seeds < 20 and r.seeds_distribution().sum() == pytest.approx(1.0)


@pytest.mark.parametrize("k_max", [6, 10])
def test_valid_designs_keep_the_level_fast(k_max):
    """Group-sequential and e-process false-positive rates <= alpha + 3 MC SE (8000 sims)."""
    sims = 8000
    res = simulate_sequential(_gaussian(), "paired_t", 3, k_max, 0.0, sims, ALPHA,
                              rng=k_max, designs=("gs_pocock", "gs_obf", "e_tmix"))
    for design, r in res.items():
        assert r.rate <= _mc_bound(sims), design


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["normal", "t3"])
def test_valid_designs_keep_the_level(noise):
    """At k_max in {6, 10, 20} (first look at 3 seeds, a look after every seed), 60,000
    sims: every valid design's rate <= alpha + 3 SE (0.0527); peeking is above alpha, and
    above 2 alpha at k_max = 20 (t3 tails make the t-test conservative: 0.097 at k_max 6)."""
    sims = 60_000
    frame = sequential_table(_gaussian(noise=noise), "paired_t", 3, [6, 10, 20], [0.0], sims,
                             ALPHA, seed=11)
    valid = frame[frame["design"].isin(["fixed", "gs_pocock", "gs_obf", "e_tmix"])]
    assert (valid["rate"] <= _mc_bound(sims)).all(), valid
    peek = frame[frame["design"] == "peek"].set_index("k_max")
    assert (peek["rate_low"] > ALPHA).all() and peek.loc[20, "rate_low"] > 2 * ALPHA


@pytest.mark.slow
def test_nominal_t_conversion_leaks_at_few_seeds():
    """Documents why the designs calibrate: the z-boundary-to-t-quantile conversion gives
    about 0.057 with looks at 3..20 seeds (100,000 normal null paths)."""
    rng = np.random.default_rng(3)
    d = rng.standard_normal((100_000, 20))
    looks = np.arange(3, 21)
    t = np.array([stats.ttest_1samp(d[:, :j], 0, axis=1).statistic for j in looks]).T
    for kind in ("pocock", "obrien_fleming"):
        rate = (np.abs(t) >= t_boundaries(looks, ALPHA, kind, "nominal")).any(axis=1).mean()
        assert rate > _mc_bound(100_000)
        calibrated = (np.abs(t) >= t_boundaries(looks, ALPHA, kind)).any(axis=1).mean()
        assert calibrated <= _mc_bound(100_000)


def test_single_look_peek_is_the_fixed_test():
    res = simulate_sequential(_gaussian(), "paired_t", 5, 5, 1.0, 500, ALPHA, rng=2)
    np.testing.assert_array_equal(res["peek"].seeds_used, res["fixed"].seeds_used)
    assert res["peek"].rejections == res["fixed"].rejections


def test_common_random_numbers_and_determinism():
    """The data do not depend on which designs run; the same rng gives the same result."""
    g = _gaussian()
    alone = simulate_peeking(g, "paired_t", 3, 8, 0.5, 400, ALPHA, rng=5)
    together = simulate_sequential(g, "paired_t", 3, 8, 0.5, 400, ALPHA, rng=5)["peek"]
    np.testing.assert_array_equal(alone.seeds_used, together.seeds_used)
    again = simulate_peeking(g, "paired_t", 3, 8, 0.5, 400, ALPHA,
                             rng=np.random.default_rng(5))
    assert again.row() == alone.row()


def test_power_and_fixed_k_of_same_power():
    """A true effect: power is the correct-sign rate; fixed_k_same_power is the smallest k
    where the fixed design on the same draws reaches it."""
    res = simulate_sequential(_gaussian(), "paired_t", 3, 10, 0.5, 1000, ALPHA, rng=4)
    fixed = res["fixed"]
    assert fixed.fixed_k_same_power <= 10
    for r in res.values():
        assert r.power <= r.rate and r.rate_low <= r.rate <= r.rate_high
        assert r.power_low <= r.power <= r.power_high
    assert res["gs_obf"].mean_seeds < 10
    null = simulate_sequential(_gaussian(), "paired_t", 3, 6, 0.0, 200, ALPHA, rng=4)
    assert math.isnan(null["peek"].power) and math.isnan(null["peek"].fixed_k_same_power)


def test_looks_subset():
    r = simulate_sequential(_gaussian(), "paired_t", 3, 12, 0.0, 300, ALPHA, rng=0,
                            looks=[4, 8, 12], designs=("gs_obf",))["gs_obf"]
    assert r.looks == (4, 8, 12)
    assert set(np.unique(r.seeds_used)) <= {4, 8, 12}


# --------------------------------------------------------------------------------------------
# Validation


GOOD = dict(generator=None, protocol="paired_t", k_min=3, k_max=6, effect_pp=0.0, sims=10,
            alpha=0.05)


@pytest.mark.parametrize("change, match", [
    ({"k_min": 1}, r"The 'k_min' parameter of simulate_sequential must be an integer >= 2\. "
                   r"Got 1"),
    ({"k_min": 2.5}, r"'k_min' parameter .* Got 2\.5"),
    ({"k_max": 2}, r"The 'k_max' parameter of simulate_sequential must be >= k_min \(3\)\. "
                   r"Got 2"),
    ({"sims": 0}, r"The 'sims' parameter .* integer >= 1\. Got 0"),
    ({"alpha": 1.5}, r"The 'alpha' parameter of simulate_sequential must be a number in "
                     r"\(0, 1\)\. Got 1\.5"),
    ({"effect_pp": float("nan")}, r"The 'effect_pp' parameter .* finite number"),
    ({"effect_pp": 150.0}, r"'effect' parameter of generator seed_gaussian"),
    ({"protocol": "no_such"}, r"The 'name' parameter of protocols\.get must be one of"),
    ({"protocol": "mcnemar"}, r"'protocol' parameter of simulate_sequential must be a protocol "
                              r"that runs at k_min = 3 .*\('mcnemar' .*Got 'mcnemar'"),
    ({"protocol": 3}, r"The 'protocol' parameter .* protocol name or object\. Got 3"),
    ({"generator": "seed_gaussian"}, r"The 'generator' parameter .* sim\.generators\.get"),
    ({"looks": [3, 5]}, r"The 'looks' parameter .* ending at k_max\. Got \[3, 5\]"),
    ({"looks": [5, 4, 6]}, r"The 'looks' parameter .* strictly increasing"),
    ({"designs": ["peek", "bogus"]}, r"The 'designs' parameter .* subset of"),
])
def test_simulate_validation_messages(change, match):
    kwargs = {**GOOD, "generator": _gaussian(), **change}
    with pytest.raises(ValueError, match=match):
        simulate_sequential(**kwargs)


@pytest.mark.parametrize("call, match", [
    (lambda: z_boundaries([3, 3, 4]), r"The 'looks' parameter of z_boundaries must be a "
                                      r"non-empty, strictly increasing"),
    (lambda: z_boundaries([1, 2], kind="haybittle"), r"The 'kind' parameter of z_boundaries"),
    (lambda: z_boundaries([1, 2], alpha=0), r"The 'alpha' parameter of z_boundaries"),
    (lambda: t_boundaries([1, 2]), r"The 'looks' parameter of t_boundaries must be whole "
                                   r"numbers of seeds >= 2"),
    (lambda: t_boundaries([2, 3], kind="pocock_constant"), r"The 'kind' parameter of "
                                                            r"t_boundaries"),
    (lambda: t_boundaries([2, 3], method="exact"), r"The 'method' parameter of t_boundaries"),
    (lambda: exit_probabilities([2.0], [1, 2]), r"The 'bounds' parameter of "
                                                r"exit_probabilities must be positive, one "
                                                r"per look \(2\)"),
    (lambda: spending(0.5, 0.05, "linear"), r"The 'kind' parameter of spending"),
])
def test_boundary_validation_messages(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("change, match", [
    ({"k_max_values": []}, r"The 'k_max_values' parameter of sequential_table must be "
                           r"non-empty integers >= k_min \(3\)\. Got \[\]"),
    ({"k_max_values": [2, 5]}, r"'k_max_values' parameter .* Got \[2, 5\]"),
    ({"effects_pp": []}, r"The 'effects_pp' parameter of sequential_table must be non-empty"),
    ({"seed": -1}, r"The 'seed' parameter of sequential_table must be an integer >= 0"),
    ({"effects_pp": [0.0, float("inf")]}, r"The 'effect_pp' parameter of sequential_table"),
])
def test_table_validation_messages(change, match):
    kwargs = {"generator": _gaussian(), "protocol": "paired_t", "k_min": 3,
              "k_max_values": [4], "effects_pp": [0.0], "sims": 10, "seed": 0, **change}
    with pytest.raises(ValueError, match=match):
        sequential_table(**kwargs)



# --------------------------------------------------------------------------------------------
# CLI and figure


def test_cli_writes_csv_and_figure(tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    out = tmp_path / "seq"
    assert main(["--k", "3", "6", "--effects", "0", "1", "--sims", "300", "--seed", "0",
                 "--protocol", "paired_t", "--out", str(out)]) == 0
    frame = pd.read_csv(out / "sequential.csv")
    expected = {"design", "k_min", "k_max", "effect_pp", "sims", "rejections", "rate",
                "rate_low", "rate_high", "power", "mean_seeds", "fixed_k_same_power"}
    assert expected <= set(frame.columns)
    assert set(frame["k_max"]) == {3, 4, 5, 6} and set(frame["design"]) == set(DESIGNS)
    assert len(frame) == 4 * 2 * len(DESIGNS)
    np.testing.assert_allclose(frame["rate"], frame["rejections"] / frame["sims"], rtol=1e-9)
    assert (out / "sequential.png").stat().st_size > 10_000
    printed = capsys.readouterr().out
    assert "peek" in printed and "wrote" in printed
    # Same seed, same bytes.
    again = tmp_path / "again"
    main(["--k", "3", "6", "--effects", "0", "1", "--sims", "300", "--out", str(again),
          "--no-plot", "--quiet"])
    assert (out / "sequential.csv").read_bytes() == (again / "sequential.csv").read_bytes()


@pytest.mark.parametrize("effects", [[0.0], [0.5]])
def test_plot_with_one_effect(tmp_path, effects):
    """Only the null, or only an effect: the figure still draws (empty panels hidden)."""
    import matplotlib

    matplotlib.use("Agg")
    frame = sequential_table(_gaussian(), "paired_t", 3, [3, 4], effects, 100, ALPHA)
    save_png(sequential_figure(frame), tmp_path / "one.png")
    assert (tmp_path / "one.png").stat().st_size > 5_000


@pytest.mark.parametrize("args, match", [
    (["--k", "1", "5"], "The '--k' option must be K_MIN >= 2"),
    (["--k", "6", "3"], "K_MIN <= K_MAX"),
    (["--k", "3", "5", "--sims", "0"], "The '--sims' option must be an integer >= 1"),
    (["--k", "3", "1000000000"], "K_MAX <= 10000. Got [3, 1000000000] instead."),
    (["--k", "3", "5", "--designs", "peek", "bogus"], "'designs' parameter"),
    (["--k", "3", "5", "--generator", "nope"], "'generator' parameter"),
])
def test_cli_bad_input_messages(tmp_path, monkeypatch, capsys, args, match):
    """In-process through the console entry point: exit 2, one line on stderr."""
    from reports.sequential import run

    monkeypatch.setattr(sys, "argv", ["sim.sequential", *args, "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as exit_info:
        run()
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m sim.sequential: error: ")
    assert match in lines[0]


def test_cli_bad_input_subprocess(tmp_path):
    """``python -m sim.sequential`` with bad input: exit code 2 and one stderr line."""
    proc = subprocess.run([sys.executable, "-m", "sim.sequential", "--k", "1", "5", "--out",
                           str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == ["python -m sim.sequential: error: The '--k' option must be K_MIN >= 2 (a t "
                     "statistic needs two seeds). Got [1, 5] instead."]


def test_cli_locks_out_and_removes_stale_outputs(tmp_path, capsys):
    """Like sim.calibrate: a held --out is refused; a run without the figure removes an
    earlier sequential.png."""
    from evalcal_core.outdir import locked_out

    argv = ["--k", "3", "4", "--sims", "20", "--designs", "peek", "fixed", "--out",
            str(tmp_path)]
    with locked_out(tmp_path), pytest.raises(ValueError, match="another run is writing"):
        main(argv + ["--quiet", "--no-plot"])
    (tmp_path / "sequential.png").write_bytes(b"old")
    assert main(argv + ["--no-plot"]) == 0
    assert "removed sequential.png" in capsys.readouterr().out
    assert not (tmp_path / "sequential.png").exists()


def test_a_registered_design_is_simulated_with_the_others():
    """A new design is one class with @register; it runs on the same draws as the others
    (consistency: a design that never rejects has rate 0 and uses k_max seeds)."""
    import numpy as np

    from sim.sequential import designs

    class Never(designs.Design):
        name = "never"

        def decisions(self, draws, looks, alpha):
            shape = (draws.t.shape[0], len(looks))
            return np.zeros(shape, bool), np.zeros(shape)

    designs.register(Never)
    try:
        frame = sequential_table(_gaussian(), "paired_t", 3, [5], [0.0], 50, ALPHA,
                                 designs=("fixed", "never"))
        never = frame[frame["design"] == "never"].iloc[0]
        assert never["rejections"] == 0 and never["mean_seeds"] == 5
        with pytest.raises(ValueError, match="registered twice"):
            designs.register(Never)
    finally:
        designs.DESIGN_CLASSES.pop("never")
