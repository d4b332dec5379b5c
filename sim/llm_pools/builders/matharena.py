"""``matharena``: MathArena's AIME I 2025 pool from its leaderboard's ``table_data.js``.

Source: github.com/eth-sri/matharena.ai (MIT licence) at commit
``8fdd9aba6ddc5faf354790bf895e0e47a1b450af``, file ``static/js/table_data.js``:
``var result_data = [...]``, one object per problem (``question`` an integer) mapping each
model's name to its success rate in percent over 4 independent attempts (0, 25, 50, 75 or
100), then summary rows (``question`` "Avg", "Cost"), which are left out. The order of the
attempts is not published: the pool lists, per model and problem, ``rate x 4 / 100`` correct
attempts then the wrong ones (every draw of :mod:`sim.generators.llm_items` permutes an
item's attempts, so nothing depends on that order). Model names become ``--param`` values
(:func:`slug`: ``"o3-mini (high)"`` -> ``o3-mini-high``); one cluster, ``aime_2025_i``.

Pool ``matharena_aime_2025_i.csv.gz``: 16 models x 15 problems x 4 attempts; sha256 of its
CSV ``6f74c521fab96cfa269ce8adcd3ffa12d329778af52e9efb670543127bd047f3``::

    git clone https://github.com/eth-sri/matharena.ai ma
    C=8fdd9aba6ddc5faf354790bf895e0e47a1b450af
    git -C ma show $C:static/js/table_data.js > table_data.js
    python -m sim.llm_pools.build matharena --input table_data.js --out matharena_aime_2025_i.csv
"""

from __future__ import annotations

import json
import re

import pandas as pd

from ._base import PoolBuilder, read_text, refuse, register

#: attempts per model and problem in MathArena's first leaderboard
ATTEMPTS = 4
#: the competition of ``table_data.js`` (the pool's single cluster)
COMPETITION = "aime_2025_i"


def slug(name: str) -> str:
    """A model's name as a ``--param`` value: lower case, no spaces, commas or parentheses
    (``"o3-mini (high)"`` -> ``"o3-mini-high"``)."""
    text = re.sub(r"[^a-z0-9.]+", "-", name.lower())
    return text.strip("-")


def matharena_table(text: str, attempts: int = ATTEMPTS, where: str = "table data"
                    ) -> pd.DataFrame:
    """The long pool of a MathArena ``table_data.js``.

    Parameters
    ----------
    text : str
        The file's text: ``var result_data = [...]``, one object per problem mapping model
        name -> success rate in percent, then summary rows, which are left out.
    attempts : int
        Attempts per model and problem behind each rate.
    where : str
        How messages name the file.

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, attempt, score, cluster``; ``score`` 0/1, the correct
        attempts first (their order is not published); rows by model, problem, attempt.
    """
    expected = ("'var result_data = [...]': one object per problem, 'question' an integer and "
                "each model's success rate in percent")
    try:
        rows = json.loads(text[text.index("["):text.rindex("]") + 1])
    except (ValueError, RecursionError):  # deep nesting too: one line, not a traceback
        raise refuse(where, f"is not MathArena's table data; expected {expected}") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise refuse(where, f"is not MathArena's table data; expected {expected}")
    out = []
    for row in rows:
        problem = row.get("question")
        if not isinstance(problem, int) or isinstance(problem, bool):
            continue
        for model, rate in row.items():
            if model == "question":
                continue
            if not isinstance(rate, (int, float)) or isinstance(rate, bool):
                raise refuse(where, f"gives {model!r} on problem {problem} the rate {rate!r}, "
                                    "not a number (percent)")
            correct = float(rate) * attempts / 100.0
            if abs(correct - round(correct)) > 1e-6 or not 0 <= correct <= attempts:
                raise refuse(where, f"gives {model!r} on problem {problem} the rate {rate}%, "
                                    f"not a multiple of 100/{attempts} in [0, 100]")
            out.extend({"model": slug(model), "item": problem, "attempt": a,
                        "score": int(a < round(correct)), "cluster": COMPETITION}
                       for a in range(attempts))
    if not out:
        raise refuse(where, f"has no per-problem rows; expected {expected}")
    frame = pd.DataFrame(out)
    names = {m for r in rows for m in r if m != "question"}
    if frame["model"].nunique() != len(names):
        raise refuse(where, "has two model names that give the same slug")
    return frame.sort_values(["model", "item", "attempt"], ignore_index=True)


@register
class MathArena(PoolBuilder):
    """MathArena AIME I 2025: per-problem success rates over 4 attempts."""

    name = "matharena"
    title = "MathArena, AIME I 2025 (first leaderboard)"
    repository = "eth-sri/matharena.ai"
    commit = "8fdd9aba6ddc5faf354790bf895e0e47a1b450af"
    paths = ("static/js/table_data.js",)
    licence = "MIT"
    pool = "matharena_aime_2025_i.csv.gz"
    sha256 = "6f74c521fab96cfa269ce8adcd3ffa12d329778af52e9efb670543127bd047f3"
    commands = (
        "git clone https://github.com/eth-sri/matharena.ai ma\n"
        f"C={commit}\n"
        "git -C ma show $C:static/js/table_data.js > table_data.js\n"
        "python -m sim.llm_pools.build matharena --input table_data.js "
        "--out matharena_aime_2025_i.csv\n")

    def frame(self, inputs):
        (path,) = inputs
        return matharena_table(read_text(path), ATTEMPTS, where=str(path))
