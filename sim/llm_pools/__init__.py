"""Real per-item LLM result pools: their builders and documentation, no data.

A pool is one long CSV (plain or gzip) with the columns ``model, item, attempt, score`` and
an optional ``cluster``, read by :func:`evalcal_core.pools.read_pool`. The real pools are not
the project's (their terms are their owners'): none ships here. They are read from a path,
or by name from the pools folder (:mod:`evalcal_core.pool_paths`: ``$EVALCAL_POOLS``, else
``../shared/data/llm_pools``); ``README.md`` lists their sources, and
``python -m sim.llm_pools.build`` rebuilds them from their public source files.
"""
