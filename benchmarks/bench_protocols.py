"""Time each protocol's vectorized ``evaluate`` against a per-experiment scipy/statsmodels loop.

Usage::

    python benchmarks/bench_protocols.py [--sims 2000] [--k 3 5 8 10] [--loop-sims 200]
                                         [--seed 0] [--repeat 3] [--protocols NAME ...]
                                         [--threads N] [--json PATH]

For every k, ``--sims`` experiments are simulated once (common random numbers: the data do
not depend on which protocol runs), half with no effect and half with a +0.5 pp effect:

* per-seed metrics, seed-level Gaussian: ``base = 0.9 + 0.005 Z``,
  ``variant = 0.9 + delta + 0.005 (0.5 Z + sqrt(0.75) W)`` (correlation 0.5 between arms);
* question-level 0/1 scores for the protocols that need questions: ``--n-questions`` (1000)
  questions with per-question accuracy ``p_q ~ Beta(9, 1)`` shared by both arms, shifted per
  seed by the same Gaussian seed effects as above.

Each protocol decides all experiments in one vectorized call. The reference decides the first
``--loop-sims`` experiments one at a time in a Python loop over the natural scipy/statsmodels
call (numpy for the bootstraps that have no library equivalent); its time is extrapolated
per experiment to ``--sims``. Both are timed best-of-``--repeat`` after one untimed call
(numba kernels load once per process). Printed per protocol and k: vectorized seconds, loop seconds
(x sims), ratio, and the share of experiments whose decision is identical.

The compiled BCa kernel splits a large batch over the machine's cores (``NUMBA_NUM_THREADS``);
``--threads 1`` times it on one core, as the scipy references run.
"""

from __future__ import annotations

import argparse
import json
import zlib

import numpy as np
from _timing import best_time
from scipy import special, stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.weightstats import ztest

import protocols

DELTAS = (0.0, 0.005)
SEED_SD = 0.005
BASE_ACCURACY = 0.9


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


# --------------------------------------------------------------------------------------------
# Data


def _cell_rng(seed: int, k: int, kind: str) -> np.random.Generator:
    """Generator of one (k, kind) cell, derived from the root seed and the cell's names."""
    key = (k, zlib.crc32(kind.encode()))
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def _effects(sims: int) -> np.ndarray:
    return np.repeat(np.asarray(DELTAS), -(-sims // len(DELTAS)))[:sims]


def _seed_effects(rng, sims: int, k: int):
    z = rng.standard_normal((sims, k))
    w = rng.standard_normal((sims, k))
    return SEED_SD * z, SEED_SD * (0.5 * z + np.sqrt(0.75) * w)


def seed_level_data(seed: int, sims: int, k: int):
    """Per-seed metrics, shape (sims, k, 1): seed-level Gaussian with a delta mix."""
    rng = _cell_rng(seed, k, "seed_gaussian")
    eb, ev = _seed_effects(rng, sims, k)
    base = BASE_ACCURACY + eb
    variant = BASE_ACCURACY + _effects(sims)[:, None] + ev
    return base[..., None], variant[..., None]


def question_level_data(seed: int, sims: int, k: int, n: int):
    """0/1 scores, shape (sims, k, n), per-question difficulty shared by the arms."""
    rng = _cell_rng(seed, k, "question_binary")
    p_q = rng.beta(9.0, 1.0, size=(sims, 1, n))
    eb, ev = _seed_effects(rng, sims, k)
    shift_v = _effects(sims)[:, None] + ev
    base = rng.random((sims, k, n)) < np.clip(p_q + eb[..., None], 0.0, 1.0)
    variant = rng.random((sims, k, n)) < np.clip(p_q + shift_v[..., None], 0.0, 1.0)
    return base.astype(float), variant.astype(float)


# --------------------------------------------------------------------------------------------
# Per-experiment references: one experiment (k, n) in, one decision out


def _z_decision(estimate, se, alpha):
    return se > 0 and abs(estimate) / se > special.ndtri(1.0 - alpha / 2.0)


def _deltas(base, variant):
    return variant.mean(axis=-1) - base.mean(axis=-1)


def ref_welch_t(base, variant, alpha, rng):
    return stats.ttest_ind(variant.mean(-1), base.mean(-1), equal_var=False).pvalue < alpha


def ref_paired_t(base, variant, alpha, rng):
    return stats.ttest_rel(variant.mean(-1), base.mean(-1)).pvalue < alpha


def ref_wilcoxon(base, variant, alpha, rng):
    return stats.wilcoxon(_deltas(base, variant), method="exact").pvalue < alpha


def _perm_p(d):
    return stats.permutation_test((d,), _mean, permutation_type="samples",
                                  n_resamples=np.inf, vectorized=True).pvalue


def _bca_excludes_zero(d, alpha, rng):
    ci = stats.bootstrap((d,), _mean, method="BCa", n_resamples=10_000, vectorized=True,
                         confidence_level=1.0 - alpha, rng=rng).confidence_interval
    return ci.low > 0 or ci.high < 0


def ref_sign_flip(base, variant, alpha, rng):
    return _perm_p(_deltas(base, variant)) < alpha


def ref_bca(base, variant, alpha, rng):
    return _bca_excludes_zero(_deltas(base, variant), alpha, rng)


def ref_paired_bca_perm(base, variant, alpha, rng):
    d = _deltas(base, variant)
    return _bca_excludes_zero(d, alpha, rng) and _perm_p(d) < alpha


def ref_single_run(base, variant, alpha, rng, threshold=0.01):
    return abs(variant[0].mean() - base[0].mean()) >= threshold - 1e-12


def ref_mcnemar(base, variant, alpha, rng):
    b0, v0 = base[0] == 1, variant[0] == 1
    table = [[np.sum(b0 & v0), np.sum(b0 & ~v0)], [np.sum(~b0 & v0), np.sum(~b0 & ~v0)]]
    if table[0][1] + table[1][0] == 0:
        return False
    return sm_mcnemar(table, exact=False, correction=False).pvalue < alpha


def ref_paired_t_questions(base, variant, alpha, rng):
    return ztest(variant.mean(0) - base.mean(0))[1] < alpha


def ref_signflip_questions(base, variant, alpha, rng):
    # scipy's randomization test of the one-sample t on the per-question deltas: exact when
    # few questions differ, else 9,999 random sign patterns
    d = variant.mean(0) - base.mean(0)
    d = d[d != 0]
    if d.size == 0:
        return False
    exact = d.size <= 16
    # vectorized: scipy evaluates the statistic on all sign patterns of a batch at once
    res = stats.permutation_test((d,), lambda x, axis: stats.ttest_1samp(x, 0.0,
                                                                          axis=axis).statistic,
                                 permutation_type="samples", vectorized=True,
                                 n_resamples=np.inf if exact else 9999, random_state=rng)
    return res.pvalue < alpha


def ref_t_signflip_questions(base, variant, alpha, rng):
    # both the scipy t test and scipy's randomization test must reject
    return ref_paired_t_questions_t(base, variant, alpha, rng) and ref_signflip_questions(
        base, variant, alpha, rng)


def ref_paired_t_questions_t(base, variant, alpha, rng):
    d = variant.mean(0) - base.mean(0)
    return stats.ttest_1samp(d, 0.0).pvalue < alpha


def ref_paired_two_level(base, variant, alpha, rng):
    # Two-way ANOVA mean squares of the delta table, written out per experiment.
    d = variant - base
    k, n = d.shape
    ms_s = n * np.var(d.mean(axis=1), ddof=1)
    ms_q = k * np.var(d.mean(axis=0), ddof=1)
    resid = d - d.mean(axis=1, keepdims=True) - d.mean(axis=0, keepdims=True) + d.mean()
    ms_e = np.sum(resid**2) / ((k - 1) * (n - 1))
    terms = [(ms_s, k - 1)] if ms_s > ms_e else []
    terms += [(ms_q, n - 1)] if ms_q > ms_e else []
    terms.append(((1 - len(terms)) * ms_e, (k - 1) * (n - 1)))
    combo = sum(t for t, _ in terms)
    if combo == 0:
        return False
    df = combo**2 / sum(t**2 / f for t, f in terms)
    return 2 * stats.t.sf(abs(d.mean()) / np.sqrt(combo / (k * n)), df) < alpha


def _index_bootstrap_means(values, n_resamples, rng):
    idx = rng.integers(0, values.size, size=(n_resamples, values.size))
    return values[idx].mean(axis=-1)


def ref_question_bootstrap(base, variant, alpha, rng, n_resamples=1000):
    qb, qv = base.mean(0), variant.mean(0)
    reps = (_index_bootstrap_means(qv, n_resamples, rng)
            - _index_bootstrap_means(qb, n_resamples, rng))
    return _z_decision(qv.mean() - qb.mean(), reps.std(ddof=1), alpha)


def ref_paired_question_bootstrap(base, variant, alpha, rng, n_resamples=1000):
    dq = variant.mean(0) - base.mean(0)
    reps = _index_bootstrap_means(dq, n_resamples, rng)
    return _z_decision(dq.mean(), reps.std(ddof=1), alpha)


def _run_picks(scores, n_resamples, rng):
    k, n = scores.shape
    pick = rng.integers(0, k, size=(n_resamples, n))
    return scores[pick, np.arange(n)].mean(axis=-1)


def ref_run_bootstrap(base, variant, alpha, rng, n_resamples=1000, sqrt_b=False):
    reps = _run_picks(variant, n_resamples, rng) - _run_picks(base, n_resamples, rng)
    se = reps.std(ddof=1) / (np.sqrt(n_resamples) if sqrt_b else 1.0)
    return _z_decision(reps.mean(), se, alpha)


def ref_run_bootstrap_sqrt_b(base, variant, alpha, rng):
    return ref_run_bootstrap(base, variant, alpha, rng, sqrt_b=True)


def vec_bca_excludes_zero(d, alpha, rng):
    """One vectorized ``scipy.stats.bootstrap`` call on the whole batch (``axis=-1``)."""
    ci = stats.bootstrap((d,), _mean, method="BCa", n_resamples=10_000, vectorized=True,
                         axis=-1, batch=500, confidence_level=1.0 - alpha,
                         rng=rng).confidence_interval
    return (ci.low > 0) | (ci.high < 0)


def vec_perm_p(d):
    """One vectorized exact ``scipy.stats.permutation_test`` call on the batch."""
    return stats.permutation_test((d,), _mean, permutation_type="samples", axis=-1,
                                  n_resamples=np.inf, vectorized=True).pvalue


def vec_bca(base, variant, alpha, rng):
    return vec_bca_excludes_zero(_deltas(base, variant), alpha, rng)


def vec_paired_bca_perm(base, variant, alpha, rng):
    d = _deltas(base, variant)
    return vec_bca_excludes_zero(d, alpha, rng) & (vec_perm_p(d) < alpha)


#: one vectorized scipy call on the whole batch, for the protocols scipy can batch
VECTORIZED_REFERENCES = {"bca": vec_bca, "paired_bca_perm": vec_paired_bca_perm}

REFERENCES = {
    "welch_t": ("scipy ttest_ind(equal_var=False)", ref_welch_t),
    "paired_t": ("scipy ttest_rel", ref_paired_t),
    "wilcoxon": ("scipy wilcoxon(method='exact')", ref_wilcoxon),
    "sign_flip": ("scipy permutation_test exact", ref_sign_flip),
    "bca": ("scipy bootstrap BCa, 10k", ref_bca),
    "paired_bca_perm": ("scipy bootstrap BCa 10k + permutation_test", ref_paired_bca_perm),
    "single_run": ("python abs(diff) >= 0.01", ref_single_run),
    "mcnemar": ("statsmodels mcnemar", ref_mcnemar),
    "paired_t_questions": ("statsmodels ztest", ref_paired_t_questions),
    "signflip_questions": ("scipy permutation_test, t statistic", ref_signflip_questions),
    "t_signflip_questions": ("scipy ttest_1samp and permutation_test",
                             ref_t_signflip_questions),
    "paired_two_level": ("numpy two-way ANOVA + Satterthwaite, looped", ref_paired_two_level),
    "question_bootstrap": ("numpy index bootstrap, B=1000", ref_question_bootstrap),
    "paired_question_bootstrap": ("numpy index bootstrap, B=1000",
                                  ref_paired_question_bootstrap),
    "run_bootstrap": ("numpy run picks, B=1000", ref_run_bootstrap),
    "run_bootstrap_sqrt_b": ("numpy run picks, B=1000", ref_run_bootstrap_sqrt_b),
}


# --------------------------------------------------------------------------------------------
# Benchmark


def bench_one(name, base, variant, *, loop_sims, alpha, seed, repeat=3):
    """Time protocol ``name`` vectorized on all experiments and its reference on a subset.

    Both sides are timed best-of-``repeat``. Before timing, the protocol decides two
    experiments once, so that one-off set-up (numba loading its compiled kernels from the
    on-disk cache, or compiling them on first use) is not counted per batch.

    Returns
    -------
    dict
        ``vectorized_s``, ``loop_s`` (extrapolated to all experiments), ``ratio``,
        ``agreement`` (share of identical decisions on the subset) and ``reference``.
    """
    sims = base.shape[0]
    proto = protocols.get(name)
    proto.evaluate(base[:2], variant[:2], alpha, rng=seed)
    vectorized, result = best_time(
        lambda: proto.evaluate(base, variant, alpha, rng=seed), repeat)
    label, reference = REFERENCES[name]
    m = min(loop_sims, sims)

    def loop():
        rng = np.random.default_rng(seed)
        return np.array([reference(base[i], variant[i], alpha, rng) for i in range(m)])

    loop_s, decisions = best_time(loop, repeat)
    loop_s = loop_s / m * sims
    row = {"protocol": name, "k": base.shape[-2], "n": base.shape[-1], "sims": sims,
           "loop_sims": m, "repeat": repeat, "vectorized_s": vectorized, "loop_s": loop_s,
           "ratio": loop_s / vectorized, "agreement": float(np.mean(result.significant[:m]
                                                                      == decisions)),
           "reference": label}
    if name in VECTORIZED_REFERENCES:
        vec = VECTORIZED_REFERENCES[name]
        scipy_s, scipy_dec = best_time(
            lambda: vec(base, variant, alpha, np.random.default_rng(seed)), repeat)
        row.update(scipy_vec_s=scipy_s, scipy_vec_ratio=scipy_s / vectorized,
                   scipy_vec_agreement=float(np.mean(result.significant == scipy_dec)))
    return row


def run_benchmark(names, ks, *, sims, loop_sims, n_questions, alpha, seed, repeat=3):
    """All (protocol, k) rows; data are drawn once per k and shared by the protocols."""
    rows = []
    for k in ks:
        per_seed = seed_level_data(seed, sims, k)
        questions = None
        for name in names:
            proto = protocols.get(name)
            if k < proto.min_k:
                continue
            if proto.needs_questions:
                if questions is None:
                    questions = question_level_data(seed, sims, k, n_questions)
                data = questions
            else:
                data = per_seed
            rows.append(bench_one(name, *data, loop_sims=loop_sims, alpha=alpha, seed=seed,
                                  repeat=repeat))
    return rows


def format_rows(rows) -> str:
    head = (f"{'protocol':<26} {'k':>3} {'n':>5} {'vectorized s':>12} {'loop s (x sims)':>15} "
            f"{'ratio':>9} {'identical':>9}  reference")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['protocol']:<26} {r['k']:>3} {r['n']:>5} {r['vectorized_s']:>12.4f} "
                     f"{r['loop_s']:>15.2f} {r['ratio']:>8.0f}x {r['agreement']:>9.1%}  "
                     f"{r['reference']}")
    vec = [r for r in rows if "scipy_vec_s" in r]
    if vec:
        lines += ["", "one vectorized scipy call on the whole batch (axis=-1):",
                  f"{'protocol':<26} {'k':>3} {'scipy s':>9} {'ratio':>8} {'identical':>9}"]
        for r in vec:
            lines.append(f"{r['protocol']:<26} {r['k']:>3} {r['scipy_vec_s']:>9.3f} "
                         f"{r['scipy_vec_ratio']:>7.0f}x {r['scipy_vec_agreement']:>9.1%}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000, help="experiments per k")
    parser.add_argument("--k", type=int, nargs="+", default=[3, 5, 8, 10], help="seeds")
    parser.add_argument("--loop-sims", type=int, default=200,
                        help="experiments decided by the per-experiment loop (extrapolated)")
    parser.add_argument("--n-questions", type=int, default=1000,
                        help="questions per run for the question-level protocols")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=3,
                        help="time both sides best-of-REPEAT")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--protocols", nargs="+", default=None, choices=protocols.names(),
                        metavar="NAME", help="default: all registered")
    parser.add_argument("--threads", type=int, default=None,
                        help="most threads for the compiled kernels (default: one per core)")
    parser.add_argument("--json", default=None, metavar="PATH",
                        help="also write the rows as JSON to PATH ('-' for stdout only)")
    args = parser.parse_args(argv)

    names = args.protocols or protocols.names()
    missing = sorted(set(names) - set(REFERENCES))
    if missing:
        print(f"no loop reference for {missing}; skipped")
        names = [n for n in names if n in REFERENCES]
    with protocols.kernel_threads(args.threads):
        rows = run_benchmark(names, args.k, sims=args.sims, loop_sims=args.loop_sims,
                             n_questions=args.n_questions, alpha=args.alpha, seed=args.seed,
                             repeat=args.repeat)
    if args.json == "-":
        print(json.dumps(rows, indent=1))
        return 0
    threads = args.threads or "one per core"
    print(f"{args.sims} experiments per k (deltas {DELTAS}), loop on {args.loop_sims}, "
          f"alpha {args.alpha}, seed {args.seed}, best of {args.repeat}, kernel threads: "
          f"{threads}")
    print(format_rows(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
