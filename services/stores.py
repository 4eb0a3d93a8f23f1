"""The process-wide caches every node shares: one index store per index location (and catalog:
`LONGQA_POSTGRES_URI` with a Chroma server puts it in PostgreSQL), one Library object per library
(its manifest and BM25 caches), one searcher per set of documents."""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence

from longqa.contracts.settings import Settings
from longqa.retrieval import IndexSettings, IndexStore, Searcher
from longqa.retrieval.index.library.library import Library

_lock = threading.Lock()
_store_lock = threading.Lock()


def store_for(settings: Settings) -> IndexStore:
    """The one store per index location. Locked: `functools.cache` does not stop concurrent runs
    (a server's first runs) from each building a store, and so each an embedded Chroma client on
    the same path, which races inside chromadb ("'RustBindingsAPI' object has no attribute 'bindings'")."""
    index = settings.index_settings()
    if settings.postgres_uri and index.postgres_uri != settings.postgres_uri:  # with a Chroma server: the catalog
        index = index.model_copy(update={"postgres_uri": settings.postgres_uri})
    with _store_lock:
        return _store(index)


@functools.cache
def _store(index: IndexSettings) -> IndexStore:
    return IndexStore(index)


def searcher_for(settings: Settings, library: str, doc_ids: Sequence[str]) -> Searcher:
    """A searcher over `library`, or the `doc_ids` of it (all of them: no filter)."""
    store = store_for(settings)
    with _lock:
        return _searcher(store, library, tuple(sorted(doc_ids)))


@functools.lru_cache(maxsize=64)
def _searcher(store: IndexStore, name: str, doc_ids: tuple[str, ...]) -> Searcher:
    # always the ids, never "the whole library": the searcher decides per manifest version whether
    # they are all of it, so documents added later never leak into a scope that once equalled it
    return Searcher(store, library=library_for(store, name), doc_ids=doc_ids)


@functools.lru_cache(maxsize=256)
def library_for(store: IndexStore, name: str) -> Library:
    """One Library object per library in this process, so its caches (manifest, BM25) are shared."""
    return Library(store, name)
