"""The paper's protocol, ``paired_bca_perm``, and its two parts ``bca`` and ``sign_flip``.

Per seed, delta = variant metric - baseline metric. A BCa bootstrap CI on the mean delta and
a two-sided sign-flip permutation p-value; significance needs both: the CI excludes 0 and
p < alpha.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalcal_core.designs import METHODS_INDEPENDENT, METHODS_PAIRED, MODELS, MODELS_CLUSTERED
from evalcal_core.validate import check_choice, check_int

from .._base import REPEATS_NOT_SEEDS, UNPAIRED_SEEDS, Protocol, check_draws, register
from .._resample import bca_interval, n_ideal_multisets, sign_flip_pvalue
from .._result import make_result

BOOTSTRAP_MODES = ("auto", "exact", "random")


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
    valid_for = frozenset({METHODS_PAIRED})
    pitfall_for = {METHODS_INDEPENDENT: UNPAIRED_SEEDS, MODELS: REPEATS_NOT_SEEDS,
                   MODELS_CLUSTERED: REPEATS_NOT_SEEDS}

    def __post_init__(self):
        check_draws(self.n_resamples, "n_resamples", self.name, low=2)
        check_draws(self.n_permutations, "n_permutations", self.name, low=1)
        # 2**k patterns are enumerated: beyond 24 that is no longer a quick exact test.
        check_int(self.max_exact_k, "max_exact_k", self.name, low=1, high=24)
        check_choice(self.bootstrap, "bootstrap", BOOTSTRAP_MODES, self.name)

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
    """Paired BCa CI + sign-flip permutation p; significant iff both agree.

    Parameters: see :class:`_PairedDeltaProtocol`.
    """

    name = "paired_bca_perm"
    summary = "the paper's protocol: BCa CI on mean delta and exact sign-flip p, both needed"

    def _evaluate(self, batch, alpha, rng):
        d = batch.seed_deltas
        low, high = self._ci(d, alpha, rng)
        p = self._p(d, rng)
        significant = ((low > 0) | (high < 0)) & (p < alpha)
        return make_result(d.mean(axis=-1), low, high, p, significant)


@register
@dataclass(frozen=True)
class Bca(_PairedDeltaProtocol):
    """BCa bootstrap CI on the mean per-seed delta alone; significant iff it excludes 0.

    Parameters: see :class:`_PairedDeltaProtocol`.
    """

    name = "bca"
    summary = "BCa bootstrap CI on the mean delta alone"
    pitfall = "a bootstrap CI at small k"
    valid_for = frozenset()
    pitfall_for = {METHODS_INDEPENDENT: "a bootstrap CI at small k, on arbitrarily "
                                        "matched seeds",
                   MODELS: REPEATS_NOT_SEEDS, MODELS_CLUSTERED: REPEATS_NOT_SEEDS}

    def _evaluate(self, batch, alpha, rng):
        d = batch.seed_deltas
        low, high = self._ci(d, alpha, rng)
        return make_result(d.mean(axis=-1), low, high, significant=(low > 0) | (high < 0))


@register
@dataclass(frozen=True)
class SignFlip(_PairedDeltaProtocol):
    """Two-sided sign-flip permutation test on per-seed deltas alone.

    Parameters: see :class:`_PairedDeltaProtocol`.
    """

    name = "sign_flip"
    summary = "sign-flip permutation test on per-seed deltas"

    def _evaluate(self, batch, alpha, rng):
        d = batch.seed_deltas
        p = self._p(d, rng)
        return make_result(d.mean(axis=-1), p_value=p, significant=p < alpha)
