"""Command-line options declared once, on the config dataclass they fill.

A command's config is a frozen dataclass whose fields are declared with :func:`option`: the
flag, its default, its help, what it may be (a :mod:`evalcal_core.validate` constraint) and
how argparse reads it. Everything else is derived from that one declaration:

* :func:`add_options` builds the argparse options (flag, default, help, ``nargs``, choices);
* :func:`config_from_args` turns the parsed namespace into the config;
* :func:`check_options` validates every field against its constraint, with the one message
  template of :func:`evalcal_core.validate.fail`;
* :func:`to_argv` gives the command line that asks for a config (the options that change a
  number, where they differ from their defaults).

The options several commands share (``--seed``, ``--alpha``, ``--jobs``, ``--sims``,
``--out``, ``--pool``, ``--backend``, ``--scheduler``) are declared here once, by
:func:`seed_option` and its siblings, so they are spelled, defaulted and checked the same
in every command.
:class:`Execution` is how a run is carried out (simulations, level, seed, workers, backend,
output folder, progress), passed as one value instead of a relay of keyword arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

from evalcal_core.validate import AllOf, Constraint, Interval, Options, Rule, validate

#: upper bounds checked before any work (a typo such as --sims 10^12 must not start a run)
MAX_SIMS = 10**7
MAX_JOBS = 4096
#: the smallest ``--alpha`` a command takes: a sign-flip or permutation p sampled from
#: 10,000 patterns is never below 1 / 10,001, the tables print p to 4 decimals and intervals
#: as 99.99%; far below it the commands printed "100% intervals" of +-inf, found no number of
#: seeds (a StopIteration) or failed a linear program (the library's functions take any level
#: in (0, 1): a Bonferroni level over many pairs is smaller)
MIN_ALPHA = 1e-4
#: the two ways simulation cells run in parallel (:mod:`sim.grid.parallel`)
BACKENDS = ("loky", "dask")
#: every core of this machine: the default of ``--jobs`` (results do not depend on it)
ALL_CORES = os.cpu_count() or 1
#: a level in (0, MIN_ALPHA) refused; any other value is left to the rule beside it (the
#: commands whose configs check their level with ``check_alpha`` declare this one alone)
ALPHA_FLOOR = Rule(lambda a: not 0 < a < MIN_ALPHA,
                   f">= {MIN_ALPHA:g}: a smaller level is below what the tests' p-values "
                   "resolve (a sampled permutation p is never below 1/10,001) and what the "
                   "tables print")
#: what ``--alpha`` may be: the message names the bound broken (``> 0 and < 1`` first)
ALPHA_RULE = AllOf(Interval("real", 0, 1, low_open=True, high_open=True), ALPHA_FLOOR)


@dataclass(frozen=True)
class Option:
    """How one config field is read from the command line.

    Attributes
    ----------
    flag : str
        ``--name`` as typed; a name without dashes, the field's own, is a positional
        argument (``merge_records FILE ...``).
    help : str
        The ``--help`` text.
    constraint : Constraint or None
        What the value may be; checked by :func:`check_options`.
    kind : callable or None
        argparse's ``type`` (one token to one value).
    nargs, metavar, choices
        As in :meth:`argparse.ArgumentParser.add_argument`. A field whose ``nargs`` is set
        holds a tuple.
    switch : bool
        A flag without a value: ``store_true`` (``store_false`` when the field's default is
        true, e.g. ``--no-plot`` filling ``plot``).
    action : str or None
        ``"append"``: the flag is repeated, once per value (``--arm A=x --arm B=y``); the
        field holds a tuple.
    in_argv : bool
        Whether :func:`to_argv` writes it (false for options that change no number:
        ``--jobs``, ``--out``, ``--quiet``).
    always : bool
        :func:`to_argv` writes it even at its default (the options that name a run).
    group : str or None
        The ``--help`` section it is listed under.
    """

    flag: str
    help: str
    constraint: Constraint | None = None
    kind: Callable | None = None
    nargs: int | str | None = None
    metavar: str | tuple | None = None
    choices: tuple | None = None
    switch: bool = False
    action: str | None = None
    in_argv: bool = True
    always: bool = False
    group: str | None = None


def option(flag: str, default=dataclasses.MISSING, *, help: str, **spec) -> dataclasses.Field:
    """A config field read from ``flag``; ``spec`` holds :class:`Option`'s other fields.

    Without ``default`` the option is required.
    """
    return field(default=default, metadata={"option": Option(flag, help, **spec)})


def declared(cls_or_config) -> list[tuple[dataclasses.Field, Option]]:
    """The fields declared with :func:`option`, in declaration order."""
    return [(f, f.metadata["option"]) for f in fields(cls_or_config)
            if isinstance(f.metadata.get("option"), Option)]


def add_options(parser: argparse.ArgumentParser, config_cls) -> argparse.ArgumentParser:
    """Add every option of ``config_cls`` to ``parser`` (sections by :attr:`Option.group`)."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    for f, opt in declared(config_cls):
        target = parser
        if opt.group is not None:
            if opt.group not in groups:
                groups[opt.group] = parser.add_argument_group(opt.group)
            target = groups[opt.group]
        if opt.switch:
            target.add_argument(opt.flag, dest=f.name, help=opt.help,
                                action="store_false" if f.default is True else "store_true")
            continue
        if opt.constraint is not None and hasattr(parser, "checks"):
            parser.checks.append(_given_check(f, opt))
        required = f.default is dataclasses.MISSING
        kind = _nonempty_path if opt.kind is Path else opt.kind
        kwargs = dict(dest=f.name, help=opt.help, type=kind, nargs=opt.nargs,
                      metavar=opt.metavar, choices=opt.choices, required=required,
                      action=opt.action)
        if _positional(opt):
            # argparse names a positional by its flag and refuses dest= and required=
            if opt.flag != f.name:
                raise ValueError(f"positional {opt.flag!r} must be named as its field {f.name!r}")
            del kwargs["dest"], kwargs["required"]
        if not required:
            # argparse appends to a copy of the default, which must be a list
            kwargs["default"] = list(f.default) if opt.action == "append" else f.default
        target.add_argument(opt.flag, **{k: v for k, v in kwargs.items() if v is not None
                                         or k == "default"})
    return parser


def _given_check(f: dataclasses.Field, opt: Option) -> Callable:
    """A check of the parsed value of ``f`` against its constraint, run by the parser when the
    user gave a value (a default is the config's to judge): the options of a config that no
    one checks (a command's output options) are still refused in one line."""
    def check(namespace: argparse.Namespace) -> None:
        value = getattr(namespace, f.name, f.default)
        if isinstance(value, list):
            value = tuple(value)
        if value is not f.default and value != f.default:
            validate({opt.flag: value}, {opt.flag: opt.constraint})
    return check


def _positional(opt: Option) -> bool:
    return not opt.flag.startswith("-")


def config_from_args(config_cls, args: argparse.Namespace, **extra):
    """The config of a parsed namespace: lists become tuples; ``extra`` sets fields that are
    not options (or overrides)."""
    values = {}
    for f, _ in declared(config_cls):
        value = getattr(args, f.name, f.default)
        if isinstance(value, list):
            value = tuple(value)
        values[f.name] = value
    values.update(extra)
    return config_cls(**values)


def check_options(config, extra: dict | None = None, *, only_extra: bool = False) -> None:
    """Validate every declared field against its constraint (one-line error naming the flag);
    ``extra`` maps flags to constraints that depend on other fields (checked after the
    fields' own, or alone with ``only_extra``)."""
    values, constraints = {}, {}
    for f, opt in declared(config):
        values[opt.flag] = getattr(config, f.name)
        if opt.constraint is not None and not only_extra:
            constraints[opt.flag] = opt.constraint
    constraints.update(extra or {})
    validate(values, constraints)


def _text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def to_argv(config) -> list[str]:
    """The arguments that ask for ``config``: options marked ``always``, and the others
    where they differ from their defaults, in declaration order; options that change no
    number (``in_argv=False``) never. Positional arguments come first: after an option of
    ``nargs="+"`` they would be read as its values."""
    args, positional = [], []
    for f, opt in declared(config):
        value = getattr(config, f.name)
        if not opt.in_argv or (value == f.default and not opt.always):
            continue
        if _positional(opt):
            positional += [_text(v) for v in (value if isinstance(value, tuple) else (value,))]
        elif opt.switch:
            args.append(opt.flag)
        elif opt.action == "append":
            for v in value:
                args += [opt.flag, _text(v)]
        elif isinstance(value, tuple):
            args += [opt.flag, *(_text(v) for v in value)]
        elif value is not None:
            args += [opt.flag, _text(value)]
    return positional + args


# The options several commands share, declared once; a command may override any part of the
# declaration (its help, its constraint) by keyword.

def _nonempty_path(text: str) -> Path:
    """A path option's value; an empty one is refused (``Path("")`` is the current folder,
    so ``--out "$DIR"`` with ``DIR`` unset wrote every output there)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"an empty path ({text!r}); name a file or folder")
    return Path(text)


def _shared(flag: str, default, spec: dict, **declared) -> dataclasses.Field:
    return option(flag, default, **{**declared, **spec})


#: the ``--seed`` every command starts from unless told otherwise (the decision grid decides
#: resampled verdicts with it, so that each is the one ``evaluate`` prints by default)
DEFAULT_SEED = 0


def seed_option(default: int = DEFAULT_SEED, **spec) -> dataclasses.Field:
    """``--seed``: the root of every random stream; results depend only on it."""
    return _shared("--seed", default, spec, kind=int, always=True,
                   help=f"root seed ({default}); results depend only on it",
                   constraint=Interval("int", 0, 2**63 - 1))


def alpha_option(default: float = 0.05, **spec) -> dataclasses.Field:
    """``--alpha``: the two-sided significance level, at least :data:`MIN_ALPHA`."""
    return _shared("--alpha", default, spec, kind=float, help=f"two-sided level ({default:g})",
                   constraint=ALPHA_RULE)


def sims_option(default: int = 2000, **spec) -> dataclasses.Field:
    """``--sims``: simulated experiments per cell."""
    return _shared("--sims", default, spec, kind=int, always=True,
                   help=f"experiments per cell ({default})",
                   constraint=Interval("int", 1, MAX_SIMS))


def max_sims_option(default_words: str = "16 x --sims", **spec) -> dataclasses.Field:
    """``--max-sims``: the cap of the validity rule's sequential stop (:mod:`sim.validity`)."""
    return _shared("--max-sims", None, spec, kind=int, metavar="N",
                   help="cap of the validity rule's sequential stop: an undecided cell's "
                        f"simulations are doubled up to N (default {default_words})")


def jobs_option(default: int = ALL_CORES, **spec) -> dataclasses.Field:
    """``--jobs``: parallel workers; changes no number."""
    return _shared("--jobs", default, spec, kind=int, in_argv=False,
                   help="parallel workers (default: all cores; results do not depend on it)",
                   constraint=Interval("int", 1, MAX_JOBS))


def workers(jobs: int, tasks: int) -> int:
    """The workers worth starting for ``tasks`` independent tasks when ``--jobs`` asked for
    ``jobs``: never more than the tasks or this machine's cores, at least one.

    A worker process costs its start and its memory (each imports numpy, scipy and pandas:
    16 workers for a 4-cell grid held 1.15 GB); a worker without a task, or one more than the
    cores, gains no time. Results do not depend on it.
    """
    return max(1, min(int(jobs), int(tasks), ALL_CORES))


def backend_option(**spec) -> dataclasses.Field:
    """``--backend``: local processes or a dask cluster; changes no number."""
    return _shared("--backend", "loky", spec, choices=BACKENDS, in_argv=False,
                   help="loky (local processes) or dask (a dask.distributed cluster)",
                   constraint=Options(BACKENDS))


def scheduler_option(**spec) -> dataclasses.Field:
    """``--scheduler``: a dask scheduler's address."""
    return _shared("--scheduler", None, spec, metavar="ADDRESS", in_argv=False,
                   help="dask scheduler address; default: a local cluster on loopback")


def out_option(default: Path | None, **spec) -> dataclasses.Field:
    """``--out``: the output folder (locked while a run writes it)."""
    return _shared("--out", default, spec, kind=Path, in_argv=False,
                   help=f"output folder ({default})")


def pool_option(default: str | None = None, **spec) -> dataclasses.Field:
    """``--pool``: the run store of the real-run pools (``None``: the committed pool;
    ``dataclasses.MISSING``: required, for a command that writes into a store)."""
    return _shared("--pool", default, spec, metavar="ROOT",
                   help="run store (default: the committed pool)")


@dataclass(frozen=True)
class Execution:
    """How a run is carried out, as one value (none of it changes a number but ``sims``,
    ``alpha`` and ``seed``).

    Attributes
    ----------
    sims : int
        Simulated experiments per cell.
    alpha : float
        Two-sided significance level.
    seed : int
        Root of every random stream.
    jobs : int
        Parallel workers.
    backend : {"loky", "dask"}
    scheduler : str or None
        A dask scheduler's address.
    out : Path or None
        Output folder.
    progress : bool
        Show a progress bar.
    """

    sims: int = 2000
    alpha: float = 0.05
    seed: int = 0
    jobs: int = 1
    backend: str = "loky"
    scheduler: str | None = None
    out: Path | None = None
    progress: bool = True

    @classmethod
    def of(cls, config, **overrides) -> Execution:
        """The execution fields a config holds (the shared options' names), with
        ``overrides``."""
        names = {f.name for f in fields(cls)}
        values = {f.name: getattr(config, f.name) for f in fields(config) if f.name in names}
        if "progress" not in values and hasattr(config, "quiet"):
            values["progress"] = not config.quiet
        values.update(overrides)
        return cls(**values)
