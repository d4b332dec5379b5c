"""The data pack's checks that need no torch: which options go together, the archive's size
and arrays read before anything is decompressed, its meta, the layout checked before --out
is made, and torch's absence named as a missing extra (issue 47's hostile run)."""

from __future__ import annotations

import hashlib
import json
import sys

import numpy as np
import pytest

from real_runs import pack_data
from real_runs.sources import DataRootError, read_cifar10n_labels


def _write_pack(folder, *, drop=(), meta=None, extra=None):
    """A small pack with every array of PACK_KEYS (less ``drop``) and its SHA256SUMS."""
    arrays = {key: np.arange(4, dtype=np.uint8) for key in pack_data.PACK_KEYS
              if key not in ("format", "meta") and key not in drop}
    arrays.update(extra or {})
    digests = {k: hashlib.sha256(a.tobytes()).hexdigest() for k, a in arrays.items()}
    arrays["format"] = np.array(pack_data.PACK_FORMAT)
    if "meta" not in drop:
        arrays["meta"] = np.array(json.dumps({"sha256": digests}) if meta is None else meta)
    folder.mkdir()
    path = folder / pack_data.PACK_NAME
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    (folder / pack_data.SUMS_NAME).write_text(f"{digest}  {pack_data.PACK_NAME}\n")
    return folder


def _error(argv, capsys):
    code = pack_data.main(argv)
    err = capsys.readouterr().err.strip()
    return code, err


def test_a_whole_pack_verifies(tmp_path, capsys):
    pack = _write_pack(tmp_path / "p")
    assert pack_data.main(["--verify", str(pack)]) == 0
    assert capsys.readouterr().out.startswith(f"ok {pack / pack_data.PACK_NAME}")


def test_an_array_that_fails_its_meta_digest_is_refused(tmp_path, capsys):
    pack = _write_pack(tmp_path / "p", meta=json.dumps(
        {"sha256": {"ag_news_test_csv": hashlib.sha256(b"other").hexdigest()}}))
    code, err = _error(["--verify", str(pack)], capsys)
    assert code == 2 and "array ag_news_test_csv fails its checksum" in err


@pytest.mark.parametrize("argv", [["--out", "{tmp}/o"], ["--data-root", "{tmp}"]])
def test_verify_goes_alone(argv, tmp_path, capsys):
    pack = _write_pack(tmp_path / "p")
    code, err = _error(["--verify", str(pack), *(a.format(tmp=tmp_path) for a in argv)], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert f"The '--verify' and '{argv[0]}' options must be given one at a time" in err
    assert not (tmp_path / "o").exists()


def test_an_archive_that_inflates_past_the_cap_is_refused_unread(tmp_path, capsys,
                                                                 monkeypatch):
    # the cap compared with the zip directory's sizes: 64 KiB of zeros compress to ~100 bytes
    pack = _write_pack(tmp_path / "p", extra={"padding": np.zeros(1 << 16, np.uint8)})
    monkeypatch.setattr(pack_data, "MAX_PACK_BYTES", 1 << 15)
    monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("decompressed"))
    code, err = _error(["--verify", str(pack)], capsys)
    assert code == 2 and "would inflate to 0 MiB, above the 0 MiB a pack may hold" in err


@pytest.mark.parametrize("drop", ["cifar10_test_offsets", "meta"])
def test_a_pack_missing_an_array_is_named(drop, tmp_path, capsys):
    pack = _write_pack(tmp_path / "p", drop=(drop,))
    code, err = _error(["--verify", str(pack)], capsys)
    assert code == 2 and f"lacks the array {drop} (1 of {len(pack_data.PACK_KEYS)}" in err


@pytest.mark.parametrize("meta, message", [
    ("{not json", "its meta is not JSON"),
    ("[1, 2]", "its meta has no sha256 object"),
    (json.dumps({"sha256": {"nowhere": "00"}}), "its meta names the array nowhere"),
])
def test_a_pack_with_a_broken_meta_is_one_line(meta, message, tmp_path, capsys):
    pack = _write_pack(tmp_path / "p", meta=meta)
    code, err = _error(["--verify", str(pack)], capsys)
    assert code == 2 and message in err and len(err.splitlines()) == 1


def test_the_layout_is_checked_before_out_is_made(tmp_path, capsys):
    (tmp_path / "root").mkdir()
    code, err = _error(["--data-root", str(tmp_path / "root"), "--out", str(tmp_path / "o")],
                       capsys)
    assert code == 2 and "does not have the expected layout" in err
    assert not (tmp_path / "o").exists()


def test_cifar10n_labels_without_torch_name_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(DataRootError, match=r"needs torch, an optional extra: pip install "
                                            r"'evalcal\[real\]'"):
        read_cifar10n_labels(tmp_path / "CIFAR-10_human.pt")
