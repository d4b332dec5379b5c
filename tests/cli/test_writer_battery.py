"""Writers and outputs never corrupt anything and never hang (issue 36, battery part 2).

Each case of the outside battery of hostile inputs: a writer only ever replaces a regular
file; a lock or a cache entry that is a symlink or a FIFO neither escapes the output folder
nor blocks; arm names with newlines, ``|``, LaTeX specials or mathtext keep every output
well formed; inputs that would run for minutes with no output are refused at once. Every
refusal is one stderr line with exit code 2. No device file is touched: FIFOs made with
``os.mkfifo`` in ``tmp_path`` stand for every non-regular file (the check is on the file
type, which a FIFO shares with a device: not ``S_ISREG``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import stat
import warnings

import numpy as np
import pandas as pd
import pytest
from in_process import run_in_process

from evalcal_core.atomic import atomic_path, check_target, write_atomic
from evalcal_core.outdir import locked_out

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
needs_timer = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                 reason="needs signal.setitimer")


class _Hung(BaseException):
    """The timer fired: the code under test blocked (a ``BaseException``, so no handler
    of the command catches it)."""


@contextlib.contextmanager
def _deadline(seconds: float):
    """Fail instead of hanging: a blocked FIFO read would otherwise stall the suite."""
    def alarm(signum, frame):
        raise _Hung(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(main, prog, argv):
    """(exit code, stdout, stderr) of ``main(argv)`` as the command line runs it."""
    done = run_in_process(main, prog, *argv)
    return done.returncode, done.stdout, done.stderr


def one_line_refusal(code, err, *words):
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# --------------------------------------------------------------------------------------------
# The atomic writer replaces only a regular file


@needs_fifo
def test_writer_refuses_a_fifo_and_leaves_it(tmp_path):
    fifo = tmp_path / "plot.png"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"plot\.png: it is a FIFO"):
        write_atomic(fifo, b"x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plot.png"]  # no temporary left


def test_writer_refuses_a_folder_and_a_symlink(tmp_path):
    folder = tmp_path / "out.csv"
    folder.mkdir()
    with pytest.raises(ValueError, match="it is a folder"):
        write_atomic(folder, "x")
    real = tmp_path / "real.csv"
    real.write_text("kept\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    with pytest.raises(ValueError, match="it is a symlink"):
        write_atomic(link, "new\n")
    assert link.is_symlink() and real.read_text() == "kept\n"
    # a dangling link is refused too: the rename would not create its target either
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "nowhere.csv")
    with pytest.raises(ValueError, match="symlink"):
        write_atomic(dangling, "x")
    assert not (tmp_path / "nowhere.csv").exists()


def test_writer_replaces_a_regular_file_and_creates_a_new_one(tmp_path):
    old = tmp_path / "a.txt"
    old.write_text("old\n")
    write_atomic(old, "new\n")
    write_atomic(tmp_path / "sub" / "b.txt", "b\n")
    assert old.read_text() == "new\n" and (tmp_path / "sub" / "b.txt").read_text() == "b\n"
    assert check_target(tmp_path / "c.txt") == tmp_path / "c.txt"


@needs_fifo
def test_a_fifo_appearing_during_the_write_is_not_replaced(tmp_path):
    target = tmp_path / "late.png"
    with pytest.raises(ValueError, match="FIFO"), atomic_path(target) as tmp:
        tmp.write_bytes(b"png")
        os.mkfifo(target)  # another process puts a FIFO (or a device) there meanwhile
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["late.png"]


@needs_fifo
def test_plan_figure_onto_a_fifo_is_refused(tmp_path):
    from reports.plan_figure import main

    fifo = tmp_path / "figure.png"
    os.mkfifo(fifo)
    code, _, err = run_cli(main, "python -m reports.plan_figure",
                           ["--sd-seed", "0.5", "--effect", "0.05", "--sims", "0",
                            "--figure", fifo])
    one_line_refusal(code, err, str(fifo), "FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# --------------------------------------------------------------------------------------------
# The lock and the cell cache


def test_a_dangling_lock_symlink_is_refused_and_not_followed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside"
    (out / ".lock").symlink_to(outside)
    with pytest.raises(ValueError, match=r"\.lock is a symlink"), locked_out(out):
        pass
    assert not outside.exists()


@needs_fifo
@needs_timer
def test_a_fifo_lock_is_refused_without_blocking(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / ".lock")
    with _deadline(5.0), pytest.raises(ValueError, match="not a regular file"), \
            locked_out(out):
        pass


def _spec():
    from sim.grid import CellSpec

    return CellSpec(generator="g", generator_params="", protocol="paired_t",
                    protocol_params="", k=3, effect_pp=0.0, sims=10, alpha=0.05, seed=0,
                    chunk=10, data_digest="")


def _row(spec):
    from sim.grid import CellResult

    return CellResult(**vars(spec), rejections=1, rate=0.1, rate_low=0.0, rate_high=0.4,
                      wrong_sign=0, median_ci_width_pp=1.0)


@needs_fifo
@needs_timer
def test_a_fifo_in_the_cell_cache_is_recomputed_not_read(tmp_path):
    from sim.grid import CacheWarning, CellCache

    cache = CellCache(tmp_path)
    spec = _spec()
    cache.dir.mkdir()
    os.mkfifo(cache.path(spec))
    with _deadline(5.0), pytest.warns(CacheWarning, match="not a regular file"):
        assert cache.get(spec) is None
    cache.put(_row(spec))  # the recomputed row takes the FIFO's place
    assert cache.path(spec).is_file() and cache.get(spec) == _row(spec)


def test_a_symlinked_cell_is_not_followed_and_its_target_kept(tmp_path):
    from sim.grid import CacheWarning, CellCache

    cache = CellCache(tmp_path / "run")
    spec = _spec()
    elsewhere = tmp_path / "elsewhere.json"
    cache.put(_row(spec))
    os.replace(cache.path(spec), elsewhere)
    cache.path(spec).symlink_to(elsewhere)
    with pytest.warns(CacheWarning, match="not a regular file"):
        assert cache.get(spec) is None
    cache.put(_row(spec))
    assert not cache.path(spec).is_symlink() and elsewhere.is_file()


def test_cells_that_is_a_file_is_one_line(tmp_path):
    from sim.grid import CellCache

    (tmp_path / "cells").write_text("not a folder\n")
    with pytest.raises(ValueError, match=r"cells is not a folder") as info:
        CellCache(tmp_path)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------------------------
# evaluate: the forest plot, hostile arm names, too many pairs

EVAL = "python -m reports.evaluate"
#: arm names the battery used: CR, tab, newline, a 5,000-character name, mathtext,
#: a markdown cell separator and every LaTeX special
HOSTILE = ("base\rline", "tab\tarm", "new\nline", "x" * 5000, "$\\alpha^2$",
           "a|b", "t{e}x_~^#%&\\")


def _results(path, arms, k=8, seed=1):
    """A per-seed results CSV of ``arms`` (names quoted by pandas: newlines survive)."""
    rng = np.random.default_rng(seed)
    common = rng.normal(0, 0.004, k)
    rows = [{"seed": s, "arm": arm, "metric": round(0.5 + 0.004 * i + common[s]
                                                    + rng.normal(0, 0.003), 5)}
            for i, arm in enumerate(arms) for s in range(k)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _evaluate():
    from reports.evaluate import main

    return main


@pytest.mark.parametrize("value", ["", "plot", "dir/", "plot.pdf", ".png"])
def test_forest_path_must_end_in_png(tmp_path, value):
    csv = _results(tmp_path / "r.csv", ("a", "b"))
    target = tmp_path / value if value else value
    code, _, err = run_cli(_evaluate(), EVAL, [csv, "--forest", target])
    one_line_refusal(code, err, "--forest", ".png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv"]


def test_forest_under_a_file_is_refused_before_the_analysis(tmp_path, monkeypatch):
    from reports.evaluate import cli

    csv = _results(tmp_path / "r.csv", ("a", "b"))
    (tmp_path / "afile").write_text("x\n")
    monkeypatch.setattr(cli, "analyze", lambda *a, **k: pytest.fail("analysed first"))
    code, _, err = run_cli(_evaluate(), EVAL, [csv, "--forest", tmp_path / "afile" / "f.png"])
    one_line_refusal(code, err, "--forest", "is under the file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "r.csv"]


def test_forest_with_hostile_names_is_written_atomically_without_warnings(tmp_path,
                                                                          monkeypatch):
    import matplotlib.axes

    labels = []
    original = matplotlib.axes.Axes.set_xlabel
    monkeypatch.setattr(matplotlib.axes.Axes, "set_xlabel",
                        lambda self, text, *a, **kw: labels.append(text)
                        or original(self, text, *a, **kw))
    # the CR name is checked by ``plot_label`` alone: the results reader splits CSV rows
    # at a bare CR
    csv = _results(tmp_path / "r.csv", HOSTILE[1:5])
    png = tmp_path / "forest.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's glyph and mathtext warnings fail it
        code, out, err = run_cli(_evaluate(), EVAL,
                                 [csv, "--reference", HOSTILE[1], "--forest", png, "--json"])
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forest.png", "r.csv"]
    body = json.loads(out)
    assert body["forest"] == str(png)
    assert [a["name"] for a in body["arms"]] == list(HOSTILE[1:5])  # names unchanged
    assert "Bonferroni-simultaneous" in labels[-1] and "holm" not in labels[-1]


def test_forest_labels_name_the_interval_not_the_step_down():
    from reports.evaluate.forest import INTERVAL_KIND, plot_label

    assert INTERVAL_KIND["holm"] == INTERVAL_KIND["bh"] == INTERVAL_KIND["bonferroni"] \
        == "Bonferroni-simultaneous"
    assert "max-T" in INTERVAL_KIND["maxt"]
    label = plot_label("x" * 5000)
    assert len(label) == 40 and label.endswith("\u2026")
    assert plot_label("$a$\r\t") == r"\$a\$\r\t"


def _unescaped(row: str, char: str) -> int:
    """Occurrences of ``char`` in ``row`` not preceded by a backslash."""
    return len(re.findall(rf"(?<!\\){re.escape(char)}", row))


def test_markdown_rows_keep_their_cells_with_hostile_names(tmp_path):
    csv = _results(tmp_path / "r.csv", HOSTILE[2:] + ("plain",))
    code, out, err = run_cli(_evaluate(), EVAL, [csv, "--format", "markdown"])
    assert code == 0, err
    tables = [[line for line in block.splitlines() if line.startswith("|")]
              for block in out.split("\n\n")]
    tables = [t for t in tables if t]
    assert len(tables) == 3  # comparisons, effect sizes, ranking
    for table in tables:
        cells = {_unescaped(row, "|") for row in table}
        assert len(cells) == 1, table  # every row has the header's cell count
    assert "new\\nline" in out and "new\nline" not in out


_TEX_SPECIAL = "${}~^#%&_"


def test_latex_cells_escape_every_special(tmp_path):
    csv = _results(tmp_path / "r.csv", ("a", HOSTILE[6], HOSTILE[2]))
    code, out, err = run_cli(_evaluate(), EVAL, [csv, "--format", "latex"])
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.endswith("\\\\")]
    header, body = rows[0], rows[1:]
    assert len(body) == 3
    for row in body:
        cells = row[: -len("\\\\")]
        cells = cells.replace(r"\textbackslash{}", "").replace(r"\textasciitilde{}", "") \
            .replace(r"\textasciicircum{}", "")
        for char in _TEX_SPECIAL:
            if char != "&":  # & separates the cells: counted below
                assert _unescaped(cells, char) == 0, (char, row)
        assert _unescaped(cells, "&") == _unescaped(header, "&"), row  # the header's cells
        assert "\\" not in cells.replace("\\$", "").replace("\\{", "").replace("\\}", "") \
            .replace("\\#", "").replace("\\%", "").replace("\\&", "").replace("\\_", "") \
            .replace("\\n", ""), row


def test_text_output_shows_a_newline_in_a_name_as_an_escape(tmp_path):
    csv = _results(tmp_path / "r.csv", ("a", "new\nline"))
    code, out, err = run_cli(_evaluate(), EVAL, [csv])
    assert code == 0, err
    assert "new\\nline" in out
    assert not any(line in ("line", "new") or line.startswith("line ")
                   for line in out.splitlines())


@needs_timer
def test_all_pairs_of_many_arms_is_refused_at_once(tmp_path):
    from protocols.analysis.compare import MAX_PAIRS

    m = 64  # 2,016 pairs: the first count above the cap
    assert m * (m - 1) // 2 > MAX_PAIRS >= (m - 1) * (m - 2) // 2
    csv = _results(tmp_path / "r.csv", [f"arm{i}" for i in range(m)], k=4)
    with _deadline(20.0):
        code, _, err = run_cli(_evaluate(), EVAL, [csv])
    one_line_refusal(code, err, "64 arms make 2,016 pairs", "--leaderboard", "--reference")


def test_pair_cap_boundary():
    from protocols.analysis.compare import MAX_PAIRS, check_pair_count

    check_pair_count(63)  # 1,953 pairs: computed
    with pytest.raises(ValueError, match="500 arms make 124,750 pairs"):
        check_pair_count(500)
    assert MAX_PAIRS == 2000


# --------------------------------------------------------------------------------------------
# sim.plan and sim.design_check


def _plan(argv):
    from sim.plan import main

    return run_cli(main, "python -m sim.plan", argv)


@pytest.mark.parametrize(("argv", "words"), [
    (["--cost", "seed=0", "question=0", "repeat=0"], ["--cost", "all 0"]),
    # models pay no seed: a seed cost alone leaves every models design free
    (["--design", "models", "--sd-question", "0.5", "--cost", "seed=5"],
     ["--cost", "question, repeat", "all 0"]),
    (["--cost", "seed=1e308"], ["--cost", "finite cost", "seed=1e+308"]),
    (["--cost", "question=1e305", "repeat=1e305"], ["--cost", "finite cost"]),
    (["--k-max", "1e9"], ["--k-max", "1e9"]),
    (["--k-max", "1000000000"], ["--k-max", "<= 1000", "1000000000"]),
])
def test_plan_refuses_costs_and_bounds(argv, words):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning would be a failure
        # fixed models have no seed component: their case states --sd-question instead
        seed = [] if "--design" in argv else ["--sd-seed", "0.5"]
        code, out, err = _plan([*seed, "--effect", "0.05", "--sims", "0", *argv])
    one_line_refusal(code, err, *words)
    assert out == ""


def test_check_sims_bounds_the_simulated_cells():
    from sim.plan_search import MIN_CHECK_SIMS, SIM_CELLS_LIMIT, check_sims

    assert check_sims(2000, "methods", 10, 100) == 2000  # 2e6 cells: untouched
    assert check_sims(20_000, "models", 1, 10**5) == SIM_CELLS_LIMIT // 10**5
    reduced = check_sims(20_000, "methods", 50, 10**5)
    assert reduced * 50 * 10**5 <= SIM_CELLS_LIMIT or reduced == 0
    assert check_sims(20_000, "methods", 1000, 10**7) == 0  # not even MIN_CHECK_SIMS fit
    assert check_sims(MIN_CHECK_SIMS, "models", 1, SIM_CELLS_LIMIT // MIN_CHECK_SIMS) \
        == MIN_CHECK_SIMS


@needs_timer
def test_plan_with_a_million_questions_reduces_sims_and_says_so():
    # a tiny effect on noisy questions needs n ~ 1e6: 20,000 sims would draw 2e10 cells
    # per checked design; the bound keeps each at 1e8 (about 2 s on one core)
    with _deadline(120.0):
        code, out, err = _plan(["--design", "models", "--sd-question", "0.5",
                                "--effect", "0.001", "--n-max", "2000000", "--sims", "20000",
                                "--show", "1"])
    assert code == 0, err
    assert "note: sims reduced" in out and "cost 0 " not in out
    n = int(re.search(r"chosen: n = ([\d,]+) questions", out).group(1).replace(",", ""))
    assert n > 10**5  # large enough that the unbounded check would have taken minutes


def test_design_check_with_more_clusters_than_questions_is_refused(tmp_path):
    from sim.design_check import main

    out = tmp_path / "dc"
    code, _, err = run_cli(main, "python -m sim.design_check",
                           ["--design", "models_clustered", "--questions", "10",
                            "--clusters", "20", "--quiet", "--out", out])
    one_line_refusal(code, err, "clusters", "[20]")
    assert not (out / "design_check.csv").exists()
