"""A batch of per-question counts serves every protocol that says it reads no runs.

Consistency check: each registered protocol with ``reads_runs = False`` gives, on
``ScoreBatch.from_counts`` of the runs' correct counts, the very result it gives on the runs
themselves (same ``rng``), with and without clusters; a protocol that reads runs meets a
``RuntimeError``, never a silent wrong answer.
"""

from __future__ import annotations

import numpy as np
import pytest

import protocols
from protocols import ScoreBatch
from sim import generators

COUNTS_ONLY = [name for name in protocols.names() if not protocols.get(name).reads_runs]


def _batches(k, clusters=None):
    g = generators.get("question_mixture", n_questions=60, p_hard=0.5, p_easy=0.2)
    runs = ScoreBatch(*g.draw(40, k, 0.03, np.random.default_rng(k)), True, clusters=clusters)
    counts = ScoreBatch.from_counts(runs.base.sum(axis=1), runs.variant.sum(axis=1), k,
                                    clusters=clusters)
    return runs, counts


def test_the_question_level_protocols_read_counts_only():
    assert {"paired_t_questions", "signflip_questions", "t_signflip_questions",
            "cluster_cr2"} <= set(COUNTS_ONLY)
    assert not {"paired_t", "welch_t", "sign_flip", "mcnemar", "paired_bca_perm",
                "paired_two_level"} & set(COUNTS_ONLY)


@pytest.mark.parametrize("name", COUNTS_ONLY)
@pytest.mark.parametrize("k", [1, 3])
def test_counts_give_the_result_of_the_runs(name, k):
    protocol = protocols.get(name)
    clusters = np.arange(60) % 6 if protocol.needs_clusters else None
    runs, counts = _batches(k, clusters)
    if protocol.applicable(k, 60, True, clusters) is not None:
        pytest.skip(protocol.applicable(k, 60, True, clusters))
    want = protocol.evaluate(runs, rng=np.random.default_rng(5))
    got = protocol.evaluate(counts, rng=np.random.default_rng(5))
    for field in ("estimate", "ci_low", "ci_high", "p_value", "significant"):
        np.testing.assert_allclose(getattr(got, field), getattr(want, field), rtol=1e-12,
                                   atol=0, equal_nan=True, err_msg=field)


def test_a_protocol_that_reads_runs_is_refused_a_counts_batch():
    _, counts = _batches(3)
    with pytest.raises(RuntimeError, match="per-question counts only"):
        protocols.get("paired_t").evaluate(counts)
