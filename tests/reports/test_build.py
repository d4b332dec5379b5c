"""``reports.build --quick`` on the fixture store: every part built and linked."""

import re

from tests_paths import FIXTURE_POOL

from reports.build import main


def test_build_links_every_report(tmp_path, capsys):
    assert main(["--out", str(tmp_path), "--quick", "--pool", FIXTURE_POOL]) == 0
    index = (tmp_path / "index.html").read_text()
    links = re.findall(r"href='([^']+)'", index)
    for link in links:
        assert (tmp_path / link).is_file(), link
    for part in ("calibrate/power_curves.png", "pitfalls/index.html",
                 "paper_table/paper_table.md", "paper_figures/delta_ci.png"):
        assert part in links
    assert "Not built" not in index
    assert "open " in capsys.readouterr().out
