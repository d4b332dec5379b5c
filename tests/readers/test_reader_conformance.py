"""One conformance suite over every registered log reader (:mod:`evalcal_core.readers`).

Each reader reads its committed fixture (``tests/fixtures/logs``, made as its README says),
rejects a truncated copy with a one-line ``ValueError`` naming the file, and names the
command-line options (``--metric``, ``--task``, ``--filter``), never Python argument names,
in its messages. A new reader is tested here the day it is registered: the suite fails until
its fixture is listed in ``FIXTURES``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from tests_paths import FIXTURES as ROOT

from evalcal_core import readers

LOGS = ROOT / "logs"
HAS_PARQUET = any(importlib.util.find_spec(m) for m in ("pyarrow", "fastparquet"))

#: reader name -> (fixture file, options that read it, expected (runs, questions))
FIXTURES = {
    "lm-eval": (LOGS / "lm_eval" / "dummy" / "samples_tiny_qa_2026-11-24T18-03-01.098898.jsonl",
                {}, (1, 6)),
    "inspect": (LOGS / "inspect_eval" / "tiny.eval", {}, (2, 5)),
    "inspect-json": (LOGS / "inspect_json" / "tiny.json", {}, (2, 5)),
    "helm": (LOGS / "helm" / "simple_mcqa" / "per_instance_stats.json",
             {"metric": "exact_match"}, (2, 3)),
    "csv": (LOGS / "tables" / "arm.csv", {}, (2, 6)),
    # pyarrow comes with the dev and parquet extras; without it the parquet cases skip
    "parquet": (LOGS / "tables" / "arm.parquet", {}, (2, 6)),
}
# Python argument spellings that must never reach a user ("pass fmt=", "task=...").
PYTHON_NAMES = re.compile(r"\b(fmt|task|metric|filter|cluster|max_member_bytes)=")


def _fixture(name):
    path, options, shape = FIXTURES[name]
    if name == "parquet" and not HAS_PARQUET:
        pytest.skip("needs pyarrow or fastparquet")
    return path, options, shape


def test_every_registered_reader_has_a_fixture():
    assert set(readers.names()) <= set(FIXTURES)


@pytest.mark.parametrize("name", readers.names())
def test_reader_declares_name_suffixes_sniff_and_read(name):
    reader = readers.get(name)
    assert reader.name == name
    assert reader.suffixes and all(s.startswith(".") and s == s.lower() for s in reader.suffixes)
    assert callable(reader.sniff) and callable(reader.read)


@pytest.mark.parametrize("name", readers.names())
def test_reader_reads_its_fixture_and_is_detected(name):
    path, options, shape = _fixture(name)
    assert readers.detect(path) is readers.get(name)
    log = readers.read_log(path, **options)
    assert log.format == name and log.scores.shape == shape
    assert np.isfinite(log.scores).all() and not log.scores.flags.writeable
    assert len(set(log.questions)) == log.n and len(set(log.runs)) == log.k


@pytest.mark.parametrize("name", readers.names())
def test_reader_rejects_a_truncated_file_in_one_line(name, tmp_path):
    path, options, _ = _fixture(name)
    data = path.read_bytes()
    cut = len(data) // 2
    # End mid-line: a cut at a line boundary leaves a valid shorter file of some formats.
    while data[cut - 1:cut] in (b"\n", b"\r", b"}") or data[cut:cut + 1] in (b"\n", b"\r"):
        cut -= 1
    copy = tmp_path / path.name
    copy.write_bytes(data[:cut])
    with pytest.raises(ValueError) as info:
        readers.read_log(copy, fmt=name, **options)
    message = str(info.value)
    assert "\n" not in message and str(copy) in message


@pytest.mark.parametrize("name", readers.names())
@pytest.mark.parametrize("option, flag", [("metric", "--metric"), ("task", "--task"),
                                          ("filter", "--filter")])
def test_reader_messages_name_the_command_line_options(name, option, flag):
    path, options, _ = _fixture(name)
    options = {**options, option: "no-such-thing"}
    with pytest.raises(ValueError) as info:
        readers.read_log(path, **options)
    message = str(info.value)
    assert "\n" not in message and flag in message and not PYTHON_NAMES.search(message)


@pytest.mark.parametrize("name", readers.names())
def test_reader_sniff_does_not_claim_other_fixtures(name):
    reader = readers.get(name)
    for other, (path, _, _) in FIXTURES.items():
        if path is not None and other != name and path.suffix in reader.suffixes:
            assert not reader.sniff(path), (name, other)


def test_a_folder_with_two_formats_asks_for_format(tmp_path):
    shutil.copy(FIXTURES["inspect"][0], tmp_path)
    shutil.copytree(FIXTURES["lm-eval"][0].parent, tmp_path / "lm")
    with pytest.raises(ValueError, match="several formats.*pass --log-format") as info:
        readers.read_log(tmp_path)
    assert not PYTHON_NAMES.search(str(info.value))
    assert readers.read_log(tmp_path, fmt="inspect").k == 2


# --- the fixtures against the harnesses' own numbers -------------------------------------------

def test_inspect_fixtures_match_inspect_read_eval_log():
    """Reference: the scores inspect-ai's own ``read_eval_log`` gave (make_inspect.py)."""
    expected = json.loads((LOGS / "make" / "inspect_expected.json").read_text())
    letters = {"C": 1.0, "I": 0.0}
    for name, key in (("inspect", "eval"), ("inspect-json", "json")):
        log = readers.read_log(FIXTURES[name][0], cluster="topic")
        got = {f"{q} {r}": log.scores[i, j] for i, r in enumerate(log.runs)
               for j, q in enumerate(log.questions)}
        assert got == {k: letters[v] for k, v in expected[key].items()}
        assert log.runs_are == "repeats" and log.metric == "includes"
        assert log.model == "mockllm/model" and log.task == "tiny"
        assert log.clusters == ("letters", "greek", "letters", "greek", "letters")


def test_lm_eval_runs_match_the_harness_aggregate():
    """Reference: lm-eval's own ``results_*.json`` ("acc,none") is each run's mean."""
    folder = FIXTURES["lm-eval"][0].parent
    log = readers.read_log(folder)
    assert log.runs == ("seed 1", "seed 2") and log.runs_are == "repeats"
    assert log.model == "dummy"  # not the random model_name ("hpbhprii") lm-eval gave it
    for i, results in enumerate(sorted(folder.glob("results_*.json"),
                                       key=lambda p: json.loads(p.read_text())["config"][
                                           "random_seed"])):
        aggregate = json.loads(results.read_text())["results"]["tiny_qa"]["acc,none"]
        assert log.scores[i].mean() == pytest.approx(aggregate)


def test_helm_fixture_matches_helms_own_aggregates():
    """Reference: HELM's ``stats.json`` (make_helm.sh): per stat, the mean over train
    trials of each trial's mean over instances, unperturbed and on the typo-perturbed
    instances. ``inference_runtime`` varies from instance to instance; ``exact_match`` is 0
    throughout (HELM's debugging model echoes the prompt)."""
    expected = json.loads((LOGS / "make" / "helm_expected.json").read_text())
    folder = FIXTURES["helm"][0].parent
    for metric in ("exact_match", "inference_runtime"):
        for extra, key in (({}, metric), ({"filter": "typos"}, f"{metric} typos")):
            log = readers.read_log(folder, metric=metric, **extra)
            assert log.k == expected[key]["count"]
            assert log.scores.mean(axis=1).mean() == pytest.approx(expected[key]["mean"],
                                                                   rel=1e-12)
    log = readers.read_log(folder, metric="exact_match")
    assert log.runs == ("trial 0", "trial 1") and log.model == "simple/model1"
    assert log.questions == ("id38", "id41", "id60")
    assert readers.read_log(folder, metric="exact_match", filter="typos").questions == (
        "id41", "id60")  # HELM perturbed only the instances a typo changed


def test_fixtures_are_small():
    # 256 KB: the HELM-written log is 51 KB on one line (27 stats per instance)
    total = sum(p.stat().st_size for p in Path(LOGS).rglob("*") if p.is_file())
    assert total < 256_000
