"""Section 7: many variants against one baseline."""

from __future__ import annotations

from sim import generators

from .._many_variants import delta_correlation, family_rates
from .._report_page import Section
from . import figures as figs
from ._registry import section

FAMILY_MS = (1, 2, 3, 5, 10, 20)
FAMILY_K = 10


@section(7, "Reporting the best of many variants needs a multiplicity correction (Holm).")
def section_family(ctx, scan) -> Section:
    """Section 7: family-wise false-positive rate with m variants and one baseline."""
    generator = generators.get("seed_gaussian")
    frame = family_rates(generator, FAMILY_MS, FAMILY_K, ctx.settings.sims_family,
                         ctx.settings.seed, ctx.alpha)
    frame["delta_correlation"] = delta_correlation(generator)
    cite = ctx.save("section7.csv", frame)
    command = ctx.report_command()
    s = Section(7, "Many variants", commands=[command + "  # section7.csv"],
                csvs=["section7.csv"])
    s.figure = figs.family_figure(cite.frame, ctx.alpha)

    def at(m, correction):
        return cite.row(m=m, correction=correction)

    rows = [[str(m), cite.rate_ci(at(m, "none")), cite.rate_ci(at(m, "holm")),
             [cite.pct(at(m, "none"), "independent_rate")]] for m in FAMILY_MS]
    s.table = (["m", "no correction", "Holm", "1 − (1 − α)^m (%)"], rows)
    s.measured.append([
        f"paired_t, k = {FAMILY_K} seeds, seed_gaussian defaults, no true effect, ",
        cite.num(at(1, "none"), "sims", "d"), " experiments per m. With m = 20 variants at "
        "least one is 'significant' in ", cite.rate_ci(at(20, "none")), " of experiments "
        "(independent tests would give ", cite.pct(at(20, "none"), "independent_rate"),
        "%); with Holm ", cite.rate_ci(at(20, "holm")), "."])
    s.measured.append([
        "The variants' deltas share the baseline's noise: their correlation is ",
        cite.num(at(1, "none"), "delta_correlation", ".2f"), ", which keeps the family-wise "
        "rate below the independent-test formula."])
    s.explanation = [
        "Each comparison alone has false-positive rate alpha, so reporting the best of m "
        "variants without correction raises the chance of at least one false 'win' roughly "
        "like 1 − (1 − α)^m. Because every variant is compared with the same baseline runs, "
        "the tests are positively correlated and the real rate is a little below that "
        "formula, but it still grows far above alpha. Holm's step-down procedure keeps the "
        "family-wise rate at or below alpha for any dependence and is uniformly more powerful "
        "than Bonferroni, so use it (statsmodels multipletests(method='holm'))."]
    return s
