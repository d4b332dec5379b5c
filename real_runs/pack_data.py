"""``python -m real_runs.pack_data``: pack the real datasets into one file for a GPU machine.

A GPU machine receives the git checkout plus at most 64 MiB of named extra paths and has
no internet, so the data travels as one compressed ``.npz`` (no pickles):

====================================  =====================================================
key                                   content
====================================  =====================================================
``format``                            :data:`PACK_FORMAT`
``meta``                              JSON: sources, counts, the SHA-256 of every blob
``cifar10_{train,test}_jpeg``         uint8, the JPEG files' bytes as they are on disk,
                                      concatenated in canonical order
``cifar10_{train,test}_offsets``      int64, shape (n + 1,): image i is
                                      ``jpeg[offsets[i]:offsets[i + 1]]``
``cifar10_{train,test}_labels``       uint8 class indices
``cifar10n_<key>``                    uint8, the six label arrays of ``CIFAR-10_human.pt``
``ag_news_{train,test}_csv``          uint8, the two CSV files' bytes
====================================  =====================================================

``SHA256SUMS`` beside it (``sha256sum -c`` format) guards the transfer. Loading decodes
the JPEGs once with Pillow, exactly as the ImageFolder loader does (so the data fingerprint
of a run is the same whether it read the pack or the folder), and caches the decoded
arrays as an uncompressed ``.npz`` keyed by the pack's checksum. Zip compression shrinks
the 57 MB of 32x32 JPEGs (each repeats the same ~600 bytes of tables) to about 17 MB.

Usage::

    python -m real_runs.pack_data --data-root ../shared/data --out data_pack/
    python -m real_runs.pack_data --verify data_pack/
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalcal_core.atomic import atomic_path, write_atomic
from evalcal_core.cli import ArgumentParser, call_main
from evalcal_core.options import add_options, check_options, config_from_args, option, out_option
from evalcal_core.outdir import check_complete, check_out, check_out_path, run_outputs
from evalcal_core.validate import InvalidParameterError, fail
from real_runs.sources import (
    N_KEYS,
    find_ag_news_root,
    find_cifar10_root,
    find_cifar10n_file,
    read_cifar10n_labels,
    save_npz_atomic,
    scan_image_split,
)

#: how the command is run
PROG = "python -m real_runs.pack_data"
PACK_FORMAT = "evalcal-data-pack/1"
PACK_NAME = "evalcal-data.npz"
SUMS_NAME = "SHA256SUMS"
#: the most a pack may hold uncompressed (bytes): the real one is about 60 MB, and a pack that
#: inflates past this (an archive bomb carrying a matching SHA256SUMS) is refused before
#: anything is decompressed
MAX_PACK_BYTES = 1 << 30
#: the arrays every pack holds (:func:`build_pack`)
PACK_KEYS = ("format", "meta",
             *(f"cifar10_{split}_{part}" for split in ("train", "test")
               for part in ("jpeg", "offsets", "labels")),
             *(f"cifar10n_{key}" for key in N_KEYS),
             "ag_news_train_csv", "ag_news_test_csv")


class PackError(InvalidParameterError):
    """A data pack is missing, corrupt (checksum) or not in the expected format."""


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _blob(chunks: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(c) for c in chunks])
    return np.frombuffer(b"".join(chunks), dtype=np.uint8), offsets


def build_pack(data_root, out) -> Path:
    """Write ``<out>/evalcal-data.npz`` and ``<out>/SHA256SUMS`` from a data root.

    Parameters
    ----------
    data_root : path-like
        A root laid out like ``../shared/data`` beside the checkout (see
        :mod:`real_runs.data`): CIFAR-10 as an ImageFolder tree of JPEG/PNG files,
        ``CIFAR-10_human.pt``, AG News CSVs.
    out : path-like
        Output folder (created).

    Returns
    -------
    pathlib.Path
        The pack file.
    """
    cifar = find_cifar10_root(data_root)
    if not (cifar / "train").is_dir():
        raise PackError(f"{cifar} holds the python batches; the pack stores an ImageFolder "
                        "tree of image files (train/<class>/<index>.jpg)")
    arrays: dict[str, np.ndarray] = {}
    meta: dict = {"format": PACK_FORMAT, "cifar10_source": str(cifar), "sha256": {}}
    for split in ("train", "test"):
        entries = scan_image_split(cifar / split)
        chunks = [(cifar / rel).read_bytes() for _, _, rel, _ in entries]
        blob, offsets = _blob(chunks)
        arrays[f"cifar10_{split}_jpeg"] = blob
        arrays[f"cifar10_{split}_offsets"] = offsets
        arrays[f"cifar10_{split}_labels"] = np.array([e[1] for e in entries], np.uint8)
        meta[f"cifar10_{split}_images"] = len(entries)
    n_file = find_cifar10n_file(data_root)
    labels = read_cifar10n_labels(n_file)
    for key in N_KEYS:
        arrays[f"cifar10n_{key}"] = labels[key].astype(np.uint8)
    meta["cifar10n_source"] = str(n_file)
    ag = find_ag_news_root(data_root)
    for split in ("train", "test"):
        arrays[f"ag_news_{split}_csv"] = np.frombuffer((ag / f"{split}.csv").read_bytes(),
                                                       dtype=np.uint8)
    meta["ag_news_source"] = str(ag)
    for key, arr in arrays.items():
        meta["sha256"][key] = hashlib.sha256(arr.tobytes()).hexdigest()
    arrays["format"] = np.array(PACK_FORMAT)
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / PACK_NAME
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    write_atomic(out / SUMS_NAME, f"{_sha256_file(path)}  {PACK_NAME}\n")
    return path


def find_pack(root) -> Path | None:
    """The pack file if ``root`` is a pack folder (or the pack file itself), else None."""
    root = Path(root)
    if root.is_file() and root.name == PACK_NAME:
        return root
    if (root / PACK_NAME).is_file():
        return root / PACK_NAME
    return None


def verify_pack(path) -> str:
    """Check the pack against its ``SHA256SUMS``; returns its SHA-256, raises PackError."""
    path = Path(path)
    sums = path.parent / SUMS_NAME
    if not path.is_file():
        raise PackError(f"no data pack at {path}")
    check_complete(path, "--pack")
    if not sums.is_file():
        raise PackError(f"data pack {path} has no {SUMS_NAME} beside it; rebuild it with "
                        "python -m real_runs.pack_data")
    expected = {}
    for line in sums.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:
            expected[parts[1].lstrip("*")] = parts[0]
    actual = _sha256_file(path)
    if expected.get(path.name) != actual:
        raise PackError(f"data pack {path} fails its checksum ({SUMS_NAME} says "
                        f"{expected.get(path.name)}, file is {actual}): re-copy or rebuild it")
    return actual


def _check_members(path: Path) -> None:
    """Refuse a pack whose archive lacks an array of :data:`PACK_KEYS` or inflates past
    :data:`MAX_PACK_BYTES`; read from the zip directory, before anything is decompressed."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise PackError(f"cannot read data pack {path} ({exc})") from exc
    size = sum(m.file_size for m in members)
    if size > MAX_PACK_BYTES:
        raise PackError(f"data pack {path} would inflate to {size / 2**20:,.0f} MiB, above the "
                        f"{MAX_PACK_BYTES / 2**20:,.0f} MiB a pack may hold: not a data pack")
    names = {m.filename for m in members}
    missing = [key for key in PACK_KEYS if f"{key}.npy" not in names]
    if missing:
        raise PackError(f"data pack {path} lacks the array {missing[0]} "
                        f"({len(missing)} of {len(PACK_KEYS)} missing): rebuild it with {PROG}")


def read_pack(path) -> dict[str, np.ndarray]:
    """Every array of a verified pack (raises PackError if corrupt, of another format, too
    large or missing an array of :data:`PACK_KEYS`)."""
    path = Path(path)
    verify_pack(path)
    _check_members(path)
    try:
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise PackError(f"cannot read data pack {path} ({exc})") from exc
    if str(arrays.get("format")) != PACK_FORMAT:
        raise PackError(f"data pack {path} has format {arrays.get('format')!s}; this code "
                        f"reads {PACK_FORMAT}")
    return arrays


def pack_checksums(arrays: dict[str, np.ndarray], path) -> dict[str, str]:
    """The per-array SHA-256 digests the pack's ``meta`` records; PackError if ``meta`` is
    not the JSON object :func:`build_pack` writes, or names an array the pack lacks."""
    try:
        meta = json.loads(str(arrays["meta"]))
    except ValueError as exc:
        raise PackError(f"data pack {path}: its meta is not JSON ({exc})") from exc
    digests = meta.get("sha256") if isinstance(meta, dict) else None
    if not isinstance(digests, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in digests.items()):
        raise PackError(f"data pack {path}: its meta has no sha256 object of array digests")
    unknown = sorted(set(digests) - set(arrays))
    if unknown:
        raise PackError(f"data pack {path}: its meta names the array {unknown[0]}, which the "
                        "pack lacks")
    return digests


def _decode_one():
    """A JPEG/PNG bytes -> (32, 32, 3) uint8 decoder: Pillow, as the folder loader uses.

    Without Pillow, torchvision's libjpeg-turbo decoder: it gave Pillow's bytes for all
    60,000 JPEGs of ``cifar10-jpeg`` (checked with Pillow and torchvision 0.29); a
    difference elsewhere would show in every record's data fingerprint.
    """
    try:
        from PIL import Image
    except ImportError:
        import torch
        from torchvision.io import ImageReadMode, decode_image

        def decode(data: bytes) -> np.ndarray:
            t = decode_image(torch.frombuffer(bytearray(data), dtype=torch.uint8),
                             mode=ImageReadMode.RGB)
            return t.permute(1, 2, 0).numpy()

        return decode

    def decode(data: bytes) -> np.ndarray:
        with Image.open(io.BytesIO(data)) as img:
            return np.asarray(img.convert("RGB"))

    return decode


def _decode_chunk(args) -> np.ndarray:
    blob, offsets = args
    decode = _decode_one()
    out = np.empty((len(offsets) - 1, 32, 32, 3), dtype=np.uint8)
    for i in range(len(out)):
        arr = decode(blob[offsets[i]:offsets[i + 1]].tobytes())
        if arr.shape != (32, 32, 3):
            raise PackError(f"packed image {i} is {arr.shape}, expected 32x32 RGB")
        out[i] = arr
    return out


def decode_images(blob: np.ndarray, offsets: np.ndarray, workers: int | None = None
                  ) -> np.ndarray:
    """Decode concatenated image files with Pillow (threads; Pillow releases the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    n = len(offsets) - 1
    workers = max(1, workers or os.cpu_count() or 1)
    bounds = np.linspace(0, n, min(n, workers * 4) + 1).astype(int) if n else [0, 0]
    parts = [(blob, offsets[a:b + 1]) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        chunks = list(pool.map(_decode_chunk, parts))
    return np.concatenate(chunks) if chunks else np.zeros((0, 32, 32, 3), np.uint8)


def load_cifar_from_pack(path, cache_dir=None) -> tuple[dict, str]:
    """Decoded CIFAR-10 arrays and CIFAR-10N labels of a pack, and a source description.

    The decoded images are cached under ``cache_dir`` (keyed by the pack's SHA-256) so
    worker processes decode nothing.
    """
    path = Path(path)
    sha = verify_pack(path)
    cache = Path(cache_dir) / f"pack-{sha[:20]}-decoded.npz" if cache_dir else None
    if cache is not None and cache.is_file():
        try:
            with open(cache, "rb") as fh, np.load(fh, allow_pickle=False) as npz:
                return {k: npz[k] for k in npz.files}, f"{path} (decoded cache {cache})"
        except (OSError, ValueError, EOFError, zipfile.BadZipFile):
            pass  # derived data: decode again
    raw = read_pack(path)
    arrays = {}
    for split in ("train", "test"):
        arrays[f"{split}_x"] = decode_images(raw[f"cifar10_{split}_jpeg"],
                                             raw[f"cifar10_{split}_offsets"])
        arrays[f"{split}_y"] = raw[f"cifar10_{split}_labels"].astype(np.int64)
    for key in N_KEYS:
        arrays[f"n_{key}"] = raw[f"cifar10n_{key}"].astype(np.int64)
    if cache is not None:
        save_npz_atomic(cache, **arrays)
    return arrays, str(path)


def ag_news_csv_from_pack(path) -> tuple[str, str]:
    """(train.csv, test.csv) text of a pack."""
    raw = read_pack(path)
    return (raw["ag_news_train_csv"].tobytes().decode("utf-8"),
            raw["ag_news_test_csv"].tobytes().decode("utf-8"))


@dataclass(frozen=True)
class PackOptions:
    """What ``python -m real_runs.pack_data`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`): a pack is built (``--data-root`` and ``--out``) or
    verified (``--verify``)."""

    data_root: str | None = option("--data-root", None,
                                   help="DATA_ROOT: a folder laid out like ../shared/data "
                                        "(cifar10-jpeg/, cifar10n/, ag_news-mini/)")
    out: Path | None = out_option(None, help="output folder (e.g. data_pack/)")
    verify: str | None = option("--verify", None, metavar="PACK_DIR",
                                help="only verify an existing pack")

    def __post_init__(self):
        check_options(self)
        for flag, value in (("--data-root", self.data_root), ("--verify", self.verify)):
            # an empty path is a path given wrong, not an option left out
            if value is not None and not str(value).strip():
                raise fail(flag, "a folder path", got=repr(value))
        given = [flag for flag, value in (("--data-root", self.data_root), ("--out", self.out))
                 if value]
        if self.verify and given:
            raise fail(("--verify", given[0]), "given one at a time: --verify checks a pack, "
                       "--data-root and --out build one", got="both")
        if not self.verify and len(given) < 2:
            raise fail(("--data-root", "--out"), "given together (or --verify PACK_DIR alone)",
                       got="only " + given[0] if given else "neither")


def build_parser() -> ArgumentParser:
    """The options of :class:`PackOptions`, as declared there."""
    return add_options(ArgumentParser(prog=PROG, description=(__doc__ or "").split("\n\n")[0]),
                       PackOptions)


def main(argv=None) -> int:
    """Run the CLI; 0 when written (or verified), 2 for bad input or a corrupt pack."""
    return call_main(_main, PROG, argv)


def _main(argv) -> int:
    args = config_from_args(PackOptions, build_parser().parse_args(argv))
    if args.verify:
        given = Path(args.verify)
        pack = find_pack(given)
        if pack is None:
            what = (f"{given} does not exist" if not given.exists() and not given.is_symlink()
                    else f"{given} is a file, not {PACK_NAME}" if not given.is_dir()
                    else f"the folder {given} holds no {PACK_NAME}")
            raise fail("--verify", f"a pack folder or its {PACK_NAME} ({what})", str(given))
        raw = read_pack(pack)
        for key, digest in pack_checksums(raw, pack).items():
            if hashlib.sha256(raw[key].tobytes()).hexdigest() != digest:
                raise PackError(f"data pack {pack}: array {key} fails its checksum")
        print(f"ok {pack} ({pack.stat().st_size / 2**20:.1f} MiB)")
        return 0
    if not Path(args.data_root).is_dir():
        raise fail("--data-root", "a folder laid out like ../shared/data (cifar10-jpeg/, "
                   "cifar10n/, ag_news-mini/)", args.data_root)
    check_out_path(args.out)  # a file given as --out is refused first, before any reading
    for find in (find_cifar10_root, find_cifar10n_file, find_ag_news_root):
        find(args.data_root)  # a root without all three fails here, before --out is made
    check_out(args.out)
    # The pack and its checksum file are two files: the folder stays marked incomplete
    # until both are written, so a pack cut off between them is never taken for whole.
    with run_outputs(args.out, PROG, known=(PACK_NAME, SUMS_NAME)) as run:
        path = build_pack(args.data_root, run.path)
        run.wrote(PACK_NAME, SUMS_NAME)
    print(f"wrote {path} ({path.stat().st_size / 2**20:.1f} MiB) and "
          f"{path.parent / SUMS_NAME}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
