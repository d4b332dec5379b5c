"""``harness_evals_bootstrap``: OpenAI evals' ``bootstrap_std`` and the overlap rule users apply.

Source: ``evals/metrics.py`` of github.com/openai/evals, ``get_bootstrap_accuracy_std``::

    vals = [m.data["correct"] for m in events]
    np.std([np.mean(random.sample(vals, len(vals) // 2)) for _ in range(num_samples)])

with ``num_samples = 1000``, printed as ``bootstrap_std`` beside ``accuracy``. Each replicate
draws HALF the events WITHOUT replacement (openai/evals PR #1834: "not actually a
bootstrap"). Only the facts are carried over; the code below is written from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from evalcal_core.designs import METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED

from .._base import Protocol, check_draws, register
from .._result import make_result

#: why the pooled events mislead across training seeds (a ``pitfall_for`` line)
_SEEDS_POOLED = "pools the k runs' answers as independent events: seed-to-seed variance ignored"


def evals_bootstrap_std(correct, total, n_resamples: int, rng) -> np.ndarray:
    """OpenAI evals' ``bootstrap_std`` of an accuracy, for a batch of event sets.

    Each replicate is the mean of ``total // 2`` of the ``total`` 0/1 events drawn without
    replacement; the result is the standard deviation (``ddof = 0``, as ``np.std``) of
    ``n_resamples`` replicates. The number of correct events in a half-sample drawn
    without replacement is hypergeometric, so it is drawn as one
    ``rng.hypergeometric(correct, total - correct, total // 2)`` per replicate: the same
    distribution as ``random.sample`` of the events, without materialising them.

    Parameters
    ----------
    correct : array_like of int, shape (...)
        Correct events in each set.
    total : int
        Events in each set (``>= 2``: evals' half-sample of one event is empty, a NaN).
    n_resamples : int
        ``num_samples`` of evals (its default is 1000).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of float, shape (...)
        The SD of the half-sample accuracies, a fraction (0.01 = 1 pp).
    """
    correct = np.asarray(correct, dtype=np.int64)
    half = total // 2
    good = correct[..., None]
    draws = rng.hypergeometric(good, total - good, half,
                               size=correct.shape + (n_resamples,))
    return (draws / half).std(axis=-1)


@register
@dataclass(frozen=True)
class HarnessEvalsBootstrap(Protocol):
    """OpenAI evals' default: ``accuracy +- 1.96 * bootstrap_std`` per model, do they overlap?

    Every answer of every run is one evals event: per arm, ``acc`` is the mean of the
    ``k n`` 0/1 scores and ``bootstrap_std`` is :func:`evals_bootstrap_std` of them. The
    decision a reader makes from the two printed reports is that the models differ when
    the intervals ``acc +- z * bootstrap_std`` do not overlap, ``|acc_v - acc_b| >
    z (sd_b + sd_v)`` with ``z = z_{1 - alpha/2}`` (1.96 at the default alpha).

    The half-sample without replacement has variance ``s2 / h * (N - h) / (N - 1)`` with
    ``h = N // 2`` and ``s2`` the events' plug-in variance, about ``s2 / (N - 1)``: the
    number is close to the usual standard error of one accuracy. What misleads is the
    overlap rule (the sum of two SEs, not the SE of the difference, and no pairing of the
    questions: conservative between fixed models) and the pooling of runs as independent
    events (the seed-to-seed variance of training runs is ignored).

    The CI reported is ``estimate +- z (sd_b + sd_v)``: it excludes 0 exactly when the two
    intervals do not overlap. There is no p-value.

    Parameters
    ----------
    n_resamples : int, default 1000
        evals' ``num_samples``.
    """

    reads_runs = False

    n_resamples: int = 1000

    name = "harness_evals_bootstrap"
    summary = "OpenAI evals bootstrap_std: acc +- 1.96 sd intervals do not overlap"
    harness = "openai/evals get_bootstrap_accuracy_std; acc +- 1.96 sd do not overlap"
    binary = True
    needs_questions = True
    stochastic = True
    valid_for = frozenset()
    pitfall = "two half-sample SE bars that do not overlap; seeds pooled as events"
    pitfall_for = {METHODS_INDEPENDENT: _SEEDS_POOLED,
                   MODELS: "overlap of two SE bars, pairing unused: conservative, loses power",
                   MODELS_CLUSTERED: "treats clustered questions as independent events"}

    def __post_init__(self):
        check_draws(self.n_resamples, "n_resamples", self.name, low=2)

    def _evaluate(self, batch, alpha, rng):
        total = batch.k * batch.n
        cb = batch.correct_base.sum(axis=-1, dtype=np.int64)
        cv = batch.correct_variant.sum(axis=-1, dtype=np.int64)
        # One stream, base then variant, so the two arms' replicates are independent.
        sd_b = evals_bootstrap_std(cb, total, self.n_resamples, rng)
        sd_v = evals_bootstrap_std(cv, total, self.n_resamples, rng)
        estimate = (cv - cb) / total
        half_width = norm.isf(alpha / 2) * (sd_b + sd_v)
        low, high = estimate - half_width, estimate + half_width
        return make_result(estimate, low, high, significant=(low > 0) | (high < 0))

