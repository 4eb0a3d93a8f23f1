"""OkraLong's assembled retriever: BM25 (exact) + dense (semantic), min-max fused (appendix C.3).

Each retriever ranks its top `depth` (20 in the paper) chunks; each list is min-max normalised
to [0, 1]; the fused score is a weighted sum (3:2 toward the analysed information pattern, 1:1
for "same"); a chunk missing from one list gets 0 from it. Dense-only and BM25-only modes are
the baselines.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from .bm25 import SparseIndex
from .documents import Document, ScoredChunk
from .store import ChunkIndex, IndexStore

SearchMode = Literal["hybrid", "dense", "bm25"]
Key = tuple[str, int]  # (doc_id, chunk index)


def min_max(scores: dict[Key, float]) -> dict[Key, float]:
    """Scale to [0, 1]; a list whose scores are all equal maps to 1 (every member is its best)."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi - lo < 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def fuse(dense: dict[Key, float], sparse: dict[Key, float], weights: tuple[float, float]) -> list[tuple[Key, float]]:
    """Weighted sum of the min-max normalised lists, best first (ties by document position)."""
    wd, ws = weights
    total = (wd + ws) or 1.0
    nd, ns = min_max(dense), min_max(sparse)
    fused = {k: (wd * nd.get(k, 0.0) + ws * ns.get(k, 0.0)) / total for k in set(nd) | set(ns)}
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


class Searcher:
    """Hybrid search over one or more documents (a collection) at any granularity."""

    def __init__(self, store: IndexStore, documents: Sequence[Document]):
        if not documents:
            raise ValueError("a search needs at least one document")
        self.store = store
        self.documents = list({d.doc_id: d for d in documents}.values())
        self._sparse: dict[int, tuple[SparseIndex, list[Key]]] = {}
        self._lock = threading.Lock()

    def indexes(
        self,
        granularity: int,
        progress: Callable[[int, int], None] | None = None,
        dense: bool = True,
        progress_for: Callable[[Document], Callable[[int, int], None]] | None = None,
    ) -> list[ChunkIndex]:
        """Every document's index at `granularity`, built where missing; embedding progress goes to
        `progress`, or to `progress_for(document)`, one callback per document."""
        return [
            self.store.index(d, granularity, progress_for(d) if progress_for else progress, dense=dense)
            for d in self.documents
        ]

    def search(
        self,
        query: str,
        k: int = 5,
        granularity: int = 150,
        weights: tuple[float, float] = (1.0, 1.0),
        depth: int = 20,
        mode: SearchMode = "hybrid",
    ) -> list[ScoredChunk]:
        if not query.strip():
            raise ValueError("empty query")
        if k < 1 or depth < 1:
            raise ValueError(f"k and depth must be positive (k={k}, depth={depth})")
        indexes = self.indexes(granularity, dense=mode != "bm25")
        by_doc = {ix.document.doc_id: ix for ix in indexes}  # chunk i of a document is chunks[i]
        depth = max(depth, k)
        dense = self._dense(query, indexes, depth) if mode in ("hybrid", "dense") else {}
        sparse = self._bm25(query, indexes, granularity, depth) if mode in ("hybrid", "bm25") else {}
        w = {"hybrid": weights, "dense": (1.0, 0.0), "bm25": (0.0, 1.0)}[mode]
        ranked = fuse(dense, sparse, w)
        results = [
            ScoredChunk(
                chunk=by_doc[key[0]].chunks[key[1]],
                score=score,
                dense_score=dense.get(key),
                bm25_score=sparse.get(key),
                granularity=granularity,
                source=by_doc[key[0]].document.source,
            )
            for key, score in ranked
        ]
        return results[:k]

    def _dense(self, query: str, indexes: list[ChunkIndex], depth: int) -> dict[Key, float]:
        vector = query_vector(self.store.embedder, query)
        hits = [((ix.document.doc_id, ci), s) for ix in indexes for ci, s in ix.dense_top(vector, depth)]
        return dict(sorted(hits, key=lambda kv: -kv[1])[:depth])

    def _bm25(self, query: str, indexes: list[ChunkIndex], granularity: int, depth: int) -> dict[Key, float]:
        if len(indexes) == 1:  # the persisted per-document BM25
            ix = indexes[0]
            return {(ix.document.doc_id, row): s for row, s in ix.sparse.top(query, depth)}
        with self._lock:  # one BM25 over the union, so IDF is the collection's, not each document's
            if granularity not in self._sparse:
                keys = [(ix.document.doc_id, c.index) for ix in indexes for c in ix.chunks]
                self._sparse[granularity] = (SparseIndex([t for ix in indexes for t in ix.tokens]), keys)
            sparse, keys = self._sparse[granularity]
        return {keys[row]: s for row, s in sparse.top(query, depth)}


_query_cache: OrderedDict[tuple[int, str], np.ndarray] = OrderedDict()
_query_lock = threading.Lock()


def query_vector(embedder, query: str) -> np.ndarray:
    """Embed a query once: the same question is searched at several granularities in one run."""
    key = (id(embedder), query)
    with _query_lock:
        if key in _query_cache:
            _query_cache.move_to_end(key)
            return _query_cache[key]
    vector = embedder.embed([query])[0]
    with _query_lock:
        _query_cache[key] = vector
        while len(_query_cache) > 512:
            _query_cache.popitem(last=False)
    return vector


def forget_query(query: str) -> None:
    """Drop `query`'s cached vectors, so its next search embeds it again (benchmarks and the
    evaluation harness time each run as a lone run would be)."""
    with _query_lock:
        for key in [k for k in _query_cache if k[1] == query]:
            del _query_cache[key]
