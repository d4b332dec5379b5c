"""Peak memory of reading two large lm-eval ``--log_samples`` files as a paired comparison.

Writes two samples files of about 110 MB each (``--mb``) into a temporary folder: one JSON
line per document with a long ``doc``, ``arguments`` and ``resps`` (the bulk of a real file)
and the metric values. Then, in a fresh Python process (so that only the reading is
measured), reads them with :func:`evalcal_core.readers.read_arms` and reports the peak
resident memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and the wall time, next to
the baseline peak of a process that only imports the package.

    python benchmarks/bench_log_memory.py            # two ~110 MB files
    python benchmarks/bench_log_memory.py --mb 20    # quicker
    python benchmarks/bench_log_memory.py --pad 20   # ~230,000 short documents per file
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

MEASURE = r"""
import resource, sys, time
from evalcal_core import readers
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
arms = {"baseline": sys.argv[1], "variant": sys.argv[2]} if len(sys.argv) > 2 else None
if arms:
    scores = readers.read_arms(arms, metric="acc")
    shape = scores.scores.shape
else:
    shape = None
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before, peak, wall, shape)
"""


def write_samples(path: Path, megabytes: float, seed: int, pad: int = 1500) -> int:
    """An lm-eval samples file of about ``megabytes`` MB; returns the number of documents.

    ``pad`` is the length of each logged prompt string (a shorter one: more documents).
    """
    pad = "x" * pad
    target = megabytes * 1e6
    written, doc_id = 0, 0
    with path.open("w", encoding="utf-8") as fh:
        while written < target:
            acc = float((doc_id * 7 + seed) % 3 != 0)
            line = json.dumps({
                "doc_id": doc_id,
                "doc": {"question": f"{doc_id} {pad}", "choices": ["a", "b", "c", "d"]},
                "target": "0",
                "arguments": {f"gen_args_{i}": {"arg_0": pad, "arg_1": f" {c}"}
                              for i, c in enumerate("abc")},
                "resps": [[[str(-0.5 * i), "False"]] for i in range(3)],
                "filtered_resps": [[str(-0.5 * i), "False"] for i in range(3)],
                "filter": "none", "metrics": ["acc", "acc_norm"],
                "doc_hash": "d" * 64, "prompt_hash": "p" * 64, "target_hash": "t" * 64,
                "acc": acc, "acc_norm": acc}) + "\n"
            fh.write(line)
            written += len(line)
            doc_id += 1
    return doc_id


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=110.0, help="size of each file, MB (110)")
    parser.add_argument("--pad", type=int, default=1500,
                        help="characters of each logged prompt (1500); smaller: more documents")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for arm, seed in (("base", 0), ("var", 1)):
            folder = Path(tmp) / arm
            folder.mkdir()
            path = folder / "samples_bench_2024-01-01T00-00-00.000001.jsonl"
            docs = write_samples(path, args.mb, seed, args.pad)
            paths.append(str(path))
        sizes = [Path(p).stat().st_size / 1e6 for p in paths]
        idle = subprocess.run([sys.executable, "-c", MEASURE], check=True, capture_output=True,
                              text=True).stdout.split()
        out = subprocess.run([sys.executable, "-c", MEASURE, *paths], check=True,
                             capture_output=True, text=True).stdout.split(maxsplit=3)
    peak_mb, idle_mb = int(out[1]) / 1024, int(idle[1]) / 1024
    print(f"two lm-eval samples files of {sizes[0]:.0f} MB and {sizes[1]:.0f} MB "
          f"({docs} documents each, metric acc of acc/acc_norm)")
    print(f"read_arms: {float(out[2]):.1f} s, scores {out[3]}")
    print(f"peak RSS {peak_mb:.0f} MB (a process that only imports evalcal_core.readers: "
          f"{idle_mb:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
