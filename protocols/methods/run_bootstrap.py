"""``run_bootstrap`` and ``run_bootstrap_sqrt_b``: resample which run answers each question."""

from __future__ import annotations

from dataclasses import dataclass

from evalcal_core.designs import METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED

from .._base import register
from .._bootstrap_z import ReplicateZProtocol, z_result_from_sd
from .._replicate_law import rows, run_pick_law
from .._resample import resampled_run_picks, resampled_run_picks_binary


@register
@dataclass(frozen=True)
class RunBootstrap(ReplicateZProtocol):
    """Run bootstrap: per replicate and question, each arm picks one of its k runs.

    Replicate difference = accuracy of the variant's picks minus the baseline's; estimate =
    mean of the ``n_resamples`` replicates, SE = their sd. The questions are held fixed, so
    only the run-to-run (decoding) noise is resampled: the test-set sampling error is ignored.

    Parameters
    ----------
    n_resamples : int, default 1000
        Bootstrap replicates (alias ``B``).
    """

    name = "run_bootstrap"
    summary = "resample runs per question; questions held fixed"
    # With one run per arm every replicate picks the same run: SE 0, no variance estimate.
    min_k = 2
    needs_questions = True
    pitfall = "a run bootstrap that resamples decoding noise only"
    divide_by_sqrt_b = False
    valid_for = frozenset()
    pitfall_for = dict.fromkeys((METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED), pitfall)

    def _evaluate(self, batch, alpha, rng):
        k, b = batch.k, self.n_resamples
        if batch.binary:
            # From the batch's per-question counts (computed once, shared): no O(k n) pass.
            cb, cv = batch.correct_base, batch.correct_variant

            def drawn(mask):
                rep_b = resampled_run_picks_binary(rows(cb, mask), k, b, rng)
                return resampled_run_picks_binary(rows(cv, mask), k, b, rng) - rep_b

            def arms_law():
                return run_pick_law(correct=cv, k=k) - run_pick_law(correct=cb, k=k)
        else:
            def drawn(mask):
                rep_b = resampled_run_picks(rows(batch.base, mask), b, rng)
                return resampled_run_picks(rows(batch.variant, mask), b, rng) - rep_b

            def arms_law():
                return run_pick_law(batch.variant) - run_pick_law(batch.base)

        def law():
            # Shared with run_bootstrap_sqrt_b on the same batch.
            return batch.shared("run_pick_law", arms_law)

        mean, sd = self._summary(batch.batch_shape, law, rng, drawn)
        return z_result_from_sd(mean, sd, b, alpha, divide_by_sqrt_b=self.divide_by_sqrt_b)


@register
@dataclass(frozen=True)
class RunBootstrapSqrtB(RunBootstrap):
    """``run_bootstrap`` with its SE divided by sqrt(B): the precision it fabricates.

    Parameters
    ----------
    n_resamples : int, default 1000
        Bootstrap replicates B (alias ``B``); a larger B makes the false-positive rate worse.
    """

    name = "run_bootstrap_sqrt_b"
    summary = "run bootstrap with SE / sqrt(B)"
    pitfall = "dividing the bootstrap SE by sqrt(B)"
    divide_by_sqrt_b = True
    pitfall_for = dict.fromkeys((METHODS_INDEPENDENT, MODELS, MODELS_CLUSTERED), pitfall)
