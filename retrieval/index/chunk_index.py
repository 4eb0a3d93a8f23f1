"""One document's index at one chunk size (`ChunkIndex`), what a build did (`Built`), and how a
chunk is cut into the units the embedder reads (`dense_units`, the rule in retrieval/index/store.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..documents import Chunk, Document
from ..tokens import word_windows, wordpiece_counter


class ChunkIndex:
    """One document at one granularity: its chunks, their BM25 tokens and, once embedded, the
    vectors of its units (`unit_chunks[i]` is the chunk of row i; None until a dense index needs them)."""

    def __init__(
        self,
        document: Document,
        granularity: int,
        chunks: list[Chunk],
        tokens: list[list[str]],
        n_units: int,
        max_units: int,
        build_id: str,
    ):
        self.build_id = build_id  # names this chunking; its vectors carry it, so stale ones are never served
        self.document = document
        self.granularity = granularity
        self.chunks = chunks
        self.tokens = tokens
        self.n_units = n_units
        self.max_units = max_units  # most units any chunk has; how deep to query the vector store
        self.vectors: np.ndarray | None = None
        self.unit_chunks: np.ndarray | None = None


@dataclass
class Built:
    """What `IndexStore.build` did: `chunked` the document (chunks + BM25 written), `embedded` this
    many vectors; neither means the index was served from cache."""

    index: ChunkIndex
    chunked: bool = False
    embedded: int = 0


def dense_units(chunks: list[Chunk], max_tokens: int) -> list[tuple[int, int, str]]:
    """(chunk index, unit number, text): each chunk cut into consecutive pieces of at most
    `max_tokens` embedder word pieces (the rule in this module's docstring)."""
    wp = wordpiece_counter()
    counts = wp.count_many([c.text for c in chunks])
    units: list[tuple[int, int, str]] = []
    for chunk, n in zip(chunks, counts, strict=True):
        if n <= max_tokens:
            units.append((chunk.index, 0, chunk.text))
            continue
        spans = wp.spans(chunk.text)
        for u, window in enumerate(word_windows(chunk.text, spans, max_tokens)):
            units.append((chunk.index, u, chunk.text[window[0][0] : window[-1][1]]))
    return units


def unit_hash(text: str) -> str:
    """A unit's id in a library's collection: a hash of its text (equal texts, one vector)."""
    return "u" + hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def embed_distinct(embedder, texts: list[str]) -> np.ndarray:
    """Embed each distinct text once (a page of repeated rows is one forward pass, not thousands)
    and give every text its vector, in order."""
    index: dict[str, int] = {}
    rows = [index.setdefault(t, len(index)) for t in texts]
    vectors = np.asarray(embedder.embed(list(index), pool=True), dtype=np.float32)
    return vectors[rows] if texts else vectors


def embed_units(embedder, texts: list[str], step: int, progress: Callable[[int, int], None] | None) -> np.ndarray:
    """Embed units' texts, `step` at a time (each step's distinct texts once), reporting
    `progress(done, total)` after each step."""
    parts, done = [], 0
    if progress:
        progress(0, len(texts))
    for i in range(0, len(texts), step):
        parts.append(embed_distinct(embedder, texts[i : i + step]))
        done = min(i + step, len(texts))
        if progress:
            progress(done, len(texts))
    return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
