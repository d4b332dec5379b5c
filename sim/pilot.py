"""Fit a generator to a user's pilot runs: "with runs like mine, how many seeds do I need?"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.results_io import check_scores, read_any

from . import generators


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
    """

    generator: object
    observed_effect_pp: float
    k: int
    text: str


def _scale(values: np.ndarray, path, percent: bool) -> float:
    """0.01 for a percent-scale pilot declared ``--percent``; refuse an undeclared one."""
    top = float(np.max(np.abs(values)))
    if percent:
        if top <= 1:
            raise ValueError(f"--percent: the scores in {path} are all within [-1, 1] (largest "
                             f"|value| {top:g}): they look like fractions already; drop "
                             f"--percent")
        if top > 100:
            raise ValueError(f"--percent: {path} has a score of {top:g}, above 100%")
        return 0.01
    if top > 1:
        raise ValueError(f"--from-pilot: {path} has scores up to {top:g}, above 1: an accuracy "
                         f"in percent? Pass --percent to divide by 100 (scores are fractions)")
    return 1.0


def generator_from_pilot(path, *, percent: bool = False) -> PilotFit:
    """Fit a generator to the results CSV at ``path`` (the ``protocols.evaluate`` format).

    Per-question binary results fit ``seed_question`` (method of moments, see
    :meth:`sim.generators.seed_question.SeedQuestion.fit`). Per-seed results fit
    ``seed_gaussian``: ``mu`` = baseline mean, ``sigma`` = the two arms' pooled
    seed-to-seed standard deviation, ``rho`` = correlation of the arms' per-seed metrics
    (needs k >= 3; clipped to [-0.99, 0.99]).

    Parameters
    ----------
    path : str or Path
    percent : bool
        The scores are percentages (91.3 for 91.3%). Without it a pilot with a score above 1
        is refused: read as fractions, its spread would be 100 times too large.
    """
    raw = read_any(path)
    scale = _scale(np.concatenate([raw.base.ravel(), raw.variant.ravel()]), path, percent)
    results = check_scores(read_any(path, scale=scale) if scale != 1.0 else raw,
                           percent=scale != 1.0)
    if results.k < 3:
        raise ValueError(f"--from-pilot needs at least 3 seeds to estimate the seed-to-seed "
                         f"spread; {path} has {results.k}")
    effect_pp = 100 * float((results.variant - results.base).mean())
    if results.per_question:
        binary = np.isin(results.base, (0, 1)).all() and np.isin(results.variant, (0, 1)).all()
        if not binary:
            raise ValueError(f"--from-pilot with per-question scores needs 0/1 scores "
                             f"(seed_question is a model of correctness); {path} has others")
        fitted = generators.generator_class("seed_question").fit(results.base, results.variant)
        text = (f"fitted seed_question to {path} ({results.k} seeds per arm, {results.n} "
                f"questions): baseline accuracy {100 * results.base.mean():.2f}%, seed effect "
                f"sd {fitted.sd_seed:.3f} logit with arm correlation rho = {fitted.rho:.2f}, "
                f"question difficulty sd {fitted.sd_question:.2f} logit, per-(seed, question) "
                f"noise sd {fitted.sd_noise:.2f} logit; the pilot's own mean delta "
                f"{effect_pp:+.2f} pp")
        return PilotFit(fitted, effect_pp, results.k, text)
    b = results.base[:, 0]
    v = results.variant[:, 0]
    sigma = float(np.sqrt((b.var(ddof=1) + v.var(ddof=1)) / 2))
    if sigma == 0:
        raise ValueError(f"--from-pilot: the per-seed metrics in {path} do not vary; "
                         f"nothing to calibrate")
    rho = 0.0
    if b.std() > 0 and v.std() > 0:
        rho = float(np.clip(np.corrcoef(b, v)[0, 1], -0.99, 0.99))
    fitted = generators.get("seed_gaussian", mu=float(b.mean()), sigma=sigma, rho=rho)
    text = (f"fitted seed_gaussian to {path} ({results.k} seeds per arm): baseline mean "
            f"mu = {100 * fitted.mu:.2f}%, seed-to-seed sd sigma = {100 * sigma:.2f} pp per "
            f"arm, pairing correlation rho = {rho:.2f} (so one seed's delta has sd "
            f"{100 * fitted.delta_sd():.2f} pp); the pilot's own mean delta "
            f"{effect_pp:+.2f} pp")
    return PilotFit(fitted, effect_pp, results.k, text)
