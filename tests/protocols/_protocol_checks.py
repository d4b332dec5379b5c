"""Shared helpers of the protocol tests: test data, and result comparisons that are exact for
deterministic protocols and bounded by Monte Carlo error for stochastic ones.

Monte Carlo (MC) tolerances are never tuned: a stochastic result is evaluated on ``R``
identical copies of the input at once (one batch, so the copies get independent resamples),
and two configurations are compared through their means over the copies with a two-sample
z-bound, ``|mean_a - mean_b| <= Z_MC * sqrt((sd_a**2 + sd_b**2) / R)``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import protocols

#: z-multiple of MC bounds; two-sided normal tail 5.7e-7 per comparison, so a few thousand
#: comparisons in the suite keep the chance of any false alarm below 1e-3 (and the
#: derandomized profile makes any outcome reproducible)
Z_MC = 5.0

#: copies of one input evaluated in one batch to measure a stochastic protocol's MC spread
R_COPIES = 100

#: fields of a result compared numerically; ``significant`` is compared as a 0/1 rate
NUMERIC_FIELDS = ("estimate", "ci_low", "ci_high", "p_value")

#: how the fields map when the arms are swapped: (field of the swapped result, sign)
SWAPPED = {"estimate": ("estimate", -1.0), "ci_low": ("ci_high", -1.0),
           "ci_high": ("ci_low", -1.0), "p_value": ("p_value", 1.0),
           "significant": ("significant", 1.0)}
UNCHANGED = {f: (f, 1.0) for f in (*NUMERIC_FIELDS, "significant")}


def default_clusters(n: int) -> np.ndarray:
    """Cluster codes for ``n`` questions: 2 to 4 clusters of unequal sizes (consecutive)."""
    g = max(2, min(4, n // 3))
    # sizes grow with the code: cut points at the squares of i / g
    cuts = np.round(n * (np.arange(1, g) / g) ** 1.5).astype(int)
    cuts = np.maximum(cuts, np.arange(1, g))
    return np.searchsorted(cuts, np.arange(n), side="right")


class WithClusters:
    """A protocol that needs clusters, evaluated with :func:`default_clusters` unless given.

    Lets the registry-wide checks call ``evaluate(base, variant, ...)`` on every protocol.
    """

    def __init__(self, proto):
        self._proto = proto

    def __getattr__(self, attr):
        return getattr(self._proto, attr)

    def applicable(self, k, n, binary, clusters=None):
        if clusters is None and n >= 2:
            clusters = default_clusters(n)
        return self._proto.applicable(k, n, binary, clusters)

    def evaluate(self, base, variant=None, alpha=0.05, *, rng=None, clusters=None):
        if isinstance(base, protocols.ScoreBatch):
            n = base.n
        else:
            try:
                n = np.shape(base)[-1] if np.ndim(base) >= 2 else 1
            except ValueError:
                n = 1   # ragged input: let evaluate's own validation name the problem
        if clusters is None and n >= 2:
            clusters = default_clusters(n)
        return self._proto.evaluate(base, variant, alpha, rng=rng, clusters=clusters)


def plain(name: str, **params):
    """``protocols.get(name, **params)``, wrapped in :class:`WithClusters` if it needs them."""
    proto = protocols.get(name, **params)
    return WithClusters(proto) if proto.needs_clusters else proto


def configured(name: str, **params) -> protocols.Protocol:
    """Protocol ``name``, deterministic where it offers that, cheaper where it can be.

    ``bootstrap='exact'`` (the ideal bootstrap) removes Monte Carlo error from the BCa-based
    protocols; ``n_resamples=200`` makes the question/run bootstraps fast enough for property
    tests (every property tested holds for any number of resamples).
    """
    allowed = protocols.parameters(name)
    kw = {}
    if "bootstrap" in allowed:
        kw["bootstrap"] = "exact"
    elif "n_resamples" in allowed:
        kw["n_resamples"] = 200
    kw.update(params)
    return plain(name, **kw)


def is_deterministic(proto: protocols.Protocol, k: int) -> bool:
    """Whether ``proto`` draws no random numbers on data with ``k`` seeds.

    Sign flips are enumerated up to ``max_exact_k`` seeds and sampled beyond, so even the
    protocols not marked ``stochastic`` (wilcoxon) are random above it.
    """
    if k > getattr(proto, "max_exact_k", k):
        return False
    if not proto.stochastic or getattr(proto, "bootstrap", None) == "exact":
        return True
    # Sign flips only (wilcoxon): enumerated, so nothing is drawn up to max_exact_k.
    return hasattr(proto, "max_exact_k") and "n_resamples" not in protocols.parameters(
        proto.name)


def make_scores(seed: int, batch_shape: tuple, k: int, n: int, kind: str = "binary"):
    """Paired score arrays of shape ``batch_shape + (k, n)``.

    ``binary``: 0/1 answers with a per-question difficulty shared by both arms (so arms are
    correlated, as in real evaluations) and a per-experiment shift of the variant.
    ``lattice``: multiples of 1/4 (many ties); ``float``: uniform on [0, 1].
    """
    rng = np.random.default_rng(seed)
    shape = tuple(batch_shape) + (k, n)
    if kind == "binary":
        p_base = rng.uniform(0.2, 0.9, size=tuple(batch_shape) + (1, n))
        shift = rng.uniform(-0.2, 0.2, size=tuple(batch_shape) + (1, 1))
        base = (rng.random(shape) < p_base).astype(float)
        variant = (rng.random(shape) < np.clip(p_base + shift, 0.0, 1.0)).astype(float)
    elif kind == "lattice":
        base = rng.integers(0, 5, size=shape) / 4.0
        variant = rng.integers(0, 5, size=shape) / 4.0
    elif kind == "float":
        base = rng.random(shape)
        variant = rng.random(shape)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return base, variant


@st.composite
def experiments(draw, proto, batch_shapes=((), (3,), (2, 3)), max_k=7, max_n=12):
    """Hypothesis strategy: ``(base, variant)`` that ``proto`` accepts (n >= 2 questions)."""
    k = draw(st.integers(max(proto.min_k, 2), max_k))
    n = draw(st.integers(max(proto.min_n, 2), max_n))
    batch_shape = draw(st.sampled_from(batch_shapes))
    kind = draw(st.sampled_from(["binary"] if proto.binary else ["binary", "lattice", "float"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return make_scores(seed, batch_shape, k, n, kind)


def copies(x, r: int = R_COPIES):
    """``r`` read-only copies of ``x`` along a new leading axis (a batch of identical inputs)."""
    return np.broadcast_to(x, (r,) + np.shape(x))


def assert_results_equal(a, b, mapping=UNCHANGED, *, rtol=1e-9, atol=1e-12):
    """Deterministic comparison: ``b``'s mapped fields equal ``a``'s up to rounding.

    ``rtol``/``atol`` only absorb floating-point summation order (sums of the same numbers in
    another order), not statistical error.
    """
    for field, (other, sign) in mapping.items():
        x = np.asarray(getattr(a, field))
        y = np.asarray(getattr(b, other))
        if field == "significant":
            np.testing.assert_array_equal(x, y, err_msg=field)
        else:
            np.testing.assert_allclose(x, sign * y, rtol=rtol, atol=atol, err_msg=field)


def assert_mc_equivalent(a, b, mapping=UNCHANGED, *, z=Z_MC, atol=1e-12):
    """Stochastic comparison of two results over ``R`` copies (the leading axis).

    The means over copies of each mapped field must agree within ``z`` two-sample standard
    errors (SDs measured over the copies); NaN must occur in the same places. A field with no
    MC spread in either result (e.g. a deterministic estimate) must agree to ``atol``.
    """
    for field, (other, sign) in mapping.items():
        x = np.asarray(getattr(a, field), dtype=float)
        y = sign * np.asarray(getattr(b, other), dtype=float)
        np.testing.assert_array_equal(np.isnan(x), np.isnan(y), err_msg=f"NaN in {field}")
        if np.all(np.isnan(x)):
            continue
        # Experiments without a value (a degenerate p or CI is NaN in every copy) are left
        # out; their NaN places were compared above.
        keep = ~np.isnan(x).all(axis=0)
        x, y = x[:, keep], y[:, keep]
        r = x.shape[0]
        se = np.sqrt((x.var(axis=0, ddof=1) + y.var(axis=0, ddof=1)) / r)
        gap = np.abs(x.mean(axis=0) - y.mean(axis=0))
        bound = z * se + atol * (1.0 + np.abs(x.mean(axis=0)))
        assert np.all(gap <= bound), (
            f"{field}: MC means differ by {gap.max():.3g} > bound "
            f"{bound[np.argmax(gap - bound)]:.3g}")
