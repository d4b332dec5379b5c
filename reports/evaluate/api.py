"""``compare(...)``: the ``evaluate`` command as a Python function (notebooks, harness
plugins, scripts).

The options are the command's, as keyword arguments, typed and checked by the same
declarations (a bad value is the same one-line ``ValueError``, naming the keyword); a
DataFrame is read in memory by the CSV's checks; the result is the
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

import os

import pandas as pd

from evalcal_core.keywords import keyword_errors, options_from_keywords
from evalcal_core.results_io import FrameSource

from .cli import Evaluation, evaluate
from .options import EvaluateOptions, resolve

#: options that are not keywords: ``--arm`` is the ``arms`` argument, ``--gate`` follows
#: ``claim``, and the result renders itself (``render(fmt)``, ``to_dict()``) where the
#: command writes ``--json``, ``--format``, ``--forest`` and ``--html`` (``page()``)
_NOT_KEYWORDS = ("arm", "gate", "json", "format", "forest", "html")


def compare(results=None, *, arms=None, **options) -> Evaluation:
    """Compare the arms of ``results`` (or of harness logs) as ``evaluate`` does.

    The keywords fill the command's :class:`~.options.EvaluateOptions` directly (no
    command line is built): each is typed and checked by that option's declaration and the
    rules between options are the command's, so a value is refused exactly when the command
    refuses it, with a message naming the keyword.

    Parameters
    ----------
    results : str, Path or pandas.DataFrame, optional
        A tidy results CSV (``seed,arm,metric`` or ``seed,arm,question,score``), or the same
        table as a DataFrame (read in memory by the same checks; a message names its rows by
        position and index label); default: the shipped example.
    arms : dict, optional
        ``{name: log path}``: harness logs, one per arm (``--arm NAME=PATH``), instead of
        ``results``.
    **options
        The command's options by their :class:`~.options.EvaluateOptions` field:
        ``design`` (a kind of :data:`evalcal_core.designs.KINDS`; inferred when omitted),
        ``equal_variances``, ``cluster``, ``reference``,
        ``correction``, ``claim`` ("superiority", "non-inferiority", "equivalence"),
        ``margin`` (the file's units), ``alpha``, ``seed``, ``percent``, ``metric_range``
        ((low, high)), ``partial_credit``, ``metric``, ``task``, ``filter``,
        ``log_format``, ``max_member_mb``, ``baseline`` and ``variant`` (two logs, instead of
        ``arms``), ``protocols`` (names for the two-arm table), ``protocol_param`` (a dict),
        ``threshold``, ``leaderboard``, ``stream``, ``stream_method``, ``score_column``,
        ``arm_column`` (or ``model_column``), ``question_column``, ``seed_column`` (the
        results' own column names), ``lower_is_better`` (a loss), ``common_questions``;
        not ``json``, ``format``, ``forest`` or ``html`` (the result renders itself:
        ``page()``, ``write_page(path)``).

    Returns
    -------
    Evaluation
        ``to_frame()``, ``to_markdown()``, ``to_dict()`` (the ``--json`` body),
        ``render(fmt)``, ``exit_status`` (the gate's verdict as the command's exit status
        when ``claim`` is given), ``analysis`` (every number).

    Raises
    ------
    ValueError
        One line naming the keyword (or the frame's row), the value and what is allowed.
    """
    if "arm" in options:
        # the command's --arm is this function's arms=: named, not listed as unknown
        raise options_error("arm", "spelled arms=, a dict {name: log path}", options["arm"])
    if arms is not None:
        _check_arms(arms)
    # the result carries the gate's exit status
    fixed = {"arm": tuple(f"{name}={path}" for name, path in (arms or {}).items()),
             "gate": options.get("claim") is not None}
    opts = options_from_keywords(EvaluateOptions, options, "compare", leave_out=_NOT_KEYWORDS,
                                 fixed=fixed)
    if isinstance(results, pd.DataFrame):
        results = FrameSource(results)
    elif isinstance(results, (str, os.PathLike)):
        results = os.fspath(results)
    elif results is not None:
        # str() of a Series, a list or bytes would be looked up as a file name
        from evalcal_core.validate import fail

        raise fail("results", "a results CSV path (str or os.PathLike) or a pandas DataFrame",
                   owner="compare()", got=f"a value of type {type(results).__name__}")
    with keyword_errors(EvaluateOptions, "compare"):
        return evaluate(resolve(opts, results))


def _check_arms(arms) -> None:
    """Refuse an ``arms`` that is not two or more ``{name: log path}`` with names that
    ``--arm NAME=PATH`` could carry (text without ``=`` or control characters)."""
    if not isinstance(arms, dict):
        raise options_error("arms", "a dict {name: log path}", arms)
    if len(arms) < 2:
        raise options_error("arms", "a dict of two or more arms {name: log path}", arms)
    for name, path in arms.items():
        if not isinstance(name, str) or not name.strip() or "=" in name:
            raise options_error("arms", "keyed by arm names: non-empty text without '='", name)
        if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
            raise options_error("arms", f"a log path for each arm (arm {name!r})", path)


def options_error(name, rule, value):
    """The one-line error for a bad ``compare()`` argument."""
    from evalcal_core.validate import fail

    return fail(name, rule, owner="compare()", got=f"{value!r} (a {type(value).__name__})")
