"""The most power a test valid for every seed variance can have when seeds do not matter.

Why no honest test of per-question scores from k seeds can match ``paired_t_questions``
when the seed effects happen to be 0: ``paired_t_questions`` assumes they are, and k seeds
cannot tell a seed variance of 0 from a small positive one. This module computes, for the
normal two-level model, the highest power that *any* test keeping alpha at every seed
variance can have at seed variance 0, and prints it beside ``paired_t`` (whose power
bounds ``paired_two_level``'s, since that needs ``paired_t`` to reject) and the
question-only z test.

Model. The per-seed mean deltas over n questions are

    d_s = mu + a_s + e_s,   a_s ~ N(0, sigma_a**2),   e_s ~ N(0, sigma_w**2),   s = 1..k,

``e_s`` being the question-level noise of seed s's mean. ``sigma_w**2`` is estimated from
k (n - 1) residual degrees of freedom; the bound hands it to the test exactly, which can
only raise the bound (a test may ignore what it is given). Standardised::

    z = sqrt(k) mean(d) / sigma_w ~ N(theta, lam),
    u = var(d) / sigma_w**2       ~ lam chi2_{k-1} / (k - 1),   independent,

with ``lam = 1 + sigma_a**2 / sigma_w**2 >= 1`` (the nuisance) and ``theta = sqrt(k) mu /
sigma_w``, the effect in standard errors of the grand mean at ``sigma_a = 0`` (unitless).
A test ``phi(z, u)`` is *valid* if it rejects ``theta = 0`` with probability <= alpha at
every ``lam >= 1``. Averaging a test with its mirror image ``phi(-z, u)`` keeps it valid
and gives its average power over ``+theta`` and ``-theta``, so the bound over tests of
``|z|`` bounds that average for every valid test; for a two-sided test whose power is
symmetric in the sign of the effect (all of this project's) it bounds the power itself.

Computation. The best test is a linear program: maximise the power at ``lam = 1`` over
``phi`` in [0, 1] on a grid of ``|z|`` and ``log u``, subject to the size at a grid of
``lam`` (:data:`LAMBDAS`). Its dual weights ``w_j >= 0`` give, for *every* valid test
(the Lagrangian form of the Neyman-Pearson lemma)::

    power <= alpha sum_j w_j + integral (f_{theta, 1} - sum_j w_j f_{0, lam_j})_+ dz du,

which is integrated on a finer grid: that is :attr:`SeedPowerBound.bound`. The linear
program's own value (:attr:`SeedPowerBound.attained`) is what its tabulated test reaches,
so the bound is attained to within the grid error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import add_options, alpha_option, check_options, config_from_args, option
from evalcal_core.validate import Each, Interval, check_alpha, check_int, check_number, fail

#: the nuisance values at which the size is constrained: no seed variance, then up to a
#: seed variance 10**5 times the question-level noise (the t limit holds well before)
LAMBDAS = np.concatenate([[1.0], np.geomspace(1.01, 1e5, 120)])
#: |z| grid reaches this many SDs beyond theta (alternative mass left out: < 1e-15)
Z_SPAN = 8.0
#: the u grid covers the alternative's u law between these tail probabilities
U_TAIL = 1e-13


@dataclass(frozen=True)
class SeedPowerBound:
    """Power at seed variance 0 of the best valid test and of two familiar ones.

    Attributes
    ----------
    k : int
        Seeds per arm.
    theta : float
        Effect in standard errors of the grand mean delta at seed variance 0 (unitless).
    alpha : float
        Two-sided level (fraction).
    bound : float
        No test valid at every seed variance has more power (fraction) at seed variance 0.
    attained : float
        Power of the linear program's tabulated test (fraction; within the grid error of
        ``bound``).
    paired_t : float
        ``paired_t``'s power (noncentral t, k - 1 df; fraction).
    questions_only : float
        Power of the two-sided z test that assumes seed variance 0 (``paired_t_questions``
        with many questions; fraction). It exceeds ``bound`` by what that assumption buys.
    """

    k: int
    theta: float
    alpha: float
    bound: float
    attained: float
    paired_t: float
    questions_only: float


@dataclass(frozen=True)
class TabulatedTest:
    """The linear program's test: a rejection probability per (|z|, log u) grid cell.

    Attributes
    ----------
    z_edges, log_u_edges : ndarray
        Cell edges of ``|z|`` and ``log u``; outside them the test does not reject.
    reject : ndarray, shape (len(z_edges) - 1, len(log_u_edges) - 1)
        Rejection probability in each cell.
    power : float
        Its power at ``lam = 1`` (the linear program's value, fraction).
    weights : ndarray
        Dual weights of the size constraints at :data:`LAMBDAS` (>= 0).
    """

    z_edges: np.ndarray
    log_u_edges: np.ndarray
    reject: np.ndarray
    power: float
    weights: np.ndarray

    def reject_probability(self, z, u):
        """Rejection probability of the test at standardised ``z`` and ``u`` (arrays)."""
        i = np.searchsorted(self.z_edges, np.abs(z), side="right") - 1
        with np.errstate(divide="ignore"):
            j = np.searchsorted(self.log_u_edges, np.log(u), side="right") - 1
        inside = (i >= 0) & (i < self.reject.shape[0]) & (j >= 0) & (j < self.reject.shape[1])
        out = np.zeros(np.broadcast(i, j).shape)
        out[inside] = self.reject[i[inside], j[inside]]
        return out


def questions_only_power(theta: float, alpha: float) -> float:
    """Power (fraction) of the two-sided z test at an effect of ``theta`` SEs."""
    c = stats.norm.isf(alpha / 2)
    return float(stats.norm.sf(c - theta) + stats.norm.cdf(-c - theta))


def theta_for_power(power: float, alpha: float) -> float:
    """The effect (SEs) at which the two-sided z test has power ``power``."""
    alpha = check_alpha(alpha)
    power = check_number(power, "power", low=alpha, high=1.0, low_open=True, high_open=True)
    return float(optimize.brentq(lambda t: questions_only_power(t, alpha) - power, 0.0, 40.0))


def paired_t_power(k: int, theta: float, alpha: float) -> float:
    """Power (fraction) of the two-sided t test on k per-seed deltas at seed variance 0."""
    c = stats.t.isf(alpha / 2, k - 1)
    return float(stats.nct.sf(c, k - 1, theta) + stats.nct.cdf(-c, k - 1, theta))


def optimal_test(k: int, theta: float, alpha: float = 0.05, *, grid: int = 200,
                 lambdas=None) -> TabulatedTest:
    """The most powerful test at ``(theta, lam = 1)`` among tests of ``|z|`` and ``u`` whose
    size is at most ``alpha`` at every ``lam`` in ``lambdas`` (default :data:`LAMBDAS`).

    Parameters
    ----------
    k : int
        Seeds per arm (>= 2).
    theta : float
        Effect in SEs of the grand mean at seed variance 0 (> 0).
    alpha : float
        Two-sided level (fraction).
    grid : int
        Cells per axis (>= 20).
    lambdas : sequence of float, optional
        Nuisance values ``lam >= 1`` at which the size is constrained.
    """
    k, theta, alpha, grid, lams = _iv(k, theta, alpha, grid, lambdas)
    z, dz, log_u, dlog_u, z_edges, u_edges = _grid(k, theta, grid)
    area = dz * dlog_u
    sizes = np.stack([_density(z, log_u, k, lam, 0.0).ravel() * area for lam in lams])
    gain = _density(z, log_u, k, 1.0, theta).ravel() * area
    result = optimize.linprog(-gain, A_ub=sizes, b_ub=np.full(len(lams), alpha),
                              bounds=(0.0, 1.0), method="highs")
    if result.status != 0:   # pragma: no cover - phi = 0 is always feasible
        raise RuntimeError(f"linear program failed: {result.message}")
    return TabulatedTest(z_edges, u_edges, result.x.reshape(grid, grid), float(-result.fun),
                         np.maximum(-result.ineqlin.marginals, 0.0))


def seed_power_bound(k: int, theta: float, alpha: float = 0.05, *, grid: int = 200,
                     check_grid: int = 3000, lambdas=None) -> SeedPowerBound:
    """The bound on the power at seed variance 0 of every test valid at every seed variance.

    Parameters
    ----------
    k, theta, alpha, grid, lambdas
        As :func:`optimal_test`.
    check_grid : int
        Cells per axis of the integral that turns the dual weights into the bound (>= grid).

    Returns
    -------
    SeedPowerBound
    """
    k, theta, alpha, grid, lams = _iv(k, theta, alpha, grid, lambdas)
    check_grid = check_int(check_grid, "check_grid", low=grid)
    test = optimal_test(k, theta, alpha, grid=grid, lambdas=lams)
    z, dz, log_u, dlog_u, _, _ = _grid(k, theta, check_grid)
    fz, fu = _marginals(z, log_u, k, 1.0, theta)
    # the weighted null density is separable per lam: sum_j w_j fz_j(z) fu_j(u), a product
    # of (z, lam) and (lam, u) matrices, taken a block of z rows at a time (each
    # check_grid^2 float64 array is 72 MB at the default 3,000)
    nulls = [(w, _marginals(z, log_u, k, lam, 0.0)) for w, lam in zip(test.weights, lams)
             if w > 0]
    null_z = np.column_stack([f_z for _, (f_z, _) in nulls] or [np.zeros_like(z)])
    null_u = np.vstack([w * f_u for w, (_, f_u) in nulls] or [np.zeros_like(log_u)])
    excess = 0.0
    for rows in range(0, z.size, 256):
        block = fz[rows:rows + 256, None] * fu[None, :] - null_z[rows:rows + 256] @ null_u
        excess += np.clip(block, 0.0, None).sum()
    area = dz * dlog_u
    # The alternative's mass outside the grid (< 1e-12) may all be rejected: add it.
    outside = max(0.0, 1.0 - fz.sum() * fu.sum() * area)
    bound = alpha * test.weights.sum() + excess * area
    return SeedPowerBound(k=k, theta=theta, alpha=alpha, bound=float(min(bound + outside, 1.0)),
                          attained=test.power, paired_t=paired_t_power(k, theta, alpha),
                          questions_only=questions_only_power(theta, alpha))


def bound_table(ks, power: float = 0.8, alpha: float = 0.05):
    """One row per k at the effect the question-only z test detects with ``power``.

    Returns
    -------
    pandas.DataFrame
        Columns ``k``, ``theta`` (SEs), ``alpha``, ``bound``, ``attained``, ``paired_t``,
        ``questions_only`` (powers, fractions): :class:`SeedPowerBound`'s fields.
    """
    import pandas as pd

    for k in ks:
        _iv(k, 1.0, alpha, 20, None)
    theta = theta_for_power(power, alpha)
    return pd.DataFrame([vars(seed_power_bound(k, theta, alpha)) for k in ks])


def _grid(k, theta, cells):
    """Midpoints and widths of the |z| and log u grids, and their edges."""
    df = k - 1
    z_edges = np.linspace(0.0, theta + Z_SPAN, cells + 1)
    log_u_edges = np.linspace(math.log(stats.chi2.ppf(U_TAIL, df) / df),
                              math.log(stats.chi2.isf(U_TAIL, df) / df), cells + 1)
    z = (z_edges[:-1] + z_edges[1:]) / 2
    log_u = (log_u_edges[:-1] + log_u_edges[1:]) / 2
    return z, z_edges[1] - z_edges[0], log_u, log_u_edges[1] - log_u_edges[0], z_edges, \
        log_u_edges


def _density(z, log_u, k, lam, theta):
    """Joint density of (|z|, log u) at nuisance ``lam`` and effect ``theta``, on the grid:
    the outer product of :func:`_marginals` (z and u are independent)."""
    fz, fu = _marginals(z, log_u, k, lam, theta)
    return fz[:, None] * fu[None, :]


def _marginals(z, log_u, k, lam, theta):
    """Densities of |z| and of log u at nuisance ``lam`` and effect ``theta``.

    Under the alternative the z variance is 1 (seed variance 0); under the null it is lam.
    """
    df = k - 1
    scale = 1.0 if theta else math.sqrt(lam)
    fz = (stats.norm.pdf((z - theta) / scale) + stats.norm.pdf((z + theta) / scale)) / scale
    u = np.exp(log_u)
    spread = 1.0 if theta else lam
    fu = stats.chi2.pdf(u * df / spread, df) * df / spread * u   # d u = u d log u
    return fz, fu


def _iv(k, theta, alpha, grid, lambdas):
    """Validated ``(k, theta, alpha, grid, lambdas)``."""
    k = check_int(k, "k", low=2, high=1000)
    theta = check_number(theta, "theta", low=0.0, high=40.0, low_open=True)
    alpha = check_alpha(alpha)
    grid = check_int(grid, "grid", low=20)
    lams = LAMBDAS if lambdas is None else np.asarray(lambdas, dtype=float)
    if lams.ndim != 1 or lams.size == 0 or not np.all(np.isfinite(lams)) or not np.all(
            lams >= 1):
        raise fail("lambdas", "a non-empty list of finite nuisance values >= 1", lambdas)
    return k, theta, alpha, grid, lams


@dataclass(frozen=True)
class BoundOptions:
    """What ``python -m sim.seed_power_bound`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`), checked once when built."""

    ks: tuple[int, ...] = option(
        "--ks", (2, 3, 5, 10, 20), nargs="+", kind=int, metavar="K",
        constraint=Each(Interval("int", 2, 1000)),
        help="seed counts per arm, one row each (default 2 3 5 10 20)")
    power: float = option(
        "--power", 0.8, kind=float,
        help="the effect is the one the question-only z test detects with this power "
             "(default 0.8)")
    alpha: float = alpha_option()

    def __post_init__(self):
        # the options' own names in the messages; bound_table checks the same rules again
        check_options(self)
        check_options(self, {"--power": Interval("real", self.alpha, 1.0, low_open=True,
                                                 high_open=True)}, only_extra=True)


def build_parser() -> ArgumentParser:
    """The options of :class:`BoundOptions`, as declared there."""
    return add_options(ArgumentParser(
        prog="python -m sim.seed_power_bound",
        description="The most power any test that keeps alpha at every seed variance can "
                    "have when the seed variance is 0 (normal two-level model), beside "
                    "paired_t and the question-only z test, in percent. See the module "
                    "docstring for the model and the linear program behind the bound.",
        # --k (the range of sim.calibrate) must not be read as an abbreviation of --ks
        allow_abbrev=False), BoundOptions)


def main(argv=None) -> int:
    """Command line; prints one row per k (powers in percent)."""
    config = config_from_args(BoundOptions, build_parser().parse_args(argv))
    table = bound_table(config.ks, config.power, config.alpha)
    print(f"At seed variance 0, effect {table.theta.iloc[0]:.3f} SEs of the grand mean (the "
          f"question-only z test's power {100 * config.power:g}%), two-sided alpha "
          f"{config.alpha:g}:")
    print(f"{'k':>4} {'any valid test <=':>18} {'paired_t':>9} {'question-only z':>16}")
    for r in table.itertuples():
        print(f"{r.k:>4} {100 * r.bound:>17.1f}% {100 * r.paired_t:>8.1f}% "
              f"{100 * r.questions_only:>15.1f}%")
    print("'any valid test' keeps alpha at every seed variance; the question-only test does "
          "not (see the pitfalls report, section 9).")
    return 0


if __name__ == "__main__":
    run_main(main, "python -m sim.seed_power_bound")
