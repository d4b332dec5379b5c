"""Section 5: bootstrap what you sampled (question-level protocols)."""

from __future__ import annotations

from sim import generators

from .._report_page import MIN_JUDGED_SIMS, Section
from ..figure_styles import drawing_for
from . import figures as figs
from ._registry import section

QUESTION_PROTOCOLS = ("mcnemar", "paired_t_questions", "question_bootstrap", "run_bootstrap",
                      "run_bootstrap_sqrt_b")
#: the honest reference the figure draws the others against: question_mixture repeats the
#: decoding of fixed models, and between fixed models the questions are the sample, so the
#: paired t-test on per-question differences is the reportable test
#: (:mod:`evalcal_core.designs`, kind ``models``); a per-seed test such as paired_bca_perm
#: would ignore the question sampling here
REFERENCE = "paired_t_questions"
REFERENCE_WORDS = "honest for fixed models"


@section(5, "Resample what would change in a replication: questions jointly, and runs.")
def section_questions(ctx, scan) -> Section:
    """Section 5: question-level protocols on ``question_mixture``."""
    command = ctx.command("question_mixture", ("n_questions=4000",), (8,), (0.0, 1.0),
                          QUESTION_PROTOCOLS, sims=ctx.settings.sims_questions)
    cite = ctx.save("section5.csv", ctx.run(command))
    s = Section(5, "Bootstrap what you sampled", commands=[command.shell()],
                csvs=["section5.csv"])
    order = sorted(QUESTION_PROTOCOLS,
                   key=lambda p: -cite.frame.set_index(["protocol", "effect_pp"]).loc[
                       (p, 0.0), "rate"])
    # labelled for the design question_mixture simulates: mcnemar on one run is honest
    # between fixed models (it only wastes the other runs), not a pitfall
    # a reference line is a judgement: not drawn from too few experiments per cell
    judged = int(cite.frame["sims"].min()) >= MIN_JUDGED_SIMS
    if not judged:
        s.notes.append(f"No reference line: {int(cite.frame['sims'].min())} experiments per "
                       f"cell, fewer than {MIN_JUDGED_SIMS:,} (a quick run).")
    with drawing_for(generators.generator_class("question_mixture").design):
        s.figure = figs.protocol_dots_figure(cite.frame, order, ctx.alpha, 1.0,
                                             REFERENCE if judged else None,
                                             REFERENCE_WORDS if judged else "")
    rows = []
    for name in order:
        i0, i1 = cite.row(protocol=name, effect_pp=0.0), cite.row(protocol=name, effect_pp=1.0)
        rows.append([name, cite.rate_ci(i0), cite.rate_ci(i1),
                     [cite.num(i1, "median_ci_width_pp", ".2f")]])
    s.table = (["protocol", "FPR (95% Wilson)", "power at +1 pp", "median CI width (pp)"],
               rows)
    sq = cite.row(protocol="run_bootstrap_sqrt_b", effect_pp=0.0)
    qb = cite.row(protocol="question_bootstrap", effect_pp=1.0)
    pt = cite.row(protocol="paired_t_questions", effect_pp=1.0)
    s.measured.append([
        "question_mixture, k = 8 decodings per arm, n = 4000 questions, ",
        cite.num(sq, "sims", "d"), " experiments per cell. run_bootstrap_sqrt_b 'finds' a "
        "difference between identical models in ", cite.rate_ci(sq), " of experiments (median "
        "CI width ", cite.num(sq, "median_ci_width_pp", ".2f"), " pp)."])
    s.measured.append([
        "The unpaired question_bootstrap detects a true +1 pp in ", cite.rate_ci(qb),
        " (CI width ", cite.num(qb, "median_ci_width_pp", ".2f"), " pp); the paired "
        "paired_t_questions in ", cite.rate_ci(pt), " (width ",
        cite.num(pt, "median_ci_width_pp", ".2f"), " pp)."])
    s.explanation = [
        "A confidence interval describes the variation of whatever was resampled, so it must "
        "resample what would change in a replication: the questions (both arms answer the "
        "same ones, so resample them jointly) and the decoding runs. Resampling questions "
        "independently per arm ignores that pairing and gives intervals several times too "
        "wide, while resampling only the runs ignores question sampling, and dividing that "
        "standard error by √B (a bug seen in practice) shrinks it to nothing. McNemar on one "
        "run is valid but throws away the other runs' information."]
    return s
