"""Compare the arms of a user's own results (the ``evaluate`` application).

It lives in :mod:`reports` (the top layer) because it reads files, uses pandas and prints
tables; ``python -m protocols.evaluate`` is kept as a thin alias of ``python -m
reports.evaluate``.

Usage::

    python -m reports.evaluate RESULTS.csv [--design NAME] [--reference ARM]
        [--correction holm|maxt|bh|bonferroni|none] [--claim C --margin M --gate]
        [--json | --format markdown|latex] [--forest PLOT.png]
    python -m reports.evaluate --arm A=LOG --arm B=LOG [--arm C=LOG ...] [--metric acc]
    python -m reports.evaluate --baseline LOG --variant LOG

Python: ``from reports.evaluate import compare`` (:mod:`.api`): the command's options as
keyword arguments, the result an :class:`~.cli.Evaluation` (``frame``, ``render``, an HTML view).

Modules: :mod:`.options` (the options, declared once, -> :class:`~.options.EvalConfig`),
:mod:`.cli` (:func:`~.cli.evaluate` -> :class:`~.cli.Evaluation`, written by
:func:`~.cli.run_config`), :mod:`.api` (``compare``),
:mod:`.load` (CSV and logs -> :class:`~evalcal_core.scores.ArmScores`), :mod:`.design`
(the study design, declared or inferred), :mod:`.compare` (comparisons, multiplicity,
effect sizes, claims, ranking), :mod:`.protocols_table` (two arms: every protocol, labelled
for the design), :mod:`.render` (text, JSON, Markdown, LaTeX), :mod:`.forest` (the plot).
"""

from __future__ import annotations

from .api import compare
from .cli import EvalConfig, Evaluation, build_parser, evaluate, example_path, main, run, run_config

__all__ = ["EvalConfig", "Evaluation", "build_parser", "compare", "evaluate", "example_path",
           "main", "run", "run_config"]
