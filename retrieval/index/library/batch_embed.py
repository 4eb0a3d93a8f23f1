"""Embed the units of many documents together (a library build, issue #32): one length-sorted stream
of batches across documents instead of a few small batches per document.

A library of short documents holds a handful of units per document; embedded one document at a
time, each forward pass pads a few texts of mixed lengths and pays the runtime's per-call overhead.
Here every document is chunked first (its chunks, BM25 tokens and manifest written as `IndexStore`
always writes them), then all units missing vectors are sorted by length and embedded in batches
of neighbours, and each document's vectors are written as `IndexStore` writes them. The vectors are
the same texts through the same model (padding is masked), so retrieval is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...documents import Document
from ..chunk_index import ChunkIndex, dense_units, embed_distinct
from ..store import IndexStore
from .manifest import Event, Update

NAMED = 3  # documents a progress message names (the rest are counted)
GROUP = 1024  # units per embedder call (each call sorts its texts by length and batches them)
SLICE = 8192  # units embedded before their documents' vectors are saved (a killed build resumes from there)
ACROSS_DOCUMENTS = True  # False: each document embedded alone, as before (bench/library_scale.py compares)


@dataclass
class Prepared:
    """What `embed_together` did: documents chunked, vectors embedded."""

    chunked: int = 0
    embedded: int = 0


def embed_together(
    store: IndexStore,
    documents: Sequence[Document],
    granularity: int,
    progress: Callable[[int, int], None] | None = None,
) -> Prepared:
    """Chunk `documents` at `granularity` and give each its unit vectors (from disk where they are,
    else embedded across documents); `progress(done, total)` counts units embedded. Afterwards
    `store.build(document, granularity)` finds every index whole, so a caller's per-document loop
    only assembles."""
    prepared = Prepared()
    pending: list[ChunkIndex] = []
    for document in documents:
        built = store.build(document, granularity, dense=False)
        prepared.chunked += int(built.chunked)
        if not store.open_vectors(built.index):
            pending.append(built.index)
    units = [(n, u) for n, index in enumerate(pending) for u in dense_units(index.chunks, store.embedder.max_tokens)]
    if progress and units:
        progress(0, len(units))
    first = 0
    while first < len(units):  # a slice of whole documents at a time: each saved as soon as it is embedded
        end = min(len(units), first + SLICE)
        while end < len(units) and units[end][0] == units[end - 1][0]:
            end += 1
        # each group reported as it is done (a long build keeps the update lock's session alive)
        report = (lambda n, at=first: progress(at + n, len(units))) if progress else None  # noqa: E731
        _embed_slice(store, pending, units, first, end, report)
        prepared.embedded += end - first
        first = end
    return prepared


def _embed_slice(
    store: IndexStore, pending: list[ChunkIndex], units: list, first: int, end: int, report: Callable | None
) -> None:
    """Embed `units[first:end]` (whole documents) sorted by length, GROUP per call, and save each
    document's vectors (so a killed build keeps every slice it finished: a re-embed resumes)."""
    order = sorted(range(first, end), key=lambda i: len(units[i][1][2]))
    vectors: np.ndarray | None = None
    for start in range(0, len(order), GROUP):
        rows = order[start : start + GROUP]
        embedded = embed_distinct(store.embedder, [units[i][1][2] for i in rows])
        if vectors is None:
            vectors = np.zeros((end - first, embedded.shape[1]), dtype=np.float32)
        vectors[np.asarray(rows) - first] = embedded
        if report:
            report(min(start + GROUP, len(order)))
    at = first
    while at < end:
        count = _count(units, at, units[at][0])
        unit_chunks = np.array([u[0] for _, u in units[at : at + count]], dtype=np.int32)
        store.save_vectors(pending[units[at][0]], vectors[at - first : at - first + count], unit_chunks)
        at += count


def _count(units: list, first: int, owner: int) -> int:
    """How many units from `first` on belong to document `owner` (they are contiguous)."""
    count = 0
    while first + count < len(units) and units[first + count][0] == owner:
        count += 1
    return count


def prepare_part(
    store: IndexStore,
    doc_ids: Sequence[str],
    loaded: dict[str, Document],
    granularity: int,
    progress: Callable[[Event], None] | None,
    update: Update,
    names: Mapping[str, str] | None = None,
) -> None:
    """Before a library part's per-document loop: embed the members in `doc_ids` together (where
    `ACROSS_DOCUMENTS`), counting what was chunked and embedded on `update`; progress names the
    documents (`names`: doc_id -> the name the caller gave, else the document's source)."""
    if not ACROSS_DOCUMENTS or len(doc_ids) < 2:
        return
    documents = [loaded.get(d) or store.document(d) for d in doc_ids]
    report = None
    if progress is not None:
        shown = [(names or {}).get(d.doc_id, d.source) for d in documents]
        label = ", ".join(shown[:NAMED]) + (f" and {len(shown) - NAMED} more" if len(shown) > NAMED else "")
        message = f"embedding {{}}/{{}} chunks of {label} (g={granularity})"
        report = lambda done, total: progress(Event("embedding", message.format(done, total), done, total))  # noqa: E731
    prepared = embed_together(store, documents, granularity, report)
    update.embedded += prepared.embedded
    update.chunked += prepared.chunked
