"""Section 8: adding seeds until it is significant."""

from __future__ import annotations

from reports.sequential import sequential_figure
from sim import generators
from sim.sequential import sequential_table

from .._report_page import PAGE_DPI, Section
from .._save import png_bytes
from ._registry import section

PEEK_K_MIN = 3
PEEK_K_MAX = (6, 10, 20)
PEEK_EFFECT_PP = 1.0
PEEK_PROTOCOL = "paired_t"
PEEK_DESIGNS = ("peek", "fixed", "gs_pocock", "gs_obf", "e_tmix")


@section(8,
         "Adding seeds until the test passes inflates the false-positive rate: fix the looks "
         "in advance (group-sequential boundaries).")
def section_peeking(ctx, scan) -> Section:
    """Section 8: testing after every added seed against valid sequential designs."""
    generator = generators.get("seed_gaussian")
    # The same call as the command it prints, so its CSV holds the same rows.
    frame = sequential_table(generator, PEEK_PROTOCOL, PEEK_K_MIN,
                             range(PEEK_K_MIN, max(PEEK_K_MAX) + 1),
                             (0.0, PEEK_EFFECT_PP), ctx.settings.sims, ctx.alpha,
                             seed=ctx.settings.seed, designs=PEEK_DESIGNS)
    cite = ctx.save("section8.csv", frame)
    alpha_flag = "" if ctx.alpha == 0.05 else f" --alpha {ctx.alpha:g}"
    command = (f"python -m sim.sequential --k {PEEK_K_MIN} {max(PEEK_K_MAX)} --effects 0 "
               f"{PEEK_EFFECT_PP:g} --sims {ctx.settings.sims} --seed {ctx.settings.seed} "
               f"--protocol {PEEK_PROTOCOL}{alpha_flag}")
    s = Section(8, "Adding seeds until it is significant", commands=[command],
                csvs=["section8.csv"])
    s.figure = png_bytes(sequential_figure(cite.frame), dpi=PAGE_DPI)

    def at(design, k_max, effect=0.0):
        return cite.row(design=design, k_max=k_max, effect_pp=effect)

    rows = []
    for design in PEEK_DESIGNS:
        rows.append([design] + [cite.rate_ci(at(design, k)) for k in PEEK_K_MAX]
                    + [[cite.num(at(design, 20, PEEK_EFFECT_PP), "mean_seeds", ".1f")]])
    s.table = (["design"] + [f"FPR, seeds {PEEK_K_MIN}..{k}" for k in PEEK_K_MAX]
               + [f"mean seeds used at +{PEEK_EFFECT_PP:g} pp (k_max 20)"], rows)
    s.measured.append([
        f"seed_gaussian defaults (σ = 0.5 pp per seed, ρ = 0.5), {PEEK_PROTOCOL}, first look "
        f"at {PEEK_K_MIN} seeds, ", cite.num(at("peek", 20), "sims", "d"), " experiments. "
        "Testing after every added seed and stopping at the first p < α rejects a true null "
        "in ", cite.rate_ci(at("peek", 6)), " of experiments by 6 seeds and ",
        cite.rate_ci(at("peek", 20)), " by 20 seeds."])
    s.measured.append([
        "Group-sequential boundaries fixed in advance (Lan–DeMets Pocock spending, calibrated "
        "on the t statistic) keep the level: ", cite.rate_ci(at("gs_pocock", 20)),
        " at k_max = 20, and stop at a mean of ",
        cite.num(at("gs_pocock", 20, PEEK_EFFECT_PP), "mean_seeds", ".1f"),
        f" seeds when the effect is +{PEEK_EFFECT_PP:g} pp (the fixed design uses 20)."])
    s.explanation = [
        "Every extra look at the data is another chance for noise to cross the threshold, so "
        "adding seeds until the test passes turns a 5% test into a much larger one, and the "
        "p-value of the look at which you stopped means nothing. If you will add seeds, "
        "decide the looks in advance and use group-sequential boundaries (here Pocock or "
        "O'Brien–Fleming alpha spending) or an anytime-valid e-value; both keep the "
        "false-positive rate at α and still stop early when the effect is real."]
    return s
