"""``evalcal export``: any input ``evaluate`` reads, written as the tidy CSV it reads.

A results CSV in the user's layout (``--score-column`` and the like, ``--common-questions``)
or harness logs (``--arm NAME=PATH``, ``--baseline``/``--variant``, with ``--metric``,
``--task``, ``--filter``, ``--cluster``) are read exactly as ``evaluate`` reads them (the
same options, declared once in :class:`~.options.EvaluateOptions`, and the same checks) and
written as ``seed,arm,question,score`` (plus the cluster column) or ``seed,arm,metric`` per
seed: the file a pilot (``--from-pilot``), a script or a later ``evaluate`` takes. Logs'
runs (epochs, trials) become the ``seed`` column; since a seed column reads as training
seeds, the command says when the runs were repeats of fixed models (``--design models``).
Written atomically under the output folder's lock::

    evalcal export --arm base=logs/base/ --arm new=logs/new/ --metric acc --out tidy.csv
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core.atomic import atomic_path, check_target
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.designs import MODELS
from evalcal_core.options import add_options, check_options, option
from evalcal_core.options import config_from_args as options_from_args
from evalcal_core.outdir import locked_out
from evalcal_core.scores import ArmScores
from evalcal_core.validate import fail

from .options import EvaluateOptions, resolve

PROG = "python -m reports.evaluate.export"
#: the options of ``evaluate`` that say how to read the input (their declarations reused)
READ_OPTIONS = ("arm", "baseline", "variant", "metric", "task", "filter", "cluster",
                "percent", "metric_range", "partial_credit", "log_format", "max_member_mb",
                "score_column", "arm_column", "model_column", "question_column",
                "seed_column", "common_questions")


def _read_fields() -> list:
    declared = {f.name: f for f in fields(EvaluateOptions)}
    return [(name, declared[name].type,
             dataclasses.field(default=declared[name].default,
                               metadata=declared[name].metadata))
            for name in READ_OPTIONS]


#: ``export``'s options: ``evaluate``'s reading options and ``--out``
ExportOptions = dataclasses.make_dataclass(
    "ExportOptions",
    [("out", str, option("--out", metavar="TIDY.csv",
                         help="the tidy CSV to write (atomically, under its folder's lock)")),
     *_read_fields()],
    frozen=True, namespace={"__post_init__": lambda self: check_options(self),
                            "__doc__": "What ``export`` was asked, option by option."})


def tidy_frame(scores: ArmScores) -> pd.DataFrame:
    """The tidy table of ``scores``: one row per arm, run and question (``seed, arm,
    question, score`` and the cluster column), or per arm and seed (``seed, arm, metric``)
    for per-seed scores; an arm's absent seeds (ragged padding) are left out.

    Parameters
    ----------
    scores : ArmScores
        Scores in the file's units (fractions unless a ``--metric-range`` metric).

    Returns
    -------
    pandas.DataFrame
        Arms in order, runs in order within an arm, questions within a run.
    """
    m, r, n = scores.scores.shape
    per_question = scores.question_ids != ("metric",)
    columns = {"seed": np.tile(np.repeat(np.array(scores.run_ids, dtype=object), n), m),
               "arm": np.repeat(np.array(scores.arms, dtype=object), r * n)}
    if per_question:
        columns["question"] = np.tile(np.array(scores.question_ids, dtype=object), m * r)
        columns["score"] = scores.scores.reshape(-1)
        if scores.clusters is not None:
            name = scores.cluster_name or "cluster"
            columns[name] = np.tile(np.asarray(scores.clusters, dtype=object), m * r)
    else:
        columns["metric"] = scores.scores.reshape(-1)
    frame = pd.DataFrame(columns)
    value = "score" if per_question else "metric"
    return frame[frame[value].notna()].reset_index(drop=True)


def build_parser() -> ArgumentParser:
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="?", default=None,
                   help="a results CSV in your layout (or give harness logs with --arm)")
    return add_options(p, ExportOptions)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    opts = options_from_args(ExportOptions, args)
    if not str(opts.out).strip():
        raise fail("--out", "a file name ending in .csv (the tidy CSV evaluate reads)",
                   opts.out)
    out = check_target(Path(opts.out))  # before the work: a folder or device is refused
    if not out.name.lower().endswith(".csv"):
        raise fail("--out", "a file name ending in .csv (the tidy CSV evaluate reads)",
                   opts.out)
    if args.results is None and not opts.arm and opts.baseline is None:
        raise fail("results", "a results CSV, or harness logs with --arm NAME=PATH (or "
                   "--baseline and --variant)", got="no input")
    config = resolve(EvaluateOptions(**{n: getattr(opts, n) for n in READ_OPTIONS}),
                     args.results)
    from .cli import _load  # evaluate's own reading and checks

    loaded = _load(config)
    scores = loaded.scores
    frame = tidy_frame(scores)
    with locked_out(out.parent, "--out"), atomic_path(out) as tmp:
        frame.to_csv(tmp, index=False)
    what = (f"{scores.m} arms x {scores.r} run(s) x {scores.n} questions"
            if loaded.per_question else f"{scores.m} arms x {scores.r} seed(s), one metric")
    print(f"wrote {out}: {len(frame):,} rows ({what}); runs: {loaded.runs_from}")
    if loaded.paired_logs is not None:
        print(loaded.paired_logs.summary_lines()[0])
    for note in scores.notes:
        print(note)
    if config.percent:
        print("scores written as fractions (--percent read them as percentages)")
    if scores.runs_are == "repeats" and scores.r > 1:
        print(f"its runs are repeats of fixed models, not training seeds: evaluate it with "
              f"--design {MODELS}")
    return 0


def run() -> None:
    """Console entry point."""
    run_main(main, PROG)


if __name__ == "__main__":
    run()
