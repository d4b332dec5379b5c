"""Real per-item LLM result matrices with repeated attempts (data files and their builder).

Each pool is one long CSV ``<name>.csv`` in this folder with the columns ``model, item,
attempt, score`` and an optional ``cluster`` (see ``README.md`` for the source, licence and
counts of each). :mod:`sim.generators.llm_items` draws experiments from them;
``python -m sim.llm_pools.build`` rebuilds the shipped files from their sources.
"""

from pathlib import Path

#: the folder of the shipped pools
POOLS_DIR = Path(__file__).resolve().parent


def shipped() -> list[str]:
    """Names of the pools shipped in :data:`POOLS_DIR` (file stems, sorted)."""
    return sorted(p.stem for p in POOLS_DIR.glob("*.csv"))
