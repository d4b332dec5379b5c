"""Section 3: three seeds cannot pass an exact test."""

from __future__ import annotations

from protocols import min_sign_flip_pvalue

from .._report_page import Section
from . import figures as figs
from ._registry import section

SMALL_K = (2, 10)
SMALL_K_EFFECT_PP = 1.0


@section(3,
         "An exact sign-flip test has a p-value floor of 2/2^k: with too few seeds it can "
         "never reject.")
def section_small_k(ctx, scan) -> Section:
    """Section 3: the smallest attainable sign-flip p and the power of the exact protocol."""
    command = ctx.command("seed_gaussian", (), SMALL_K, (0.0, SMALL_K_EFFECT_PP),
                          ("paired_bca_perm", "paired_t"))
    frame = ctx.run(command)
    frame["min_sign_flip_p"] = frame["k"].map(min_sign_flip_pvalue)
    cite = ctx.save("section3.csv", frame)
    s = Section(3, "Three seeds cannot pass an exact test", commands=[command.shell()],
                csvs=["section3.csv"])
    s.figure = figs.small_k_figure(cite.frame, ctx.alpha, SMALL_K_EFFECT_PP)

    def at(name, k, effect=SMALL_K_EFFECT_PP):
        return cite.row(protocol=name, k=k, effect_pp=effect)

    rows = []
    for k in command.ks:
        rows.append([str(k), [cite.num(at("paired_bca_perm", k), "min_sign_flip_p", ".4f")],
                     cite.rate_ci(at("paired_bca_perm", k, 0.0)),
                     cite.rate_ci(at("paired_bca_perm", k)), cite.rate_ci(at("paired_t", k))])
    s.table = (["k", "smallest sign-flip p", "paired_bca_perm FPR",
                f"paired_bca_perm power +{SMALL_K_EFFECT_PP:g} pp",
                f"paired_t power +{SMALL_K_EFFECT_PP:g} pp"], rows)
    # the last k whose floor 2/2^k is still >= alpha (no power), and the first below it
    blocked = [k for k in command.ks if min_sign_flip_pvalue(k) >= ctx.alpha]
    passing = [k for k in command.ks if min_sign_flip_pvalue(k) < ctx.alpha]
    floor = ["The smallest two-sided sign-flip p is 2/2^k: "]
    for k in sorted({3, *blocked[-1:], *passing[:1]} & set(command.ks)):
        where = (" (still at or above alpha)" if k in blocked and k == blocked[-1]
                 else " (below alpha)" if passing and k == passing[0] else "")
        floor += [cite.num(at("paired_bca_perm", k), "min_sign_flip_p", ".4f"),
                  f" at k = {k}{where}, "]
    floor[-1] = floor[-1].rstrip(", ") + f"; alpha = {ctx.alpha:g}."
    s.measured.append(floor)
    shown = sorted({3, *blocked[-1:], *passing[:1], 8} & set(command.ks))
    power = [f"paired_bca_perm power at +{SMALL_K_EFFECT_PP:g} pp (seed_gaussian, per-seed "
             "delta sd 0.5 pp, ", cite.num(at("paired_bca_perm", 3), "sims", "d"),
             " experiments per cell): "]
    for k in shown:
        power += [cite.rate_ci(at("paired_bca_perm", k)), f" at k = {k}, "]
    power[-1] = power[-1].rstrip(", ") + "."
    s.measured.append(power)
    s.measured.append([
        "paired_t, which is not exact, already rejects at k = 3: power ",
        cite.rate_ci(at("paired_t", 3)), ", false-positive rate ",
        cite.rate_ci(at("paired_t", 3, 0.0)), "."])
    up_to = (f"Up to k = {blocked[-1]} that floor is at or above alpha = {ctx.alpha:g}, so "
             "the protocol has zero power however large the effect: a handful of seeds is "
             "not a small sample for this test, it is no sample. " if blocked else "")
    budget = (f"Budget at least {passing[0]} paired seeds" if passing
              else f"Budget more than {command.ks[-1]} paired seeds")
    s.explanation = [
        "The exact sign-flip test compares the observed mean delta with its 2^k sign-flipped "
        "copies, so even when every seed favours the variant the p-value cannot go below "
        f"2/2^k. {up_to}{budget}, and more for effects near the noise level."]
    return s
