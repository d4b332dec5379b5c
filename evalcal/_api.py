"""The functions of :mod:`evalcal` and their result objects."""

from __future__ import annotations

import dataclasses
import html
import math
from dataclasses import dataclass

from evalcal_core.keywords import (
    keyword_errors,
    keywords_to_argv,
    option_flags,
    parse_argv,
    typed_keywords,
)
from evalcal_core.options import declared
from evalcal_core.outdir import check_out
from evalcal_core.validate import fail


def compare(results=None, *, arms=None, **options):
    """Compare the arms of ``results`` (or of harness logs) as ``evalcal evaluate`` does.

    :func:`reports.evaluate.api.compare`; its result, a :class:`reports.evaluate.Evaluation`,
    has ``to_frame()`` (one row per comparison), ``to_markdown()``, ``to_dict()`` (the
    ``--json`` body), ``str()`` and ``_repr_html_``.
    """
    from reports.evaluate.api import compare as _compare

    return _compare(results, arms=arms, **options)


# ------------------------------------------------------------------------------ tables


def _cell(value) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.4g}"
    # a cell must stay one cell of one row
    return " ".join(str(value).split()).replace("|", "\\|")


def markdown_table(frame) -> str:
    """``frame`` as a GitHub Markdown table (index left out; floats to 4 significant digits,
    NaN blank, ``|`` escaped)."""
    head = [_cell(c) for c in frame.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ calibrate


#: what a calibration run from Python does not do unless asked: write a cell cache into the
#: working folder (``out``), show a progress bar
_CALIBRATE_DEFAULTS = {"out": None, "quiet": True, "plot": False}


def calibrate(config=None, **options) -> Calibration:
    """False-positive rate and power of every protocol, and the seed budget, by simulation.

    The numbers of ``evalcal calibrate`` / ``python -m sim.calibrate`` (the same
    :func:`sim.calibration.run_calibration`), without writing files.

    Parameters
    ----------
    config : sim.calibration.CalibrationConfig, optional
        A whole configuration (``options`` then replace its fields).
    **options
        The command's options by their config field: ``k`` (one k or ``(k_min, k_max)``,
        seeds per arm; required without ``config``), ``generator``, ``params`` (a dict such as
        ``{"rho": 0.3}`` or ``KEY=VALUE`` strings), ``effects`` (pp), ``protocols``,
        ``sims``, ``seed``, ``alpha``, ``jobs`` (workers; the numbers do not depend on it),
        ``target_power``, ``k_max``, ``mde``, ... (``python -m sim.calibrate --help``).
        ``out`` (default none here) is the folder of the cell cache: a rerun reuses it.

    Returns
    -------
    Calibration

    Raises
    ------
    ValueError
        One line naming the option, the value and what is allowed.
    """
    from sim.calibration import CalibrationConfig, run_calibration

    # typed by the declarations the command's parser is built from: a string effect is
    # refused here, naming the keyword, instead of failing in the simulation as a TypeError
    given = typed_keywords(CalibrationConfig, options, "calibrate")
    with keyword_errors(CalibrationConfig, "calibrate"):
        if config is None:
            if "k" not in given:
                raise fail("k", "given: the seeds per arm, one k or (k_min, k_max)", None,
                           "calibrate()")
            config = CalibrationConfig(**{**_CALIBRATE_DEFAULTS, **given})
        elif isinstance(config, CalibrationConfig):
            config = dataclasses.replace(config, **given)
        else:
            raise fail("config", "a sim.calibration.CalibrationConfig", owner="calibrate()",
                       got=f"a {type(config).__name__}")
        if isinstance(options.get("out"), str) and not options["out"].strip():
            # Path("") is the working folder: the command's parser refuses it too
            raise fail("out", "a folder path, not empty", options["out"], "calibrate()")
        if config.out is not None:
            # as the command does before any cell runs: a file or a read-only folder was a
            # NotADirectoryError or PermissionError traceback from the cell cache
            check_out(config.out, "out")
        return Calibration(config, run_calibration(config))


@dataclass(frozen=True)
class Calibration:
    """What :func:`calibrate` computed: the rows of ``calibration.csv`` and
    ``seed_budget.csv``, and the run's configuration.

    Attributes
    ----------
    config : sim.calibration.CalibrationConfig
        The run (``config.shell()`` is the command that computes the same numbers).
    result : sim.calibration.CalibrationResult
        Every frame the command writes.
    """

    config: object
    result: object

    @property
    def calibration(self):
        """Every cell measured, as ``calibration.csv`` holds it (rates are fractions)."""
        from sim.calibration import for_file

        return for_file(self.result.calibration)

    @property
    def budget(self):
        """The seed budget, as ``seed_budget.csv`` holds it."""
        from sim.calibration import for_file

        return for_file(self.result.budget)

    def to_frame(self):
        """:attr:`calibration`: one row per (setting, protocol, k, effect) cell."""
        return self.calibration

    def tables(self) -> list:
        """``(heading, DataFrame)`` of each effect of the requested grid (rate in % with its
        95% Wilson interval, protocols by k), then the seed budget."""
        grid = self.result.grid
        out = []
        for (params, effect), part in grid.groupby(["generator_params", "effect_pp"],
                                                   sort=True):
            what = "false-positive rate" if effect == 0 else "power"
            cells = part.assign(cell=[
                f"{100 * r.rate:.1f} [{100 * r.rate_low:.1f}, {100 * r.rate_high:.1f}]"
                for r in part.itertuples()])
            table = cells.pivot(index="protocol", columns="k", values="cell").fillna("-")
            table.columns = [f"k = {k}" for k in table.columns]
            head = (f"{part['generator'].iloc[0]} ({params}), effect {effect:g} pp: {what} (%) "
                    f"[95% Wilson], {int(part['sims'].iloc[0])} simulations per cell")
            out.append((head, table.reset_index()))
        budget = self.budget
        if not budget.empty:
            shown = [c for c in ("protocol", "effect_pp", "recommended", "k_needed", "why")
                     if c in budget]
            out.append((f"seed budget: smallest k with power >= "
                        f"{100 * float(budget['target_power'].iloc[0]):.0f}%",
                        budget[shown]))
        return out

    def to_markdown(self) -> str:
        """:meth:`tables` as Markdown: a bold heading and a table each."""
        return "\n\n".join(f"**{head}**\n\n{markdown_table(table)}"
                           for head, table in self.tables())

    def __str__(self) -> str:
        """The tables in words that the command prints."""
        from reports.calibration_text import summary_table

        return summary_table(self.result.grid, self.result.budget, self.result.mde)

    def _repr_html_(self) -> str:
        return "".join(f"<p><b>{html.escape(head)}</b></p>"
                       + table.to_html(index=False, na_rep="")
                       for head, table in self.tables())


# ------------------------------------------------------------------------------ plan


def plan(**options) -> StudyPlan:
    """The cheapest seeds x questions x repeats that detect an effect with the power asked.

    ``evalcal plan`` / ``python -m sim.plan`` as a function: the options are the command's
    (``design``, ``effect`` in pp, ``power``, ``cost`` (a dict such as ``{"seed": 4,
    "question": 0.001}``), ``sd_seed``, ``sd_question``, ``sd_inter``, ``sd_repeat`` (pp),
    ``from_pilot``, ``generator_param``, ``k_max``, ``n_max``, ``sims``, ``out`` ...), typed
    by their declarations (a number option takes a number, not its text), then parsed and
    checked by the command's own parser, and the planner is the command's
    (:func:`sim.plan.run_plan_into`: with ``out`` the CSV tables are written there).

    Returns
    -------
    StudyPlan

    Raises
    ------
    ValueError
        One line naming the keyword, the value and what is allowed.
    """
    from sim import plan as planner

    # typed first, as compare() and calibrate() are: plan(effect="3") is refused as a
    # string, not passed to the parser as text it would accept
    typed = typed_keywords(planner.PlanOptions, options, "plan")
    with keyword_errors(planner.PlanOptions, "plan"):
        repeated = [f.name for f, opt in declared(planner.PlanOptions) if opt.action == "append"]
        argv = keywords_to_argv(typed, option_flags(planner.PlanOptions), "plan",
                                repeated=repeated)
        args = parse_argv(planner.build_parser(), argv, "plan")
        result = planner.run_plan_into(planner.config_from_args(args), args.out,
                                       "python -m sim.plan")
    return StudyPlan(result, tuple(planner.report_lines(result)))


@dataclass(frozen=True)
class StudyPlan:
    """What :func:`plan` found.

    Attributes
    ----------
    plan : sim.plan_search.Plan
        ``designs`` (every feasible design, best first), ``chosen`` (the first, or ``None``
        when nothing in the bounds reaches the goal), ``checked`` (the simulated designs).
    lines : tuple of str
        The command's printout.
    """

    plan: object
    lines: tuple

    @property
    def chosen(self) -> dict | None:
        return self.plan.chosen

    @property
    def checked(self):
        return self.plan.checked

    @property
    def estimand(self) -> str:
        """``questions`` (these questions fixed: ``evaluate``'s primary ``paired_t``) or
        ``population`` (its ``paired_two_level`` row); models designs: ``population``."""
        return self.plan.config.estimand

    @property
    def test(self) -> str:
        """The test the plan's power is for, in words (the ``estimand:`` line of the
        printout names its protocol and where ``evaluate`` prints it)."""
        from sim import plan as planner

        return planner.test_words(self.plan.config.design, self.plan.config.estimand)

    def to_frame(self):
        """Every feasible design, best first (``k``, ``n``, ``r``, ``cost``, ``power`` as a
        fraction, ``effect_pp``, ...: ``plan_designs.csv``)."""
        return self.plan.designs

    def _shown(self):
        return self.plan.designs.head(max(1, int(self.plan.config.show)))

    def to_markdown(self) -> str:
        """The printout's lines, then the best designs as a Markdown table."""
        text = "\n".join(f"    {line}" for line in self.lines)
        return f"{text}\n\n{markdown_table(self._shown())}"

    def __str__(self) -> str:
        return "\n".join(self.lines)

    def _repr_html_(self) -> str:
        return (f"<pre>{html.escape(str(self))}</pre>"
                + self._shown().to_html(index=False, na_rep=""))
