"""AG News text processing: a simple word tokenizer, a frequency vocabulary, padding."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from evalcal_core.validate import InvalidParameterError

PAD, UNK = 0, 1
SPECIALS = ("<pad>", "<unk>")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokenize(text: str) -> list[str]:
    """Lower-cased words and numbers of ``text``.

    AG News marks line breaks with a lone backslash (``"social\\network"``; a following
    ``n`` is usually the next word's, as in ``"after\\news"``), so a backslash is a
    separator; ``#36;`` (``$``) leaves the number ``36``.
    """
    text = text.replace("\\", " ").lower()
    return _WORD.findall(text)


def build_vocab(docs: list[list[str]], size: int) -> tuple[str, ...]:
    """The ``size`` most frequent words of ``docs`` after the two specials (PAD, UNK).

    Ties are broken alphabetically so the vocabulary does not depend on document order.
    """
    if not isinstance(size, int) or size < 1:
        raise InvalidParameterError(f"vocab_size must be a positive integer, got {size!r}")
    counts = Counter(word for doc in docs for word in doc)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size]
    return SPECIALS + tuple(word for word, _ in ranked)


def encode(docs: list[list[str]], vocab: tuple[str, ...], max_len: int) -> np.ndarray:
    """Token ids, truncated or PAD-padded to ``max_len``; shape (len(docs), max_len), int32."""
    if not isinstance(max_len, int) or max_len < 1:
        raise InvalidParameterError(f"max_len must be a positive integer, got {max_len!r}")
    index = {word: i for i, word in enumerate(vocab)}
    out = np.full((len(docs), max_len), PAD, dtype=np.int32)
    for row, doc in enumerate(docs):
        ids = [index.get(word, UNK) for word in doc[:max_len]]
        out[row, : len(ids)] = ids
    return out
