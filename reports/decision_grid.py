"""``python -m sim.decision_grid``: the decision grid's table, and the end-to-end check.

The grid (:func:`sim.decision_grid.run_grid`) scores every decision ``evaluate`` prints on
its design's generator; then, unless ``--end-to-end 0``, a sample of each family's
experiments is written as users' files and run through ``evalcal.compare`` and the
``evaluate`` command (:mod:`reports.end_to_end`), and the line under the table says how many
were checked and whether every decision equalled the grid's (exit status 1 if not).
"""

from __future__ import annotations

import sys

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import run_main
from evalcal_core.options import config_from_args
from evalcal_core.outdir import run_outputs
from sim.decision_grid import (
    GridConfig,
    build_parser,
    format_table,
    grid_cells,
    legend,
    run_grid,
    summary,
)
from sim.outputs import csv_text

from .end_to_end import check_families

PROG = "python -m sim.decision_grid"


def main(argv=None) -> int:
    """Command line: print the grid and the end-to-end line; write both with ``--out``.

    Exit 0 whatever the grid's verdicts; 1 when a sampled experiment's decision through the
    command differs from the grid's.
    """
    config = config_from_args(GridConfig, build_parser().parse_args(argv))
    known = ("decision_grid.csv", "decision_grid.md")
    # one line per real pool absent here: its cells are skipped, not failed
    skipped = grid_cells(config)[1]
    if config.out is None:
        frame, checked = _run(config)
    else:
        with run_outputs(config.out, PROG, known=known) as outputs:
            frame, checked = _run(config)
            write_atomic(outputs.path / "decision_grid.csv", csv_text(frame))
            outputs.wrote("decision_grid.csv")
            write_atomic(outputs.path / "decision_grid.md",
                         "".join(f"{line}\n\n" for line in skipped)
                         + format_table(frame, markdown=True) + "\n\n" + legend(config) + "\n\n"
                         + summary(frame) + "\n\n" + checked.line + "\n")
            outputs.wrote("decision_grid.md")
    for line in skipped:
        print(line)
    print(format_table(frame))
    print(legend(config))
    print(summary(frame))
    print(checked.line)
    sys.stdout.flush()
    return 1 if checked.mismatches else 0


def _run(config: GridConfig):
    frame = run_grid(config)
    checked = check_families(config.end_to_end, seed=config.seed,
                             families=config.families or None, quick=config.quick,
                             pools=config.llm_pools)
    return frame, checked


def run() -> None:
    """The console entry point."""
    run_main(main, PROG)


if __name__ == "__main__":
    run()
