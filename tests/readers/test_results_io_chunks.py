"""The tidy CSV reader streams the file in chunks: any chunk size gives what one chunk gives
(and what a pandas pivot of the whole file gives, the reference), errors name the file's
row, and a file past the row or label limits is refused in one line without being read
whole. The Inspect archive reader holds a member once, not twice."""

from __future__ import annotations

import tracemalloc
import zipfile

import numpy as np
import pandas as pd
import pytest

from evalcal_core import results_io
from evalcal_core.readers._files import Archive
from evalcal_core.results_io import read_results_arms, read_tidy_arms, read_tidy_frame
from evalcal_core.validate import InvalidParameterError


def _write(path, text: str):
    path.write_text(text)
    return path


def _per_question(tmp_path):
    """3 arms (one named NA) x 2 seeds x 3 questions ('1' and '1.0' are two), shuffled."""
    rng = np.random.default_rng(1)
    rows = pd.DataFrame([(s, a, q, f"c{q[0]}") for a in ("NA", "baseline", "null")
                         for s in (7, 3) for q in ("1", "1.0", "x")],
                        columns=["seed", "arm", "question", "topic"])
    rows["score"] = np.round(rng.random(len(rows)), 3)
    rows = rows.sample(frac=1.0, random_state=3)
    path = tmp_path / "r.csv"
    rows.to_csv(path, index=False)
    return path, rows


@pytest.mark.parametrize("chunk_rows", [1, 2, 5, 17])
def test_any_chunk_size_reads_like_one_chunk_and_like_a_pivot(tmp_path, monkeypatch, chunk_rows):
    """Reference: a pandas pivot of the rows written (names as text); consistency: the read
    with the whole file in one chunk."""
    path, rows = _per_question(tmp_path)
    whole = read_results_arms(path, cluster="topic")
    monkeypatch.setattr(results_io, "CHUNK_ROWS", chunk_rows)
    got = read_results_arms(path, cluster="topic")
    assert got.arms == whole.arms == ("baseline", *[a for a in dict.fromkeys(rows["arm"])
                                                    if a != "baseline"])
    assert got.run_ids == whole.run_ids == (3, 7)
    assert got.question_ids == whole.question_ids == ("1", "1.0", "x")
    assert got.clusters.tolist() == whole.clusters.tolist() == ["c1", "c1", "cx"]
    np.testing.assert_array_equal(got.scores, whole.scores)
    table = rows.pivot_table(index=["arm", "seed"], columns="question", values="score")
    for a, arm in enumerate(got.arms):
        ref = table.loc[arm].reindex(index=list(got.run_ids), columns=list(got.question_ids))
        np.testing.assert_array_equal(got.scores[a], ref.to_numpy(dtype=float))


def test_seed_type_is_decided_by_the_whole_column(tmp_path, monkeypatch):
    """'1.0' in a later chunk makes every seed a float, as ``pandas.read_csv`` of the whole
    file does (the reference): seed 1 of chunk one is seed 1.0, not a second seed."""
    path = _write(tmp_path / "r.csv", "seed,arm,metric\n1,baseline,0.5\n2,baseline,0.6\n"
                                      "1.0,variant,0.7\n2,variant,0.8\n")
    monkeypatch.setattr(results_io, "CHUNK_ROWS", 1)
    got = read_tidy_arms(path)
    expected = tuple(sorted(pd.read_csv(path)["seed"].unique().tolist()))
    assert got.run_ids == expected == (1.0, 2.0)
    assert all(type(s) is float for s in got.run_ids)
    np.testing.assert_array_equal(got.scores[:, :, 0], [[0.5, 0.6], [0.7, 0.8]])


@pytest.mark.parametrize("body, message", [
    ("0,a,1\n1,a,1\n0,b,1\n1,b,1\n1.0,b,2\n", r"row 6: duplicate entry for seed=1\.0, arm='b'"),
    ("0,a,1\n1,a,1\n0,b,1\n1,b,x\n", r"row 5: column 'metric' must be a finite number, got 'x'"),
    ("0,a,1\n1,a,1\n0,b,1\n1, ,1\n", r"row 5: column 'arm' is empty"),
])
def test_errors_in_a_later_chunk_name_the_file_row(tmp_path, monkeypatch, body, message):
    path = _write(tmp_path / "r.csv", "seed,arm,metric\n" + body)
    for chunk_rows in (10**6, 2):
        monkeypatch.setattr(results_io, "CHUNK_ROWS", chunk_rows)
        with pytest.raises(InvalidParameterError, match=message):
            read_tidy_arms(path)


def test_cluster_conflict_across_chunks_names_the_later_row(tmp_path, monkeypatch):
    path = _write(tmp_path / "r.csv", "seed,arm,question,topic,score\n0,a,q1,alg,1\n"
                                      "0,a,q2,geo,1\n0,b,q2,geo,0\n0,b,q1,geo,0\n")
    for chunk_rows in (10**6, 1, 3):
        monkeypatch.setattr(results_io, "CHUNK_ROWS", chunk_rows)
        with pytest.raises(InvalidParameterError, match=r"row 5: question 'q1' is in cluster "
                                                        r"'geo' here but 'alg' on another row"):
            read_tidy_arms(path, cluster="topic")


def test_past_the_row_limit_is_refused_before_the_rest_is_read(tmp_path, monkeypatch):
    """Rows past the limit are never parsed: a malformed line after it is not reached."""
    path = _write(tmp_path / "r.csv", "seed,arm,metric\n" + "".join(
        f"{s},{a},0.5\n" for s in range(3) for a in "ab") + '1,"unclosed\n' * 50)
    monkeypatch.setattr(results_io, "CHUNK_ROWS", 2)
    monkeypatch.setattr(results_io, "MAX_ROWS", 6)
    with pytest.raises(InvalidParameterError) as info:
        read_tidy_arms(path)
    assert str(info.value) == (f"{path}: more than 6 rows, the most a tidy results CSV may "
                               "hold (memory grows with every score held); evaluate fewer "
                               "arms, seeds or questions per file")
    monkeypatch.setattr(results_io, "MAX_ROWS", 5)
    with pytest.raises(InvalidParameterError, match=r"^\S+: more than 5 rows, the most"):
        read_tidy_frame(path, max_rows=5)


def test_past_the_label_limit_is_refused_in_one_line(tmp_path, monkeypatch):
    path = _write(tmp_path / "r.csv", "seed,arm,question,score\n" + "".join(
        f"0,{a},q{q},1\n" for a in "ab" for q in range(4)))
    monkeypatch.setattr(results_io, "MAX_LABELS", 3)
    with pytest.raises(InvalidParameterError) as info:
        read_tidy_arms(path)
    assert str(info.value) == (f"{path}: more than 3 distinct values in column 'question', "
                               "the most a tidy results CSV may hold; evaluate fewer per file")


def _archive(path, member: bytes):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", member)
    return path


def _peak(call) -> int:
    tracemalloc.start()
    try:
        try:
            call()
        except InvalidParameterError:
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_member_of_zeros_is_held_once_and_refused_undecoded(tmp_path):
    size = 16 * 2**20
    path = _archive(tmp_path / "z.eval", b"\0" * size)
    with Archive(path) as archive:
        with pytest.raises(InvalidParameterError) as info:
            archive.read_json("header.json", "Inspect's eval header")
        assert str(info.value) == (f"{path}: member header.json: not valid JSON (Expecting "
                                   "value at line 1 column 1); expected Inspect's eval header")
        peak = _peak(lambda: archive.read_json("header.json", "x"))
    # one buffer of the member and the inflater's 1 MiB chunks; chunks joined, or the
    # member decoded, would be twice the size
    assert size <= peak < size + 4 * 2**20


def test_a_json_member_is_never_held_as_bytes_text_and_parse_at_once(tmp_path):
    """A member holding one long string: its bytes are let go before it is parsed, so the
    peak is two copies (bytes and text, then text and the parsed string), not three."""
    size = 8 * 2**20
    member = b'{"x": "' + b"a" * (size - 9) + b'"}'
    path = _archive(tmp_path / "s.eval", member)
    with Archive(path) as archive:
        assert len(archive.read_json("header.json", "x")["x"]) == size - 9
        peak = _peak(lambda: archive.read_json("header.json", "x"))
    assert 2 * size <= peak < 2.5 * size
