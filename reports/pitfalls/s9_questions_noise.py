"""Section 9: questions are not the only noise."""

from __future__ import annotations

import pandas as pd

from sim.pitfall_data.questions_noise import EXPLANATION, PROTOCOLS, SD_SEEDS
from sim.seed_power_bound import bound_table

from .._report_page import Section
from . import figures as figs
from ._registry import section

#: the k shown in the table (the figure shows every k of the commands)
SHOWN_K = (3, 5, 10)
#: the power of the question-only z test at the effect where the bound is computed
BOUND_POWER = 0.8


@section(9,
         "Per-question tests that pool seeds ignore seed noise: use per-seed deltas or the "
         "two-level test.")
def section_questions_noise(ctx, scan) -> Section:
    """Section 9: one-level question tests across seeds, against the two-level test."""
    frames, commands = [], []
    for sd in SD_SEEDS:
        command = ctx.command("seed_question", (f"sd_seed={sd:g}",), (min(SHOWN_K),
                              max(SHOWN_K)), (0.0,), PROTOCOLS)
        frames.append(ctx.run(command).assign(sd_seed=float(sd)))
        commands.append(command.shell())
    cite = ctx.save("section9.csv", pd.concat(frames, ignore_index=True))
    bound = ctx.save("section9_bound.csv", bound_table(SHOWN_K, BOUND_POWER, ctx.alpha))
    commands.append(f"python -m sim.seed_power_bound --ks {' '.join(map(str, SHOWN_K))} "
                    f"--power {BOUND_POWER:g} --alpha {ctx.alpha:g}")
    s = Section(9, "Questions are not the only noise", commands=commands,
                csvs=["section9.csv", "section9_bound.csv"])
    s.figure = figs.questions_noise_figure(cite.frame, ctx.alpha, SD_SEEDS, PROTOCOLS)

    def at(name, sd, k):
        return cite.row(protocol=name, sd_seed=float(sd), k=k, effect_pp=0.0)

    rows = []
    for sd in SD_SEEDS:
        for name in PROTOCOLS:
            rows.append([f"{sd:g}", name] + [cite.rate_ci(at(name, sd, k)) for k in SHOWN_K])
    s.table = (["seed sd (logit)", "protocol"] + [f"FPR k = {k}" for k in SHOWN_K], rows)
    top = max(SD_SEEDS)
    s.measured.append([
        "seed_question (a fresh benchmark of 2000 questions per experiment, per-question 0/1 "
        "scores of k seeds per arm), no true effect, ",
        cite.num(at("paired_t", top, 10), "sims", "d"), " experiments per cell. With a "
        f"seed-effect sd of {top:g} (logit) and k = 10: paired_t_questions ",
        cite.rate_ci(at("paired_t_questions", top, 10)), ", paired_question_bootstrap ",
        cite.rate_ci(at("paired_question_bootstrap", top, 10)), ", mcnemar ",
        cite.rate_ci(at("mcnemar", top, 10)), "; paired_t ",
        cite.rate_ci(at("paired_t", top, 10)), " and paired_two_level ",
        cite.rate_ci(at("paired_two_level", top, 10)), "."])
    s.measured.append([
        "Without seed effects (sd 0), at k = 10: paired_t_questions ",
        cite.rate_ci(at("paired_t_questions", 0.0, 10)), ", paired_two_level ",
        cite.rate_ci(at("paired_two_level", 0.0, 10)), "."])
    s.measured.append(_bound_sentence(bound))
    s.explanation = [EXPLANATION]
    return s


def _bound_sentence(bound) -> list:
    """What the question-only tests' extra power at seed sd 0 would cost an honest test."""
    rows = [bound.row(k=k) for k in SHOWN_K]

    def listed(col):
        return [[bound.pct(r, col), "%" if r == rows[-1] else "% / "] for r in rows]

    return [
        "Their extra power when seeds truly do not matter cannot be had honestly. At the "
        "effect a question-only z test detects with ", bound.pct(rows[0], "questions_only", 0),
        "% power (normal two-level model, many questions), no test that keeps alpha at every "
        "seed variance has more than ", listed("bound"),
        f" power at k = {' / '.join(map(str, SHOWN_K))} when the seed variance is 0; "
        "paired_t reaches ", listed("paired_t"), ", and paired_two_level, which also needs "
        "paired_t to reject, at most that."]
