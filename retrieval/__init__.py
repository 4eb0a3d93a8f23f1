"""Retrieval engine along the data's path: `read/` (a file in, a `Document` out), `index/` (chunks, BM25,
vectors, libraries and their catalog), `search/` (a question in, its passages out); the modules directly
here are what the three share. A room imports only the rooms before it (tests/test_import_graph.py).

Nothing here imports the graph or the nodes (ARCHITECTURE.md: arrows point down only). Its names
are imported on first use (PEP 562), so `from longqa.retrieval import Chunk` reads one module and
never the index store, the embedder or the readers it does not need."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .documents import Chunk, Document, Paragraph, ScoredChunk
    from .index.config import IndexSettings
    from .index.store import IndexStore
    from .read.limits import DocumentError
    from .read.loaders import document_from_text, load_document
    from .search.context import (
        Passage,
        extend,
        merge_chunks,
        merge_passages,
        recover_lists,
        recover_tables,
        source_paragraphs,
    )
    from .search.search import Searcher, SearchMode, fuse, min_max

_HOME = {
    "IndexSettings": "index.config",
    "Passage": "search.context",
    "extend": "search.context",
    "merge_chunks": "search.context",
    "merge_passages": "search.context",
    "recover_lists": "search.context",
    "recover_tables": "search.context",
    "source_paragraphs": "search.context",
    "Chunk": "documents",
    "Document": "documents",
    "Paragraph": "documents",
    "ScoredChunk": "documents",
    "DocumentError": "read.limits",
    "document_from_text": "read.loaders",
    "load_document": "read.loaders",
    "Searcher": "search.search",
    "SearchMode": "search.search",
    "fuse": "search.search",
    "min_max": "search.search",
    "IndexStore": "index.store",
}

__all__ = [
    "Chunk",
    "Document",
    "DocumentError",
    "IndexSettings",
    "IndexStore",
    "Paragraph",
    "Passage",
    "ScoredChunk",
    "SearchMode",
    "Searcher",
    "document_from_text",
    "extend",
    "fuse",
    "load_document",
    "merge_chunks",
    "merge_passages",
    "min_max",
    "recover_lists",
    "recover_tables",
    "source_paragraphs",
]


def imported_when_used(package: str, home: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's `__getattr__` (PEP 562): a public name of `home` (name -> its module) imported
    from its module on first use and kept on the package (the analyzer's package uses it too)."""

    def __getattr__(name: str) -> Any:
        """A public name, imported from its module on first use."""
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{home[name]}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


__getattr__ = imported_when_used(__name__, _HOME)
