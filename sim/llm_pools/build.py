"""``python -m sim.llm_pools.build``: rebuild an LLM pool from its public source file.

MathArena's first public leaderboard (github.com/eth-sri/matharena.ai, MIT licence) publishes,
in ``static/js/table_data.js``, each model's success rate on each problem of AIME I 2025 over
4 independent attempts (0, 25, 50, 75 or 100%). The order of the attempts is not published;
the pool lists, per model and problem, ``round(rate * 4 / 100)`` correct attempts then the
wrong ones. Every draw of :mod:`sim.generators.llm_items` permutes a question's attempts at
random, so it does not depend on that order (the attempts are exchangeable)::

    git --git-dir PATH/TO/matharena.ai show COMMIT:static/js/table_data.js > table_data.js
    python -m sim.llm_pools.build --table-data table_data.js \
        --out matharena_aime_2025_i.csv
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalcal_core.atomic import write_atomic
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import add_options, check_options, config_from_args, option, out_option
from evalcal_core.validate import Interval, InvalidParameterError, check_int

OWNER = "python -m sim.llm_pools.build"

#: attempts per model and problem in MathArena's first leaderboard
MATHARENA_ATTEMPTS = 4
#: the competition of ``table_data.js`` (its single cluster)
MATHARENA_COMPETITION = "aime_2025_i"


def slug(name: str) -> str:
    """A model's name as a ``--param`` value: lower case, no spaces, commas or parentheses
    (``"o3-mini (high)"`` -> ``"o3-mini-high"``)."""
    text = re.sub(r"[^a-z0-9.]+", "-", name.lower())
    return text.strip("-")


def matharena_table(text: str, attempts: int = MATHARENA_ATTEMPTS) -> pd.DataFrame:
    """The long pool of a MathArena ``table_data.js``.

    Parameters
    ----------
    text : str
        The file's text: ``var result_data = [...]``, one object per problem (``question``
        an integer) mapping model name -> success rate in percent, then summary rows
        (``question`` "Avg", "Cost"), which are left out.
    attempts : int
        Attempts per model and problem behind each rate.

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, attempt, score, cluster``; ``score`` 0/1, the correct
        attempts first (their order is not published).
    """
    attempts = check_int(attempts, "attempts", OWNER, low=1)
    try:
        rows = json.loads(text[text.index("["):text.rindex("]") + 1])
    except ValueError as exc:
        raise InvalidParameterError(f"{OWNER}: the table data is not a JSON list after "
                                    f"'result_data =' ({exc})") from None
    out = []
    for row in rows:
        problem = row.get("question")
        if not isinstance(problem, int):
            continue
        for model, rate in row.items():
            if model == "question":
                continue
            correct = float(rate) * attempts / 100.0
            if abs(correct - round(correct)) > 1e-6:
                raise InvalidParameterError(f"{OWNER}: {model!r} on problem {problem} has rate "
                                            f"{rate}%, not a multiple of 100/{attempts}")
            out.extend({"model": slug(model), "item": problem, "attempt": a,
                        "score": int(a < round(correct)), "cluster": MATHARENA_COMPETITION}
                       for a in range(attempts))
    if not out:
        raise InvalidParameterError(f"{OWNER}: no per-problem rows in the table data")
    frame = pd.DataFrame(out)
    if frame["model"].nunique() != len({m for r in rows for m in r if m != "question"}):
        raise InvalidParameterError(f"{OWNER}: two model names give the same slug")
    return frame.sort_values(["model", "item", "attempt"], ignore_index=True)


@dataclass(frozen=True)
class BuildOptions:
    """What ``python -m sim.llm_pools.build`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`), checked when built."""

    table_data: str = option("--table-data", help="MathArena's static/js/table_data.js "
                                                  "(github.com/eth-sri/matharena.ai)")
    out: Path = out_option(dataclasses.MISSING, help="the pool CSV to write")
    attempts: int = option("--attempts", MATHARENA_ATTEMPTS, kind=int,
                           constraint=Interval("int", 1),
                           help="attempts per model and problem behind each rate")

    def __post_init__(self):
        check_options(self)


def build_parser() -> ArgumentParser:
    """The options of :class:`BuildOptions`, as declared there."""
    return add_options(ArgumentParser(prog=OWNER, description=__doc__), BuildOptions)


def main(argv=None) -> int:
    config = config_from_args(BuildOptions, build_parser().parse_args(argv))
    frame = matharena_table(Path(config.table_data).read_text(), config.attempts)
    write_atomic(config.out, frame.to_csv(index=False))
    print(f"wrote {config.out}: {frame['model'].nunique()} models x "
          f"{frame['item'].nunique()} items x {config.attempts} attempts")
    return 0


if __name__ == "__main__":
    run_main(main, OWNER)
