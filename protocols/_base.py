"""Base class of every protocol: input validation once, then one vectorized hook."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._result import ProtocolResult


def _check_alpha(alpha) -> float:
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"The 'alpha' parameter must be a number in (0, 1). "
                         f"Got {alpha!r} instead.") from None
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"The 'alpha' parameter must be in (0, 1). Got {alpha!r} instead.")
    return alpha


def _as_scores(x, arg: str) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"The {arg!r} parameter must be an array of numbers.") from None
    if a.ndim == 1:
        # Per-seed metrics without questions: (k,) means k seeds with one score each.
        a = a[:, None]
    if a.ndim < 2:
        raise ValueError(f"The {arg!r} parameter must have shape (..., k, n) (seeds, questions) "
                         f"or (k,) for per-seed metrics. Got shape {a.shape} instead.")
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        raise ValueError(f"The {arg!r} parameter must have at least one seed and one question. "
                         f"Got shape {a.shape} instead.")
    if not np.all(np.isfinite(a)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise ValueError(f"The {arg!r} parameter must be finite; it has {float(a[bad])!r} at index "
                         f"{bad}.")
    return a


@dataclass(frozen=True)
class Protocol:
    """An evaluation protocol: decides whether a variant beats a baseline.

    Subclasses set the class attributes, declare their tunable parameters as dataclass fields,
    and implement :meth:`_evaluate` on validated arrays of shape ``(..., k, n)``.
    """

    name: ClassVar[str] = ""
    #: one-line description shown in tables
    summary: ClassVar[str] = ""
    #: fewest seeds the protocol can use
    min_k: ClassVar[int] = 1
    #: needs 0/1 per-question scores
    binary: ClassVar[bool] = False
    #: needs per-question scores (n > 1)
    needs_questions: ClassVar[bool] = False
    #: uses the pairing of seed i across arms
    paired: ClassVar[bool] = False
    #: draws random numbers (result depends on ``rng``)
    stochastic: ClassVar[bool] = False
    #: reads seed 0 only, ignoring the other k - 1 runs (results change if seed 0 moves)
    uses_first_seed_only: ClassVar[bool] = False
    #: the pitfall it illustrates; empty for an honest protocol
    pitfall: ClassVar[str] = ""

    def applicable(self, k: int, n: int, binary: bool) -> str | None:
        """Why the protocol cannot run on data of this kind, or ``None`` if it can."""
        if k < self.min_k:
            return f"needs k >= {self.min_k} seeds, got k = {k}"
        if self.needs_questions and n < 2:
            return f"needs per-question scores (n >= 2), got n = {n}"
        if self.binary and not binary:
            return "needs binary 0/1 per-question scores"
        return None

    def evaluate(self, base, variant, alpha: float = 0.05, *, rng=None) -> ProtocolResult:
        """Apply the protocol to a batch of experiments.

        Parameters
        ----------
        base, variant : array_like, shape (..., k, n) or (k,)
            Scores of the baseline and the variant: row ``i`` of both arms used seed ``i``;
            ``n`` questions per run (``n = 1``, or a 1-D array, for per-seed metrics).
            Accuracy is a fraction in [0, 1]. Leading axes are independent experiments.
        alpha : float, default 0.05
            Two-sided significance level, in (0, 1).
        rng : numpy.random.Generator, int or None
            Source of randomness for resampling protocols.

        Returns
        -------
        ProtocolResult
            Arrays over the leading axes; estimates and CIs are fractions.
        """
        base, variant, alpha = self._evaluate_iv(base, variant, alpha)
        return self._evaluate(base, variant, alpha, np.random.default_rng(rng))

    def _evaluate_iv(self, base, variant, alpha):
        alpha = _check_alpha(alpha)
        base = _as_scores(base, "base")
        variant = _as_scores(variant, "variant")
        if base.shape != variant.shape:
            raise ValueError(f"The 'base' and 'variant' parameters must have the same shape. "
                             f"Got {base.shape} and {variant.shape} instead.")
        k, n = base.shape[-2:]
        binary = bool(np.all((base == 0) | (base == 1)) and np.all((variant == 0) | (variant == 1)))
        why = self.applicable(k, n, binary)
        if why is not None:
            raise ValueError(f"protocol {self.name!r} cannot evaluate scores of shape "
                             f"{base.shape}: it {why}")
        return base, variant, alpha

    def _evaluate(self, base, variant, alpha, rng) -> ProtocolResult:
        raise NotImplementedError
