"""``reports.pitfalls``: the quick report on the fixture pool.

Checks that every section and embedded figure is there, that every number in the text is the
CSV cell it names, that the printed ``sim.calibrate`` commands reproduce the report's numbers
(consistency with the command line, not an outside reference), that the vectorized Holm
correction equals statsmodels ``multipletests(method='holm')`` (outside reference), that the
simulated rates sit within binomial error of analytic values, and that the page renders in
headless Chromium.
"""

import base64
import io
import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _chromium import assert_not_blank, needs_chromium, screenshot
from _synthetic_store import store_with_seeds
from multitest_reference import multipletests
from PIL import Image

from reports._many_variants import holm_adjust
from reports.pitfalls import (
    QUICK,
    Context,
    Settings,
    scan_pools,
)
from reports.pitfalls.s1_single_run import section_single_run
from reports.pitfalls.s2_pairing import section_pairing
from reports.pitfalls.s7_many_variants import section_family
from sim import calibrate as calibrate_cli
from sim import generators
from sim.grid import cell_deltas

REPO = Path(__file__).resolve().parents[2]
SECTIONS = range(1, 10)


class _Page(HTMLParser):
    """Numbers (``span.num``), images and commands of the page, by section."""

    def __init__(self):
        super().__init__()
        self.section = None
        self.sections = {}
        self._span = None
        self._code = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.section = int(attrs["id"].removeprefix("section"))
            self.sections[self.section] = {"nums": [], "images": [], "commands": []}
        elif tag == "span" and attrs.get("class") == "num":
            self._span = dict(attrs, text="")
        elif tag == "img":
            self.sections[self.section]["images"].append(attrs["src"])
        elif tag == "code":
            self._code = ""

    def handle_data(self, data):
        if self._span is not None:
            self._span["text"] += data
        if self._code is not None:
            self._code += data

    def handle_endtag(self, tag):
        if tag == "span" and self._span is not None:
            self.sections[self.section]["nums"].append(self._span)
            self._span = None
        elif tag == "code" and self._code is not None:
            self.sections[self.section]["commands"] += self._code.splitlines()
            self._code = None


@pytest.fixture(scope="module")
def report(quick_build):
    """The quick report on the fixture pool, as the quick build wrote it
    (``tests/reports/conftest.py``)."""
    out = quick_build / "pitfalls"
    page = _Page()
    page.feed((out / "index.html").read_text(encoding="utf-8"))
    return out, page


def _shown(value, fmt, scale):
    x = float(value) * float(scale)
    return format(int(round(x)), fmt) if fmt.endswith("d") else format(x, fmt)


def test_every_section_has_figure_numbers_and_command(report):
    out, page = report
    html = (out / "index.html").read_text(encoding="utf-8")
    assert sorted(page.sections) == list(SECTIONS)
    for number, section in page.sections.items():
        assert len(section["images"]) == 1, number
        src = section["images"][0]
        assert src.startswith("data:image/png;base64,")
        image = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
        assert image.format == "PNG" and image.width >= 600 and image.height >= 300
        assert len(section["nums"]) >= 4, number
        assert section["commands"], number
        assert (out / f"section{number}.csv").is_file()
        assert (out / f"section{number}.png").is_file()
    # Self-contained: nothing is fetched from elsewhere.
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    assert "<script" not in html and "<link" not in html
    assert "td { white-space: nowrap; }" in html  # an interval never wraps mid-cell
    readme = (out / "README.md").read_text(encoding="utf-8")
    for number in SECTIONS:
        assert f"## {number}. " in readme
        assert f"](section{number}.png)" in readme


def test_every_number_is_its_csv_cell(report):
    out, page = report
    frames = {}
    for section in page.sections.values():
        for num in section["nums"]:
            name, row, col = num["data-src"].split(":")
            frame = frames.setdefault(name, pd.read_csv(out / name))
            value = frame.at[int(row), col]
            assert num["text"] == _shown(value, num["data-fmt"], num["data-scale"]), num


def test_readme_shows_the_same_numbers(report):
    out, page = report
    readme = (out / "README.md").read_text(encoding="utf-8")
    parts = re.split(r"^## (\d+)\. ", readme, flags=re.M)
    by_section = {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}
    for number, section in page.sections.items():
        text, position = by_section[number], 0
        for num in section["nums"]:
            found = text.find(num["text"], position)
            assert found >= 0, (number, num)
            position = found + len(num["text"])


def _run(argv) -> str:
    """A printed ``python -m ...`` command run as the user would, in a process of its own
    (the bound's linear program holds about 0.4 GB: not added to the test runner's); its
    standard output."""
    proc = subprocess.run([sys.executable, *argv[1:]], cwd=REPO, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.parametrize("section, which", [(1, 1), (4, 0)])
def test_command_prints_the_report_numbers(report, tmp_path, section, which):
    """Consistency: the printed command, run through the CLI, gives the section's rows."""
    out, page = report
    line = page.sections[section]["commands"][which]
    argv = shlex.split(line)
    assert argv[:3] == ["python", "-m", "sim.calibrate"]
    assert calibrate_cli.main(argv[3:] + ["--out", str(tmp_path), "--quiet", "--no-plot",
                                          "--jobs", "1"]) == 0
    cli = pd.read_csv(tmp_path / "calibration.csv")
    ours = pd.read_csv(out / f"section{section}.csv")
    merged = cli.merge(ours, on=["generator_params", "protocol", "k", "effect_pp"],
                       suffixes=("_cli", "_report"))
    assert len(merged) == len(cli) > 0
    for col in ("rejections", "rate", "rate_low", "rate_high", "sims"):
        np.testing.assert_array_equal(merged[f"{col}_cli"], merged[f"{col}_report"])


def test_sequential_command_prints_the_report_numbers(report, tmp_path):
    """Consistency: section 8's printed ``sim.sequential`` command gives the section's rows."""
    from reports import sequential

    out, page = report
    argv = shlex.split(page.sections[8]["commands"][0])
    assert argv[:3] == ["python", "-m", "sim.sequential"]
    assert sequential.main(argv[3:] + ["--out", str(tmp_path), "--quiet", "--no-plot"]) == 0
    cli = pd.read_csv(tmp_path / "sequential.csv")
    ours = pd.read_csv(out / "section8.csv")
    assert len(cli) == len(ours) > 0
    for col in ("design", "k_max", "effect_pp", "rejections", "rate", "mean_seeds"):
        np.testing.assert_array_equal(cli[col], ours[col])


def test_power_bound_command_prints_the_report_numbers(report):
    """Consistency: section 9's printed ``sim.seed_power_bound`` command prints the rows of
    ``section9_bound.csv`` (powers to 0.1%)."""
    out, page = report
    argv = shlex.split(page.sections[9]["commands"][-1])
    assert argv[:3] == ["python", "-m", "sim.seed_power_bound"]
    printed = {int(line.split()[0]): line.split()[1:] for line in _run(argv).splitlines()
               if line.split()[:1] and line.split()[0].isdigit()}
    ours = pd.read_csv(out / "section9_bound.csv")
    assert sorted(printed) == sorted(ours.k) and len(ours) > 0
    for row in ours.itertuples():
        assert printed[row.k] == [f"{100 * row.bound:.1f}%", f"{100 * row.paired_t:.1f}%",
                                  f"{100 * row.questions_only:.1f}%"]


def test_single_run_histogram_is_the_calibrated_cell(report):
    """The figure's deltas are the very experiments ``single_run`` was scored on."""
    out, _ = report
    row = pd.read_csv(out / "section1.csv").query("source == 'seed_gaussian'").iloc[0]
    deltas = cell_deltas(generators.get("seed_gaussian"), 1, 0.0, int(row.sims), 0)
    assert int((np.abs(deltas) >= 0.01 - 1e-12).sum()) == row.rejections


def test_rates_within_binomial_error_of_theory(report):
    """Anchors: P(|N(0, 0.5 pp)| >= 1 pp) = 2 Phi(-2); paired_t and Holm hold alpha; with
    m variants the uncorrected family-wise rate is at most 1 - (1 - alpha)^m."""
    out, _ = report
    one = pd.read_csv(out / "section1.csv").query("source == 'seed_gaussian'").iloc[0]
    se = np.sqrt(one.analytic_rate * (1 - one.analytic_rate) / one.sims)
    assert abs(one.rate - one.analytic_rate) < 4 * se
    assert one.analytic_rate == pytest.approx(0.0455, abs=1e-4)
    fam = pd.read_csv(out / "section7.csv")
    assert (fam.sims == QUICK["sims_family"]).all()
    se = np.sqrt(0.05 * 0.95 / fam.sims)
    holm = fam[fam.correction == "holm"]
    assert (holm.rate < 0.05 + 4 * se[holm.index]).all()
    none = fam[fam.correction == "none"]
    assert abs(none.rate.iloc[0] - 0.05) < 4 * se.iloc[0]  # m = 1
    assert (none.rate <= none.independent_rate + 4 * np.sqrt(
        none.independent_rate * (1 - none.independent_rate) / none.sims)).all()
    assert (none.rate.diff().dropna() > 0).all()
    small = pd.read_csv(out / "section3.csv")
    assert (small[small.k <= 5].query("protocol == 'paired_bca_perm'").rejections == 0).all()
    assert (small.min_sign_flip_p == 2.0 / 2.0**small.k).all()


@pytest.mark.parametrize("m", [1, 3, 20])
def test_holm_matches_statsmodels(m):
    """Reference: statsmodels ``multipletests(method='holm')``, row by row, with ties."""
    rng = np.random.default_rng(m)
    p = rng.random((8, m)) ** 3
    p[::3, :] = np.round(p[::3, :], 1)  # ties
    adjusted = holm_adjust(p)
    for row, adj in zip(p, adjusted):
        reject, ref, _, _ = multipletests(row, alpha=0.05, method="holm")
        np.testing.assert_allclose(adj, ref, rtol=1e-12)
        np.testing.assert_array_equal(adj <= 0.05, reject)


def test_missing_pool_is_skipped_with_a_line(tmp_path):
    scan = scan_pools(str(tmp_path / "no_pool"))
    assert scan.pools == () and "No real-run pool" in scan.notes[0]
    ctx = Context(Settings(**QUICK, pool=str(tmp_path / "no_pool"), quick=True), tmp_path,
                  tmp_path / "cells")
    one = section_single_run(ctx, scan)
    two = section_pairing(ctx, scan)
    assert any("No real-run pool" in note for note in one.notes + two.notes)
    assert one.figure and two.figure
    assert len(pd.read_csv(tmp_path / "section1.csv")) == 1
    assert not (tmp_path / "section2_pools.csv").exists()


def test_pools_of_one_profile_in_a_two_profile_store(tmp_path):
    # With the cpu and paper pools side by side, the report skips the pools (saying why)
    # unless a profile is named; the commands it prints then name that profile too.
    from reports.pitfalls._context import pool_params

    root = store_with_seeds(tmp_path, seeds=12, profile="cpu")
    store_with_seeds(tmp_path, seeds=12, profile="paper")
    scan = scan_pools(root)
    assert scan.pools == () and all("profile must be given" in n for n in scan.notes)
    scan = scan_pools(root, "paper")
    assert [(p.dataset, p.scenario, p.profile) for p in scan.pools] == [
        ("cifar10", "S0p", "paper"), ("cifar10", "S1", "paper")]
    assert "profile=paper" in pool_params(scan.pools[0])
    # the store is --pool ROOT in the commands, never a --param
    assert not any(p.startswith("root=") for p in pool_params(scan.pools[0]))
    rebuilt = generators.get("real_pool", root=root, **dict(x.split("=", 1)
                                                            for x in pool_params(scan.pools[1])))
    np.testing.assert_array_equal(rebuilt.pool()[1], scan.pools[1].pool()[1])


def test_cli_error_is_one_line_exit_2():
    proc = subprocess.run([sys.executable, "-m", "reports.pitfalls", "--jobs", "0"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "python -m reports.pitfalls: error: The '--jobs' option must be an integer >= 1 and "
        "<= 4096. Got 0 instead."]


@needs_chromium
def test_page_renders_in_headless_chromium(report, tmp_path):
    out, _ = report
    shot = tmp_path / "page.png"
    screenshot(out / "index.html", shot, tmp_path / "profile")
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 3000)
    assert_not_blank(image)


def test_alpha_flows_into_commands_sections_and_text(tmp_path):
    """``--alpha`` reaches the printed commands, the simulated rates and the sentences."""
    settings = Settings(**dict(QUICK, sims_family=200), quick=True, alpha=0.1)
    ctx = Context(settings, tmp_path, tmp_path / "cells")
    command = ctx.command("seed_gaussian", (), (3,), (0.0,), ("paired_t",), sims=20)
    assert command.shell().endswith("--alpha 0.1")
    assert (command.run()["alpha"] == 0.1).all()
    section = section_family(ctx, scan_pools(str(tmp_path / "no_pool")))
    frame = pd.read_csv(tmp_path / "section7.csv")
    assert (frame["alpha"] == 0.1).all()
    assert np.allclose(frame["independent_rate"], 1 - 0.9 ** frame["m"])
    assert section.commands[0].startswith("python -m reports.pitfalls --seed 0 --quick "
                                          "--alpha 0.1")
    default = Context(Settings(**QUICK), tmp_path, tmp_path / "cells")
    assert "--alpha" not in default.command("seed_gaussian", (), (3,), (0.0,),
                                            ("paired_t",)).shell()
