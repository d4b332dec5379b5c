"""``livecodebench``: LiveCodeBench's code-generation pool from its leaderboard's JSON.

Source: github.com/LiveCodeBench/livecodebench.github.io (no licence stated) at commit
``8ed5690cdc26265076a803380e84f5c5848a0ce1``, file ``src/mocks/performances_generation.json``:
an object whose ``performances`` list holds one record per model and problem,
``{question_id, model, pass@1, platform, ...}``, ``pass@1`` the percentage of the model's 10
generations that passed (0, 10, ..., 100). The pool lists ``pass@1 x 10 / 100`` passing
attempts then the failing ones (the generations' order is not published; every draw of
:mod:`sim.generators.llm_items` permutes an item's attempts); the cluster is the problem's
``platform`` (atcoder, leetcode, codeforces). Models marked ``(n=1)`` in their name were
evaluated on one generation, not 10: they are left out (a pool needs the same attempts for
every model). Records keep the file's order.

Pool ``lcb_codegen_20240417.csv.gz``: 43 models x 400 problems x 10 attempts; sha256 of its
CSV ``d7a5135a0ccc694a4e75f7a42be4df9cd65a3bf765f62f1c7ab5169e6cbf9fa7`` (CRLF line ends)::

    git clone https://github.com/LiveCodeBench/livecodebench.github.io lcb
    C=8ed5690cdc26265076a803380e84f5c5848a0ce1
    git -C lcb show $C:src/mocks/performances_generation.json > perf.json
    python -m sim.llm_pools.build livecodebench --input perf.json --out lcb_codegen_20240417.csv
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalcal_core.validate import plain

from ._base import PoolBuilder, need, read_json, records, refuse, register

#: generations per model and problem behind ``pass@1``
ATTEMPTS = 10
#: what marks a model evaluated on a single generation
SINGLE_SAMPLE = "(n=1)"
EXPECTED = ("LiveCodeBench's performances_generation.json: an object whose 'performances' "
            "list holds {question_id, model, pass@1 (percent), platform} records")


def lcb_table(data, where, attempts: int = ATTEMPTS) -> pd.DataFrame:
    """The long pool of a parsed ``performances_generation.json``.

    Parameters
    ----------
    data : object
        The file's JSON value.
    where : path-like or str
        How messages name the file.
    attempts : int
        Generations per model and problem behind each ``pass@1``.

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, attempt, score, cluster``; per record, ``attempts`` rows, the
        passing ones first; ``attrs["left_out"]`` names the single-generation models.
    """
    perf = need(data, "performances", where, EXPECTED, list)
    table = records(perf, where, {"question_id": str, "model": str, "pass@1": (int, float),
                                  "platform": str}, EXPECTED)
    single = table["model"].str.contains(SINGLE_SAMPLE, regex=False)
    left_out = tuple(f"{m} (one generation)" for m in dict.fromkeys(table["model"][single]))
    table = table[~single]
    if table.empty:
        raise refuse(where, f"has only single-generation models {SINGLE_SAMPLE}; expected "
                            f"models with {attempts} generations")
    rate = table["pass@1"].to_numpy(dtype=float)
    passed = rate * attempts / 100.0
    bad = (np.abs(passed - np.rint(passed)) > 1e-6) | (passed < 0) | (passed > attempts)
    if bad.any():
        row = table.iloc[int(np.argmax(bad))]
        raise refuse(where, f"gives {row['model']!r} on {row['question_id']!r} pass@1 = "
                            f"{plain(row['pass@1'])}, not a multiple of 100/{attempts} in [0, 100]")
    n = len(table)
    attempt = np.tile(np.arange(attempts), n)
    frame = pd.DataFrame({
        "model": np.repeat(table["model"].to_numpy(), attempts),
        "item": np.repeat(table["question_id"].to_numpy(), attempts),
        "attempt": attempt,
        # k passing generations first: attempt a passes when a < k
        "score": (attempt < np.repeat(np.rint(passed).astype(int), attempts)).astype(int),
        "cluster": np.repeat(table["platform"].to_numpy(), attempts)})
    frame.attrs["left_out"] = left_out
    return frame


@register
class LiveCodeBench(PoolBuilder):
    """LiveCodeBench code generation: per-problem pass rates over 10 generations."""

    name = "livecodebench"
    title = "LiveCodeBench code generation (leaderboard of 2024-04-17, 400 problems)"
    repository = "LiveCodeBench/livecodebench.github.io"
    commit = "8ed5690cdc26265076a803380e84f5c5848a0ce1"
    paths = ("src/mocks/performances_generation.json",)
    licence = "none stated"
    pool = "lcb_codegen_20240417.csv.gz"
    sha256 = "d7a5135a0ccc694a4e75f7a42be4df9cd65a3bf765f62f1c7ab5169e6cbf9fa7"
    newline = "\r\n"
    commands = (
        "git clone https://github.com/LiveCodeBench/livecodebench.github.io lcb\n"
        f"C={commit}\n"
        "git -C lcb show $C:src/mocks/performances_generation.json > perf.json\n"
        "python -m sim.llm_pools.build livecodebench --input perf.json "
        "--out lcb_codegen_20240417.csv\n")

    def frame(self, inputs):
        (path,) = inputs
        return lcb_table(read_json(path, EXPECTED), path)
