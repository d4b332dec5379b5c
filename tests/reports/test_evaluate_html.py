"""``evaluate ... --html PAGE.html`` and the notebook views (issue 47 item 2): the page's
content (design, verdict, plot, evidence, notes, the harness default beside the verdict),
hostile names escaped, a 200-character name whole, the page checked in headless Chromium at
1,300 px and at a phone's 390 px with no label clipped."""

from __future__ import annotations

import base64
import html
import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _chromium import CHROMIUM, assert_not_blank, needs_chromium, screenshot
from in_process import run_in_process
from test_harness_logs import inspect_sample, lm_row, write_inspect, write_lm_eval

import protocols as protocols_package
from evalcal_core import readers
from protocols import names as protocol_names
from protocols import protocol_class
from reports.evaluate import compare, main
from reports.evaluate import harness as harness_module
from reports.evaluate.harness import harness_view, nearest_measured
from reports.evaluate.html import page

PROG = "python -m reports.evaluate"
LONG = ("meta-llama/Llama-3.1-405B-Instruct-Turbo-" + "finetuned-on-a-long-suffix-" * 7)[:200]
HOSTILE = ("<script>alert(1)</script>", "A & B", LONG)
#: the shipped harness-defaults table and its sidecar (sim.harness_defaults writes both)
SHIPPED_CSV = Path(protocols_package.__file__).parent / "evidence" / "harness_defaults.csv"
SHIPPED_JSON = SHIPPED_CSV.with_suffix(".json")


def _frame(names=HOSTILE, n=80, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"seed": 0, "arm": arm, "question": f"q{q}",
                          "score": int(rng.random() < 0.5 + 0.1 * i)}
                         for i, arm in enumerate(names) for q in range(n)])


def _png(text: str) -> bytes:
    (data,) = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    return base64.b64decode(data)


def test_page_holds_the_verdict_evidence_and_escaped_names():
    result = compare(_frame())
    text = page(result)
    # every user string escaped: no live tag, the ampersand as an entity, the long name whole
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "A &amp; B" in text and "A & B" not in text
    assert html.escape(LONG) in text
    # the design and why, the verdict row of each comparison, the evidence's first line
    assert f"design: {result.design.describe()}" in text and "inferred: " in text
    for c in result.analysis.comparisons:
        verdict = "significant" if c.significant else "not significant"
        pair = html.escape(f"{c.variant} - {c.base}")
        assert re.search(rf">{re.escape(pair)}</td>.*?>{verdict}</td>", text)
    assert html.escape(result.evidence_lines()[0]) in text
    assert html.escape(result.evidence_lines()[1].strip()) in text
    # self-contained: the plot inline, nothing fetched
    assert _png(text)[:8] == b"\x89PNG\r\n\x1a\n"
    assert not re.search(r'(src|href)="(https?:)?//', text) and "@import" not in text
    # a results CSV: no harness default, said so
    assert "the arms came from a results CSV" in text


def test_the_plots_caption_names_only_the_intervals_drawn():
    """Every comparison refused (a dominant cluster): the caption says no interval is drawn,
    as the plot's x-label does; with verdicts, it names the thick and thin bars."""
    rng = np.random.default_rng(0)
    sizes = np.full(10, 1)
    sizes[0] = 200 - 9
    topics = np.repeat([f"t{g}" for g in range(10)], sizes)
    frame = pd.DataFrame([{"seed": 0, "arm": arm, "question": f"q{q}", "topic": topics[q],
                           "score": int(rng.random() < 0.6)}
                          for arm in ("a0", "a1", "a2") for q in range(200)])
    refused = page(compare(frame, design="models_clustered", cluster="topic", reference="a0"))
    assert ("<figcaption>each comparison&#x27;s estimate alone: none was given a verdict, so "
            "no interval is drawn (see the notes)</figcaption>") in refused
    assert "thick" not in refused
    plain = page(compare(_frame(("a", "b"))))
    assert ("<figcaption>each comparison&#x27;s difference; thick: 95% Bonferroni-simultaneous "
            "interval, thin above: unadjusted</figcaption>") in plain


def test_board_page_holds_the_leaderboard():
    result = compare(_frame(), leaderboard=True)
    text = page(result)
    rows = result.to_dict()["leaderboard"]["rows"]
    for r in rows:
        assert f">{html.escape(r['system'])}</td>" in text
    assert "possibly best" in text and _png(text)[:4] == b"\x89PNG"


def _inspect_arms(tmp_path, epochs=2, n=40, seed=3):
    rng = np.random.default_rng(seed)
    right = {arm: rng.random((epochs, n)) < p for arm, p in (("baseline", 0.45),
                                                             ("variant", 0.75))}
    paths = {arm: write_inspect(tmp_path / f"{arm}.eval", [
        inspect_sample(q + 1, e + 1, s="C" if table[e, q] else "I")
        for q in range(n) for e in range(epochs)]) for arm, table in right.items()}
    return paths, right


def test_harness_default_of_inspect_logs_is_its_stderr_overlap(tmp_path):
    """The page runs Inspect's stderr() overlap on the same arms; checked against the
    formula by hand (each question's mean over epochs, mean +- 1.96 sd/sqrt(n), ddof 1,
    significant iff the two intervals are disjoint)."""
    paths, right = _inspect_arms(tmp_path)
    result = compare(arms=paths)
    view = harness_view(result)
    assert view.protocol == "harness_inspect_stderr" and view.formats == ("inspect",)
    ((_, row, why),) = view.rows
    assert why == "" and row is not None
    values = {arm: table.mean(axis=0) for arm, table in right.items()}
    bounds = {arm: (v.mean() - 1.959963984540054 * v.std(ddof=1) / np.sqrt(v.size),
                    v.mean() + 1.959963984540054 * v.std(ddof=1) / np.sqrt(v.size))
              for arm, v in values.items()}
    low = bounds["variant"][0] - bounds["baseline"][1]
    high = bounds["variant"][1] - bounds["baseline"][0]
    assert row.ci_low_pp == pytest.approx(100 * low, abs=1e-9)
    assert row.ci_high_pp == pytest.approx(100 * high, abs=1e-9)
    assert row.significant == bool(low > 0 or high < 0)
    text = page(result)
    assert "harness_inspect_stderr" in text and "Inspect stderr(), interval overlap" in text
    assert "Measured false-positive rate of <code>harness_inspect_stderr</code>" in text
    assert html.escape(f"Under this design evalcal labels it: {row.pitfall}.") in text
    assert row.pitfall  # an overlap of two intervals is conservative under every design


def _lm_eval_arms(tmp_path, n=100, seed=4):
    rng = np.random.default_rng(seed)
    return {arm: write_lm_eval(tmp_path / arm, "arc_easy", [
        lm_row(q, acc=float(rng.random() < p)) for q in range(n)])
        for arm, p in (("baseline", 0.5), ("variant", 0.6))}


def _independent_nearest(frame, protocol, kind, runs, n):
    """The harness view's cell rule written again from its docstring: same protocol and
    kind, the runs per arm nearest ``runs``, the question count nearest ``n`` on a log
    scale, and among the rows left the highest rate."""
    cells = frame[(frame.protocol == protocol) & (frame.kind == kind)]
    cells = cells[(cells.k - runs).abs() == (cells.k - runs).abs().min()]
    gap = (np.log(cells.n_questions) - np.log(n)).abs()
    cells = cells[np.isclose(gap, gap.min())]
    return cells.sort_values("rate").iloc[-1], len(cells)


@pytest.mark.parametrize("logs, protocol, shape", [
    # Inspect, 2 epochs of 40 questions: no synthetic cell has 2 runs, the nearest real
    # A/A cell with 2 attempts per arm does (one row per model: the worst is shown)
    ("inspect", "harness_inspect_stderr", (2, 40)),
    # Inspect, 4 epochs of 200 questions, and lm-eval, one run of 100 documents: exactly a
    # synthetic cell of the table (models, 4 runs, n = 200; models, 1 run, n = 100)
    ("inspect", "harness_inspect_stderr", (4, 200)),
    ("lm-eval", "harness_lm_eval_overlap", (1, 100)),
])
def test_page_shows_the_shipped_measured_rate_of_the_harness_default(tmp_path, logs,
                                                                      protocol, shape):
    """With the shipped table, the page built from harness logs shows the measured rate of
    the logs' harness default: the numbers of the shipped CSV's row read here with pandas
    (the nearest-cell rule re-implemented), and the table's command and code version."""
    runs, n = shape
    paths = (_inspect_arms(tmp_path, epochs=runs, n=n)[0] if logs == "inspect"
             else _lm_eval_arms(tmp_path, n=n))
    result = compare(arms=paths)
    view = harness_view(result)
    assert view.protocol == protocol and view.formats == (logs,)
    assert (result.design.runs, result.design.n_questions) == shape
    frame = pd.read_csv(SHIPPED_CSV)
    row, tied = _independent_nearest(frame, protocol, result.design.kind, runs, n)
    if runs != 2:  # the exact synthetic cells
        assert tied == 1 and (row.k, row.n_questions) == shape
        assert row.group == f"models ({runs} run{'s' if runs > 1 else ''})"
    else:
        assert tied > 1 and row.k == 2 and "A/A" in row.group
    assert view.measured["rate"] == row.rate and view.measured["group"] == row.group
    assert view.measured["tied"] == tied
    meta = json.loads(SHIPPED_JSON.read_text())
    text = page(result)
    assert (f"<strong>{100 * row.rate:.1f}%</strong> [{100 * row.rate_low:.1f}%, "
            f"{100 * row.rate_high:.1f}%] ({row.state}, {row.sims:,} experiments), from the "
            f"shipped harness-defaults table ({html.escape(meta['command'])}, code "
            f"{meta['code_version']}, {meta['date']})") in text
    assert html.escape(f"nearest cell ({row.group}, {row.n_questions:,} questions") in text
    assert ("rows of this shape" in text) == (tied > 1)


def test_shipped_table_agrees_with_its_sidecar_and_covers_every_harness_default():
    """protocols/evidence/harness_defaults.csv and .json: the sidecar's row count is the
    CSV's, the columns the view reads are there with rates as fractions inside their
    intervals, and every reader's registered harness default has cells of its design."""
    frame = pd.read_csv(SHIPPED_CSV)
    meta = json.loads(SHIPPED_JSON.read_text())
    assert meta["rows"] == len(frame) > 0
    assert meta["command"].startswith("python -m sim.harness_defaults ")
    assert meta["code_version"] and meta["date"]
    read = {"protocol", "kind", "k", "n_questions", "rate", "rate_low", "rate_high", "state",
            "group", "sims"}
    assert read <= set(frame.columns) and not frame[sorted(read)].isna().any().any()
    assert ((frame.rate_low <= frame.rate) & (frame.rate <= frame.rate_high)).all()
    assert frame.rate.between(0, 1).all()
    for name in readers.names():
        reader = readers.get(name)
        for default, kind in ((reader.harness_default, "models"),
                              (reader.harness_default_clustered, "models_clustered")):
            if default:
                assert ((frame.protocol == default) & (frame.kind == kind)).any(), (name,
                                                                                   default)
    # what the view reads is what is shipped
    assert harness_module.shipped_provenance() == meta
    assert len(harness_module.shipped_table()) == len(frame)


def test_measured_rate_is_read_from_a_harness_defaults_table(tmp_path):
    """With a table in sim.harness_defaults' columns, the nearest cell of this kind and
    protocol is shown: the same runs per arm, then the nearest question count."""
    paths, _ = _inspect_arms(tmp_path, epochs=2, n=40)
    result = compare(arms=paths)
    kind = result.design.kind
    rows = [{"group": f"g{n}-{k}", "kind": kind, "protocol": "harness_inspect_stderr",
             "n_questions": n, "k": k, "sims": 4000, "rate": rate, "rate_low": rate - 0.01,
             "rate_high": rate + 0.01, "state": "holds"}
            for n, k, rate in ((30, 2, 0.011), (1000, 2, 0.022), (40, 1, 0.033))]
    rows.append({**rows[0], "kind": "other", "rate": 0.5})
    table = tmp_path / "harness_defaults.csv"
    pd.DataFrame(rows).to_csv(table, index=False)
    measured = nearest_measured(pd.read_csv(table), "harness_inspect_stderr", result.design)
    assert (measured["group"], measured["rate"]) == ("g30-2", 0.011)
    text = result.page(harness_table=table)
    assert "<strong>1.1%</strong> [0.1%, 2.1%]" in text and "g30-2" in text
    # a table passed is named by its path, not as the shipped one
    assert f"from the harness-defaults table {html.escape(str(table))}." in text
    assert "shipped" not in text.split("Measured false-positive rate")[1].split("</p>")[0]


def test_every_reader_names_a_registered_harness_default():
    harness = {n for n in protocol_names() if protocol_class(n).harness}
    for name in readers.names():
        reader = readers.get(name)
        for default in (reader.harness_default, reader.harness_default_clustered):
            assert default == "" or default in harness, (name, default)
    assert readers.get("lm-eval").harness_default == "harness_lm_eval_overlap"


def test_repr_is_the_verdict_table_and_repr_html_adds_the_evidence():
    result = compare(_frame(("base", "variant")))
    text = repr(result)
    assert not text.startswith("Evaluation(") and "config=" not in text
    assert text == str(result).split("\n\neffect sizes:")[0]
    assert re.search(r"\ncomparison +difference \(pp\) +95% CI \(pp\)", text)
    shown = result._repr_html_()
    verdict = "significant" if result.analysis.comparisons[0].significant else "not significant"
    assert "<table>" in shown and f">{verdict}</td>" in shown
    assert html.escape(result.evidence_lines()[0]) in shown
    assert "DataFrame" not in shown and "<th>" not in shown  # not pandas' raw frame


def test_html_option_writes_the_page_atomically(tmp_path):
    csv = tmp_path / "r.csv"
    _frame(("base", "variant")).to_csv(csv, index=False)
    out = tmp_path / "out" / "page.html"
    done = run_in_process(main, PROG, csv, "--html", out, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["comparisons"]
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in out.parent.iterdir()) == ["page.html"]


@pytest.mark.parametrize("bad", ["page.png", "", "dir/", ".html"])
def test_html_path_refused_before_any_work(tmp_path, bad):
    done = run_in_process(main, PROG, tmp_path / "missing.csv", "--html", bad)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "--html" in done.stderr and "Traceback" not in done.stderr


# --- headless Chromium ------------------------------------------------------------------------

#: a wrapper page holding the page in an iframe of the tested width (headless Chromium will
#: not open a window narrower than about 500 px, so a phone's 390 px is the iframe's); when
#: the page has loaded, every element of it whose content overflows its box, or whose box
#: runs past the page's width, is listed in the wrapper's data-clipped attribute
WRAPPER = """<!DOCTYPE html><html><head><meta charset="utf-8">
<style>body {{ margin: 0; }} iframe {{ border: 0; display: block; }}</style></head>
<body><iframe width="{width}" height="{height}" srcdoc="{page}"></iframe><script>
const frame = document.querySelector('iframe');
frame.addEventListener('load', () => {{
  const win = frame.contentWindow, doc = frame.contentDocument, out = [];
  const width = doc.documentElement.clientWidth;
  for (const el of doc.body.querySelectorAll('*')) {{
    const r = el.getBoundingClientRect();
    if (el.scrollWidth > el.clientWidth + 1 && win.getComputedStyle(el).overflowX !== 'visible')
      out.push('overflow:' + el.tagName);
    if (r.width > 0 && (r.right > width + 1 || r.left < -1)) out.push('outside:' + el.tagName);
  }}
  if (doc.documentElement.scrollWidth > width + 1) out.push('page scrolls sideways');
  const img = doc.querySelector('img');
  if (!img || !img.complete || img.naturalWidth === 0) out.push('image not decoded');
  document.body.setAttribute('data-clipped', out.join(',') || 'none');
  document.body.setAttribute('data-width', String(width));
}});
</script></body></html>"""


def wrapped(page_text: str, width: int, height: int = 2400) -> str:
    """:data:`WRAPPER` around ``page_text``, shown ``width`` px wide."""
    return WRAPPER.format(width=width, height=height, page=html.escape(page_text, quote=True))


def _dump_dom(page_path, profile, window_width):
    import subprocess

    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", f"--window-size={window_width},2400", "--dump-dom",
           page_path.resolve().as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          start_new_session=True).stdout


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize("width", [1300, 390])
@pytest.mark.parametrize("leaderboard", [False, True])
def test_page_renders_with_every_label_whole(tmp_path, width, leaderboard):
    """The page at a desktop's 1,300 px and a phone's 390 px: a screenshot that is not blank,
    and in the live DOM no element clipped or past the page's width (the long name wraps)."""
    from PIL import Image

    result = compare(_frame(), leaderboard=leaderboard)
    path = tmp_path / "page.html"
    result.write_page(path)
    frame = tmp_path / "frame.html"
    frame.write_text(wrapped(path.read_text(encoding="utf-8"), width), encoding="utf-8")
    window = max(width, 600)
    shot = tmp_path / f"shot_{width}.png"
    screenshot(frame, shot, tmp_path / "profile", size=(window, 2400))
    assert_not_blank(Image.open(shot).convert("RGB").crop((0, 0, width, 2400)))
    dom = _dump_dom(frame, tmp_path / "profile2", window)
    clipped = re.search(r'data-clipped="([^"]*)"', dom)
    assert clipped is not None, dom[:300]
    # the iframe's width less a scrollbar at most
    assert width - 20 <= int(re.search(r'data-width="(\d+)"', dom).group(1)) <= width
    assert clipped.group(1) == "none"


@pytest.mark.slow
@needs_chromium
def test_the_layout_probe_sees_a_clipped_name(tmp_path):
    """The check above can fail: with the names' cells kept on one line, the 200-character
    name runs past a phone's 390 px and the probe lists it."""
    text = compare(_frame()).page().replace("td.name { overflow-wrap: anywhere;",
                                            "td.name { white-space: nowrap;")
    assert "td.name { white-space: nowrap;" in text
    frame = tmp_path / "frame.html"
    frame.write_text(wrapped(text, 390), encoding="utf-8")
    dom = _dump_dom(frame, tmp_path / "profile", 600)
    clipped = re.search(r'data-clipped="([^"]*)"', dom).group(1)
    assert clipped != "none" and "page scrolls sideways" in clipped


def test_stream_lines_are_on_the_page():
    frame = _frame(("base", "variant"))
    result = compare(frame, stream=True)
    text = page(result)
    from reports.evaluate.stream import stream_lines

    lines = stream_lines(result.stream, list(result.scores.arms), result.units, gate=False)
    assert "Anytime-valid stream" in text
    assert all(html.escape(line.strip()) in text for line in lines if line.strip())


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_html_refuses_a_target_that_is_no_regular_file(tmp_path, kind):
    csv = tmp_path / "r.csv"
    _frame(("base", "variant")).to_csv(csv, index=False)
    if kind == "symlink":
        target = tmp_path / "link.html"
        (tmp_path / "real.txt").write_text("keep")
        target.symlink_to(tmp_path / "real.txt")
    else:
        target = tmp_path / "fifo.html"
        os.mkfifo(target)
    done = run_in_process(main, PROG, csv, "--html", target)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "--html" in done.stderr and "refusing to write" in done.stderr
    if kind == "symlink":
        assert (tmp_path / "real.txt").read_text() == "keep" and target.is_symlink()
