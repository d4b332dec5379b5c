"""``models``: fixed models on independent questions; the per-question deltas are the units.

The hooks' defaults (:class:`~._base.DesignAnalysis`) are this design's; what it adds: a
claim at a margin is a score test there (its size holds at the margin, where an interval
read off the t is off its level), max-T's p must agree with the primary's own (the exact
sign-flip test beside the t), and the table notes how few questions differ.
"""

from __future__ import annotations

import numpy as np

from evalcal_core.designs import MODELS, Design, get
from protocols import claims as claims_mod

from ..protocol_table import FEW_DIFFERING
from ._base import DesignAnalysis, register


class Models(DesignAnalysis):
    """Fixed checkpoints compared on the same independent questions."""

    kind = MODELS

    def maxt_p(self, p_adj, p, primary):
        """The max-T of the per-question t statistics decides, and the primary's own p (the
        larger of the t's and the exact sign-flip test's) must agree: the t alone
        over-rejects where few questions differ; an extra condition can only lower the
        family-wise error. The exact primary of one 0/1 run (McNemar) is not a t, so its
        max-T p stands alone."""
        if primary == get(self.kind).primary:
            return np.fmax(p_adj, p)
        return p_adj

    def scores_claim_at_margin(self, fraction, claim, margin):
        """Accuracies with a claim at a non-zero margin (or any claim but superiority): the
        score tests of :func:`protocols.claims.models_claim`; superiority at margin 0 keeps
        the primary protocol's own (exact McNemar) test."""
        return bool(fraction and claim is not None and (claim != "superiority" or margin))

    def margin_claim(self, base, variant, claim, margin, alpha, binary, design: Design):
        """Tango's score test for one 0/1 run per model, an empirical-likelihood score test
        for repeats or partial credit (:func:`protocols.claims.models_claim`)."""
        return claims_mod.models_claim(base, variant, claim.replace("-", "_"), margin or None,
                                       alpha, binary_one_run=bool(binary and design.runs == 1))

    def table_notes(self, base, variant, alpha, factor, unit):
        """Where fewer than :data:`~protocols.analysis.protocol_table.FEW_DIFFERING`
        questions differ, the t alone is not shown to hold its level."""
        k, n = base.shape
        if n < 2:
            return []
        differ = int((np.abs(variant.mean(axis=0) - base.mean(axis=0)) > 0).sum())
        if differ >= FEW_DIFFERING:
            return []
        return [f"Only {differ} of {n} questions differ between the arms: the t test "
                f"alone (paired_t_questions) is not shown to hold its level with so "
                f"few (it over-rejects on a real A/A pool of 15 questions: "
                f"docs/harness_defaults.md); the verdict (t_signflip_questions) "
                f"needs the exact sign-flip test (signflip_questions) to agree."]


DESIGN = register(Models())
