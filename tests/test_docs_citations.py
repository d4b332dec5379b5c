"""Every path, command, option and link that README.md and docs/*.md cite is alive.

Three checks over the README and every page of ``docs/``:

(a) a repository path cited in backticks (it contains "/" or ends in
    .py/.md/.csv/.json) exists in the checkout; a bare file name (no "/") exists somewhere
    in it or is named by the package's source (an output file a command writes);
(b) every ``python -m MODULE ...`` and ``evalcal NAME ...`` shown names an importable module
    (``importlib.util.find_spec``; for ``evalcal NAME`` its subcommand's module, from
    ``evalcal_cli.SUBCOMMANDS``) and every ``--option`` after it on that line appears in
    its ``--help`` text (``python -m MODULE --help`` or ``evalcal NAME --help`` as runpy
    runs it, every one in one child process in a temporary directory);
(c) every link resolves against its page (files and folders of the checkout, and anchors
    by GitHub's heading slugs).

The reference for (b) is the command-line parser itself (its ``--help`` output), for (a)
and (c) the file system; nothing here is statistical.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from evalcal_cli import SUBCOMMANDS

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: lines citing a user's own files (hypothetical): skipped by the path check only
HYPOTHETICAL = re.compile(
    r"(?<![\w./-])(my_results\.csv|my_runs\.csv|pool\.csv|logs/|evals/|runs/)")
#: prefixes of paths that are outputs or live outside the checkout, with why
NOT_IN_CHECKOUT = (
    "reports/output/",  # what the report commands write (git-ignored)
    "../",  # the shared data folder beside the checkout
    "cifar10-jpeg/", "cifar10n/", "ag_news-mini/",  # layouts under --data-root
    "/tmp/",  # example --out folders
)
#: path components that are placeholders, not names
PLACEHOLDERS = {"OUT", "DIR", "PATH", "FILE", "HOST", "LOG"}
PATH_EXT = (".py", ".md", ".csv", ".json")
SOURCE_PACKAGES = ("evalcal_core", "protocols", "sim", "reports", "real_runs", "benchmarks")

CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
#: ``python -m MODULE`` (group 1) or ``evalcal NAME`` for a registered subcommand (group 2)
MODULE_CMD = re.compile(r"python -m ([A-Za-z_][\w.]*)|(?<![\w.-])evalcal ("
                        + "|".join(sorted(map(re.escape, SUBCOMMANDS), key=len, reverse=True))
                        + r")(?![\w-])")
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _doc_id(path):
    return str(path.relative_to(ROOT))


def _lines(path):
    """The page's lines, with backslash continuations inside code blocks joined."""
    out, fenced, pending = [], False, ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append((number, line, False))
            continue
        if fenced and line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((number, pending + line, fenced))
        pending = ""
    return out


def _path_candidates(text):
    """Tokens of backtick spans that look like repository paths (link targets are
    resolved against their page by :func:`find_dead_links`)."""
    for tok in (tok for span in CODE_SPAN.findall(text) for tok in span.split()):
        tok = tok.strip("'\"(),;:")
        if (not tok or tok.startswith("-") or any(c in tok for c in "<>{}*=…$|")
                or "://" in tok or "..." in tok.replace("../", "")):
            continue
        if "/" not in tok and not tok.endswith(PATH_EXT):
            continue
        if "/" in tok and not re.fullmatch(r"[\w./-]+", tok):
            continue
        yield tok


@lru_cache(maxsize=1)
def _repo_names():
    """Every file and folder name in the checkout (caches and VCS data left out)."""
    names = set()
    for _dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames
                       if d not in {".git", "__pycache__", ".tox", ".hypothesis"}]
        names.update(dirnames)
        names.update(filenames)
    return frozenset(names)


@lru_cache(maxsize=1)
def _source_text():
    """The package's Python source, where an output file's name is written down."""
    return "\n".join(p.read_text(encoding="utf-8") for pkg in SOURCE_PACKAGES
                     for p in (ROOT / pkg).rglob("*.py"))


def _path_alive(tok):
    if tok.startswith(NOT_IN_CHECKOUT) or tok.startswith("/"):
        return True
    parts = [p for p in tok.strip("/").split("/") if p not in ("", ".")]
    if any(p in PLACEHOLDERS or p.startswith("--") for p in parts):
        return True
    if "/" not in tok:
        return tok in _repo_names() or re.search(
            rf"(?<![\w.]){re.escape(tok)}(?!\w)", _source_text()) is not None
    return (ROOT / tok).exists()


def find_dead_paths(path):
    """``(line, token)`` for each cited repository path that does not exist."""
    dead = []
    for number, line, _ in _lines(path):
        if HYPOTHETICAL.search(line):
            continue
        for tok in _path_candidates(line):
            if not _path_alive(tok):
                dead.append((number, tok))
    return dead


def find_commands(path):
    """``(line, command, options)`` for every ``python -m MODULE`` (command ``MODULE``) and
    ``evalcal NAME`` (command ``"evalcal NAME"``) the page shows."""
    found = []
    for number, line, fenced in _lines(path):
        starts = list(MODULE_CMD.finditer(line))
        for i, match in enumerate(starts):
            end = starts[i + 1].start() if i + 1 < len(starts) else len(line)
            segment = line[match.end():end]
            if fenced:  # a shell comment is prose, not options
                segment = segment.split(" #", 1)[0]
            command = (match.group(1).rstrip(".") if match.group(1)
                       else f"evalcal {match.group(2)}")
            found.append((number, command, OPTION.findall(segment)))
    return found


#: run in one child process: ``python -m MODULE --help`` for each module named in argv,
#: as runpy (what ``-m`` calls), printing {module: [exit code, text]} as JSON
_HELP_SCRIPT = """
import contextlib, io, json, runpy, sys, warnings
warnings.simplefilter("ignore", RuntimeWarning)  # runpy: module already imported
texts = {}
for module in sys.argv[1:]:
    buffer, code = io.StringIO(), 0
    front = module.startswith("evalcal ")
    sys.argv = ["evalcal", module.split()[1], "--help"] if front else [module, "--help"]
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            runpy.run_module("evalcal_cli" if front else module, run_name="__main__",
                             alter_sys=True)
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code
        except Exception as exc:
            code, buffer = 1, io.StringIO(repr(exc))
    texts[module] = [code, buffer.getvalue()]
sys.stdout.write(json.dumps(texts))
"""


def _help_texts(modules, cwd):
    """``{module: (exit code, --help text)}``, every module's help in one child process (a
    process per module cost 10 s of interpreter starts on the 2-core CI machine)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-c", _HELP_SCRIPT, *modules], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {m: (code, text) for m, (code, text) in json.loads(proc.stdout).items()}


def bad_options(commands, help_texts):
    """``(line, module, option)`` for every option its module's ``--help`` does not name."""
    return [(number, module, opt) for number, module, opts in commands
            for opt in opts if opt not in help_texts[module]]


def _slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path):
    slugs, seen = set(), {}
    for _, line, fenced in _lines(path):
        match = HEADING.match(line)
        if match and not fenced:
            slug = _slug(match.group(2))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            slugs.add(slug if n == 0 else f"{slug}-{n}")
    return slugs


def find_dead_links(path):
    """``(line, target)`` for each link to a file or anchor that does not exist."""
    dead = []
    for number, line, fenced in _lines(path):
        if fenced:
            continue
        for target in LINK.findall(line):
            if "://" in target or target.startswith("mailto:"):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            if not dest.exists():
                dead.append((number, target))
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                dead.append((number, target))
    return dead


def test_docs_exist_and_readme_is_short():
    """The README stays a front page (<= 300 lines); the long material is in docs/."""
    assert len(DOCS) > 1
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_cited_paths_exist(doc):
    assert find_dead_paths(doc) == []


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_links_resolve(doc):
    assert find_dead_links(doc) == []


def test_commands_and_options_exist(tmp_path):
    """Each module shown is importable and its --help names every option shown after it."""
    commands = [(f"{_doc_id(doc)}:{n}", m, opts) for doc in DOCS
                for n, m, opts in find_commands(doc)]
    modules = sorted({m for _, m, _ in commands})
    missing = [m for m in modules if importlib.util.find_spec(
        SUBCOMMANDS[m.split()[1]].module if m.startswith("evalcal ") else m) is None]
    assert missing == []
    results = _help_texts(modules, tmp_path)
    failed = {m: text[-300:] for m, (rc, text) in results.items() if rc != 0}
    assert failed == {}
    assert bad_options(commands, {m: text for m, (_, text) in results.items()}) == []


# --- the checks can fail ---------------------------------------------------------------


def test_a_wrong_option_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```bash\npython -m sim.calibrate --k 3 10 --no-such-option 1\n```\n",
                    encoding="utf-8")
    commands = find_commands(page)
    assert commands == [(2, "sim.calibrate", ["--k", "--no-such-option"])]
    rc, text = _help_texts(["sim.calibrate"], tmp_path)["sim.calibrate"]
    assert rc == 0
    assert bad_options(commands, {"sim.calibrate": text}) == [
        (2, "sim.calibrate", "--no-such-option")]


def test_a_wrong_option_of_the_front_door_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```bash\nevalcal plan --effect 1 --no-such-option 1\n```\n"
                    "evalcal answers by simulation; `evalcal --help` lists them\n",
                    encoding="utf-8")
    commands = find_commands(page)
    assert commands == [(2, "evalcal plan", ["--effect", "--no-such-option"])]
    rc, text = _help_texts(["evalcal plan"], tmp_path)["evalcal plan"]
    assert rc == 0 and "--effect" in text
    assert bad_options(commands, {"evalcal plan": text}) == [
        (2, "evalcal plan", "--no-such-option")]


def test_a_dead_path_and_a_dead_link_are_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("See `sim/no_such_module.py`, `protocols/methods/`, [x](nowhere.md),\n"
                    "[y](page.md#no-such-heading) and [z](page.md#a-heading).\n\n"
                    "## A heading\n", encoding="utf-8")
    assert find_dead_paths(page) == [(1, "sim/no_such_module.py")]
    assert find_dead_links(page) == [(1, "nowhere.md"), (2, "page.md#no-such-heading")]


def test_hypothetical_user_files_skip_the_path_check_only(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("`python -m protocols.evaluate my_results.csv --no-such-flag`\n",
                    encoding="utf-8")
    assert find_dead_paths(page) == []
    assert find_commands(page) == [(1, "protocols.evaluate", ["--no-such-flag"])]
