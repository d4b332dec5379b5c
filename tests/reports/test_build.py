"""``reports.build``: the front page on the fixture store, and how a failed step is reported."""

import base64
import io
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from _chromium import assert_not_blank, needs_chromium, screenshot
from PIL import Image
from tests_paths import FIXTURE_POOL

from evalcal_core.outdir import check_complete, incomplete_reason
from reports import build
from reports.build import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(quick_build):
    return quick_build


class _Page(HTMLParser):
    """Tables (by id), numbers (``span.num``), images and links of the front page."""

    def __init__(self):
        super().__init__()
        self.tables, self.nums, self.images, self.links = [], [], [], []
        self._span = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append(attrs.get("id"))
        elif tag == "span" and attrs.get("class") == "num":
            self._span = dict(attrs, text="")
        elif tag == "img":
            self.images.append(attrs["src"])
        elif tag == "a":
            self.links.append(attrs["href"])

    def handle_data(self, data):
        if self._span is not None:
            self._span["text"] += data

    def handle_endtag(self, tag):
        if tag == "span" and self._span is not None:
            self.nums.append(self._span)
            self._span = None


def _page(out):
    page = _Page()
    page.feed((out / "index.html").read_text(encoding="utf-8"))
    return page


def test_build_links_every_report(built, capsys):
    page = _page(built)
    for link in page.links:
        if not link.startswith("#"):
            assert (built / link.split("#")[0]).is_file(), link
    for part in ("calibrate/power_curves.png", "pitfalls/index.html",
                 "paper_table/paper_table.md", "paper_figures/delta_ci.png",
                 "pool_profiles/pool_profiles.csv", "harness_defaults/harness_defaults.md"):
        assert part in page.links
    index = (built / "index.html").read_text()
    assert "Not built" not in index and "Failed" not in index


def test_front_page_tables_show_their_csv_cells(built):
    """Every number of every table is the CSV cell it names, formatted as shown."""
    page = _page(built)
    assert {"settings", "seed-budget", "paper-table", "calibration-0",
            "harness-defaults"} <= set(page.tables)
    effects = pd.read_csv(built / "calibrate" / "calibration.csv")["effect_pp"].nunique()
    assert sum(t.startswith("calibration-") and t != "calibration-searched"
               for t in page.tables) == effects
    frames, sources = {}, set()
    for num in page.nums:
        name, row, col = num["data-src"].rsplit(":", 2)
        frame = frames.setdefault(name, pd.read_csv(built / name))
        x = float(frame.at[int(row), col]) * float(num["data-scale"])
        fmt = num["data-fmt"]
        shown = format(int(round(x)), fmt) if fmt.endswith("d") else format(x, fmt)
        assert num["text"] == shown, num
        sources.add(name)
    assert sources == {"calibrate/calibration.csv", "calibrate/seed_budget.csv",
                       "paper_table/paper_table.csv", "pool_profiles/pool_profiles.csv",
                       "harness_defaults/harness_defaults.csv"}
    # every calibration cell and every paper-table row is on the page
    calibration = frames["calibrate/calibration.csv"]
    rates = {int(n["data-src"].rsplit(":", 2)[1]) for n in page.nums
             if n["data-src"].startswith("calibrate/calibration.csv")}
    assert rates == set(range(len(calibration)))
    table = frames["paper_table/paper_table.csv"]
    rows = {int(n["data-src"].rsplit(":", 2)[1]) for n in page.nums
            if n["data-src"].startswith("paper_table/")}
    assert rows == set(range(len(table)))
    # every quantity of every pool, side by side, is on the page
    profiles = frames["pool_profiles/pool_profiles.csv"]
    rows = {int(n["data-src"].rsplit(":", 2)[1]) for n in page.nums
            if n["data-src"].startswith("pool_profiles/")}
    assert rows == set(profiles.index[profiles["value"].notna()])
    datasets = profiles["dataset"].unique()
    assert {f"pool-profiles-{d}" for d in datasets} <= set(page.tables)


def test_front_page_is_self_contained_with_readable_figures(built):
    page = _page(built)
    html = (built / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    assert "<script" not in html and "<link" not in html
    assert "white-space: nowrap" in html
    assert len(page.images) == 4  # power curves and the three paper figures
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        image = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
        assert image.width >= 700, image.size
    for lesson in range(1, 8):
        assert f'href="pitfalls/index.html#section{lesson}"' in html
    assert "python -m reports.build --out" in html  # the command that rebuilds it
    assert "python -m sim.calibrate --k 3 10" in html


class _Tables(HTMLParser):
    """Header cells and row texts of every table, by id."""

    def __init__(self):
        super().__init__()
        self.headers, self.rows, self._id, self._cell = {}, {}, None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._id = dict(attrs)["id"]
            self.headers[self._id], self.rows[self._id] = [], []
        elif tag == "tr" and self._id is not None:
            self.rows[self._id].append([])
        elif tag in ("th", "td"):
            self._cell = ""

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag == "th":
            self.headers[self._id].append(self._cell)
            self._cell = None
        elif tag == "td":
            self.rows[self._id][-1].append(self._cell)
            self._cell = None
        elif tag == "table":
            self._id = None


def _calibration_csv(folder):
    """A grid k = 3..5 at 0 and +1 pp, and the budget search's cells k = 2 and 14."""
    rows = []
    for effect in (0.0, 1.0):
        for k, searched in ((3, False), (4, False), (5, False), (2, True), (14, True)):
            if effect == 1.0 and k == 2:
                continue
            for name in ("paired_bca_perm", "paired_t", "bca"):
                rate = 0.3 if name == "bca" and effect == 0 else 0.05 if effect == 0 else 0.6
                rows.append(dict(generator="seed_gaussian", protocol=name, k=k,
                                 generator_params="mu=0.9;sigma=0.005;rho=0.5;noise=normal",
                                 effect_pp=effect, sims=200 if not searched else 400,
                                 alpha=0.05, rate=rate, rate_low=rate - 0.02,
                                 rate_high=rate + 0.02, searched=searched))
    pd.DataFrame(rows).to_csv(folder / "calibration.csv", index=False)
    return pd.read_csv(folder / "calibration.csv")


def test_calibration_tables_show_the_asked_grid_and_the_searched_cells_apart(tmp_path):
    from reports import _front_page

    frame = _calibration_csv(tmp_path)
    html = _front_page.calibration_tables(tmp_path, "calibrate/")
    tables = _Tables()
    tables.feed(html)
    grid = [t for t in tables.headers if t != "calibration-searched"]
    assert len(grid) == 2
    for table in grid:  # the grid's k only, not the search's 2 and 14
        assert tables.headers[table][1:] == ["k = 3", "k = 4", "k = 5"]
    assert "Cells measured by the seed-budget search: k = 2, 14" in html
    searched = tables.rows["calibration-searched"][1:]  # below the header row
    assert len(searched) == 6  # three protocols at each effect
    assert all(any("k = 14: " in c for c in row) for row in searched)
    assert sum(any("k = 2: " in c for c in row) for row in searched) == 3
    # every cell of the file, grid or searched, is cited once on the page
    cited = [int(m) for m in re.findall(r'data-src="calibrate/calibration\.csv:(\d+):rate"',
                                         html)]
    assert sorted(cited) == list(range(len(frame)))


def test_build_page_names_the_profile_it_read(built):
    tables = _Tables()
    tables.feed((built / "index.html").read_text(encoding="utf-8"))
    settings = dict(row for row in tables.rows["settings"] if row)
    assert settings["profile"] == "fixture (the store's only profile)"
    assert "None" not in settings.values()


def test_profile_words_never_say_none(tmp_path):
    assert build.profile_words(FIXTURE_POOL, None, None) == "fixture (the store's only profile)"
    assert build.profile_words(FIXTURE_POOL, "fixture", None) == "fixture"
    assert build.profile_words(None, None, "no real-run pool under x") == "no real pool"
    assert build.profile_words(None, "paper", "no pool") == "paper (no real pool of it)"


@needs_chromium
def test_front_page_renders_in_headless_chromium(built, tmp_path):
    shot = tmp_path / "page.png"
    screenshot(built / "index.html", shot, tmp_path / "profile", size=(1280, 4000))
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 4000)
    assert_not_blank(image)


def _fake_step(calls):
    def fake(argv):
        calls.append(argv)
        return 0
    return fake


def test_failed_step_exits_nonzero_and_names_the_step(tmp_path, monkeypatch, capsys):
    import reports.paper_table as paper_table
    import sim.calibrate as calibrate
    import sim.harness_defaults as harness_defaults
    from reports import pitfalls

    calls = []
    for module in (calibrate, pitfalls, harness_defaults):
        monkeypatch.setattr(module, "main", _fake_step(calls))

    def broken(argv):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(paper_table, "main", broken)
    monkeypatch.setattr(build, "missing_pool", lambda pool, profile=None: None)
    import reports.paper_figures as paper_figures
    monkeypatch.setattr(paper_figures, "main", _fake_step(calls))
    assert main(["--out", str(tmp_path), "--quick"]) == 1
    err = capsys.readouterr().err
    assert "step 'paper_table'" in err and "RuntimeError: disk on fire" in err
    assert len(calls) == 4  # the other steps still ran
    assert "Failed: RuntimeError: disk on fire" in (tmp_path / "index.html").read_text()


def test_missing_pool_is_a_documented_skip(tmp_path, monkeypatch, capsys):
    import sim.calibrate as calibrate
    import sim.harness_defaults as harness_defaults
    from reports import pitfalls

    calls = []
    for module in (calibrate, pitfalls, harness_defaults):
        monkeypatch.setattr(module, "main", _fake_step(calls))
    # Only the default pool may be absent (an explicit --pool that is missing is an error).
    monkeypatch.setattr("real_runs.store.DEFAULT_POOL", tmp_path / "none")
    monkeypatch.setattr(build, "DEFAULT_POOL", tmp_path / "none")
    assert main(["--out", str(tmp_path), "--quick"]) == 0
    printed = capsys.readouterr().out
    assert "paper_table: skipped (no real-run pool under" in printed
    index = (tmp_path / "index.html").read_text()
    assert index.count("Not built: no real-run pool") == 3
    assert incomplete_reason(tmp_path / "paper_table") is None  # nothing there to mark


def test_a_skipped_steps_earlier_files_are_marked_not_passed_off(tmp_path, monkeypatch,
                                                                  capsys):
    """An earlier build's paper table stays on disk but its folder is marked incomplete,
    naming the skip, so no reader takes it for this build's."""
    import sim.calibrate as calibrate
    import sim.harness_defaults as harness_defaults
    from reports import pitfalls

    for module in (calibrate, pitfalls, harness_defaults):
        monkeypatch.setattr(module, "main", _fake_step([]))
    earlier = tmp_path / "paper_table"
    earlier.mkdir()
    (earlier / "paper_table.csv").write_text("from an earlier build\n")
    monkeypatch.setattr("real_runs.store.DEFAULT_POOL", tmp_path / "none")
    monkeypatch.setattr(build, "DEFAULT_POOL", tmp_path / "none")
    assert main(["--out", str(tmp_path), "--quick"]) == 0
    reason = incomplete_reason(earlier)
    assert reason.startswith("python -m reports.build skipped this step at ")
    assert "no real-run pool under" in reason and reason.endswith("from an earlier build")
    assert (earlier / "paper_table.csv").read_text() == "from an earlier build\n"
    assert incomplete_reason(tmp_path) is None  # the build itself finished
    with pytest.raises(ValueError, match="is marked incomplete"):
        check_complete(earlier / "paper_table.csv", "--table")


def test_profile_reaches_every_step_that_reads_the_pool(tmp_path):
    # A store holding the cpu and paper pools side by side: each pool step gets --profile,
    # and a profile the store lacks is a documented skip, not a failure.
    by_name = {s.name: s for s in build.steps(tmp_path, True, "STORE", 1, 0.05, "paper")}
    for name in ("pitfalls", "paper_table", "paper_figures"):
        argv = by_name[name].argv
        assert argv[argv.index("--profile") + 1] == "paper", name
    assert "--profile" not in by_name["calibrate"].argv
    # the side-by-side table shows every profile of the store, whatever --profile says
    assert "--profile" not in by_name["pool_profiles"].argv
    assert by_name["pool_profiles"].argv[by_name["pool_profiles"].argv.index("--pool") + 1] \
        == "STORE"
    assert "profile 'paper'" in build.missing_pool(FIXTURE_POOL, "paper")
    assert build.missing_pool(FIXTURE_POOL, "fixture") is None


def test_help_works_without_docstrings():
    """``python -OO`` strips ``__doc__``; import and ``--help`` must not need it. Importing
    the reports leaves matplotlib's backend alone."""
    code = ("import contextlib, io, matplotlib\n"
            "matplotlib.use('pdf')\n"
            "import reports.build, reports.pitfalls, reports.paper_table, "
            "reports.paper_figures, reports.pool_profiles\n"
            "assert matplotlib.get_backend() == 'pdf', 'an import chose a backend'\n"
            "for m in (reports.build, reports.pitfalls, reports.paper_table, "
            "reports.paper_figures, reports.pool_profiles):\n"
            "    buf = io.StringIO()\n"
            "    with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):\n"
            "        m.main(['--help'])\n"
            "    assert 'usage:' in buf.getvalue(), m\n"
            "print('ok')")
    proc = subprocess.run([sys.executable, "-OO", "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
