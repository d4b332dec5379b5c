"""The pool manifest: what was trained, with which code, profile and data, and every record.

``manifest.json`` at the pool root lists every record file with its payload checksum, so a
test can verify that the committed pool is complete and intact.
"""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

from evalcal_core.atomic import write_atomic
from real_runs.store import FORMAT_VERSION, pool_profiles, read_record

#: stated wherever the pool is described (from ``shared/data/README.md``)
DATA_CAVEATS = {
    "cifar10": "CIFAR-10 re-encoded as JPEG (quality ~75, PSNR ~30 dB vs the lossless "
               "release): accuracies are close to, not equal to, the original's.",
    "cifar10n": "CIFAR-10N human labels (official CIFAR-10_human.pt) on the JPEG CIFAR-10 "
                "images above; evaluated on clean test labels.",
    "ag_news": "AG News reduced to its 7,600 test articles, split 5,600 train / 2,000 test "
               "(stratified, fixed seed): weaker models than with the 120,000-row train set.",
}
#: stated with every figure computed from a pool, per training profile
PROFILE_CAVEATS = {
    "cpu": ("Runs of the 'cpu' profile, sized for a 2-core CPU (CIFAR: a small CNN on "
            "12,500 images for 5 epochs, far below the paper's accuracy; AG News: a TextCNN "
            "for 8 epochs): effects, even their signs (S2 on CIFAR), may differ under the 'paper' "
            "profile."),
    "paper": ("Runs of the 'paper' profile, trained on a GPU (device and torch version in "
              "the pool's manifest.json): CIFAR: airbench94 (Jordan 2024) on the full "
              "training set for 10 epochs, without its label smoothing in the baseline, "
              "bf16, test-time augmentation; a faster network than the paper's ResNet-18, "
              "at a similar accuracy (~94 %); AG News: a TextCNN (300-d embeddings) for 10 "
              "epochs."),
    "smoke": "Runs of the 'smoke' profile: tiny models for tests; their rates mean nothing.",
}
def pool_caveat(root=None, profile: str | None = None, datasets=None) -> str:
    """The training-profile caveat of the pools a figure reads.

    Parameters
    ----------
    root : path-like or None
        Run store; default the committed pool.
    profile : str or None
        The profile the figure was restricted to; ``None``: every profile the store holds
        (for ``datasets`` only, if given).
    """
    profiles = [profile] if profile else pool_profiles(root, datasets)
    if not profiles:
        return "No real-run pool was found."
    return " ".join(PROFILE_CAVEATS.get(p, f"Runs of a profile {p!r} this version does not "
                                           "describe.") for p in profiles)
MANIFEST_VERSION = 1


def code_version(repo: Path) -> str:
    """``git describe`` of the repository holding ``repo`` (or ``unknown``)."""
    try:
        out = subprocess.run(["git", "-C", str(repo), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def code_sha256(repo: Path) -> str:
    """SHA-256 over ``real_runs/*.py`` (name and bytes, sorted): identifies the training code
    also where the checkout has no ``.git`` (a GPU machine gets a plain copy)."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((Path(repo) / "real_runs").glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def scan(root: Path) -> list[dict]:
    """Every record under ``root`` with the facts the manifest keeps (verified on read)."""
    entries = []
    for path in sorted(root.glob("*/*/*/seed-*.npz")):
        rec = read_record(path)
        entries.append({
            "path": path.relative_to(root).as_posix(), "dataset": rec.dataset,
            "profile": rec.profile, "arm": rec.arm, "scenario": rec.scenario,
            "seed": rec.seed, "n_test": int(rec.correct.size),
            "final_accuracy": rec.final_accuracy, "config_hash": rec.config_hash,
            "data_fingerprint": rec.data_fingerprint, "wall_time_s": rec.wall_time_s,
            "payload_sha256": _payload_of(path),
        })
    return entries


def _payload_of(path: Path) -> str:
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        return json.loads(str(z["meta"]))["payload_sha256"]


def write_manifest(root, *, profile: str, data_root: str, repo: Path,
                   merges: list | None = None) -> dict:
    """Scan the pool at ``root`` and write ``manifest.json`` atomically.

    ``profile`` names the pool's profile(s) (comma-separated when it holds several);
    ``merges`` (kept by :mod:`real_runs.merge_records`) lists the record batches merged in
    from elsewhere, with their devices, torch and code versions. When None, the existing
    manifest's list is kept.
    """
    root = Path(root)
    records = scan(root)
    datasets = sorted({r["dataset"] for r in records})
    summary = {}
    for d in datasets:
        mine = [r for r in records if r["dataset"] == d]
        scen = sorted({r["scenario"] for r in mine if r["scenario"]})
        summary[d] = {
            "baseline_seeds": sorted(r["seed"] for r in mine if r["arm"] == "baseline"),
            "scenario_seeds": {s: sorted(r["seed"] for r in mine if r["scenario"] == s)
                               for s in scen},
            "caveat": DATA_CAVEATS.get(d, ""),
        }
    configs = {}
    for r in records:
        if r["arm"] == "baseline" and r["dataset"] not in configs:
            configs[r["dataset"]] = read_record(root / r["path"]).config
    if merges is None and (root / "manifest.json").is_file():
        merges = json.loads((root / "manifest.json").read_text()).get("merges")
    manifest = {
        "manifest_version": MANIFEST_VERSION, "record_format_version": FORMAT_VERSION,
        "profile": profile, "code_version": code_version(repo), "data_root": str(data_root),
        "updated_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "datasets": summary, "baseline_configs": configs, "records": records,
    }
    if merges:
        manifest["merges"] = merges
    write_atomic(root / "manifest.json", json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest
