"""The result every protocol returns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ProtocolResult:
    """Decision of one protocol on a batch of experiments.

    Every field is an array over the experiments' leading (batch) axes; a single experiment
    gives 0-d arrays.

    Attributes
    ----------
    estimate : ndarray of float
        Variant minus baseline, as a fraction (0.012 = +1.2 pp).
    ci_low, ci_high : ndarray of float
        Confidence interval on the estimate (fraction); NaN where the protocol has none.
    p_value : ndarray of float
        Two-sided p-value in [0, 1]; NaN where the protocol has none.
    significant : ndarray of bool
        The protocol's two-sided decision at its level ``alpha``.
    degenerate : ndarray of bool
        The protocol tests with a p-value but had no variance estimate here (a standard
        error that is zero or rounding relative to the data's scale, with a non-zero
        estimate, e.g. per-seed deltas equal on paper; see :mod:`protocols._decisions`):
        there is no evidence either way, so ``p_value`` is NaN, the CI is NaN and
        ``significant`` is False (scipy would report t = inf, p = 0, or a p of order 1e-14
        for a rounding-level SE). Always False for protocols without a p-value.
    """

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    p_value: np.ndarray
    significant: np.ndarray
    degenerate: np.ndarray | None = None

    def __post_init__(self):
        if self.degenerate is None:
            object.__setattr__(self, "degenerate",
                               np.zeros(np.shape(self.estimate), dtype=bool))

    @property
    def shape(self) -> tuple[int, ...]:
        """Batch shape of the experiments."""
        return np.shape(self.estimate)

    def __getitem__(self, index) -> ProtocolResult:
        """Select experiments along the batch axes, like an array."""
        return ProtocolResult(
            estimate=self.estimate[index],
            ci_low=self.ci_low[index],
            ci_high=self.ci_high[index],
            p_value=self.p_value[index],
            significant=self.significant[index],
            degenerate=self.degenerate[index],
        )


def make_result(estimate, ci_low=None, ci_high=None, p_value=None, significant=None):
    """Build a :class:`ProtocolResult`, filling absent fields with NaN.

    Parameters
    ----------
    estimate : array_like
        Variant minus baseline (fraction).
    ci_low, ci_high, p_value : array_like or None
        ``None`` means the protocol has no such quantity: NaN of the estimate's shape.
    significant : array_like of bool
        The decision.

    Notes
    -----
    ``degenerate`` is derived, not passed: where a protocol has a p-value (``p_value`` is
    not ``None``) a NaN p marks an experiment without a variance estimate (see
    :func:`protocols._decisions.t_decision`); ``significant`` is forced False there.
    """
    estimate = np.asarray(estimate, dtype=float)
    nan = np.full(estimate.shape, np.nan)

    def _or_nan(x):
        return nan.copy() if x is None else np.asarray(x, dtype=float)

    p = _or_nan(p_value)
    degenerate = np.asarray(np.isnan(p) if p_value is not None
                            else np.zeros(estimate.shape, dtype=bool))
    return ProtocolResult(
        estimate=estimate,
        ci_low=_or_nan(ci_low),
        ci_high=_or_nan(ci_high),
        p_value=p,
        significant=np.asarray(np.asarray(significant, dtype=bool) & ~degenerate),
        degenerate=degenerate,
    )
