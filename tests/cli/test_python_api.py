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
    ({"correction": "nope"}, r"compare\(\): argument --correction: invalid choice: 'nope'"),
    ({"alpha": 2}, r"The '--alpha' option must be a finite number > 0 and < 1\. Got 2\.0"),
    ({"bogus": 1}, r"compare\(\) got unknown option\(s\) bogus"),
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
