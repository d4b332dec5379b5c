"""Per-seed random streams.

Every source of randomness in a run (initial weights, data order, augmentation, dropout,
the variant-only streams) has its own stream derived from ``SeedSequence([seed, stream,
replica])``, so streams are statistically independent and drawing more numbers from one
(for example a variant's extra augmentation) never shifts another.
"""

from __future__ import annotations

import numpy as np

from evalcal_core.validate import InvalidParameterError

#: Stream ids. Never renumber: records trained earlier depend on them.
STREAMS = {
    "init": 0,
    "order": 1,
    "augment": 2,
    "dropout": 3,
    "strong_augment": 4,
    "word_dropout": 5,
}


def check_seed(seed: int, name: str = "seed") -> int:
    """Return ``seed`` as an int or raise ValueError if it is not a non-negative integer."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidParameterError(f"{name} must be a non-negative integer, got {seed!r}")
    return int(seed)


def stream_seed(seed: int, stream: str, replica: int = 0) -> int:
    """64-bit integer seed of one random stream of one run.

    Parameters
    ----------
    seed : int
        The run's seed (non-negative).
    stream : str
        One of :data:`STREAMS`.
    replica : int, default 0
        Selects an independent copy of the stream for the same seed; the ``S0p`` variant
        uses replica 1 for its data-order, augmentation and dropout streams.

    Returns
    -------
    int
        A seed in ``[0, 2**64)`` suitable for ``torch.Generator.manual_seed``.
    """
    seed = check_seed(seed)
    replica = check_seed(replica, "replica")
    if stream not in STREAMS:
        raise InvalidParameterError(f"stream must be one of {sorted(STREAMS)}, got {stream!r}")
    state = np.random.SeedSequence([seed, STREAMS[stream], replica]).generate_state(1, np.uint64)
    return int(state[0])


def make_generator(seed: int, stream: str, replica: int = 0):
    """A CPU ``torch.Generator`` seeded for one stream of one run (see :func:`stream_seed`)."""
    import torch

    gen = torch.Generator(device="cpu")
    gen.manual_seed(stream_seed(seed, stream, replica))
    return gen
