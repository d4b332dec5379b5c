"""``t_signflip_questions``: the per-question t interval, significant only if the exact
sign-flip test agrees (fixed models, the questions as the sample)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcal_core.designs import METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED

from .._base import CLUSTERS_IGNORED, SEEDS_IGNORED, Protocol, check_draws, register
from .._result import make_result
from .paired_t import PairedTQuestions
from .signflip_questions import batch_pvalue


@register
@dataclass(frozen=True)
class TSignflipQuestions(Protocol):
    """Paired t interval on per-question deltas of k-run means; significant only if the
    t test and the studentized sign-flip test both reject.

    The paper's rule for seeds (a bootstrap interval and an exact sign-flip p must agree),
    applied to the questions of two fixed models: the estimate and the interval are
    ``paired_t_questions``'s (Student t on n - 1 df: the interval the simultaneous
    intervals and claims are built from); the p-value is the larger of the t test's and
    ``signflip_questions``'s, so the verdict is "both reject". The larger of two valid
    p-values is valid, and its level is at most the sign-flip test's, which is exact while
    at most 16 questions differ: the case where the t alone over-rejects (10.5% at
    alpha = 5% on the MathArena A/A pool of 15 questions, two attempts per arm). On large
    benchmarks the two tests agree and the rule is the t test.

    Parameters
    ----------
    n_permutations : int, default 9999
        Random sign patterns of the sign-flip test where its law is sampled (alias ``B``).
    """

    n_permutations: int = 9999

    name = "t_signflip_questions"
    reads_runs = False
    summary = ("paired t interval on per-question deltas; significant only if the exact "
               "sign-flip test agrees")
    needs_questions = True
    paired = True
    stochastic = True
    pitfall = SEEDS_IGNORED
    valid_for = frozenset({MODELS})
    pitfall_for = {METHODS_INDEPENDENT: SEEDS_IGNORED, MODELS_CLUSTERED: CLUSTERS_IGNORED}
    aliases = {"B": "n_permutations"}

    def __post_init__(self):
        check_draws(self.n_permutations, "n_permutations", self.name, low=1)

    def _evaluate(self, batch, alpha, rng):
        t = PairedTQuestions()._evaluate(batch, alpha, rng)
        # computed once per batch with signflip_questions where no sign pattern is drawn
        flips = batch_pvalue(batch, self.n_permutations, rng)
        # NaN (no variance estimate) stays NaN: no evidence either way
        p = np.where(np.isnan(t.p_value), np.nan, np.fmax(t.p_value, flips))
        return make_result(t.estimate, t.ci_low, t.ci_high, p, ~np.isnan(p) & (p < alpha))
