"""``reports.paper_table`` on the fixture store, checked against scipy on the same seeds."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from tests_paths import FIXTURE_POOL

from real_runs.store import load_pairs
from reports.paper_table import main, paper_table


def test_paper_table_rows_match_scipy(tmp_path, capsys):
    table = paper_table(FIXTURE_POOL)
    assert set(zip(table.dataset, table.scenario, table.k)) == {
        ("cifar10", s, k) for s in ("S0p", "S1") for k in (3, 10)}  # 12 seeds: no k = 20
    for r in table.itertuples():
        base, variant = load_pairs(FIXTURE_POOL, r.dataset, r.scenario)
        b, v = base.mean(axis=1)[: r.k], variant.mean(axis=1)[: r.k]
        assert r.single_run_delta_pp == pytest.approx(100 * (v[0] - b[0]))
        assert r.mean_delta_pp == pytest.approx(100 * (v - b).mean())
        assert r.welch_p == pytest.approx(stats.ttest_ind(v, b, equal_var=False).pvalue)
        ref = stats.permutation_test(((v - b) * 300,), np.mean, permutation_type="samples",
                                     n_resamples=np.inf).pvalue
        assert r.sign_flip_p == pytest.approx(ref)
        assert r.bca_low_pp <= r.mean_delta_pp <= r.bca_high_pp
        if r.k == 3:
            assert not r.paired_verdict  # p >= 0.25 with three seeds
    assert main(["--root", FIXTURE_POOL, "--out", str(tmp_path)]) == 0
    md = (tmp_path / "paper_table.md").read_text()
    assert sum(line.startswith("|") for line in md.splitlines()) == 2 + len(table)
    assert "Caveats:" in md and "'cpu' profile" in md
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "paper_table.csv"), table,
                                  check_exact=False, rtol=1e-5, check_dtype=False)
    assert "| cifar10 | S1 | 10 |" in capsys.readouterr().out
