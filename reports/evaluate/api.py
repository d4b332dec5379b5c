"""``compare(...)``: the ``evaluate`` command as a Python function (notebooks, harness
plugins, scripts).

The options are the command's, as keyword arguments, and go through the same parser and
checks (a bad value is the same one-line ``ValueError``); the result is the
:class:`~reports.evaluate.cli.Evaluation` the command prints, with a pandas ``frame`` of the
comparisons and an HTML view for notebooks::

    from reports.evaluate import compare          # or: import evalcal; evalcal.compare
    result = compare("runs.csv", reference="base", correction="holm")
    result.to_frame()                  # one row per comparison (pp for accuracies)
    print(result)                      # the terminal text
    result.to_markdown()               # render("markdown"); "latex", "json" too
    result.to_dict()                   # the --json body
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd

from evalcal_core.keywords import keywords_to_argv, option_flags, parse_argv

from .cli import Evaluation, evaluate
from .options import EvaluateOptions, build_parser, config_from_args

#: options that are not keywords: ``--arm`` is the ``arms`` argument, ``--gate`` follows
#: ``claim``, and the result renders itself (``render(fmt)``, ``to_dict()``) where the
#: command writes ``--json``, ``--format`` and ``--forest``
_NOT_KEYWORDS = ("arm", "gate", "json", "format", "forest")
#: keyword -> the command's option (flags take True)
_OPTIONS = {key: flag for key, flag in option_flags(EvaluateOptions).items()
            if key not in _NOT_KEYWORDS}


def compare(results=None, *, arms=None, **options) -> Evaluation:
    """Compare the arms of ``results`` (or of harness logs) as ``evaluate`` does.

    Parameters
    ----------
    results : str, Path or pandas.DataFrame, optional
        A tidy results CSV (``seed,arm,metric`` or ``seed,arm,question,score``), or the same
        table as a DataFrame; default: the shipped example.
    arms : dict, optional
        ``{name: log path}``: harness logs, one per arm (``--arm NAME=PATH``), instead of
        ``results``.
    **options
        The command's options by their :class:`~.options.EvaluateOptions` field:
        ``compare`` ("methods"/"models"), ``unpaired``, ``cluster``, ``reference``,
        ``correction``, ``claim`` ("superiority", "non-inferiority", "equivalence"),
        ``margin`` (the file's units), ``alpha``, ``seed``, ``percent``, ``metric_range``
        ((low, high)), ``partial_credit``, ``metric``, ``task``, ``filter``,
        ``log_format``, ``max_member_mb``, ``baseline`` and ``variant`` (two logs, instead of
        ``arms``), ``protocols`` (names for the two-arm table), ``protocol_param`` (a dict),
        ``threshold``, ``leaderboard``, ``stream``, ``stream_method``; not ``json``,
        ``format`` or ``forest`` (the result renders itself).

    Returns
    -------
    Evaluation
        ``to_frame()``, ``to_markdown()``, ``to_dict()`` (the ``--json`` body),
        ``render(fmt)``, ``exit_status`` (the gate's verdict as the command's exit status
        when ``claim`` is given), ``analysis`` (every number).

    Raises
    ------
    ValueError
        One line naming the option, the value and what is allowed, as the command prints.
    """
    argv = keywords_to_argv(options, _OPTIONS, "compare")
    for name, path in (arms or {}).items():
        argv += ["--arm", f"{name}={path}"]
    if options.get("claim") is not None:
        argv.append("--gate")     # the result carries the gate's exit status
    if isinstance(results, pd.DataFrame):
        # the same reader and checks as a file: a DataFrame is written as the CSV it stands for
        with tempfile.TemporaryDirectory(prefix="evalcal-compare-") as folder:
            path = Path(folder) / "results.csv"
            results.to_csv(path, index=False)
            return _run(argv + [str(path)])
    return _run(argv + ([] if results is None else [str(results)]))


def _run(argv) -> Evaluation:
    # argparse's own usage errors come back as one line
    return evaluate(config_from_args(parse_argv(build_parser(), argv, "compare")))
