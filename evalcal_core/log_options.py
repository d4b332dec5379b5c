"""The options that say how harness logs are read, declared once for every command that reads
them: ``evaluate``'s arms and the pilots of ``calibrate`` and ``plan`` (``--arm NAME=PATH``
or ``--from-pilot 'BASELINE,VARIANT'``).

Each factory returns a dataclass field for :mod:`evalcal_core.options` (``spec`` adds or
overrides a declaration, e.g. the ``--help`` group); :func:`log_read` turns the parsed
values into the keywords of :func:`evalcal_core.readers.read_logs`, and
:func:`check_log_options` refuses them where no log is read.

It lives beside the readers package, not in it: :func:`evalcal_core.readers.discover` imports
every module of that package in name order, so :data:`LOG_FORMATS` read there would miss the
readers registered after it (``tables``: csv and parquet).
"""

from __future__ import annotations

import dataclasses

from evalcal_core.options import option
from evalcal_core.readers import names
from evalcal_core.validate import Optional, Options, fail

#: the registered log formats (``--log-format``)
LOG_FORMATS = tuple(names())
#: each option, its field name and the keyword of :func:`evalcal_core.readers.read_logs`
LOG_OPTIONS = (("--metric", "metric", "metric"), ("--task", "task", "task"),
               ("--filter", "filter", "filter"), ("--log-format", "log_format", "fmt"))


def metric_option(**spec) -> dataclasses.Field:
    """``--metric``: the metric, scorer or stat a log is read for."""
    return option("--metric", None, **{"help": "metric, scorer or stat to read from the logs",
                                       **spec})


def task_option(**spec) -> dataclasses.Field:
    """``--task``: the task of a log that holds several."""
    return option("--task", None, **{"help": "task to read when a log holds several", **spec})


def filter_option(**spec) -> dataclasses.Field:
    """``--filter``: an lm-eval filter, a HELM perturbation or a two-arm CSV's arm."""
    return option("--filter", None, **{"help": "lm-eval filter, HELM perturbation or CSV arm",
                                       **spec})


def log_format_option(**spec) -> dataclasses.Field:
    """``--log-format``: one of :data:`LOG_FORMATS`, else detected."""
    return option("--log-format", None, **{
        "metavar": "NAME", "constraint": Optional(Options(LOG_FORMATS)),
        "help": f"the logs' format ({', '.join(LOG_FORMATS)}); detected from the file name "
                "and content when omitted", **spec})


def log_read(opts) -> dict:
    """The keywords of :func:`evalcal_core.readers.read_logs` that ``opts`` (a config with
    the fields of :data:`LOG_OPTIONS`) asks for; those not given are left out."""
    return {key: getattr(opts, name) for _, name, key in LOG_OPTIONS
            if getattr(opts, name) is not None}


def check_log_options(opts, reads_logs: bool, logs: str) -> None:
    """Refuse a log option given where no log is read.

    Parameters
    ----------
    opts : object
        A config with the fields of :data:`LOG_OPTIONS`.
    reads_logs : bool
        Whether the command reads harness logs with these options.
    logs : str
        How the command is given logs (named in the message).

    Raises
    ------
    InvalidParameterError
        One line naming the first such option, its value and ``logs``.
    """
    if reads_logs:
        return
    for flag, name, _ in LOG_OPTIONS:
        value = getattr(opts, name)
        if value is not None:
            raise fail(flag, f"used with harness logs ({logs}): it reads them", value)
