"""``swebench``: SWE-bench Verified's bash-only leaderboard, per instance.

Source: github.com/SWE-bench/swe-bench.github.io (CC BY-NC 4.0) at commit
``f1176b65ae29d14f4f52208b48e3d8cfc972bc17``, file ``data/leaderboards.json``: an object whose
``leaderboards`` list holds ``{name, results}``; the ``bash-only`` leaderboard (every system
the same minimal agent on SWE-bench Verified's 500 instances, one run each) lists per
system its ``folder`` and, for most systems, ``per_instance_details``: instance id ->
``{resolved, cost, api_calls}``. The pool's model is the folder, the item the instance id,
one attempt scored 1 when resolved; the cluster is the instance's repository (its id before
``__``: django, sympy, ...). Systems without per-instance details are left out. Rows keep
the file's order.

Pool ``swebench_verified_bash.csv.gz``: 25 systems x 500 instances x 1 attempt, 12
repositories; sha256 of its CSV
``362d1ceea65f3bfabc3f918626403f6b19f47a59462b27be949668c9f96fa86d`` (CRLF line ends)::

    git clone https://github.com/SWE-bench/swe-bench.github.io swe
    C=f1176b65ae29d14f4f52208b48e3d8cfc972bc17
    git -C swe show $C:data/leaderboards.json > lb.json
    python -m sim.llm_pools.build swebench --input lb.json --out swebench_verified_bash.csv
"""

from __future__ import annotations

import pandas as pd

from ._base import PoolBuilder, need, read_json, refuse, register

#: the leaderboard read (the same agent for every system)
LEADERBOARD = "bash-only"
EXPECTED = ("SWE-bench's data/leaderboards.json: an object whose 'leaderboards' list holds "
            f"{{name, results}}, one named {LEADERBOARD!r}, its results {{folder, "
            "per_instance_details: {instance: {resolved}}}")


def swebench_table(data, where, leaderboard: str = LEADERBOARD) -> pd.DataFrame:
    """The long pool of a parsed ``leaderboards.json``'s ``leaderboard``.

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, attempt, score, cluster``; one attempt per instance;
        ``attrs["left_out"]`` names the systems without per-instance details.
    """
    boards = need(data, "leaderboards", where, EXPECTED, list)
    board = next((b for b in boards if isinstance(b, dict) and b.get("name") == leaderboard),
                 None)
    if board is None:
        raise refuse(where, f"has no leaderboard named {leaderboard!r}; expected {EXPECTED}")
    rows, left_out = [], []
    for i, result in enumerate(need(board, "results", where, EXPECTED, list)):
        folder = need(result, "folder", where, EXPECTED, str)
        details = result.get("per_instance_details")
        if not details:
            left_out.append(f"{folder} (no per-instance details)")
            continue
        if not isinstance(details, dict):
            raise refuse(where, f"result {i} ({folder!r}) has per_instance_details of type "
                                f"{type(details).__name__}; expected {EXPECTED}")
        for instance, detail in details.items():
            resolved = detail.get("resolved") if isinstance(detail, dict) else None
            if not isinstance(resolved, bool):
                raise refuse(where, f"result {i} ({folder!r}) gives instance {instance!r} "
                                    f"resolved = {resolved!r}, not true or false")
            if "__" not in instance:
                raise refuse(where, f"result {i} ({folder!r}) has instance {instance!r}, not "
                                    "'OWNER__REPO-NUMBER'")
            rows.append((folder, instance, 0, int(resolved), instance.split("__", 1)[0]))
    if not rows:
        raise refuse(where, f"has no system with per_instance_details on {leaderboard!r}")
    frame = pd.DataFrame(rows, columns=["model", "item", "attempt", "score", "cluster"])
    frame.attrs["left_out"] = tuple(left_out)
    return frame


@register
class SWEBench(PoolBuilder):
    """SWE-bench Verified, bash-only: one run per system, instances clustered by repository."""

    name = "swebench"
    title = "SWE-bench Verified, bash-only leaderboard (mini-SWE-agent)"
    repository = "SWE-bench/swe-bench.github.io"
    commit = "f1176b65ae29d14f4f52208b48e3d8cfc972bc17"
    paths = ("data/leaderboards.json",)
    licence = "CC BY-NC 4.0"
    pool = "swebench_verified_bash.csv.gz"
    sha256 = "362d1ceea65f3bfabc3f918626403f6b19f47a59462b27be949668c9f96fa86d"
    newline = "\r\n"
    commands = (
        "git clone https://github.com/SWE-bench/swe-bench.github.io swe\n"
        f"C={commit}\n"
        "git -C swe show $C:data/leaderboards.json > lb.json\n"
        "python -m sim.llm_pools.build swebench --input lb.json "
        "--out swebench_verified_bash.csv\n")

    def frame(self, inputs):
        (path,) = inputs
        return swebench_table(read_json(path, EXPECTED), path)
