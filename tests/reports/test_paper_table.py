"""``reports.paper_table`` on the fixture store, checked against scipy on the same seeds."""

import numpy as np
import pandas as pd
import pytest
from _synthetic_store import store_with_seeds as _store_with_seeds
from scipy import stats
from tests_paths import FIXTURE_POOL
from welch_reference import welch_reference

from real_runs.store import load_pairs
from reports.paper_table import main, paper_table
from sim import generators


def test_paper_table_rows_match_scipy(tmp_path, capsys):
    table = paper_table(FIXTURE_POOL)
    assert set(zip(table.dataset, table.scenario, table.k)) == {
        ("cifar10", s, k) for s in ("S0p", "S1") for k in (3, 10)}  # 12 seeds: no k = 20
    for r in table.itertuples():
        base, variant = load_pairs(FIXTURE_POOL, r.dataset, r.scenario)
        b, v = base.mean(axis=1)[: r.k], variant.mean(axis=1)[: r.k]
        assert r.single_run_delta_pp == pytest.approx(100 * (v[0] - b[0]))
        assert r.mean_delta_pp == pytest.approx(100 * (v - b).mean())
        # Welch's statistic on the bounded small-sample df (tests/welch_reference.py)
        assert r.welch_p == pytest.approx(welch_reference(v, b, 0.05)[0])
        ref = stats.permutation_test(((v - b) * 300,), np.mean, permutation_type="samples",
                                     n_resamples=np.inf).pvalue
        assert r.sign_flip_p == pytest.approx(ref)
        assert r.bca_low_pp <= r.mean_delta_pp <= r.bca_high_pp
        if r.k == 3:
            assert not r.paired_verdict  # p >= 0.25 with three seeds
    assert main(["--pool", FIXTURE_POOL, "--out", str(tmp_path)]) == 0
    md = (tmp_path / "paper_table.md").read_text()
    assert sum(line.startswith("|") for line in md.splitlines()) == 2 + len(table)
    # the caveat names the pool's own training profile, never another one
    assert "Caveats:" in md and "profile 'fixture'" in md and "'cpu' profile" not in md
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "paper_table.csv"), table,
                                  check_exact=False, rtol=1e-5, check_dtype=False)
    assert "| cifar10 | S1 | 10 |" in capsys.readouterr().out



def test_two_runs_write_identical_bytes_with_k20(tmp_path, capsys):
    """Same ``--seed`` -> byte-identical files, also at k = 20 where ``paired_bca_perm``
    samples its sign flips (k > max_exact_k = 16) and its bootstrap resamples."""
    root = _store_with_seeds(tmp_path / "store")
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        assert main(["--pool", root, "--out", str(out), "--seed", "3"]) == 0
    table = pd.read_csv(outs[0] / "paper_table.csv")
    assert 20 in set(table.k)
    for name in ("paper_table.csv", "paper_table.md"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
        assert (outs[0] / name).stat().st_mode & 0o777 == 0o644
    assert not list(outs[0].glob(".*tmp*"))
    # The row's CI, p and verdict are one paired_bca_perm evaluation.
    for r in table.itertuples():
        assert r.paired_verdict == ((r.bca_low_pp > 0 or r.bca_high_pp < 0)
                                    and r.sign_flip_p < 0.05)
    capsys.readouterr()


def test_paper_table_seed_is_validated():
    with pytest.raises(ValueError, match=r"The '--seed' option must be an integer >= 0 and "
                                         r"<= \d+\. Got -1 instead\."):
        main(["--seed", "-1"])


def test_two_profiles_side_by_side(tmp_path, capsys):
    # The cpu pool and the GPU-trained paper pool share one store: each is chosen by its
    # profile, and the caveat describes the profile shown.
    root = _store_with_seeds(tmp_path, seeds=12, profile="cpu")
    _store_with_seeds(tmp_path, seeds=12, profile="paper")
    with pytest.raises(ValueError, match="profile must be given"):
        paper_table(root)
    assert main(["--pool", root, "--out", str(tmp_path / "out"), "--profile", "paper"]) == 0
    md = (tmp_path / "out" / "paper_table.md").read_text()
    assert "'paper' profile" in md and "'cpu' profile, sized" not in md
    assert main(["--pool", root, "--out", str(tmp_path / "out2"), "--profile", "cpu"]) == 0
    assert "'cpu' profile, sized" in (tmp_path / "out2" / "paper_table.md").read_text()
    from reports import paper_figures

    figures = tmp_path / "figures"
    assert paper_figures.main(["--pool", root, "--out", str(figures), "--profile", "paper"]) == 0
    assert {p.name for p in figures.glob("*.png")} == {
        "delta_ci.png", "welch_vs_signflip.png", "learning_curves.png"}
    capsys.readouterr()


def test_pool_cells_and_real_shorthand_filter_by_profile(tmp_path):
    from real_runs.store import pool_cells, pool_profiles

    root = _store_with_seeds(tmp_path, seeds=6, profile="cpu")
    paper_root = tmp_path / "cifar10" / "paper"
    # a paper pool that so far holds S1 only: profile=paper must not offer S0p
    _store_with_seeds(tmp_path / "partial", seeds=6, profile="paper")
    (tmp_path / "partial" / "cifar10" / "paper" / "S1").rename(paper_root.parent / "tmp_S1")
    paper_root.mkdir()
    (tmp_path / "partial" / "cifar10" / "paper" / "baseline").rename(paper_root / "baseline")
    (paper_root.parent / "tmp_S1").rename(paper_root / "S1")
    assert pool_cells(root) == [("cifar10", "S0p"), ("cifar10", "S1")]
    assert pool_cells(root, "cpu") == [("cifar10", "S0p"), ("cifar10", "S1")]
    assert pool_cells(root, "paper") == [("cifar10", "S1")]
    assert pool_profiles(root) == ["cpu", "paper"]
    with pytest.raises(ValueError, match="of profile 'tpu'"):
        pool_cells(root, "tpu")
    pools = generators.expand("real", {"root": root, "profile": "paper"})
    assert [(g.dataset, g.scenario) for g in pools] == [("cifar10", "S1")]
    assert pools[0].pool()[0].shape[0] == 6
