"""``reports.evaluate.compare``: the command as a function, the same numbers and errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcal_core.cli import call_main
from reports.evaluate import compare, example_path, main


def test_compare_equals_the_command(capsys):
    assert call_main(main, "evaluate", ["--json", "--correction", "maxt"]) == 0
    cli = json.loads(capsys.readouterr().out)
    result = compare(correction="maxt")
    assert result.to_dict() == cli
    assert list(result.frame["p_value"]) == [c["p_value"] for c in cli["comparisons"]]


def test_a_dataframe_is_read_as_its_csv():
    frame = pd.read_csv(example_path())
    assert compare(frame).to_dict()["comparisons"] == compare().to_dict()["comparisons"]


def test_outputs_for_people_and_notebooks():
    result = compare()
    assert str(result).startswith("Results:")
    html = result._repr_html_()
    assert "<table" in html and "design: methods" in html
    assert result.render("markdown") and result.render("latex")
    with pytest.raises(ValueError, match="format 'pdf'"):
        result.render("pdf")


def test_claims_carry_the_gate():
    result = compare(claim="non-inferiority", margin=0.005)
    verdict = result.to_dict()["comparisons"][0]["claim"]
    assert result.exit_status == {"shown": 0, "refuted": 1, "inconclusive": 3}[verdict]


@pytest.mark.parametrize(("options", "message"), [
    ({"correction": "nope"}, r"The 'correction' parameter of compare\(\) must be one of "
                             r"holm, maxt, bh, bonferroni, none\. Got 'nope' \(a str\)"),
    ({"alpha": 2}, r"The 'alpha' parameter of compare\(\) must be a finite number > 0 and "
                   r"< 1\. Got 2\.0"),
    ({"alpha": "0.05"}, r"The 'alpha' parameter of compare\(\) must be a number\. "
                        r"Got '0\.05' \(a str\)"),
    ({"equal_variances": "yes"}, r"The 'equal_variances' parameter of compare\(\) must be True "
                                 r"or False"),
    ({"design": "methods"}, r"The 'design' parameter of compare\(\) must be one of "
                            r"methods_paired, methods_independent, models, models_clustered\. "
                            r"Got 'methods' \(a str\)"),
    ({"design": "models", "cluster": "topic"},
     r"The 'cluster' and 'design' parameters of compare\(\) must be given together only with "
     r"design models_clustered .*Got cluster topic with design models instead\.$"),
    ({"unpaired": True}, r"compare\(\) got unknown option\(s\) unpaired; allowed: .*design"),
    ({"compare": "models"}, r"compare\(\) got unknown option\(s\) compare; allowed: "),
    ({"seed": 1.5}, r"The 'seed' parameter of compare\(\) must be an integer"),
    ({"margin": 0.01}, r"The 'margin' parameter of compare\(\) must be given with a claim"),
    ({"claim": "equivalence"}, r"'margin' parameter of compare\(\) must be a number > 0 in "
                               r"the file's units for claim equivalence"),
    ({"metric_range": (0, 1, 2)}, r"The 'metric_range' parameter of compare\(\) must be 2 "
                                  r"values"),
    ({"bogus": 1}, r"compare\(\) got unknown option\(s\) bogus"),
    ({"gate": True}, r"compare\(\) got unknown option\(s\) gate"),
    ({"json": True}, r"compare\(\) got unknown option\(s\) json"),
])
def test_bad_options_are_one_line(options, message):
    with pytest.raises(ValueError, match=message) as info:
        compare(**options)
    assert "\n" not in str(info.value)


def test_leaderboard_from_python(tmp_path):
    """compare(..., leaderboard=True) is the command's --leaderboard --json body."""
    rng = np.random.default_rng(0)
    x = (rng.random((8, 60)) < np.linspace(0.5, 0.8, 8)[:, None]).astype(int)
    rows = [(0, f"s{i}", q, int(x[i, q])) for i in range(8) for q in range(60)]
    path = tmp_path / "b.csv"
    pd.DataFrame(rows, columns=["seed", "arm", "question", "score"]).to_csv(path, index=False)
    result = compare(path, leaderboard=True)
    assert list(result.frame.columns[:3]) == ["rank", "system", "tier"]
    assert len(result.frame) == 8 and result.exit_status == 0
    assert "leaderboard: 8 systems" in result._repr_html_()


def test_protocols_keyword_keeps_the_results_path(tmp_path):
    """A list of protocols is a list, not argv: the results path after it is still the file
    (it was read as a protocol name when keywords became a command line)."""
    path = tmp_path / "r.csv"
    pd.read_csv(example_path()).to_csv(path, index=False)
    result = compare(path, protocols=["paired_t", "wilcoxon"])
    assert [row.protocol for row in result.rows] == ["paired_t", "wilcoxon"]
    assert compare(path, protocols="paired_t").to_dict()["comparisons"] == \
        result.to_dict()["comparisons"]


def _frame_rows():
    frame = pd.read_csv(example_path())
    return frame.sample(frac=1.0, random_state=3)


def test_a_frame_needs_no_file_and_gives_the_csvs_numbers(tmp_path, monkeypatch):
    """The frame is read in memory (no temporary CSV: writing one fails here) and gives the
    same analysis as the file it stands for, whatever its row order and index."""
    frame = _frame_rows()
    path = tmp_path / "r.csv"
    frame.to_csv(path, index=False)
    expected = compare(path).to_dict()
    monkeypatch.setattr(pd.DataFrame, "to_csv", lambda *a, **k: pytest.fail("wrote a CSV"))
    got = compare(frame).to_dict()
    assert got["source"] == "results DataFrame"
    assert {k: v for k, v in got.items() if k != "source"} == \
        {k: v for k, v in expected.items() if k != "source"}


def _set(frame, position, column, value):
    frame = frame.astype({column: object})
    frame.iloc[position, frame.columns.get_loc(column)] = value
    return frame


@pytest.mark.parametrize(("edit", "message"), [
    (lambda f: _set(f, 4, "metric", "abc"),
     r"results DataFrame: row 4 \(index 4\): column 'metric' must be a finite number, "
     r"got 'abc'"),
    (lambda f: _set(f.reset_index(drop=True), 2, "arm", None),
     r"results DataFrame: row 2: column 'arm' is empty"),
    (lambda f: pd.concat([f, f.iloc[[0]]]).reset_index(drop=True),
     r"results DataFrame: row 20: duplicate entry for seed=\d+, arm="),
])
def test_frame_errors_name_the_frames_rows(edit, message):
    """Errors in a frame name its rows by position (0-based, as ``iloc``) and, when the
    index is not the default, by index label — never the line numbers of a CSV."""
    frame = edit(_frame_rows())
    with pytest.raises(ValueError, match=message) as info:
        compare(frame)
    assert "\n" not in str(info.value) and "tmp" not in str(info.value)


def test_a_large_integer_seed_is_an_integer():
    """``seed`` takes every integer ``--seed`` takes (up to 2**63 - 1), not only those a
    float holds exactly."""
    assert compare(seed=2**53 + 1).to_dict() == compare(seed=2**53 + 1).to_dict()
    with pytest.raises(ValueError, match=r"'seed' parameter of compare\(\) must be an "
                                         r"integer"):
        compare(seed=2.5)
