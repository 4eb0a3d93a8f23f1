"""OkraLong's assembled retriever: BM25 (exact) + dense (semantic), min-max fused (appendix C.3).

Each retriever ranks its top `depth` (20 in the paper) chunks; each list is min-max normalised
to [0, 1]; the fused score is a weighted sum (3:2 toward the analysed information pattern, 1:1
for "same"); a chunk missing from one list gets 0 from it. Dense-only and BM25-only modes are
the baselines.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from ..documents import Document, ScoredChunk
from ..index.library.library import Library
from ..index.library.manifest import Event, Manifest, Progress, document_members
from ..index.store import IndexStore
from .labels import label_query, labels_in, leading
from .links import DocumentLinks, words
from .mentions import unmentioned
from .selection import key_of

SearchMode = Literal["hybrid", "dense", "bm25"]
Key = tuple[str, int]  # (doc_id, chunk index)
LINK_SCOPE_DOCS = 64  # above this many documents, heading links are followed within the ranked ones only
LINK_CACHE = 256  # documents' heading links kept per searcher
LABEL_DEPTH = 100  # BM25's candidates for a label in a library above LINK_SCOPE_DOCS documents


def min_max(scores: dict[Key, float]) -> dict[Key, float]:
    """Scale to [0, 1]. A list of several equal scores ranks nothing: every member gets 0, so that
    retriever has no say in the fusion (1,334 copies of one text once tied the BM25 winner at 1.0);
    a list of one keeps it at 1 (its only member is its best)."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi - lo < 1e-12:
        return dict.fromkeys(scores, 1.0 if len(scores) == 1 else 0.0)
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def fuse(dense: dict[Key, float], sparse: dict[Key, float], weights: tuple[float, float]) -> list[tuple[Key, float]]:
    """Weighted sum of the min-max normalised lists, best first (ties by document position)."""
    wd, ws = weights
    total = (wd + ws) or 1.0
    nd, ns = min_max(dense), min_max(sparse)
    fused = {k: (wd * nd.get(k, 0.0) + ws * ns.get(k, 0.0)) / total for k in set(nd) | set(ns)}
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


class Searcher:
    """Hybrid search over a library, or over the documents of it that a question names.

    `Searcher(store, documents)` searches those documents as the library made for them (created,
    or updated to hold exactly them, on first use); `Searcher(store, library=..., doc_ids=...)`
    searches a library, or only `doc_ids` of it (a filter, not one index per file)."""

    def __init__(
        self,
        store: IndexStore,
        documents: Sequence[Document] = (),
        library: Library | None = None,
        doc_ids: Sequence[str] | None = None,
    ):
        if library is None:
            if not documents:
                raise ValueError("a search needs at least one document")
            library = library_of_documents(store, documents)
        self.store, self.library = store, library
        self.doc_ids = list(dict.fromkeys(doc_ids)) if doc_ids else None  # None: the whole library
        self._documents: dict[str, Document] = {}
        self._scope: tuple[Manifest, tuple[list[str], set[str], bool]] | None = None
        # (doc_id, granularity) -> its heading links; documents are content-addressed, so never stale
        self._links: OrderedDict[tuple[str, int], DocumentLinks] = OrderedDict()
        self._lock = threading.Lock()

    def _allowed(self, manifest: Manifest) -> tuple[list[str], set[str], bool]:
        """(the searched documents, as a set, whether they are a strict subset): once per version."""
        cached = self._scope
        if cached is not None and cached[0] is manifest:
            return cached[1]
        ids = manifest.doc_ids()
        wanted = None if self.doc_ids is None else set(self.doc_ids)
        allowed = ids if wanted is None else [d for d in ids if d in wanted]
        scope = (allowed, set(allowed), len(allowed) < len(ids))
        self._scope = (manifest, scope)
        return scope

    @property
    def documents(self) -> list[Document]:
        """The searched documents, each named by the library's source for it."""
        return [self.document(d) for d in self._allowed(self.library.manifest())[0]]

    def n_words(self) -> int:
        """Words in the searched documents, from the library's manifest (no document is read)."""
        manifest = self.library.manifest()
        return manifest.n_words(self._allowed(manifest)[0])

    def document(self, doc_id: str) -> Document:
        """A member document by id, with the source name the library gives it (kept once loaded)."""
        with self._lock:
            document = self._documents.get(doc_id)
        if document is None:
            source = self.library.manifest().sources().get(doc_id)
            document = self.store.document(doc_id)
            document = document.model_copy(update={"source": source}) if source else document
            with self._lock:
                self._documents[doc_id] = document
        return document

    def indexes(
        self,
        granularity: int,
        progress: Callable[[int, int], None] | None = None,
        dense: bool = True,
        events: Progress | None = None,
    ) -> Manifest:
        """Make the library searchable at `granularity` (built where missing); embedding progress goes
        to `progress(done, total)`, or every event of the update to `events`."""
        manifest = self.library.manifest()
        if dense:  # another embedder's vectors: refused (retrieval/index/embed/embedder_identity.py)
            self.library.check_embedder(manifest)
        part = manifest.parts.get(granularity)
        if part is not None and part.signature == self.store.signature():
            if not dense or (part.dense and not self.library.vectors_missing(granularity, part)):
                return manifest

        def report(event: Event) -> None:
            if progress is not None and event.step == "embedding":
                progress(event.done, event.total)

        self.library.update(None, [granularity], dense=dense, progress=events or report)
        return self.library.manifest()

    def search(
        self,
        query: str,
        k: int = 5,
        granularity: int = 150,
        weights: tuple[float, float] = (1.0, 1.0),
        depth: int = 20,
        mode: SearchMode = "hybrid",
        labels: bool = True,
    ) -> list[ScoredChunk]:
        """The k best chunks for a query at one chunk size: dense and BM25 top-`depth` lists fused with `weights` (or
        one retriever by `mode`), led by the chunks that hold a label the query names ("Table 2": `labels`, not in
        dense mode; retrieval/search/labels.py); indexes first when needed. A blank query or k, depth below 1 is a
        ValueError."""
        if not query.strip():
            raise ValueError("empty query")
        if k < 1 or depth < 1:
            raise ValueError(f"k and depth must be positive (k={k}, depth={depth})")
        manifest = self.indexes(granularity, dense=mode != "bm25")
        part = manifest.parts[granularity]
        _, allowed, subset = self._allowed(manifest)
        depth = max(depth, k)
        dense: dict[Key, float] = {}
        if mode in ("hybrid", "dense"):
            vector = query_vector(self.store.embedder, query)
            dense = self.library.dense_top(granularity, part, vector, depth, allowed, subset)
        sparse: dict[Key, float] = {}
        if mode in ("hybrid", "bm25"):
            sparse = self.library.bm25(part, manifest).top(query, depth, allowed if subset else None)
        w = {"hybrid": weights, "dense": (1.0, 0.0), "bm25": (0.0, 1.0)}[mode]
        ranked = fuse(dense, sparse, w)
        if labels and mode != "dense":
            ranked = self._labelled_first(query, ranked, manifest, granularity)
        results = []
        for key, score in ranked[:k]:
            document = self.document(key[0])
            results.append(
                ScoredChunk(
                    chunk=self.store.index(document, granularity, dense=False).chunks[key[1]],
                    score=score,
                    dense_score=dense.get(key),
                    bm25_score=sparse.get(key),
                    granularity=granularity,
                    source=document.source,
                )
            )
        return results

    def _labelled_first(
        self, query: str, ranked: list[tuple[Key, float]], manifest: Manifest, granularity: int
    ) -> list[tuple[Key, float]]:
        """`ranked` led by the chunks that hold a label the query names, each scored as the best (labels.py).
        Over the searched documents; above LINK_SCOPE_DOCS of them, over the documents BM25 finds for the labels."""
        asked = labels_in(query)
        if not asked:
            return ranked
        scope, allowed, subset = self._allowed(manifest)
        if len(scope) > LINK_SCOPE_DOCS:
            near = self.library.bm25(manifest.parts[granularity], manifest).top(
                label_query(asked), LABEL_DEPTH, allowed if subset else None
            )
            scope = list(dict.fromkeys(key[0] for key in [*near, *(key for key, _ in ranked)]))
        documents = ((d, self.store.index(d, granularity, dense=False).chunks) for d in map(self.document, scope))
        lead = leading(asked, documents, [key for key, _ in ranked])
        best = max((score for _, score in ranked[:1]), default=1.0)
        scores = dict(ranked)
        return [(key, max(scores.get(key, 0.0), best)) for key in lead] + [kv for kv in ranked if kv[0] not in lead]

    def unmentioned(self, question: str, granularity: int = 150) -> list[str]:
        """The question's names that the library never says (retrieval/search/mentions.py). The whole
        library's words: a subset is searched for less, never declined for more."""
        manifest = self.indexes(granularity, dense=False)
        return unmentioned(question, self.library.bm25(manifest.parts[granularity], manifest).vocabulary())

    def named_in(
        self, granularity: int, text: str | ScoredChunk, near: Sequence[ScoredChunk] = ()
    ) -> list[ScoredChunk]:
        """Heading links (retrieval/search/links.py): for each heading that `text` names (or, for a chunk, that
        its text names, its own headings aside), the chunks of the passage it titles. Over the searched documents;
        above LINK_SCOPE_DOCS of them, over the documents of `near` (a ranking) only."""
        if isinstance(text, ScoredChunk):
            source = self._links_of(text.chunk.doc_id, granularity)
            said, skip = source.bodies[text.chunk.index], source.carried[text.chunk.index]
        else:
            said, skip = words(text), frozenset()
        scope = self._allowed(self.library.manifest())[0]
        if len(scope) > LINK_SCOPE_DOCS:
            mentioned = [text] if isinstance(text, ScoredChunk) else []
            scope = list(dict.fromkeys(r.chunk.doc_id for r in [*mentioned, *near]))
        # a name titles one passage or several ("Little Shop of Horrors", the film and the musical): it
        # points at the best ranked of them (in `near`; else the first), all its chunks when it is long
        place = {key_of(r): i for i, r in enumerate(near)}
        named: dict[tuple[str, ...], tuple[int, list[Key]]] = {}
        for doc_id in scope:
            for name, passages in self._links_of(doc_id, granularity).mentions(said, skip).items():
                for passage in passages:
                    keys = [(doc_id, i) for i in passage if not _is(text, doc_id, i)]
                    rank = min((place.get(k, len(place)) for k in keys), default=None)
                    if rank is not None and (name not in named or rank < named[name][0]):
                        named[name] = (rank, keys)
        found = []
        for doc_id, index in dict.fromkeys(k for _, keys in named.values() for k in keys):
            document = self.document(doc_id)
            chunk = self.store.index(document, granularity, dense=False).chunks[index]
            found.append(ScoredChunk(chunk=chunk, score=0.0, granularity=granularity, source=document.source))
        return found

    def _links_of(self, doc_id: str, granularity: int) -> DocumentLinks:
        key = (doc_id, granularity)
        with self._lock:
            links = self._links.get(key)
            if links is not None:
                self._links.move_to_end(key)
                return links
        document = self.document(doc_id)
        links = DocumentLinks.build(document, self.store.index(document, granularity, dense=False).chunks)
        with self._lock:
            self._links[key] = links
            while len(self._links) > LINK_CACHE:
                self._links.popitem(last=False)
        return links


def _is(hit: str | ScoredChunk, doc_id: str, index: int) -> bool:
    return isinstance(hit, ScoredChunk) and key_of(hit) == (doc_id, index)


def library_of_documents(store: IndexStore, documents: Sequence[Document]) -> Library:
    """The library made for exactly these documents (by content): created on first use."""
    ids = sorted({d.doc_id for d in documents})
    library = Library(store, "docs-" + hashlib.sha256(" ".join(ids).encode()).hexdigest()[:24])
    if library.manifest().doc_ids() != ids:
        library.update(document_members(documents))
    return library


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


def forget_query(query: str | None = None) -> None:
    """Drop `query`'s cached vectors (every query's when None), so its next search embeds it again
    (benchmarks and the evaluation harness time each run as a lone run would be: a run's bridge
    queries too)."""
    with _query_lock:
        for key in [k for k in _query_cache if query is None or k[1] == query]:
            del _query_cache[key]
