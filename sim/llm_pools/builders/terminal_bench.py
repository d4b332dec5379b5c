"""``terminal-bench``: Terminal-Bench core 0.1.1's pool of real, ordered trials.

Source: github.com/laude-institute/terminal-bench-leaderboard (no licence stated) at commit
``8e1925a397d7ed859c027cc19b3a3d90c16ef8df``, files
``results/terminal-bench-core@0.1.1/SYSTEM/[RUN/]results.json`` (one system,
``20250906_orchestrator_claude-4.1-opus``, is under ``terminal-bench-core:0.1.1``). Each
``results.json`` holds ``results``, one record per trial: ``task_id``, ``trial_name`` (ending
``.K-of-N``), ``is_resolved`` (true, false or null) and ``failure_mode``. A system is the
folder under the dataset folder (its name is the pool's model); its runs are its
``results.json`` files in path order. A trial's attempt is ``run x N + K - 1``: the run's
index where a system submitted one file per run of ``1-of-1`` trials, ``K - 1`` where it
submitted one file of ``K-of-5`` trials. The score is 1 when ``is_resolved`` is true, else 0;
a trial with no outcome because the agent crashed (``is_resolved`` null and ``failure_mode``
``unknown_agent_error``) is left out, so some systems are ragged (read the pool with
``complete_models=True``). The cluster is the dataset, ``terminal-bench-core-0.1.1``. Rows are
by system, attempt, task.

The shared pool holds 9 of the 13 systems at that commit (goose with claude-4-opus and with
claude-4-sonnet, chaterm and ob1 are not in it); the commands below fetch exactly its 41
files. Pool ``tbench_core011.csv.gz``: 9 systems x 80 tasks x up to 5 trials (4 systems
complete); sha256 of its CSV
``0567d56bbe04b3c050fed0d4679621eeed4ab68d8e2c05ff90077aff1655b6a3`` (CRLF line ends)::

    git clone https://github.com/laude-institute/terminal-bench-leaderboard tb
    C=8e1925a397d7ed859c027cc19b3a3d90c16ef8df
    S='(20250711|20250811|20250825|20250902|20250906|20250923|20250924)_[^/]*'
    for f in $(git -C tb ls-tree -r --name-only $C results | grep -E "/$S/([^/]*/)?results.json$")
    do mkdir -p "$(dirname "$f")" && git -C tb show "$C:$f" > "$f"; done
    python -m sim.llm_pools.build terminal-bench --input results/*/*/results.json \\
        results/*/*/*/results.json --out tbench_core011.csv
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ._base import PoolBuilder, need, read_json, records, refuse, register

EXPECTED = ("a Terminal-Bench results.json: an object whose 'results' list holds {task_id, "
            "trial_name, is_resolved, failure_mode} records")
#: the dataset folder a system's folder sits in (``terminal-bench-core@0.1.1``)
DATASET = re.compile(r"^(terminal-bench[\w.-]*)[@:]([\w.-]+)$")
#: a trial name's ``K-of-N`` (``task.2-of-5`` or ``task.1-of-1.RUN``)
TRIAL = re.compile(r"\.(\d+)-of-(\d+)(?:\.|$)")
#: the failure mode of a trial the agent never finished (no outcome: left out)
NO_OUTCOME = "unknown_agent_error"


def system_of(path: Path) -> tuple[str, str, str]:
    """``(system, run key, cluster)`` of a ``results.json`` from its place in the
    leaderboard's layout ``DATASET@VERSION/SYSTEM/[RUN/]results.json``."""
    parts = Path(path).parts
    for i in range(len(parts) - 2, -1, -1):
        match = DATASET.match(parts[i])
        if match and i + 2 < len(parts):
            # the run key orders a system's runs by their path below the dataset folder
            return parts[i + 1], "/".join(parts[i + 2:]), f"{match[1]}-{match[2]}"
    raise refuse(path, "is not under a 'terminal-bench-core@VERSION/SYSTEM/' folder; keep the "
                       "leaderboard's layout (results/terminal-bench-core@0.1.1/SYSTEM/[RUN/]"
                       "results.json), which names the system")


def trials(path: Path) -> pd.DataFrame:
    """One results.json's trials: ``item, k, n, resolved, failure`` per record."""
    data = read_json(path, EXPECTED)
    table = records(need(data, "results", path, EXPECTED, list), path,
                    {"task_id": str, "trial_name": str, "is_resolved": (bool, type(None)),
                     "failure_mode": str}, EXPECTED)
    parsed = table["trial_name"].str.extract(TRIAL)
    if parsed.isna().any().any():
        row = int(np.argmax(parsed.isna().any(axis=1).to_numpy()))
        raise refuse(path, f"record {row} has trial_name {table['trial_name'].iloc[row]!r} "
                           "without '.K-of-N'; expected " + EXPECTED)
    return pd.DataFrame({"item": table["task_id"], "k": parsed[0].astype(int),
                         "n": parsed[1].astype(int), "resolved": table["is_resolved"],
                         "failure": table["failure_mode"]})


def tbench_table(inputs) -> pd.DataFrame:
    """The long pool of Terminal-Bench ``results.json`` files (see the module docstring).

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, attempt, score, cluster``; rows by system, attempt, task.
    """
    placed = sorted((system_of(p), Path(p)) for p in inputs)
    parts, run = [], {}
    for (system, _key, cluster), path in placed:
        index = run[system] = run.get(system, -1) + 1
        t = trials(path)
        kept = t[~(t["resolved"].isna() & (t["failure"] == NO_OUTCOME))]
        parts.append(pd.DataFrame({
            "model": system, "item": kept["item"],
            "attempt": index * kept["n"] + kept["k"] - 1,
            "score": kept["resolved"].eq(True).astype(int),  # null (no verdict) scores 0
            "cluster": cluster}))
    frame = pd.concat(parts, ignore_index=True)
    return frame.sort_values(["model", "attempt", "item"], kind="stable", ignore_index=True)


@register
class TerminalBench(PoolBuilder):
    """Terminal-Bench core 0.1.1: real ordered trials of agent systems (ragged)."""

    name = "terminal-bench"
    title = "Terminal-Bench core 0.1.1 leaderboard submissions (5 runs each)"
    repository = "laude-institute/terminal-bench-leaderboard"
    commit = "8e1925a397d7ed859c027cc19b3a3d90c16ef8df"
    paths = ("results/terminal-bench-core@0.1.1/*/results.json",
             "results/terminal-bench-core@0.1.1/*/*/results.json",
             "results/terminal-bench-core:0.1.1/*/results.json")
    licence = "none stated"
    pool = "tbench_core011.csv.gz"
    sha256 = "0567d56bbe04b3c050fed0d4679621eeed4ab68d8e2c05ff90077aff1655b6a3"
    newline = "\r\n"
    max_inputs = None
    ragged = True
    commands = (
        "git clone https://github.com/laude-institute/terminal-bench-leaderboard tb\n"
        f"C={commit}\n"
        "S='(20250711|20250811|20250825|20250902|20250906|20250923|20250924)_[^/]*'\n"
        "for f in $(git -C tb ls-tree -r --name-only $C results | grep -E "
        "\"/$S/([^/]*/)?results.json$\")\n"
        "do mkdir -p \"$(dirname \"$f\")\" && git -C tb show \"$C:$f\" > \"$f\"; done\n"
        "python -m sim.llm_pools.build terminal-bench --input results/*/*/results.json "
        "results/*/*/*/results.json --out tbench_core011.csv\n")

    def frame(self, inputs):
        return tbench_table(inputs)
