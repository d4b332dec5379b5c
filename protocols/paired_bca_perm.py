"""The paper's protocol, ``paired_bca_perm``, and its two parts ``bca`` and ``sign_flip``.

Per seed, delta = variant metric - baseline metric. A BCa bootstrap CI on the mean delta and
a two-sided sign-flip permutation p-value; significance needs both: the CI excludes 0 and
p < alpha.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._base import Protocol
from ._registry import register
from ._resample import bca_interval, n_ideal_multisets, sign_flip_pvalue
from ._result import make_result

BOOTSTRAP_MODES = ("auto", "exact", "random")


def _deltas(base, variant):
    return variant.mean(axis=-1) - base.mean(axis=-1)


@dataclass(frozen=True)
class _PairedDeltaProtocol(Protocol):
    """Parameters shared by the BCa and sign-flip parts.

    Parameters
    ----------
    n_resamples : int, default 10000
        Random bootstrap resamples (used when the ideal bootstrap is not).
    bootstrap : {'auto', 'exact', 'random'}, default 'auto'
        'exact' enumerates all C(2k-1, k) resamples with multinomial weights (no Monte Carlo
        error); 'auto' does so while that costs no more than the random bootstrap: its
        kernel passes twice over the multisets, the random one once over the resamples,
        so while there are at most ``n_resamples / 2`` multisets (k <= 7 by default).
    max_exact_k : int, default 16
        Sign flips are enumerated exactly (2**k patterns) up to this k and sampled beyond.
    n_permutations : int, default 10000
        Random sign patterns when k > max_exact_k.
    """

    n_resamples: int = 10_000
    bootstrap: str = "auto"
    max_exact_k: int = 16
    n_permutations: int = 10_000

    min_k = 2
    paired = True
    stochastic = True

    def __post_init__(self):
        for field, low in (("n_resamples", 2), ("n_permutations", 1), ("max_exact_k", 1)):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"The {field!r} parameter of {self.name} must be an integer "
                                 f">= {low}. Got {value!r} instead.")
        if self.max_exact_k > 24:
            raise ValueError(f"The 'max_exact_k' parameter of {self.name} must be <= 24 "
                             f"(2**k patterns are enumerated). Got {self.max_exact_k!r} instead.")
        if self.bootstrap not in BOOTSTRAP_MODES:
            raise ValueError(f"The 'bootstrap' parameter of {self.name} must be one of "
                             f"{BOOTSTRAP_MODES}. Got {self.bootstrap!r} instead.")

    def exact_bootstrap(self, k: int) -> bool:
        """Whether the ideal (enumerated) bootstrap is used with ``k`` seeds."""
        if self.bootstrap == "auto":
            return 2 * n_ideal_multisets(k) <= self.n_resamples
        return self.bootstrap == "exact"

    def _ci(self, d, alpha, rng):
        return bca_interval(d, alpha, rng, n_resamples=self.n_resamples,
                            exact=self.exact_bootstrap(d.shape[-1]))

    def _p(self, d, rng):
        return sign_flip_pvalue(d, rng, max_exact_k=self.max_exact_k,
                                n_permutations=self.n_permutations)


@register
@dataclass(frozen=True)
class PairedBcaPerm(_PairedDeltaProtocol):
    __doc__ = ("Paired BCa CI + sign-flip permutation p; significant iff both agree.\n\n"
               + _PairedDeltaProtocol.__doc__.split("\n\n", 1)[1])

    name = "paired_bca_perm"
    summary = "the paper's protocol: BCa CI on mean delta and exact sign-flip p, both needed"

    def _evaluate(self, base, variant, alpha, rng):
        d = _deltas(base, variant)
        low, high = self._ci(d, alpha, rng)
        p = self._p(d, rng)
        significant = ((low > 0) | (high < 0)) & (p < alpha)
        return make_result(d.mean(axis=-1), low, high, p, significant)


@register
@dataclass(frozen=True)
class Bca(_PairedDeltaProtocol):
    __doc__ = ("BCa bootstrap CI on the mean per-seed delta alone; significant iff it "
               "excludes 0.\n\n" + _PairedDeltaProtocol.__doc__.split("\n\n", 1)[1])

    name = "bca"
    summary = "BCa bootstrap CI on the mean delta alone"
    pitfall = "a bootstrap CI at small k"

    def _evaluate(self, base, variant, alpha, rng):
        d = _deltas(base, variant)
        low, high = self._ci(d, alpha, rng)
        return make_result(d.mean(axis=-1), low, high, significant=(low > 0) | (high < 0))


@register
@dataclass(frozen=True)
class SignFlip(_PairedDeltaProtocol):
    __doc__ = ("Two-sided sign-flip permutation test on per-seed deltas alone.\n\n"
               + _PairedDeltaProtocol.__doc__.split("\n\n", 1)[1])

    name = "sign_flip"
    summary = "sign-flip permutation test on per-seed deltas"

    def _evaluate(self, base, variant, alpha, rng):
        d = _deltas(base, variant)
        p = self._p(d, rng)
        return make_result(d.mean(axis=-1), p_value=p, significant=p < alpha)
