"""Fit a generator to a user's pilot runs: "with runs like mine, how many seeds do I need?".

:func:`read_pilot` reads the pilot's two arms (a tidy CSV, ``"BASELINE,VARIANT"`` harness
logs, or one log per arm given as ``--arm NAME=PATH``, :func:`pilot_source`) into
:class:`~evalcal_core.scores.ArmScores`; :func:`two_arms` gives their baseline and
variant arrays (also for ``sim.plan --from-pilot``); :func:`generator_from_pilot` fits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evalcal_core.readers import check_path, check_regular, parse_arm_options, read_logs
from evalcal_core.results_io import ARMS, check_results_file, read_two_arms
from evalcal_core.score_checks import check_arm_scores
from evalcal_core.scores import ArmScores
from evalcal_core.validate import InvalidParameterError, fail

from . import generators
from .generators.seed_gaussian import SCORE_SIGMAS
from .generators.seed_question import MOMENTS, fit_moments, model_moments
from .pilot_budget import DEFAULT_ASSURANCE, budget_from_spread, delta_spread


@dataclass(frozen=True)
class PilotFit:
    """A generator fitted to pilot runs.

    Attributes
    ----------
    generator : Generator
    observed_effect_pp : float
        The pilot's own mean delta (variant - baseline), percentage points.
    k : int
        Seeds per arm in the pilot.
    text : str
        The fit in words, with units.
    warnings : tuple of str
        Why the fit is fragile (a boundary hit, fewer than 3 seeds).
    spread : DeltaSpread or None
        The per-seed deltas' sd and its assurance limit (:mod:`sim.pilot_budget`).
    """

    generator: object
    observed_effect_pp: float
    k: int
    text: str
    warnings: tuple = ()
    spread: object = None


def pilot_source(from_pilot: str | None, arm=()) -> str | dict | None:
    """The pilot a command was given: ``--from-pilot``'s value (a CSV, or two logs as
    ``"BASELINE,VARIANT"``), or ``--arm NAME=PATH`` logs as ``{name: path}``, as
    ``evaluate`` reads its arms (:func:`evalcal_core.readers.parse_arm_options`); ``None``
    without either.

    Raises
    ------
    InvalidParameterError
        Both given, an ``--arm`` value that is not NAME=PATH or repeats a name, or other
        than two arms.
    """
    arms = parse_arm_options(arm)
    if arms and from_pilot is not None:
        raise fail(("--from-pilot", "--arm"), "given one at a time: a results CSV or "
                   "'BASELINE,VARIANT' logs with --from-pilot, or each arm's log with --arm "
                   "NAME=PATH", got="both")
    if arms:
        if len(arms) != 2:
            raise fail("--arm", "given twice for a pilot, once per arm: the baseline's log and "
                       "the variant's", got=f"{len(arms)} arm{'s' if len(arms) != 1 else ''} "
                                            f"({', '.join(arms)})")
        return arms
    return from_pilot


def pilot_label(source) -> str:
    """How messages name a pilot: its path, or the ``--arm`` options that gave its logs."""
    if isinstance(source, Mapping):
        return " ".join(f"--arm {name}={path}" for name, path in source.items())
    return str(source)


def _flag(label: str) -> str:
    """The option that gave the pilot named ``label`` (:func:`pilot_label`)."""
    return "--arm" if label.startswith("--arm ") else "--from-pilot"


def pilot_paths(source) -> list[str]:
    """The files or folders a pilot is read from (each checked for a killed run's marks)."""
    if isinstance(source, Mapping):
        return [str(p) for p in source.values()]
    logs = split_logs(source)
    return [str(source)] if logs is None else list(logs)


#: how a pilot's harness logs are given (named where a log option is refused)
PILOT_LOGS = "--arm NAME=PATH per arm, or --from-pilot 'BASELINE,VARIANT'"


#: the suffixes of a pilot read as a results table (anything else is a harness log)
TABLE_SUFFIXES = (".csv", ".tsv", ".txt")


def split_logs(text: str) -> tuple[str, str] | None:
    """``--from-pilot``'s two logs ``(BASELINE, VARIANT)`` when ``text`` is that comma form,
    ``None`` when it names one path (an existing path with a comma in it is one path).

    Raises
    ------
    InvalidParameterError
        ``text`` empty, or a comma form that is not two non-empty paths.
    """
    text = str(text)
    if not text.strip():
        raise fail("--from-pilot", "a results CSV, or two harness logs as 'BASELINE,VARIANT'",
                   got=repr(text))
    if "," not in text or Path(text).exists():
        return None
    parts = text.split(",")
    if len(parts) != 2 or not all(part.strip() for part in parts):
        raise fail("--from-pilot", "a results CSV, or two harness logs as 'BASELINE,VARIANT' "
                   "(two paths joined by one comma)", got=repr(text))
    return parts[0], parts[1]


def reads_logs(source) -> bool:
    """Whether the pilot ``source`` (:func:`pilot_source`) is read from harness logs (``--arm``
    or two logs joined by a comma), where ``--metric``, ``--task``, ``--filter`` and
    ``--log-format`` apply; one log alone (a folder, or a file that is not a table) counts,
    so that it is refused as one arm's log rather than the options as given to a CSV."""
    if source is None:
        return False
    if isinstance(source, Mapping):
        return True
    if split_logs(source) is not None:
        return True
    path = Path(str(source))
    return path.exists() and (path.is_dir() or path.suffix.lower() not in TABLE_SUFFIXES)


def read_pilot(path, log_read: dict | None = None) -> ArmScores:
    """A pilot's two arms, ``baseline`` and ``variant``, with their scores unchecked.

    Parameters
    ----------
    path : str, Path or mapping of str to path
        A tidy CSV of two arms with any names (:func:`evalcal_core.results_io.read_two_arms`:
        the arm named ``baseline``, else the file's first, is the baseline), or
        ``"BASELINE,VARIANT"``: two existing harness logs
        (files or folders, see :func:`evalcal_core.readers.read_log`) joined by a comma, the
        one value of ``--from-pilot``; or ``{name: log}`` of two arms (``--arm NAME=PATH``,
        :func:`pilot_source`), read as ``evaluate`` reads its arms: the arm named
        ``baseline``, else the first given, is the baseline.
    log_read : dict or None
        How the logs are read (``--metric``, ``--task``, ``--filter``, ``--log-format``:
        :func:`evalcal_core.log_options.log_read`), as for ``evaluate``'s arms.

    Returns
    -------
    ArmScores
        Two arms in the file's units (the caller judges them: ``--percent``); for logs,
        questions present in both and runs matched by label or position, ``runs_are`` as the
        logs say (``"repeats"`` for Inspect epochs, HELM trials).

    Raises
    ------
    InvalidParameterError
        A missing or unreadable path, a folder or a single arm's log (naming the
        ``'BASELINE,VARIANT'`` form), or what the CSV or log readers report.
    """
    if isinstance(path, Mapping):
        for name, log in path.items():
            if not Path(log).exists() and not Path(log).is_symlink():
                raise InvalidParameterError(f"arm {name!r}: log {str(log)!r} does not exist")
        # the baseline first, as a CSV's arms are ordered (read_two_arms)
        order = sorted(path, key=lambda name: name != ARMS[0])
        return read_logs({name: path[name] for name in order}, **(log_read or {})).scores
    text = str(path)
    logs = split_logs(text)
    if logs is not None:
        for log in logs:
            if not Path(log).exists() and not Path(log).is_symlink():
                raise InvalidParameterError(f"--from-pilot: log {log!r} does not exist")
            check_path(Path(log))  # a symbolic-link loop or a broken link is named as such
        return read_logs(dict(zip(ARMS, logs)), **(log_read or {})).scores
    path = Path(text)
    if not path.exists() and not path.is_symlink():
        raise InvalidParameterError(f"results file {text!r} does not exist")
    check_path(path)  # a symbolic-link loop or a broken link is named as such
    if path.is_dir():
        raise InvalidParameterError(f"{path} is a directory; a harness log folder holds one "
                                    "arm, so name both arms' logs: --arm NAME=PATH per arm, "
                                    "or --from-pilot 'BASELINE,VARIANT'")
    check_regular(path)  # a FIFO would block the read, a device never ends
    if not _names_both_arms(path):
        raise InvalidParameterError(f"{path} holds one arm's log; name both arms' logs: "
                                    "--arm NAME=PATH per arm, or --from-pilot "
                                    "'BASELINE,VARIANT'")
    return read_two_arms(path)


def _names_both_arms(path: Path) -> bool:
    """Whether ``path`` is a table with an ``arm`` column, or one the CSV reader must reject
    itself (unreadable, or without the one-arm log's ``question`` and ``score`` columns)."""
    if path.suffix.lower() not in TABLE_SUFFIXES:
        return False
    # the parser holds the header line whole: binary or endless content is refused first
    check_results_file(path)
    try:
        header = pd.read_csv(path, nrows=0, skipinitialspace=True).columns
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError):
        return True
    names = {str(c).strip().lower() for c in header}
    return "arm" in names or not {"question", "score"} <= names


def two_arms(scores: ArmScores) -> tuple[np.ndarray, np.ndarray]:
    """``(baseline, variant)``: the scores of two-arm :class:`ArmScores`, shape (k, n) each.

    The first arm is the baseline (:func:`read_pilot` and ``read_two_arms`` put
    it first); read-only views, in the scores' units.
    """
    if scores.m != 2 or scores.ragged:
        raise fail("scores", "two arms with the same runs (a baseline and a variant)",
                   got=f"arms {', '.join(scores.arms)}"
                   + (" with unequal runs" if scores.ragged else ""), owner="two_arms")
    return scores.scores[0], scores.scores[1]


def _scale(values: np.ndarray, path, percent: bool) -> float:
    """0.01 for a percent-scale pilot declared ``--percent``; refuse an undeclared one."""
    top = float(np.max(np.abs(values)))
    if percent:
        if top <= 1:
            raise InvalidParameterError(f"--percent: the scores in {path} are all within [-1, 1] "
                                        f"(largest |value| {top:g}): they look like fractions "
                                        "already; drop --percent")
        if top > 100:
            raise InvalidParameterError(f"--percent: {path} has a score of {top:g}, above 100%")
        return 0.01
    if top > 1:
        raise InvalidParameterError(f"{_flag(path)}: {path} has scores up to {top:g}, above 1: an "
                                    "accuracy in percent? Pass --percent to divide by 100 (scores "
                                    "are fractions)")
    return 1.0


def _budget_text(spread, effects_pp, alpha, power) -> str:
    """The paired t-test's seeds at each effect, at the assurance limit and the point."""
    parts = []
    for effect in effects_pp:
        if effect == 0 or spread.sd == 0:
            continue
        b = budget_from_spread(spread, effect / 100, alpha=alpha, power=power)
        parts.append(f"{effect:+.3g} pp: {b.text}")
    if not parts:
        return ""
    return (f"; paired t for {100 * power:.0f}% power (noncentral t) at " + ", ".join(parts))


def generator_from_pilot(path, *, percent: bool = False,
                         assurance: float = DEFAULT_ASSURANCE, effects_pp=(),
                         alpha: float = 0.05, power: float = 0.8,
                         log_read: dict | None = None) -> PilotFit:
    """Fit a generator to the pilot at ``path``: a results CSV (the ``protocols.evaluate``
    format), or harness logs of training seeds as ``"BASELINE,VARIANT"`` or ``{name: log}``
    (``--arm``) (:func:`read_pilot`).

    Per-question binary results fit ``seed_question`` (method of moments, see
    :meth:`sim.generators.seed_question.SeedQuestion.fit`); a fit on a boundary (seed sd 0,
    |rho| = 1) is warned about. Per-seed results fit ``seed_gaussian``: ``mu`` = baseline
    mean, ``sigma`` = the two arms' pooled seed-to-seed standard deviation, and ``rho`` such
    that one seed's delta has the sd of the pilot's own deltas at its ``assurance`` upper
    confidence limit (:func:`sim.pilot_budget.delta_spread`): the simulated seed budget then
    reaches the target power in at least ``assurance`` of pilots.

    Parameters
    ----------
    path : str or Path
        As for :func:`read_pilot`; logs of repeated runs of fixed models are refused.
    percent : bool
        The scores are percentages (91.3 for 91.3%). Without it a pilot with a score above 1
        is refused: read as fractions, its spread would be 100 times too large.
    assurance : float
        Probability, over the pilot's luck, that the budget reaches the target power.
    effects_pp : sequence of float
        Effects (pp) at which the text states the paired t-test's budget (besides the
        pilot's own effect).
    alpha, power : float
        Of that budget.
    log_read : dict or None
        How harness logs are read (:func:`read_pilot`).
    """
    scores = read_pilot(path, log_read)
    path = pilot_label(path)  # messages name the pilot as the user gave it
    if scores.runs_are == "repeats":
        # evaluate reads these runs as repeats of a fixed model (design "models"); a seed
        # budget for training methods fitted to them would contradict that design
        runs = scores.r
        raise InvalidParameterError(
            f"{_flag(path)}: {path} are harness logs of repeated runs, which evaluate reads as "
            f"fixed models "
            f"({runs} run{'s' if runs != 1 else ''} per question are repeats, the questions "
            f"are the sample); sim.calibrate's seed budget is for training methods compared "
            f"on seeds. For fixed models plan questions and repeats with 'evalcal plan "
            f"--design models'; if the runs are training seeds of two methods, write them as "
            f"a CSV (seed,arm,question,score) and pass that")
    scale = _scale(scores.scores.ravel(), path, percent)
    if scale != 1.0:
        scores = dataclasses.replace(scores, scores=scores.scores * scale)
    base, variant = two_arms(check_arm_scores(scores, percent=scale != 1.0))
    k, n = scores.r, scores.n
    if k < 2:
        raise InvalidParameterError(f"{_flag(path)} needs at least 2 seeds per arm to estimate the "
                                    f"seed-to-seed spread (3 or more advised); {path} has "
                                    f"{k}")
    effect_pp = 100 * float((variant - base).mean())
    deltas = variant.mean(axis=1) - base.mean(axis=1)
    spread = delta_spread(deltas, assurance)
    warnings = list(spread.warnings)
    budget = _budget_text(spread, [effect_pp, *[e for e in effects_pp if e != effect_pp]],
                          alpha, power)
    deltas_text = (f"one seed's delta has sd {100 * spread.sd:.3f} pp from the pilot's own "
                   f"{spread.k} deltas ({100 * assurance:.0f}%-assurance upper limit "
                   f"{100 * spread.upper:.3f} pp)")
    if scores.question_ids != ("metric",):
        binary = np.isin(base, (0, 1)).all() and np.isin(variant, (0, 1)).all()
        if not binary:
            raise InvalidParameterError(f"{_flag(path)} with per-question scores needs 0/1 scores "
                                        f"(seed_question is a model of correctness); {path} has "
                                        "others")
        if np.ptp(base) == 0 and np.ptp(variant) == 0:
            # every answer the same in each arm: the fit would sit at a floor or a ceiling,
            # where no effect can be placed
            raise InvalidParameterError(
                f"{_flag(path)}: every score in {path} is {base.flat[0]:g} in the baseline and "
                f"{variant.flat[0]:g} in the variant: a pilot without variance has nothing to "
                "fit a generator to")
        est = fit_moments(base, variant)
        fit = _question_fit(est, base, spread, path, k, effect_pp, deltas_text, budget)
        if fit is not None:
            return dataclasses.replace(fit, warnings=tuple(warnings) + fit.warnings)
        # seed_question cannot give the pilot's own per-seed spread: the seeds' accuracies
        # are what paired protocols read, so they are modelled directly (said in a warning)
        warnings.append(_mismatch_words(est, spread))
        b, v = base.mean(axis=1), variant.mean(axis=1)
        source = f"the per-seed accuracies of {path} ({k} seeds per arm, {n} questions)"
    else:
        b, v = base[:, 0], variant[:, 0]
        source = f"{path} ({k} seeds per arm)"
    mu, sigma, rho, notes, how = _gaussian_setting(b, v, spread, path)
    warnings += notes
    try:
        fitted = generators.get("seed_gaussian", mu=mu, sigma=sigma, rho=rho)
    except ValueError:
        # seed_gaussian keeps its accuracies inside [0, 1] with 5 sigma of room
        raise InvalidParameterError(f"{_flag(path)}: the per-seed metrics in {path} (mean "
                                    f"{100 * b.mean():.2f}%, sd {100 * sigma:.2f} pp per arm) lie "
                                    "too close to 0% or 100% for a normal model of accuracies (it "
                                    "would put scores outside [0, 1]); with enough runs, calibrate "
                                    f"on them as a pool: --generator real_pool --param csv={path} "
                                    "null=false (k up to a third of the runs)") from None
    text = (f"fitted seed_gaussian to {source}: baseline mean mu = {100 * fitted.mu:.2f}%; "
            f"{deltas_text}; {how}: one seed's delta has sd "
            f"{100 * fitted.delta_sd():.3f} pp in the simulation; the pilot's own mean delta "
            f"{effect_pp:+.2f} pp{budget}")
    return PilotFit(fitted, effect_pp, k, text, tuple(warnings), spread)


#: level of the interval of the pilot's delta sd that a fitted model's must lie in
FIT_LEVEL = 0.95


def _question_fit(est, base, spread, path, k, effect_pp, deltas_text, budget):
    """``seed_question`` of the moment fit ``est`` to a per-question pilot (baseline scores
    ``base``), or ``None`` where the fit's delta sd lies outside the pilot's own (its
    :data:`FIT_LEVEL` interval).

    The moment fit weighs the questions' agreement across seeds and arms (n questions of
    evidence each) against the k per-seed deltas; where they disagree, the questions win and
    the model's delta sd can sit far from the deltas' (a pilot with deltas 24, 25, 24 pp on
    100 questions: 4.5 pp against 0.58 pp). Within the model the delta sd cannot go below
    the part its question-level moments fix (its Bernoulli part), so no refit reaches it.
    """
    n = est.n_questions
    fitted = generators.generator_class("seed_question")(
        n_questions=est.n_questions, theta=est.theta, sd_question=est.sd_question,
        sd_seed=est.sd_seed, rho=est.rho, sd_noise=est.sd_noise)
    implied = _implied_delta_sd(est)
    low, high = spread.interval(FIT_LEVEL)
    if spread.sd > 0 and not low <= implied <= high:
        return None
    warnings = []
    if fitted.sd_seed < 1e-6 or abs(fitted.rho) > 0.999:
        warnings.append(f"the seed_question fit is on a boundary (seed effect sd "
                        f"{fitted.sd_seed:.3f} logit, rho = {fitted.rho:.2f}): "
                        f"{k} seeds cannot tell the seeds' spread apart from "
                        f"the questions' noise; the simulated budget may be too "
                        f"optimistic (run more pilot seeds, or use the paired-t budget "
                        f"from the pilot's deltas below)")
    interval = (f" (its {100 * FIT_LEVEL:.0f}% interval {100 * low:.2f}-{100 * high:.2f} pp)"
                if spread.sd > 0 else "")
    text = (f"fitted seed_question to {path} ({k} seeds per arm, {n} "
            f"questions): baseline accuracy {100 * base.mean():.2f}%, seed effect "
            f"sd {fitted.sd_seed:.3f} logit with arm correlation rho = {fitted.rho:.2f}, "
            f"question difficulty sd {fitted.sd_question:.2f} logit, per-(seed, question) "
            f"noise sd {fitted.sd_noise:.2f} logit; the fitted model gives one seed's delta "
            f"sd {100 * implied:.3f} pp on these {n} questions, the pilot's own deltas "
            f"{100 * spread.sd:.3f} pp{interval}; the pilot's own mean delta "
            f"{effect_pp:+.2f} pp; {deltas_text}{budget}")
    return PilotFit(fitted, effect_pp, k, text, tuple(warnings), spread)


def _implied_delta_sd(est) -> float:
    """One seed's delta sd (fraction) under a ``seed_question`` moment fit, on the pilot's
    own n questions at its own effect: the model's ``var_seed_delta`` moment, exact."""
    moments = model_moments(est.theta, est.beta, est.sd_question, est.sd_noise, est.sd_seed,
                            est.rho, est.n_questions)
    return float(np.sqrt(max(moments[MOMENTS.index("var_seed_delta")], 0.0)))


def _mismatch_words(est, spread) -> str:
    """Why a per-question pilot (moment fit ``est``) is not simulated with
    ``seed_question``, in words."""
    low, high = spread.interval(FIT_LEVEL)
    return (f"seed_question fitted to the pilot's questions gives one seed's delta sd "
            f"{100 * _implied_delta_sd(est):.2f} pp, outside the "
            f"{100 * FIT_LEVEL:.0f}% interval of the pilot's own {spread.k} deltas "
            f"({100 * spread.sd:.3f} pp; {100 * low:.2f}-{100 * high:.2f} pp): how often its "
            f"seeds and arms agree on a question does not square with how little its "
            f"per-seed accuracies vary, and the model cannot have both; the budget is "
            f"simulated with seed_gaussian on the per-seed accuracies instead (per-seed "
            f"protocols only)")


def _gaussian_setting(b, v, spread, path):
    """``(mu, sigma, rho, warnings, words)`` of ``seed_gaussian`` for per-seed metrics.

    ``seed_gaussian`` has one sd for both arms, so its ``rho`` is the pilot's own
    correlation pooled over the arms, ``2 c / (s_b**2 + s_v**2)`` (Pearson's where the arms'
    sds are equal; always in [-1, 1]): with ``sigma**2 = (s_b**2 + s_v**2) / 2`` it gives the
    pilot's mean arm variance and its delta variance both. The assurance margin then scales
    the whole seed covariance, so that one simulated seed's delta has the delta sd's
    assurance limit (``spread.upper``): ``sigma = upper / sqrt(2 (1 - rho))``, the arms' sd
    times the limit over the estimate. Back-solving rho from the unscaled arms instead pushed
    it to its -0.99 floor whenever the limit exceeded ``s_arm sqrt(2)`` (a 3-seed pilot's 80%
    limit is 2.1 times its estimate: rho -0.99 where the pilot's own was 0.27). Where that
    sigma would put scores outside [0, 1], it is held at the room there is and rho
    back-solved, said in a warning.
    """
    mu = float(b.mean())
    var_b, var_v = float(b.var(ddof=1)), float(v.var(ddof=1))
    s_arm = float(np.sqrt((var_b + var_v) / 2))
    if s_arm == 0:
        raise InvalidParameterError(f"{_flag(path)}: the per-seed metrics in {path} do not vary; "
                                    f"nothing to calibrate")
    target = spread.upper
    own = float(np.cov(b, v, ddof=1)[0, 1]) / s_arm**2
    pearson = (f"Pearson's {np.corrcoef(b, v)[0, 1]:.2f}" if min(var_b, var_v) > 0
               else "Pearson's undefined: an arm does not vary")
    arms = (f"the pilot's own {own:.2f}, pooled over its arms of sd {100 * np.sqrt(var_b):.2f} "
            f"and {100 * np.sqrt(var_v):.2f} pp ({pearson})")
    notes = []
    if spread.sd == 0:
        # equal deltas: the arms move together; no spread to scale
        notes.append("the pilot's deltas do not vary (rho clipped at 0.99)")
        return mu, s_arm, 0.99, notes, (f"seed-to-seed sd sigma = {100 * s_arm:.2f} pp per "
                                        f"arm with pairing correlation rho = 0.99")
    rho = min(max(own, -0.99), 0.99)
    if own > 0.99:
        notes.append(f"the pilot's deltas vary much less than its per-seed metrics (rho "
                     f"{own:.3f} clipped at 0.99)")
    sigma = target / np.sqrt(2 * (1 - rho))
    room = min(mu, 1 - mu) / SCORE_SIGMAS
    if sigma > room:
        # the scaled arms would leave [0, 1] (and leave no room for effects): keep the
        # pilot's own arm sd and back-solve rho for the delta's sd, as before the scaling;
        # rho is then not the pilot's, and the warning and the words say so
        wanted, sigma = sigma, s_arm
        rho = 1 - target**2 / (2 * sigma**2)
        if rho < -0.99:
            sigma, rho = target / np.sqrt(2 * 1.99), -0.99
        notes.append(f"the per-arm sd that gives the delta's assured sd at the pilot's own "
                     f"correlation {own:.2f} ({100 * wanted:.2f} pp) would put scores outside "
                     f"[0, 1] (room {100 * room:.2f} pp at mu = {100 * mu:.2f}%); the arms keep "
                     f"sd {100 * sigma:.2f} pp and rho is back-solved to {rho:.2f} instead")
        return mu, float(sigma), float(rho), notes, (
            f"seed-to-seed sd sigma = {100 * sigma:.2f} pp per arm with pairing correlation "
            f"rho = {rho:.2f}, back-solved for the delta's assured sd (not {arms})")
    return mu, float(sigma), float(rho), notes, (
        f"pairing correlation rho = {rho:.2f}, {arms}; seed-to-seed sd sigma = "
        f"{100 * sigma:.2f} pp per arm, the arms' {100 * s_arm:.2f} pp times "
        f"{sigma / s_arm:.2f} (the delta sd's {100 * spread.assurance:.0f}%-assurance limit "
        f"over its estimate)")
