"""``methods_paired``: training procedures on the same seeds; the per-seed deltas are the
units.

Max-T flips the seeds' deltas jointly, d_z and the relative error reduction are over seeds,
the leaderboard and a stream read each seed's metric, and the two-arm table says what the
sign-flip p can reach with this many seeds.
"""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import METHODS_PAIRED
from protocols import effect_sizes as es
from protocols import get, min_sign_flip_pvalue
from protocols import joint_null as jn
from protocols import multiplicity as mt

from ._base import N_FLIPS, DesignAnalysis, register

#: more per-seed deltas than this are summarised, not listed
MAX_LISTED = 12


def sign_flip_note(k: int, alpha: float) -> str:
    """What the sign-flip p of ``paired_bca_perm`` can reach with ``k`` seeds."""
    p_min = min_sign_flip_pvalue(k)
    if k > get("sign_flip").max_exact_k:
        n_perm = get("sign_flip").n_permutations
        return (f"With k = {k} the sign-flip p is sampled from {n_perm} random sign "
                f"patterns, a Monte Carlo estimate; its smallest value is {p_min:.4g}.")
    if p_min < alpha:
        return (f"With k = {k} the smallest attainable exact sign-flip p is {p_min:.4g}, "
                f"below alpha = {alpha:g}: the paired protocol (paired_bca_perm) can reach "
                f"significance.")
    # a sampled p (more seeds than the exact limit) is never below 1 / (1 + permutations),
    # so no number of seeds may reach a small enough alpha
    needed = next((j for j in range(k + 1, 64) if min_sign_flip_pvalue(j) < alpha), None)
    if needed is None:
        return (f"With k = {k} the smallest attainable exact sign-flip p is {p_min:.4g}, so "
                f"the paired protocol (paired_bca_perm) can NEVER be significant at alpha = "
                f"{alpha:g}, nor with any number of seeds: its p is never below "
                f"{min(map(min_sign_flip_pvalue, range(k, 64))):.4g}.")
    return (f"With k = {k} the smallest attainable exact sign-flip p is {p_min:.4g}, so the "
            f"paired protocol (paired_bca_perm) can NEVER be significant at alpha = "
            f"{alpha:g}: k >= {needed} seeds are needed.")


def summarise_deltas(deltas, unit: str) -> str:
    """All deltas when few; otherwise their count, range, quartiles and signs."""
    d = np.asarray(deltas, dtype=float)
    if d.size <= MAX_LISTED:
        return f"Per-seed deltas ({unit}): " + ", ".join(f"{x:+.2f}" for x in d) + "."
    q1, med, q3 = np.quantile(d, [0.25, 0.5, 0.75])
    return (f"Per-seed deltas ({unit}), {d.size} seeds: min {d.min():+.2f}, quartiles "
            f"{q1:+.2f} / {med:+.2f} / {q3:+.2f}, max {d.max():+.2f}; "
            f"{int((d > 0).sum())} positive, {int((d < 0).sum())} negative.")


class MethodsPaired(DesignAnalysis):
    """Training procedures on the same seeds (seed ``i`` of every arm shares its
    randomness)."""

    kind = METHODS_PAIRED

    def unit_deltas(self, base, variant):
        """Per seed: each seed's metric (its mean over the questions)."""
        return variant.mean(axis=1) - base.mean(axis=1)

    def unit_count(self, design, scores, k):
        """The seeds."""
        return k

    def effect_count(self, scores, k):
        """The seeds."""
        return k

    def board_units(self, scores, codes):
        """Each seed's metric."""
        return scores.scores.mean(axis=2), "seeds"

    def stream_units(self, scores):
        """The seeds, in the order their runs arrived."""
        base, variant = scores.arm(scores.arms[0]), scores.arm(scores.arms[1])
        arrival = scores.arrival
        times = np.arange(scores.r) if arrival is None else arrival.runs
        return (variant.mean(axis=1) - base.mean(axis=1), times, scores.run_ids, "seeds",
                None)

    def joint_null(self, x, comps, codes, rng, n_draws=N_FLIPS):
        """Joint sign flips of the per-seed deltas."""
        units, _ = self.flip_units(x, comps, codes)
        return jn.paired_signflip_null(units, n_draws, rng=rng)

    def flip_units(self, x, comps, codes):
        """The per-seed deltas (each seed's metric: its mean over questions), each seed
        weighted 1."""
        return mt.pair_deltas(x.mean(axis=-1), comps), None

    def relative_error_reduction(self, base, variant, estimate, sim_low, sim_high, err,
                                 alpha):
        """The delta-method CI over the paired seeds' metrics."""
        r = es.relative_error_reduction(base.mean(axis=1), variant.mean(axis=1), alpha)
        return float(r.estimate), float(r.ci_low), float(r.ci_high), r.note

    def table_notes(self, base, variant, alpha, factor, unit):
        """What the sign-flip p can reach, how correlated the arms' seeds are, the per-seed
        deltas and, with per-question scores, what the two-level protocol counts."""
        k, n = base.shape
        if k < 2:
            return []
        notes = [sign_flip_note(k, alpha)]
        r_b, r_v = base.mean(axis=1), variant.mean(axis=1)
        if k >= 3 and r_b.std() > 0 and r_v.std() > 0:
            rho = float(np.corrcoef(r_b, r_v)[0, 1])
            notes.append(f"Correlation of the arms' per-seed metrics: {rho:.2f}; pairing "
                         f"helps when it is clearly positive.")
        notes.append(summarise_deltas(factor * (r_v - r_b), unit))
        if n >= 2:
            notes.append("Per-question scores from several seeds: paired_two_level counts "
                         "both the seeds and the questions as noise; the per-question "
                         "protocols marked as pitfalls count only the questions.")
        return notes


DESIGN = register(MethodsPaired())
