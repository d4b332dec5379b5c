"""``evalcal pools from-logs --arm NAME=LOG [--arm ...] --out POOL.csv[.gz]``: harness logs
with several epochs or runs, written as an item pool.

Each ``--arm`` is one model: its log (an Inspect log with several epochs, an lm-eval folder
with several runs, HELM trials, ...; read by :func:`evalcal_core.readers.read_log` with the
options ``evaluate`` has: ``--metric``, ``--task``, ``--filter``, ``--cluster``) gives one
row per question and run: ``model`` the arm's name, ``item`` the question id, ``attempt``
the run's index (0, 1, ...; the log's run order), ``score`` and ``cluster`` when known.
Questions missing from some arm are left out (counted in the printed line), so every model
has every item. The pool is checked with the reader's own rules before anything is written
(:func:`evalcal_core.pools.check_frame`: ragged runs, scores outside [0, 1], ...); the output's
folder is locked while it is written, and the file is written to a temporary name and renamed,
so no partial pool is ever left. The folder keeps its empty ``.lock`` afterwards, as every
writer's does (:func:`evalcal_core.outdir.locked_out`, also ``sim.llm_pools.build`` and the
commands' output folders): deleting it would let a writer that opened the old file and one
that creates a new one both hold "the" lock.
"""

from __future__ import annotations

import dataclasses
import gzip
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalcal_core.atomic import atomic_path, check_target
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import add_options, check_options, config_from_args, option
from evalcal_core.outdir import locked_out
from evalcal_core.pools import ItemPool, check_frame
from evalcal_core.validate import InvalidParameterError, fail

OWNER = "evalcal pools from-logs"


def parse_arms(values) -> dict:
    """``["NAME=LOG", ...]`` -> ``{name: log}``, in order, read as every command reads
    ``--arm`` (:func:`evalcal_core.readers.parse_arm_options`); at least one."""
    from evalcal_core.readers import parse_arm_options

    arms = parse_arm_options(values, value_name="LOG")
    if not arms:
        raise InvalidParameterError("--arm: give at least one NAME=LOG (one model per arm)")
    return arms


def logs_frame(arms: dict, *, metric=None, task=None, filter=None, cluster=None,
               fmt=None) -> tuple[pd.DataFrame, dict]:
    """The pool rows of the arms' logs, and per arm the question ids left out.

    Returns
    -------
    (pandas.DataFrame, dict of str to list of str)
        Columns ``model, item, attempt, score`` (and ``cluster`` when every log names one);
        the questions of each arm that another arm lacks.
    """
    from evalcal_core.readers import read_log

    logs = {}
    for name, path in arms.items():
        if not Path(path).exists():
            raise InvalidParameterError(f"--arm {name!r}: log {path!r} does not exist")
        logs[name] = read_log(path, fmt=fmt, task=task, metric=metric, filter=filter,
                              cluster=cluster)
    common = set.intersection(*(set(log.questions) for log in logs.values()))
    if not common:
        raise InvalidParameterError(f"{OWNER}: the arms' logs share no question id")
    left_out = {a: [q for q in log.questions if q not in common] for a, log in logs.items()}
    with_clusters = all(log.clusters is not None for log in logs.values())
    parts = []
    for name, log in logs.items():
        keep = [j for j, q in enumerate(log.questions) if q in common]
        runs, n = log.scores.shape[0], len(keep)
        part = {"model": name,
                "item": [log.questions[j] for j in keep] * runs,
                "attempt": [r for r in range(runs) for _ in range(n)],
                "score": log.scores[:, keep].ravel()}
        if with_clusters:
            part["cluster"] = [log.clusters[j] for j in keep] * runs
        parts.append(pd.DataFrame(part))
    frame = pd.concat(parts, ignore_index=True)
    return frame.sort_values(["model", "item", "attempt"], kind="stable",
                             ignore_index=True), left_out


def write_pool(frame: pd.DataFrame, out) -> ItemPool:
    """Check ``frame`` as a pool, then write it to ``out`` (gzip when it ends in ``.gz``)
    atomically under the folder's lock; returns the checked pool."""
    out = check_target(Path(out))
    pool = check_frame(frame, f"{OWNER}: the pool for {str(out)!r}", source=str(out))
    data = frame.to_csv(index=False).encode()
    if out.name.lower().endswith(".gz"):
        data = gzip.compress(data, mtime=0)  # mtime 0: the same logs give the same bytes
    with locked_out(out.parent, "--out"), atomic_path(out) as tmp:
        tmp.write_bytes(data)
    return pool


#: the names a pool file may have (what the pool readers and --llm-pools take)
POOL_SUFFIXES = (".csv", ".csv.gz")


@dataclass(frozen=True)
class FromLogsOptions:
    """What ``evalcal pools from-logs`` was asked; each field a command-line option."""

    out: Path = option("--out", dataclasses.MISSING, kind=Path, in_argv=False,
                       help="the pool file to write (.csv, or .csv.gz for gzip)")
    arm: tuple = option("--arm", (), action="append", metavar="NAME=LOG",
                        help="one model's harness log (file or folder) with several "
                             "epochs/runs; repeat per model")
    metric: str | None = option("--metric", None, help="metric, scorer or column to read")
    task: str | None = option("--task", None, help="the task when a log holds several")
    filter: str | None = option("--filter", None,
                                help="lm-eval filter, HELM perturbation or tidy CSV arm")
    cluster: str | None = option("--cluster", None,
                                 help="field whose value groups the questions (the pool's "
                                      "cluster column)")
    log_format: str | None = option("--log-format", None,
                                    help="the logs' format (detected when left out)")

    def __post_init__(self):
        check_options(self)
        if not str(self.out).lower().endswith(POOL_SUFFIXES):
            # a pool under another name is a file no reader takes (--llm-pools, describe)
            raise fail("--out", "a pool file name ending in .csv or .csv.gz", str(self.out))


def build_parser() -> ArgumentParser:
    """The options of :class:`FromLogsOptions`, as declared there."""
    return add_options(ArgumentParser(prog=OWNER, description=__doc__), FromLogsOptions)


def main(argv=None) -> int:
    config = config_from_args(FromLogsOptions, build_parser().parse_args(argv))
    arms = parse_arms(config.arm)
    frame, left_out = logs_frame(arms, metric=config.metric, task=config.task,
                                 filter=config.filter, cluster=config.cluster,
                                 fmt=config.log_format)
    if not frame.empty and frame["attempt"].max() == 0:
        # a pool is for repeated runs: its A/A cells split each model's attempts in two
        raise fail("--arm", "logs with several epochs or runs each (a pool's A/A cells split "
                   "a model's attempts in two)", got="logs of one run per question")
    pool = write_pool(frame, config.out)
    dropped = sum(len(v) for v in left_out.values())
    print(f"wrote {config.out}: {len(pool.models)} model(s) x {len(pool.items)} items x "
          f"{pool.attempts} attempts" + (f"; {dropped} question(s) left out (not in every "
                                          "arm)" if dropped else ""))
    return 0


if __name__ == "__main__":
    run_main(main, OWNER)
