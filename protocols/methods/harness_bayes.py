"""``harness_beta_binomial``: bayes_evals' independent Beta-binomial comparison.

Source: github.com/sambowyer/bayes_evals, ``src/bayes_evals/bayes_evals.py``
(``get_bayes_posterior``: ``Beta(correct + 1, wrong + 1)`` under the uniform prior
``(1, 1)``; ``independent_comparisons``: ``P(theta_A > theta_B)`` from 10,000 posterior
draws per model). Bowyer, Aitchison & Ivanova (2025), "Position: Don't use the CLT in LLM
evals with fewer than a few hundred datapoints". Only the facts are carried over; here the
probability is computed in closed form instead of by Monte Carlo.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import betaln, logsumexp

from evalcal_core.designs import MODELS, MODELS_CLUSTERED

from .._base import Protocol, register
from .._result import make_result


def prob_beta_greater(a1, b1, a2, b2) -> np.ndarray:
    """``P(X > Y)`` for independent ``X ~ Beta(a1, b1)``, ``Y ~ Beta(a2, b2)``, integer ``a1``.

    The finite sum (Cook, "Exact calculation of beta inequalities", 2005; E. Miller's
    Bayesian A/B formula) ``P(X > Y) = sum_{i=0}^{a1-1} B(a2 + i, b1 + b2) /
    ((b1 + i) B(1 + i, b1) B(a2, b2))``, summed in log space (every term is positive).

    Parameters
    ----------
    a1 : array_like of int
        First shape of X, ``>= 1``.
    b1, a2, b2 : array_like of float
        The other shapes, ``> 0``; all four broadcast together.

    Returns
    -------
    ndarray of float
        A probability in [0, 1].
    """
    a1, b1, a2, b2 = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (a1, b1, a2,
                                                                                  b2)))
    i = np.arange(int(a1.max()))
    a1_, b1_, a2_, b2_ = (x[..., None] for x in (a1, b1, a2, b2))
    terms = (betaln(a2_ + i, b1_ + b2_) - np.log(b1_ + i) - betaln(1.0 + i, b1_)
             - betaln(a2_, b2_))
    # Terms past a1 - 1 do not belong to an experiment's sum.
    terms = np.where(i < a1_, terms, -np.inf)
    return np.clip(np.exp(logsumexp(terms, axis=-1)), 0.0, 1.0)


@register
@dataclass(frozen=True)
class HarnessBetaBinomial(Protocol):
    """bayes_evals' independent comparison: ``P(theta_v > theta_b) > 1 - alpha`` or ``< alpha``.

    Every 0/1 answer of every run is pooled (``k n`` Bernoulli trials per arm); each arm's
    accuracy gets the posterior ``Beta(1 + correct, 1 + wrong)`` and ``P = P(theta_v >
    theta_b)`` is :func:`prob_beta_greater` (exact; bayes_evals draws 10,000 samples). The
    decision a reader makes is that the variant is better when ``P > 0.95`` and worse when
    ``P < 0.05``: at level ``alpha`` the thresholds are ``1 - alpha`` and ``alpha``, so
    each side errs at about alpha and the two-sided rule at about ``2 alpha`` under
    independent arms. The estimate is the difference of pooled accuracies (fraction). No
    CI, no p-value.

    The posteriors are independent: the pairing of the questions (the same questions for
    both arms) is ignored, and so are seed-to-seed variance and clustering.
    """

    reads_runs = False

    name = "harness_beta_binomial"
    summary = "bayes_evals Beta-binomial: P(A > B) > 0.95 or < 0.05 on pooled 0/1 answers"
    harness = "bayes_evals independent_comparisons (Beta posteriors); P(A > B) > 0.95 / < 0.05"
    binary = True
    needs_questions = True
    valid_for = frozenset()
    pitfall = "pools the k runs' answers as independent trials: seed-to-seed variance ignored"
    pitfall_for = {MODELS: "independent posteriors, pairing of the questions ignored; each "
                           "side at alpha",
                   MODELS_CLUSTERED: "treats clustered questions as independent trials"}

    def _evaluate(self, batch, alpha, rng):
        total = batch.k * batch.n
        cb = batch.correct_base.sum(axis=-1, dtype=np.int64)
        cv = batch.correct_variant.sum(axis=-1, dtype=np.int64)
        p = prob_beta_greater(1 + cv, 1 + total - cv, 1 + cb, 1 + total - cb)
        estimate = (cv - cb) / total
        return make_result(estimate, significant=(p > 1 - alpha) | (p < alpha))
