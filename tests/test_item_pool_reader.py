"""``evalcal_core.pools.read_pool``: every refusal in one line naming the file and the first
offence, gzip by magic bytes, ragged pools, and the cache keyed by the file's version."""

from __future__ import annotations

import gzip
import os

import numpy as np
import pandas as pd
import pytest
from item_pools import pool_frame, write_pool

from evalcal_core.pools import InvalidParameterError, read_pool

HEADER = "model,item,attempt,score\n"


def _write(tmp_path, text, name="p.csv"):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def _refused(path, match, **kwargs):
    with pytest.raises(InvalidParameterError, match=match) as info:
        read_pool(path, **kwargs)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    return message


def test_reads_plain_and_gzip_alike(tmp_path):
    """The same rows as a CSV and as a gzip without the .gz suffix (magic bytes decide);
    scores equal pandas' pivot of the frame, in (model, item, attempt file order)."""
    frame = pool_frame(models=("b", "a"), items=5, attempts=3, clusters=(2, 3))
    plain = tmp_path / "p.csv"
    frame.to_csv(plain, index=False)
    hidden = tmp_path / "p.data"
    hidden.write_bytes(gzip.compress(plain.read_bytes()))
    one, two = read_pool(plain), read_pool(hidden)
    assert one.models == two.models == ("a", "b")
    np.testing.assert_array_equal(one.scores, two.scores)
    expect = frame.sort_values(["model", "item", "attempt"])["score"].to_numpy()
    np.testing.assert_array_equal(one.scores.ravel(), expect.astype(bool))
    assert one.cluster_names == ("c0", "c1") and list(one.clusters) == [0, 0, 1, 1, 1]
    assert one.scores.dtype == bool and not one.scores.flags.writeable


def test_single_attempt_and_fractional_scores_are_read(tmp_path):
    path = _write(tmp_path, HEADER + "a,1,0,0.25\na,2,0,1\nb,1,0,0.5\nb,2,0,0\n")
    pool = read_pool(path)
    assert pool.attempts == 1 and pool.scores.dtype == np.float64
    np.testing.assert_array_equal(pool.scores[:, :, 0], [[0.25, 1.0], [0.5, 0.0]])


@pytest.mark.parametrize("text, match", [
    (HEADER, "has a header but no rows"),
    ("\n\n", r"is empty \(no header"),
    ("model,item,attempt\na,1,0\n", r"lacks the column\(s\) score"),
    (HEADER + "a,1,0,1\na,,1,0\n", r"empty cell: line 3, column 'item'"),
    (HEADER + "a,1,0,1\na,1,1,x\n", r"not a number in \[0, 1\]: line 3 has 'x'"),
    (HEADER + "a,1,0,1.5\n", r"not a number in \[0, 1\]: line 2 has '1.5'"),
    (HEADER + "a,1,0,1\na,1,0,0\n", r"model 'a', item '1', attempt '0' twice \(line 3\)"),
    ("model,item,attempt,score,cluster\na,1,0,1,x\na,1,1,1,y\n",
     r"puts item '1' in more than one cluster"),
    (HEADER + "a,1,0,1\na,2,0,1\nb,1,0,1\n", r"no attempt of model 'b' on item '2'"),
    (HEADER + "a,1,0,1\na,1,1,0\nb,1,0,1\n",
     r"ragged attempts: 1 of 2 \(model, item\) pairs have fewer than 2 \(from 1; model 'b' "
     r"has 1 on item '1'\)"),
    (HEADER + "a,1,0,1,9\n", "not a well-formed CSV"),
    (b"model,item,attempt,score\na,1,0,1\n\x00\x01", r"is binary.*NUL byte on line 3"),
    (b"model,item,attempt,score\na,\xe9,0,1\n", r"not UTF-8 text \(byte 0xe9 on line 2\)"),
])
def test_bad_content_is_one_line(tmp_path, text, match):
    _refused(_write(tmp_path, text), match)


def test_empty_missing_folder_and_fifo_are_refused_without_opening(tmp_path):
    _refused(_write(tmp_path, b""), "is empty")
    _refused(tmp_path / "nope.csv", "does not exist")
    _refused(tmp_path, "is a folder")
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    _refused(fifo, "is a FIFO")  # an open() would block here: the test would hang


def test_truncated_corrupt_and_oversized_gzip(tmp_path):
    frame = pool_frame(items=50, attempts=4)
    data = gzip.compress(frame.to_csv(index=False).encode())
    _refused(_write(tmp_path, data[: len(data) // 2], "cut.csv.gz"), "truncated gzip")
    bad = bytearray(data)
    bad[len(bad) // 2] ^= 0xFF
    _refused(_write(tmp_path, bytes(bad), "bad.csv.gz"), "corrupt gzip")
    # a bomb: 50 MB of zeros inflate past a 1 MB cap, refused after at most ~2 MB inflated
    bomb = gzip.compress(b"0" * 50_000_000)
    _refused(_write(tmp_path, bomb, "bomb.csv.gz"), r"inflates past 1,000,000 bytes",
             max_bytes=1_000_000)
    _refused(_write(tmp_path, frame.to_csv(index=False), "big.csv"), "past the cap",
             max_bytes=100)


def test_binary_gzip_and_default_cap_bound_memory(tmp_path):
    """A gzip of zeros is refused at its first inflated chunk and a gzip of 300 MB of rows at
    the default 256 MiB cap, each well under 1 GB; a small plain file is read without
    reserving the cap (issue 47's hostile run: 1.5 GB of zeros took 1.5 GB before the NUL
    check, and a 4 KiB file asked for 2 GiB of address space)."""
    import tracemalloc

    zeros = _write(tmp_path, gzip.compress(b"\0" * 300_000_000, 1), "zeros.csv.gz")
    rows = _write(tmp_path, gzip.compress(b"model,item,attempt,score\n"
                                          + b"m0,q0,0,1\n" * 30_000_000, 1), "rows.csv.gz")
    small = _write(tmp_path, pool_frame(items=5, attempts=2).to_csv(index=False), "s.csv")
    for path, match, limit in ((zeros, r"is binary, not a CSV \(a NUL byte on line 1\)", 8e6),
                               (rows, r"inflates past 268,435,456 bytes", 600e6)):
        tracemalloc.start()
        try:
            _refused(path, match)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < limit, (path.name, peak)
    tracemalloc.start()
    try:
        read_pool(small)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64e6


def test_ragged_pool_keeps_complete_models_when_asked(tmp_path):
    """Terminal-Bench's shape: some (model, item) have fewer trials. complete_models keeps
    the models with the full count on every item (checked against pandas) and records the
    others."""
    frame = pool_frame(models=("a", "b", "c", "d"), items=6, attempts=5)
    cut = ((frame["model"] == "b") & (frame["item"] == "q002") & (frame["attempt"] >= 3)) | (
        (frame["model"] == "d") & (frame["attempt"] == 4))
    path = tmp_path / "ragged.csv"
    frame[~cut].to_csv(path, index=False)
    _refused(path, r"ragged attempts: 7 of 24")
    pool = read_pool(path, complete_models=True)
    counts = frame[~cut].groupby(["model", "item"]).size().groupby("model").min()
    assert pool.models == tuple(counts.index[counts == 5])
    assert pool.dropped == tuple(counts.index[counts < 5]) == ("b", "d")
    keep = frame[frame["model"].isin(pool.models)].sort_values(["model", "item", "attempt"])
    np.testing.assert_array_equal(pool.scores.ravel(), keep["score"].to_numpy().astype(bool))


def test_cache_follows_the_file_version(tmp_path):
    path = write_pool(tmp_path, models=("a",), items=3, attempts=2)
    first = read_pool(path)
    assert read_pool(path) is first
    frame = pd.read_csv(path)
    frame["score"] = 1 - frame["score"]
    frame.to_csv(path, index=False)
    os.utime(path, ns=(first_ns := os.stat(path).st_mtime_ns + 10**9, first_ns))
    again = read_pool(path)
    np.testing.assert_array_equal(again.scores, ~first.scores)
